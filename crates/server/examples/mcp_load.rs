//! Load benchmark: N concurrent MCP clients over streamable HTTP on loopback, each on its own
//! keep-alive connection, calling tools back to back on the demo data and Chinook for a fixed
//! time. Reports calls/s, p50/p99/max latency, errors and peak memory per (workload, mode, N).
//!
//! ```sh
//! cargo run --release -p schemascope-server --example mcp_load -- [--seconds 5] [--clients 1,10,100]
//! ```
//!
//! Workloads: `cached` (profile calls answered from the profile cache: describe_schema,
//! describe_property, query_schema) and `mix` (those plus Chinook SQL validation and execution,
//! schema context for a question, graph queries and node search). Modes: `stateless`
//! (protocol 2026-07-28, no session) and `session` (`initialize`, then `Mcp-Session-Id`).
//! Server and clients share the process (and the machine's cores); the server runs with the
//! same defaults as `schemascope serve --http` (guard, caps).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use schemascope_server::{HttpOptions, bind_http, serve_http_listener};
use schemascope_tools::Services;
use serde_json::{Value, json};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Stateless,
    Session,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Stateless => "stateless",
            Mode::Session => "session",
        }
    }
}

/// The tool calls of a workload, taken round-robin (each client starts at its own offset).
fn workload(name: &str) -> Vec<(&'static str, Value)> {
    let cached = vec![
        ("describe_schema", json!({"source": "infrastructure"})),
        (
            "describe_property",
            json!({"source": "infrastructure", "collection": "nodes", "property": "cpu"}),
        ),
        ("query_schema", json!({"source": "sensors", "record_name": "server::Temperature"})),
        ("describe_schema", json!({"source": "Chinook_Sqlite", "collection": "Track"})),
    ];
    if name == "cached" {
        return cached;
    }
    let mut mix = cached;
    mix.extend([
        ("validate_query", json!({"source": "Chinook_Sqlite", "query": "SELECT Name, Milliseconds FROM Track WHERE GenreId = 1 LIMIT 5"})),
        ("execute_query", json!({"source": "Chinook_Sqlite", "query": "SELECT a.Title, count(*) FROM Album a JOIN Track t ON t.AlbumId = a.AlbumId GROUP BY a.AlbumId ORDER BY 2 DESC LIMIT 5"})),
        ("get_schema_context", json!({"source": "Chinook_Sqlite", "question": "Which artists have the most albums?"})),
        ("query_graph", json!({"source": "infrastructure", "query": "summary"})),
        ("find_nodes", json!({"source": "infrastructure", "selector": "type == 'database'"})),
    ]);
    mix
}

struct Client {
    sender: http1::SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    session: Option<String>,
    next_id: u64,
}

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

impl Client {
    async fn connect(addr: SocketAddr, mode: Mode) -> Result<Self, BoxError> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let mut client = Self { sender, addr, session: None, next_id: 1 };
        if mode == Mode::Session {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "mcp_load", "version": "1"}}});
            let (session, _) = client.post(&init, LEGACY).await?;
            client.session = Some(session.ok_or("no Mcp-Session-Id from initialize")?);
            client
                .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), LEGACY)
                .await?;
        }
        Ok(client)
    }

    async fn post(
        &mut self,
        message: &Value,
        version: &str,
    ) -> Result<(Option<String>, Bytes), BoxError> {
        let mut request = Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        // 2026-07-28 repeats the method and tool name in headers (for routing without the body).
        if let Some(method) = message["method"].as_str() {
            request = request.header("mcp-method", method);
        }
        if let Some(name) = message["params"]["name"].as_str() {
            request = request.header("mcp-name", name);
        }
        self.sender.ready().await?;
        let response = self
            .sender
            .send_request(request.body(Full::new(Bytes::from(serde_json::to_vec(message)?)))?)
            .await?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)).into());
        }
        Ok((session, body))
    }

    /// One `tools/call`; an error unless the answer is a successful tool result.
    async fn call(&mut self, mode: Mode, tool: &str, arguments: &Value) -> Result<(), BoxError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = json!({"name": tool, "arguments": arguments});
        let version = match mode {
            Mode::Session => LEGACY,
            Mode::Stateless => {
                params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": {"name": "mcp_load", "version": "1"}});
                MODERN
            }
        };
        let (_, body) = self
            .post(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
                version,
            )
            .await?;
        let text = std::str::from_utf8(&body)?;
        // An SSE body carries the answer on a `data:` line; a JSON body is the answer itself.
        let answer = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|l| l.contains("\"jsonrpc\""))
            .unwrap_or(text.trim());
        let answer: Value = serde_json::from_str(answer)?;
        if answer["id"] != json!(id) || answer["result"]["isError"] != json!(false) {
            return Err(format!("{tool}: {:.300}", answer.to_string()).into());
        }
        Ok(())
    }
}

struct Outcome {
    latencies_us: Vec<u64>,
    errors: usize,
    first_error: Option<String>,
}

