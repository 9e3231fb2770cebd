//! Who a request comes from, as a write's log records it: the MCP session (its id over
//! streamable HTTP, or stdio) and client, or the HTTP API's caller by address.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// An MCP request's requester: "MCP session 3f2a… (client claude-desktop 1.2, from
/// 127.0.0.1:53412)", or over stdio "MCP over stdio (client …)".
pub(crate) fn of_mcp(context: &RequestContext<RoleServer>) -> String {
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let session = parts
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .map(|id| format!("MCP session {}", printable(id)));
    let over = match (parts, session) {
        (_, Some(session)) => session,
        (Some(_), None) => "MCP over streamable HTTP (no session)".to_string(),
        (None, None) => "MCP over stdio".to_string(),
    };
    let mut details = Vec::new();
    if let Some(client) = context.client_info() {
        details.push(format!("client {} {}", printable(&client.name), printable(&client.version)));
    }
    if let Some(peer) = parts.and_then(|p| p.extensions.get::<ConnectInfo<SocketAddr>>()) {
        details.push(format!("from {}", peer.0));
    }
    if details.is_empty() { over } else { format!("{over} ({})", details.join(", ")) }
}

/// The HTTP API's caller.
pub(crate) fn of_http(route: &str, peer: Option<SocketAddr>) -> String {
    match peer {
        Some(peer) => format!("HTTP {route} from {peer}"),
        None => format!("HTTP {route}"),
    }
}

/// A client-sent text as a log shows it: at most 100 characters, control characters escaped.
fn printable(text: &str) -> String {
    text.chars().take(100).flat_map(char::escape_debug).collect()
}
