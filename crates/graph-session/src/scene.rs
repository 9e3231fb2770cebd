//! Computed styles for every element, and the scene the web view draws: node positions, edges,
//! and each element's render style. Elements matched by the same set of layers share one computed
//! style, so the cost is one selector pass per layer (cached per data version) plus one merge of
//! precomputed fields per distinct layer set.

use std::collections::HashMap;

use crate::layers::StyleLayers;
use crate::style::{ElementKind, style_leaves};
use serde_json::{Map, Value, json};

use crate::data::{Mapped, Matches, SessionData};
use crate::error::GraphSessionError;
use crate::session::GraphSession;
use std::sync::Arc;

/// The computed style of every element of `kind`, as the page draws it: an index per element
/// into a list of distinct flat render styles.
#[derive(Debug, Clone)]
pub struct StyleTable {
    /// Per element (item order), its index in `styles`.
    pub style_of: Vec<u32>,
    /// The distinct render styles (see [`render_defaults`] for the fields).
    pub styles: Vec<Value>,
}

/// The render field a style leaf sets, and the value it sets it to.
fn render_field(kind: ElementKind, path: &str, value: &Value) -> Option<(&'static str, Value)> {
    let field = match (kind, path) {
        (_, "enabled") => {
            return Some(("hidden", json!(value.as_bool().is_some_and(|enabled| !enabled))));
        }
        (ElementKind::Node, "texture.color") => "color",
        (ElementKind::Node, "texture.opacity") => "opacity",
        (ElementKind::Node, "shape.size") => "size",
        (ElementKind::Node, "shape.type") => "shape",
        (ElementKind::Node, "effect.glow") => "glow",
        (ElementKind::Node, "effect.outline") => "outline",
        (ElementKind::Node, "label.property") => "label",
        (ElementKind::Edge, "line.color") => "color",
        (ElementKind::Edge, "line.opacity") => "opacity",
        (ElementKind::Edge, "line.width") => "width",
        (ElementKind::Edge, "arrowHead.type") => "arrow",
        _ => return None,
    };
    Some((field, value.clone()))
}

