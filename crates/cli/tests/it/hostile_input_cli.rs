//! The real binary on hostile input: selectors and SQL nested past any stack, selectors whose
//! work grows exponentially, JSON nested as deep as the parser reads. Each command exits with
//! its normal error code and a clear message — never killed by a stack overflow's abort — and
//! so does the MCP server over stdio, which answers every such call and goes on serving.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

fn chinook() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
        .display()
        .to_string()
}

/// The exit code (`None` when a signal killed the process) and everything it printed.
fn outcome(out: &Output) -> (Option<i32>, String) {
    (
        out.status.code(),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn deep_and_exponential_selectors_end_the_command_with_the_reason() {
    let cases = [
        (format!("{}type", "!".repeat(2_500)), "nests deeper than 128 levels"),
        (format!("{}type{}", "[".repeat(800), "]".repeat(800)), "nests deeper than 128 levels"),
        (format!("type{}", " || type".repeat(1_500)), "nests deeper than 128 levels"),
        (
            format!("length({}) > `5`", "[@,@,@,@,@,@,@,@,@,@][]".repeat(7)),
            "more than 10000000 steps on one item",
        ),
    ];
    for (selector, reason) in &cases {
        let (code, text) = outcome(&schemascope(&["find", "demo:infrastructure", selector]));
        assert_eq!(code, Some(1), "{}…: {text}", &selector[..20]);
        assert!(text.contains(reason), "{}…: {text}", &selector[..20]);
    }
}

#[test]
fn deep_sql_ends_validate_query_and_execute_with_the_reason() {
    let db = chinook();
    let deep = [
        format!("SELECT {} FROM Genre", vec!["1"; 3_000].join("+")),
        format!("SELECT 1 WHERE {}TRUE", "NOT ".repeat(3_000)),
        vec!["SELECT 1"; 3_000].join(" UNION ALL "),
        format!("SELECT {} 1 {}", "CASE WHEN 1 = 1 THEN ".repeat(3_000), "END ".repeat(3_000)),
    ];
    for sql in &deep {
        let (code, text) = outcome(&schemascope(&["validate-query", &db, sql]));
        assert_eq!(code, Some(2), "invalid, exit 2: {}…: {text}", &sql[..30]);
        assert!(text.contains("nest deeper than 128 levels"), "{}…: {text}", &sql[..30]);
        // execute leaves what it cannot parse to SQLite, which has its own depth limit.
        let (code, text) = outcome(&schemascope(&["execute", &db, sql]));
        assert!(code.is_some(), "killed by a signal: {text}");
    }
}

#[test]
fn json_nested_as_deep_as_the_parser_reads_is_validated() {
    // 60 objects each holding an array: 120 levels, within serde_json's 128.
    let deep = (0..60).fold(json!(1), |inner, _| json!({"celsius": [inner]})).to_string();
    let (code, text) =
        outcome(&schemascope(&["validate", "demo:sensors", "server::Temperature", &deep]));
    assert_eq!(code, Some(2), "{text}");
    let deeper = format!("{}1{}", "[".repeat(5_000), "]".repeat(5_000));
    let (code, text) =
        outcome(&schemascope(&["validate", "demo:sensors", "server::Temperature", &deeper]));
    assert!(code == Some(1) || code == Some(2), "{text}");
    assert!(text.contains("recursion limit"), "{text}");
}

#[test]
fn the_stdio_server_answers_hostile_calls_and_goes_on_serving() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "demo:infrastructure", &format!("chinook={}", chinook())])
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
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}));
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let calls = [
        (
            "find_items",
            json!({"source": "infrastructure", "selector": format!("{}type", "!".repeat(2_500))}),
            "nests deeper than 128 levels",
        ),
        (
            "find_items",
            json!({"source": "infrastructure", "selector": format!("length({}) > `5`", "[@,@,@,@,@,@,@,@,@,@][]".repeat(7))}),
            "10000000 steps",
        ),
        (
            "validate_query",
            json!({"source": "chinook", "query": format!("SELECT {}", vec!["1"; 3_000].join("+"))}),
            "nest deeper than 128 levels",
        ),
        (
            "find_nodes",
            json!({"source": "infrastructure", "selector": format!("{}type{}", "(".repeat(3_000), ")".repeat(3_000))}),
            "nests deeper",
        ),
    ];
    for (i, (tool, arguments, reason)) in calls.iter().enumerate() {
        let id = 10 + i as u64;
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
        );
        let reply = answer(id).to_string();
        assert!(reply.contains(reason), "{tool}: {reply}");
    }
    send(
        json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "list_sources", "arguments": {}}}),
    );
    assert_eq!(answer(99)["result"]["isError"], false, "still serving");
    drop(stdin);
    let status = child.wait().expect("exits");
    assert!(status.code().is_some(), "ended by a signal: {status}");
}
