//! The ordered list of style layers and its operations: add (named, or `ai-…`/`user-…` by
//! default, after who added it), clear one by name (an unknown name lists the existing ones) or
//! every layer of a source (AI unless asked otherwise), and describe them in the seed's summary
//! and verbose shapes.
//!
//! A session holds at most [`MAX_LAYERS`] layers: every computed style walks all of them, so an
//! LLM styling in a loop must not make each call slower than the last. At the bound an unnamed
//! layer replaces the oldest unnamed layer of the same source (an AI's highlight never removes a
//! person's layer, nor a layer someone named); anything else is refused with a clear error.

use serde_json::{Value, json};

use crate::error::LayerError;
use crate::style::{ElementKind, FlatStyle, LayerSource, StyleLayer, StyleRule, default_layer};

/// The most layers a session holds, the built-in `default` included.
pub const MAX_LAYERS: usize = 256;

/// The longest layer name, in bytes.
pub const MAX_LAYER_NAME_BYTES: usize = 200;

/// What [`StyleLayers::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The name of the layer added or replaced.
    pub name: String,
    /// The oldest unnamed layer of the same source that was removed to stay within
    /// [`MAX_LAYERS`], if one had to be.
    pub gave_way: Option<String>,
}

/// What a person does to a layer in the web view's layer list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrange {
    /// Apply it to nothing, keeping it.
    Hide,
    /// Apply it again.
    Show,
    /// Apply it later: it wins over one more layer.
    Later,
    /// Apply it earlier: one more layer wins over it.
    Earlier,
}

/// A rule's style as a layer holds it: fixed fields nested, and mappings from data.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleStyle {
    /// The fixed style, nested (`FlatStyle::nest`).
    pub style: Value,
    /// The mappings, their properties resolved.
    pub mappings: Vec<crate::mapping::StyleMapping>,
}

