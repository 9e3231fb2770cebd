//! A hostile AimDB instance (the fake, speaking AimX 3.0) against the real `serve` over stdio
//! MCP: a 64 MB `record.get` line is read past within the line bound, a large value within the
//! bounds is kept as text (not a tree 100 times its size), and a flood of 2 MB events is read no
//! faster than the byte rate, kept within the per-record and per-source bounds, and shown as
//! throttled in list_sources. Memory is the server's peak RSS (`VmHWM`) before and after.

use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use serde_json::{Value, json};

const MIB: u64 = 1 << 20;

/// `schemascope serve` over stdio, spoken to as an MCP client.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Server {
    fn start(args: &[&str]) -> Self {
        Self::start_with_stderr(args, Stdio::null())
    }

    fn start_with_stderr(args: &[&str], stderr: Stdio) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
            .arg("serve")
            .args(args)
            .env_remove("SCHEMASCOPE_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("starts");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut server = Self { child, stdin, lines, next_id: 1 };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "hostile-aimdb", "version": "1"}}),
        );
        writeln!(
            server.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .expect("write");
        server
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .expect("write");
        for line in self.lines.by_ref() {
            let message: Value = serde_json::from_str(&line.expect("line")).expect("JSON");
            if message["id"] == id {
                return message;
            }
        }
        panic!("the server ended before answering {method}");
    }

    /// A tool's envelope (`structuredContent`), and whether it is an error.
    fn call(&mut self, tool: &str, arguments: Value) -> (Value, bool) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &reply["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let envelope = serde_json::from_str(text).unwrap_or_else(|_| json!({"message": text}));
        (envelope, result["isError"] == true)
    }

    /// The live source's list_sources entry.
    fn source(&mut self) -> Value {
        let (listed, _) = self.call("list_sources", json!({}));
        listed["data"]["sources"][0].clone()
    }

    /// The server's peak resident memory so far, in bytes.
    fn peak_bytes(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
        let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("KiB");
        kib * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fake(dir: &tempfile::TempDir) -> FakeAimdb {
    let records = vec![FakeRecord::new("big", "plant::Big", vec![json!([{"a": 0}])])];
    FakeAimdb::start(&dir.path().join("plant.sock"), Protocol::V3, Behaviour::Normal, records)
        .expect("fake starts")
}

fn spec(fake: &FakeAimdb) -> String {
    format!("plant=aimdb:unix://{}", fake.path().display())
}

#[test]
fn a_64_mb_record_get_line_is_read_past_within_the_line_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake = fake(&dir);
    let mut server = Server::start(&["--aimdb-record-bytes", "8MiB", &spec(&fake)]);
    assert_eq!(server.source()["live"]["connected"], true);
    let before = server.peak_bytes();

    fake.set_behaviour(Behaviour::HugeGet(64 * MIB as usize));
    let schema = json!({"source": "plant", "record_name": "big", "window_ms": 0});
    let (refused, is_error) = server.call("query_schema", schema.clone());
    let message = refused.to_string();
    assert!(is_error, "{message}");
    let line_bound = 8 * MIB + 64 * 1024;
    assert!(message.contains(&format!("longer than {line_bound} bytes")), "{message}");
    assert!(message.contains("--aimdb-record-bytes"), "{message}");
    // The line is held up to its bound (a vector doubling to reach it), never as a tree: before,
    // the same line took 7.6 GB.
    let grew = server.peak_bytes().saturating_sub(before);
    eprintln!("64 MB line refused: peak RSS grew by {grew} bytes");
    assert!(grew <= 3 * line_bound, "peak RSS grew by {grew} bytes, bound {line_bound}");

    // The instance is served on once it behaves.
    fake.set_behaviour(Behaviour::Normal);
    let (answer, is_error) = server.call("query_schema", schema);
    assert!(!is_error, "{answer}");
    assert_eq!(answer["data"]["schema"]["type"], "array");
}

#[test]
fn a_large_value_within_the_bounds_is_kept_as_text_not_as_a_tree() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake = fake(&dir);
    let bounds = ["--aimdb-max-value-bytes", "16MiB", "--aimdb-record-bytes", "16MiB"];
    let mut server = Server::start(&[&bounds[..], &[spec(&fake).as_str()]].concat());
    server.source();
    let before = server.peak_bytes();

    let value_bytes = 12 * MIB;
    fake.set_behaviour(Behaviour::HugeGet(value_bytes as usize));
    let (answer, is_error) = server
        .call("query_schema", json!({"source": "plant", "record_name": "big", "window_ms": 0}));
    assert!(!is_error, "{answer}");
    assert_eq!(answer["data"]["schema"]["items"]["properties"]["a"]["type"], "integer");
    let grew = server.peak_bytes().saturating_sub(before);
    eprintln!("{value_bytes}-byte value kept: peak RSS grew by {grew} bytes");
    // Its text, a copy in the served collection, and the profiler's tape of its tokens (six
    // times the text for `{"a":0}`); as a tree it took about 100 times the text.
    assert!(
        grew <= 16 * value_bytes,
        "peak RSS grew by {grew} bytes for a {value_bytes}-byte value"
    );

    let record = &server.source()["collections"][0]["records"][0];
    assert!(record["bytes"].as_u64().expect("bytes") <= 16 * MIB, "{record}");
}

