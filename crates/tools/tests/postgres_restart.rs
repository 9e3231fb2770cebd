//! PostgreSQL restarted under a loaded source: while the server is down every request fails at
//! once with an error naming the server and what to check, and once it is back the very next
//! request succeeds — on the same registry, without reloading the source or restarting
//! schemascope — and a table first profiled during the outage gets its real statistics.
//!
//! The server restarted is a second private instance of scripts/postgres (its own data
//! directory and port, Chinook loaded), so the tests that share the main one are undisturbed.
//! Runs when `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it: PostgreSQL is installed).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{ok, registry};
use schemascope_tools::*;
use serde_json::{Value, json};

/// The second instance: `SCHEMASCOPE_TEST_PG_RESTART_PORT` (default 54339), data beside the
/// main instance's.
struct Instance {
    dir: PathBuf,
    port: String,
}

impl Instance {
    fn new() -> Self {
        let main = std::env::var("SCHEMASCOPE_PG_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cache/schemascope-pg"));
        let dir = PathBuf::from(format!("{}-restart", main.display()));
        let port = std::env::var("SCHEMASCOPE_TEST_PG_RESTART_PORT").unwrap_or_else(|_| "54339".into());
        Self { dir, port }
    }

    /// Runs `scripts/postgres <command>` for this instance; its last line of output.
    fn script(&self, command: &str) -> Result<String, String> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres");
        let out = Command::new("bash")
            .arg(script)
            .arg(command)
            .env("SCHEMASCOPE_PG_DIR", &self.dir)
            .env("SCHEMASCOPE_PG_PORT", &self.port)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("scripts/postgres {command} failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default().to_string())
    }
}

/// Starts the instance again when the test ends, passed or failed.
struct RunningAgain<'a>(&'a Instance);

impl Drop for RunningAgain<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.0.script("start") {
            eprintln!("could not start the restart instance again: {e}");
        }
    }
}

fn genres(registry: &Registry) -> ToolResult {
    execute_query(
        registry,
        ExecuteQueryParams { source: Some("pg".into()), query: json!("SELECT COUNT(*) AS n FROM \"Genre\""), ..Default::default() },
    )
}

/// A request made while the server is down: it fails, and returns rather than hangs (the
/// bound is far above the 5 s connect timeout; a refused connection fails at once).
fn during_outage(registry: &Registry, port: &str) {
    let started = Instant::now();
    let failed = genres(registry);
    assert!(started.elapsed() < Duration::from_secs(30), "a request during the outage hung");
    assert!(!failed.success, "{}", failed.message);
    assert_eq!(failed.data["class"], "resource", "{}", failed.data);
    assert!(failed.message.contains(&format!("127.0.0.1:{port}/chinook")), "names the server: {}", failed.message);
    assert!(failed.message.contains("is the server running"), "says what to check: {}", failed.message);
}

#[test]
fn a_restarted_postgres_server_fails_requests_clearly_then_serves_them_again() {
    if std::env::var("SCHEMASCOPE_TEST_POSTGRES").is_err() {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL");
        return;
    }
    let instance = Instance::new();
    let uri = instance.script("start").expect("start the restart instance");
    let _again = RunningAgain(&instance);
    let registry = registry(&[&format!("pg={uri}")]);
    assert_eq!(ok(genres(&registry))["rows"], json!([[25]]));

    // Restarted between two requests: the connection the source holds is dead, and the next
    // request gets a new one without the caller seeing an error.
    instance.script("stop").expect("stop");
    instance.script("start").expect("start");
    assert_eq!(ok(genres(&registry))["rows"], json!([[25]]), "the first request after a restart succeeds");

    // Down: every request fails clearly, and a table profiled now has no statistics yet.
    instance.script("stop").expect("stop");
    during_outage(&registry, &instance.port);
    during_outage(&registry, &instance.port);
    let artist = || {
        describe_property(
            &registry,
            DescribePropertyParams { source: Some("pg".into()), collection: Some("Artist".into()), property: "Name".into(), ..Default::default() },
        )
    };
    let down = artist();
    assert!(!down.success || down.data["totalCount"] != json!(275), "no statistics while the server is down: {}", down.data);
    let schema =
        ok(describe_schema(&registry, DescribeSchemaParams { source: Some("pg".into()), collection: Some("Album".into()), ..Default::default() }));
    let error = schema.pointer("/collections/0/profileError").and_then(Value::as_str).unwrap_or_default().to_string();
    assert!(error.contains("is the server running"), "the profile's error says why: {schema}");

    // Back: the same registry serves again, and the tables profiled during the outage are
    // profiled now.
    instance.script("start").expect("start");
    assert_eq!(ok(genres(&registry))["rows"], json!([[25]]));
    let up = ok(artist());
    assert_eq!((&up["totalCount"], &up["distinctStrings"]), (&json!(275), &json!(275)), "{up}");
    let schema =
        ok(describe_schema(&registry, DescribeSchemaParams { source: Some("pg".into()), collection: Some("Album".into()), ..Default::default() }));
    assert_eq!(schema.pointer("/collections/0/profileError"), None, "{schema}");
    assert_eq!(
        schema.pointer("/collections/0/itemCount").or(schema.pointer("/collections/0/count")).cloned().unwrap_or(Value::Null),
        json!(347),
        "{schema}"
    );
}
