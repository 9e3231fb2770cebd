//! Style layers (seed 003): ordered layers of node and/or edge styles, each with a selector, a
//! name and where it came from (system, user, AI); later layers win. The computed style of an
//! element merges every layer whose selector matches it, and says which layer contributed which
//! property path — the answer to "why is node-5 glowing?".

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::color::normalize_color;
use crate::error::LayerError;
use crate::mapping::{Channel, StyleMapping};

/// Where a layer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerSource {
    /// Built in (the default layer).
    System,
    /// Added by a person.
    User,
    /// Added by an LLM through a tool (named `ai-…`).
    Ai,
}

/// The selector and style of one element kind in a layer.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct StyleRule {
    /// JMESPath selector; empty matches every element.
    pub selector: String,
    /// When set, only these element ids (and of them those the selector matches): how a layer
    /// styles "the selected nodes", whose ids are not part of their data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<String>>,
    /// The style, nested as the renderer reads it (`texture.color`, `shape.size`, …).
    pub style: Value,
    /// Colour or size taken from each element's data (`mapping.rs`); where an element has a
    /// value, a mapping wins over `style`'s fixed value of the same field.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mappings: Vec<StyleMapping>,
}

/// One layer.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct StyleLayer {
    /// Unique name.
    pub name: String,
    /// Where it came from.
    pub source: LayerSource,
    /// Its node rule, if it styles nodes.
    pub node: Option<StyleRule>,
    /// Its edge rule, if it styles edges.
    pub edge: Option<StyleRule>,
    /// When it was added (milliseconds since the Unix epoch, given by the caller).
    pub created_ms: u64,
    /// Named by the session rather than by its author (`ai-node-style-…`): such a layer may give
    /// way to a newer one of the same source when the session holds its most layers. Sessions
    /// saved before this field read it as `false`, so their layers are never replaced.
    #[serde(default)]
    pub auto_named: bool,
    /// Hidden by a person in the web view's layer list: kept, listed, and applied to nothing
    /// until shown again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
}

/// Which kind of element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementKind {
    /// A node.
    Node,
    /// An edge.
    Edge,
}

impl StyleLayer {
    /// The rule for `kind`.
    pub fn rule(&self, kind: ElementKind) -> Option<&StyleRule> {
        match kind {
            ElementKind::Node => self.node.as_ref(),
            ElementKind::Edge => self.edge.as_ref(),
        }
    }

    /// The rule for `kind` if the layer applies now (not hidden).
    pub fn applied_rule(&self, kind: ElementKind) -> Option<&StyleRule> {
        if self.hidden { None } else { self.rule(kind) }
    }

    /// A one-line summary of what the layer does (the seed's `summarizeStyle`).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let at = |rule: &Option<StyleRule>, path: &str| {
            rule.as_ref().and_then(|r| r.style.pointer(path)).cloned()
        };
        if let Some(color) = at(&self.node, "/texture/color") {
            parts.push(format!("Node color: {}", color.as_str().unwrap_or_default()));
        }
        if let Some(size) =
            at(&self.node, "/shape/size").and_then(|s| s.as_f64()).filter(|s| *s != 1.0)
        {
            parts.push(format!("Node size: {size}"));
        }
        if let Some(shape) = at(&self.node, "/shape/type") {
            parts.push(format!("Node shape: {}", shape.as_str().unwrap_or_default()));
        }
        if at(&self.node, "/effect/glow").is_some() {
            parts.push("glow enabled".to_string());
        }
        if at(&self.node, "/effect/outline").is_some() {
            parts.push("outline enabled".to_string());
        }
        if let Some(color) = at(&self.edge, "/line/color") {
            parts.push(format!("Edge color: {}", color.as_str().unwrap_or_default()));
        }
        if let Some(width) = at(&self.edge, "/line/width") {
            parts.push(format!("Edge width: {width}"));
        }
        for (kind, rule) in [(ElementKind::Node, &self.node), (ElementKind::Edge, &self.edge)] {
            for mapping in rule.iter().flat_map(|r| &r.mappings) {
                parts.push(mapping.phrase(kind));
            }
        }
        if parts.is_empty() { "No visible style changes".into() } else { parts.join(", ") }
    }
}

