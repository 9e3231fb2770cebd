//! The MCP tools: each parses its arguments into the tool's parameter struct, runs the tool
//! function off the async runtime and returns the `{success, message, data}` envelope as both text
//! and structured content.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    handler::server::common::{schema_for_empty_input, schema_for_input},
    model::{CallToolResult, JsonObject, ProgressNotificationParam},
    schemars::JsonSchema,
    service::RequestContext,
    tool, tool_router,
};
use schemascope_tools::{
    AskParams, DescribePropertyParams, DescribeSchemaParams, ExecuteQueryParams, FindItemsParams, GetSchemaContextParams, ListSourcesParams,
    QuerySchemaParams, Registry, SampleDataParams, SearchSchemaDocsParams, ToolResult, ValidateQueryParams, ValidateValueParams, descriptions,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::server::SchemascopeServer;

/// The input schema of a tool, generated from its parameter struct.
pub(crate) fn input_schema<P: JsonSchema + 'static>() -> Arc<JsonObject> {
    // Every parameter type is a struct, so this cannot fail; an empty object schema is the
    // harmless fallback.
    schema_for_input::<P>().unwrap_or_else(|_| schema_for_empty_input())
}

/// The output schema shared by every tool: the envelope.
pub(crate) fn envelope_schema() -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "properties": {
            "success": { "type": "boolean", "description": "False when the tool could not do what was asked." },
            "message": { "type": "string", "description": "What happened, or what to change." },
            "data": { "description": "The structured answer, or error details (kind, suggestions)." },
            "affectedNodes": { "type": "array", "items": { "type": "string" }, "description": "Graph tools: ids of the nodes matched or changed (first 1,000)." },
            "affectedEdges": { "type": "array", "items": { "type": "string" }, "description": "Graph tools: ids of the edges matched or changed (first 1,000)." },
            "truncated": {
                "type": "object",
                "description": "Present when the answer was cut to fit the byte cap: maxBytes, originalBytes, and cuts [{path, kept, total, unit}].",
            }
        },
        "required": ["success", "message", "data"]
    });
    match schema {
        Value::Object(object) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The envelope as an MCP tool result: JSON text plus structured content, `isError` = !success.
pub(crate) fn call_tool_result(result: ToolResult) -> CallToolResult {
    let success = result.success;
    let envelope = result.into_value();
    if success { CallToolResult::structured(envelope) } else { CallToolResult::structured_error(envelope) }
}

/// Parses tool arguments, naming the parameter at fault and listing the accepted ones on error.
#[allow(clippy::result_large_err)] // the error is the envelope returned to the client as it is
fn parse_arguments<P: DeserializeOwned>(tool: &str, arguments: JsonObject, schema: &JsonObject) -> Result<P, ToolResult> {
    serde_path_to_error::deserialize::<_, P>(Value::Object(arguments)).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        let parameter = if path != "." && !path.is_empty() { Some(path) } else { backticked(&inner) };
        let accepted: Vec<String> =
            schema.get("properties").and_then(Value::as_object).map(|properties| properties.keys().cloned().collect()).unwrap_or_default();
        let required = schema.get("required").cloned().unwrap_or_else(|| json!([]));
        let message = match &parameter {
            Some(parameter) if !inner.contains(&format!("`{parameter}`")) => {
                format!("Invalid arguments for `{tool}`: parameter `{parameter}`: {inner}.")
            }
            _ => format!("Invalid arguments for `{tool}`: {inner}."),
        };
        ToolResult {
            success: false,
            message: format!("{message} Accepted parameters: {}.", accepted.join(", ")),
            data: json!({
                "error": "invalid_params",
                "parameter": parameter,
                "accepted": accepted,
                "required": required,
            }),
            ..Default::default()
        }
    })
}

/// The first `name` quoted in backticks in a serde message ("missing field `property`").
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let length = message[start..].find('`')?;
    Some(message[start..start + length].to_string())
}

