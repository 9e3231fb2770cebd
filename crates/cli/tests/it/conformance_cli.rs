//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, its `server`
//! scenarios) against `schemascope serve --http`: every scenario passes except those listed with
//! their reason in `tests/conformance/expected-failures.yml` (the suite fails the run on any
//! other failure, and on a listed scenario that passes).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_official_conformance_suite_passes_but_for_the_listed_fixtures() {
    let (Some(node), Some(suite)) = (
        std::env::var_os("SCHEMASCOPE_TEST_NODE"),
        std::env::var_os("SCHEMASCOPE_TEST_CONFORMANCE"),
    ) else {
        eprintln!(
            "SCHEMASCOPE_TEST_NODE / SCHEMASCOPE_TEST_CONFORMANCE are not set: run through scripts/test"
        );
        return;
    };
    let mut server = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-watch",
            "demo:infrastructure",
            "demo:sensors",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            let start = line.find("http://")?;
            let rest = &line[start..];
            let end = rest.find("/mcp")?;
            Some(rest[..end + 4].to_string())
        })
        .expect("the server printed its URL");
    // Kept reading: a server whose standard error is closed dies of SIGPIPE at its next line.
    std::thread::spawn(move || lines.for_each(drop));
    let results = tempfile::tempdir().expect("tempdir");
    let output = Command::new(node)
        .arg(suite)
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(repo_root().join("tests/conformance/expected-failures.yml"))
        .arg("--output-dir")
        .arg(results.path())
        .output()
        .expect("the suite runs");
    let _ = server.kill();
    let _ = server.wait();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = text.rsplit("=== SUMMARY ===").next().unwrap_or_default();
    assert!(output.status.success(), "conformance suite failed:\n{summary}");
    // The suite ran for real: the scenarios that must pass did.
    for scenario in [
        "server-initialize",
        "tools-list",
        "completion-complete",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
    ] {
        assert!(summary.contains(&format!("✓ {scenario}:")), "{scenario} did not pass:\n{summary}");
    }
}
