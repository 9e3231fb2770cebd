//! Shared by the HTTP tests: one raw HTTP/1.1 exchange over a real socket.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

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
