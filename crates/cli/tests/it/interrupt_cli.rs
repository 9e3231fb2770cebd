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

/// Tester round 2 (issue 33): a MariaDB connection the server dropped killed `serve` (SIGPIPE's
/// default action on the next write to it): the server keeps serving and reconnects.
#[test]
fn a_dropped_database_connection_does_not_stop_the_server() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!("SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test");
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", &format!("my={uri}"), "--http", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serves");
    let call = |sql: &str| {
        let output = Command::new("curl")
            .args(["-s", "--max-time", "30", "-X", "POST", "-H", "content-type: application/json"])
            .arg(format!("http://127.0.0.1:{port}/v1/tools/execute_query"))
            .arg("-d")
            .arg(format!(r#"{{"source":"my","query":"{sql}"}}"#))
            .output()
            .expect("curl");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !call("SELECT 1").contains("\"success\":true") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    // The server drops this server's connections (found by their local ports: other tests'
    // connections of the same login are left alone).
    let (user, rest) = uri.trim_start_matches("mysql://").split_once(':').expect("user");
    let (password, rest) = rest.split_once('@').expect("password");
    let (host, port_db) = rest.split('/').next().and_then(|a| a.split_once(':')).expect("host");
    let ours = local_ports_of(server.id());
    let listed = Command::new("mariadb")
        .args(["--no-defaults", "-N", "-h", host, "-P", port_db, "-u", user])
        .arg(format!("-p{password}"))
        .arg("-e")
        .arg(format!("SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE USER = '{user}'"))
        .output()
        .expect("mariadb client");
    let kills: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| {
            let (id, host) = line.split_once('\t')?;
            let port: u16 = host.rsplit(':').next()?.parse().ok()?;
            ours.contains(&port).then(|| format!("KILL CONNECTION {id}"))
        })
        .collect();
    assert!(!kills.is_empty(), "the server's connections are found: {ours:?}");
    for statement in kills {
        let _ = Command::new("mariadb")
            .args(["--no-defaults", "-h", host, "-P", port_db, "-u", user])
            .arg(format!("-p{password}"))
            .arg("-e")
            .arg(statement)
            .output();
    }
    let again = call("SELECT 2");
    let alive = server.try_wait().expect("status").is_none();
    let _ = server.kill();
    let _ = server.wait();
    assert!(alive, "the server died: {again}");
    assert!(again.contains("\"rows\":[[2]]"), "{again}");
}

/// The local TCP ports of process `pid`'s sockets (Linux: its socket inodes in /proc/net/tcp).
fn local_ports_of(pid: u32) -> std::collections::HashSet<u16> {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let mut ports = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(inode)) = (fields.get(1), fields.get(9)) else { continue };
            if inodes.contains(*inode)
                && let Some(port) =
                    local.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok())
            {
                ports.insert(port);
            }
        }
    }
    ports
}
