//! The live graph sessions (`schemascope-graph-session`) as tools: each tool's typed answer or
//! error turned into the envelope, and the sessions kept in step with the sources.

pub use schemascope_graph_session::{
    Caller, GraphSession, GraphSessions, SessionEvent, algorithms, data, hints, layers, layout,
    params::*, reconcile, scene, session, sessions, state, store, style, view,
};

use std::sync::Arc;

use schemascope_graph_session::{self as graph, Answer, GraphSessionError, GraphSources, Outcome};
use schemascope_sources::Source;

use crate::result::{ToolError, ToolResult};
use crate::sources::{ServeHook, Sources};

/// A graph-session answer as the envelope: its affected ids beside `data`.
fn envelope(outcome: Outcome) -> ToolResult {
    match outcome {
        Ok(Answer { success, message, data, affected_nodes, affected_edges }) => {
            let mut result = if success {
                ToolResult::ok(message, data)
            } else {
                ToolResult::failed(message, data)
            };
            for (key, ids) in [("affectedNodes", affected_nodes), ("affectedEdges", affected_edges)]
            {
                if let Some(ids) = ids {
                    result.beside.insert(key.into(), ids.into());
                }
            }
            result
        }
        Err(error) => error.into(),
    }
}

impl From<GraphSessionError> for ToolError {
    fn from(error: GraphSessionError) -> Self {
        match error {
            GraphSessionError::InvalidParams(message) => Self::InvalidParams(message),
            GraphSessionError::Storage(message) => Self::Storage(message),
            GraphSessionError::UnknownSource(message) => Self::UnknownSource(message),
            GraphSessionError::SourceUnavailable(message) => Self::SourceUnavailable(message),
            GraphSessionError::Core(error) => Self::Core(error),
            GraphSessionError::Source(error) => Self::Source(error),
        }
    }
}

impl From<GraphSessionError> for ToolResult {
    fn from(error: GraphSessionError) -> Self {
        ToolError::from(error).into()
    }
}

/// The served sources as the graph sessions reach them.
pub(crate) struct SessionSources(pub(crate) Arc<Sources>);

impl GraphSources for SessionSources {
    fn source(&self, name: Option<&str>) -> Result<Arc<Source>, GraphSessionError> {
        self.0.get(name).map_err(|error| match error {
            ToolError::SourceUnavailable(message) => GraphSessionError::SourceUnavailable(message),
            ToolError::Source(error) => GraphSessionError::Source(error),
            other => GraphSessionError::UnknownSource(other.to_string()),
        })
    }

    fn all(&self) -> Vec<Arc<Source>> {
        self.0.sources()
    }

    fn serve(&self, source: Arc<Source>) {
        self.0.put(source);
    }
}

/// The sessions follow every change of a source (see `Sources::insert`).
impl ServeHook for GraphSessions {
    fn serving(&self, source: Arc<Source>) -> Arc<Source> {
        GraphSessions::serving(self, source)
    }

    fn served(&self, name: &str) {
        GraphSessions::served(self, name);
    }
}

macro_rules! tools {
    ($($tool:ident($params:ty)),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($tool), "` as the envelope.")]
        pub fn $tool(graphs: &GraphSessions, params: $params) -> ToolResult {
            envelope(graph::$tool(graphs, params))
        }
    )*};
}

tools!(
    query_graph(QueryGraphParams),
    find_nodes(FindElementsParams),
    find_edges(FindElementsParams),
    clear_styles(ClearStylesParams),
    describe_styles(DescribeStylesParams),
    describe_selection(DescribeSelectionParams),
    select(SelectParams),
    set_layout(SetLayoutParams),
    set_dimension(SetDimensionParams),
    set_camera(SetCameraParams),
    zoom_to_nodes(ZoomToNodesParams),
    list_algorithms(ListAlgorithmsParams),
    run_algorithm(RunAlgorithmParams),
    report_viewport(ReportViewportParams),
    report_hover(ReportHoverParams),
    arrange_layer(ArrangeLayerParams),
    read_scene(ReadSceneParams),
);

/// `find_and_style_nodes` as the envelope; what it adds is recorded as `caller`'s.
pub fn find_and_style_nodes(
    graphs: &GraphSessions,
    caller: Caller,
    params: StyleElementsParams,
) -> ToolResult {
    envelope(graph::find_and_style_nodes(graphs, caller, params))
}

/// `find_and_style_edges` as the envelope; what it adds is recorded as `caller`'s.
pub fn find_and_style_edges(
    graphs: &GraphSessions,
    caller: Caller,
    params: StyleElementsParams,
) -> ToolResult {
    envelope(graph::find_and_style_edges(graphs, caller, params))
}
