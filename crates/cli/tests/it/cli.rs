//! The command line: readable output, the `--json` envelope, exit codes and clear errors.

use std::process::{Command, Output};

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn describe_prints_the_schema_section() {
    let out = schemascope(&["describe", "demo:infrastructure"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("## Graph Data Schema"), "{text}");
    assert!(text.contains("- `region` (string): "), "{text}");
}

#[test]
fn json_flag_prints_the_tool_envelope() {
    let out = schemascope(&["property", "demo:infrastructure", "type", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(envelope["success"], true);
    assert_eq!(envelope["data"]["values"][0]["value"], "server");
    assert!(envelope["message"].as_str().expect("message").contains("5 unique values"));
}

#[test]
fn validate_exits_2_on_an_invalid_value_and_names_the_path() {
    let out =
        schemascope(&["validate", "demo:sensors", "server::Temperature", r#"{"celsius": "hot"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("/celsius"), "{}", stdout(&out));
}

#[test]
fn find_and_schema_work_on_the_demo_data() {
    let out = schemascope(&["find", "demo:infrastructure", "type == 'database'", "--json"]);
    let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(envelope["data"]["count"], 20);
    let out = schemascope(&["schema", "demo:sensors", "server::Config", "--json"]);
    let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(envelope["data"]["schema"]["properties"]["port"]["type"], "integer");
}

#[test]
fn bad_sources_and_selectors_are_clear_errors_with_exit_1() {
    let out = schemascope(&["describe", "/no/such/file.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot read /no/such/file.json"), "{}", stderr(&out));
    let out = schemascope(&["find", "demo:infrastructure", "cpu > 0.5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("line 1, column") && err.contains("backticks"), "{err}");
}

#[test]
fn profile_prints_every_property_and_the_schema() {
    let out = schemascope(&["profile", "demo:infrastructure"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let nodes = &report["data"]["collections"][0];
    assert_eq!(
        nodes["properties"].as_array().expect("array").len(),
        nodes["summary"]["properties"].as_array().expect("array").len()
    );
    assert_eq!(nodes["schema"]["schema"]["type"], "object");
}

#[test]
fn serving_beyond_loopback_needs_a_token_and_says_so_before_listening() {
    let output = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--http", "0.0.0.0:0", "demo:sensors"])
        .env_remove("SCHEMASCOPE_TOKEN")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without a token")
            && err.contains("--token-file"),
        "{err}"
    );
    assert!(
        !err.contains("MCP streamable HTTP on"),
        "no banner for a server that does not start: {err}"
    );

    let bad = schemascope(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--token-file",
        "/nonexistent/token",
        "demo:sensors",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("cannot read the token file /nonexistent/token"),
        "{}",
        stderr(&bad)
    );
}

/// One-shot commands map a large source file; a bus error (what reading a mapped file that
/// another process truncated raises) ends the command with a clear message, not a bare signal.
#[cfg(target_os = "linux")]
#[test]
#[allow(unsafe_code)] // sends SIGBUS to our own child
fn a_mapped_source_cut_short_is_a_clear_error() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.ndjson");
    let line = format!("{{\"id\":1,\"note\":\"{}\"}}\n", "x".repeat(1 << 20));
    std::fs::write(&path, line.repeat(34)).expect("write");
    // `validate … -` loads the source, then waits for the value on standard input.
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["validate", path.to_str().expect("utf-8 path"), "big", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("runs");
    let maps = format!("/proc/{}/maps", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&maps).unwrap_or_default().contains("big.ndjson") {
        assert!(std::time::Instant::now() < deadline, "the source was never mapped");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: sends a signal to our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGBUS);
    }
    let _ = child.stdin.take().map(|mut stdin| stdin.write_all(b"{}"));
    let out = child.wait_with_output().expect("waits");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("truncated or rewritten by another process"), "{}", stderr(&out));
}

#[test]
fn a_file_where_no_line_loads_fails_and_skipped_lines_are_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.ndjson");
    std::fs::write(&bad, "nope\n{\"a\": tru}\n").expect("write");
    let out = schemascope(&["describe", bad.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no item loaded") && stderr(&out).contains("line 1"),
        "{}",
        stderr(&out)
    );

    let some = dir.path().join("some.ndjson");
    std::fs::write(&some, "{\"a\": 1}\n{\"a\": tru}\n{\"a\": 3}\n").expect("write");
    let out = schemascope(&["describe", some.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("(while loading)") && err.contains("line 2, column"),
        "the skipped line is shown: {err}"
    );
    let out = schemascope(&["describe", some.to_str().expect("utf-8 path"), "--json"]);
    let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(envelope["data"]["warnings"][0]["line"], 2, "{envelope}");
}

#[test]
fn more_skipped_lines_than_are_listed_are_counted_on_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let many = dir.path().join("many.ndjson");
    let text: String = (0..1_500).map(|i| format!("{{\"a\": {i}}}\n{{\"a\": tru}}\n")).collect();
    std::fs::write(&many, text).expect("write");
    let out = schemascope(&["describe", many.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("line 2, column 10: skipped"), "{err}");
    // Every skipped line is either listed or counted, and the count is the file's.
    assert!(
        err.contains("1500 lines were skipped in all; only the first 1000 are listed")
            && err.contains("… and 990 more listed at other lines"),
        "{err}"
    );
    assert!(!err.contains("1001"), "{err}");
}

#[test]
fn serve_starts_with_a_source_that_fails_to_load_and_says_so() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "demo:sensors",
            &format!("gone={}", missing.display()),
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("runs");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(stderr).lines() {
        let line = line.expect("a line");
        let listening = line.contains("MCP streamable HTTP on");
        lines.push(line);
        if listening {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = lines.join("\n");
    assert!(
        text.contains("source `gone` failed to load")
            && text.contains("missing.json")
            && text.contains("retrying"),
        "{text}"
    );
    assert!(text.contains("MCP streamable HTTP on"), "the server started: {text}");
}

#[test]
fn database_profiles_are_kept_in_the_profile_cache_unless_told_not_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = dir.path().join("chinook.sqlite");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/chinook/Chinook_Sqlite.sqlite"),
        &database,
    )
    .expect("copy");
    let database = database.to_str().expect("utf-8 path");
    let cache = dir.path().join("profiles");
    let cache_arg = cache.to_str().expect("utf-8 path");
    let stored = || std::fs::read_dir(&cache).map_or(0, |d| d.count());

    let out = schemascope(&["describe", database, "--json", "--no-profile-cache"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stored(), 0);

    let first = schemascope(&["describe", database, "--json", "--profile-cache", cache_arg]);
    assert!(first.status.success(), "{}", stderr(&first));
    // Chinook's 11 tables, each profiled once and kept.
    assert_eq!(stored(), 11);
    let again = schemascope(&["describe", database, "--json", "--profile-cache", cache_arg]);
    assert_eq!(stdout(&again), stdout(&first), "a kept profile answers as the computed one");
    assert_eq!(stdout(&out), stdout(&first));

    let both =
        schemascope(&["describe", database, "--profile-cache", cache_arg, "--no-profile-cache"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

#[test]
fn a_cut_source_list_asks_to_narrow_it_and_one_source_lists_every_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["sources".to_string()];
    for i in 0..200 {
        let path = dir.path().join(format!("s{i}.ndjson"));
        std::fs::write(&path, format!("{{\"n\":{i}}}\n")).expect("write");
        args.push(format!("s{i}={}", path.display()));
    }
    args.extend(["--max-result-bytes", "4096", "--json"].map(String::from));
    let out = schemascope(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let result: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("the envelope");
    assert!(result["truncated"].is_object(), "200 sources fit in 4 KiB: {result}");
    let message = result["message"].as_str().unwrap_or_default();
    assert!(message.contains("narrow the request"), "{message}");
    // One source given: every warning it holds, not the first twenty.
    let many = dir.path().join("many.ndjson");
    let text: String = (0..1_500).map(|i| format!("{{\"a\": {i}}}\noops\n")).collect();
    std::fs::write(&many, text).expect("write");
    let out = schemascope(&["sources", many.to_str().expect("utf-8 path"), "--json"]);
    let result: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("the envelope");
    let warnings = result["data"]["sources"][0]["warnings"].as_array().map(Vec::len);
    assert_eq!(warnings, Some(1_001), "{result}");
}

/// An independent tester's long strings (past 256 bytes, counted under a shortened key): a
/// stored one is found by `--value`, an enumeration lists its start and length (never the key's
/// hash), and the schema reads its format from the whole string.
#[test]
fn strings_past_256_bytes_are_found_listed_and_formatted_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.ndjson");
    let url = format!("https://example.com/{}", "p".repeat(300));
    let lines: Vec<String> = [256, 257, 300]
        .iter()
        .map(|&n| serde_json::json!({"l": "a".repeat(n), "u": url}).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    let file = path.to_str().expect("utf-8");
    let stored = |value: &str| {
        let out = schemascope(&["property", file, "l", "--value", value, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        envelope["data"]["valueLookup"].clone()
    };
    for n in [256, 257, 300] {
        assert_eq!(stored(&"a".repeat(n))["stored"], true, "{n} bytes");
    }
    assert_eq!(stored(&"a".repeat(258))["stored"], false);

    let out = schemascope(&["describe", file, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[truncated: 300 chars]"), "{text}");
    assert!(!text.contains("chars, #"), "a key's hash is shown: {text}");

    let out = schemascope(&["schema", file, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let schema: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let u = serde_json::to_string(&schema).expect("text");
    assert!(u.contains(r#""format":"uri""#), "{u}");
}

#[test]
fn long_values_alike_in_their_first_characters_are_listed_apart() {
    // Log messages share long starts: cut at the usual length, two different messages looked
    // like one value listed twice with two counts.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("logs.ndjson");
    let head = format!("Error while processing request {}", "x".repeat(90));
    let (a, b) = (format!("{head}A{}", "y".repeat(200)), format!("{head}B{}", "y".repeat(200)));
    let (c, d) = (format!("{}1", "z".repeat(300)), format!("{}2", "z".repeat(300)));
    let lines: Vec<String> = [&a, &a, &a, &b, &b, &c, &d]
        .iter()
        .map(|v| serde_json::json!({ "msg": v }).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    let file = path.to_str().expect("utf-8");

    let out = schemascope(&["property", file, "msg", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let values = envelope["data"]["values"].as_array().expect("values");
    let shown: Vec<&str> = values.iter().map(|v| v["value"].as_str().expect("text")).collect();
    let counts: Vec<u64> = values.iter().map(|v| v["count"].as_u64().expect("count")).collect();
    assert_eq!(counts, [3, 2, 1, 1]);
    assert!(shown[0].contains(&format!("{head}Ayyyyyyyyyy…")), "{}", shown[0]);
    assert!(shown[1].contains(&format!("{head}Byyyyyyyyyy…")), "{}", shown[1]);
    // The two that differ only past their kept start say that they look alike.
    for alike in &shown[2..] {
        assert!(
            alike.ends_with("[truncated: 301 chars; 2 listed values have this start and length]"),
            "{alike}"
        );
    }

    // The schema section lists them apart too.
    let out = schemascope(&["describe", file]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("\"{head}Ayyyyyyyyyy…\"")), "{text}");
    assert!(text.contains(&format!("\"{head}Byyyyyyyyyy…\"")), "{text}");
}
