//! The ordered list of style layers and its operations: add (named, or `ai-…`/`user-…` by
//! default, after who added it), clear one by name (an unknown name lists the existing ones) or
//! every layer of a source (AI unless asked otherwise), and describe them in the seed's summary
//! and verbose shapes.

use serde_json::{Value, json};

use crate::SessionError;
use crate::style::{ElementKind, FlatStyle, LayerSource, StyleLayer, StyleRule, default_layer};

/// Which added layers a clear without a name removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClearScope {
    /// Layers an AI added ("remove the AI layers").
    #[default]
    Ai,
    /// Layers a person added (the web view, the HTTP API).
    User,
    /// Every added layer, AI and person alike (never the built-in `default`).
    All,
}

impl ClearScope {
    /// True when a layer from `source` is cleared.
    pub fn covers(self, source: LayerSource) -> bool {
        match self {
            Self::Ai => source == LayerSource::Ai,
            Self::User => source == LayerSource::User,
            Self::All => source != LayerSource::System,
        }
    }
}

/// The layers, lowest priority first; the first is always the built-in default layer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StyleLayers {
    /// Layers in order; later layers override earlier ones.
    pub layers: Vec<StyleLayer>,
}

impl Default for StyleLayers {
    fn default() -> Self {
        Self { layers: vec![default_layer()] }
    }
}

