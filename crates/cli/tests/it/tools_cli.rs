//! `schemascope tools` for a person and as JSON, `--tools` on it and on `serve`, and `tools =
//! [...]` in the configuration file served over stdio: the chosen tools are listed, the others
//! refused naming the option, and every default server's list fits in 4,000 tokens.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use schemascope_agent::replay::ReplayServer;
use serde_json::{Value, json};

fn chinook() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
        .display()
        .to_string()
}

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(args)
        .env_remove("SCHEMASCOPE_LLM_MODEL")
        .env_remove("SCHEMASCOPE_LLM_PROVIDER")
        .env_remove("SCHEMASCOPE_CONFIG")
        .output()
        .expect("runs")
}

fn shown(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn tools_prints_a_line_per_tool_the_total_and_why_others_are_not_listed() {
    let output = schemascope(&["tools", "demo:infrastructure"]);
    let text = shown(&output);
    assert!(output.status.success(), "{text}");
    assert!(!text.trim_start().starts_with('{'), "not JSON: {text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("find_and_style_nodes") && l.ends_with(" tokens")),
        "{text}"
    );
    assert!(text.contains("26 tools listed: "), "{text}");
    assert!(text.contains("needs a database and an LLM"), "{text}");

    let output = schemascope(&["tools", "demo:infrastructure", "--json"]);
    let envelope: Value = serde_json::from_slice(&output.stdout).expect("the envelope as JSON");
    assert_eq!(envelope["success"], true);
    assert_eq!(envelope["data"]["count"], 26);
    assert!(envelope["data"]["tokens"].as_u64().is_some_and(|t| t < 4_000), "{envelope}");
}

#[test]
fn the_largest_default_server_fits_in_4000_tokens_with_an_llm_configured() {
    // `ask` is listed when an LLM is configured: the replay backend stands for one.
    let server = ReplayServer::start(Vec::new()).expect("server");
    let url = format!("{}/v1", server.url());
    let chinook = chinook();
    let output = schemascope(&[
        "tools",
        "demo:infrastructure",
        &chinook,
        "demo:sensors",
        "--json",
        "--llm-provider",
        "openai",
        "--llm-model",
        "replayed",
        "--llm-base-url",
        &url,
    ]);
    let envelope: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(envelope["data"]["count"], 27, "{envelope}");
    assert!(envelope["data"]["tokens"].as_u64().is_some_and(|t| t < 4_000), "{envelope}");
}

#[test]
fn tools_with_a_choice_shows_what_is_left_out_and_an_unknown_name_suggests_one() {
    let chinook = chinook();
    let output = schemascope(&["tools", &chinook, "--tools", "sql,list_sources"]);
    let text = shown(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("5 tools listed"), "{text}");
    assert!(text.contains("Chosen with --tools: sql,list_sources"), "{text}");
    assert!(
        text.contains("not chosen (--tools / tools = [...]): describe_schema, sample_data"),
        "{text}"
    );

    for args in [
        vec!["tools", chinook.as_str(), "--tools", "discovery,execute_qurey"],
        vec!["serve", chinook.as_str(), "--tools", "discovery,execute_qurey"],
    ] {
        let output = schemascope(&args);
        let text = shown(&output);
        assert!(!output.status.success(), "{text}");
        assert!(text.contains("--tools: `execute_qurey` is neither a tool nor a toolset. Did you mean `execute_query`?"), "{text}");
    }
}

/// One JSON-RPC message to a stdio server.
fn send(stdin: &mut impl Write, message: Value) {
    writeln!(stdin, "{message}").expect("write");
    stdin.flush().expect("flush");
}

/// The next response with `id`.
fn response(lines: &mut impl Iterator<Item = std::io::Result<String>>, id: u64) -> Value {
    for line in lines.by_ref() {
        let message: Value = serde_json::from_str(&line.expect("read")).unwrap_or(Value::Null);
        if message["id"] == json!(id) {
            return message;
        }
    }
    panic!("no response {id}");
}

#[test]
fn a_configuration_choosing_tools_is_served_with_them_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    let config = format!(
        "[server]\ntools = [\"discovery\", \"execute_query\"]\n\n[[sources]]\nname = \"music\"\npath = {:?}\n",
        chinook()
    );
    std::fs::write(&file, config).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--no-watch", "--config", file.to_str().expect("utf-8")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serves");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    response(&mut lines, 1);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(&mut stdin, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let listed = response(&mut lines, 2);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"execute_query") && names.contains(&"find_items"), "{names:?}");
    assert!(
        !names.contains(&"validate_query") && !names.contains(&"get_schema_context"),
        "{names:?}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "validate_query", "arguments": {"query": "SELECT 1"}}}),
    );
    let refused = response(&mut lines, 3);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let message = refused["result"]["structuredContent"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("--tools discovery,execute_query") && message.contains("tools = [...]"),
        "{refused}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "execute_query", "arguments": {"query": "SELECT COUNT(*) AS n FROM Genre"}}}),
    );
    let answered = response(&mut lines, 4);
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_configuration_naming_an_unknown_tool_names_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    std::fs::write(&file, format!("[server]\ntools = [\n  \"discovery\",\n  \"graph-veiw\",\n]\n\n[[sources]]\nname = \"music\"\npath = {:?}\n", chinook())).expect("write");
    let output = schemascope(&["serve", "--config", file.to_str().expect("utf-8")]);
    let text = shown(&output);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("schemascope.toml:4: `server.tools`: `graph-veiw` is neither a tool nor a toolset. Did you mean `graph-view`?"), "{text}");
}

#[test]
fn check_says_how_many_tools_a_configuration_offers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    std::fs::write(
        &file,
        format!(
            "[server]\ntools = [\"sql\"]\n\n[[sources]]\nname = \"music\"\npath = {:?}\n",
            chinook()
        ),
    )
    .expect("write");
    let output = schemascope(&["check", "--config", file.to_str().expect("utf-8")]);
    let text = shown(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("  tools: 4 listed, ") && text.contains("(tools = sql)"), "{text}");
}
