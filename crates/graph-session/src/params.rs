//! Parameters of the graph session tools, with the contract's snake_case names. A field whose
//! name, type and the tool's description say all a model needs is kept out of the input schema's
//! descriptions (`#[schemars(description = "")]`): the tool list is paid on every turn.

use crate::layers::ClearScope;
use crate::selection::SelectMode;
use crate::style::FlatStyle;
use crate::view::{CameraPreset, Dimension, LayoutType};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// What query_graph reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GraphQuery {
    /// Number of nodes.
    NodeCount,
    /// Number of edges.
    EdgeCount,
    /// The layout type.
    CurrentLayout,
    /// Counts, layout, dimension, styles, selection and algorithms in brief.
    #[default]
    Summary,
    /// Everything query_graph knows: summary, view and layout.
    All,
    /// 2D/3D, camera, viewport.
    View,
    /// Layout type, options, settled, available layouts.
    Layout,
}

/// Parameters of `query_graph`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryGraphParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// What to report (default: the summary).
    #[serde(default)]
    #[schemars(description = "")]
    pub query: GraphQuery,
}

/// Parameters of `find_nodes` and `find_edges`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindElementsParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// JMESPath, e.g. `algorithmResults.schemascope.pagerank.rankPct > \`50\``; empty matches
    /// all.
    #[serde(default)]
    #[schemars(description = "")]
    pub selector: String,
    /// Elements shown with their data (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Parameters of `find_and_style_nodes` and `find_and_style_edges`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StyleElementsParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Empty styles every element.
    #[serde(default)]
    pub selector: String,
    /// Only these ids (e.g. the selection), within `selector`'s matches when both are given.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// color (CSS name or hex), size (1 = default), shape (sphere, box, cone, cylinder…), glow
    /// (true or a colour), glow_strength, outline (a colour), outline_width, opacity (0-1),
    /// hidden; edges: width, arrow (normal, none…). color_by / size_by: a property (or an
    /// algorithm's name), or {property, scale: categorical|linear|log|quantile, palette, domain,
    /// range}.
    #[schemars(with = "serde_json::Map<String, Value>")]
    pub style: FlatStyle,
    /// E.g. `slow-links`, to remove it later.
    #[serde(default)]
    pub layer_name: Option<String>,
}

/// The input schema of `find_and_style_edges`: [`StyleElementsParams`]' fields (which parse its
/// arguments), described by reference to `find_and_style_nodes` so the tool list says them once.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StyleEdgesSchema {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// As for find_and_style_nodes.
    #[serde(default)]
    #[schemars(description = "")]
    pub selector: String,
    /// As for find_and_style_nodes.
    #[serde(default)]
    #[schemars(description = "")]
    pub ids: Option<Vec<String>>,
    /// As for find_and_style_nodes: color, width, arrow (normal, none…), opacity, hidden.
    #[schemars(with = "serde_json::Map<String, Value>")]
    #[schemars(
        description = "color, width, arrow (normal, none…), opacity, hidden, color_by, size_by (width)."
    )]
    pub style: FlatStyle,
    /// As for find_and_style_nodes.
    #[serde(default)]
    #[schemars(description = "")]
    pub layer_name: Option<String>,
}

/// Parameters of `clear_styles`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearStylesParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The layer to remove; without it every layer `layers` names is removed.
    #[serde(default)]
    #[schemars(description = "")]
    pub layer_name: Option<String>,
    /// Without `layer_name`, whose layers to remove: `ai` (default), `user` (the person's) or
    /// `all`. The built-in `default` layer always stays.
    #[serde(default)]
    #[schemars(description = "")]
    pub layers: ClearScope,
}

/// Parameters of `describe_styles`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeStylesParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Full style details for each layer (default: a one-line summary each).
    #[serde(default)]
    #[schemars(description = "")]
    pub verbose: bool,
    /// One layer only.
    #[serde(default)]
    pub layer_name: Option<String>,
    /// A node or edge id: its merged style and which layer contributed which property.
    #[serde(default)]
    #[schemars(description = "")]
    pub compute_for: Option<String>,
}

