//! Tool calls cut short: at the server's tool timeout (`--request-timeout`, which a tool call
//! over `/mcp` otherwise outlived, its work running on for a minute), and when the client sends
//! `notifications/cancelled`. The work itself stops — its own answer says how many of the items
//! it evaluated — instead of running to the end. The MCP wire is spoken by hand here (JSON
//! lines over an in-memory pipe), so the answer to a cancelled request can be read.

use std::time::Duration;

use schemascope_server::SchemascopeServer;
use schemascope_tools::Services;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use crate::common;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Items enough, and heavy enough for the selector below, that evaluating all of them takes far
/// longer than the test waits.
const ITEMS: usize = 40_000;

/// A document set of [`ITEMS`] documents, each with a list the selector sorts.
fn heavy_registry(dir: &tempfile::TempDir) -> Result<Services, Box<dyn std::error::Error>> {
    let path = dir.path().join("heavy.ndjson");
    let line = json!({"list": vec!["abcdefgh"; 200]}).to_string();
    std::fs::write(&path, vec![line; ITEMS].join("\n"))?;
    let registry = Services::new();
    registry.sources.load(
        &[format!("heavy=documents:{}", path.display()).parse()?],
        &schemascope_sources::NoProgress,
    )?;
    Ok(registry)
}

/// A selector off the fast path that prints a hundred copies of each element of the item's list:
/// all the items take about ten minutes in a debug build.
const SLOW_SELECTOR: &str =
    "length(sort_by(list, &to_string([@,@,@,@,@,@,@,@,@,@] | [@,@,@,@,@,@,@,@,@,@]))) > `1`";

struct Wire {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
}

impl Wire {
    async fn start(server: SchemascopeServer) -> Result<Self, Box<dyn std::error::Error>> {
        let (reader, writer) = tokio::io::split(crate::common::serve_on_pipe(server));
        let mut wire = Self { lines: BufReader::new(reader).lines(), writer };
        wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cancel-test", "version": "1"}}}))
            .await?;
        wire.answer(1).await?;
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        Ok(wire)
    }

    async fn send(&mut self, message: Value) -> TestResult {
        self.writer.write_all(format!("{message}\n").as_bytes()).await?;
        Ok(())
    }

    /// The answer to request `id` (other messages are skipped), within a minute.
    async fn answer(&mut self, id: u64) -> Result<Value, Box<dyn std::error::Error>> {
        tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = self.lines.next_line().await? {
                let message: Value = serde_json::from_str(&line)?;
                if message["id"] == id {
                    return Ok(message);
                }
            }
            Err("the server closed the pipe".into())
        })
        .await?
    }

    async fn find(&mut self, id: u64) -> TestResult {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "find_items", "arguments": {"source": "heavy", "selector": SLOW_SELECTOR}}}))
            .await
    }
}

/// How many items the stopped work says it evaluated: "stopped (N of M items evaluated): …".
fn evaluated(envelope: &Value) -> Option<usize> {
    let message = envelope["result"]["structuredContent"]["message"].as_str()?;
    let (count, rest) = message.split_once("stopped (")?.1.split_once(" of ")?;
    rest.starts_with(&format!("{ITEMS} items evaluated")).then(|| count.parse().ok())?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_past_the_timeout_is_answered_and_its_work_stops() -> TestResult {
    let dir = tempfile::tempdir()?;
    let server =
        SchemascopeServer::new(heavy_registry(&dir)?).with_tool_timeout(Duration::from_millis(500));
    let mut wire = Wire::start(server).await?;
    wire.find(2).await?;
    let answer = wire.answer(2).await?;
    let content = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(content["data"]["error"], "cancelled", "{answer}");
    assert!(
        content["message"]
            .as_str()
            .is_some_and(|m| m.contains("the request took longer than 0.5 s (--request-timeout)")),
        "{answer}"
    );
    let done = evaluated(&answer)
        .ok_or_else(|| format!("the work's own answer says how far it got: {answer}"))?;
    assert!(done < ITEMS, "{done} of {ITEMS}");
    Ok(())
}

#[test]
fn a_tool_call_the_client_cancels_stops_its_work() -> TestResult {
    // One blocking thread: a second call can only run once the first call's work has stopped.
    // (rmcp drops the answer to a cancelled request, so the work's stopping is seen this way.)
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let mut wire = Wire::start(SchemascopeServer::new(heavy_registry(&dir)?)).await?;
        wire.find(7).await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "user pressed stop"}})).await?;
        // Uncancelled, the first call's work runs for many minutes; cancelled, it stops at its
        // next check and the blocking thread is free for this one.
        wire.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "list_sources", "arguments": {}}})).await?;
        let answer = wire.answer(8).await?;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        Ok(())
    })
}

