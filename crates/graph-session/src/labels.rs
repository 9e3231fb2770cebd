//! Node labels for the web view: the text a layer's `label_by` names, else the name-like
//! property (`name`, `label`, `title`), else the node's id. Cut to [`MAX_LABEL_CHARS`].

use schemascope_core::path::PropertyPath;

use crate::data::SessionData;
use crate::mapping::value_at;
use crate::scene::StyleTable;
use crate::style::ElementKind;

/// The longest label drawn, in characters.
pub const MAX_LABEL_CHARS: usize = 60;

/// The property names taken as a node's name when no layer says which, in that order.
const NAME_LIKE: [&str; 6] = ["name", "label", "title", "displayname", "display_name", "username"];

/// The top-level text property whose name says it is the node's name, if the nodes have one.
pub fn default_label_property(data: &SessionData) -> Option<String> {
    let profile = data.collection(ElementKind::Node).profile();
    let properties = profile.properties();
    NAME_LIKE.iter().find_map(|wanted| {
        properties
            .iter()
            .filter(|p| p.path.depth() == 1 && p.strings.is_some())
            .find(|p| p.path.last_key().is_some_and(|k| k.eq_ignore_ascii_case(wanted)))
            .map(|p| p.path.to_string())
    })
}

/// Each node's label (item order), given the style table whose styles may name a `label`
/// property.
pub fn node_labels(data: &SessionData, styles: &StyleTable) -> Vec<String> {
    let default: Option<PropertyPath> = default_label_property(data).and_then(|p| p.parse().ok());
    let chosen: Vec<Option<PropertyPath>> = styles
        .styles
        .iter()
        .map(|s| s.get("label").and_then(|l| l.as_str()).and_then(|p| p.parse().ok()))
        .collect();
    let nodes = data.collection(ElementKind::Node);
    let parsed = data.parsed_items(ElementKind::Node);
    nodes
        .items()
        .map(|item| {
            let path = styles
                .style_of
                .get(item.index)
                .and_then(|s| chosen.get(*s as usize))
                .and_then(Option::as_ref)
                .or(default.as_ref());
            let text = path
                .zip(parsed.get(item.index).and_then(Option::as_ref))
                .and_then(|(path, value)| value_at(value, path))
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| item.id.to_string());
            match text.char_indices().nth(MAX_LABEL_CHARS) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text,
            }
        })
        .collect()
}
