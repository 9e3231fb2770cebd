//! The gate in front of every HTTP route: `Host` and `Origin` checks (DNS-rebinding and
//! cross-site protection, each header read once and strictly: [`crate::authority`]),
//! bearer-token authentication (header or the web view's cookie) with a growing delay before a
//! client address's next token is checked ([`crate::backoff`]), the request body limit and the
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
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::ServerError;
use crate::authority::{Authority, AuthorityError, Origin, parse_host, parse_origin};
use crate::backoff::{Attempt, Check, FailedLogins, Penalty};
use crate::listen::ConnectionTrust;

/// The cookie the web view authenticates with after `GET /?token=…`.
const TOKEN_COOKIE: &str = "schemascope_token";

/// How the HTTP surfaces are exposed; [`HttpOptions::default`] is the safe local default.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry (`Authorization: Bearer …` or the web view's
    /// cookie). Required when listening on anything but a loopback address.
    pub token: Option<String>,
    /// Hosts accepted in the `Host` header besides the loopback names and the bound address:
    /// `NAME` (any port) or `NAME:PORT` (that port only).
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in the `Origin` header besides the server's own (`http://<host>:<bound
    /// port>`), as `scheme://host[:port]`.
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
    /// The bound address: its IP is an accepted `Host`, its port the one of the own origin.
    local: SocketAddr,
    /// `--allow-host` entries, read: a name with the port it is accepted on (any when `None`).
    allowed_hosts: Vec<Authority>,
    /// `--allow-origin` entries, read.
    allowed_origins: Vec<Origin>,
    /// Failed authentications per client, to hold back their next guesses.
    failed: FailedLogins,
}

/// The names of this machine a browser may use for a loopback listener.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Guard {
    /// Checks that the options are safe for `local`: a strong token, required off loopback, and
    /// `--allow-host` / `--allow-origin` entries that are hosts and origins.
    pub(crate) fn new(options: HttpOptions, local: SocketAddr) -> Result<Self, ServerError> {
        options.check_address(local)?;
        let bad = |flag: &'static str, value: &str, error: AuthorityError| {
            ServerError::BadAllowed { flag, value: value.to_string(), reason: error.to_string() }
        };
        let allowed_hosts = options
            .allowed_hosts
            .iter()
            .map(|h| parse_host(h).map_err(|e| bad("--allow-host", h, e)))
            .collect::<Result<_, _>>()?;
        let allowed_origins = options
            .allowed_origins
            .iter()
            // An operator may write the origin as an address, with a final slash.
            .map(|o| {
                parse_origin(o.strip_suffix('/').unwrap_or(o))
                    .map_err(|e| bad("--allow-origin", o, e))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { options, local, allowed_hosts, allowed_origins, failed: FailedLogins::default() })
    }

    /// Whether this server answers to `host`. Listening on every interface, the names clients
    /// use cannot be known (the token guards). The loopback names and the bound address are
    /// accepted without a port or with the bound one (what a browser sends to this port); an
    /// `--allow-host` name with any port (a port forward or a proxy may change it) unless the
    /// entry names one.
    fn host_allowed(&self, host: &Authority) -> bool {
        if self.local.ip().is_unspecified() {
            return true;
        }
        let own_port = host.port.is_none_or(|port| port == self.local.port());
        let own_name = LOOPBACK_NAMES.iter().any(|name| host.host.is(name))
            || host.host.is(&self.local.ip().to_string());
        (own_name && own_port)
            || self.allowed_hosts.iter().any(|allowed| {
                allowed.host == host.host && allowed.port.is_none_or(|port| host.port == Some(port))
            })
    }

    /// Whether a page at `origin` may call this server: its own origin (this listener's scheme,
    /// `http`, the request's host, the bound port) or an `--allow-origin` one.
    fn origin_allowed(&self, origin: &Origin, host: &Authority) -> bool {
        let own =
            origin.scheme == "http" && origin.host == host.host && origin.port == self.local.port();
        own || self.allowed_origins.contains(origin)
    }

    /// The hosts accepted, for a refusal's message.
    fn hosts_listed(&self) -> String {
        let mut names: Vec<String> = LOOPBACK_NAMES.iter().map(|n| n.to_string()).collect();
        names.push(self.local.ip().to_string());
        names.extend(self.options.allowed_hosts.iter().cloned());
        names.join(", ")
    }
}

/// The credentials a request presents: `Authorization: Bearer …`, the web view's cookie, and on
/// `GET /` the login address's `?token=`.
#[derive(Debug, Default)]
struct Presented {
    bearer: Option<String>,
    cookie: Option<String>,
    login: Option<String>,
}

