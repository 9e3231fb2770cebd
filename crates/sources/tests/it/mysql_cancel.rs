//! A MariaDB statement past its time is stopped by the server and reported as a timeout; one
//! stopped by another session says so and is no timeout; a cancelled call stops its statement
//! on the server (`KILL QUERY`), and while one statement runs another query is answered.

use std::sync::Arc;
use std::time::Duration;

use mysql::prelude::Queryable;
use schemascope_sources::SourceError;
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::{Database, MySqlDatabase};

/// Counts for as long as it is let run (43 billion combinations), storing nothing.
fn endless(marker: &str) -> String {
    format!(
        "SELECT COUNT(*) /* {marker} */ FROM Track a, Track b, Track c WHERE a.Milliseconds + b.Milliseconds + c.Milliseconds < 0"
    )
}

/// The owner's login: a user sees (and stops) only its own sessions' statements.
fn owner(uri: &str) -> String {
    uri.replacen("schemascope_ro:", "schemascope:", 1)
}

/// A plain client connection of the same login, to watch and stop statements from outside.
fn admin(uri: &str) -> mysql::Conn {
    mysql::Conn::new(mysql::Opts::from_url(uri).expect("uri")).expect("admin connection")
}

/// The connection ids running a statement holding `marker` (at most 30 s of looking).
fn running_ids(
    admin: &mut mysql::Conn,
    marker: &str,
    statement: &std::thread::JoinHandle<Result<schemascope_sources::sql::QueryResult, SourceError>>,
) -> Vec<u64> {
    for _ in 0..1_500 {
        let ids: Vec<u64> = admin
            .exec(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND COMMAND <> 'Sleep' AND ID <> CONNECTION_ID()",
                (format!("%{marker}%"),),
            )
            .expect("processlist");
        if !ids.is_empty() || statement.is_finished() {
            return ids;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Vec::new()
}

#[test]
fn statements_stop_at_their_time_and_when_another_session_stops_them() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let uri = owner(&uri);
    let db = Arc::new(MySqlDatabase::connect(&uri).expect("connect"));
    let error = db.run(&endless("timeout"), &[], None, 300).expect_err("times out");
    assert!(matches!(error, SourceError::Timeout { timeout_ms: 300, .. }), "{error}");

    let marker = format!("schemascope_kill_{}", std::process::id());
    let running = std::thread::spawn({
        let (db, sql) = (Arc::clone(&db), endless(&marker));
        move || db.run(&sql, &[], None, 60_000)
    });
    let mut admin = admin(&uri);
    let ids = running_ids(&mut admin, &marker, &running);
    assert_eq!(ids.len(), 1, "the statement was seen running");
    admin.query_drop(format!("KILL QUERY {}", ids[0])).expect("kill");
    let error = schemascope_core::sync::joined(running.join()).expect_err("stopped");
    assert!(!matches!(error, SourceError::Timeout { .. }), "{error}");
    assert!(error.to_string().contains("interrupted"), "{error}");
    assert_eq!(error.class(), ErrorClass::Resource);
    // The connection it ran on is used again.
    assert_eq!(db.query("SELECT 7", &[]).expect("after")[0][0].as_count(), 7);
}

#[test]
fn a_cancelled_call_stops_its_statement_and_a_slow_one_holds_up_no_other() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else { return };
    let uri = owner(&uri);
    let db = Arc::new(MySqlDatabase::connect(&uri).expect("connect"));
    let marker = format!("schemascope_call_cancel_{}", std::process::id());
    let token = schemascope_core::cancel::Cancel::new();
    let running = std::thread::spawn({
        let (db, sql, token) = (Arc::clone(&db), endless(&marker), token.clone());
        move || schemascope_core::cancel::with(&token, || db.run(&sql, &[], None, 60_000))
    });
    let mut admin = admin(&uri);
    assert_eq!(running_ids(&mut admin, &marker, &running).len(), 1, "seen running");
    let other = db.run("SELECT 42 AS answer", &[], None, 10_000).expect("answered beside it");
    assert_eq!(other.rows[0][0].to_json(), serde_json::json!(42));
    assert!(!running.is_finished(), "the first statement was still running");
    token.cancel_because("the client went away");
    let error = schemascope_core::sync::joined(running.join()).expect_err("cancelled");
    assert!(matches!(error, SourceError::Cancelled(_)), "{error}");
    assert!(error.to_string().contains("the client went away"), "{error}");
    let still: Vec<u64> = admin
        .exec(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND COMMAND <> 'Sleep' AND ID <> CONNECTION_ID()",
            (format!("%{marker}%"),),
        )
        .expect("processlist");
    assert!(still.is_empty(), "the server stopped the statement");
    let error = schemascope_core::cancel::with(&token, || db.run("SELECT 1", &[], None, 10_000))
        .expect_err("cancelled before");
    assert!(matches!(error, SourceError::Cancelled(_)), "{error}");
}