/// Which added layers a clear without a name removes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
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
    /// `user-<kind>-style-<now_ms>`; a name already in use replaces that layer in place. At
    /// [`MAX_LAYERS`] an unnamed layer replaces the oldest unnamed layer of its source (said in
    /// [`Added::gave_way`]); a named one, or one with no such layer to replace, is refused.
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
    ) -> Result<Added, LayerError> {
        let rule = RuleStyle { style: style.nest(kind)?, mappings: style.mappings(kind)? };
        self.add_rule(name, source, kind, selector, ids, rule, now_ms)
    }

    /// [`StyleLayers::add`] with the style already nested and its mappings resolved against
    /// the data (their properties' full paths: what the tools add).
    #[allow(clippy::too_many_arguments)]
    pub fn add_rule(
        &mut self,
        name: Option<&str>,
        source: LayerSource,
        kind: ElementKind,
        selector: &str,
        ids: Option<Vec<String>>,
        rule: RuleStyle,
        now_ms: u64,
    ) -> Result<Added, LayerError> {
        let RuleStyle { style: nested, mappings } = rule;
        let kind_name = match kind {
            ElementKind::Node => "node",
            ElementKind::Edge => "edge",
        };
        let given = name.map(str::trim).filter(|n| !n.is_empty());
        let name = match given {
            Some("default") => {
                return Err(LayerError::InvalidStyle(
                    "`default` is the built-in layer's name; choose another".into(),
                ));
            }
            Some(name) if name.len() > MAX_LAYER_NAME_BYTES => {
                return Err(LayerError::InvalidStyle(format!(
                    "a layer name is at most {MAX_LAYER_NAME_BYTES} bytes, not {}",
                    name.len()
                )));
            }
            Some(name) => name.to_string(),
            None => {
                let mut name = format!("{}-{kind_name}-style-{now_ms}", source_prefix(source));
                let mut n = 1;
                while self.layers.iter().any(|l| l.name == name) {
                    n += 1;
                    name = format!("{}-{kind_name}-style-{now_ms}-{n}", source_prefix(source));
                }
                name
            }
        };
        let rule = Some(StyleRule { selector: selector.to_string(), ids, style: nested, mappings });
        let layer = StyleLayer {
            name: name.clone(),
            source,
            node: if kind == ElementKind::Node { rule.clone() } else { None },
            edge: if kind == ElementKind::Edge { rule } else { None },
            created_ms: now_ms,
            auto_named: given.is_none(),
            hidden: false,
        };
        if let Some(existing) = self.layers.iter_mut().find(|l| l.name == name) {
            *existing = layer;
            return Ok(Added { name, gave_way: None });
        }
        let gave_way = self.make_room(&name, source, given.is_none())?;
        self.layers.push(layer);
        Ok(Added { name, gave_way })
    }

    /// Keeps the count within [`MAX_LAYERS`] before `name` is pushed: nothing to do below it; at
    /// it, an unnamed layer removes the oldest unnamed layer of its source (layers are kept in
    /// the order they were added, so the first found is the oldest). A session saved over the
    /// bound by an older version is never cut down silently: it must be cleared first.
    fn make_room(
        &mut self,
        name: &str,
        source: LayerSource,
        unnamed: bool,
    ) -> Result<Option<String>, LayerError> {
        let held = self.layers.len();
        if held < MAX_LAYERS {
            return Ok(None);
        }
        let oldest = self.layers.iter().position(|l| l.auto_named && l.source == source);
        match oldest {
            Some(i) if unnamed && held == MAX_LAYERS => Ok(Some(self.layers.remove(i).name)),
            _ => {
                let why = if unnamed && held == MAX_LAYERS {
                    format!(
                        "and none of them is an unnamed {} layer that could give way to `{name}`",
                        source_prefix(source)
                    )
                } else if unnamed {
                    "over the bound (saved so by an older version)".to_string()
                } else {
                    format!(
                        "so the named layer `{name}` cannot be added (only unnamed layers replace the oldest unnamed one)"
                    )
                };
                Err(LayerError::TooManyLayers(format!(
                    "the session already holds {held} style layers, its most is {MAX_LAYERS}, {why}; remove some with clear_styles (by `layer_name`, or `layers: \"ai\"`, \"user\" or \"all\")"
                )))
            }
        }
    }

    /// Removes the layer called `name`, or every layer `scope` covers when `name` is `None`;
    /// returns the names removed. An unknown name is an error listing the layers there are.
    pub fn clear(
        &mut self,
        name: Option<&str>,
        scope: ClearScope,
    ) -> Result<Vec<String>, LayerError> {
        match name {
            Some("default") => Err(LayerError::UnknownLayer(
                "the built-in `default` layer cannot be removed".into(),
            )),
            Some(name) => match self.layers.iter().position(|l| l.name == name) {
                Some(i) => Ok(vec![self.layers.remove(i).name]),
                None => {
                    let names: Vec<&str> = self.layers.iter().map(|l| l.name.as_str()).collect();
                    Err(LayerError::UnknownLayer(format!(
                        "no style layer named `{name}`; the layers are: {}",
                        names.join(", ")
                    )))
                }
            },
            None => {
                let removed: Vec<String> = self
                    .layers
                    .iter()
                    .filter(|l| scope.covers(l.source))
                    .map(|l| l.name.clone())
                    .collect();
                self.layers.retain(|l| !scope.covers(l.source));
                Ok(removed)
            }
        }
    }

    /// Hides, shows or moves the layer called `name` (a person's layer list): `later` makes it
    /// apply later (win over one more layer), `earlier` the reverse; the built-in `default`
    /// stays first.
    /// Returns whether anything changed.
    pub fn arrange(&mut self, name: &str, action: Arrange) -> Result<bool, LayerError> {
        let Some(i) = self.layers.iter().position(|l| l.name == name) else {
            return Err(LayerError::UnknownLayer(format!(
                "no style layer named `{name}`; the layers are: {}",
                self.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
            )));
        };
        if i == 0 {
            return Err(LayerError::UnknownLayer(
                "the built-in `default` layer is always first and shown".into(),
            ));
        }
        let changed = match action {
            Arrange::Hide | Arrange::Show => {
                let hidden = action == Arrange::Hide;
                let was = std::mem::replace(&mut self.layers[i].hidden, hidden);
                was != hidden
            }
            Arrange::Later if i + 1 < self.layers.len() => {
                self.layers.swap(i, i + 1);
                true
            }
            Arrange::Earlier if i > 1 => {
                self.layers.swap(i, i - 1);
                true
            }
            Arrange::Later | Arrange::Earlier => false,
        };
        Ok(changed)
    }

    /// The seed's describe_styles data: a summary per layer, or every style with `verbose`, or
    /// one layer.
    pub fn describe(&self, verbose: bool, layer: Option<&str>) -> Result<Value, LayerError> {
        let chosen: Vec<(usize, &StyleLayer)> = match layer {
            Some(name) => match self.layers.iter().position(|l| l.name == name) {
                Some(i) => vec![(i, &self.layers[i])],
                None => {
                    return Err(LayerError::UnknownLayer(format!(
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
                let mut entry = if verbose || layer.is_some() {
                    json!({"index": i, "name": l.name, "source": l.source, "autoNamed": l.auto_named, "createdMs": l.created_ms, "node": l.node, "edge": l.edge, "summary": l.summary()})
                } else {
                    json!({
                        "index": i, "name": l.name, "source": l.source,
                        "nodeSelector": l.node.as_ref().map(|r| r.selector.clone()),
                        "edgeSelector": l.edge.as_ref().map(|r| r.selector.clone()),
                        "nodeIds": l.node.as_ref().and_then(|r| r.ids.as_ref()).map(|ids| ids.len()),
                        "edgeIds": l.edge.as_ref().and_then(|r| r.ids.as_ref()).map(|ids| ids.len()),
                        "summary": l.summary(),
                    })
                };
                if l.hidden {
                    entry["hidden"] = json!(true);
                }
                entry
            })
            .collect();
        let named = |source: LayerSource| {
            self.layers
                .iter()
                .filter(|l| l.source == source)
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
        };
        let (ai, user) = (named(LayerSource::Ai), named(LayerSource::User));
        Ok(json!({
            "layerCount": self.layers.len(), "maxLayers": MAX_LAYERS, "layers": layers,
            "aiLayerCount": ai.len(), "aiLayerNames": ai, "userLayerCount": user.len(), "userLayerNames": user,
        }))
    }
}

/// The prefix of a layer's generated name: who added it.
fn source_prefix(source: LayerSource) -> &'static str {
    match source {
        LayerSource::Ai => "ai",
        LayerSource::User => "user",
        LayerSource::System => "system",
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
        let ai = layers
            .add(None, LayerSource::Ai, ElementKind::Node, "type == 'server'", None, &red(), 1000)
            .expect("added")
            .name;
        assert_eq!(ai, "ai-node-style-1000");
        let again = layers
            .add(None, LayerSource::Ai, ElementKind::Node, "type == 'db'", None, &red(), 1000)
            .expect("added")
            .name;
        assert_eq!(again, "ai-node-style-1000-2", "names stay unique");
        layers
            .add(
                Some("theme"),
                LayerSource::User,
                ElementKind::Edge,
                "",
                None,
                &FlatStyle { width: Some(2.0), ..FlatStyle::default() },
                1001,
            )
            .expect("added");
        layers
            .add(
                Some("theme"),
                LayerSource::User,
                ElementKind::Edge,
                "",
                None,
                &FlatStyle { width: Some(3.0), ..FlatStyle::default() },
                1002,
            )
            .expect("replaced");
        assert_eq!(layers.layers.len(), 4);
        assert_eq!(
            layers.layers[3].edge.as_ref().map(|r| r.style["line"]["width"].clone()),
            Some(json!(3.0))
        );
        let described = layers.describe(false, None).expect("describe");
        assert_eq!(described["layerCount"], 4);
        assert_eq!(
            described["aiLayerNames"],
            json!(["ai-node-style-1000", "ai-node-style-1000-2"])
        );
        assert_eq!(described["layers"][1]["summary"], "Node color: #ff0000");
        assert_eq!(described["userLayerNames"], json!(["theme"]));
        let err = layers.clear(Some("red-highlight"), ClearScope::Ai).expect_err("unknown");
        assert!(
            err.to_string().contains(
                "the layers are: default, ai-node-style-1000, ai-node-style-1000-2, theme"
            ),
            "{err}"
        );
        assert_eq!(
            layers.clear(None, ClearScope::Ai).expect("ai layers"),
            ["ai-node-style-1000", "ai-node-style-1000-2"]
        );
        assert_eq!(
            layers.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["default", "theme"]
        );
        assert!(layers.clear(Some("default"), ClearScope::All).is_err());
    }

    #[test]
    fn layers_are_hidden_shown_and_moved_but_default_stays_first() {
        let mut layers = StyleLayers::default();
        for name in ["a", "b", "c"] {
            layers
                .add(Some(name), LayerSource::Ai, ElementKind::Node, "", None, &red(), 1)
                .expect("added");
        }
        let names = |l: &StyleLayers| l.layers.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
        assert_eq!(layers.arrange("a", Arrange::Later), Ok(true));
        assert_eq!(names(&layers), ["default", "b", "a", "c"]);
        assert_eq!(layers.arrange("c", Arrange::Later), Ok(false), "already last");
        assert_eq!(layers.arrange("b", Arrange::Earlier), Ok(false), "default stays first");
        assert_eq!(layers.arrange("c", Arrange::Earlier), Ok(true));
        assert_eq!(names(&layers), ["default", "b", "c", "a"]);
        assert_eq!(layers.arrange("b", Arrange::Hide), Ok(true));
        assert_eq!(layers.arrange("b", Arrange::Hide), Ok(false));
        assert!(layers.layers[1].applied_rule(ElementKind::Node).is_none());
        assert_eq!(layers.describe(false, None).expect("described")["layers"][1]["hidden"], true);
        assert_eq!(layers.arrange("b", Arrange::Show), Ok(true));
        assert!(layers.layers[1].applied_rule(ElementKind::Node).is_some());
        assert!(layers.arrange("default", Arrange::Hide).is_err());
        assert!(
            layers
                .arrange("zz", Arrange::Later)
                .unwrap_err()
                .to_string()
                .contains("the layers are")
        );
    }

    #[test]
    fn clearing_by_scope_keeps_the_other_source_and_the_default() {
        let mut layers = StyleLayers::default();
        let user = layers
            .add(None, LayerSource::User, ElementKind::Node, "", None, &red(), 7)
            .expect("added")
            .name;
        let ai = layers
            .add(None, LayerSource::Ai, ElementKind::Edge, "", None, &red(), 7)
            .expect("added")
            .name;
        assert_eq!((user.as_str(), ai.as_str()), ("user-node-style-7", "ai-edge-style-7"));
        assert_eq!(layers.clear(None, ClearScope::Ai).expect("ai"), std::slice::from_ref(&ai));
        assert_eq!(layers.clear(None, ClearScope::Ai).expect("none left"), Vec::<String>::new());
        assert_eq!(layers.layers.len(), 2, "the person's layer stays");
        layers.add(None, LayerSource::Ai, ElementKind::Edge, "", None, &red(), 8).expect("added");
        assert_eq!(layers.clear(None, ClearScope::User).expect("user"), [user]);
        assert_eq!(layers.clear(None, ClearScope::All).expect("all"), ["ai-edge-style-8"]);
        assert_eq!(layers.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["default"]);
    }

    fn add_unnamed(
        layers: &mut StyleLayers,
        source: LayerSource,
        now: u64,
    ) -> Result<Added, LayerError> {
        layers.add(None, source, ElementKind::Node, "", None, &red(), now)
    }

    #[test]
    fn unnamed_layers_past_the_bound_replace_the_oldest_unnamed_layer_of_their_source() {
        let mut layers = StyleLayers::default();
        let person = add_unnamed(&mut layers, LayerSource::User, 1).expect("user").name;
        layers
            .add(Some("keep"), LayerSource::Ai, ElementKind::Node, "", None, &red(), 2)
            .expect("named");
        let mut ai = Vec::new();
        while layers.layers.len() < MAX_LAYERS {
            let added = add_unnamed(&mut layers, LayerSource::Ai, 10 + ai.len() as u64)
                .expect("below the bound");
            assert_eq!(added.gave_way, None);
            ai.push(added.name);
        }
        assert_eq!(
            ai.len(),
            MAX_LAYERS - 3,
            "default, the person's layer and `keep` take three places"
        );
        for round in 0..300u64 {
            let added = add_unnamed(&mut layers, LayerSource::Ai, 100_000 + round)
                .expect("an unnamed AI layer gives way");
            let oldest = ai.remove(0);
            assert_eq!(added.gave_way.as_deref(), Some(oldest.as_str()), "round {round}");
            ai.push(added.name);
            assert_eq!(layers.layers.len(), MAX_LAYERS);
        }
        let names: Vec<&str> = layers.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            &names[..3],
            ["default", person.as_str(), "keep"],
            "the person's and the named layer stay, in place"
        );
        assert_eq!(
            names[3..],
            ai.iter().map(String::as_str).collect::<Vec<_>>()[..],
            "newest AI layers, oldest first"
        );
        let described = layers.describe(false, None).expect("describe");
        assert_eq!(
            (described["layerCount"].as_u64(), described["maxLayers"].as_u64()),
            (Some(256), Some(256))
        );
    }

    #[test]
    fn at_the_bound_named_layers_and_sources_without_unnamed_layers_are_refused() {
        let mut layers = StyleLayers::default();
        while layers.layers.len() < MAX_LAYERS {
            let n = layers.layers.len();
            add_unnamed(&mut layers, LayerSource::Ai, n as u64).expect("below the bound");
        }
        let named = layers
            .add(Some("theme"), LayerSource::User, ElementKind::Edge, "", None, &red(), 9)
            .expect_err("named at the bound");
        assert!(matches!(named, LayerError::TooManyLayers(_)), "{named:?}");
        let text = named.to_string();
        assert!(
            text.contains("256 style layers")
                && text.contains("`theme` cannot be added")
                && text.contains("clear_styles"),
            "{text}"
        );
        let person = add_unnamed(&mut layers, LayerSource::User, 9)
            .expect_err("no unnamed user layer to give way");
        assert!(person.to_string().contains("none of them is an unnamed user layer"), "{person}");
        // A name in use is still replaced in place, bound or not.
        let existing = layers.layers[5].name.clone();
        let replaced = layers
            .add(Some(&existing), LayerSource::Ai, ElementKind::Node, "x == `1`", None, &red(), 9)
            .expect("in place");
        assert_eq!((replaced.name.as_str(), replaced.gave_way), (existing.as_str(), None));
        assert_eq!(layers.layers.len(), MAX_LAYERS);
        assert_eq!(layers.layers[5].node.as_ref().map(|r| r.selector.as_str()), Some("x == `1`"));
        assert!(!layers.layers[5].auto_named, "named by its author now");
        // Clearing makes room again.
        layers.clear(None, ClearScope::Ai).expect("clear");
        assert_eq!(
            layers
                .add(Some("theme"), LayerSource::User, ElementKind::Edge, "", None, &red(), 9)
                .expect("room")
                .gave_way,
            None
        );
    }

    #[test]
    fn a_session_saved_over_the_bound_is_not_cut_down_silently() {
        let mut layers = StyleLayers::default();
        for i in 0..300u64 {
            // As an older version saved them: no `auto_named`.
            let mut layer = layers.layers[0].clone();
            layer.name = format!("ai-node-style-{i}");
            layer.source = LayerSource::Ai;
            layers.layers.push(layer);
        }
        let saved =
            serde_json::to_string(&layers).expect("json").replace(",\"auto_named\":false", "");
        assert!(!saved.contains("auto_named"));
        let mut restored: StyleLayers =
            serde_json::from_str(&saved).expect("an old session still reads");
        assert_eq!(restored.layers.len(), 301);
        let refused = add_unnamed(&mut restored, LayerSource::Ai, 1).expect_err("over the bound");
        assert!(
            refused.to_string().contains("301 style layers")
                && refused.to_string().contains("older version"),
            "{refused}"
        );
        assert_eq!(restored.layers.len(), 301, "nothing removed");
    }
}