impl Presented {
    /// Reads them; a request carrying one of them twice is refused (which would count?).
    fn read(request: &Request) -> Result<Self, Refusal> {
        let headers = request.headers();
        let twice = |what: &str| {
            let message = format!(
                "the request carries {what} more than once; send it once (the token from --token-file or SCHEMASCOPE_TOKEN)"
            );
            Refusal(StatusCode::BAD_REQUEST, "duplicate_credentials", message)
        };
        let bearers: Vec<String> = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(|v| v.trim().to_string())
            .collect();
        let cookies: Vec<String> = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                (name == TOKEN_COOKIE).then(|| value.to_string())
            })
            .collect();
        let logins: Vec<String> = if request.method() == Method::GET && request.uri().path() == "/"
        {
            Query::<Vec<(String, String)>>::try_from_uri(request.uri())
                .map(|Query(pairs)| {
                    pairs.into_iter().filter(|(k, _)| k == "token").map(|(_, v)| v).collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        if bearers.len() > 1 {
            return Err(twice("a bearer token"));
        }
        if cookies.len() > 1 {
            return Err(twice(&format!("the {TOKEN_COOKIE} cookie")));
        }
        if logins.len() > 1 {
            return Err(twice("`token=` in the address"));
        }
        Ok(Self {
            bearer: bearers.into_iter().next(),
            cookie: cookies.into_iter().next(),
            login: logins.into_iter().next(),
        })
    }

    fn is_empty(&self) -> bool {
        self.bearer.is_none() && self.cookie.is_none() && self.login.is_none()
    }

    /// Compares each with the token: right if one is, else how many distinct wrong values.
    fn check(&self, token: &str) -> Check {
        let given = [&self.bearer, &self.cookie, &self.login];
        if given.iter().any(|g| g.as_deref().is_some_and(|g| same_secret(g, token))) {
            return Check::Right;
        }
        let mut wrong: Vec<&str> = given.iter().filter_map(|g| g.as_deref()).collect();
        wrong.sort_unstable();
        wrong.dedup();
        Check::Wrong { guesses: wrong.len() as u32 }
    }

    /// Whether the login address holds the right token (the browser then gets the cookie).
    fn logs_in(&self, token: &str) -> bool {
        self.login.as_deref().is_some_and(|given| same_secret(given, token))
    }
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

/// A refusal before it becomes a response (small, so it travels in a `Result`): the status,
/// the `error` code and the message.
struct Refusal(StatusCode, &'static str, String);

impl Refusal {
    fn respond(self) -> Response {
        refusal(self.0, self.1, self.2)
    }
}

/// `GET /?token=…` with the right token: the browser's way in. The token becomes an HttpOnly,
/// same-site cookie and leaves the address bar.
fn login_response(token: &str) -> Option<Response> {
    let cookie = format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = StatusCode::SEE_OTHER.into_response();
    response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
    response.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_str(&cookie).ok()?);
    Some(response)
}

/// Whole seconds for `Retry-After`, rounded up (at least 1: 0 would invite an immediate retry).
fn retry_after_seconds(wait: Duration) -> u64 {
    wait.as_millis().div_ceil(1000).max(1) as u64
}

/// `response` with `Retry-After` set to `wait`.
fn with_retry_after(mut response: Response, wait: Duration) -> Response {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_seconds(wait)));
    response
}

/// `response`, closing its connection after it: a client that did not authenticate keeps no
/// connection open between its attempts, so refusals never hold a place in --max-connections.
fn closing(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The 401 for a checked wrong token, at once: how many failures are counted, and when this
/// address's next token will be checked.
fn refused(penalty: Penalty, message: &str) -> Response {
    let body = json!({
        "error": "unauthorized", "message": message,
        "failedAttempts": penalty.failures, "backoffMs": penalty.backoff.as_millis() as u64,
    });
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"schemascope\""));
    with_retry_after(response, penalty.backoff)
}

/// The 429 for a wrong token sent before its address's next failure is due: not counted.
fn throttled(client: Option<IpAddr>, failures: u32, retry_after: Duration) -> Response {
    let from = client.map_or_else(|| "this client".to_string(), |ip| ip.to_string());
    let message = format!(
        "wrong tokens keep coming from {from} ({failures} counted); this one is wrong too and was not counted — retry after {} ms",
        retry_after.as_millis()
    );
    let body = json!({
        "error": "too_many_failed_logins", "message": message,
        "failedAttempts": failures, "retryAfterMs": retry_after.as_millis() as u64,
    });
    with_retry_after((StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response(), retry_after)
}

/// The token check: `None` lets the request through, `Some` answers it instead.
fn authenticate(guard: &Guard, token: &str, request: &Request) -> Option<Response> {
    let presented = match Presented::read(request) {
        Ok(presented) => presented,
        Err(refused) => return Some(closing(refused.respond())),
    };
    if presented.is_empty() {
        // No token at all guesses nothing (a browser's first visit, a client not yet
        // configured): refused at once, not counted.
        let needs = "this server needs its token: send `Authorization: Bearer <token>` (the token from --token-file or SCHEMASCOPE_TOKEN); in a browser open /?token=<token> once";
        return Some(closing(refusal(StatusCode::UNAUTHORIZED, "unauthorized", needs.into())));
    }
    let client = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.ip());
    let trust = request.extensions().get::<ConnectionTrust>();
    let trusted = trust.is_some_and(ConnectionTrust::trusted);
    match guard.failed.attempt(client, Instant::now(), trusted, || presented.check(token)) {
        Attempt::Accepted => {
            if let Some(trust) = trust {
                trust.set(true);
            }
            presented.logs_in(token).then(|| login_response(token)).flatten()
        }
        Attempt::Refused(penalty) => {
            if let Some(trust) = trust {
                trust.set(false);
            }
            let message = if presented.login.is_some() {
                "the token in the address is not this server's token"
            } else {
                "the token sent (bearer header or the web view's cookie) is not this server's token; in a browser open /?token=<token> again"
            };
            Some(closing(refused(penalty, message)))
        }
        Attempt::Throttled { failures, retry_after } => {
            Some(closing(throttled(client, failures, retry_after)))
        }
    }
}