impl StyleLayers {
    /// Adds a layer styling `kind` elements that match `selector` (and, if `ids` is given, are
    /// among them). Without a name it is named after its source, `ai-<kind>-style-<now_ms>` or
    /// `user-<kind>-style-<now_ms>`; a name already in use replaces that layer in place.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        name: Option<&str>,
        source: LayerSource,
        kind: ElementKind,
        selector: &str,
        ids: Option<Vec<String>>,
        style: &FlatStyle,
        now_ms: u64,
    ) -> Result<String, SessionError> {
        let nested = style.nest(kind)?;
        let kind_name = match kind {
            ElementKind::Node => "node",
            ElementKind::Edge => "edge",
        };
        let name = match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some("default") => {
                return Err(SessionError::InvalidStyle("`default` is the built-in layer's name; choose another".into()));
            }
            Some(name) => name.to_string(),
            None => {
                let prefix = match source {
                    LayerSource::Ai => "ai",
                    LayerSource::User => "user",
                    LayerSource::System => "system",
                };
                let mut name = format!("{prefix}-{kind_name}-style-{now_ms}");
                let mut n = 1;
                while self.layers.iter().any(|l| l.name == name) {
                    n += 1;
                    name = format!("{prefix}-{kind_name}-style-{now_ms}-{n}");
                }
                name
            }
        };
        let rule = Some(StyleRule { selector: selector.to_string(), ids, style: nested });
        let layer = StyleLayer {
            name: name.clone(),
            source,
            node: if kind == ElementKind::Node { rule.clone() } else { None },
            edge: if kind == ElementKind::Edge { rule } else { None },
            created_ms: now_ms,
        };
        match self.layers.iter_mut().find(|l| l.name == name) {
            Some(existing) => *existing = layer,
            None => self.layers.push(layer),
        }
        Ok(name)
    }

    /// Removes the layer called `name`, or every layer `scope` covers when `name` is `None`;
    /// returns the names removed. An unknown name is an error listing the layers there are.
    pub fn clear(&mut self, name: Option<&str>, scope: ClearScope) -> Result<Vec<String>, SessionError> {
        match name {
            Some("default") => Err(SessionError::UnknownLayer("the built-in `default` layer cannot be removed".into())),
            Some(name) => match self.layers.iter().position(|l| l.name == name) {
                Some(i) => Ok(vec![self.layers.remove(i).name]),
                None => {
                    let names: Vec<&str> = self.layers.iter().map(|l| l.name.as_str()).collect();
                    Err(SessionError::UnknownLayer(format!("no style layer named `{name}`; the layers are: {}", names.join(", "))))
                }
            },
            None => {
                let removed: Vec<String> = self.layers.iter().filter(|l| scope.covers(l.source)).map(|l| l.name.clone()).collect();
                self.layers.retain(|l| !scope.covers(l.source));
                Ok(removed)
            }
        }
    }

    /// The seed's describe_styles data: a summary per layer, or every style with `verbose`, or
    /// one layer.
    pub fn describe(&self, verbose: bool, layer: Option<&str>) -> Result<Value, SessionError> {
        let chosen: Vec<(usize, &StyleLayer)> = match layer {
            Some(name) => match self.layers.iter().position(|l| l.name == name) {
                Some(i) => vec![(i, &self.layers[i])],
                None => {
                    return Err(SessionError::UnknownLayer(format!(
                        "no style layer named `{name}`; the layers are: {}",
                        self.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
                    )));
                }
            },
            None => self.layers.iter().enumerate().collect(),
        };
        let layers: Vec<Value> = chosen
            .iter()
            .map(|(i, l)| {
                if verbose || layer.is_some() {
                    json!({"index": i, "name": l.name, "source": l.source, "createdMs": l.created_ms, "node": l.node, "edge": l.edge, "summary": l.summary()})
                } else {
                    json!({
                        "index": i, "name": l.name, "source": l.source,
                        "nodeSelector": l.node.as_ref().map(|r| r.selector.clone()),
                        "edgeSelector": l.edge.as_ref().map(|r| r.selector.clone()),
                        "nodeIds": l.node.as_ref().and_then(|r| r.ids.as_ref()).map(|ids| ids.len()),
                        "edgeIds": l.edge.as_ref().and_then(|r| r.ids.as_ref()).map(|ids| ids.len()),
                        "summary": l.summary(),
                    })
                }
            })
            .collect();
        let named = |source: LayerSource| self.layers.iter().filter(|l| l.source == source).map(|l| l.name.as_str()).collect::<Vec<_>>();
        let (ai, user) = (named(LayerSource::Ai), named(LayerSource::User));
        Ok(json!({
            "layerCount": self.layers.len(), "layers": layers,
            "aiLayerCount": ai.len(), "aiLayerNames": ai, "userLayerCount": user.len(), "userLayerNames": user,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> FlatStyle {
        FlatStyle { color: Some("red".into()), ..FlatStyle::default() }
    }

    #[test]
    fn layers_are_added_named_replaced_and_cleared() {
        let mut layers = StyleLayers::default();
        let ai = layers.add(None, LayerSource::Ai, ElementKind::Node, "type == 'server'", None, &red(), 1000).expect("added");
        assert_eq!(ai, "ai-node-style-1000");
        let again = layers.add(None, LayerSource::Ai, ElementKind::Node, "type == 'db'", None, &red(), 1000).expect("added");
        assert_eq!(again, "ai-node-style-1000-2", "names stay unique");
        layers
            .add(Some("theme"), LayerSource::User, ElementKind::Edge, "", None, &FlatStyle { width: Some(2.0), ..FlatStyle::default() }, 1001)
            .expect("added");
        layers
            .add(Some("theme"), LayerSource::User, ElementKind::Edge, "", None, &FlatStyle { width: Some(3.0), ..FlatStyle::default() }, 1002)
            .expect("replaced");
        assert_eq!(layers.layers.len(), 4);
        assert_eq!(layers.layers[3].edge.as_ref().map(|r| r.style["line"]["width"].clone()), Some(json!(3.0)));
        let described = layers.describe(false, None).expect("describe");
        assert_eq!(described["layerCount"], 4);
        assert_eq!(described["aiLayerNames"], json!(["ai-node-style-1000", "ai-node-style-1000-2"]));
        assert_eq!(described["layers"][1]["summary"], "Node color: #ff0000");
        assert_eq!(described["userLayerNames"], json!(["theme"]));
        let err = layers.clear(Some("red-highlight"), ClearScope::Ai).expect_err("unknown");
        assert!(err.to_string().contains("the layers are: default, ai-node-style-1000, ai-node-style-1000-2, theme"), "{err}");
        assert_eq!(layers.clear(None, ClearScope::Ai).expect("ai layers"), ["ai-node-style-1000", "ai-node-style-1000-2"]);
        assert_eq!(layers.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["default", "theme"]);
        assert!(layers.clear(Some("default"), ClearScope::All).is_err());
    }

    #[test]
    fn clearing_by_scope_keeps_the_other_source_and_the_default() {
        let mut layers = StyleLayers::default();
        let user = layers.add(None, LayerSource::User, ElementKind::Node, "", None, &red(), 7).expect("added");
        let ai = layers.add(None, LayerSource::Ai, ElementKind::Edge, "", None, &red(), 7).expect("added");
        assert_eq!((user.as_str(), ai.as_str()), ("user-node-style-7", "ai-edge-style-7"));
        assert_eq!(layers.clear(None, ClearScope::Ai).expect("ai"), [ai.clone()]);
        assert_eq!(layers.clear(None, ClearScope::Ai).expect("none left"), Vec::<String>::new());
        assert_eq!(layers.layers.len(), 2, "the person's layer stays");
        layers.add(None, LayerSource::Ai, ElementKind::Edge, "", None, &red(), 8).expect("added");
        assert_eq!(layers.clear(None, ClearScope::User).expect("user"), [user]);
        assert_eq!(layers.clear(None, ClearScope::All).expect("all"), ["ai-edge-style-8"]);
        assert_eq!(layers.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["default"]);
    }
}
