//! The HTTP guard over a real socket: the token (header and the web view's cookie), the Host
//! and Origin checks, the body limit, the request timeout, the session bound, and the refusal to
//! listen beyond loopback without a token.

use std::net::SocketAddr;
use std::time::Duration;

use schemascope_server::{HttpOptions, ServerError, bind_http, serve_http_listener};
use schemascope_tools::Services;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TOKEN: &str = "guard-test-7f3a9c1e5b";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"guard","version":"1"}}}"#;

struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), ServerError>>,
}

async fn start(options: HttpOptions) -> Result<Running, Box<dyn std::error::Error>> {
    let registry = Services::new();
    registry.sources.load(&["demo:infrastructure".parse()?], &schemascope_sources::NoProgress)?;
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http_listener(registry, listener, options, async move {
        let _ = stopped.await;
    }));
    Ok(Running { addr, stop, server })
}

impl Running {
    async fn stop(self) -> TestResult {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.server).await???;
        Ok(())
    }
}

fn post(addr: SocketAddr, path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn get(addr: SocketAddr, path: &str, headers: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n")
}

fn status(response: &str) -> u16 {
    response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn bearer() -> String {
    format!("Authorization: Bearer {TOKEN}\r\n")
}

#[tokio::test]
async fn the_token_is_required_everywhere_but_healthz() -> TestResult {
    let running =
        start(HttpOptions { token: Some(TOKEN.into()), ..HttpOptions::default() }).await?;
    let addr = running.addr;

    let without = exchange(addr, post(addr, "/mcp", "", INITIALIZE), "\r\n\r\n{").await?;
    assert_eq!(status(&without), 401, "{without}");
    assert!(
        without.contains("www-authenticate: Bearer")
            || without.contains("WWW-Authenticate: Bearer"),
        "{without}"
    );
    assert!(
        without.contains("Authorization: Bearer <token>")
            && without.contains("\"error\":\"unauthorized\""),
        "{without}"
    );

    let wrong = exchange(
        addr,
        post(addr, "/mcp", "Authorization: Bearer guard-test-7f3a9c1e5c\r\n", INITIALIZE),
        "\r\n\r\n{",
    )
    .await?;
    assert_eq!(status(&wrong), 401, "{wrong}");
    // The address's next token is checked after the first failure's delay.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let right = exchange(addr, post(addr, "/mcp", &bearer(), INITIALIZE), "\"serverInfo\"").await?;
    assert_eq!(status(&right), 200, "{right}");

    for path in ["/", "/v1/graph/scene", "/metrics", "/assets/view.js"] {
        let refused = exchange(addr, get(addr, path, ""), "\r\n\r\n").await?;
        assert_eq!(status(&refused), 401, "{path}: {refused}");
    }
    let tool = exchange(
        addr,
        post(addr, "/v1/tools/query_graph", "", r#"{"query":"summary"}"#),
        "\r\n\r\n",
    )
    .await?;
    assert_eq!(status(&tool), 401, "{tool}");
    let tool = exchange(
        addr,
        post(addr, "/v1/tools/query_graph", &bearer(), r#"{"query":"summary"}"#),
        "nodeCount",
    )
    .await?;
    assert_eq!(status(&tool), 200, "{tool}");

    let health = exchange(addr, get(addr, "/healthz", ""), "endpoint /mcp").await?;
    assert_eq!(status(&health), 200, "{health}");
    running.stop().await
}

#[tokio::test]
async fn a_browser_logs_in_once_with_the_token_in_the_address_then_uses_the_cookie() -> TestResult {
    let running =
        start(HttpOptions { token: Some(TOKEN.into()), ..HttpOptions::default() }).await?;
    let addr = running.addr;

    let wrong = exchange(addr, get(addr, "/?token=nope", ""), "\r\n\r\n").await?;
    assert_eq!(status(&wrong), 401, "{wrong}");
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Percent-encoded in the address, as a browser may send it.
    let encoded = TOKEN.replace('-', "%2D");
    let login =
        exchange(addr, get(addr, &format!("/?view=3d&token={encoded}"), ""), "\r\n\r\n").await?;
    assert_eq!(status(&login), 303, "{login}");
    let lower = login.to_ascii_lowercase();
    assert!(lower.contains("location: /\r\n"), "the token leaves the address bar: {login}");
    let cookie_line = lower.lines().find(|l| l.starts_with("set-cookie:")).ok_or("no cookie")?;
    assert!(
        cookie_line.contains("httponly") && cookie_line.contains("samesite=strict"),
        "{cookie_line}"
    );

    let cookie = format!("Cookie: theme=dark; schemascope_token={TOKEN}\r\n");
    let page = exchange(addr, get(addr, "/", &cookie), "</html>").await?;
    assert_eq!(status(&page), 200, "{page}");
    let scene = exchange(addr, get(addr, "/v1/graph/scene", &cookie), "\r\n\r\n").await?;
    assert_eq!(status(&scene), 200, "{scene}");
    running.stop().await
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_with_the_flag_to_allow_them() -> TestResult {
    let options = HttpOptions {
        allowed_origins: vec!["http://localhost:3000".into()],
        allowed_hosts: vec!["graph.internal".into()],
        ..HttpOptions::default()
    };
    let running = start(options).await?;
    let addr = running.addr;

    let foreign =
        post(addr, "/mcp", "", INITIALIZE).replace(&format!("Host: {addr}"), "Host: evil.example");
    let refused = exchange(addr, foreign, "\r\n\r\n{").await?;
    assert_eq!(status(&refused), 403, "{refused}");
    assert!(
        refused.contains("host_not_allowed")
            && refused.contains("evil.example")
            && refused.contains("DNS-rebinding"),
        "{refused}"
    );
    // Every route, not only /mcp.
    let page = exchange(
        addr,
        get(addr, "/", "").replace(&format!("Host: {addr}"), "Host: evil.example:80"),
        "\r\n\r\n",
    )
    .await?;
    assert_eq!(status(&page), 403, "{page}");
    let named = post(addr, "/mcp", "", INITIALIZE)
        .replace(&format!("Host: {addr}"), &format!("Host: graph.internal:{}", addr.port()));
    assert_eq!(status(&exchange(addr, named, "\"serverInfo\"").await?), 200);
    let localhost = post(addr, "/mcp", "", INITIALIZE)
        .replace(&format!("Host: {addr}"), &format!("Host: localhost:{}", addr.port()));
    assert_eq!(status(&exchange(addr, localhost, "\"serverInfo\"").await?), 200);

    let cross_site = exchange(
        addr,
        post(addr, "/mcp", "Origin: https://evil.example\r\n", INITIALIZE),
        "\r\n\r\n{",
    )
    .await?;
    assert_eq!(status(&cross_site), 403, "{cross_site}");
    assert!(
        cross_site.contains("origin_not_allowed")
            && cross_site.contains("--allow-origin https://evil.example"),
        "{cross_site}"
    );
    let null_origin = exchange(
        addr,
        post(addr, "/v1/tools/query_graph", "Origin: null\r\n", r#"{"query":"summary"}"#),
        "\r\n\r\n{",
    )
    .await?;
    assert_eq!(status(&null_origin), 403, "{null_origin}");

    let own = exchange(
        addr,
        post(addr, "/mcp", &format!("Origin: http://{addr}\r\n"), INITIALIZE),
        "\"serverInfo\"",
    )
    .await?;
    assert_eq!(status(&own), 200, "the page's own origin: {own}");
    let allowed = exchange(
        addr,
        post(addr, "/mcp", "Origin: http://localhost:3000\r\n", INITIALIZE),
        "\"serverInfo\"",
    )
    .await?;
    assert_eq!(status(&allowed), 200, "an --allow-origin origin: {allowed}");
    running.stop().await
}

/// `GET /healthz` with exactly these header lines (no Host unless given): a raw request, as no
/// client library would send it.
fn healthz_with(lines: &str) -> String {
    format!("GET /healthz HTTP/1.1\r\n{lines}Connection: close\r\n\r\n")
}

/// The status and the JSON `error` of a raw request's answer.
async fn answer(
    addr: SocketAddr,
    request: String,
) -> Result<(u16, String), Box<dyn std::error::Error>> {
    // Read to the end: the request asks the server to close after its answer.
    let response = exchange(addr, request, "\u{0}").await?;
    let error = response
        .split_once("\r\n\r\n")
        .and_then(|(_, body)| serde_json::from_str::<serde_json::Value>(body).ok())
        .and_then(|body| body["error"].as_str().map(str::to_string))
        .unwrap_or_default();
    Ok((status(&response), error))
}

#[tokio::test]
async fn host_and_origin_are_read_strictly_and_once_as_a_browser_sends_them() -> TestResult {
    let options = HttpOptions {
        allowed_hosts: vec!["graph.internal".into(), "fwd.internal:9000".into()],
        allowed_origins: vec!["https://graph.internal/".into()],
        ..HttpOptions::default()
    };
    let running = start(options).await?;
    let addr = running.addr;
    let port = addr.port();
    let other = if port == 65535 { 1 } else { port + 1 };
    let host = |value: &str| healthz_with(&format!("Host: {value}\r\n"));
    // Not one host: 400, whatever an allowed name is buried in it.
    for value in [
        format!("[::1]evil.com:{port}"),
        format!("[::1]:{port}evil.com"),
        format!("[::1%25lo]:{port}"),
        format!("localhost.:{port}"),
        format!("a@localhost:{port}"),
        "localhost:".to_string(),
        "localhost:http".to_string(),
        "localhost:99999".to_string(),
        "localhost:0".to_string(),
        format!("localhost:0{port}"),
        format!("local%68ost:{port}"),
        format!("local host:{port}"),
        format!("localhost:{port}/x"),
        format!("localhost:{port}:1"),
    ] {
        assert_eq!(answer(addr, host(&value)).await?, (400, "bad_host".into()), "{value}");
    }
    // One host, not served here: 403 (another port is another server for a browser).
    for value in [
        format!("evil.example:{port}"),
        format!("localhost:{other}"),
        format!("127.0.0.1:{other}"),
        format!("[::2]:{port}"),
        format!("[::ffff:127.0.0.1]:{port}"),
        "fwd.internal:9001".to_string(),
        "fwd.internal".to_string(),
    ] {
        assert_eq!(answer(addr, host(&value)).await?, (403, "host_not_allowed".into()), "{value}");
    }
    // Served: the loopback names in any case, with the bound port or none; --allow-host names.
    for value in [
        format!("LOCALHOST:{port}"),
        "localhost".to_string(),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        format!("[0:0:0:0:0:0:0:1]:{port}"),
        "graph.internal:8443".to_string(),
        "Graph.Internal".to_string(),
        "fwd.internal:9000".to_string(),
    ] {
        assert_eq!(answer(addr, host(&value)).await?.0, 200, "{value}");
    }
    // Host twice, in either order, or a request line naming another host: 400.
    for lines in [
        format!("Host: {addr}\r\nHost: evil.example\r\n"),
        format!("Host: evil.example\r\nHost: {addr}\r\n"),
        format!("Host: {addr}\r\nHost: {addr}\r\n"),
    ] {
        assert_eq!(
            answer(addr, healthz_with(&lines)).await?,
            (400, "duplicate_host".into()),
            "{lines}"
        );
    }
    let absolute = format!(
        "GET http://evil.example/healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(answer(addr, absolute).await?, (400, "host_mismatch".into()));

    let origin = |value: &str| healthz_with(&format!("Host: {addr}\r\nOrigin: {value}\r\n"));
    // The own origin is this listener's: http, the request's host, the bound port.
    for value in [
        format!("https://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{other}"),
        "http://127.0.0.1".to_string(),
        format!("http://localhost:{port}"),
        "null".to_string(),
        "http://graph.internal".to_string(),
    ] {
        assert_eq!(
            answer(addr, origin(&value)).await?,
            (403, "origin_not_allowed".into()),
            "{value}"
        );
    }
    for value in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://127.0.0.1:{port}/x"),
        format!("http://a@127.0.0.1:{port}"),
        format!("http://[::1]evil.com:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        assert_eq!(answer(addr, origin(&value)).await?, (400, "bad_origin".into()), "{value}");
    }
    for value in [
        format!("http://127.0.0.1:{port}"),
        format!("HTTP://127.0.0.1:{port}"),
        "https://graph.internal".to_string(),
        "https://graph.internal:443".to_string(),
    ] {
        assert_eq!(answer(addr, origin(&value)).await?.0, 200, "{value}");
    }
    for second in [format!("http://{addr}"), "https://evil.example".to_string()] {
        let lines = format!("Host: {addr}\r\nOrigin: http://{addr}\r\nOrigin: {second}\r\n");
        assert_eq!(
            answer(addr, healthz_with(&lines)).await?,
            (400, "duplicate_origin".into()),
            "{second}"
        );
    }
    running.stop().await?;

    // Entries of --allow-host and --allow-origin that are not hosts or origins stop the start.
    for options in [
        HttpOptions { allowed_hosts: vec!["[::1]evil".into()], ..HttpOptions::default() },
        HttpOptions { allowed_origins: vec!["localhost:3000".into()], ..HttpOptions::default() },
    ] {
        let (listener, _) = bind_http("127.0.0.1:0".parse()?).await?;
        let outcome = serve_http_listener(Services::new(), listener, options, async {}).await;
        assert!(matches!(outcome, Err(ServerError::BadAllowed { .. })), "{outcome:?}");
    }
    Ok(())
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_whether_declared_or_streamed() -> TestResult {
    let running = start(HttpOptions { max_body_bytes: 2048, ..HttpOptions::default() }).await?;
    let addr = running.addr;
    let big = format!(r#"{{"query":"summary","pad":"{}"}}"#, "x".repeat(4096));

    let declared =
        exchange(addr, post(addr, "/v1/tools/query_graph", "", &big), "\r\n\r\n{").await?;
    assert_eq!(status(&declared), 413, "{declared}");
    assert!(
        declared.contains("over the 2048-byte limit") && declared.contains("--max-body-bytes"),
        "{declared}"
    );

    // Chunked: no Content-Length to check up front; the limit applies while reading.
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    );
    let streamed = exchange(addr, chunked, "\r\n\r\n{").await?;
    assert_eq!(status(&streamed), 413, "{streamed}");

    let small = exchange(
        addr,
        post(addr, "/v1/tools/query_graph", "", r#"{"query":"summary"}"#),
        "nodeCount",
    )
    .await?;
    assert_eq!(status(&small), 200, "{small}");
    running.stop().await
}

#[tokio::test]
async fn a_request_that_outlives_its_timeout_gets_a_clear_503() -> TestResult {
    let running = start(HttpOptions {
        request_timeout: Duration::from_millis(300),
        ..HttpOptions::default()
    })
    .await?;
    let addr = running.addr;
    // Declares 100 bytes, sends 10 and stalls: the server must not wait for ever.
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let head = format!(
        "POST /v1/tools/query_graph HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"query\":"
    );
    stream.write_all(head.as_bytes()).await?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    tokio::time::timeout(Duration::from_secs(20), async {
        while !String::from_utf8_lossy(&received).contains("}") {
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buffer[..n]);
        }
        Ok::<_, std::io::Error>(())
    })
    .await??;
    let response = String::from_utf8_lossy(&received);
    assert_eq!(status(&response), 503, "{response}");
    assert!(
        response.contains("request_timeout") && response.contains("--request-timeout"),
        "{response}"
    );
    running.stop().await
}

fn session_id(response: &str) -> Option<String> {
    response.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_string())
    })
}

#[tokio::test]
async fn sessions_past_the_bound_are_refused_until_one_closes() -> TestResult {
    let running = start(HttpOptions { max_sessions: 2, ..HttpOptions::default() }).await?;
    let addr = running.addr;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let opened = exchange(addr, post(addr, "/mcp", "", INITIALIZE), "\"serverInfo\"").await?;
        assert_eq!(status(&opened), 200, "{opened}");
        ids.push(session_id(&opened).ok_or("no session id")?);
    }
    let third = exchange(addr, post(addr, "/mcp", "", INITIALIZE), "\r\n\r\n{").await?;
    assert_eq!(status(&third), 503, "{third}");
    assert!(
        third.contains("too_many_sessions")
            && third.contains("maximum of 2 MCP sessions")
            && third.to_ascii_lowercase().contains("retry-after: 5"),
        "{third}"
    );

    // Requests inside an open session still work; only new sessions are refused.
    let list = post(
        addr,
        "/mcp",
        &format!("Mcp-Session-Id: {}\r\nMcp-Protocol-Version: 2025-11-25\r\n", ids[0]),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status(&exchange(addr, list, "\r\n\r\n").await?), 202);

    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {}\r\nMcp-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n",
        ids[1]
    );
    assert_eq!(status(&exchange(addr, delete, "\r\n\r\n").await?), 204);
    // The session worker closes in the background: give it a moment.
    let mut reopened = 0;
    for _ in 0..50 {
        reopened = status(&exchange(addr, post(addr, "/mcp", "", INITIALIZE), "\r\n\r\n{").await?);
        if reopened == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(reopened, 200, "a slot freed by DELETE is usable again");
    running.stop().await
}

#[tokio::test]
async fn listening_beyond_loopback_without_a_token_is_refused() -> TestResult {
    let registry = Services::new();
    let (listener, _) = bind_http("0.0.0.0:0".parse()?).await?;
    let outcome = serve_http_listener(registry, listener, HttpOptions::default(), async {}).await;
    let error = outcome.err().ok_or("it started")?;
    assert!(matches!(error, ServerError::TokenRequired { .. }), "{error}");
    assert!(
        error.to_string().contains("SCHEMASCOPE_TOKEN") && error.to_string().contains("127.0.0.1"),
        "{error}"
    );

    let registry = Services::new();
    let (listener, _) = bind_http("127.0.0.1:0".parse()?).await?;
    let outcome = serve_http_listener(
        registry,
        listener,
        HttpOptions { token: Some("  ".into()), ..HttpOptions::default() },
        async {},
    )
    .await;
    assert!(matches!(outcome, Err(ServerError::EmptyToken)), "{outcome:?}");
    let spaced = HttpOptions { token: Some("two words".into()), ..HttpOptions::default() };
    assert!(matches!(spaced.check_address("127.0.0.1:0".parse()?), Err(ServerError::BadToken)));
    Ok(())
}

/// A raw `POST` with the given `Content-Type` line (or none), as curl and browsers send them.
fn post_typed(
    addr: SocketAddr,
    path: &str,
    content_type: Option<&str>,
    headers: &str,
    body: &str,
) -> String {
    let content_type = content_type.map(|t| format!("Content-Type: {t}\r\n")).unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{content_type}{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test]
async fn tool_calls_take_json_as_curl_sends_it_and_refuse_what_a_cross_site_form_can_send()
-> TestResult {
    let running = start(HttpOptions::default()).await?;
    let addr = running.addr;
    let body = r#"{"query":"summary"}"#;
    // `curl -d` (form type), no type at all, JSON with a charset, and a +json type: all JSON.
    for content_type in [
        Some("application/x-www-form-urlencoded"),
        None,
        Some("application/json; charset=utf-8"),
        Some("application/vnd.api+json"),
    ] {
        let response = exchange(
            addr,
            post_typed(addr, "/v1/tools/query_graph", content_type, "", body),
            "nodeCount",
        )
        .await?;
        assert_eq!(status(&response), 200, "{content_type:?}: {response}");
        assert!(response.contains("\"success\":true"), "{content_type:?}: {response}");
    }
    // An empty body is no arguments.
    let empty = exchange(
        addr,
        post_typed(
            addr,
            "/v1/tools/list_sources",
            Some("application/x-www-form-urlencoded"),
            "",
            "",
        ),
        "sources",
    )
    .await?;
    assert_eq!(status(&empty), 200, "{empty}");
    // text/plain is what a cross-site form can post raw: refused, saying what to send.
    for content_type in ["text/plain", "multipart/form-data; boundary=x"] {
        let refused = exchange(
            addr,
            post_typed(addr, "/v1/tools/query_graph", Some(content_type), "", body),
            "\r\n\r\n{",
        )
        .await?;
        assert_eq!(status(&refused), 415, "{refused}");
        assert!(
            refused.contains("Content-Type: application/json")
                && refused.contains("unsupported_media_type"),
            "{refused}"
        );
    }
    // A form-typed body from another page is still stopped by the Origin check.
    let foreign = exchange(
        addr,
        post_typed(
            addr,
            "/v1/tools/query_graph",
            Some("application/x-www-form-urlencoded"),
            "Origin: http://evil.example\r\n",
            body,
        ),
        "\r\n\r\n{",
    )
    .await?;
    assert_eq!(status(&foreign), 403, "{foreign}");
    // What a browser form would send under that type is not JSON: a 400 naming the problem.
    let form = exchange(
        addr,
        post_typed(
            addr,
            "/v1/tools/query_graph",
            Some("application/x-www-form-urlencoded"),
            "",
            "query=summary",
        ),
        "\r\n\r\n{",
    )
    .await?;
    assert_eq!(status(&form), 400, "{form}");
    assert!(form.contains("invalid_json") && form.contains("not JSON"), "{form}");
    running.stop().await
}