fn post(addr: std::net::SocketAddr, path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn over_http_a_call_past_the_request_timeout_stops_its_work_on_v1_and_on_mcp() -> TestResult {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let registry = heavy_registry(&dir)?;
        let (listener, addr) = schemascope_server::bind_http("127.0.0.1:0".parse()?).await?;
        let options = schemascope_server::HttpOptions { request_timeout: Duration::from_millis(500), ..Default::default() };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(schemascope_server::serve_http_listener(registry, listener, options, async move {
            let _ = stopped.await;
        }));
        let find = json!({"source": "heavy", "selector": SLOW_SELECTOR}).to_string();
        // /v1: the guard answers 503 at the timeout, and the work is cancelled with it.
        let response = common::exchange(addr, post(addr, "/v1/tools/find_items", "", &find), "}").await?;
        assert!(response.starts_with("HTTP/1.1 503") && response.contains("request_timeout"), "{response}");
        // The one blocking thread is free again: the work stopped (uncancelled it would run
        // for about ten minutes).
        let listed = common::exchange(addr, post(addr, "/v1/tools/list_sources", "", "{}"), "\"success\":true").await?;
        assert!(listed.contains("\"success\":true"), "{listed}");

        // /mcp: the answer is a stream the guard does not cut; the server stops the call at
        // the same timeout and the work's own answer says how far it got.
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cancel-test", "version": "1"}}});
        let opened = common::exchange(addr, post(addr, "/mcp", "", &initialize.to_string()), "\"serverInfo\"").await?;
        let session = opened
            .lines()
            .find_map(|l| l.split_once(':').filter(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id")).map(|(_, v)| v.trim().to_string()))
            .ok_or("no session id")?;
        let headers = format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        common::exchange(addr, post(addr, "/mcp", &headers, &initialized), "\r\n\r\n").await?;
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "find_items", "arguments": {"source": "heavy", "selector": SLOW_SELECTOR}}});
        let response = common::exchange(addr, post(addr, "/mcp", &headers, &call.to_string()), "\"id\":3").await?;
        assert!(response.contains("the request took longer than 0.5 s"), "{response}");
        assert!(response.contains(&format!(" of {ITEMS} items evaluated")), "{response}");
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(10), server).await???;
        Ok(())
    })
}

/// Each row of this view costs 10 ms to read: profiling it takes far longer than any test.
const SLOW_VIEW_SQL: &str = "SELECT g AS id, g::text AS label FROM generate_series(1, 100000) g WHERE pg_sleep(0.01) IS NOT NULL";

/// A call that needs a table's profile waits for it (computed in the background) at most the
/// served patience, then answers with what is known; a call whose own timeout comes first
/// answers saying what it waited for. When the server goes, the profile's statement is cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_for_a_profile_answers_with_what_is_known_or_stops_at_its_timeout()
-> TestResult {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return Ok(());
    };
    let schema = format!("schemascope_server_wait_{}", std::process::id());
    let psql = |sql: &str| -> TestResult {
        let out = std::process::Command::new("psql")
            .args([uri.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{sql}: {}", String::from_utf8_lossy(&out.stderr)).into())
        }
    };
    psql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; CREATE VIEW {schema}.slow AS {SLOW_VIEW_SQL}"
    ))?;
    // Dropped when the test ends, passed or not: a slow view left behind slows every test that
    // profiles the database.
    struct DropSchema(String, String);
    impl Drop for DropSchema {
        fn drop(&mut self) {
            let drop = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.1);
            let _ = std::process::Command::new("psql")
                .args([self.0.as_str(), "-q", "-c", &drop])
                .output();
        }
    }
    let _drop = DropSchema(uri.clone(), schema.clone());
    // Connecting blocks (the postgres client runs its own runtime): off the test's runtime.
    let spec = format!("db={uri}");
    let registry = tokio::task::spawn_blocking(move || -> Result<Services, String> {
        let registry = Services::new();
        let spec = spec.parse().map_err(|e| format!("{e}"))?;
        registry
            .sources
            .load(&[spec], &schemascope_sources::NoProgress)
            .map_err(|e| e.to_string())?;
        Ok(registry)
    })
    .await??;
    // Two clients of the same sources: one patient, one whose calls time out after 1 s.
    let mut patient = Wire::start(
        SchemascopeServer::new(registry.clone()).with_tool_timeout(Duration::from_secs(6)),
    )
    .await?;
    let mut hurried =
        Wire::start(SchemascopeServer::new(registry).with_tool_timeout(Duration::from_secs(1)))
            .await?;
    let view = format!("{schema}.slow");
    let describe = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "describe_schema", "arguments": {"source": "db", "collection": view}}})
    };
    patient.send(describe(2)).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    hurried.send(describe(3)).await?;
    let waited = hurried.answer(3).await?;
    let message = waited["result"]["structuredContent"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "while waiting for the profile of table `{view}`, which is being computed in the background"
        )) && message.contains("the request took longer than 1 s"),
        "{waited}"
    );
    // The patient call waited the default patience (2 s), well within its own 6 s, and answered
    // with the catalog while the profile goes on.
    let computed = patient.answer(2).await?;
    let answer = &computed["result"]["structuredContent"];
    assert_eq!(answer["success"], true, "{computed}");
    let table = &answer["data"]["collections"][0];
    assert_eq!(table["profile"]["state"], "computing", "{computed}");
    assert_eq!(table["unprofiledColumns"].as_array().map(Vec::len), Some(2), "{computed}");
    assert!(
        answer["message"].as_str().unwrap_or_default().contains("Profiles not ready"),
        "{computed}"
    );
    Ok(())
}
