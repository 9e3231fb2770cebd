//! The HTTP surface with a raw HTTP/1.1 client: the index text, an MCP `initialize` at `/mcp`,
//! the Host check, and shutdown.

use std::time::Duration;

use schemascope_server::{bind_http, serve_http_listener};
use schemascope_tools::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Sends one request and reads the response until `until` appears or the connection closes.
async fn exchange(addr: std::net::SocketAddr, request: String, until: &str) -> Result<String, Box<dyn std::error::Error>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request.as_bytes()).await?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buffer[..n]);
            if String::from_utf8_lossy(&received).contains(until) {
                break;
            }
        }
        Ok::<_, std::io::Error>(())
    })
    .await??;
    Ok(String::from_utf8_lossy(&received).into_owned())
}

#[tokio::test]
async fn http_serves_index_and_mcp_then_shuts_down() -> TestResult {
    let registry = Registry::new();
    registry.load(&["demo:sensors".parse()?], &schemascope_sources::NoProgress)?;
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http_listener(registry, listener, async move {
        let _ = stopped.await;
    }));

    let index = exchange(addr, format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"), "endpoint /mcp").await?;
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
