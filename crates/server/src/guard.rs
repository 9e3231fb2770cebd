//! The gate in front of every HTTP route: `Host` and `Origin` checks (DNS-rebinding and
//! cross-site protection), bearer-token authentication (header or the web view's cookie), the
//! request body limit, the per-request timeout and the bound on MCP sessions.
//!
//! Everything here is policy on the request; the routes behind it never see a request that
//! failed a check. Refusals are plain JSON `{error, message}` with the status that says why.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;

use crate::ServerError;

/// The cookie the web view authenticates with after `GET /?token=…`.
const TOKEN_COOKIE: &str = "schemascope_token";

/// How the HTTP surfaces are exposed; [`HttpOptions::default`] is the safe local default.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry (`Authorization: Bearer …` or the web view's
    /// cookie). Required when listening on anything but a loopback address.
    pub token: Option<String>,
    /// Host names accepted in the `Host` header besides the loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in the `Origin` header besides the server's own (`http://<host>`).
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long a request may take until its response starts (for MCP tool calls: until the
    /// result is ready). Streams, once started, are not cut.
    pub request_timeout: Duration,
    /// The most MCP sessions (clients that `initialize`) held at once.
    pub max_sessions: usize,
}

impl HttpOptions {
    /// Whether these options may serve on `addr`: beyond loopback only with a (non-empty) token.
    pub fn check_address(&self, addr: SocketAddr) -> Result<(), ServerError> {
        if let Some(token) = &self.token {
            if token.trim().is_empty() {
                return Err(ServerError::EmptyToken);
            }
            // It travels in a header and a cookie: no spaces, quotes or separators.
            if !token.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\')) {
                return Err(ServerError::BadToken);
            }
        }
        if !addr.ip().is_loopback() && self.token.is_none() {
            return Err(ServerError::TokenRequired { addr });
        }
        Ok(())
    }

    /// Default largest request body: 4 MiB (a tool call's arguments, not a data upload).
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
    /// Default request timeout.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default bound on MCP sessions.
    pub const DEFAULT_MAX_SESSIONS: usize = 128;
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
        }
    }
}

/// The checks, with what they need from the running server.
pub struct Guard {
    options: HttpOptions,
    /// The bound address: its IP is an accepted `Host`.
    local: SocketAddr,
    /// Read for the session count.
    sessions: Arc<LocalSessionManager>,
    /// Held while an `initialize` runs, so that concurrent ones cannot overshoot the bound.
    creating_session: tokio::sync::Mutex<()>,
}

impl Guard {
    /// Checks that the options are safe for `local`: a token is required off loopback.
    pub fn new(options: HttpOptions, local: SocketAddr, sessions: Arc<LocalSessionManager>) -> Result<Self, ServerError> {
        options.check_address(local)?;
        Ok(Self { options, local, sessions, creating_session: tokio::sync::Mutex::new(()) })
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        let ip = self.local.ip();
        // Listening on every interface: the names clients use cannot be known; the token guards.
        ip.is_unspecified()
            || matches!(name, "localhost" | "127.0.0.1" | "::1")
            || name == ip.to_string()
            || self.options.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(name))
    }

    fn origin_allowed(&self, origin: &str, host: Option<&str>) -> bool {
        let origin = origin.trim_end_matches('/');
        let own = host
            .is_some_and(|host| origin.eq_ignore_ascii_case(&format!("http://{host}")) || origin.eq_ignore_ascii_case(&format!("https://{host}")));
        own || self.options.allowed_origins.iter().any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    }

    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.options.token else { return true };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(str::trim);
        let cookie = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == TOKEN_COOKIE).then_some(value)
        });
        [bearer, cookie].into_iter().flatten().any(|given| same_secret(given, token))
    }
}

/// The host name of a `Host` header value: without the port, IPv6 brackets removed.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, port)| if port.chars().all(|c| c.is_ascii_digit()) { name } else { host })
}

/// Compares in time independent of where the first difference is (no early exit).
fn same_secret(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refusal(status: StatusCode, error: &str, message: String) -> Response {
    let mut response = (status, Json(json!({"error": error, "message": message}))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"schemascope\""));
    }
    response
}

/// `GET /?token=…`: the browser's way in. A valid token becomes an HttpOnly, same-site cookie
/// and the token leaves the address bar.
fn token_login(guard: &Guard, request: &Request) -> Option<Response> {
    let token = guard.options.token.as_deref()?;
    if request.method() != Method::GET || request.uri().path() != "/" {
        return None;
    }
    let Query(query) = Query::<std::collections::HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    let given = query.get("token")?;
    if !same_secret(given, token) {
        return Some(refusal(StatusCode::UNAUTHORIZED, "unauthorized", "the token in the address is not this server's token".into()));
    }
    let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = StatusCode::SEE_OTHER.into_response();
    response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_str(&cookie).ok()?);
    Some(response)
}