/// The flat style parameters tools take, turned into the nested style the renderer reads.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct FlatStyle {
    /// Fill colour: a CSS colour name or hex (`red`, `#ff0000`).
    pub color: Option<String>,
    /// Size multiplier (1 is the default size).
    pub size: Option<f64>,
    /// Node shape: sphere, box, cone, cylinder, …
    pub shape: Option<String>,
    /// Glow colour (`true` glows in the fill colour).
    pub glow: Option<Value>,
    /// Glow strength (default 1).
    pub glow_strength: Option<f64>,
    /// Outline colour.
    pub outline: Option<String>,
    /// Outline width (default 1).
    pub outline_width: Option<f64>,
    /// Opacity from 0 to 1.
    pub opacity: Option<f64>,
    /// Edge line width.
    pub width: Option<f64>,
    /// Edge arrow: normal, none, …
    pub arrow: Option<String>,
    /// Hide the element.
    pub hidden: Option<bool>,
    /// Colour by a property: its path, or {property, scale, palette, domain}.
    pub color_by: Option<Value>,
    /// Size (edges: width) by a number: its path, or {property, scale, domain, range}.
    pub size_by: Option<Value>,
    /// Node labels from this property (default: the name-like property, else the id).
    pub label_by: Option<String>,
}

/// The largest size, width, glow strength or outline width a style takes.
pub const MAX_STYLE_MAGNITUDE: f64 = 100.0;

/// The longest shape or arrow name a style takes, in bytes.
pub const MAX_STYLE_NAME_BYTES: usize = 32;

/// `value` of style parameter `name` checked within `min..=MAX_STYLE_MAGNITUDE` (above `min`
/// when `open_min`).
fn magnitude(name: &str, value: Option<f64>, min: f64, open_min: bool) -> Result<(), LayerError> {
    match value {
        Some(v)
            if !(v.is_finite()
                && v <= MAX_STYLE_MAGNITUDE
                && (v > min || (!open_min && v == min))) =>
        {
            Err(LayerError::InvalidStyle(format!(
                "{name} must be between {min} and {MAX_STYLE_MAGNITUDE}, not {v}"
            )))
        }
        _ => Ok(()),
    }
}

/// A shape or arrow name: short, lowercase letters, digits, `-` and `_`.
fn style_name(name: &str, value: Option<&str>) -> Result<Option<String>, LayerError> {
    let Some(value) = value else { return Ok(None) };
    let lower = value.to_ascii_lowercase();
    if lower.is_empty()
        || lower.len() > MAX_STYLE_NAME_BYTES
        || !lower.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(LayerError::InvalidStyle(format!(
            "{name} must be a name of at most {MAX_STYLE_NAME_BYTES} letters, digits, `-` or `_` (sphere, box, normal, …), not `{}`",
            value.chars().take(MAX_STYLE_NAME_BYTES + 8).collect::<String>()
        )));
    }
    Ok(Some(lower))
}