async fn run_client(
    addr: SocketAddr,
    mode: Mode,
    calls: Arc<[(&'static str, Value)]>,
    offset: usize,
    until: Instant,
    warmup: Instant,
) -> Outcome {
    let mut outcome = Outcome { latencies_us: Vec::new(), errors: 0, first_error: None };
    let mut client = match Client::connect(addr, mode).await {
        Ok(client) => client,
        Err(error) => {
            outcome.errors += 1;
            outcome.first_error = Some(format!("connect: {error}"));
            return outcome;
        }
    };
    let mut i = offset;
    while Instant::now() < until {
        let (tool, arguments) = &calls[i % calls.len()];
        i += 1;
        let start = Instant::now();
        let result = client.call(mode, tool, arguments).await;
        let elapsed = start.elapsed();
        if start < warmup {
            continue;
        }
        match result {
            Ok(()) => outcome.latencies_us.push(elapsed.as_micros() as u64),
            Err(error) => {
                outcome.errors += 1;
                outcome.first_error.get_or_insert_with(|| error.to_string());
            }
        }
    }
    outcome
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)] as f64 / 1000.0
}

/// Peak resident memory of this process (server and clients), in MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Seconds per case, client counts, workloads and modes.
type Plan = (f64, Vec<usize>, Vec<String>, Vec<Mode>);

fn parse_args() -> Result<Plan, BoxError> {
    let mut seconds = 5.0;
    let mut clients = vec![1, 10, 100];
    let mut workloads = vec!["cached".to_string(), "mix".to_string()];
    let mut modes = vec![Mode::Stateless, Mode::Session];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--seconds" => seconds = value()?.parse()?,
            "--clients" => {
                clients = value()?.split(',').map(str::parse).collect::<Result<_, _>>()?
            }
            "--workloads" => workloads = value()?.split(',').map(str::to_owned).collect(),
            "--modes" => {
                modes = value()?
                    .split(',')
                    .map(|m| match m {
                        "stateless" => Ok(Mode::Stateless),
                        "session" => Ok(Mode::Session),
                        other => Err(format!("unknown mode {other}: stateless or session")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "-h" | "--help" => {
                println!(
                    "mcp_load [--seconds S] [--clients 1,10,100] [--workloads cached,mix] [--modes stateless,session]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other} (see --help)").into()),
        }
    }
    Ok((seconds, clients, workloads, modes))
}

fn main() -> Result<(), BoxError> {
    let (seconds, clients, workloads, modes) = parse_args()?;
    let chinook =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let services = Services::new();
    let specs = [
        "demo:infrastructure".to_string(),
        "demo:sensors".to_string(),
        format!("sqlite:{}", chinook.display()),
    ];
    services.sources.load(
        &specs.iter().map(|s| s.parse()).collect::<Result<Vec<_>, _>>()?,
        &schemascope_sources::NoProgress,
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
        let options = HttpOptions { max_sessions: 1024, ..HttpOptions::default() };
        tokio::spawn(serve_http_listener(services, listener, options, std::future::pending()));
        println!("workload  mode       clients   calls/s   p50 ms   p99 ms   max ms  errors  peak RSS MiB");
        for workload_name in &workloads {
            let calls: Arc<[(&'static str, Value)]> = workload(workload_name).into();
            // Fill every cache once, so `cached` measures cached answers.
            let mut warm = Client::connect(addr, Mode::Stateless).await?;
            for (tool, arguments) in calls.iter() {
                warm.call(Mode::Stateless, tool, arguments).await?;
            }
            for &mode in &modes {
                for &n in &clients {
                    let start = Instant::now();
                    let warmup = start + Duration::from_millis(500);
                    let until = warmup + Duration::from_secs_f64(seconds);
                    let tasks: Vec<_> = (0..n).map(|i| tokio::spawn(run_client(addr, mode, Arc::clone(&calls), i, until, warmup))).collect();
                    let mut latencies = Vec::new();
                    let mut errors = 0;
                    let mut first_error = None;
                    for task in tasks {
                        let outcome = task.await?;
                        latencies.extend(outcome.latencies_us);
                        errors += outcome.errors;
                        first_error = first_error.or(outcome.first_error);
                    }
                    // Calls are counted when they started inside the measured window.
                    let measured = seconds;
                    latencies.sort_unstable();
                    println!(
                        "{:<9} {:<10} {:>7} {:>9.0} {:>8.2} {:>8.2} {:>8.2} {:>7} {:>13.0}",
                        workload_name,
                        mode.name(),
                        n,
                        latencies.len() as f64 / measured,
                        percentile(&latencies, 50.0),
                        percentile(&latencies, 99.0),
                        latencies.last().map_or(f64::NAN, |&m| m as f64 / 1000.0),
                        errors,
                        peak_rss_mib()
                    );
                    if let Some(error) = first_error {
                        println!("  first error: {error}");
                    }
                }
            }
        }
        Ok::<_, BoxError>(())
    })?;
    // The server task is still serving; leave without waiting for it.
    std::process::exit(0)
}
