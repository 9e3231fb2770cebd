//! Long work through `schemascope serve --http`: a call past `--request-timeout` stops its work
//! (the server's CPU time stops growing once it answered), and no call waits on another call's
//! work — describe_styles answers while a huge layout runs, list_sources answers while a slow
//! PostgreSQL view is being profiled and names it as pending.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// A server started for one test, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    /// Starts `schemascope serve --http 127.0.0.1:0 --request-timeout SECONDS SOURCES…`.
    fn start(timeout_seconds: &str, sources: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--no-watch",
                "--no-session-file",
                "--request-timeout",
                timeout_seconds,
                // A layout that would run for hours: past the default ceiling of iterations.
                "--ceiling",
                "iterations=1000000",
            ])
            .args(sources)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("schemascope starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let addr = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| {
                line.split("http://")
                    .nth(1)
                    .and_then(|rest| rest.split('/').next())
                    .and_then(|a| a.parse().ok())
            })
            .expect("the server prints its address");
        // Keep reading stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, addr }
    }

    /// Calls a tool over `POST /v1/tools/{name}`: the HTTP status and the JSON body.
    fn call(&self, tool: &str, arguments: &Value) -> (u16, Value) {
        let body = arguments.to_string();
        let mut stream =
            TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).expect("connects");
        stream.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
        let request = format!(
            "POST /v1/tools/{tool} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("sends");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("an answer");
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {response:?}"));
        let payload = response.split_once("\r\n\r\n").map_or("", |(_, p)| p);
        (status, serde_json::from_str(payload).unwrap_or(Value::String(payload.into())))
    }

    /// The server's CPU time so far (user + system, all threads), in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("/proc/PID/stat");
        // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
        field(14) + field(15)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A path graph of `n` nodes written as JSON, each node with a little data.
fn path_graph(dir: &std::path::Path, n: usize) -> String {
    let nodes: Vec<Value> =
        (0..n).map(|i| json!({"id": format!("n{i}"), "data": {"rank": i % 7}})).collect();
    let edges: Vec<Value> = (1..n)
        .map(|i| json!({"id": format!("e{i}"), "source": format!("n{}", i - 1), "target": format!("n{i}")}))
        .collect();
    let path = dir.join("big.json");
    std::fs::write(&path, json!({"nodes": nodes, "edges": edges}).to_string()).expect("write");
    format!("big=graph:{}", path.display())
}

/// How much CPU time the server spends over `window` once it is idle: a cancelled computation
/// still running shows as about the window itself (one core busy).
fn ticks_over(server: &Server, window: Duration) -> u64 {
    let before = server.cpu_ticks();
    std::thread::sleep(window);
    server.cpu_ticks().saturating_sub(before)
}

#[test]
fn a_layout_past_the_request_timeout_stops_and_describe_styles_answers_while_it_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 100k nodes: one force-directed iteration is 5·10⁹ pairs, far longer than the test runs;
    // the layout's work stops only if it looks at its cancellation within an iteration.
    let graph = path_graph(dir.path(), 100_000);
    let server = Server::start("3", &[&graph]);
    let (status, opened) = server.call("describe_styles", &json!({}));
    assert_eq!(status, 200, "the session opens: {opened}");
    std::thread::scope(|scope| {
        let layout = scope.spawn(|| {
            server.call(
                "set_layout",
                &json!({"type": "forceDirected", "options": {"iterations": 1000000, "tolerance": 0}}),
            )
        });
        // While the layout computes, readers of the session answer: it holds no lock.
        std::thread::sleep(Duration::from_millis(500));
        for reader in ["describe_styles", "describe_selection", "query_graph"] {
            let (status, answer) = server.call(reader, &json!({}));
            assert_eq!(status, 200, "{reader} answers while the layout runs: {answer}");
            assert_eq!(answer["success"], true, "{reader}: {answer}");
        }
        let (status, answer) = layout.join().expect("the layout call returns");
        assert_eq!(status, 503, "the layout is cut at the request timeout: {answer}");
    });
    // The layout's work stopped with its call: the server goes idle (uncut, one iteration runs
    // on for a minute or more with one core busy). The server's own answer waits a grace of 2 s
    // for the work to notice, so the window starts after it.
    std::thread::sleep(Duration::from_secs(3));
    let window = Duration::from_secs(3);
    let busy = ticks_over(&server, window);
    // Clock ticks are 1/100 s on Linux: 3 s of one busy core is about 300.
    assert!(
        busy < 60,
        "the server used {busy} ticks of CPU in {window:?} after the layout was cut"
    );
    // The layout as set before is unchanged, and the session still answers.
    let (status, described) = server.call("query_graph", &json!({}));
    assert_eq!(status, 200, "{described}");
    assert_ne!(described["data"]["currentLayout"], "forceDirected", "{described}");
}