/// The one `Host` of the request, read strictly ([`crate::authority`]) and allowed.
fn read_host(guard: &Guard, request: &Request) -> Result<Authority, Refusal> {
    let mut values = request.headers().get_all(header::HOST).iter();
    let value = match (values.next(), values.next()) {
        (Some(value), None) => value,
        (None, _) => {
            let message = "the request has no Host header".to_string();
            return Err(Refusal(StatusCode::BAD_REQUEST, "missing_host", message));
        }
        (Some(_), Some(_)) => {
            let message = "the request has more than one Host header; send one".to_string();
            return Err(Refusal(StatusCode::BAD_REQUEST, "duplicate_host", message));
        }
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let host = value.to_str().map_err(|_| AuthorityError::NotAHost).and_then(parse_host).map_err(
        |reason| {
            let message = format!("the Host `{text}` is not read as one host: {reason}");
            Refusal(StatusCode::BAD_REQUEST, "bad_host", message)
        },
    )?;
    // A request line in absolute form names the host too: both must say the same.
    if let Some(authority) = request.uri().authority()
        && parse_host(authority.as_str()).as_ref() != Ok(&host)
    {
        let message = format!(
            "the request line names `{authority}` but the Host header `{text}`; they must be the same"
        );
        return Err(Refusal(StatusCode::BAD_REQUEST, "host_mismatch", message));
    }
    if !guard.host_allowed(&host) {
        let message = format!(
            "the Host `{text}` is not one this server answers to (DNS-rebinding protection); allowed: {} (the loopback names and the bound address on port {} or without a port); add names with --allow-host NAME or NAME:PORT",
            guard.hosts_listed(),
            guard.local.port(),
        );
        return Err(Refusal(StatusCode::FORBIDDEN, "host_not_allowed", message));
    }
    Ok(host)
}

/// The `Origin`, when there is one: at most one, from this server's own origin or an allowed one.
fn check_origin(guard: &Guard, request: &Request, host: &Authority) -> Result<(), Refusal> {
    let mut values = request.headers().get_all(header::ORIGIN).iter();
    let value = match (values.next(), values.next()) {
        (None, _) => return Ok(()),
        (Some(value), None) => value,
        (Some(_), Some(_)) => {
            let message = "the request has more than one Origin header; send one".to_string();
            return Err(Refusal(StatusCode::BAD_REQUEST, "duplicate_origin", message));
        }
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let allowed = match value.to_str() {
        Ok("null") => false,
        Ok(origin) => match parse_origin(origin) {
            Ok(origin) => guard.origin_allowed(&origin, host),
            Err(reason) => {
                let message = format!("the Origin `{text}` is not read as one origin: {reason}");
                return Err(Refusal(StatusCode::BAD_REQUEST, "bad_origin", message));
            }
        },
        Err(_) => {
            let message = format!("the Origin `{text}` is not read as one origin");
            return Err(Refusal(StatusCode::BAD_REQUEST, "bad_origin", message));
        }
    };
    if allowed {
        return Ok(());
    }
    let message = format!(
        "requests from the page at `{text}` are refused (Origin check, as MCP requires; this server's own origin is http://{}:{}); allow it with --allow-origin {text}",
        host.host,
        guard.local.port(),
    );
    Err(Refusal(StatusCode::FORBIDDEN, "origin_not_allowed", message))
}

/// The middleware: every check, in the order that gives the most useful refusal.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let host = match read_host(&guard, &request) {
        Ok(host) => host,
        Err(refused) => return refused.respond(),
    };
    if let Err(refused) = check_origin(&guard, &request, &host) {
        return refused.respond();
    }
    // Liveness checks stay open: they say nothing about the data.
    if request.uri().path() != "/healthz"
        && let Some(token) = guard.options.token.as_deref()
        && let Some(answer) = authenticate(&guard, token, &request)
    {
        return answer;
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
