//! End to end with the official Python MCP SDK as the client: the real `schemascope` binary over
//! stdio and over streamable HTTP, every tool, the resource, the prompt, and a live-refresh
//! notification after a watched file changes. The client script is `tests/e2e/mcp_client.py`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python_has_mcp() -> bool {
    Command::new("python3").args(["-c", "import mcp"]).status().is_ok_and(|s| s.success())
}

fn run_client(transport_flag: &str) {
    run_client_with(transport_flag, &[]);
}

fn run_client_with(transport_flag: &str, extra: &[&std::ffi::OsStr]) {
    assert!(
        python_has_mcp(),
        "the Python MCP SDK is missing: `python3 -m pip install -r tests/e2e/requirements.txt` (scripts/test does this)"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let graph = dir.path().join("graph.json");
    std::fs::write(&graph, r#"{"nodes":[{"id":"a","data":{"type":"server"}},{"id":"b","data":{"type":"database"}}],"edges":[{"source":"a","target":"b","data":{"latency":12}}]}"#)
        .expect("write graph");
    let output = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/e2e/mcp_client.py")
        .arg(transport_flag)
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .arg("--source")
        .arg(format!("watched={}", graph.display()))
        .arg("--source")
        .arg(format!(
            "chinook={}",
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
                .display()
        ))
        .arg("--touch-file")
        .arg(&graph)
        .args(["--resource", "schema://watched"])
        .args(extra)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    crate::checks::all_passed(&stdout, 30, &stdout);
}

#[test]
fn python_sdk_drives_every_tool_over_stdio() {
    run_client("--stdio");
}

#[test]
fn python_sdk_drives_every_tool_over_streamable_http() {
    run_client("--http-spawn");
}

#[test]
fn python_sdk_authenticates_with_a_bearer_token_and_is_refused_without() {
    let dir = tempfile::tempdir().expect("tempdir");
    let token = dir.path().join("token");
    std::fs::write(&token, "e2e-4b1f9c0d7a2e6b3f8c5d\n").expect("write token");
    run_client_with("--http-spawn", &["--token-file".as_ref(), token.as_os_str()]);
}

#[test]
fn python_sdk_sees_ask_progress_notifications_with_each_steps_thought() {
    assert!(
        python_has_mcp(),
        "the Python MCP SDK is missing: `python3 -m pip install -r tests/e2e/requirements.txt` (scripts/test does this)"
    );
    let output = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/e2e/ask_progress.py")
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .arg(repo_root().join("testdata/chinook/Chinook_Sqlite.sqlite"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("ask over MCP: 6 progress notifications, ok"), "{stdout}");
}