/// `psql` as the read-write role; `None` when PostgreSQL is not configured for tests.
fn postgres() -> Option<(String, impl Fn(&str))> {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return None;
    };
    let admin = uri.clone();
    let psql = move |sql: &str| {
        let out = Command::new("psql")
            .args([admin.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    };
    Some((uri, psql))
}

/// Drops a scratch schema when the test ends, passed or not: a slow view left behind would slow
/// every other test that profiles the database. A profile still reading the view (in the
/// background, up to its statement timeout) is stopped first: the server was killed, and
/// PostgreSQL does not notice a gone client while a statement runs.
struct DropSchema(String, String);

impl Drop for DropSchema {
    fn drop(&mut self) {
        let stop = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%{}%'",
            self.1
        );
        let _ = Command::new("psql").args([self.0.as_str(), "-q", "-c", &stop]).output();
        let _ = Command::new("psql")
            .args([
                self.0.as_str(),
                "-q",
                "-c",
                &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.1),
            ])
            .output();
    }
}

#[test]
fn describe_schema_and_list_sources_answer_while_a_slow_postgres_view_is_profiled() {
    let Some((uri, psql)) = postgres() else { return };
    let schema = format!("schemascope_cli_slow_{}", std::process::id());
    // Each row costs 10 ms to read: a scan of the view takes 1000 s, far past every timeout.
    psql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
         CREATE VIEW {schema}.slow AS SELECT g AS id, g::text AS label FROM generate_series(1, 100000) g WHERE pg_sleep(0.01) IS NOT NULL"
    ));
    let _drop = DropSchema(uri.clone(), schema.clone());
    let server = Server::start("8", &[&format!("db={uri}"), "demo:sensors"]);
    let view = format!("{schema}.slow");
    // describe_schema waits for the profile at most `--profile-wait` (2 s), then answers with
    // what is known while the profile goes on in the background: the catalog, no false count.
    let (status, described) =
        server.call("describe_schema", &json!({"source": "db", "collection": view}));
    assert_eq!(status, 200, "{described}");
    let table = &described["data"]["collections"][0];
    assert_eq!(table["profile"]["state"], "computing", "{table}");
    assert_eq!(table["profile"]["columnsDone"], 0, "{table}");
    assert_eq!(table["count"], Value::Null, "a view's rows are not counted yet: {table}");
    assert_eq!(table["properties"], json!([]), "{table}");
    assert_eq!(
        table["unprofiledColumns"],
        json!([
            {"path": "id", "column": {"declaredType": "integer", "nullable": true}},
            {"path": "label", "column": {"declaredType": "text", "nullable": true}},
        ]),
        "{table}"
    );
    let message = described["message"].as_str().unwrap_or_default();
    assert!(message.contains("rows not counted yet"), "{message}");
    assert!(message.contains("Profiles not ready"), "{message}");
    assert!(message.contains("0 of 2 columns profiled"), "{message}");
    let (status, markdown) = server.call(
        "describe_schema",
        &json!({"source": "db", "collection": view, "format": "markdown"}),
    );
    assert_eq!(status, 200, "{markdown}");
    let text = markdown["data"]["markdown"].as_str().unwrap_or_default();
    assert!(text.contains("(rows not counted yet)"), "{text}");
    assert!(text.contains("- `label` `text` (not profiled yet)"), "{text}");
    assert!(!text.contains("0 rows"), "{text}");

    let (status, listed) = server.call("list_sources", &json!({}));
    assert_eq!(status, 200, "list_sources answers while the view profiles: {listed}");
    let entry = listed["data"]["sources"]
        .as_array()
        .and_then(|sources| sources.iter().find(|s| s["name"] == "db"))
        .and_then(|db| db["collections"].as_array())
        .and_then(|collections| collections.iter().find(|c| c["name"] == view.as_str()))
        .unwrap_or_else(|| panic!("`{view}` is listed: {listed}"));
    assert_eq!(entry["profile"], "computing", "{entry}");
    assert_eq!(entry["properties"], 2, "the catalog's columns: {entry}");
    assert_eq!(entry["count"], Value::Null, "{entry}");
    let message = listed["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("`db`.`{view}` (being computed)")), "{message}");
    // Another source's tools do not wait either.
    let (status, sensors) = server.call("describe_schema", &json!({"source": "sensors"}));
    assert_eq!(status, 200, "{sensors}");
}

/// Over stdio a tool call is bounded by `--request-timeout` when the operator gives one: the
/// layout that would run for hours is cut with the same message as over HTTP.
#[test]
fn over_stdio_a_given_request_timeout_cuts_a_long_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = path_graph(dir.path(), 100_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--no-watch", "--no-session-file", "--request-timeout", "2"])
        .args(["--ceiling", "iterations=1000000"])
        .arg(&graph)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("schemascope starts");
    let mut input = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut answer_to = |id: u64| -> Value {
        lines
            .by_ref()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to request {id}"))
    };
    let mut send = |message: Value| {
        writeln!(input, "{message}").expect("writes");
        input.flush().expect("flushes");
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "stdio-timeout", "version": "1"}}}));
    answer_to(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "set_layout",
        "arguments": {"type": "forceDirected", "options": {"iterations": 1000000, "tolerance": 0}}}}),
    );
    let answer = answer_to(2);
    let content = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(content["data"]["error"], "cancelled", "{answer}");
    assert!(
        content["message"].as_str().is_some_and(|m| m.contains("took longer than 2 s")),
        "{answer}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
