//! The legend: what each colour and size on screen means, built from the style layers — a
//! fixed style with the selector it applies to, and for a mapping its scale, domain or
//! categories. `describe_styles` and the web view show the same entries.

use serde_json::{Map, Value, json};

use crate::data::SessionData;
use crate::layers::StyleLayers;
use crate::style::{ElementKind, LayerSource, StyleLayer, StyleRule};

/// The resolved legend of each of `layer`'s mappings, with the element kind it styles; a mapping
/// the data cannot take now says why.
pub fn mapping_legends(data: &SessionData, layer: &StyleLayer) -> Vec<Value> {
    [ElementKind::Node, ElementKind::Edge]
        .into_iter()
        .filter_map(|kind| layer.rule(kind).map(|rule| rule_legends(data, kind, rule)))
        .flatten()
        .collect()
}

/// The legends of one rule's mappings (`mapping_legends` for one element kind).
fn rule_legends(data: &SessionData, kind: ElementKind, rule: &StyleRule) -> Vec<Value> {
    rule.mappings
        .iter()
        .map(|mapping| {
            let mut legend = match data.mapped(kind, mapping) {
                Ok(mapped) => mapped.resolved.legend(),
                Err(e) => {
                    json!({"property": mapping.property, "channel": mapping.channel, "error": e.to_string()})
                }
            };
            if let Value::Object(map) = &mut legend {
                map.insert("elements".into(), json!(kind_name(kind)));
            }
            legend
        })
        .collect()
}

fn kind_name(kind: ElementKind) -> &'static str {
    match kind {
        ElementKind::Node => "nodes",
        ElementKind::Edge => "edges",
    }
}

/// One entry per layer and element kind it styles, in layer order (the built-in `default`
/// first): its name, source, selector, how many elements it matches, the colour, size or width
/// it fixes and its mappings' legends.
pub fn legend(data: &SessionData, layers: &StyleLayers) -> Vec<Value> {
    let mut entries = Vec::new();
    for layer in &layers.layers {
        for kind in [ElementKind::Node, ElementKind::Edge] {
            let Some(rule) = layer.rule(kind) else { continue };
            let mut entry = Map::new();
            entry.insert("layer".into(), json!(layer.name));
            entry.insert("source".into(), json!(layer.source));
            entry.insert("elements".into(), json!(kind_name(kind)));
            entry.insert("selector".into(), json!(rule.selector));
            if let Some(ids) = &rule.ids {
                entry.insert("ids".into(), json!(ids.len()));
            }
            let matched =
                data.rule_matches(kind, rule).map(|m| m.iter().filter(|hit| **hit).count());
            entry.insert("matched".into(), matched.map_or(Value::Null, |n| json!(n)));
            let (color, size) = match kind {
                ElementKind::Node => ("/texture/color", "/shape/size"),
                ElementKind::Edge => ("/line/color", "/line/width"),
            };
            if let Some(c) = rule.style.pointer(color) {
                entry.insert("color".into(), c.clone());
            }
            if let Some(s) = rule.style.pointer(size) {
                entry.insert(
                    if kind == ElementKind::Node { "size" } else { "width" }.into(),
                    s.clone(),
                );
            }
            if rule.style.pointer("/enabled") == Some(&Value::Bool(false)) {
                entry.insert("hidden".into(), json!(true));
            }
            let look = look(&rule.style);
            if !look.is_empty() {
                entry.insert("look".into(), json!(look));
            }
            let mapped = rule_legends(data, kind, rule);
            if !mapped.is_empty() {
                entry.insert("mappings".into(), json!(mapped));
            }
            if layer.hidden {
                entry.insert("layerHidden".into(), json!(true));
            }
            entry.insert("summary".into(), json!(layer.summary()));
            entry.insert("builtIn".into(), json!(layer.source == LayerSource::System));
            entries.push(Value::Object(entry));
        }
    }
    entries
}

/// Every fixed style field of a rule as a phrase ("colour #ff0000", "glow #ffff00", "outline
/// #ff0000 (width 1)", "label by title"), so the legend explains each mark a layer makes, not
/// only its colour.
fn look(style: &Value) -> Vec<String> {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut phrases: Vec<String> = [
        ("/texture/color", "colour"),
        ("/shape/size", "size"),
        ("/shape/type", "shape"),
        ("/texture/opacity", "opacity"),
        ("/line/color", "colour"),
        ("/line/width", "width"),
        ("/line/opacity", "opacity"),
        ("/arrowHead/type", "arrow"),
        ("/label/property", "label by"),
    ]
    .into_iter()
    .filter_map(|(pointer, name)| style.pointer(pointer).map(|v| format!("{name} {}", text(v))))
    .collect();
    if let Some(glow) = style.pointer("/effect/glow/color") {
        phrases.push(format!("glow {}", text(glow)));
    }
    if let Some(outline) = style.pointer("/effect/outline")
        && let Some(color) = outline.get("color")
    {
        let width =
            outline.get("width").map(|w| format!(" (width {})", text(w))).unwrap_or_default();
        phrases.push(format!("outline {}{width}", text(color)));
    }
    if style.pointer("/enabled") == Some(&Value::Bool(false)) {
        phrases.push("hidden".into());
    }
    phrases
}
