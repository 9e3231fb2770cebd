//! Shared by the server's tests: a server on one end of an in-memory pipe, tool arguments as a
//! JSON object, and one raw HTTP/1.1 exchange over a real socket.

use std::time::Duration;

use rmcp::model::JsonObject;
use schemascope_server::SchemascopeServer;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::net::TcpStream;

/// Runs `server` on one end of an in-memory pipe and returns the other end, for a client.
pub(crate) fn serve_on_pipe(server: SchemascopeServer) -> DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// `value` as a tool call's arguments (an object; anything else is none).
pub(crate) fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Polls task `id` every `every` until it ends (within `within`), showing each state to `seen`;
/// the ended task.
pub(crate) async fn poll_task(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    id: &str,
    every: Duration,
    within: Duration,
    mut seen: impl FnMut(&rmcp::model::DetailedTask),
) -> Result<rmcp::model::DetailedTask, Box<dyn std::error::Error>> {
    let task = tokio::time::timeout(within, async {
        loop {
            tokio::time::sleep(every).await;
            let info = peer.get_task(rmcp::model::GetTaskParams::new(id.to_string())).await?;
            seen(&info.task);
            if info.task.status().is_terminal() {
                return Ok::<_, rmcp::ServiceError>(info.task);
            }
        }
    })
    .await??;
    Ok(task)
}

/// Sends one request and reads the response until `until` appears or the connection closes.
pub(crate) async fn exchange(
    addr: std::net::SocketAddr,
    request: String,
    until: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request.as_bytes()).await?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    tokio::time::timeout(Duration::from_secs(20), async {
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
