//! A local LLM server for tests: it speaks the OpenAI chat-completions and Anthropic messages
//! wire formats over real HTTP and replays scripted answers in order — right ones, wrong ones,
//! invalid JSON, error statuses, hangs — and records every request it got, so retries and error
//! paths are exercised end to end. (No model is reachable here; this is the only fake allowed.)

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use schemascope_core::sync::{joined_in_drop, lock};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Scripted {
    /// The model answers with this text.
    Text(String),
    /// The server answers with this HTTP status and error message.
    Status(u16, String),
    /// The server sends a body that is not JSON.
    Garbage,
    /// The server waits this long before answering (longer than the client's timeout: a hang).
    Hang(Duration),
}

impl Scripted {
    /// The model answers with `value` as JSON text.
    pub fn json(value: Value) -> Self {
        Self::Text(value.to_string())
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    /// The request path (`/v1/chat/completions`, `/v1/messages`).
    pub path: String,
    /// Headers, lowercase names.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

/// A running replay server; stops when dropped.
pub struct ReplayServer {
    server: Arc<tiny_http::Server>,
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ReplayServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayServer").field("url", &self.url).finish_non_exhaustive()
    }
}

impl ReplayServer {
    /// Starts a server on a free loopback port that answers with `script`, in order; past its
    /// end every request gets HTTP 500 "script exhausted".
    pub fn start(script: Vec<Scripted>) -> std::io::Result<Self> {
        let server =
            Arc::new(tiny_http::Server::http("127.0.0.1:0").map_err(std::io::Error::other)?);
        let port = server.server_addr().to_ip().map_or(0, |a| a.port());
        let received = Arc::new(Mutex::new(Vec::new()));
        let (srv, log) = (Arc::clone(&server), Arc::clone(&received));
        let handle = thread::spawn(move || {
            let mut script = script.into_iter();
            for mut request in srv.incoming_requests() {
                let mut text = String::new();
                let _ = request.as_reader().read_to_string(&mut text);
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let path = request.url().to_string();
                let headers = request
                    .headers()
                    .iter()
                    .map(|h| {
                        (
                            h.field.as_str().as_str().to_ascii_lowercase(),
                            h.value.as_str().to_string(),
                        )
                    })
                    .collect();
                lock(&log).push(Received { path: path.clone(), headers, body: body.clone() });
                let anthropic = path.ends_with("/messages");
                let model = body.get("model").cloned().unwrap_or(Value::Null);
                let (status, payload) = match script.next() {
                    Some(Scripted::Text(answer)) => (200, wire_answer(anthropic, &model, &answer)),
                    Some(Scripted::Status(status, message)) => (
                        status,
                        json!({"error": {"message": message, "type": "scripted"}}).to_string(),
                    ),
                    Some(Scripted::Garbage) => (200, "<html>this is not JSON</html>".to_string()),
                    Some(Scripted::Hang(wait)) => {
                        thread::sleep(wait);
                        (200, wire_answer(anthropic, &model, "{}"))
                    }
                    None => (500, json!({"error": {"message": "script exhausted"}}).to_string()),
                };
                let header =
                    tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
                        .ok();
                let mut response =
                    tiny_http::Response::from_string(payload).with_status_code(status);
                if let Some(header) = header {
                    response = response.with_header(header);
                }
                let _ = request.respond(response);
            }
        });
        Ok(Self { server, url: format!("http://127.0.0.1:{port}"), received, handle: Some(handle) })
    }

    /// The base URL: `http://127.0.0.1:PORT` (append `/v1` for an OpenAI-compatible base URL).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.received).clone()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(handle) = self.handle.take() {
            joined_in_drop(handle.join());
        }
    }
}

/// The answer text in the wire format of the API that was called, with token usage counted as
/// whitespace-separated words (enough to check that usage is recorded and summed).
fn wire_answer(anthropic: bool, model: &Value, text: &str) -> String {
    let output = text.split_whitespace().count();
    if anthropic {
        json!({
            "id": "msg_replay", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": output},
        })
    } else {
        json!({
            "id": "chatcmpl-replay", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": output, "total_tokens": 100 + output},
        })
    }
    .to_string()
}

/// A server below HTTP, for answers no HTTP library would send: each connection gets the next
/// scripted bytes as they are (a body shorter than its `Content-Length`, a wrong content type,
/// bytes that are not HTTP at all) and is closed; past the script's end a connection is
/// accepted and never answered (a server that hangs). Stops when dropped.
pub struct RawServer {
    url: String,
    stop: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for RawServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawServer").field("url", &self.url).finish_non_exhaustive()
    }
}

impl RawServer {
    /// Starts a server on a free loopback port that answers connections with `script`, in order.
    pub fn start(script: Vec<Vec<u8>>) -> std::io::Result<Self> {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let mut script = script.into_iter();
            // Connections past the script are kept open, unanswered, until the server stops.
            let mut silent = Vec::new();
            while !stopping.load(Ordering::Relaxed) {
                let Ok((mut stream, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(10));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                match script.next() {
                    Some(bytes) => {
                        // Read the request head and body before answering, so the client is
                        // waiting for the answer (not still sending) when it comes.
                        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                        let mut request = Vec::new();
                        let mut buf = [0u8; 4096];
                        while let Ok(n) = stream.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                            request.extend_from_slice(&buf[..n]);
                            if request_complete(&request) {
                                break;
                            }
                        }
                        let _ = stream.write_all(&bytes);
                        let _ = stream.flush();
                    }
                    None => silent.push(stream),
                }
            }
        });
        Ok(Self { url, stop, handle: Some(handle) })
    }

    /// The base URL: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// True when `request` holds the whole head and as many body bytes as its `Content-Length`.
fn request_complete(request: &[u8]) -> bool {
    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&request[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    request.len() >= end + 4 + length
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            joined_in_drop(handle.join());
        }
    }
}
