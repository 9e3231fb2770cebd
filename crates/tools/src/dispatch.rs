//! Calling a tool by name with JSON arguments, for surfaces that route by name (`POST
//! /v1/tools/{name}`, the web view): the same functions MCP calls.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::caller::Caller;
use crate::graph_session as graph;
use crate::registry::Registry;
use crate::result::ToolResult;

/// Every tool callable by name.
pub const TOOL_NAMES: &[&str] = &[
    "list_sources",
    "describe_schema",
    "sample_data",
    "describe_property",
    "query_schema",
    "validate_value",
    "find_items",
    "search_schema_docs",
    "get_schema_context",
    "execute_query",
    "validate_query",
    "ask",
    "query_graph",
    "find_nodes",
    "find_edges",
    "find_and_style_nodes",
    "find_and_style_edges",
    "clear_styles",
    "describe_styles",
    "describe_selection",
    "select",
    "set_layout",
    "set_dimension",
    "set_camera",
    "zoom_to_nodes",
    "list_algorithms",
    "run_algorithm",
];

fn with<P: DeserializeOwned>(registry: &Registry, tool: &str, arguments: Value, call: impl FnOnce(&Registry, P) -> ToolResult) -> ToolResult {
    let arguments = if arguments.is_null() { json!({}) } else { arguments };
    match serde_path_to_error::deserialize::<_, P>(arguments) {
        Ok(params) => call(registry, params),
        Err(error) => {
            let path = error.path().to_string();
            let at = if path == "." || path.is_empty() { String::new() } else { format!(" (at `{path}`)") };
            ToolResult::failed(
                format!("Invalid arguments for `{tool}`{at}: {}.", error.into_inner()),
                json!({"error": "invalid_params", "parameter": path}),
            )
        }
    }
}

/// Runs the tool called `tool` for `caller` (what it adds is recorded as theirs); an unknown name is a failed result listing the tools. The result
/// is within the registry's byte cap ([`ToolResult::capped`]).
pub fn call_tool(registry: &Registry, caller: Caller, tool: &str, arguments: Value) -> ToolResult {
    let named = arguments.get("source").and_then(Value::as_str).map(str::to_string);
    let mut result = run_tool(registry, caller, tool, arguments);
    registry.mark_data_age_of(named.as_deref(), &mut result);
    result.capped(registry.max_result_bytes())
}

fn run_tool(registry: &Registry, caller: Caller, tool: &str, arguments: Value) -> ToolResult {
    match tool {
        "list_sources" => with(registry, tool, arguments, crate::list_sources),
        "describe_schema" => with(registry, tool, arguments, crate::describe_schema),
        "sample_data" => with(registry, tool, arguments, crate::sample_data),
        "describe_property" => with(registry, tool, arguments, crate::describe_property),
        "query_schema" => with(registry, tool, arguments, crate::query_schema),
        "validate_value" => with(registry, tool, arguments, crate::validate_value),
        "find_items" => with(registry, tool, arguments, crate::find_items),
        "search_schema_docs" => with(registry, tool, arguments, crate::search_schema_docs),
        "get_schema_context" => with(registry, tool, arguments, crate::get_schema_context),
        "execute_query" => with(registry, tool, arguments, crate::execute_query),
        "validate_query" => with(registry, tool, arguments, crate::validate_query),
        "ask" => with(registry, tool, arguments, crate::ask),
        "query_graph" => with(registry, tool, arguments, graph::query_graph),
        "find_nodes" => with(registry, tool, arguments, graph::find_nodes),
        "find_edges" => with(registry, tool, arguments, graph::find_edges),
        "find_and_style_nodes" => with(registry, tool, arguments, |r, p| graph::find_and_style_nodes(r, caller, p)),
        "find_and_style_edges" => with(registry, tool, arguments, |r, p| graph::find_and_style_edges(r, caller, p)),
        "clear_styles" => with(registry, tool, arguments, graph::clear_styles),
        "describe_styles" => with(registry, tool, arguments, graph::describe_styles),
        "describe_selection" => with(registry, tool, arguments, graph::describe_selection),
        "select" => with(registry, tool, arguments, graph::select),
        "set_layout" => with(registry, tool, arguments, graph::set_layout),
        "set_dimension" => with(registry, tool, arguments, graph::set_dimension),
        "set_camera" => with(registry, tool, arguments, graph::set_camera),
        "zoom_to_nodes" => with(registry, tool, arguments, graph::zoom_to_nodes),
        "list_algorithms" => with(registry, tool, arguments, graph::list_algorithms),
        "run_algorithm" => with(registry, tool, arguments, graph::run_algorithm),
        "report_viewport" => with(registry, tool, arguments, graph::report_viewport),
        _ => {
            let hint = schemascope_core::suggest::did_you_mean(tool, TOOL_NAMES.iter().copied());
            ToolResult::failed(format!("Unknown tool `{tool}`.{hint} Tools: {}", TOOL_NAMES.join(", ")), json!({"error": "unknown_tool"}))
        }
    }
}
