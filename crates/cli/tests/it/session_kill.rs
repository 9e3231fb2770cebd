//! A graph session survives `kill -9` in the middle of a burst of style changes: after a restart
//! every change the server acknowledged is there, and the session file is intact.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// Starts `schemascope serve` on a free port and returns it with its address.
fn start(session_file: &std::path::Path) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--http", "127.0.0.1:0", "--no-watch", "--session-file"])
        .arg(session_file)
        .arg("demo:infrastructure")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schemascope starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).expect("the server prints its address");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|a| a.parse().ok());
    let addr = addr.unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr)
}

/// Calls a tool over `POST /v1/tools/{name}`; `None` when the connection failed (server gone).
fn call(addr: SocketAddr, tool: &str, arguments: &Value) -> Option<Value> {
    let body = arguments.to_string();
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let request = format!(
        "POST /v1/tools/{tool} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (_, payload) = response.split_once("\r\n\r\n")?;
    serde_json::from_str(payload).ok()
}

#[test]
fn every_acknowledged_change_survives_kill_9_mid_burst() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    let (mut server, addr) = start(&file);
    // Four clients style at once; the server is killed while they are still sending.
    let acknowledged: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|worker| {
                scope.spawn(move || {
                    let mut acked = Vec::new();
                    // At most 50 each: four workers stay under the session's 256 layers however late
                    // the kill comes on a loaded machine.
                    for i in 0..50 {
                        let name = format!("burst-{worker}-{i}");
                        let arguments =
                            json!({"selector": "type == 'server'", "style": {"color": "#ff0000", "size": 1.0 + (i % 5) as f64}, "layer_name": name});
                        match call(addr, "find_and_style_nodes", &arguments) {
                            Some(result) if result["success"] == true => acked.push(name),
                            Some(result) => panic!("a style change failed: {result}"),
                            None => break,
                        }
                    }
                    acked
                })
            })
            .collect();
        // Let a few dozen changes through, then kill without warning.
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let layers = call(addr, "describe_styles", &json!({}))
                .map(|r| r["data"]["layerCount"].as_u64().unwrap_or(0))
                .unwrap_or(0);
            if layers > 60 {
                break;
            }
        }
        server.kill().expect("kill -9");
        let _ = server.wait();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    });
    // Changes answered after the last count may have been cut by the kill; dozens got through.
    assert!(acknowledged.len() >= 30, "only {} changes before the kill", acknowledged.len());

    let (mut restarted, addr) = start(&file);
    let described =
        call(addr, "describe_styles", &json!({})).expect("the restarted server answers");
    let names: Vec<&str> = described["data"]["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    let lost: Vec<&String> =
        acknowledged.iter().filter(|name| !names.contains(&name.as_str())).collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged changes were lost, e.g. {:?}",
        lost.len(),
        acknowledged.len(),
        lost.first()
    );
    // The restored layers still style: a server node's computed style comes from a burst layer.
    let computed =
        call(addr, "describe_styles", &json!({"compute_for": "server-001"})).expect("answer");
    assert_eq!(computed["data"]["computedStyle"]["texture"]["color"], "#ff0000", "{computed}");
    restarted.kill().expect("stop");
    let _ = restarted.wait();
}