/// The render style of an element no layer styles.
pub fn render_defaults(kind: ElementKind) -> Map<String, Value> {
    let defaults = match kind {
        ElementKind::Node => {
            json!({"color": "#ffffff", "opacity": 1.0, "size": 1.0, "shape": "sphere", "glow": null, "outline": null, "hidden": false, "label": null})
        }
        ElementKind::Edge => {
            json!({"color": "#888888", "opacity": 1.0, "width": 0.5, "arrow": null, "hidden": false})
        }
    };
    match defaults {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A layer that styles an element kind, as the style table applies it.
struct Applying {
    matches: Matches,
    /// The render fields its fixed style sets.
    fields: Vec<(&'static str, Value)>,
    /// Its mappings, each with the render field it sets.
    mapped: Vec<(&'static str, Arc<Mapped>)>,
}

/// Computes every element's render style. A layer whose selector fails is skipped (and named in
/// the returned warnings) rather than blanking the whole view.
pub fn style_table(
    data: &SessionData,
    layers: &StyleLayers,
    kind: ElementKind,
) -> (StyleTable, Vec<String>) {
    let n = data.collection(kind).len();
    let mut warnings = Vec::new();
    let selectors: Vec<&str> = layers
        .layers
        .iter()
        .filter_map(|l| l.applied_rule(kind))
        .map(|r| r.selector.as_str())
        .collect();
    // One pass for every selector; a bad one is reported per layer below.
    if data.prepare_matches(kind, &selectors).is_err() {
        for selector in &selectors {
            let _ = data.prepare_matches(kind, &[selector]);
        }
    }
    // Per applying layer: its matches, the render fields it sets, and its mappings (each with
    // the render field it sets), in layer order.
    let mut applying: Vec<Applying> = Vec::new();
    for layer in &layers.layers {
        let Some(rule) = layer.applied_rule(kind) else { continue };
        match data.rule_matches(kind, rule) {
            Ok(m) => {
                let fields = style_leaves(&rule.style)
                    .iter()
                    .filter_map(|(path, value)| render_field(kind, path, value))
                    .collect();
                let mut mapped = Vec::new();
                for mapping in &rule.mappings {
                    let field = render_field(kind, mapping.style_path(kind), &Value::Null);
                    match (field, data.mapped(kind, mapping)) {
                        (Some((field, _)), Ok(m)) => mapped.push((field, m)),
                        (_, Err(e)) => warnings.push(format!(
                            "layer `{}`: its {} is skipped: {e}",
                            layer.name,
                            mapping.parameter()
                        )),
                        (None, Ok(_)) => {}
                    }
                }
                applying.push(Applying { matches: m, fields, mapped });
            }
            Err(e) => warnings.push(format!("layer `{}` skipped: {e}", layer.name)),
        }
    }
    // Per element: a bit per applying layer, then the output of each mapping of a layer that
    // applies to it (elements with the same key share one style).
    let words = applying.len().div_ceil(64).max(1);
    let mapped_count: usize = applying.iter().map(|a| a.mapped.len()).sum();
    let stride = words + mapped_count;
    let mut masks = vec![0u64; n * stride];
    let mut slot = words;
    for (bit, layer) in applying.iter().enumerate() {
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        for (e, &hit) in layer.matches.iter().enumerate() {
            if hit {
                masks[e * stride + word] |= mask;
            }
        }
        for (_, mapped) in &layer.mapped {
            for (e, &hit) in layer.matches.iter().enumerate() {
                let output = if hit {
                    mapped.output_of.get(e).copied().unwrap_or(Mapped::NONE)
                } else {
                    Mapped::NONE
                };
                masks[e * stride + slot] = u64::from(output);
            }
            slot += 1;
        }
    }
    let defaults = render_defaults(kind);
    let mut distinct: HashMap<&[u64], u32, foldhash::fast::RandomState> = HashMap::default();
    let mut styles = Vec::new();
    let mut style_of = Vec::with_capacity(n);
    for e in 0..n {
        let key = &masks[e * stride..(e + 1) * stride];
        let index = *distinct.entry(key).or_insert_with(|| {
            // The last applying layer that sets a field wins it; within a layer, its mappings
            // win over its fixed fields.
            let mut winners: Vec<(&str, &Value)> = Vec::new();
            let mut slot = words;
            for (bit, layer) in applying.iter().enumerate() {
                let applies = key[bit / 64] & (1 << (bit % 64)) != 0;
                let outputs = layer.mapped.iter().enumerate().filter_map(|(k, (field, mapped))| {
                    let output = key[slot + k];
                    (output != u64::from(Mapped::NONE))
                        .then(|| mapped.outputs.get(output as usize).map(|v| (*field, v)))
                        .flatten()
                });
                if applies {
                    for (field, value) in layer.fields.iter().map(|(f, v)| (*f, v)).chain(outputs) {
                        match winners.iter_mut().find(|(name, _)| *name == field) {
                            Some(winner) => winner.1 = value,
                            None => winners.push((field, value)),
                        }
                    }
                }
                slot += layer.mapped.len();
            }
            let mut style = Map::with_capacity(defaults.len());
            for (field, default) in &defaults {
                let value = winners
                    .iter()
                    .find(|(name, _)| name == field)
                    .map_or(default, |(_, value)| *value);
                style.insert(field.clone(), value.clone());
            }
            styles.push(Value::Object(style));
            u32::try_from(styles.len() - 1).unwrap_or(u32::MAX)
        });
        style_of.push(index);
    }
    (StyleTable { style_of, styles }, warnings)
}

/// The scene: everything the page needs to draw the session, at one version.
pub fn scene(session: &GraphSession) -> Result<Value, GraphSessionError> {
    // Read the version first: a change after this point sends an event, so the page refetches.
    let version = session.version();
    let state = session.state();
    let data = session.data();
    let (node_styles, mut warnings) = style_table(&data, &state.layers, ElementKind::Node);
    let (edge_styles, edge_warnings) = style_table(&data, &state.layers, ElementKind::Edge);
    warnings.extend(edge_warnings);
    // What the session file held that no tool could have set, and was dropped on opening.
    warnings.extend(session.restore_notes().iter().cloned());
    let positions = state.positions.by_id();
    let nodes_collection = data.collection(ElementKind::Node);
    let mut node_index: HashMap<&str, usize> = HashMap::new();
    let labels = crate::labels::node_labels(&data, &node_styles);
    let nodes: Vec<Value> = nodes_collection
        .items()
        .map(|item| {
            node_index.entry(item.id).or_insert(item.index);
            let p = positions.get(item.id).copied().unwrap_or([0.0; 3]);
            let label = labels.get(item.index).map_or(item.id, String::as_str);
            json!({"id": item.id, "l": label, "p": [round(p[0]), round(p[1]), round(p[2])], "s": node_styles.style_of.get(item.index).copied().unwrap_or(0)})
        })
        .collect();
    let edges: Vec<Value> = data
        .collection(ElementKind::Edge)
        .items()
        .filter_map(|item| {
            let ends = item.ends?;
            let (a, b) = (node_index.get(ends.source)?, node_index.get(ends.target)?);
            Some(json!({"id": item.id, "a": a, "b": b, "s": edge_styles.style_of.get(item.index).copied().unwrap_or(0)}))
        })
        .collect();
    Ok(json!({
        "source": session.name(),
        "version": version,
        "dimension": state.view.dimension,
        "camera": state.view.camera,
        "layout": {"type": state.layout.layout_type, "settled": state.layout.settled},
        "selection": state.selection,
        "labelProperty": crate::labels::default_label_property(&data),
        "nodes": nodes,
        "edges": edges,
        "legend": crate::legend::legend(&data, &state.layers),
        "nodeStyles": node_styles.styles,
        "edgeStyles": edge_styles.styles,
        "warnings": warnings,
    }))
}

/// Three decimals are plenty on screen and keep the scene small.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
