//! Seed 004's use cases end to end: the real AimDB servers (`aimdb-fixture` on `aimdb-core` 1.1,
//! and on 2.0 when `SCHEMASCOPE_AIMDB_V3_FIXTURE` names it, as `scripts/test` does) in one
//! directory, `schemascope serve` over stdio, and `tests/e2e/aimdb_set.py` — the official Python
//! MCP SDK with a scripted model — setting records through `set_record`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running fixture; dropping it stops it.
struct Fixture(Child);

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The v1 fixture's binary: `SCHEMASCOPE_AIMDB_V1_FIXTURE`, else beside this binary (cargo builds
/// it with the workspace's tests).
fn v1_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SCHEMASCOPE_AIMDB_V1_FIXTURE") {
        return PathBuf::from(path);
    }
    let beside = Path::new(env!("CARGO_BIN_EXE_schemascope")).with_file_name("aimdb-fixture");
    assert!(
        beside.exists(),
        "the AimDB test instance is not built: `cargo build -p schemascope-aimdb-fixture` (cargo test --workspace builds it), or set SCHEMASCOPE_AIMDB_V1_FIXTURE"
    );
    beside
}

fn start(binary: &Path, socket: &Path) -> Fixture {
    let mut child = Command::new(binary)
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("reads");
    assert_eq!(line.trim(), "ready", "the fixture did not come up");
    Fixture(child)
}

#[test]
fn seed_004_use_cases_set_records_through_mcp() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut fixtures = vec![start(&v1_binary(), &dir.path().join("v1.sock"))];
    let mut sockets = vec![format!("v1={}", dir.path().join("v1.sock").display())];
    match std::env::var_os("SCHEMASCOPE_AIMDB_V3_FIXTURE") {
        Some(v3) => {
            fixtures.push(start(Path::new(&v3), &dir.path().join("v3.sock")));
            sockets.push(format!("v3={}", dir.path().join("v3.sock").display()));
        }
        None => eprintln!(
            "note: SCHEMASCOPE_AIMDB_V3_FIXTURE is not set; testing against the aimdb-core 1.1 server only"
        ),
    }
    let mut command = Command::new("python3");
    command
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .arg("tests/e2e/aimdb_set.py")
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .arg("--dir")
        .arg(dir.path());
    for socket in &sockets {
        command.arg("--socket").arg(socket);
    }
    let output = command.output().expect("python3 runs");
    drop(fixtures);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    // 2 on the first server, 16 per instance, 11 on the named source and its log, 3 read-only.
    crate::checks::all_passed(&stdout, 2 + 16 * sockets.len() + 11 + 3, &stdout);
}
