//! Ctrl-C during a one-shot command stops the statement on the database server, not only the
//! process (MariaDB would otherwise run it to its time limit). Against the test MariaDB
//! (`SCHEMASCOPE_TEST_MARIADB`, set by scripts/test); without it the test says so and passes.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A statement that runs for minutes: 43 billion rows of a cross join.
const ENDLESS: &str = "SELECT COUNT(*) FROM Track a, Track b, Track c WHERE a.Milliseconds + b.Milliseconds + c.Milliseconds < -1";

/// How many of the server's running statements are ENDLESS (this login sees its own).
fn running(uri: &str) -> usize {
    let output = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["execute", uri])
        .arg("SELECT 1")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let (user, rest) = uri.trim_start_matches("mysql://").split_once(':').expect("user");
    let (password, rest) = rest.split_once('@').expect("password");
    let (host, port) = rest.split('/').next().and_then(|a| a.split_once(':')).expect("host");
    let listed = Command::new("mariadb")
        .args(["--no-defaults", "-N", "-h", host, "-P", port, "-u", user])
        .arg(format!("-p{password}"))
        .arg("-e")
        .arg("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%Milliseconds < -1%' AND INFO NOT LIKE '%PROCESSLIST%'")
        .output()
        .expect("mariadb client");
    String::from_utf8_lossy(&listed.stdout).trim().parse().unwrap_or(usize::MAX)
}

#[test]
fn ctrl_c_stops_the_statement_on_the_server() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!("SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test");
        return;
    };
    let child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["execute", &uri, ENDLESS, "--timeout-ms", "120000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    // Wait until the server runs it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while running(&uri) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(running(&uri), 1, "the statement runs on the server");
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exited = child.wait_with_output().expect("exits");
    assert!(!exited.status.success());
    let said = String::from_utf8_lossy(&exited.stderr);
    assert!(said.contains("interrupted"), "{said}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(&uri) != 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(running(&uri), 0, "the statement was stopped on the server");
}
