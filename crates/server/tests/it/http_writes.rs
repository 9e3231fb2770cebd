//! Who asked for a write, as the write log records it, over HTTP: the HTTP API's caller by
//! address, and an MCP client over streamable HTTP by its session id, name and address.

use schemascope_server::{HttpOptions, bind_http, serve_http_listener};
use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::Services;
use serde_json::{Value, json};

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn post(addr: std::net::SocketAddr, path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_over_http_are_logged_with_who_asked() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records =
        vec![FakeRecord::new("config", "server::Config", vec![json!({"port": 8080})]).writable()];
    let fake =
        FakeAimdb::start(&dir.path().join("a.sock"), Protocol::V1, Behaviour::Normal, records)?;
    let registry = Services::new();
    let mut spec: SourceSpec = format!("plant=aimdb:unix://{}", fake.path().display()).parse()?;
    spec.limits.allow_writes = true;
    registry.sources.load(&[spec], &NoProgress)?;
    let log = dir.path().join("writes.ndjson");
    registry.writes.set_file(Some(log.clone()))?;
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server =
        tokio::spawn(serve_http_listener(registry, listener, HttpOptions::default(), async move {
            let _ = stopped.await;
        }));

    let body = r#"{"record_name": "config", "value": {"port": 9090}}"#;
    let answer =
        exchange(addr, post(addr, "/v1/tools/set_record", "", body), "\"success\"").await?;
    assert!(answer.contains("\"success\":true"), "{answer}");

    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"writer","version":"2"}}}"#;
    let response = exchange(addr, post(addr, "/mcp", "", initialize), "\"serverInfo\"").await?;
    let session = response
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l[15..].trim().to_string())
        })
        .ok_or("no session id")?;
    let header = format!("Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    exchange(addr, post(addr, "/mcp", &header, initialized), "\r\n\r\n").await?;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"set_record","arguments":{"record_name":"config","value":{"port":9091}}}}"#;
    let called = exchange(addr, post(addr, "/mcp", &header, call), "\"isError\"").await?;
    assert!(called.contains("\"isError\":false"), "{called}");

    let who: Vec<String> = std::fs::read_to_string(&log)?
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).map(|v| v["who"].as_str().unwrap_or("").to_string())
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(who.len(), 2, "{who:?}");
    assert!(who[0].starts_with("HTTP POST /v1/tools/set_record from 127.0.0.1:"), "{who:?}");
    assert!(
        who[1].starts_with(&format!("MCP session {session} (client writer 2, from 127.0.0.1:")),
        "{who:?}"
    );
    let _ = stop.send(());
    server.await??;
    Ok(())
}