impl FlatStyle {
    /// The nested style for `kind`; colours become lowercase hex, values are range-checked.
    pub fn nest(&self, kind: ElementKind) -> Result<Value, LayerError> {
        let mut style = Map::new();
        let mut set = |path: &[&str], value: Value| set_path(&mut style, &path.join("."), value);
        let color = self.color.as_deref().map(normalize_color).transpose()?;
        magnitude("size", self.size, 0.0, true)?;
        magnitude("width", self.width, 0.0, true)?;
        magnitude("glow_strength", self.glow_strength, 0.0, false)?;
        magnitude("outline_width", self.outline_width, 0.0, false)?;
        if let Some(opacity) = self.opacity.filter(|o| !(0.0..=1.0).contains(o)) {
            return Err(LayerError::InvalidStyle(format!(
                "opacity must be between 0 and 1, not {opacity}"
            )));
        }
        let shape = style_name("shape", self.shape.as_deref())?;
        let arrow = style_name("arrow", self.arrow.as_deref())?;
        match kind {
            ElementKind::Node => {
                if let Some(c) = &color {
                    set(&["texture", "color"], json!(c));
                }
                if let Some(size) = self.size {
                    set(&["shape", "size"], json!(size));
                }
                if let Some(shape) = &shape {
                    set(&["shape", "type"], json!(shape));
                }
                if let Some(glow) = &self.glow {
                    let glow_color = match glow {
                        Value::Bool(false) => None,
                        Value::String(c) => Some(normalize_color(c)?),
                        _ => Some(color.clone().unwrap_or_else(|| "#ffffff".into())),
                    };
                    if let Some(c) = glow_color {
                        set(
                            &["effect", "glow"],
                            json!({"color": c, "strength": self.glow_strength.unwrap_or(1.0)}),
                        );
                    }
                }
                if let Some(outline) = &self.outline {
                    set(
                        &["effect", "outline"],
                        json!({"color": normalize_color(outline)?, "width": self.outline_width.unwrap_or(1.0)}),
                    );
                }
                if let Some(opacity) = self.opacity {
                    set(&["texture", "opacity"], json!(opacity));
                }
            }
            ElementKind::Edge => {
                if let Some(c) = &color {
                    set(&["line", "color"], json!(c));
                }
                if let Some(width) = self.width.or(self.size) {
                    set(&["line", "width"], json!(width));
                }
                if let Some(arrow) = &arrow {
                    set(&["arrowHead", "type"], json!(arrow));
                }
                if let Some(opacity) = self.opacity {
                    set(&["line", "opacity"], json!(opacity));
                }
            }
        }
        if let Some(hidden) = self.hidden {
            set(&["enabled"], json!(!hidden));
        }
        if let Some(label) = &self.label_by {
            if kind == ElementKind::Edge {
                return Err(LayerError::InvalidStyle(
                    "`label_by` labels nodes; edges have no labels".into(),
                ));
            }
            let path = label.trim();
            if path.is_empty() || path.len() > crate::mapping::MAX_PROPERTY_BYTES {
                return Err(LayerError::InvalidStyle(format!(
                    "`label_by` is a property path of 1 to {} bytes",
                    crate::mapping::MAX_PROPERTY_BYTES
                )));
            }
            set(&["label", "property"], json!(path));
        }
        if style.is_empty() && self.color_by.is_none() && self.size_by.is_none() {
            return Err(LayerError::InvalidStyle(
                "the style is empty: give at least one of color, size, shape, glow, outline, opacity, width, arrow, hidden, color_by, size_by, label_by".into(),
            ));
        }
        Ok(Value::Object(style))
    }

    /// The mappings `color_by` and `size_by` ask for, checked as far as they can be without
    /// the data.
    pub fn mappings(&self, kind: ElementKind) -> Result<Vec<StyleMapping>, LayerError> {
        [(Channel::Color, &self.color_by), (Channel::Size, &self.size_by)]
            .into_iter()
            .filter_map(|(channel, given)| given.as_ref().map(|g| (channel, g)))
            .map(|(channel, given)| StyleMapping::parse(channel, kind, given))
            .collect()
    }
}

impl FlatStyle {
    /// The flat parameters that nest into `style` for `kind`, when `style` has only what
    /// [`FlatStyle::nest`] writes; with `nest`, how a style read back from a session file is
    /// checked as the tools check one (`restore.rs`).
    pub fn from_nested(kind: ElementKind, style: &Value) -> Option<Self> {
        let mut flat = Self::default();
        for (path, value) in style_leaves(style) {
            let text = || value.as_str().map(str::to_string);
            let number = || value.as_f64();
            match (kind, path.as_str()) {
                (_, "enabled") => flat.hidden = Some(!value.as_bool()?),
                (ElementKind::Node, "texture.color") | (ElementKind::Edge, "line.color") => {
                    flat.color = Some(text()?);
                }
                (ElementKind::Node, "texture.opacity") | (ElementKind::Edge, "line.opacity") => {
                    flat.opacity = Some(number()?);
                }
                (ElementKind::Node, "shape.size") => flat.size = Some(number()?),
                (ElementKind::Node, "shape.type") => flat.shape = Some(text()?),
                (ElementKind::Node, "effect.glow") => {
                    let glow = value.as_object().filter(|g| g.len() == 2)?;
                    flat.glow = Some(Value::String(glow.get("color")?.as_str()?.to_string()));
                    flat.glow_strength = Some(glow.get("strength")?.as_f64()?);
                }
                (ElementKind::Node, "effect.outline") => {
                    let outline = value.as_object().filter(|o| o.len() == 2)?;
                    flat.outline = Some(outline.get("color")?.as_str()?.to_string());
                    flat.outline_width = Some(outline.get("width")?.as_f64()?);
                }
                (ElementKind::Edge, "line.width") => flat.width = Some(number()?),
                (ElementKind::Node, "label.property") => flat.label_by = Some(text()?),
                (ElementKind::Edge, "arrowHead.type") => flat.arrow = Some(text()?),
                _ => return None,
            }
        }
        Some(flat)
    }
}