#[test]
fn a_flood_of_2_mb_events_is_throttled_and_kept_within_the_byte_bounds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake = fake(&dir);
    let (record_bytes, source_bytes) = (8 * MIB, 16 * MIB);
    let mut server = Server::start(&[
        "--aimdb-record-bytes",
        "8MiB",
        "--aimdb-source-bytes",
        "16MiB",
        "--aimdb-bytes-per-second",
        "16MiB",
        &spec(&fake),
    ]);
    assert_eq!(server.source()["live"]["state"], "following");
    let before = server.peak_bytes();

    let event_bytes = 2 * MIB;
    fake.set_behaviour(Behaviour::Flood { event_bytes: event_bytes as usize, events: 60 });
    // Waits (for as long as a slow build needs) until the flood was slowed and folded in;
    // nothing here measures time.
    let give_up = Instant::now() + Duration::from_secs(300);
    let source = loop {
        let source = server.source();
        let values = source["collections"][0]["records"][0]["values"].as_u64().unwrap_or(0);
        // Slowed (read past the byte rate) or, on a machine too loaded to read that fast,
        // dropped (past the bytes allowed to wait): either way the source says so.
        let slowed = source["live"]["throttledTimes"].as_u64().unwrap_or(0) > 0;
        let dropped = source["live"]["refusedValues"].as_u64().unwrap_or(0) > 0;
        if (slowed || dropped)
            && source["aimdb"]["evictedValues"].as_u64().unwrap_or(0) > 0
            && values > 1
        {
            break source;
        }
        assert!(Instant::now() < give_up, "no throttled flood in list_sources: {source}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let live = &source["live"];
    assert_eq!(live["connected"], true, "{live}");
    let throttled = live["state"] == "throttled"
        && live["reason"].as_str().unwrap_or_default().contains("--aimdb-bytes-per-second");
    let dropped = live["lastRefusal"].as_str().unwrap_or_default().contains("--aimdb-source-bytes");
    assert!(throttled || dropped, "the flood is not said: {live}");
    let record = &source["collections"][0]["records"][0];
    let kept = record["bytes"].as_u64().expect("bytes");
    assert!(kept <= record_bytes, "{record}");
    assert!(record["values"].as_u64().expect("values") <= record_bytes / event_bytes, "{record}");
    assert!(source["aimdb"]["heldBytes"].as_u64().expect("held") <= source_bytes, "{source}");
    assert_eq!(source["aimdb"]["limits"]["bytesPerSecond"], 16 * MIB);
    // 120 MB were sent; what is kept and waiting stays within a few times the source's bound
    // (before, such a flood grew past 3.6 GB and kept rising).
    let grew = server.peak_bytes().saturating_sub(before);
    eprintln!("flood: peak RSS grew by {grew} bytes; {source}");
    assert!(grew <= 8 * source_bytes, "peak RSS grew by {grew} bytes, bound {source_bytes}");
}

/// Writes are logged on standard error with no logging asked for (`SCHEMASCOPE_LOG` unset), as
/// `serve --help` promises, with who asked.
#[test]
fn writes_are_logged_on_standard_error_by_default() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records =
        vec![FakeRecord::new("config", "plant::Config", vec![json!({"port": 8080})]).writable()];
    let fake =
        FakeAimdb::start(&dir.path().join("plant.sock"), Protocol::V1, Behaviour::Normal, records)
            .expect("fake starts");
    let stderr = dir.path().join("stderr.txt");
    let file = std::fs::File::create(&stderr).expect("creates");
    let mut server =
        Server::start_with_stderr(&[&spec(&fake), "--allow-writes", "plant"], Stdio::from(file));
    let (set, failed) =
        server.call("set_record", json!({"record_name": "config", "value": {"port": 9090}}));
    assert!(!failed, "{set}");
    drop(server);
    let logged = std::fs::read_to_string(&stderr).expect("reads");
    let line = logged.lines().find(|l| l.contains("schemascope::writes")).unwrap_or_default();
    assert!(
        line.contains("MCP over stdio (client hostile-aimdb 1)") && line.contains("\"/port\""),
        "{logged}"
    );
}
