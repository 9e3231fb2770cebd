//! The graph web view in a real browser: `schemascope demo --http` serves the page, headless
//! Chromium (driven over WebDriver by chromedriver) draws it, and the official Python MCP SDK
//! styles and reads the selection over MCP. The browser side is `tests/e2e/web_view.py`: it
//! checks that the page renders the demo graph, that a style applied over MCP changes the drawn
//! colour (pixels of a screenshot), and that clicks select nodes (`describe_selection`). Then,
//! while a burst of style changes is under way, this harness kills the server with SIGKILL and
//! restarts it on the same port and session file: every acknowledged change must be back, and the
//! open page must reconnect by itself and draw the restored state.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `name` on the PATH.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The demo server, killed when dropped (also when an assertion fails).
struct Server {
    child: Child,
    stderr: PathBuf,
}

/// The server's token, in a file only its owner reads: the whole run is authenticated (the
/// browser through the cookie `/?token=` sets, HTTP and MCP calls with the bearer header).
fn token_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("token");
    if !path.exists() {
        std::fs::write(&path, "web-view-3c9e1b7f5a2d\n").expect("write the token");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .expect("chmod the token");
        }
    }
    path
}

impl Server {
    /// Starts `schemascope demo --http ADDR` (port 0 picks one) with its session file in `dir`
    /// and reads the page's URL from its banner.
    fn start(dir: &Path, addr: &str) -> (Self, String) {
        let stderr = dir.join("server.stderr");
        let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
            .args(["demo", "--http", addr, "--session-file"])
            .arg(dir.join("sessions.sqlite"))
            .arg("--token-file")
            .arg(token_file(dir))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&stderr)
                    .expect("open the server's stderr file"),
            )
            .spawn()
            .expect("start schemascope demo");
        let stdout = child.stdout.take().expect("the server's stdout");
        let (found, url) = mpsc::channel();
        // Port 0 picks a free port; the banner says which. The thread keeps reading so the
        // server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("Graph view (open in a browser): ") {
                    // Without the `?token=<your token>` hint.
                    let _ = found.send(rest.split('?').next().unwrap_or(rest).trim().to_string());
                }
            }
        });
        let server = Self { child, stderr };
        match url.recv_timeout(Duration::from_secs(120)) {
            Ok(url) => (server, url),
            Err(_) => panic!(
                "`schemascope demo --http 127.0.0.1:0` printed no \"Graph view\" URL; its stderr:\n{}",
                server.stderr_text()
            ),
        }
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Server {
    /// Kills the server with SIGKILL (what `Child::kill` sends on Unix) and reaps it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

#[test]
fn chromium_renders_the_demo_graph_shows_mcp_styles_and_selects_on_click() {
    let missing: Vec<&str> =
        ["chromium", "chromedriver"].into_iter().filter(|p| find_program(p).is_none()).collect();
    assert!(
        missing.is_empty(),
        "{} not found on the PATH: the web view's browser test needs headless Chromium; `.ci/run` (scripts/test) installs the Debian packages with `apt-get install -y chromium chromium-driver`",
        missing.join(" and ")
    );
    let python_has_mcp =
        Command::new("python3").args(["-c", "import mcp"]).status().is_ok_and(|s| s.success());
    assert!(
        python_has_mcp,
        "the Python MCP SDK is missing: `python3 -m pip install -r tests/e2e/requirements.txt` (scripts/test does this)"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    // Outside the tempdir, so they are still there to look at when the test fails.
    let screenshots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web_view-screenshots");
    let (mut server, url) = Server::start(dir.path(), "127.0.0.1:0");
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let mut browser = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/e2e/web_view.py")
        .arg("--chromedriver")
        .arg(find_program("chromedriver").expect("chromedriver"))
        .arg("--chromium")
        .arg(find_program("chromium").expect("chromium"))
        .args(["--url", &url, "--restart"])
        .arg("--token-file")
        .arg(token_file(dir.path()))
        .arg("--screenshots")
        .arg(&screenshots)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut answers = browser.stdin.take().expect("the browser script's stdin");
    let stderr_pipe = browser.stderr.take().expect("the browser script's stderr");
    let stderr_reader =
        std::thread::spawn(move || std::io::read_to_string(stderr_pipe).unwrap_or_default());
    let mut lines = Vec::new();
    for line in BufReader::new(browser.stdout.take().expect("the browser script's stdout"))
        .lines()
        .map_while(Result::ok)
    {
        // The script asks for the server to be killed, then restarted on the same port and file.
        let answer = match line.trim() {
            "KILL-ME" => {
                server.kill();
                Some("killed")
            }
            "RESTART-ME" => {
                server = Server::start(dir.path(), &addr).0;
                Some("restarted")
            }
            _ => None,
        };
        if let Some(answer) = answer {
            writeln!(answers, "{answer}")
                .and_then(|()| answers.flush())
                .expect("answer the browser script");
        }
        lines.push(line);
    }
    let status = browser.wait().expect("the browser script ends");
    let output = std::process::Output {
        status,
        stdout: lines.join("\n").into_bytes(),
        stderr: stderr_reader.join().unwrap_or_default().into_bytes(),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report = format!(
        "--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server stderr\n{}\n--- screenshots in {}",
        server.stderr_text(),
        screenshots.display()
    );
    assert!(output.status.success(), "the browser test failed\n{report}");
    crate::checks::all_passed(&stdout, 21, &report);
    eprintln!("{stdout}");
}
