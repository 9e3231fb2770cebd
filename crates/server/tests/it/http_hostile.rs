//! The HTTP server against hostile clients, over real sockets: half-open and trickling
//! connections, more connections than allowed, every spelling of the MCP path against the
//! session bound, repeated JSON-RPC ids in flight, malformed JSON-RPC, params of the wrong type,
//! weak tokens and token guessing.

use std::net::SocketAddr;
use std::time::Duration;

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{ReplayServer, Scripted};
use schemascope_server::{HttpOptions, ServerError, bind_http, serve_http_listener};
use schemascope_tools::Services;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const TOKEN: &str = "hostile-test-5d2c8a1f7e93b4";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}"#;

struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), ServerError>>,
}

async fn start_with(
    registry: schemascope_tools::Services,
    options: HttpOptions,
) -> Result<Running, Box<dyn std::error::Error>> {
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http_listener(registry, listener, options, async move {
        let _ = stopped.await;
    }));
    Ok(Running { addr, stop, server })
}

async fn start(options: HttpOptions) -> Result<Running, Box<dyn std::error::Error>> {
    let registry = Services::new();
    registry.sources.load(&["demo:infrastructure".parse()?], &schemascope_sources::NoProgress)?;
    start_with(registry, options).await
}

impl Running {
    async fn stop(self) -> TestResult {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(20), self.server).await???;
        Ok(())
    }
}

