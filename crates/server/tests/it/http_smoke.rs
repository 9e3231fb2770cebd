//! The HTTP surface with a raw HTTP/1.1 client: the index text, an MCP `initialize` at `/mcp`,
//! the Host check, and shutdown.

use std::time::Duration;

use schemascope_server::{HttpOptions, bind_http, serve_http_listener};
use schemascope_tools::Services;

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn http_serves_index_and_mcp_then_shuts_down() -> TestResult {
    let registry = Services::new();
    registry.sources.load(&["demo:sensors".parse()?], &schemascope_sources::NoProgress)?;
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server =
        tokio::spawn(serve_http_listener(registry, listener, HttpOptions::default(), async move {
            let _ = stopped.await;
        }));

    let index = exchange(
        addr,
        format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        "endpoint /mcp",
    )
    .await?;
    assert!(index.starts_with("HTTP/1.1 200"), "{index}");
    assert!(index.contains("schemascope MCP server; endpoint /mcp"), "{index}");

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}"#;
    let initialize = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let response = exchange(addr, initialize.clone(), "\"serverInfo\"").await?;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.to_ascii_lowercase().contains("mcp-session-id:"), "{response}");
    assert!(response.contains("\"name\":\"schemascope\""), "{response}");
    assert!(response.contains("\"subscribe\":true"), "{response}");

    // DNS-rebinding protection: a foreign Host is refused.
    let foreign = initialize.replace(&format!("Host: {addr}"), "Host: evil.example");
    let refused = exchange(addr, foreign, "\r\n\r\n").await?;
    assert!(!refused.starts_with("HTTP/1.1 200"), "{refused}");

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server).await???;
    Ok(())
}
