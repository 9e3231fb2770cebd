//! A graph session's state as it is saved: style layers, selection, view, layout with node
//! positions, and the algorithm runs with their results. Each part is saved on its own, so a
//! style change does not rewrite 100k algorithm results.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::layers::StyleLayers;
use crate::restore;
use crate::selection::Selection;
use crate::view::{Layout, View};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most algorithm runs a session's history keeps (the oldest give way).
pub const MAX_HISTORY: usize = 200;

/// Everything a session remembers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionState {
    /// Style layers, lowest priority first.
    pub layers: StyleLayers,
    /// Selected nodes and edges.
    pub selection: Selection,
    /// 2D/3D, camera, viewport.
    pub view: View,
    /// Layout type, options, settled.
    pub layout: Layout,
    /// Node positions of the current layout.
    pub positions: Arc<NodePositions>,
    /// Algorithm runs, oldest first.
    pub history: Vec<AlgorithmRun>,
    /// The latest results of each algorithm, by `namespace.type`.
    pub results: BTreeMap<String, Arc<AlgorithmOutput>>,
}

/// Node positions by node id, with the layout's iteration count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodePositions {
    /// Node ids, in the graph's node order.
    pub ids: Vec<String>,
    /// One `[x, y, z]` per id.
    pub positions: Vec<[f64; 3]>,
    /// Iterations the layout ran (force-directed), else 0.
    pub iterations: usize,
}

impl NodePositions {
    /// The position of every node id, for lookups.
    pub fn by_id(&self) -> std::collections::HashMap<&str, [f64; 3]> {
        self.ids.iter().map(String::as_str).zip(self.positions.iter().copied()).collect()
    }
}

/// One run of an algorithm, as list_algorithms reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlgorithmRun {
    /// `namespace:type`.
    pub algorithm: String,
    /// Namespace.
    pub namespace: String,
    /// Type.
    #[serde(rename = "type")]
    pub algorithm_type: String,
    /// When it ran (RFC 3339).
    pub run_at: String,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// The options it ran with.
    pub options: Value,
    /// Property paths it added (`algorithmResults.<namespace>.<type>.<name>`).
    pub added_properties: AddedProperties,
    /// Graph-level results (componentCount, modularity, …).
    pub graph_results: Value,
    /// The fingerprint of the data it ran on (absent in sessions saved before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_fingerprint: Option<String>,
    /// True once the data changed after the run: its results were removed from the elements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// Why it is stale (`data reloaded at …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reason: Option<String>,
}

/// Property paths an algorithm added to nodes and edges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AddedProperties {
    /// On nodes.
    pub nodes: Vec<String>,
    /// On edges.
    pub edges: Vec<String>,
}

/// The per-element values of one algorithm, stored by column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmOutput {
    /// Namespace.
    pub namespace: String,
    /// Type.
    #[serde(rename = "type")]
    pub algorithm_type: String,
    /// Node ids the node columns are aligned with.
    pub node_ids: Vec<String>,
    /// Node values by name (`rank`, `rankPct`, …), one per node id.
    pub node_columns: Vec<(String, Vec<Value>)>,
    /// Edge ids the edge columns are aligned with.
    pub edge_ids: Vec<String>,
    /// Edge values by name, one per edge id.
    pub edge_columns: Vec<(String, Vec<Value>)>,
    /// The fingerprint of the data they were computed on (see `reconcile::data_fingerprint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_fingerprint: Option<String>,
}

impl AlgorithmOutput {
    /// The `namespace.type` key results are stored under.
    pub fn key(&self) -> String {
        format!("{}.{}", self.namespace, self.algorithm_type)
    }
}

/// The separately saved parts of a session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// Style layers.
    Layers,
    /// Selection.
    Selection,
    /// View.
    View,
    /// Layout and positions.
    Layout,
    /// Algorithm history.
    History,
    /// One algorithm's results (`namespace.type`).
    Results(String),
}

impl Part {
    /// The key the part is saved under.
    pub fn key(&self) -> String {
        match self {
            Self::Layers => "layers".into(),
            Self::Selection => "selection".into(),
            Self::View => "view".into(),
            Self::Layout => "layout".into(),
            Self::History => "history".into(),
            Self::Results(key) => format!("results:{key}"),
        }
    }

    /// The part's value in `state`, as JSON text.
    pub fn encode(&self, state: &SessionState) -> Result<String, serde_json::Error> {
        match self {
            Self::Layers => serde_json::to_string(&state.layers),
            Self::Selection => serde_json::to_string(&state.selection),
            Self::View => serde_json::to_string(&state.view),
            Self::Layout => serde_json::to_string(&(&state.layout, &*state.positions)),
            Self::History => serde_json::to_string(&state.history),
            Self::Results(key) => match state.results.get(key) {
                Some(output) => serde_json::to_string(&**output),
                None => Ok(String::new()),
            },
        }
    }
}

/// A state rebuilt from saved parts, with what was dropped on the way.
#[derive(Debug, Default)]
pub struct Decoded {
    /// The state, every part as the tools could have set it.
    pub state: SessionState,
    /// One note per part (or kind of entry) dropped or corrected, naming it and why.
    pub notes: Vec<String>,
    /// True when the saved camera was dropped: the session frames the graph instead.
    pub camera_dropped: bool,
}

impl SessionState {
    /// Rebuilds a state from saved parts, each checked as strictly as the tools check what they
    /// set (`restore.rs`); a part that does not parse, or fails a check, is reported and left at
    /// its default rather than losing the rest.
    pub fn decode(parts: &BTreeMap<String, String>) -> Decoded {
        fn part<T: serde::de::DeserializeOwned>(
            parts: &BTreeMap<String, String>,
            key: &str,
            problems: &mut Vec<String>,
        ) -> Option<T> {
            let text = parts.get(key)?;
            serde_json::from_str(text)
                .map_err(|e| problems.push(format!("saved `{key}` ignored: {e}")))
                .ok()
        }
        let mut notes = Vec::new();
        let mut state = SessionState::default();
        if let Some(layers) = part(parts, "layers", &mut notes) {
            state.layers = restore::layers(layers, &mut notes);
        }
        if let Some(selection) = part(parts, "selection", &mut notes) {
            state.selection = restore::selection(selection, &mut notes);
        }
        let camera_dropped = match part(parts, "view", &mut notes) {
            Some(view) => {
                let (view, dropped) = restore::view(view, &mut notes);
                state.view = view;
                dropped
            }
            // A saved view that does not parse leaves no camera to keep: frame the graph.
            None => parts.contains_key("view"),
        };
        if let Some((layout, positions)) =
            part::<(Layout, NodePositions)>(parts, "layout", &mut notes)
        {
            let (layout, positions) = restore::layout(layout, positions, &mut notes);
            state.layout = layout;
            state.positions = Arc::new(positions);
        }
        if let Some(history) = part(parts, "history", &mut notes) {
            state.history = restore::history(history, &mut notes);
        }
        for (key, _) in parts.iter().filter(|(k, v)| k.starts_with("results:") && !v.is_empty()) {
            if let Some(output) = part::<AlgorithmOutput>(parts, key, &mut notes)
                .and_then(|output| restore::results(key, output, &mut notes))
            {
                state.results.insert(output.key(), Arc::new(output));
            }
        }
        Decoded { state, notes, camera_dropped }
    }
}