fn post(addr: SocketAddr, path: &str, headers: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn status(response: &str) -> u16 {
    response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    response.split("\r\n\r\n").next()?.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

/// The JSON body of a plain response, or the first `data:` event of an SSE one.
fn json_body(response: &str) -> Value {
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    if let Some(data) =
        body.lines().find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
    {
        return serde_json::from_str(data).unwrap_or(Value::Null);
    }
    serde_json::from_str(body.trim()).unwrap_or(Value::Null)
}

/// Reads until the peer closes the connection (or 20 s pass): what it sent, and whether it closed.
async fn read_until_closed(stream: &mut TcpStream) -> (String, bool) {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .is_ok();
    (String::from_utf8_lossy(&received).into_owned(), closed)
}

async fn open_session(addr: SocketAddr, path: &str) -> Result<String, Box<dyn std::error::Error>> {
    let opened = exchange(addr, post(addr, path, "", INITIALIZE), "\"serverInfo\"").await?;
    assert_eq!(status(&opened), 200, "{opened}");
    let id = header(&opened, "mcp-session-id").ok_or("no session id")?.to_string();
    let initialized = post(
        addr,
        path,
        &session_headers(&id),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(status(&exchange(addr, initialized, "\r\n\r\n").await?), 202);
    Ok(id)
}

fn session_headers(id: &str) -> String {
    format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-11-25\r\n")
}

#[tokio::test]
async fn half_open_trickling_and_idle_connections_are_closed_before_any_token_check() -> TestResult
{
    let options = HttpOptions {
        token: Some(TOKEN.into()),
        header_timeout: Duration::from_millis(200),
        max_connections: 8,
        ..HttpOptions::default()
    };
    let running = start(options).await?;
    let addr = running.addr;
    // Many more half-open connections than the bound: headers begun and never finished, or
    // nothing sent at all.
    let mut held = Vec::new();
    for i in 0..40 {
        let mut stream = TcpStream::connect(addr).await?;
        if i % 2 == 0 {
            stream
                .write_all(
                    format!(
                        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n"
                    )
                    .as_bytes(),
                )
                .await?;
        }
        held.push(stream);
    }
    // A client with the token is still served: half-open connections are closed as their header
    // time runs out, freeing places in the bound.
    let served = exchange(
        addr,
        post(addr, "/v1/tools/list_sources", &format!("Authorization: Bearer {TOKEN}\r\n"), "{}"),
        "infrastructure",
    )
    .await?;
    assert_eq!(status(&served), 200, "{served}");
    // Every held connection is closed by the server, without an answer (it never saw a request).
    for stream in &mut held {
        let (got, closed) = read_until_closed(stream).await;
        assert!(closed, "a half-open connection is never held open");
        assert!(
            got.is_empty() || status(&got) == 408 || status(&got) == 400,
            "no request, no answer: {got}"
        );
    }
    // A client trickling its headers a byte at a time, with pauses, is cut off before it ends.
    let mut trickle = TcpStream::connect(addr).await?;
    let request =
        format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Pad: {}\r\n\r\n", "a".repeat(200));
    let mut cut = false;
    for byte in request.as_bytes() {
        if trickle.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !cut {
        let (got, closed) = read_until_closed(&mut trickle).await;
        assert!(
            closed && !got.contains("endpoint /mcp"),
            "a trickled request must not be served: {got}"
        );
    }
    // An idle keep-alive connection is closed too, after its answer.
    let mut idle = TcpStream::connect(addr).await?;
    idle.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).await?;
    let (got, closed) = read_until_closed(&mut idle).await;
    assert!(closed && got.contains("endpoint /mcp"), "{got}");
    running.stop().await
}

#[tokio::test]
async fn connections_past_the_bound_wait_until_one_closes() -> TestResult {
    // A long header time: the held connections are not closed by it during the test.
    let options = HttpOptions {
        header_timeout: Duration::from_secs(60),
        max_connections: 4,
        ..HttpOptions::default()
    };
    let running = start(options).await?;
    let addr = running.addr;
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(b"GET /healthz HTTP/1.1\r\n").await?;
        held.push(stream);
    }
    // The fifth client is accepted by the kernel but not served while all four places are held.
    let mut waiting = TcpStream::connect(addr).await?;
    waiting
        .write_all(
            format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
    let mut buffer = [0u8; 256];
    let early = tokio::time::timeout(Duration::from_millis(500), waiting.read(&mut buffer)).await;
    assert!(early.is_err(), "served past the bound of 4 connections");
    drop(held.pop());
    let (got, _) = read_until_closed(&mut waiting).await;
    assert!(got.contains("endpoint /mcp"), "served once a place freed: {got}");
    drop(held);
    running.stop().await
}

#[tokio::test]
async fn every_spelling_of_the_mcp_path_passes_the_same_session_bound() -> TestResult {
    let running = start(HttpOptions { max_sessions: 3, ..HttpOptions::default() }).await?;
    let addr = running.addr;
    let paths = [
        "/mcp",
        "/mcp/",
        "/mcp//",
        "/mcp/x",
        "/mcp/x/y",
        "/mcp?x=1",
        "/mcp/?a=b",
        "//mcp",
        "/MCP",
        "/mcp/%2e%2e",
        "/%6dcp",
        "/mcp;x",
    ];
    // Concurrent initializes over every spelling: never more sessions than the bound.
    let attempts = (0..60).map(|i| {
        let path = paths[i % paths.len()];
        tokio::spawn(async move {
            exchange(addr, post(addr, path, "", INITIALIZE), "\r\n\r\n")
                .await
                .map(|r| (path, r))
                .map_err(|e| e.to_string())
        })
    });
    let mut opened = Vec::new();
    for attempt in attempts {
        let (path, response) = attempt.await??;
        match status(&response) {
            200 => opened.push((path, header(&response, "mcp-session-id").map(str::to_string))),
            503 => assert!(
                response.contains("too_many_sessions") && response.contains("maximum of 3"),
                "{path}: {response}"
            ),
            404 | 405 => {}
            other => panic!("{path}: unexpected {other}: {response}"),
        }
    }
    assert_eq!(opened.len(), 3, "exactly the bound: {opened:?}");
    assert!(opened.iter().all(|(_, id)| id.is_some()), "{opened:?}");
    // Sequentially too, once full: each spelling is refused.
    for path in paths {
        let response = exchange(addr, post(addr, path, "", INITIALIZE), "\r\n\r\n").await?;
        assert!(matches!(status(&response), 503 | 404 | 405), "{path}: {response}");
        assert!(header(&response, "mcp-session-id").is_none(), "{path}: {response}");
    }
    running.stop().await
}

#[tokio::test]
async fn malformed_json_rpc_gets_json_rpc_errors_with_status_400_on_every_path() -> TestResult {
    let running = start(HttpOptions::default()).await?;
    let addr = running.addr;
    let cases: [(&str, i64, Value); 11] = [
        ("{not json", -32700, Value::Null),
        ("", -32700, Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        ("[]", -32600, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":{"nested":true},"method":"initialize","params":{}}"#,
            -32600,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":2.5,"method":"ping"}"#, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600, Value::Null),
        (r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#, -32600, json!("a")),
        (r#"{"jsonrpc":"2.0","id":3,"method":["ping"]}"#, -32600, json!(3)),
        ("42", -32600, Value::Null),
    ];
    for path in ["/mcp", "/mcp/", "/mcp/anything"] {
        for (body, code, id) in &cases {
            let response = exchange(addr, post(addr, path, "", body), "}}").await?;
            assert_eq!(status(&response), 400, "{path} {body}: {response}");
            assert!(
                header(&response, "content-type")
                    .is_some_and(|t| t.starts_with("application/json")),
                "{response}"
            );
            let error = json_body(&response);
            assert_eq!(
                (error["jsonrpc"].as_str(), error["error"]["code"].as_i64()),
                (Some("2.0"), Some(*code)),
                "{path} {body}: {response}"
            );
            assert_eq!(&error["id"], id, "{body}");
            let message = error["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with(if *code == -32700 {
                    "parse error"
                } else {
                    "invalid request"
                }),
                "{message}"
            );
        }
    }
    // A wrong content type is still the transport's 415, not a JSON-RPC error.
    let typed = post(addr, "/mcp", "", INITIALIZE)
        .replace("Content-Type: application/json", "Content-Type: text/plain");
    assert_eq!(status(&exchange(addr, typed, "\r\n\r\n").await?), 415);
    running.stop().await
}

fn call(id: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

#[tokio::test]
async fn params_that_do_not_fit_a_known_method_are_invalid_params_and_unknown_methods_not_found()
-> TestResult {
    let running = start(HttpOptions::default()).await?;
    let addr = running.addr;
    let session = open_session(addr, "/mcp").await?;
    let headers = session_headers(&session);
    let cases = [
        (call("1", r#"{"name":"describe_schema","arguments":[1,2]}"#), -32602, "arguments"),
        (call("2", r#"{"name":"describe_schema","arguments":"source=x"}"#), -32602, "arguments"),
        (call("3", r#"{"name":"describe_schema","arguments":7}"#), -32602, "arguments"),
        (call("4", r#"{"arguments":{}}"#), -32602, "name"),
        (call("5", r#"{"name":42}"#), -32602, "name"),
        (call("6", "[]"), -32602, "tools/call"),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":5}}"#.to_string(),
            -32602,
            "uri",
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":"x"}"#.to_string(),
            -32602,
            "prompts/get",
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/explode","params":{}}"#.to_string(),
            -32601,
            "tools/explode",
        ),
    ];
    for (body, code, named) in cases {
        let response = exchange(addr, post(addr, "/mcp", &headers, &body), "\u{0}").await?;
        let answer = json_body(&response);
        let sent: Value = serde_json::from_str(&body)?;
        assert_eq!(answer["id"], sent["id"], "{body}: {response}");
        assert_eq!(answer["error"]["code"].as_i64(), Some(code), "{body}: {response}");
        assert!(
            answer["error"]["message"].as_str().is_some_and(|m| m.contains(named)),
            "{body}: {response}"
        );
    }
    // A well-formed call still works.
    let fine = exchange(
        addr,
        post(addr, "/mcp", &headers, &call("10", r#"{"name":"list_sources","arguments":{}}"#)),
        "\u{0}",
    )
    .await?;
    assert_eq!(json_body(&fine)["id"], 10, "{fine}");
    running.stop().await
}

#[tokio::test]
async fn weak_tokens_are_refused_before_listening() -> TestResult {
    for (token, bind) in [
        ("x", "127.0.0.1:0"),
        ("x", "0.0.0.0:0"),
        ("abcdefghijklmno", "0.0.0.0:0"),
        ("aaaaaaaaaaaaaaaaaaaaaaaa", "0.0.0.0:0"),
    ] {
        let (listener, _) = bind_http(bind.parse()?).await?;
        let outcome = serve_http_listener(
            Services::new(),
            listener,
            HttpOptions { token: Some(token.into()), ..HttpOptions::default() },
            async {},
        )
        .await;
        let error = outcome.err().ok_or("it started")?;
        assert!(matches!(error, ServerError::WeakToken { .. }), "{token}: {error}");
        assert!(error.to_string().contains("at least 16 characters and 64 bits"), "{error}");
    }
    Ok(())
}

/// The JSON body's `name` as a number.
fn number(response: &str, name: &str) -> Option<u64> {
    json_body(response)[name].as_u64()
}

#[tokio::test]
async fn a_wrong_token_counts_only_when_its_address_is_due_and_the_right_one_is_always_served()
-> TestResult {
    let running =
        start(HttpOptions { token: Some(TOKEN.into()), ..HttpOptions::default() }).await?;
    let addr = running.addr;
    let wrong = format!("Authorization: Bearer {}x\r\n", &TOKEN[..TOKEN.len() - 1]);
    let right = format!("Authorization: Bearer {TOKEN}\r\n");
    let list = |headers: &str| post(addr, "/v1/tools/list_sources", headers, "{}");
    // Each checked wrong token doubles the wait before the next check, and says it.
    let mut seen: Vec<(Option<u64>, u64)> = Vec::new();
    for _ in 0..5 {
        // Each after the one before is due (not after the last: the next request is early).
        if let Some((_, backoff)) = seen.last() {
            tokio::time::sleep(Duration::from_millis(backoff + 20)).await;
        }
        let refused = exchange(addr, list(&wrong), "}").await?;
        assert_eq!(status(&refused), 401, "{refused}");
        let backoff = number(&refused, "backoffMs").ok_or("no backoffMs")?;
        assert_eq!(
            header(&refused, "retry-after"),
            Some(backoff.div_ceil(1000).to_string().as_str())
        );
        seen.push((number(&refused, "failedAttempts"), backoff));
    }
    assert_eq!(
        seen,
        [(Some(1), 250), (Some(2), 500), (Some(3), 1000), (Some(4), 2000), (Some(5), 4000)]
    );
    // Sent before the next failure is due (4 s away), a wrong token is answered at once and not
    // counted; the right one from the same address is served at once.
    let served = exchange(addr, list(&right), "infrastructure").await?;
    assert_eq!(status(&served), 200, "{served}");
    let early = exchange(addr, list(&wrong), "}").await?;
    for answer in early.split("HTTP/1.1 ").skip(1) {
        let answer = format!("HTTP/1.1 {answer}");
        assert_eq!(status(&answer), 429, "{answer}");
        assert_eq!(number(&answer, "failedAttempts"), Some(5), "not counted: {answer}");
        assert!(
            header(&answer, "retry-after").is_some()
                && answer.contains("too_many_failed_logins")
                && answer.contains("was not counted"),
            "{answer}"
        );
        assert_eq!(header(&answer, "connection"), Some("close"), "{answer}");
    }
    // No token at all guesses nothing: refused at once, not counted, never throttled.
    let bare = exchange(addr, list(""), "}").await?;
    assert_eq!(status(&bare), 401);
    assert!(json_body(&bare).get("failedAttempts").is_none(), "{bare}");
    // A credential given twice is refused before any check: which one would count?
    let twice = exchange(addr, list(&format!("{wrong}{right}")), "}").await?;
    assert_eq!(status(&twice), 400, "{twice}");
    assert!(twice.contains("duplicate_credentials"), "{twice}");
    // Once due, the right token is served.
    tokio::time::sleep(Duration::from_millis(4100)).await;
    let served = exchange(addr, list(&right), "infrastructure").await?;
    assert_eq!(status(&served), 200, "{served}");
    running.stop().await?;

    // Three wrong values in one request (bearer, cookie, the login address) cost three failures.
    let running =
        start(HttpOptions { token: Some(TOKEN.into()), ..HttpOptions::default() }).await?;
    let addr = running.addr;
    let three = format!(
        "GET /?token=one HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer two\r\nCookie: schemascope_token=three\r\nConnection: close\r\n\r\n"
    );
    let refused = exchange(addr, three, "}").await?;
    assert_eq!(status(&refused), 401, "{refused}");
    assert_eq!(
        (number(&refused, "failedAttempts"), number(&refused, "backoffMs")),
        (Some(3), Some(250 + 500 + 1000)),
        "{refused}"
    );
    running.stop().await
}

/// A connection from `from` (a loopback address of its own, so it is a guesser of its own).
async fn connect_from(
    from: &str,
    addr: SocketAddr,
) -> Result<TcpStream, Box<dyn std::error::Error>> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(format!("{from}:0").parse()?)?;
    Ok(socket.connect(addr).await?)
}

/// One request on a kept-alive connection: its answer, read to the end of its body.
async fn call_on(
    stream: &mut TcpStream,
    request: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    stream.write_all(request.as_bytes()).await?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = header(&text, "content-length").and_then(|l| l.parse::<usize>().ok());
                if length.is_some_and(|n| body.len() >= n) || (length.is_none() && !head.is_empty())
                {
                    return Ok(());
                }
            }
            let n = stream.read(&mut buffer).await?;
            if n == 0 {
                return Ok(());
            }
            received.extend_from_slice(&buffer[..n]);
        }
    })
    .await
    .map_err(|_| "no answer on the kept-alive connection")?
    .map_err(|e: std::io::Error| e)?;
    Ok(String::from_utf8_lossy(&received).into_owned())
}

/// The most tokens one address can have checked in `elapsed`: the first at once, each further
/// one only after the doubling delay of the failures before it (250 ms, 500 ms, … 8 s).
fn checks_allowed(elapsed: Duration) -> u64 {
    let mut checks = 1;
    let mut at = Duration::ZERO;
    loop {
        let doublings = (checks - 1).min(5) as u32;
        at += Duration::from_millis(250 * (1u64 << doublings)).min(Duration::from_secs(8));
        if at > elapsed {
            return checks;
        }
        checks += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_wrong_tokens_never_holds_what_the_right_token_needs() -> TestResult {
    // 16 places, and a long header time: a connection left open holds its place for minutes.
    let options = HttpOptions {
        token: Some(TOKEN.into()),
        max_connections: 16,
        header_timeout: Duration::from_secs(120),
        ..HttpOptions::default()
    };
    let running = start(options).await?;
    let addr = running.addr;
    let right = format!("Authorization: Bearer {TOKEN}\r\n");
    let wrong = |i: usize| format!("Authorization: Bearer wrong-token-{i:04}-0123456789\r\n");
    let list = |headers: &str| post(addr, "/v1/tools/list_sources", headers, "{}");
    let list_kept = |headers: &str| list(headers).replace("Connection: close\r\n", "");

    // 48 guessers from 127.0.0.2 that keep their connections open and never close them: three
    // times the places there are.
    let mut sticky = Vec::new();
    for i in 0..48 {
        let mut stream = connect_from("127.0.0.2", addr).await?;
        stream.write_all(list_kept(&wrong(i)).as_bytes()).await?;
        sticky.push(stream);
    }
    // The right token from another address is served, every time: no place is held by them.
    for _ in 0..20 {
        let served = exchange(addr, list(&right), "infrastructure").await?;
        assert_eq!(status(&served), 200, "{served}");
    }
    // Each guess was answered (checked and refused, or not checked) and its connection closed
    // by the server, although the client kept it open.
    let mut refused = [0usize; 2];
    for stream in &mut sticky {
        let (got, closed) = read_until_closed(stream).await;
        assert!(closed, "a refused guesser's connection is closed by the server: {got}");
        match status(&got) {
            401 => refused[0] += 1,
            429 => refused[1] += 1,
            other => panic!("unexpected {other}: {got}"),
        }
    }
    assert_eq!(refused[0] + refused[1], 48);
    assert!(refused[0] >= 1 && refused[1] >= 1, "checked once, then not checked: {refused:?}");
    drop(sticky);

    // A looping flood: 48 guessers from 127.0.0.3, each a new connection per guess. One client
    // of the same address authenticated before the flood, on a kept-alive connection.
    let mut trusted = connect_from("127.0.0.3", addr).await?;
    let first = call_on(&mut trusted, &list_kept(&right)).await?;
    assert_eq!(status(&first), 200, "{first}");
    let flooding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let started = std::time::Instant::now();
    let guessers: Vec<_> = (0..48)
        .map(|i| {
            let flooding = std::sync::Arc::clone(&flooding);
            let request = list(&wrong(i));
            tokio::spawn(async move {
                let mut answers: Vec<(u16, Option<u64>)> = Vec::new();
                while flooding.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(mut stream) = connect_from("127.0.0.3", addr).await else { continue };
                    if stream.write_all(request.as_bytes()).await.is_err() {
                        continue;
                    }
                    let (got, _) = read_until_closed(&mut stream).await;
                    answers.push((status(&got), number(&got, "failedAttempts")));
                }
                answers
            })
        })
        .collect();
    // While it runs: every right-token call is answered 200, from another address on new
    // connections, from the guessing address on new connections (on loopback the user and the
    // guesser share one), and on the connection that authenticated.
    for _ in 0..20 {
        let served = exchange(addr, list(&right), "infrastructure").await?;
        assert_eq!(status(&served), 200, "{served}");
        let mut shared = connect_from("127.0.0.3", addr).await?;
        let (same, _) = {
            shared.write_all(list(&right).as_bytes()).await?;
            read_until_closed(&mut shared).await
        };
        assert_eq!(status(&same), 200, "{same}");
        let kept = call_on(&mut trusted, &list_kept(&right)).await?;
        assert_eq!(status(&kept), 200, "{kept}");
    }
    flooding.store(false, std::sync::atomic::Ordering::Relaxed);
    let mut answers = Vec::new();
    for guesser in guessers {
        answers.extend(guesser.await?);
    }
    let elapsed = started.elapsed();
    // Every guess was answered, 401 when checked and 429 when not; the checks kept to the
    // doubling schedule of one address, however many connections guessed in parallel.
    assert!(answers.iter().all(|(s, _)| matches!(s, 401 | 429)), "{answers:?}");
    let checked = answers.iter().filter(|(s, _)| *s == 401).count() as u64;
    let most = answers.iter().filter_map(|(_, f)| *f).max().unwrap_or(0);
    assert!(checked >= 1, "the flood was checked at least once");
    assert_eq!(most, checked, "every check counted once, nothing unchecked counted");
    assert!(
        checked <= checks_allowed(elapsed),
        "{checked} tokens checked from one address in {elapsed:?}, more than the doubling delays allow ({})",
        checks_allowed(elapsed)
    );
    assert!(answers.len() as u64 > checked, "guesses past the schedule were not checked");
    running.stop().await
}

/// Waits until the replayed LLM got `n` requests: the `ask` before it is then in flight.
async fn llm_requests(replay: &ReplayServer, n: usize) -> TestResult {
    for _ in 0..1000 {
        if replay.received().len() >= n {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err("the LLM was never asked".into())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_request_id_in_flight_is_answered_on_its_own_stream_and_cancels_map_to_it()
-> TestResult {
    // The LLM never answers in time: an `ask` stays in flight while other requests come.
    let replay = ReplayServer::start(
        (0..12).map(|_| Scripted::Hang(Duration::from_millis(1500))).collect(),
    )?;
    let registry = Services::new();
    let chinook =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/chinook/Chinook_Sqlite.sqlite");
    registry
        .sources
        .load(&[format!("chinook={chinook}").parse()?], &schemascope_sources::NoProgress)?;
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", replay.url()),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(1),
    }));
    let running = start_with(registry, HttpOptions::default()).await?;
    let addr = running.addr;
    let session = open_session(addr, "/mcp").await?;
    let headers = session_headers(&session);
    let ask = |id: &str| {
        call(
            id,
            r#"{"name":"ask","arguments":{"source":"chinook","question":"How many genres are there?"}}"#,
        )
    };

    for id in ["7", "\"same\""] {
        let seen = replay.received().len();
        let request = post(addr, "/mcp", &headers, &ask(id));
        let first = tokio::spawn(async move {
            exchange(addr, request, "\u{0}").await.map_err(|e| e.to_string())
        });
        llm_requests(&replay, seen + 1).await?;
        // The same id again while the first is in flight: answered, with its own result.
        let second = exchange(
            addr,
            post(addr, "/mcp", &headers, &call(id, r#"{"name":"list_sources","arguments":{}}"#)),
            "\u{0}",
        )
        .await?;
        let second = json_body(&second);
        assert_eq!(second["id"].to_string(), id, "{second}");
        assert!(
            second["result"].to_string().contains("chinook")
                && !second["result"].to_string().contains("attempt"),
            "{second}"
        );
        // And the first gets its own answer too, under the id it was sent with.
        let first = first.await??;
        let first = json_body(&first);
        assert_eq!(first["id"].to_string(), id, "{first}");
        assert!(first["result"].is_object(), "{first}");
        assert_ne!(first["result"], second["result"], "each request its own answer");
    }

    // A cancellation names the client's id; it reaches the request in flight under that id,
    // whose stream then ends without an answer.
    let seen = replay.received().len();
    let request = post(addr, "/mcp", &headers, &ask("9"));
    let cancelled =
        tokio::spawn(
            async move { exchange(addr, request, "\u{0}").await.map_err(|e| e.to_string()) },
        );
    llm_requests(&replay, seen + 1).await?;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}"#;
    assert_eq!(
        status(&exchange(addr, post(addr, "/mcp", &headers, cancel), "\r\n\r\n").await?),
        202
    );
    let ended = cancelled.await??;
    assert!(
        !ended.contains("\"result\"") && !ended.contains("\"error\""),
        "a cancelled request gets no answer: {ended}"
    );
    running.stop().await
}
