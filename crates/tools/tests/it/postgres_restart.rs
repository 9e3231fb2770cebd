//! PostgreSQL restarted under a loaded source: while the server is down every request fails at
//! once with an error naming the server and what to check, and once it is back the very next
//! request succeeds — on the same registry, without reloading the source or restarting
//! schemascope — and a table first profiled during the outage gets its real statistics.
//!
//! The server restarted is a second private instance of scripts/postgres (its own data
//! directory and port, Chinook loaded), so the tests that share the main one are undisturbed.
//! Runs when `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it: PostgreSQL is installed).
//!
//! A statement whose connection is lost while it runs is not sent again on a new connection
//! (it may have run): the caller gets an error saying so, and the server saw it run once.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{ok, registry};

/// The tests here share the second instance, which one of them stops.
static INSTANCE: Mutex<()> = Mutex::new(());

/// The second instance: `SCHEMASCOPE_TEST_PG_RESTART_PORT` (default 54339), data beside the
/// main instance's.
struct Instance {
    dir: PathBuf,
    port: String,
}

impl Instance {
    fn new() -> Self {
        let main = std::env::var("SCHEMASCOPE_PG_DIR").map(PathBuf::from).unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/schemascope-pg")
        });
        let dir = PathBuf::from(format!("{}-restart", main.display()));
        let port =
            std::env::var("SCHEMASCOPE_TEST_PG_RESTART_PORT").unwrap_or_else(|_| "54339".into());
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
            return Err(format!(
                "scripts/postgres {command} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
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

fn genres(registry: &Services) -> ToolResult {
    execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: Some("pg".into()),
            query: json!("SELECT COUNT(*) AS n FROM \"Genre\""),
            ..Default::default()
        },
    )
}

/// A request made while the server is down: it fails, and returns rather than hangs (the
/// bound is far above the 5 s connect timeout; a refused connection fails at once).
fn during_outage(registry: &Services, port: &str) {
    let started = Instant::now();
    let failed = genres(registry);
    assert!(started.elapsed() < Duration::from_secs(30), "a request during the outage hung");
    assert!(!failed.success, "{}", failed.message);
    assert_eq!(failed.data["class"], "resource", "{}", failed.data);
    assert!(
        failed.message.contains(&format!("127.0.0.1:{port}/chinook")),
        "names the server: {}",
        failed.message
    );
    assert!(
        failed.message.contains("is the server running"),
        "says what to check: {}",
        failed.message
    );
}

#[test]
fn a_restarted_postgres_server_fails_requests_clearly_then_serves_them_again() {
    if std::env::var("SCHEMASCOPE_TEST_POSTGRES").is_err() {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    }
    let _alone = INSTANCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let instance = Instance::new();
    let uri = instance.script("start").expect("start the restart instance");
    let _again = RunningAgain(&instance);
    let registry = registry(&[&format!("pg={uri}")]);
    assert_eq!(ok(genres(&registry))["rows"], json!([[25]]));

    // Restarted between two requests: the connection the source holds is dead, and the next
    // request gets a new one without the caller seeing an error.
    instance.script("stop").expect("stop");
    instance.script("start").expect("start");
    assert_eq!(
        ok(genres(&registry))["rows"],
        json!([[25]]),
        "the first request after a restart succeeds"
    );

    // Down: every request fails clearly, and a table profiled now has no statistics yet.
    instance.script("stop").expect("stop");
    during_outage(&registry, &instance.port);
    during_outage(&registry, &instance.port);
    let artist = || {
        describe_property(
            &registry,
            DescribePropertyParams {
                source: Some("pg".into()),
                collection: Some("Artist".into()),
                property: "Name".into(),
                ..Default::default()
            },
        )
    };
    let down = artist();
    assert!(
        !down.success || down.data["totalCount"] != json!(275),
        "no statistics while the server is down: {}",
        down.data
    );
    let schema = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: Some("pg".into()),
            collection: Some("Album".into()),
            ..Default::default()
        },
    ));
    let error = schema
        .pointer("/collections/0/profileError")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("is the server running"), "the profile's error says why: {schema}");

    // Back: the same registry serves again, and the tables profiled during the outage are
    // profiled now.
    instance.script("start").expect("start");
    assert_eq!(ok(genres(&registry))["rows"], json!([[25]]));
    let up = ok(artist());
    assert_eq!((&up["totalCount"], &up["distinctStrings"]), (&json!(275), &json!(275)), "{up}");
    let schema = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: Some("pg".into()),
            collection: Some("Album".into()),
            ..Default::default()
        },
    ));
    assert_eq!(schema.pointer("/collections/0/profileError"), None, "{schema}");
    assert_eq!(
        schema
            .pointer("/collections/0/itemCount")
            .or(schema.pointer("/collections/0/count"))
            .cloned()
            .unwrap_or(Value::Null),
        json!(347),
        "{schema}"
    );
}

