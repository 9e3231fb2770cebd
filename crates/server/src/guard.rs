//! The gate in front of every HTTP route: `Host` and `Origin` checks (DNS-rebinding and
//! cross-site protection), bearer-token authentication (header or the web view's cookie) with a
//! growing delay on failures per client ([`crate::backoff`]), the request body limit and the
//! per-request timeout. The token itself must be strong enough to guard anything.
//!
//! Everything here is policy on the request; the routes behind it never see a request that
//! failed a check. Refusals are plain JSON `{error, message}` with the status that says why.
//! Connections are bounded before this ([`crate::listen`]), MCP requests after it
//! ([`crate::mcp_gate`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::ServerError;
use crate::backoff::FailedLogins;

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
    /// How long a client may take to send a request's headers; an idle keep-alive connection is
    /// closed after as long. Applies before the token is checked.
    pub header_timeout: Duration,
    /// The most HTTP connections open at once; further clients wait until one closes.
    pub max_connections: usize,
}

/// The shortest token accepted.
pub(crate) const MIN_TOKEN_CHARS: usize = 16;
/// The least strength accepted, in bits, estimated as length × log2(distinct characters).
pub(crate) const MIN_TOKEN_BITS: f64 = 64.0;

/// A token's strength in bits by the estimate length × log2(distinct characters): an upper
/// bound for random tokens (`openssl rand -hex 32` gives 256), and low for repetitive ones.
pub(crate) fn token_bits(token: &str) -> f64 {
    let mut distinct: Vec<char> = token.chars().collect();
    let length = distinct.len();
    distinct.sort_unstable();
    distinct.dedup();
    length as f64 * (distinct.len() as f64).log2()
}

impl HttpOptions {
    /// Whether these options may serve on `addr`: beyond loopback only with a token, and any
    /// token given must be at least `MIN_TOKEN_CHARS` characters and `MIN_TOKEN_BITS` bits.
    pub fn check_address(&self, addr: SocketAddr) -> Result<(), ServerError> {
        if let Some(token) = &self.token {
            if token.trim().is_empty() {
                return Err(ServerError::EmptyToken);
            }
            // It travels in a header and a cookie: no spaces, quotes or separators.
            if !token
                .bytes()
                .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'))
            {
                return Err(ServerError::BadToken);
            }
            // Any token, loopback too: it is what keeps other users of the machine out.
            let bits = token_bits(token);
            if token.chars().count() < MIN_TOKEN_CHARS || bits < MIN_TOKEN_BITS {
                return Err(ServerError::WeakToken {
                    chars: token.chars().count(),
                    bits: bits.floor() as u32,
                });
            }
        }
        if !addr.ip().is_loopback() && self.token.is_none() {
            return Err(ServerError::TokenRequired { addr });
        }
        if self.max_connections == 0 || self.header_timeout.is_zero() {
            return Err(ServerError::BadLimit(
                "--max-connections and --header-timeout must be positive".into(),
            ));
        }
        Ok(())
    }

    /// Default largest request body: 4 MiB (a tool call's arguments, not a data upload).
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
    /// Default request timeout.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default bound on MCP sessions.
    pub const DEFAULT_MAX_SESSIONS: usize = 128;
    /// Default time to send a request's headers: generous for a slow client, short enough that
    /// connections held open without a request free up quickly.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default bound on open connections: each MCP session holds one or two (its requests and
    /// its notification stream), and the process stays well under a usual 1,024 descriptors.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
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
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// The checks, with what they need from the running server.
pub(crate) struct Guard {
    options: HttpOptions,
    /// The bound address: its IP is an accepted `Host`.
    local: SocketAddr,
    /// Failed authentications per client, to hold their refusals.
    failed: FailedLogins,
}

impl Guard {
    /// Checks that the options are safe for `local`: a strong token, required off loopback.
    pub(crate) fn new(options: HttpOptions, local: SocketAddr) -> Result<Self, ServerError> {
        options.check_address(local)?;
        Ok(Self { options, local, failed: FailedLogins::default() })
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
        let own = host.is_some_and(|host| {
            origin.eq_ignore_ascii_case(&format!("http://{host}"))
                || origin.eq_ignore_ascii_case(&format!("https://{host}"))
        });
        own || self
            .options
            .allowed_origins
            .iter()
            .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(origin))
    }

    /// The credentials a request presents: a bearer token and the web view's cookie.
    fn presented(headers: &HeaderMap) -> [Option<&str>; 2] {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(str::trim);
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                (name == TOKEN_COOKIE).then_some(value)
            });
        [bearer, cookie]
    }

    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.options.token else { return true };
        Self::presented(headers).into_iter().flatten().any(|given| same_secret(given, token))
    }
}

/// The host name of a `Host` header value: without the port, IPv6 brackets removed.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) { name } else { host }
    })
}

/// Compares in time independent of where the first difference is (no early exit).
fn same_secret(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A refusal: `{error, message}` with `status` (and `WWW-Authenticate` on a 401).
pub(crate) fn refusal(status: StatusCode, error: &str, message: String) -> Response {
    let mut response = (status, Json(json!({"error": error, "message": message}))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"schemascope\""),
        );
    }
    response
}

/// What `GET /?token=…` amounts to.
enum Login {
    /// Not a login request.
    None,
    /// The right token: the cookie and a redirect.
    Accepted(Response),
    /// A wrong token.
    Refused,
}