/// Parameters of `describe_selection`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescribeSelectionParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Include each selected element's data (default false).
    #[serde(default)]
    #[schemars(description = "")]
    pub include_data: bool,
}

/// Which elements a selector picks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElementsParam {
    /// Nodes.
    #[default]
    Nodes,
    /// Edges.
    Edges,
}

/// Parameters of `select`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Node or edge ids.
    #[serde(default)]
    #[schemars(description = "")]
    pub ids: Vec<String>,
    /// Or a JMESPath selector (over `elements`).
    #[serde(default)]
    #[schemars(description = "")]
    pub selector: Option<String>,
    /// What `selector` selects: nodes (default) or edges.
    #[serde(default)]
    #[schemars(description = "")]
    pub elements: ElementsParam,
    /// replace (default), add, remove or clear.
    #[serde(default)]
    #[schemars(description = "")]
    pub mode: SelectMode,
}

/// Parameters of `set_layout`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetLayoutParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The layout.
    #[serde(rename = "type")]
    #[schemars(description = "")]
    pub layout_type: LayoutType,
    /// The type's options (see the description).
    #[serde(default)]
    #[schemars(description = "")]
    pub options: Value,
}

/// Parameters of `set_dimension`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetDimensionParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// 2d or 3d.
    #[schemars(description = "")]
    pub dimension: Dimension,
}

/// Parameters of `set_camera`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCameraParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// A named camera position.
    #[serde(default)]
    #[schemars(description = "")]
    pub preset: Option<CameraPreset>,
    /// Camera position [x, y, z] (instead of a preset).
    #[serde(default)]
    #[schemars(description = "")]
    pub position: Option<[f64; 3]>,
    /// Default: unchanged.
    #[serde(default)]
    pub target: Option<[f64; 3]>,
}

/// Parameters of `zoom_to_nodes`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZoomToNodesParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Node ids to frame.
    #[serde(default)]
    #[schemars(description = "")]
    pub ids: Vec<String>,
    /// Or a selector over nodes.
    #[serde(default)]
    #[schemars(description = "")]
    pub selector: Option<String>,
}

/// Parameters of `list_algorithms`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAlgorithmsParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
}

/// Parameters of `run_algorithm`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAlgorithmParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Default `schemascope`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// degree, pagerank, betweenness, closeness, components, louvain, clustering, shortestPath
    /// or minimumSpanningTree (see list_algorithms).
    #[serde(rename = "type")]
    #[schemars(description = "")]
    pub algorithm_type: String,
    /// Options, e.g. {"weight": "weight", "directed": true} or for shortestPath
    /// {"source": "a", "target": "b"}.
    #[serde(default)]
    #[schemars(description = "")]
    pub options: Value,
}

/// Parameters of `arrange_layer` (the web view's layer list, never listed).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArrangeLayerParams {
    /// Graph source name (optional when only one graph is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The layer.
    pub layer_name: String,
    /// hide, show, later (apply after the next layer: win over it) or earlier.
    pub action: crate::layers::Arrange,
}

/// Parameters of `report_hover` (the web view's, never listed).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportHoverParams {
    /// Graph source name (optional when only one graph is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The node or edge id under the pointer; absent when the pointer left every element.
    #[serde(default)]
    pub id: Option<String>,
}

/// Parameters of `read_scene` (the web view inside a chat client reads what to draw through it;
/// never listed to a model).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSceneParams {
    /// Graph source name (optional when only one graph is served).
    #[serde(default)]
    pub source: Option<String>,
    /// The version the view drew last: the answer waits for a change past it (up to
    /// `wait_seconds`) and says `unchanged` when none came.
    #[serde(default)]
    pub since_version: Option<u64>,
    /// How long to wait for a change past `since_version`, in seconds (0 to 25; default 20).
    #[serde(default)]
    pub wait_seconds: Option<f64>,
}

/// Parameters of `report_viewport` (sent by the web view, not an MCP tool).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportViewportParams {
    /// Graph source name (optional when only one graph is served).
    #[serde(default)]
    pub source: Option<String>,
    /// Canvas width in pixels.
    pub width: u32,
    /// Canvas height in pixels.
    pub height: u32,
}