/// A merged style and, per layer, the property paths it set that survived.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComputedStyle {
    /// The merged style.
    pub computed_style: Value,
    /// Layers that contributed, in layer order, with the paths each contributed.
    pub contributing_layers: Vec<Contribution>,
}

/// What one layer contributed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contribution {
    /// Layer index.
    pub index: usize,
    /// Layer name.
    pub name: String,
    /// Dotted paths (`texture.color`) this layer set and no later layer overrode.
    pub contributed: Vec<String>,
    /// For a layer mapping data to style: which value gave which colour or size.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mapped: Vec<Value>,
}

/// What a layer's mapping gives one element: the leaf it sets (nothing when the element has no
/// mappable value) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedLeaf {
    /// The layer's index.
    pub layer: usize,
    /// The nested style path set (`texture.color`).
    pub path: String,
    /// The value set, if any.
    pub value: Option<Value>,
    /// The mapping's explanation (`mapping::Resolved::explain`).
    pub explanation: Value,
}

/// Leaf paths of a style: `{"texture": {"color": …}}` → `texture.color`; objects such as
/// `effect.glow` with scalar members count as one leaf (a glow is set as a whole).
fn leaves(value: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if !prefix.ends_with("glow") && !prefix.ends_with("outline") => {
            for (key, child) in map {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                leaves(child, &path, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

/// A style as `(leaf path, value)` pairs — what [`compute`] merges; computed once per layer when
/// many elements are merged.
pub fn style_leaves(style: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    leaves(style, "", &mut out);
    out
}

fn set_path(root: &mut Map<String, Value>, path: &str, value: Value) {
    let parts: Vec<&str> = path.split('.').collect();
    let mut node = root;
    for key in &parts[..parts.len() - 1] {
        let entry = node.entry(key.to_string()).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        let Some(next) = entry.as_object_mut() else { return };
        node = next;
    }
    node.insert(parts[parts.len() - 1].to_string(), value);
}

/// Merges the styles of the `matching` layers (indices into `layers`, for one element) in order;
/// within a layer, what its mappings give the element (`mapped`) wins over its fixed style.
pub fn compute(
    layers: &[StyleLayer],
    kind: ElementKind,
    matching: &[usize],
    mapped: &[MappedLeaf],
) -> ComputedStyle {
    let mut owner: Vec<(String, usize, Value)> = Vec::new();
    for &i in matching {
        let Some(rule) = layers.get(i).and_then(|l| l.rule(kind)) else { continue };
        let mut paths = Vec::new();
        leaves(&rule.style, "", &mut paths);
        paths.extend(
            mapped
                .iter()
                .filter(|m| m.layer == i)
                .filter_map(|m| m.value.clone().map(|v| (m.path.clone(), v))),
        );
        for (path, value) in paths {
            match owner.iter_mut().find(|(p, _, _)| *p == path) {
                Some(slot) => *slot = (path, i, value),
                None => owner.push((path, i, value)),
            }
        }
    }
    let mut merged = Map::new();
    for (path, _, value) in &owner {
        set_path(&mut merged, path, value.clone());
    }
    let mut contributions: Vec<Contribution> = Vec::new();
    for &i in matching {
        let contributed: Vec<String> =
            owner.iter().filter(|(_, o, _)| *o == i).map(|(p, _, _)| p.clone()).collect();
        let explained: Vec<Value> =
            mapped.iter().filter(|m| m.layer == i).map(|m| m.explanation.clone()).collect();
        if !contributed.is_empty() || !explained.is_empty() {
            contributions.push(Contribution {
                index: i,
                name: layers[i].name.clone(),
                contributed,
                mapped: explained,
            });
        }
    }
    ComputedStyle { computed_style: Value::Object(merged), contributing_layers: contributions }
}

/// The built-in base layer.
pub fn default_layer() -> StyleLayer {
    StyleLayer {
        name: "default".into(),
        source: LayerSource::System,
        node: Some(StyleRule {
            selector: String::new(),
            ids: None,
            style: json!({"enabled": true, "shape": {"type": "sphere", "size": 1}, "texture": {"color": "#ffffff"}}),
            mappings: Vec::new(),
        }),
        edge: Some(StyleRule {
            selector: String::new(),
            ids: None,
            style: json!({"enabled": true, "line": {"color": "#888888", "width": 0.5}}),
            mappings: Vec::new(),
        }),
        created_ms: 0,
        auto_named: false,
        hidden: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ai_layer(name: &str, style: FlatStyle) -> StyleLayer {
        StyleLayer {
            name: name.into(),
            source: LayerSource::Ai,
            node: Some(StyleRule {
                selector: "type == 'server'".into(),
                ids: None,
                style: style.nest(ElementKind::Node).expect("style"),
                mappings: Vec::new(),
            }),
            edge: None,
            created_ms: 1,
            auto_named: false,
            hidden: false,
        }
    }

    #[test]
    fn flat_styles_nest_with_css_colour_names_as_hex() {
        let style = FlatStyle {
            color: Some("red".into()),
            size: Some(1.5),
            glow: Some(json!(true)),
            ..FlatStyle::default()
        };
        assert_eq!(
            style.nest(ElementKind::Node).expect("valid"),
            json!({"texture": {"color": "#ff0000"}, "shape": {"size": 1.5}, "effect": {"glow": {"color": "#ff0000", "strength": 1.0}}})
        );
        let edge = FlatStyle {
            color: Some("SteelBlue".into()),
            width: Some(3.0),
            arrow: Some("normal".into()),
            ..FlatStyle::default()
        };
        assert_eq!(
            edge.nest(ElementKind::Edge).expect("valid"),
            json!({"line": {"color": "#4682b4", "width": 3.0}, "arrowHead": {"type": "normal"}})
        );
        assert!(
            FlatStyle { color: Some("reddish".into()), ..FlatStyle::default() }
                .nest(ElementKind::Node)
                .is_err()
        );
        assert!(
            FlatStyle::default().nest(ElementKind::Node).unwrap_err().to_string().contains("empty")
        );
        assert!(
            FlatStyle { size: Some(-1.0), ..FlatStyle::default() }.nest(ElementKind::Node).is_err()
        );
    }

    #[test]
    fn computed_style_merges_in_order_and_names_each_layers_paths() {
        let layers = vec![
            default_layer(),
            ai_layer(
                "ai-red",
                FlatStyle { color: Some("red".into()), size: Some(1.5), ..FlatStyle::default() },
            ),
            ai_layer(
                "ai-glow",
                FlatStyle {
                    glow: Some(json!("#00ff00")),
                    color: Some("blue".into()),
                    ..FlatStyle::default()
                },
            ),
        ];
        let computed = compute(&layers, ElementKind::Node, &[0, 1, 2], &[]);
        assert_eq!(computed.computed_style["texture"]["color"], "#0000ff", "the later layer wins");
        assert_eq!(computed.computed_style["shape"], json!({"type": "sphere", "size": 1.5}));
        assert_eq!(computed.computed_style["effect"]["glow"]["color"], "#00ff00");
        let names: Vec<(&str, Vec<String>)> = computed
            .contributing_layers
            .iter()
            .map(|c| (c.name.as_str(), c.contributed.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("default", vec!["enabled".to_string(), "shape.type".to_string()]),
                ("ai-red", vec!["shape.size".to_string()]),
                ("ai-glow", vec!["texture.color".to_string(), "effect.glow".to_string()]),
            ]
        );
        assert_eq!(layers[2].summary(), "Node color: #0000ff, glow enabled");
    }
}
