//! Parameters of the graph session tools, with the contract's snake_case names.

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
    /// nodeCount, edgeCount, currentLayout, summary (default), all, view or layout.
    #[serde(default)]
    pub query: GraphQuery,
}

/// Parameters of `find_nodes` and `find_edges`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindElementsParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// JMESPath over the element's data plus `algorithmResults`, e.g. `type == 'server'` or
    /// `algorithmResults.schemascope.pagerank.rankPct > \`50\``. Empty matches everything.
    #[serde(default)]
    pub selector: String,
    /// How many matching elements to show with their data (default 10, at most 50).
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
    /// JMESPath over the element's data plus `algorithmResults`; empty styles every element.
    #[serde(default)]
    pub selector: String,
    /// Only these element ids (e.g. the selection from describe_selection); combined with
    /// `selector` when both are given.
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// Flat style: color (CSS name or hex), size, shape, glow (true or a colour), glow_strength,
    /// outline (colour), outline_width, opacity, hidden; for edges width and arrow.
    pub style: FlatStyle,
    /// Name of the layer (e.g. `highlight-servers`); default `ai-<kind>-style-<time>`. An
    /// existing name is replaced in place.
    #[serde(default)]
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
    pub layer_name: Option<String>,
    /// Without `layer_name`, whose layers to remove: `ai` (default), `user` (the person's) or
    /// `all`. The built-in `default` layer always stays.
    #[serde(default)]
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
    pub verbose: bool,
    /// Details of one layer.
    #[serde(default)]
    pub layer_name: Option<String>,
    /// A node or edge id: its merged style and which layer contributed which property.
    #[serde(default)]
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
    pub ids: Vec<String>,
    /// Or a JMESPath selector (over `elements`).
    #[serde(default)]
    pub selector: Option<String>,
    /// What `selector` selects: nodes (default) or edges.
    #[serde(default)]
    pub elements: ElementsParam,
    /// replace (default), add, remove or clear.
    #[serde(default)]
    pub mode: SelectMode,
}

/// Parameters of `set_layout`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetLayoutParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// forceDirected, circular, random, spiral, shell, grid or fixed.
    #[serde(rename = "type")]
    pub layout_type: LayoutType,
    /// Layout options: forceDirected {iterations, seed, tolerance}; circular {radius}; random
    /// {seed, size}; spiral/grid {spacing}; shell {shells: \[counts\], spacing}; fixed {x, y, z
    /// property paths}.
    #[serde(default)]
    pub options: Value,
}

/// Parameters of `set_dimension`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetDimensionParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// "2d" or "3d".
    pub dimension: Dimension,
}

/// Parameters of `set_camera`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCameraParams {
    /// Graph source name (optional when only one source is served).
    #[serde(default)]
    pub source: Option<String>,
    /// fitToGraph, topView, sideView, frontView or isometric.
    #[serde(default)]
    pub preset: Option<CameraPreset>,
    /// Camera position [x, y, z] (instead of a preset).
    #[serde(default)]
    pub position: Option<[f64; 3]>,
    /// What the camera looks at [x, y, z] (default: unchanged).
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
    pub ids: Vec<String>,
    /// Or a selector over nodes.
    #[serde(default)]
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
    /// Algorithm namespace (default `schemascope`).
    #[serde(default)]
    pub namespace: Option<String>,
    /// degree, pagerank, betweenness, closeness, components, louvain, clustering, shortestPath
    /// or minimumSpanningTree (see list_algorithms).
    #[serde(rename = "type")]
    pub algorithm_type: String,
    /// Options, e.g. {"weight": "weight", "directed": true} or for shortestPath
    /// {"source": "a", "target": "b"}.
    #[serde(default)]
    pub options: Value,
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
