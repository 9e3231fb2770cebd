//! The operator's ceilings on caller-supplied numbers, through the real binary: `--ceiling
//! NAME=N` lowers or raises them on the CLI and on `serve` (MCP over stdio), a call past one is
//! refused with the ceiling and the flag stated, and a capped query's peak memory stays within a
//! small multiple of its byte cap — a row is held once, and PostgreSQL never sends a row far past
//! the cap.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn chinook() -> String {
    format!("{}/../../testdata/chinook/Chinook_Sqlite.sqlite", env!("CARGO_MANIFEST_DIR"))
}

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

fn envelope(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("no JSON envelope ({e}): {}", String::from_utf8_lossy(&output.stderr))
    })
}

#[test]
fn a_lower_ceiling_lowers_the_default_and_refuses_more() {
    let db = chinook();
    let lowered =
        ["--ceiling", "max_rows=5", "execute", &db, "SELECT TrackId FROM Track", "--json"];
    let out = schemascope(&lowered);
    let result = envelope(&out);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["rowCount"], 5, "the default of 1,000 rows lowered to the ceiling");
    assert_eq!(result["data"]["truncatedBy"], "rows");

    let out = schemascope(&[&lowered[..], &["--max-rows", "6"]].concat());
    assert!(!out.status.success());
    let result = envelope(&out);
    assert_eq!(result["data"]["error"], "past_ceiling", "{result}");
    let message = result["message"].as_str().expect("message");
    assert!(
        message.contains("`max_rows` = 6 is past this server's ceiling of 5 rows per query")
            && message.contains("--ceiling max_rows=N"),
        "{message}"
    );
}

#[test]
fn defaults_past_a_lower_ceiling_are_lowered_to_it() {
    let out = schemascope(&["--ceiling", "count=1", "sample", "demo:infrastructure", "--json"]);
    let result = envelope(&out);
    assert_eq!(result["success"], true, "{result}");
    for (collection, items) in result["data"].as_object().expect("collections") {
        if let Some(items) = items.as_array() {
            assert_eq!(items.len(), 1, "{collection}: the default of 3 lowered to 1");
        }
    }
    let out =
        schemascope(&["--ceiling", "bins=2", "property", "demo:infrastructure", "cpu", "--json"]);
    let result = envelope(&out);
    assert_eq!(result["success"], true, "{result}");
    let bins = result["data"]["histogram"].as_array().map(Vec::len);
    assert_eq!(bins, Some(2), "the chosen bins lowered to the ceiling: {}", result["data"]);
}

#[test]
fn a_raised_ceiling_lets_a_caller_ask_for_more() {
    let out = schemascope(&[
        "--ceiling",
        "max_rows=20000",
        "execute",
        &chinook(),
        "SELECT TrackId FROM Track",
        "--max-rows",
        "20000",
        "--max-result-bytes",
        "1000000",
        "--json",
    ]);
    let result = envelope(&out);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["rowCount"], 3503, "every track, past the default ceiling");
    assert_eq!(result["data"]["truncated"], false);
}

#[test]
fn the_default_ceilings_refuse_the_numbers_of_the_attack() {
    let out =
        schemascope(&["execute", &chinook(), "SELECT 1", "--max-bytes", "1000000000000", "--json"]);
    let result = envelope(&out);
    assert_eq!(result["data"]["error"], "past_ceiling", "{result}");
    assert_eq!(result["data"]["ceiling"], 16 << 20);
}

#[test]
fn a_wrong_ceiling_setting_stops_the_command_with_a_clear_error() {
    for (setting, said) in [
        ("max_rowz=5", "there is no ceiling `max_rowz`. Did you mean `max_rows`?"),
        ("limit=51", "the ceiling `limit` must be from 1 to 50 values or items listed, not 51"),
        ("max_rows=0", "must be from 1 to 1000000"),
        ("max_rows", "is not NAME=N"),
    ] {
        let out = schemascope(&["--ceiling", setting, "describe", "demo:infrastructure"]);
        assert!(!out.status.success(), "{setting} was taken");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{setting}: {stderr}");
    }
}

#[test]
fn the_ceilings_the_help_lists_are_the_ones_in_force() {
    let out = schemascope(&["serve", "--help"]);
    let help =
        String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    for info in schemascope_core::ceilings::CEILINGS {
        let default = match info.name {
            "max_bytes" => "16MiB".to_string(),
            _ => info.default.to_string(),
        };
        assert!(help.contains(&format!("{} ({default})", info.name)), "{}: {help}", info.name);
    }
}

