//! The gate in front of the MCP service itself, whatever path led there (`/mcp`, `/mcp/`,
//! `/mcp/anything`: the router hands every one of them to the same service, and this layer is
//! part of that service, so no spelling of the path can skip it). It refuses what is not one
//! JSON-RPC message with the proper JSON-RPC error ([`crate::jsonrpc`]) and a new session past
//! `--max-sessions` with a clear 503; the session manager enforces the same bound again
//! ([`crate::sessions`]).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientRequest, JsonRpcMessage};

use crate::guard::refusal;
use crate::mcp_sessions::BoundedMcpSessions;

/// What the gate needs: the sessions (to count them) and the body limit.
pub(crate) struct McpGate {
    sessions: Arc<BoundedMcpSessions>,
    max_body_bytes: usize,
    /// Held while an `initialize` is counted and runs, so the count checked is the count when
    /// its session is created.
    opening: tokio::sync::Mutex<()>,
}

impl McpGate {
    /// A gate over `sessions`, reading bodies up to `max_body_bytes`.
    pub(crate) fn new(sessions: Arc<BoundedMcpSessions>, max_body_bytes: usize) -> Self {
        Self { sessions, max_body_bytes, opening: tokio::sync::Mutex::new(()) }
    }
}

/// Whether the request says its body is JSON (as rmcp decides it; others get rmcp's 415).
fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json")
    })
}

/// The middleware.
pub(crate) async fn check(
    State(gate): State<Arc<McpGate>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !is_json(request.headers()) {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    // The guard in front has read the body within the same limit already; this takes its bytes.
    let bytes = match axum::body::to_bytes(body, gate.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(error) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "unreadable_body",
                format!("the request body could not be read: {error}"),
            );
        }
    };
    let checked = match crate::jsonrpc::check(&bytes) {
        Ok(checked) => checked,
        Err(refused) => return refused.into_response(),
    };
    let opens_session = !parts.headers.contains_key("mcp-session-id")
        && matches!(&checked.message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)));
    parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(checked.bytes.len()));
    let request = Request::from_parts(parts, Body::from(checked.bytes));
    if !opens_session {
        return next.run(request).await;
    }
    let _opening = gate.opening.lock().await;
    let max = gate.sessions.max();
    if gate.sessions.count().await >= max {
        let message = format!(
            "the server already holds its maximum of {max} MCP sessions; close one (DELETE /mcp with its Mcp-Session-Id), wait for idle ones to expire, or raise --max-sessions"
        );
        let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, "too_many_sessions", message);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    next.run(request).await
}
