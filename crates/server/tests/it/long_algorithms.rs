//! A long graph algorithm over MCP: its progress reaches the client as `notifications/progress`
//! while it runs ("betweenness: N of M sources searched"), and a client that takes long calls
//! as tasks gets it as one that runs past the request timeout to its result, instead of failing
//! at the timeout.

use std::time::Duration;

use rmcp::{
    ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
        TaskPayload,
    },
};
use schemascope_server::SchemascopeServer;
use schemascope_tools::Services;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::{arguments, poll_task, serve_on_pipe};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Nodes enough that betweenness (one search per node) takes seconds in a test build — and past
/// the force layout's default limit, so opening the session lays it out at once (a spiral).
const NODES: usize = 6_000;

/// A ring with chords: connected, every node on many shortest paths.
fn graph(dir: &tempfile::TempDir) -> Result<Services, Box<dyn std::error::Error>> {
    let nodes: Vec<Value> = (0..NODES).map(|i| json!({"id": format!("n{i}")})).collect();
    let mut edges = Vec::new();
    for i in 0..NODES {
        for step in [1, 7, 131] {
            edges.push(
                json!({"source": format!("n{i}"), "target": format!("n{}", (i + step) % NODES)}),
            );
        }
    }
    let path = dir.path().join("ring.json");
    std::fs::write(&path, json!({"nodes": nodes, "edges": edges}).to_string())?;
    let services = Services::new();
    services
        .sources
        .load(&[format!("ring={}", path.display()).parse()?], &schemascope_sources::NoProgress)?;
    Ok(services)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn betweenness_reports_its_progress_while_it_runs() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (reader, mut writer) =
        tokio::io::split(serve_on_pipe(SchemascopeServer::new(graph(&dir)?)));
    let mut lines = BufReader::new(reader).lines();
    let mut send = async |message: Value| writer.write_all(format!("{message}\n").as_bytes()).await;
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "progress-test", "version": "1"}}}))
        .await?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_algorithm", "arguments": {"type": "betweenness"}, "_meta": {"progressToken": "run-1"}}}))
        .await?;
    let mut progress = Vec::new();
    let answer = tokio::time::timeout(Duration::from_secs(300), async {
        while let Some(line) = lines.next_line().await? {
            let message: Value = serde_json::from_str(&line)?;
            if message["method"] == "notifications/progress" {
                assert_eq!(message["params"]["progressToken"], "run-1", "{message}");
                progress.push(message["params"].clone());
            } else if message["id"] == 2 {
                return Ok::<_, Box<dyn std::error::Error>>(message);
            }
        }
        Err("the server closed the pipe".into())
    })
    .await??;
    let envelope = &answer["result"]["structuredContent"];
    assert_eq!(envelope["success"], true, "{answer}");
    let lines: Vec<&str> = progress.iter().filter_map(|p| p["message"].as_str()).collect();
    let counted: Vec<usize> = lines
        .iter()
        .filter_map(|line| {
            let rest = line.strip_prefix("betweenness: ")?;
            let (done, rest) = rest.split_once(" of ")?;
            rest.starts_with(&format!("{NODES} sources searched")).then(|| done.parse().ok())?
        })
        .collect();
    assert!(!counted.is_empty(), "no progress line counted the sources: {lines:?}");
    assert!(counted.windows(2).all(|w| w[0] <= w[1]), "the count only grows: {counted:?}");
    assert!(counted.iter().all(|c| *c <= NODES), "{counted:?}");
    // Progress numbers rise with each notification, as MCP asks.
    let numbers: Vec<f64> = progress.iter().filter_map(|p| p["progress"].as_f64()).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_a_task_a_long_algorithm_runs_past_the_request_timeout() -> TestResult {
    let dir = tempfile::tempdir()?;
    // A request timeout the run takes longer than: a request would fail, a task finishes.
    let server =
        SchemascopeServer::new(graph(&dir)?).with_tool_timeout(Duration::from_millis(1500));
    let client = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::from_build_env(),
    )
    .serve(serve_on_pipe(server))
    .await?;
    let started = std::time::Instant::now();
    let call = client
        .call_tool_once(
            CallToolRequestParams::new("run_algorithm")
                .with_arguments(arguments(json!({"type": "betweenness"}))),
        )
        .await?;
    let CallToolResponse::Task(created) = call else { return Err(format!("{call:?}").into()) };
    let id = created.task.task_id.clone();
    let mut messages = Vec::new();
    let done = poll_task(
        client.peer(),
        &id,
        Duration::from_millis(200),
        Duration::from_secs(300),
        |task| {
            messages.extend(task.task.status_message.clone());
        },
    )
    .await?;
    let TaskPayload::Completed { result } = done.payload else {
        return Err(format!("not completed: {done:?}").into());
    };
    let result: rmcp::model::CallToolResult = serde_json::from_value(Value::Object(result))?;
    let envelope = result.structured_content.ok_or("structured")?;
    assert_eq!(envelope["success"], true, "{envelope}");
    assert!(
        started.elapsed() > Duration::from_millis(1500),
        "the run must outlast the request timeout for this test to mean anything"
    );
    assert!(
        messages.iter().any(|m| m.contains("sources searched")),
        "the task's status said how far it got: {messages:?}"
    );
    client.cancel().await?;
    Ok(())
}