#[test]
fn an_mcp_client_over_stdio_is_held_to_the_operators_ceiling() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["--ceiling", "max_bytes=1000", "serve", &format!("chinook={}", chinook())])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").expect("write");
    let mut answer = |id: u64| -> Value {
        for line in lines.by_ref() {
            let message: Value = serde_json::from_str(&line.expect("line")).expect("JSON");
            if message["id"] == id {
                return message;
            }
        }
        panic!("the server ended before answering {id}");
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "ceilings", "version": "1"}}}));
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "execute_query", "arguments": arguments}});
    send(call(2, json!({"query": "SELECT Name FROM Track", "max_bytes": 2000})));
    let refused = answer(2);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["structuredContent"].to_string() + &refused["result"].to_string();
    assert!(text.contains("ceiling of 1000 bytes of row data per query"), "{text}");
    send(call(3, json!({"query": "SELECT Name FROM Track"})));
    let capped = answer(3);
    let data = &capped["result"]["structuredContent"]["data"];
    assert_eq!(data["truncatedBy"], "bytes", "{capped}");
    assert!(data["bytes"].as_u64().is_some_and(|b| b > 0 && b <= 1000), "{capped}");
    drop(stdin);
    child.wait().expect("exits");
}

/// Peak RSS in KiB of `schemascope ARGS` (a Python parent reads its children's maximum, so
/// other tests' processes do not count), and its envelope.
fn peak_rss_kib(args: &[&str]) -> (u64, Value) {
    let script = "import resource, subprocess, sys\n\
        out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n\
        sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
        sys.stdout.buffer.write(out.stdout or out.stderr)";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .args(args)
        .output()
        .expect("python3 runs");
    let rss = String::from_utf8_lossy(&out.stderr).trim().parse().expect("ru_maxrss");
    (rss, envelope(&out))
}

/// What the binary holds doing next to nothing: the baseline the caps are measured above.
fn baseline_kib() -> u64 {
    peak_rss_kib(&["execute", &chinook(), "SELECT 1", "--json"]).0
}

const MIB_IN_KIB: u64 = 1024;

#[test]
fn rows_of_sixteen_megabytes_are_held_once_within_a_small_multiple_of_the_cap() {
    // 150 rows of 16,000,000 characters, made by SQLite (as the issue's attack): the first fits
    // under a 16 MiB cap, the second stops the reading.
    let sql = "WITH RECURSIVE r(i, s) AS (SELECT 1, printf('%.*c', 16000000, 'x') \
               UNION ALL SELECT i + 1, s FROM r WHERE i < 150) SELECT i, s FROM r";
    let (rss, result) =
        peak_rss_kib(&["execute", &chinook(), sql, "--max-bytes", "16MiB", "--json"]);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["truncatedBy"], "bytes", "{}", result["message"]);
    assert_eq!(result["data"]["rowsRead"], 2, "reading stopped at the row past the cap");
    let above = rss.saturating_sub(baseline_kib());
    // Most of it is SQLite's own copies of the value (the recursive CTE's queue, the printf, the
    // result): Python's sqlite3 module fetching the same two rows peaks at as much (127 MB
    // above its own baseline, measured). Before, every row read was also copied into its JSON
    // (about 30 MB of RSS per 16 MB row, 4.6 GB for the 150 rows the cap did not stop).
    assert!(above < 10 * 16 * MIB_IN_KIB, "{above} KiB above the baseline for a 16 MiB cap");
}

#[test]
fn a_row_kept_in_the_answer_costs_no_more_than_a_row_read_past_the_cap() {
    // The same 16 MB row, once refused by a 1,000-byte cap, once kept under a 16 MiB one: a kept
    // row moves into the answer, so both peak alike. A copy into JSON would add 16 MB.
    let sql = "SELECT printf('%.*c', 16000000, 'x') AS s";
    let db = chinook();
    let (refused, result) = peak_rss_kib(&["execute", &db, sql, "--max-bytes", "1000", "--json"]);
    assert_eq!(result["data"]["rowCount"], 0, "{}", result["message"]);
    let (kept, result) = peak_rss_kib(&["execute", &db, sql, "--max-bytes", "16MiB", "--json"]);
    assert_eq!(result["data"]["rowCount"], 1, "{}", result["message"]);
    assert!(
        kept < refused + 8 * MIB_IN_KIB,
        "kept: {kept} KiB, refused: {refused} KiB: the kept row was copied"
    );
}

#[test]
fn postgres_never_sends_a_row_far_past_the_byte_cap() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    // Twenty rows of 50 MB: each would arrive whole, as one protocol message, to be refused.
    let sql = "SELECT g, repeat('x', 50000000) AS big FROM generate_series(1, 20) AS g";
    let (rss, result) = peak_rss_kib(&["execute", &uri, sql, "--max-bytes", "1MiB", "--json"]);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["data"]["truncatedBy"], "bytes", "{}", result["message"]);
    assert_eq!(result["data"]["rowCount"], 0);
    assert_eq!(result["data"]["rowsRead"], 1);
    let above = rss.saturating_sub(baseline_kib());
    assert!(above < 40 * MIB_IN_KIB, "{above} KiB above the baseline: a 50 MB row was received");
    // Rows under the cap still come whole, and their sizes are not part of them.
    let (_, result) = peak_rss_kib(&[
        "execute",
        &uri,
        "SELECT g, repeat('y', 1000) AS s FROM generate_series(1, 3) AS g",
        "--json",
    ]);
    assert_eq!(result["data"]["rows"][2], json!([3, "y".repeat(1000)]), "{}", result["message"]);
    assert_eq!(result["data"]["columns"], json!(["g", "s"]));
}