#[test]
fn a_statement_whose_connection_is_lost_while_it_runs_is_not_sent_again() {
    use schemascope_sources::sql::{Database, PostgresDatabase, SqlValue};
    if std::env::var("SCHEMASCOPE_TEST_POSTGRES").is_err() {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    }
    let _alone = INSTANCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let instance = Instance::new();
    let uri = instance.script("start").expect("start the restart instance");
    // The source's connection (as execute_query uses it) and a watcher; the watcher ends the
    // source's backend with pg_terminate_backend, which only a plain client may call.
    let db = std::sync::Arc::new(PostgresDatabase::connect(&uri).expect("connect"));
    let watcher = PostgresDatabase::connect(&uri).expect("connect the watcher");
    let mut admin =
        postgres::Client::connect(&uri, postgres::NoTls).expect("connect the admin client");
    let pid = |rows: Vec<Vec<SqlValue>>| match rows.first().map(Vec::as_slice) {
        Some([SqlValue::Integer(pid)]) => *pid,
        other => panic!("no pid: {other:?}"),
    };
    let own =
        pid(watcher.query("SELECT pg_backend_pid()::int8", &[]).expect("the watcher's backend"));
    let running = std::thread::spawn({
        let db = std::sync::Arc::clone(&db);
        // Counts for as long as it is let run (a set-returning function in the select list
        // streams: nothing is stored), within the allow-list, unlike pg_sleep.
        move || {
            db.run(
                "SELECT count(g) FROM (SELECT generate_series(1, 100000000000) AS g) s",
                &[],
                Some(10),
                60_000,
            )
        }
    });
    // Every backend seen running the count (whichever connection of the source's pool runs
    // it), until the statement returns; the first one seen is ended.
    let runners = format!(
        "SELECT pid::int8 FROM pg_stat_activity WHERE pid <> {own} AND state = 'active' AND backend_type = 'client backend' \
         AND pid <> pg_backend_pid() AND query LIKE '%generate_series(1, 100000000000)%'"
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut first = None;
    while !running.is_finished() {
        let rows = watcher.query(&runners, &[]).expect("pg_stat_activity");
        seen.extend(
            rows.iter().filter_map(|r| r.first().and_then(SqlValue::as_f64)).map(|p| p as i64),
        );
        if first.is_none()
            && let Some(&pid) = seen.iter().next()
        {
            admin
                .execute(&format!("SELECT pg_terminate_backend({pid})"), &[])
                .expect("terminate the source's backend");
            first = Some(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = first.is_some();
    let first = first.unwrap_or_default();
    let result = running.join().expect("the statement's thread");
    assert!(killed, "the statement was seen running");
    let error = result
        .expect_err("a statement cut off mid-run is an error, not a result from a second run");
    assert!(error.to_string().contains("lost while the statement was running"), "{error}");
    assert!(error.to_string().contains("not sent again"), "{error}");
    assert_eq!(seen, [first].into(), "only the first backend ran the statement");
    // The next statement gets a new connection.
    let next =
        pid(db.query("SELECT pg_backend_pid()::int8", &[]).expect("the next statement runs"));
    assert_ne!(next, first);
}
