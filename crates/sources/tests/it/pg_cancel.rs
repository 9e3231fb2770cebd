//! A PostgreSQL statement cancelled by something other than its statement timeout (another
//! session's pg_cancel_backend, an administrator) is reported with PostgreSQL's own reason,
//! never as a timeout; a timeout is still reported as one.

use std::sync::Arc;
use std::time::Duration;

use postgres::{Client, NoTls};
use schemascope_sources::SourceError;
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::{Database, PostgresDatabase};

/// Counts for as long as it is let run; nothing is stored (the set-returning function streams).
fn endless(marker: &str) -> String {
    format!("SELECT count(g) /* {marker} */ FROM (SELECT generate_series(1, 100000000000) AS g) s")
}

#[test]
fn a_statement_cancelled_by_another_session_says_so_and_is_not_a_timeout() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let db = Arc::new(PostgresDatabase::connect(&uri).expect("connect"));
    let marker = format!("schemascope_cancel_{}", std::process::id());
    let running = std::thread::spawn({
        let (db, sql) = (Arc::clone(&db), endless(&marker));
        move || db.run(&sql, &[], None, 60_000)
    });
    let mut admin = Client::connect(&uri, NoTls).expect("admin connection");
    let pattern = format!("%{marker}%");
    let mut cancelled = false;
    // At most 30 s of looking for the statement among the server's sessions.
    for _ in 0..1_500 {
        let rows = admin
            .query("SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()", &[&pattern])
            .expect("pg_stat_activity");
        if let Some(row) = rows.first() {
            let pid: i32 = row.get(0);
            cancelled =
                admin.query_one("SELECT pg_cancel_backend($1)", &[&pid]).expect("cancel").get(0);
            break;
        }
        if running.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(cancelled, "the statement was seen running and cancelled");
    let error = schemascope_core::sync::joined(running.join()).expect_err("cancelled");
    let text = error.to_string();
    assert!(!matches!(error, SourceError::Timeout { .. }), "{text}");
    assert!(text.contains("canceling statement due to user request"), "{text}");
    assert!(text.contains("not by the 60000 ms statement timeout"), "{text}");
    assert_eq!(error.class(), ErrorClass::Resource);

    // The statement timeout is still reported as one.
    let error = db.run(&endless("timeout"), &[], None, 300).expect_err("times out");
    assert!(matches!(error, SourceError::Timeout { timeout_ms: 300, .. }), "{error}");
    assert!(
        error.to_string().contains("statement cancelled after 300 ms (statement timeout)"),
        "{error}"
    );
}

/// Waits (at most 30 s) until a statement holding `marker` runs on the server.
fn wait_until_running(
    admin: &mut Client,
    marker: &str,
    statement: &std::thread::JoinHandle<Result<schemascope_sources::sql::QueryResult, SourceError>>,
) -> bool {
    let pattern = format!("%{marker}%");
    for _ in 0..1_500 {
        let rows = admin
            .query("SELECT 1 FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()", &[&pattern])
            .expect("pg_stat_activity");
        if !rows.is_empty() {
            return true;
        }
        if statement.is_finished() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A cancelled call cancels its statement on the server (the call's error says so, and the
/// server no longer runs it), and while one statement runs, another query on the same source
/// is answered on another connection.
#[test]
fn a_cancelled_call_cancels_its_statement_and_a_slow_one_holds_up_no_other() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let db = Arc::new(PostgresDatabase::connect(&uri).expect("connect"));
    let marker = format!("schemascope_call_cancel_{}", std::process::id());
    let token = schemascope_core::cancel::Cancel::new();
    let running = std::thread::spawn({
        let (db, sql, token) = (Arc::clone(&db), endless(&marker), token.clone());
        move || schemascope_core::cancel::with(&token, || db.run(&sql, &[], None, 60_000))
    });
    let mut admin = Client::connect(&uri, NoTls).expect("admin connection");
    assert!(wait_until_running(&mut admin, &marker, &running), "the statement was seen running");
    // Meanwhile another query is answered, on another connection of the source.
    let other = db
        .run("SELECT 42 AS answer", &[], None, 10_000)
        .expect("answered beside the running statement");
    assert_eq!(other.rows[0][0].to_json(), serde_json::json!(42));
    assert!(!running.is_finished(), "the first statement was still running");
    token.cancel_because("the client went away");
    let error = schemascope_core::sync::joined(running.join()).expect_err("cancelled");
    assert!(matches!(error, SourceError::Cancelled(_)), "{error}");
    assert!(error.to_string().contains("the client went away"), "{error}");
    let still = admin
        .query("SELECT 1 FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()", &[&format!("%{marker}%")])
        .expect("pg_stat_activity");
    assert!(still.is_empty(), "the server stopped the statement");
    // A call cancelled before its statement starts sends nothing.
    let error = schemascope_core::cancel::with(&token, || db.run("SELECT 1", &[], None, 10_000))
        .expect_err("cancelled before");
    assert!(matches!(error, SourceError::Cancelled(_)), "{error}");
}
