//! `schemascope ask` and `validate-query` from the shell: live steps on standard error, the answer,
//! the trace file, exit codes; the LLM is a local server replaying scripted answers.

use std::path::Path;
use std::process::Command;

use schemascope_agent::replay::{ReplayServer, Scripted};
use serde_json::{Value, json};

fn chinook() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
        .display()
        .to_string()
}

#[test]
fn ask_shows_steps_prints_the_answer_and_appends_the_trace() {
    let server = ReplayServer::start(vec![
        Scripted::json(json!({"query": "SELECT COUNT(*) FROM Track", "reasoning": "count"})),
        Scripted::Text("There are 3503 tracks.".into()),
    ])
    .expect("server");
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("trace.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args([
            "ask",
            &chinook(),
            "How many tracks?",
            "--llm-provider",
            "openai",
            "--llm-model",
            "replayed",
        ])
        .args([
            "--llm-base-url",
            &format!("{}/v1", server.url()),
            "--trace-json",
            &trace.display().to_string(),
        ])
        .env_remove("SCHEMASCOPE_LLM_MODEL")
        .output()
        .expect("runs");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("There are 3503 tracks.")
            && stdout.contains("query: SELECT COUNT(*) FROM Track"),
        "{stdout}"
    );
    for step in [
        "· Fetching the schema...",
        "· Building the query...",
        "· Validating the query...",
        "· Executing the query...",
    ] {
        assert!(stderr.contains(step), "`{step}` missing from:\n{stderr}");
    }
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(&trace).expect("trace").lines().next().expect("a line"),
    )
    .expect("json");
    assert_eq!(line["success"], true);
    assert_eq!(line["trace"].as_array().map(Vec::len), Some(12), "enter and exit of six nodes");
}

#[test]
fn ask_without_a_model_says_how_to_configure_one() {
    let out = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["ask", &chinook(), "How many tracks?"])
        .env_remove("SCHEMASCOPE_LLM_MODEL")
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("SCHEMASCOPE_LLM_MODEL"), "{text}");
}

#[test]
fn validate_query_exits_2_on_an_invalid_query_with_a_suggestion() {
    let out = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args([
            "validate-query",
            &chinook(),
            "SELECT COUNT(*) FROM Invoice WHERE BillingCountry = 'Brasil'",
            "--json",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let envelope: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(envelope["data"]["errors"][0]["suggestion"], "Brazil");
}