/// `GET /?token=…`: the browser's way in. A valid token becomes an HttpOnly, same-site cookie
/// and the token leaves the address bar.
fn token_login(guard: &Guard, request: &Request) -> Login {
    let Some(token) = guard.options.token.as_deref() else { return Login::None };
    if request.method() != Method::GET || request.uri().path() != "/" {
        return Login::None;
    }
    let Ok(Query(query)) =
        Query::<std::collections::HashMap<String, String>>::try_from_uri(request.uri())
    else {
        return Login::None;
    };
    let Some(given) = query.get("token") else { return Login::None };
    if !same_secret(given, token) {
        return Login::Refused;
    }
    let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = StatusCode::SEE_OTHER.into_response();
    response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            response.headers_mut().insert(header::SET_COOKIE, value);
            Login::Accepted(response)
        }
        Err(_) => Login::None,
    }
}

/// The 401 for a wrong token, held as long as [`FailedLogins`] says for this client; it says
/// how many failures are counted and this one's backoff.
async fn refuse_login(guard: &Guard, client: Option<IpAddr>, message: &str) -> Response {
    let penalty = guard.failed.failed(client, Instant::now());
    tokio::time::sleep(penalty.wait).await;
    let body = json!({
        "error": "unauthorized", "message": message,
        "failedAttempts": penalty.failures, "backoffMs": penalty.backoff.as_millis() as u64,
    });
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"schemascope\""));
    response
}

/// The middleware: every check, in the order that gives the most useful refusal.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
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
        None => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "missing_host",
                "the request has no Host header".into(),
            );
        }
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !guard.origin_allowed(origin, host.as_deref()) {
            let message = format!(
                "requests from the page at `{origin}` are refused (Origin check, as MCP requires); allow it with --allow-origin {origin}"
            );
            return refusal(StatusCode::FORBIDDEN, "origin_not_allowed", message);
        }
    }
    // Liveness checks stay open: they say nothing about the data.
    if request.uri().path() != "/healthz" && !guard.authenticated(request.headers()) {
        let needs = "this server needs its token: send `Authorization: Bearer <token>` (the token from --token-file or SCHEMASCOPE_TOKEN); in a browser open /?token=<token> once";
        // Taken before any wait: the request itself is not held across one.
        let client = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip());
        let presented = Guard::presented(request.headers()).iter().any(Option::is_some);
        return match token_login(&guard, &request) {
            Login::Accepted(response) => response,
            Login::Refused => {
                refuse_login(&guard, client, "the token in the address is not this server's token")
                    .await
            }
            // A wrong token is a guess and is slowed down; no token at all guesses nothing (a
            // browser's first visit, a client not yet configured) and is refused at once.
            Login::None if presented => {
                let wrong = "the token sent (bearer header or the web view's cookie) is not this server's token; in a browser open /?token=<token> again";
                refuse_login(&guard, client, wrong).await
            }
            Login::None => refusal(StatusCode::UNAUTHORIZED, "unauthorized", needs.into()),
        };
    }
    let timeout = guard.options.request_timeout;
    match tokio::time::timeout(timeout, admit(&guard, request, next)).await {
        Ok(response) => response,
        Err(_) => {
            let message = format!(
                "the request took longer than {} s and was stopped; raise --request-timeout if it is expected to",
                timeout.as_secs_f64()
            );
            refusal(StatusCode::SERVICE_UNAVAILABLE, "request_timeout", message)
        }
    }
}

/// Reads the body within its limit and passes the request on.
async fn admit(guard: &Guard, request: Request, next: Next) -> Response {
    let limit = guard.options.max_body_bytes;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit, declared);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(error) if is_length_limit(&error) => return too_large(limit, None),
        Err(error) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "unreadable_body",
                format!("the request body could not be read: {error}"),
            );
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

fn too_large(limit: usize, declared: Option<u64>) -> Response {
    let size = declared.map_or_else(|| "more".to_string(), |n| format!("{n} bytes"));
    let message = format!(
        "the request body is {size}, over the {limit}-byte limit; send less or raise --max-body-bytes"
    );
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
    fn tokens_must_be_long_and_varied() {
        let at = |token: &str| {
            HttpOptions { token: Some(token.into()), ..HttpOptions::default() }
                .check_address("0.0.0.0:0".parse().expect("addr"))
        };
        for weak in [
            "x",
            "abcdefghijklmno",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "abababababababababababababababab",
            "password12345678",
        ] {
            assert!(matches!(at(weak), Err(ServerError::WeakToken { .. })), "{weak}");
        }
        let error = at("x").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            error.contains("1 character")
                && error.contains("16")
                && error.contains("openssl rand -hex 32"),
            "{error}"
        );
        for strong in ["guard-test-7f3a9c1e5b", "0123456789abcdef", "e2e-4b1f9c0d7a2e6b3f8c5d"] {
            assert!(at(strong).is_ok(), "{strong}");
        }
        assert_eq!(token_bits("0123456789abcdef"), 64.0);
        // Loopback too: the token keeps other users of the machine out.
        let loopback = HttpOptions { token: Some("short".into()), ..HttpOptions::default() };
        assert!(matches!(
            loopback.check_address("127.0.0.1:0".parse().expect("addr")),
            Err(ServerError::WeakToken { .. })
        ));
    }
}
