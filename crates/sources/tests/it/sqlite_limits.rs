//! SQLite's engine limits and connection pool: one expensive row fails at the value-size limit
//! instead of running for seconds in gigabytes, the heap limit holds for the whole process, and
//! a slow statement does not hold up the other queries on the same source.

use std::sync::Arc;
use std::time::Duration;

use schemascope_sources::SourceError;
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::{
    Database, SQLITE_HEAP_LIMIT_BYTES, SQLITE_MAX_LENGTH, SqlValue, SqliteDatabase,
};

fn chinook() -> SqliteDatabase {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    SqliteDatabase::open(&path).expect("open")
}

fn genres(db: &SqliteDatabase) -> i64 {
    match db.query("SELECT count(*) FROM Genre", &[]).expect("count").first().map(Vec::as_slice) {
        Some([SqlValue::Integer(n)]) => *n,
        other => panic!("not a count: {other:?}"),
    }
}

#[test]
fn one_expensive_row_fails_at_the_length_limit_instead_of_running_on() {
    let db = chinook();
    for sql in [
        // The statement: 25 s and 6.3 GB without the limit.
        "SELECT replace(printf('%.*c', 30000000, 'a'), 'a', 'bb')",
        "SELECT length(printf('%.*c', 20000000, 'a'))",
        "SELECT length(replace(printf('%.*c', 10000000, 'a'), 'a', 'bb'))",
        "SELECT length(zeroblob(17000000))",
        "SELECT length(randomblob(17000000))",
        "SELECT length(hex(randomblob(9000000)))",
        "SELECT length(group_concat(printf('%.*c', 1000000, 'x'))) FROM (SELECT 1 FROM Track LIMIT 20)",
        "WITH RECURSIVE s(x) AS (SELECT 'ab' UNION ALL SELECT x || x FROM s) SELECT length(x) FROM s",
    ] {
        let error = db.run(sql, &[], None, 60_000).expect_err(sql);
        let text = error.to_string();
        assert!(
            text.contains("string or blob too big")
                && text.contains(&format!("{SQLITE_MAX_LENGTH} bytes")),
            "{sql}: {text}"
        );
        assert_eq!(error.class(), ErrorClass::Syntax, "{sql}: a narrower query can succeed");
    }
    let under = db
        .query("SELECT length(printf('%.*c', 16000000, 'a'))", &[])
        .expect("just under the limit");
    assert_eq!(under, vec![vec![SqlValue::Integer(16_000_000)]]);
    assert_eq!(genres(&db), 25, "the source still answers");
}

#[test]
fn long_like_patterns_are_refused_by_the_engine() {
    let db = chinook();
    let like = |pattern: String| {
        db.run(
            "SELECT count(*) FROM Track WHERE Name LIKE ?1",
            &[SqlValue::Text(pattern)],
            None,
            60_000,
        )
    };
    let error = like(format!("%{}%", "a%".repeat(60))).expect_err("too long");
    assert!(error.to_string().contains("LIKE or GLOB pattern too complex"), "{error}");
    assert_eq!(
        like(format!("%{}", "_".repeat(99))).expect("100 bytes").rows,
        vec![vec![SqlValue::Integer(3)]],
        "the names of 99+ characters"
    );
}

#[test]
fn functions_quadratic_in_their_arguments_are_refused_before_they_run() {
    let db = chinook();
    for (sql, function) in [
        (
            "SELECT instr(printf('%.*c', 16000000, 'a'), printf('%.*c', 8000000, 'a') || 'b')",
            "instr()",
        ),
        (
            "SELECT replace(printf('%.*c', 16000000, 'a'), printf('%.*c', 1000, 'a') || 'b', 'c')",
            "replace()",
        ),
        (
            "SELECT length(trim(printf('%.*c', 200000, 'a'), printf('%.*c', 100000, 'b') || 'a'))",
            "trim()",
        ),
        (
            "SELECT length(LTRIM(printf('%.*c', 200000, 'a'), printf('%.*c', 100000, 'b') || 'a'))",
            "ltrim()",
        ),
        (
            "SELECT length(rtrim(printf('%.*c', 100000, 'a'), printf('%.*c', 20000, 'b'))) FROM Genre",
            "rtrim()",
        ),
        ("SELECT unhex(printf('%.*c', 2000000, '4'), printf('%.*c', 1000, '-'))", "unhex()"),
    ] {
        let error = db.run(sql, &[], None, 1_000).expect_err(sql).to_string();
        assert!(
            error.contains(function) && error.contains("statement timeout cannot stop it"),
            "{sql}: {error}"
        );
    }
    // The same functions on ordinary values give SQLite's own results.
    let rows = db
        .query("SELECT instr(Name, 'a'), replace(Name, 'a', 'A'), trim(Name, 'B'), unhex('41-42', '-') FROM Genre WHERE GenreId = 2", &[])
        .expect("runs");
    assert_eq!(
        rows,
        vec![vec![
            SqlValue::Integer(2),
            SqlValue::Text("JAzz".into()),
            SqlValue::Text("Jazz".into()),
            SqlValue::Text("<blob: 2 bytes, sha256 38164fbd17603d73>".into())
        ]]
    );
}

#[test]
fn the_heap_limit_holds_for_the_whole_process() {
    let _db = chinook();
    // SAFETY: a negative argument only reads the current limit.
    let limit = unsafe { rusqlite::ffi::sqlite3_hard_heap_limit64(-1) };
    assert_eq!(limit, SQLITE_HEAP_LIMIT_BYTES);
}

#[test]
fn a_slow_statement_does_not_hold_up_the_other_queries() {
    let db = Arc::new(chinook());
    // Counts without end: only its deadline stops it.
    let slow = std::thread::spawn({
        let db = Arc::clone(&db);
        move || {
            db.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n", &[], None, 5_000)
        }
    });
    // Let the slow statement take its connection first (not an assertion: if it had not, the
    // checks below would still hold).
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        assert_eq!(genres(&db), 25);
    }
    assert!(
        !slow.is_finished(),
        "the quick queries were answered while the slow one still ran (it ends only at its deadline)"
    );
    let error = schemascope_core::sync::joined(slow.join()).expect_err("stopped at its deadline");
    assert!(matches!(error, SourceError::Timeout { timeout_ms: 5_000, .. }), "{error}");
    assert!(error.to_string().contains("statement timeout"), "{error}");
}

/// Rows that each take most of a second inside one engine step (a long GLOB over a 16 MB value)
/// do not add up past the deadline: the deadline is checked between them, and the statement
/// ends as a timeout instead of succeeding after ten of them. A cancelled call interrupts its
/// statement the same way.
#[test]
fn the_deadline_and_the_calls_cancellation_hold_between_expensive_rows() {
    let db = chinook();
    let slow_rows = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 10) \
                     SELECT count(*) FROM r WHERE printf('%.*c', 16000000, 'a') GLOB '*' || printf('%.*c', 97, 'a') || char(98 + 0 * i)";
    let error = db.run(slow_rows, &[], None, 300).expect_err("stopped at its deadline");
    assert!(matches!(error, SourceError::Timeout { timeout_ms: 300, .. }), "{error}");
    let token = schemascope_core::cancel::Cancel::new();
    token.cancel_because("the call's time was up");
    let error = schemascope_core::cancel::with(&token, || db.run(slow_rows, &[], None, 60_000))
        .expect_err("cancelled");
    assert!(matches!(error, SourceError::Cancelled(_)), "{error}");
    assert_eq!(genres(&db), 25, "the source answers after both");
}