impl SchemascopeServer {
    /// Runs one tool: parse, call on the blocking pool (cancelled when its time is up or the
    /// client cancels, see [`crate::cancel`]), wrap.
    pub(crate) async fn run<P>(
        &self,
        tool: &'static str,
        arguments: JsonObject,
        schema: Arc<JsonObject>,
        call: fn(&Registry, P) -> ToolResult,
    ) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
    {
        let named = arguments.get("source").and_then(serde_json::Value::as_str).map(str::to_string);
        let mut result = match parse_arguments::<P>(tool, arguments, &schema) {
            Ok(params) => {
                let registry = self.registry().clone();
                crate::cancel::run_cancellable(tool, self.tool_timeout(), move || call(&registry, params)).await
            }
            Err(invalid) => invalid,
        };
        // Answers from a live source whose connection is lost say how old their data is.
        self.registry().mark_data_age_of(named.as_deref(), &mut result);
        call_tool_result(result.capped(self.registry().max_result_bytes()))
    }
}

#[tool_router(router = tool_router, vis = "pub(crate)")]
impl SchemascopeServer {
    #[tool(
        name = "list_sources",
        description = descriptions::LIST_SOURCES,
        input_schema = input_schema::<ListSourcesParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_sources(&self, arguments: JsonObject) -> CallToolResult {
        self.run("list_sources", arguments, input_schema::<ListSourcesParams>(), schemascope_tools::list_sources).await
    }

    #[tool(
        name = "describe_schema",
        description = descriptions::DESCRIBE_SCHEMA,
        input_schema = input_schema::<DescribeSchemaParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn describe_schema(&self, arguments: JsonObject) -> CallToolResult {
        self.run("describe_schema", arguments, input_schema::<DescribeSchemaParams>(), schemascope_tools::describe_schema).await
    }

    #[tool(
        name = "sample_data",
        description = descriptions::SAMPLE_DATA,
        input_schema = input_schema::<SampleDataParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn sample_data(&self, arguments: JsonObject) -> CallToolResult {
        self.run("sample_data", arguments, input_schema::<SampleDataParams>(), schemascope_tools::sample_data).await
    }

    #[tool(
        name = "describe_property",
        description = descriptions::DESCRIBE_PROPERTY,
        input_schema = input_schema::<DescribePropertyParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn describe_property(&self, arguments: JsonObject) -> CallToolResult {
        self.run("describe_property", arguments, input_schema::<DescribePropertyParams>(), schemascope_tools::describe_property).await
    }

    #[tool(
        name = "query_schema",
        description = descriptions::QUERY_SCHEMA,
        input_schema = input_schema::<QuerySchemaParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn query_schema(&self, arguments: JsonObject) -> CallToolResult {
        self.run("query_schema", arguments, input_schema::<QuerySchemaParams>(), schemascope_tools::query_schema).await
    }

    #[tool(
        name = "validate_value",
        description = descriptions::VALIDATE_VALUE,
        input_schema = input_schema::<ValidateValueParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn validate_value(&self, arguments: JsonObject) -> CallToolResult {
        self.run("validate_value", arguments, input_schema::<ValidateValueParams>(), schemascope_tools::validate_value).await
    }

    #[tool(
        name = "find_items",
        description = descriptions::FIND_ITEMS,
        input_schema = input_schema::<FindItemsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn find_items(&self, arguments: JsonObject) -> CallToolResult {
        self.run("find_items", arguments, input_schema::<FindItemsParams>(), schemascope_tools::find_items).await
    }

    #[tool(
        name = "search_schema_docs",
        description = descriptions::SEARCH_SCHEMA_DOCS,
        input_schema = input_schema::<SearchSchemaDocsParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_schema_docs(&self, arguments: JsonObject) -> CallToolResult {
        self.run("search_schema_docs", arguments, input_schema::<SearchSchemaDocsParams>(), schemascope_tools::search_schema_docs).await
    }

    #[tool(
        name = "get_schema_context",
        description = descriptions::GET_SCHEMA_CONTEXT,
        input_schema = input_schema::<GetSchemaContextParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_schema_context(&self, arguments: JsonObject) -> CallToolResult {
        self.run("get_schema_context", arguments, input_schema::<GetSchemaContextParams>(), schemascope_tools::get_schema_context).await
    }

    #[tool(
        name = "execute_query",
        description = descriptions::EXECUTE_QUERY,
        input_schema = input_schema::<ExecuteQueryParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn execute_query(&self, arguments: JsonObject) -> CallToolResult {
        self.run("execute_query", arguments, input_schema::<ExecuteQueryParams>(), schemascope_tools::execute_query).await
    }

