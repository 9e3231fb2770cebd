//! What a release publishes, as a new user gets it: the wheel `scripts/package` builds is
//! installed into a fresh virtual environment and runs `schemascope demo` and an MCP
//! `initialize` (official Python SDK) from another directory; the Claude Desktop bundle holds a
//! manifest the official `mcpb` accepts and a binary that runs; `server.json` meets the MCP
//! registry's schema — and each check refuses a broken copy, so it can fail.
//!
//! scripts/test builds the packages first (`SCHEMASCOPE_TEST_PACKAGE_DIR`): `cargo test` holds
//! the target directory's lock, so the build cannot run from inside a test.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory scripts/package wrote to, when scripts/test ran it.
fn package_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SCHEMASCOPE_TEST_PACKAGE_DIR").map(PathBuf::from);
    if dir.is_none() {
        eprintln!(
            "SCHEMASCOPE_TEST_PACKAGE_DIR is not set: run through scripts/test (or `scripts/package --dev --out DIR` and set it)"
        );
    }
    dir
}

fn one_with(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("package dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "one *{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().expect("one")
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

#[test]
fn the_wheel_installs_into_a_fresh_environment_and_serves() {
    let Some(dir) = package_dir() else { return };
    let wheel = one_with(&dir, ".whl");
    let work = tempfile::tempdir().expect("tempdir");
    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    // No index: the wheel carries everything it needs.
    run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "--no-index"]).arg(&wheel));
    let binary = venv.join("bin/schemascope");
    let version = run(Command::new(&binary).arg("--version"));
    assert_eq!(version.trim(), format!("schemascope {}", env!("CARGO_PKG_VERSION")));

    // `schemascope demo` from another directory: it serves and prints how to connect.
    let mut demo = Command::new(&binary)
        .current_dir(work.path())
        .args(["demo", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("demo starts");
    let stdout = demo.stdout.take().expect("stdout");
    let banner: Vec<String> = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .take_while(|line| line != "Press Ctrl-C to stop.")
        .collect();
    let _ = demo.kill();
    let _ = demo.wait();
    let endpoint = banner
        .iter()
        .find_map(|line| line.strip_prefix("MCP endpoint: "))
        .expect("the demo printed its MCP endpoint");
    assert!(endpoint.starts_with("http://127.0.0.1:") && endpoint.ends_with("/mcp"), "{endpoint}");
    // The stdio snippet names the installed binary by its absolute path.
    let command = banner
        .iter()
        .find_map(|line| line.trim().strip_prefix("\"command\": \""))
        .and_then(|rest| rest.strip_suffix("\","))
        .expect("the demo printed a stdio snippet");
    assert!(Path::new(command).is_absolute() && Path::new(command).is_file(), "{command}");

    // An MCP client starts the installed binary over stdio, as a client config does.
    let script = r#"
import sys, anyio
from mcp import Client, StdioServerParameters
async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["serve", "demo:infrastructure", "demo:sensors"], cwd="/")
    async with Client(server, mode="legacy") as client:
        tools = (await client.list_tools()).tools
        print(client.server_info.name, client.server_info.version, len(tools))
anyio.run(main)
"#;
    let answer = run(Command::new("python3").arg("-c").arg(script).arg(&binary));
    let words: Vec<&str> = answer.split_whitespace().collect();
    assert_eq!(words.first().copied(), Some("schemascope"), "{answer}");
    assert_eq!(words.get(1).copied(), Some(env!("CARGO_PKG_VERSION")), "{answer}");
    let tools: usize = words.get(2).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(tools >= 10, "{answer}");

    // The README's path: the installed binary serves a configuration file of two sources — a
    // SQLite file and PostgreSQL with its password from the environment — to an MCP client.
    let mut client = Command::new("python3");
    client
        .current_dir(repo_root())
        .arg("tests/e2e/config_client.py")
        .arg(&binary)
        .arg(repo_root().join("testdata/chinook/Chinook_Sqlite.sqlite"));
    match std::env::var("SCHEMASCOPE_TEST_POSTGRES_SECRET") {
        Ok(uri) => {
            client.arg("--postgres").arg(uri);
        }
        Err(_) => eprintln!("SCHEMASCOPE_TEST_POSTGRES_SECRET is not set: the SQLite source only"),
    }
    let served = run(&mut client);
    assert!(served.lines().any(|l| l.ends_with(" passed, 0 failed")), "{served}");
}

#[test]
fn the_bundle_holds_a_valid_manifest_and_a_binary_that_runs() {
    let Some(dir) = package_dir() else { return };
    let bundle = one_with(&dir, ".mcpb");
    let work = tempfile::tempdir().expect("tempdir");
    let unpacked = work.path().join("bundle");
    // Unpacked keeping each entry's mode, as a client installing the bundle does; the mode is
    // printed for the executable check.
    let unzip = r#"
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as bundle:
    for info in bundle.infolist():
        path = bundle.extract(info, sys.argv[2])
        os.chmod(path, (info.external_attr >> 16) & 0o777)
        print(info.filename, oct((info.external_attr >> 16) & 0o777))
"#;
    let listing = run(Command::new("python3").args(["-c", unzip]).arg(&bundle).arg(&unpacked));
    assert!(listing.lines().any(|l| l == "server/schemascope 0o755"), "{listing}");
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(unpacked.join("manifest.json")).expect("manifest"),
    )
    .expect("manifest JSON");
    assert_eq!(manifest["name"], "schemascope");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["server"]["entry_point"], "server/schemascope");
    let binary = unpacked.join("server/schemascope");
    let version = run(Command::new(&binary).arg("--version"));
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");

    // The official validator accepts it, and refuses it without an author.
    let mcpb = PathBuf::from(std::env::var_os("HOME").expect("HOME"))
        .join(".cache/schemascope-tools/node_modules/.bin/mcpb");
    run(Command::new(&mcpb).arg("validate").arg(unpacked.join("manifest.json")));
    let mut broken = manifest.clone();
    broken.as_object_mut().expect("object").remove("author");
    let broken_path = work.path().join("broken.json");
    std::fs::write(&broken_path, broken.to_string()).expect("write");
    let refused = Command::new(&mcpb).arg("validate").arg(&broken_path).output().expect("runs");
    assert!(!refused.status.success(), "mcpb validate accepted a manifest without an author");
}

#[test]
fn server_json_meets_the_registry_schema() {
    let Some(dir) = package_dir() else { return };
    let server = dir.join("server.json");
    let schema = repo_root().join("testdata/mcp-registry/server.schema.json");
    let check = r#"
import json, sys, jsonschema
server, schema = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
validator = jsonschema.Draft7Validator(schema)
errors = list(validator.iter_errors(server))
broken = dict(server, description="x" * 101)
print(len(errors), len(list(validator.iter_errors(broken))), server["version"], server["packages"][0]["identifier"])
"#;
    let answer = run(Command::new("python3").arg("-c").arg(check).arg(&server).arg(&schema));
    let words: Vec<&str> = answer.split_whitespace().collect();
    assert_eq!(words.first().copied(), Some("0"), "server.json has errors: {answer}");
    assert_ne!(words.get(1).copied(), Some("0"), "a 101-character description passed: {answer}");
    assert_eq!(words.get(2).copied(), Some(env!("CARGO_PKG_VERSION")), "{answer}");
    assert_eq!(words.get(3).copied(), Some("schemascope"), "{answer}");
}
