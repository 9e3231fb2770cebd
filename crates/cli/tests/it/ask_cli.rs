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

/// Runs `ask` on Chinook with the Chinook docs, recording to `record`, the model answering
/// `sql`, and `answer` typed on the terminal; returns (stdout, stderr, what the model was sent).
fn ask_and_answer(
    question: &str,
    sql: &str,
    record: &Path,
    answer: &str,
) -> (String, String, String) {
    use std::io::Write;
    let server = ReplayServer::start(vec![
        Scripted::json(json!({"query": sql, "reasoning": "scripted"})),
        Scripted::Text("Done.".into()),
    ])
    .expect("server");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docs/chinook");
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["ask", &chinook(), question, "--llm-provider", "openai", "--llm-model", "replayed"])
        .args(["--llm-base-url", &format!("{}/v1", server.url())])
        .args(["--docs", &docs.display().to_string()])
        .args(["--record-examples", &record.display().to_string()])
        .env_remove("SCHEMASCOPE_LLM_MODEL")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    child.stdin.take().expect("stdin").write_all(answer.as_bytes()).expect("answer");
    let out = child.wait_with_output().expect("finishes");
    let sent = server.received().iter().map(|r| r.body.to_string()).collect::<Vec<_>>().join("\n");
    (String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into(), sent)
}

#[test]
fn ask_shows_similar_verified_examples_and_records_a_confirmed_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("confirmed.toml");
    let question = "How many tracks does each media type have?";
    let sql = "SELECT m.Name, COUNT(*) AS n FROM MediaType m JOIN Track t ON t.MediaTypeId = m.MediaTypeId GROUP BY m.MediaTypeId ORDER BY n DESC LIMIT 1";
    // The model is shown the docs' example most like the question, not the unrelated ones.
    let (stdout, stderr, sent) = ask_and_answer(question, sql, &record, "n\n");
    assert!(stdout.contains("Done."), "{stdout}\n{stderr}");
    assert!(
        sent.contains("Verified examples")
            && sent.contains("How many tracks does each genre have?"),
        "{sent}"
    );
    assert!(!sent.contains("Which artist has the most albums?"), "{sent}");
    assert!(stderr.contains("Not recorded."), "{stderr}");
    assert!(!record.exists(), "a no records nothing");
    // Confirmed: recorded, and shown to the model for the next question like it.
    let (_, stderr, _) = ask_and_answer(question, sql, &record, "y\n");
    assert!(stderr.contains("Recorded in"), "{stderr}");
    let text = std::fs::read_to_string(&record).expect("recorded");
    assert!(text.contains("source = \"Chinook_Sqlite\"") && text.contains(question), "{text}");
    let (_, stderr, sent) =
        ask_and_answer("Number of tracks of each media type", sql, &record, "y\n");
    assert!(sent.contains(question), "the recorded pair is shown: {sent}");
    assert!(stderr.contains("Recorded in"), "a new question is a new pair: {stderr}");
    let (_, stderr, _) = ask_and_answer(question, sql, &record, "yes\n");
    assert!(stderr.contains("Already a verified example"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&record).expect("file").matches("[[example]]").count(), 2);
}
