//! The graph session's MCP tools (query_graph, find/style, selection, view, layout, algorithms):
//! the same parse → call → envelope path as every other tool. Over MCP the caller is an LLM, so
//! what the style tools add is recorded as `ai`.

use rmcp::{
    model::{CallToolResult, JsonObject},
    tool, tool_router,
};
use schemascope_tools::graph_session::{self as graph, *};
use schemascope_tools::{Caller, descriptions};

use crate::server::SchemascopeServer;
use crate::tools::{envelope_schema, input_schema};

#[tool_router(router = graph_tool_router, vis = "pub(crate)")]
impl SchemascopeServer {
    #[tool(
        name = "query_graph",
        description = descriptions::QUERY_GRAPH,
        input_schema = input_schema::<QueryGraphParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn query_graph(&self, arguments: JsonObject) -> CallToolResult {
        self.run("query_graph", arguments, input_schema::<QueryGraphParams>(), graph::query_graph).await
    }

    #[tool(
        name = "find_nodes",
        description = descriptions::FIND_NODES,
        input_schema = input_schema::<FindElementsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn find_nodes(&self, arguments: JsonObject) -> CallToolResult {
        self.run("find_nodes", arguments, input_schema::<FindElementsParams>(), graph::find_nodes).await
    }

    #[tool(
        name = "find_edges",
        description = descriptions::FIND_EDGES,
        input_schema = input_schema::<FindElementsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn find_edges(&self, arguments: JsonObject) -> CallToolResult {
        self.run("find_edges", arguments, input_schema::<FindElementsParams>(), graph::find_edges).await
    }

    #[tool(
        name = "find_and_style_nodes",
        description = descriptions::FIND_AND_STYLE_NODES,
        input_schema = input_schema::<StyleElementsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn find_and_style_nodes(&self, arguments: JsonObject) -> CallToolResult {
        self.run("find_and_style_nodes", arguments, input_schema::<StyleElementsParams>(), |r, p| graph::find_and_style_nodes(r, Caller::Ai, p)).await
    }

    #[tool(
        name = "find_and_style_edges",
        description = descriptions::FIND_AND_STYLE_EDGES,
        input_schema = input_schema::<StyleElementsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn find_and_style_edges(&self, arguments: JsonObject) -> CallToolResult {
        self.run("find_and_style_edges", arguments, input_schema::<StyleElementsParams>(), |r, p| graph::find_and_style_edges(r, Caller::Ai, p)).await
    }

    #[tool(
        name = "clear_styles",
        description = descriptions::CLEAR_STYLES,
        input_schema = input_schema::<ClearStylesParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn clear_styles(&self, arguments: JsonObject) -> CallToolResult {
        self.run("clear_styles", arguments, input_schema::<ClearStylesParams>(), graph::clear_styles).await
    }

    #[tool(
        name = "describe_styles",
        description = descriptions::DESCRIBE_STYLES,
        input_schema = input_schema::<DescribeStylesParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn describe_styles(&self, arguments: JsonObject) -> CallToolResult {
        self.run("describe_styles", arguments, input_schema::<DescribeStylesParams>(), graph::describe_styles).await
    }

    #[tool(
        name = "describe_selection",
        description = descriptions::DESCRIBE_SELECTION,
        input_schema = input_schema::<DescribeSelectionParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn describe_selection(&self, arguments: JsonObject) -> CallToolResult {
        self.run("describe_selection", arguments, input_schema::<DescribeSelectionParams>(), graph::describe_selection).await
    }

    #[tool(
        name = "select",
        description = descriptions::SELECT,
        input_schema = input_schema::<SelectParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn select(&self, arguments: JsonObject) -> CallToolResult {
        self.run("select", arguments, input_schema::<SelectParams>(), graph::select).await
    }

    #[tool(
        name = "set_layout",
        description = descriptions::SET_LAYOUT,
        input_schema = input_schema::<SetLayoutParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn set_layout(&self, arguments: JsonObject) -> CallToolResult {
        self.run("set_layout", arguments, input_schema::<SetLayoutParams>(), graph::set_layout).await
    }

    #[tool(
        name = "set_dimension",
        description = descriptions::SET_DIMENSION,
        input_schema = input_schema::<SetDimensionParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn set_dimension(&self, arguments: JsonObject) -> CallToolResult {
        self.run("set_dimension", arguments, input_schema::<SetDimensionParams>(), graph::set_dimension).await
    }

    #[tool(
        name = "set_camera",
        description = descriptions::SET_CAMERA,
        input_schema = input_schema::<SetCameraParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn set_camera(&self, arguments: JsonObject) -> CallToolResult {
        self.run("set_camera", arguments, input_schema::<SetCameraParams>(), graph::set_camera).await
    }

    #[tool(
        name = "zoom_to_nodes",
        description = descriptions::ZOOM_TO_NODES,
        input_schema = input_schema::<ZoomToNodesParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn zoom_to_nodes(&self, arguments: JsonObject) -> CallToolResult {
        self.run("zoom_to_nodes", arguments, input_schema::<ZoomToNodesParams>(), graph::zoom_to_nodes).await
    }

    #[tool(
        name = "list_algorithms",
        description = descriptions::LIST_ALGORITHMS,
        input_schema = input_schema::<ListAlgorithmsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_algorithms(&self, arguments: JsonObject) -> CallToolResult {
        self.run("list_algorithms", arguments, input_schema::<ListAlgorithmsParams>(), graph::list_algorithms).await
    }

    #[tool(
        name = "run_algorithm",
        description = descriptions::RUN_ALGORITHM,
        input_schema = input_schema::<RunAlgorithmParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn run_algorithm(&self, arguments: JsonObject) -> CallToolResult {
        self.run("run_algorithm", arguments, input_schema::<RunAlgorithmParams>(), graph::run_algorithm).await
    }
}
