//! The command line given files that are not what they seem: a FIFO or `/dev/zero` as a source,
//! a value file, a token file, a session file or a retrieval configuration; a huge sparse source;
//! a docs directory with a FIFO and links out of it. Each is a clear error or a warning at once,
//! never a hang.

#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary and fails (killing it) if it has not finished within a minute.
fn schemascope(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(args)
        .env_remove("SCHEMASCOPE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("schemascope {args:?} blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn fifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

fn fails_with(args: &[&str], expected: &[&str]) {
    let out = schemascope(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    let err = stderr(&out);
    for part in expected {
        assert!(err.contains(part), "{args:?}: `{part}` not in: {err}");
    }
}

#[test]
fn fifos_devices_and_huge_files_given_as_sources_or_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pipe = dir.path().join("pipe.json");
    fifo(&pipe);
    let pipe = pipe.display().to_string();
    let sparse = dir.path().join("huge.ndjson");
    std::fs::File::create(&sparse).and_then(|f| f.set_len(1 << 40)).expect("sparse");
    let small = dir.path().join("small.json");
    std::fs::write(&small, r#"[{"a": 1}, {"a": 2}, {"a": 3}]"#).expect("write");

    fails_with(&["describe", &pipe], &["is a FIFO", "only regular files are read"]);
    fails_with(&["describe", "/dev/zero"], &["/dev/zero is a character device"]);
    fails_with(&["profile", "records:/dev/zero"], &["a character device"]);
    fails_with(&["describe", "sqlite:/dev/zero"], &["a character device"]);
    fails_with(
        &["describe", &sparse.display().to_string()],
        &["1099511627776 bytes", "4294967296-byte limit", "--max-file-bytes"],
    );
    fails_with(
        &["--max-file-bytes", "10", "describe", &small.display().to_string()],
        &["over the 10-byte limit"],
    );
    fails_with(
        &["describe", "--max-file-bytes", "0", &small.display().to_string()],
        &["at least 1"],
    );
    let fine = schemascope(&["describe", "--max-file-bytes", "1000", &small.display().to_string()]);
    assert!(fine.status.success(), "{}", stderr(&fine));
    fails_with(
        &["validate", "demo:sensors", "server::Temperature", &format!("@{pipe}")],
        &["is a FIFO"],
    );
    fails_with(
        &["validate", "demo:sensors", "server::Temperature", "@/dev/zero"],
        &["a character device"],
    );
}

#[test]
fn token_session_and_configuration_files_that_are_not_regular_files_stop_serve_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let pipe = pipe.display().to_string();
    fails_with(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-session-file",
            "--token-file",
            &pipe,
            "demo:sensors",
        ],
        &["token file", "is a FIFO"],
    );
    fails_with(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-session-file",
            "--token-file",
            "/dev/zero",
            "demo:sensors",
        ],
        &["a character device"],
    );
    let weak = dir.path().join("weak");
    std::fs::write(&weak, "x\n").expect("write");
    fails_with(
        &[
            "serve",
            "--http",
            "0.0.0.0:0",
            "--no-session-file",
            "--token-file",
            &weak.display().to_string(),
            "demo:sensors",
        ],
        &["too weak", "1 character"],
    );
    fails_with(
        &["serve", "--http", "127.0.0.1:0", "--session-file", &pipe, "demo:infrastructure"],
        &["session file", "is a FIFO"],
    );
    fails_with(
        &["serve", "--http", "127.0.0.1:0", "--session-file", "/dev/zero", "demo:infrastructure"],
        &["a character device"],
    );
    let chinook = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
        .display()
        .to_string();
    fails_with(
        &["search-docs", &chinook, "invoice totals", "--retrieval-config", &pipe],
        &["is a FIFO"],
    );
}

#[test]
fn search_docs_skips_hostile_docs_with_warnings_and_follows_links_out_only_when_asked() {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        outside.path().join("Genre.md"),
        "# Table: Genre\n\n## Purpose\n\nThe zebracorn catalogue of styles.\n",
    )
    .expect("write");
    let docs = tempfile::tempdir().expect("tempdir");
    fifo(&docs.path().join("Artist.md"));
    std::os::unix::fs::symlink("/dev/zero", docs.path().join("Track.md")).expect("symlink");
    std::os::unix::fs::symlink(outside.path().join("Genre.md"), docs.path().join("Genre.md"))
        .expect("symlink");
    std::fs::create_dir(docs.path().join("Invoice.md")).expect("dir");
    let chinook = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
        .display()
        .to_string();
    let dir = docs.path().display().to_string();
    let out =
        schemascope(&["search-docs", &chinook, "zebracorn catalogue", "--docs", &dir, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        envelope["data"]["chunks"],
        serde_json::json!([]),
        "nothing from outside: {envelope}"
    );
    let warnings = envelope["data"]["warnings"].to_string();
    for part in [
        "Artist.md",
        "is a FIFO",
        "Track.md",
        "Genre.md",
        "outside",
        "Invoice.md",
        "is a directory",
    ] {
        assert!(warnings.contains(part), "`{part}` not in {warnings}");
    }
    let out = schemascope(&[
        "search-docs",
        &chinook,
        "zebracorn catalogue",
        "--docs",
        &dir,
        "--docs-follow-links",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(envelope["data"]["chunks"][0]["table"], "Genre", "{envelope}");
}