    #[tool(
        name = "validate_query",
        description = descriptions::VALIDATE_QUERY,
        input_schema = input_schema::<ValidateQueryParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn validate_query(&self, arguments: JsonObject) -> CallToolResult {
        self.run("validate_query", arguments, input_schema::<ValidateQueryParams>(), schemascope_tools::validate_query).await
    }

    #[tool(
        name = "ask",
        description = descriptions::ASK,
        input_schema = input_schema::<AskParams>(),
        output_schema = envelope_schema(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn ask(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        let params = match parse_arguments::<AskParams>("ask", arguments, &input_schema::<AskParams>()) {
            Ok(params) => params,
            Err(invalid) => return call_tool_result(invalid),
        };
        let token = context.meta.get_progress_token();
        // Cancelled when the client sends notifications/cancelled or this call goes away; the
        // run then stops asking the model (no --request-timeout here: each model call has its
        // own timeout, and the pipeline its bounded retries).
        let cancel = schemascope_core::cancel::Cancel::new();
        let _on_drop = crate::cancel::CancelOnDrop(cancel.clone());
        let (mut events, handle) = crate::ask::spawn_ask(self.registry().clone(), params, cancel.clone());
        let mut step = 0.0;
        let mut watching = true;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    step += 1.0;
                    if let Some(token) = &token {
                        // The node's thought is the progress message (seed 001 `current_thought`).
                        let progress = ProgressNotificationParam::new(token.clone(), step).with_message(event.current_thought.clone());
                        let _ = context.peer.notify_progress(progress).await;
                    }
                }
                () = context.ct.cancelled(), if watching => {
                    watching = false;
                    cancel.cancel_because("the client cancelled the request (notifications/cancelled)");
                }
            }
        }
        let result = handle.await.unwrap_or_else(|error| ToolResult {
            success: false,
            message: format!("`ask` failed unexpectedly: {error}"),
            data: json!({ "error": "internal_error" }),
            ..Default::default()
        });
        call_tool_result(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_parameter_is_named() {
        let schema = input_schema::<DescribePropertyParams>();
        let Err(result) = parse_arguments::<DescribePropertyParams>("describe_property", JsonObject::new(), &schema) else {
            panic!("a missing property must be rejected");
        };
        assert!(!result.success);
        assert!(result.message.contains("`property`"), "{}", result.message);
        assert_eq!(result.data["parameter"], "property");
        assert_eq!(result.data["error"], "invalid_params");
    }

    #[test]
    fn wrong_type_names_the_parameter() {
        let schema = input_schema::<FindItemsParams>();
        let mut arguments = JsonObject::new();
        arguments.insert("selector".into(), json!("type == 'x'"));
        arguments.insert("limit".into(), json!("five"));
        let Err(result) = parse_arguments::<FindItemsParams>("find_items", arguments, &schema) else {
            panic!("a string limit must be rejected");
        };
        assert_eq!(result.data["parameter"], "limit");
        assert!(result.message.contains("`limit`"), "{}", result.message);
    }

    #[test]
    fn unknown_parameter_is_named() {
        let schema = input_schema::<FindItemsParams>();
        let mut arguments = JsonObject::new();
        arguments.insert("selector".into(), json!("type == 'x'"));
        arguments.insert("query".into(), json!("x"));
        let Err(result) = parse_arguments::<FindItemsParams>("find_items", arguments, &schema) else {
            panic!("an unknown parameter must be rejected");
        };
        assert_eq!(result.data["parameter"], "query");
    }

    #[test]
    fn envelope_is_text_and_structured() {
        let result = call_tool_result(ToolResult::ok("fine", json!({ "n": 1 })));
        assert_eq!(result.is_error, Some(false));
        let structured = result.structured_content.clone().unwrap_or_default();
        assert_eq!(structured["data"]["n"], 1);
        let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap_or_default(), structured);
    }

    #[test]
    fn tool_names_match() {
        let server = SchemascopeServer::new(Registry::new());
        let _ = &server;
        let router = SchemascopeServer::tool_router() + SchemascopeServer::graph_tool_router();
        let names: Vec<String> = router.list_all().into_iter().map(|tool| tool.name.to_string()).collect();
        for name in crate::TOOL_NAMES {
            assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
        }
        assert_eq!(names.len(), crate::TOOL_NAMES.len());
    }
}