/// The middleware: every check, in the order that gives the most useful refusal.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_owned);
    match host.as_deref() {
        Some(host) if guard.host_allowed(host) => {}
        Some(host) => {
            let message = format!(
                "the Host `{host}` is not one this server answers to (DNS-rebinding protection); allowed: localhost, 127.0.0.1, ::1, {}{}",
                guard.local.ip(),
                if guard.options.allowed_hosts.is_empty() {
                    "; add names with --allow-host".to_string()
                } else {
                    format!(", {}", guard.options.allowed_hosts.join(", "))
                }
            );
            return refusal(StatusCode::FORBIDDEN, "host_not_allowed", message);
        }
        None => return refusal(StatusCode::BAD_REQUEST, "missing_host", "the request has no Host header".into()),
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !guard.origin_allowed(origin, host.as_deref()) {
            let message =
                format!("requests from the page at `{origin}` are refused (Origin check, as MCP requires); allow it with --allow-origin {origin}");
            return refusal(StatusCode::FORBIDDEN, "origin_not_allowed", message);
        }
    }
    // Liveness checks stay open: they say nothing about the data.
    if request.uri().path() != "/healthz" && !guard.authenticated(request.headers()) {
        if let Some(response) = token_login(&guard, &request) {
            return response;
        }
        let message = "this server needs its token: send `Authorization: Bearer <token>` (the token from --token-file or SCHEMASCOPE_TOKEN); in a browser open /?token=<token> once";
        return refusal(StatusCode::UNAUTHORIZED, "unauthorized", message.into());
    }
    let timeout = guard.options.request_timeout;
    match tokio::time::timeout(timeout, admit(&guard, request, next)).await {
        Ok(response) => response,
        Err(_) => {
            let message =
                format!("the request took longer than {} s and was stopped; raise --request-timeout if it is expected to", timeout.as_secs_f64());
            refusal(StatusCode::SERVICE_UNAVAILABLE, "request_timeout", message)
        }
    }
}

/// Reads the body within its limit, bounds new MCP sessions, and passes the request on.
async fn admit(guard: &Guard, request: Request, next: Next) -> Response {
    let limit = guard.options.max_body_bytes;
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit, declared);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(error) if is_length_limit(&error) => return too_large(limit, None),
        Err(error) => return refusal(StatusCode::BAD_REQUEST, "unreadable_body", format!("the request body could not be read: {error}")),
    };
    let opens_session =
        parts.method == Method::POST && parts.uri.path() == crate::MCP_PATH && !parts.headers.contains_key("mcp-session-id") && is_initialize(&bytes);
    let request = Request::from_parts(parts, Body::from(bytes));
    if !opens_session {
        return next.run(request).await;
    }
    // Serialized so that the count checked is the count when the session is created.
    let _creating = guard.creating_session.lock().await;
    let open = guard.sessions.sessions.read().await.len();
    if open >= guard.options.max_sessions {
        let message = format!(
            "the server already holds its maximum of {} MCP sessions; close one (DELETE /mcp with its Mcp-Session-Id), wait for idle ones to expire, or raise --max-sessions",
            guard.options.max_sessions
        );
        let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, "too_many_sessions", message);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    next.run(request).await
}

fn too_large(limit: usize, declared: Option<u64>) -> Response {
    let size = declared.map_or_else(|| "more".to_string(), |n| format!("{n} bytes"));
    let message = format!("the request body is {size}, over the {limit}-byte limit; send less or raise --max-body-bytes");
    refusal(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message)
}

fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if current.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = current.source();
    }
    false
}

/// Whether a JSON-RPC body is an `initialize` request (the one that opens a session).
fn is_initialize(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Method<'_>>(body).ok().and_then(|m| m.method).is_some_and(|m| m == "initialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_their_port_and_brackets() {
        assert_eq!(host_name("localhost:8750"), "localhost");
        assert_eq!(host_name("[::1]:8750"), "::1");
        assert_eq!(host_name("example.com"), "example.com");
        assert_eq!(host_name("[::1]"), "::1");
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abd", "abc"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "abc"));
    }

    #[test]
    fn only_initialize_opens_a_session() {
        assert!(is_initialize(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#));
        assert!(!is_initialize(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#));
        assert!(!is_initialize(b"not json"));
        assert!(!is_initialize(br#"[{"method":"initialize"}]"#));
    }
}
