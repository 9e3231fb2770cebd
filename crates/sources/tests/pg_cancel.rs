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
        eprintln!("SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL");
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
            cancelled = admin.query_one("SELECT pg_cancel_backend($1)", &[&pid]).expect("cancel").get(0);
            break;
        }
        if running.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(cancelled, "the statement was seen running and cancelled");
    let error = running.join().expect("the statement's thread").expect_err("cancelled");
    let text = error.to_string();
    assert!(!matches!(error, SourceError::Timeout { .. }), "{text}");
    assert!(text.contains("canceling statement due to user request"), "{text}");
    assert!(text.contains("not by the 60000 ms statement timeout"), "{text}");
    assert_eq!(error.class(), ErrorClass::Resource);

    // The statement timeout is still reported as one.
    let error = db.run(&endless("timeout"), &[], None, 300).expect_err("times out");
    assert!(matches!(error, SourceError::Timeout { timeout_ms: 300, .. }), "{error}");
    assert!(error.to_string().contains("statement cancelled after 300 ms (statement timeout)"), "{error}");
}
