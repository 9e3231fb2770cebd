//! Long calls as MCP tasks (SEP-2663) for a client that declares the extension: a statement
//! that runs for seconds becomes a task the client polls to its result or cancels; a quick call
//! is answered directly; a client without the extension always gets the answer.

use std::time::Duration;

use rmcp::{
    ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
        ClientConfig, Implementation, TaskPayload, TaskStatus,
    },
};
use schemascope_server::SchemascopeServer;

use crate::common::{arguments, poll_task, serve_on_pipe};
use schemascope_tools::Services;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A SQLite statement that counts for a few seconds on any machine.
const SLOW: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000000) SELECT count(*) AS n FROM c";

fn chinook() -> Result<Services, Box<dyn std::error::Error>> {
    let services = Services::new();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let spec = format!("music={}", path.display()).parse()?;
    services.sources.load(&[spec], &schemascope_sources::NoProgress)?;
    Ok(services)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_becomes_a_task_polled_to_its_result_or_cancelled() -> TestResult {
    let client_end = serve_on_pipe(SchemascopeServer::new(chinook()?));
    let client = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::from_build_env(),
    )
    .serve(client_end)
    .await?;

    // A quick call is answered directly.
    let quick = client
        .call_tool_once(CallToolRequestParams::new("execute_query").with_arguments(arguments(
            json!({"source": "music", "query": "SELECT count(*) AS n FROM Artist"}),
        )))
        .await?;
    let CallToolResponse::Complete(quick) = quick else { return Err(format!("{quick:?}").into()) };
    assert_eq!(quick.structured_content.ok_or("structured")?["data"]["rows"], json!([[275]]));

    // A slow one becomes a task whose result is the call's.
    let slow = client
        .call_tool_once(CallToolRequestParams::new("execute_query").with_arguments(arguments(
            json!({"source": "music", "query": SLOW, "timeout_ms": 120000}),
        )))
        .await?;
    let CallToolResponse::Task(created) = slow else { return Err(format!("{slow:?}").into()) };
    let id = created.task.task_id.clone();
    let done =
        poll_task(client.peer(), &id, Duration::from_millis(200), Duration::from_secs(120), |_| {})
            .await?;
    let TaskPayload::Completed { result } = done.payload else {
        return Err(format!("not completed: {done:?}").into());
    };
    let result: rmcp::model::CallToolResult = serde_json::from_value(Value::Object(result))?;
    let envelope = result.structured_content.ok_or("structured")?;
    assert_eq!(envelope["success"], true, "{envelope}");
    assert_eq!(envelope["data"]["rows"], json!([[20000000]]));

    // Another, cancelled: the task ends cancelled.
    let slow = client
        .call_tool_once(CallToolRequestParams::new("execute_query").with_arguments(arguments(
            json!({"source": "music", "query": SLOW, "timeout_ms": 120000}),
        )))
        .await?;
    let CallToolResponse::Task(created) = slow else { return Err(format!("{slow:?}").into()) };
    let id = created.task.task_id.clone();
    client.peer().cancel_task(CancelTaskParams::new(id.clone())).await?;
    let status =
        poll_task(client.peer(), &id, Duration::from_millis(100), Duration::from_secs(30), |_| {})
            .await?
            .status();
    assert_eq!(status, TaskStatus::Cancelled);
    client.cancel().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_the_extension_gets_the_answer() -> TestResult {
    let client_end = serve_on_pipe(SchemascopeServer::new(chinook()?));
    let client = ClientConfig::default().serve(client_end).await?;
    let answer = client
        .call_tool(CallToolRequestParams::new("execute_query").with_arguments(arguments(json!({
            "source": "music",
            "query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c"
        }))))
        .await?;
    assert_eq!(answer.structured_content.ok_or("structured")?["data"]["rows"], json!([[3000000]]));
    client.cancel().await?;
    Ok(())
}
