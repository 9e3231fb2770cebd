//! The graph view as an MCP App: `tests/e2e/mcp_app.py` starts a test host built on the official
//! MCP Apps SDK (`tests/mcp-app-host`), which runs `schemascope serve` over stdio with the
//! official MCP client and renders the view in sandboxed iframes in headless Chromium; the script
//! plays the model ("colour nodes by their importance" on les_miserables) and checks what the
//! apps draw, that they stay live through the host's tool calls, and what a person does in them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `name` on the PATH.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

#[test]
fn the_graph_view_renders_as_an_mcp_app_over_stdio() {
    let (Some(node), Some(deps)) = (
        std::env::var_os("SCHEMASCOPE_TEST_NODE"),
        std::env::var_os("SCHEMASCOPE_TEST_MCP_APP_HOST"),
    ) else {
        eprintln!(
            "SCHEMASCOPE_TEST_NODE / SCHEMASCOPE_TEST_MCP_APP_HOST are not set: run through scripts/test"
        );
        return;
    };
    let (Some(chromium), Some(chromedriver)) =
        (find_program("chromium"), find_program("chromedriver"))
    else {
        panic!(
            "chromium and chromedriver are not on the PATH: scripts/test installs the Debian packages chromium and chromium-driver"
        );
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp_app-screenshots");
    let graph = repo_root().join("testdata/graphs/les_miserables.json");
    let output = Command::new("python3")
        .current_dir(repo_root().join("tests/e2e"))
        .arg("mcp_app.py")
        .arg("--chromedriver")
        .arg(&chromedriver)
        .arg("--chromium")
        .arg(&chromium)
        .arg("--node")
        .arg(&node)
        .arg("--deps")
        .arg(&deps)
        .arg("--screenshots")
        .arg(&screenshots)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--session-file"])
        .arg(dir.path().join("sessions.sqlite"))
        .arg(&graph)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(" passed, 0 failed"),
        "the MCP App checks failed (screenshots in {}):\n{stdout}\n{stderr}",
        screenshots.display()
    );
    // The run made every check it names, not a shortened one.
    let passed = stdout.lines().filter(|line| line.starts_with("ok ")).count();
    assert!(passed >= 20, "only {passed} checks ran:\n{stdout}");
}
