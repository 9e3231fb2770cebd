//! A caller's statement reads only what its source serves, and is bounded on the database
//! host's disk: through validate_query and execute_query, every ClickHouse system table but
//! `system.one` and every other database is refused however it is written (quoted, in another
//! case, in a subquery, CTE, JOIN, `IN`, `in()`), so a second user's running query is not
//! readable; PostgreSQL's system schemas and the `pg_catalog` relations an unqualified name
//! reaches, and the functions that read relations by name, are refused; SQLite reads its own
//! file's schemas only. A PostgreSQL `SELECT DISTINCT` over two billion generated rows is
//! refused from its plan, or stopped by the `temp_file_limit` schemascope sets, and the
//! temporary bytes the database wrote stay under a stated bound.
//!
//! The server tests run when `SCHEMASCOPE_TEST_POSTGRES(_RO)` and `SCHEMASCOPE_TEST_CLICKHOUSE`
//! (`_RW`, `_RO2`) are set, as scripts/test does.

use std::time::{Duration, Instant};

use schemascope_sources::sql::{CALLER_TEMP_FILE_BYTES, Database, PostgresDatabase};
use schemascope_tools::*;
use serde_json::Value;

use crate::common::{chinook_spec, registry};
use crate::hostile_sql::{contains_any, validation_errors};

/// Refusals expected of validate_query and execute_query for each statement of `cases` on
/// `source` (`want`: alternatives separated by ` | `); the failures as lines.
fn refused_everywhere(registry: &Services, source: &str, cases: &[(&str, &str)]) -> Vec<String> {
    let mut failures = Vec::new();
    for (sql, want) in cases {
        let (report, errors) = validation_errors(registry, source, sql);
        if report.data["valid"] != false || !contains_any(&errors.join(" / "), want) {
            failures.push(format!("validate {sql:?}: expected {want:?}, got {errors:?}"));
        }
        let executed = execute(registry, source, sql, 5_000);
        if executed.success
            || executed.data["class"] != "refused"
            || !contains_any(&executed.message, want)
        {
            failures.push(format!(
                "execute {sql:?}: expected a refusal with {want:?}, got {} {}",
                executed.message, executed.data
            ));
        }
    }
    failures
}

fn execute(registry: &Services, source: &str, sql: &str, timeout_ms: u64) -> ToolResult {
    execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: Some(source.into()),
            query: Value::from(sql),
            timeout_ms: Some(timeout_ms),
            ..Default::default()
        },
    )
}

const SYSTEM_TABLE: &str = "ClickHouse system table";
const OTHER_DATABASE: &str = "which this source does not serve";

/// Every way of naming a system table or another database.
const CLICKHOUSE_CASES: &[(&str, &str)] = &[
    ("SELECT query FROM system.processes", SYSTEM_TABLE),
    ("SELECT query FROM `system`.`processes`", SYSTEM_TABLE),
    ("SELECT query FROM \"system\".\"processes\"", SYSTEM_TABLE),
    ("SELECT query FROM SYSTEM.processes", OTHER_DATABASE),
    ("SELECT create_table_query FROM system.tables", SYSTEM_TABLE),
    ("SELECT name, value FROM system.settings", SYSTEM_TABLE),
    ("SELECT * FROM system.build_options", SYSTEM_TABLE),
    ("SELECT * FROM system.numbers LIMIT 3", SYSTEM_TABLE),
    ("SELECT Name FROM Genre WHERE Name IN (SELECT query FROM system.processes)", SYSTEM_TABLE),
    ("WITH p AS (SELECT query FROM system.processes) SELECT * FROM p", SYSTEM_TABLE),
    ("SELECT g.Name FROM Genre g JOIN system.tables t ON g.Name = t.name", SYSTEM_TABLE),
    ("SELECT (SELECT count() FROM system.processes) AS n", SYSTEM_TABLE),
    ("SELECT * FROM (SELECT * FROM (SELECT query FROM system.processes))", SYSTEM_TABLE),
    ("SELECT 'x' IN (system.processes) AS seen", SYSTEM_TABLE),
    ("SELECT 0 IN ((system.processes)) AS seen", SYSTEM_TABLE),
    ("SELECT in('x', system.processes) AS seen", SYSTEM_TABLE),
    ("SELECT * FROM merge('system', '^proc')", "table function merge"),
    ("SELECT * FROM default.t", OTHER_DATABASE),
    ("SELECT dictGetString('d', 'a', toUInt64(1))", "function dictGetString is not allowed"),
];

/// A second user's running query, with a secret in it, as the readonly=1 user sees it:
/// `system.processes` is refused, through both tools.
#[test]
fn clickhouse_reads_only_its_database_and_not_other_users_queries() {
    let (Ok(ro), Ok(rw)) = (
        std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE"),
        std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE_RW"),
    ) else {
        eprintln!("SCHEMASCOPE_TEST_CLICKHOUSE(_RW) is not set: run through scripts/test");
        return;
    };
    let mut uris = vec![ro.clone(), rw.clone()];
    uris.extend(std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE_RO2").ok());
    // The writer's long query, its secret in a comment, runs while the reader looks.
    let writer = schemascope_sources::sql::ClickHouseDatabase::connect(&rw).expect("connect");
    let running = std::thread::spawn(move || {
        let _ = writer.run(
            "SELECT count() FROM Track WHERE sleepEachRow(0.5) = 0 /* sysdb-secret-4242 */",
            &[],
            None,
            6_000,
        );
    });
    std::thread::sleep(Duration::from_millis(500));
    for uri in uris {
        let registry = registry(&[&format!("ch={uri}")]);
        let failures = refused_everywhere(&registry, "ch", CLICKHOUSE_CASES);
        assert!(
            failures.is_empty(),
            "{uri}: {} failure(s):\n{}",
            failures.len(),
            failures.join("\n")
        );
        let executed = execute(&registry, "ch", "SELECT query FROM system.processes", 5_000);
        assert!(!executed.to_string_lossy().contains("sysdb-secret"), "{}", executed.data);
        for (sql, rows) in [
            ("SELECT dummy FROM system.one", serde_json::json!([[0]])),
            ("SELECT count() AS n FROM chinook.Genre", serde_json::json!([[25]])),
            (
                "SELECT count() AS n FROM (SELECT GenreId FROM Genre) WHERE GenreId IN (SELECT GenreId FROM Genre)",
                serde_json::json!([[25]]),
            ),
        ] {
            let executed = execute(&registry, "ch", sql, 5_000);
            assert_eq!(executed.data["rows"], rows, "{uri} {sql}: {}", executed.message);
        }
        // The source's own catalog still reads system.tables and system.columns.
        let listed = list_sources(&registry, Default::default());
        assert!(listed.success, "{}", listed.message);
    }
    let _ = running.join();
}

/// Helper for the secret check: the whole answer as text.
trait Lossy {
    fn to_string_lossy(&self) -> String;
}

impl Lossy for ToolResult {
    fn to_string_lossy(&self) -> String {
        format!("{} {}", self.message, self.data)
    }
}

const PG_SYSTEM: &str = "PostgreSQL system relation | system schema";

const POSTGRES_CASES: &[(&str, &str)] = &[
    ("SELECT query FROM pg_stat_activity", PG_SYSTEM),
    ("SELECT query FROM PG_STAT_ACTIVITY", PG_SYSTEM),
    ("SELECT query FROM pg_catalog.pg_stat_activity", PG_SYSTEM),
    ("SELECT query FROM \"pg_catalog\".\"pg_stat_activity\"", PG_SYSTEM),
    ("SELECT rolname FROM pg_roles", PG_SYSTEM),
    ("SELECT name, setting FROM pg_settings", PG_SYSTEM),
    ("SELECT table_name FROM information_schema.tables", PG_SYSTEM),
    ("SELECT * FROM pg_toast.pg_toast_2619", PG_SYSTEM),
    (
        "SELECT \"Name\" FROM \"Genre\" WHERE \"Name\" IN (SELECT query FROM pg_stat_activity)",
        PG_SYSTEM,
    ),
    ("WITH a AS (SELECT query FROM pg_stat_activity) SELECT * FROM a", PG_SYSTEM),
    ("SELECT g.\"Name\" FROM \"Genre\" g JOIN pg_class c ON c.relname = g.\"Name\"", PG_SYSTEM),
    ("SELECT * FROM \"Genre\" g, LATERAL (SELECT usename FROM pg_user) u", PG_SYSTEM),
    (
        "SELECT * FROM (WITH pg_roles AS (SELECT 1 AS a) SELECT * FROM pg_roles) x, pg_roles",
        PG_SYSTEM,
    ),
    ("SELECT EXISTS (SELECT 1 FROM pg_stat_activity) AS e", PG_SYSTEM),
    ("SELECT schema_to_xml('pg_catalog', true, false, '')", "schema_to_xml is not allowed"),
    ("SELECT table_to_xml('pg_stat_activity', true, false, '')", "table_to_xml is not allowed"),
    ("SELECT database_to_xml(true, false, '')", "database_to_xml is not allowed"),
    ("SELECT pg_stat_get_backend_activity(1)", "pg_stat_get_backend_activity is not allowed"),
    ("SELECT * FROM pg_show_all_settings()", "pg_show_all_settings is not allowed"),
];

#[test]
fn postgres_reads_no_system_relation_however_named() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO") else {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES_RO is not set: run through scripts/test");
        return;
    };
    let registry = registry(&[&format!("pg={uri}")]);
    let failures = refused_everywhere(&registry, "pg", POSTGRES_CASES);
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    for sql in [
        "SELECT count(*) AS n FROM public.\"Genre\"",
        "WITH pg_roles AS (SELECT \"GenreId\" FROM \"Genre\") SELECT count(*) AS n FROM pg_roles",
    ] {
        let executed = execute(&registry, "pg", sql, 5_000);
        assert_eq!(executed.data["rows"], serde_json::json!([[25]]), "{sql}: {}", executed.message);
    }
}

#[test]
fn sqlite_reads_its_own_file_only() {
    let registry = registry(&[&chinook_spec()]);
    let failures = refused_everywhere(
        &registry,
        "chinook",
        &[("SELECT * FROM other.Genre", "not this database file")],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The file's own schema table and its empty temp schema are the served file's.
    for (sql, rows) in [
        ("SELECT count(*) AS n FROM main.Genre", serde_json::json!([[25]])),
        ("SELECT count(*) AS n FROM temp.sqlite_master", serde_json::json!([[0]])),
        (
            "SELECT count(*) > 10 AS n FROM sqlite_schema WHERE type = 'table'",
            serde_json::json!([[1]]),
        ),
    ] {
        let executed = execute(&registry, "chinook", sql, 5_000);
        assert_eq!(executed.data["rows"], rows, "{sql}: {}", executed.message);
    }
}

/// `pg_stat_database.temp_bytes` of the source's database, once the statistics settle.
fn temp_bytes(admin: &PostgresDatabase) -> u64 {
    let read = || {
        admin
            .query(
                "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()",
                &[],
            )
            .expect("pg_stat_database")
            .first()
            .map(|r| r[0].as_count())
            .unwrap_or(0)
    };
    // Statistics are flushed at most once a second; read until two readings agree.
    let started = Instant::now();
    let mut last = read();
    loop {
        std::thread::sleep(Duration::from_millis(1_200));
        let now = read();
        if now == last || started.elapsed() > Duration::from_secs(10) {
            return now;
        }
        last = now;
    }
}

/// The statement, and its integer form whose size the planner knows.
#[test]
fn a_huge_distinct_is_refused_or_stopped_before_it_fills_the_disk() {
    let (Ok(rw), Ok(ro)) =
        (std::env::var("SCHEMASCOPE_TEST_POSTGRES"), std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO"))
    else {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES(_RO) is not set: run through scripts/test");
        return;
    };
    let admin = PostgresDatabase::connect(&rw).expect("connect");
    // The owner role may not set temp_file_limit: the planner's estimate refuses the integer
    // series before anything runs.
    let registry_rw = registry(&[&format!("pg={rw}")]);
    let before = temp_bytes(&admin);
    let executed = execute(
        &registry_rw,
        "pg",
        "SELECT DISTINCT x FROM generate_series(1, 2000000000) x",
        20_000,
    );
    assert!(!executed.success && executed.data["class"] == "refused", "{}", executed.message);
    assert!(
        executed.message.contains("about 2000000000 rows (8.0 GB)")
            && executed.message.contains("MAX_PLANNED_SPILL_BYTES"),
        "{}",
        executed.message
    );
    // The read-only role may (scripts/postgres grants it, as SECURITY.md asks of a DBA): the
    // numeric series, which the planner guesses at 1000 rows, stops at the limit.
    let registry_ro = registry(&[&format!("pg={ro}")]);
    let executed =
        execute(&registry_ro, "pg", "SELECT DISTINCT x FROM generate_series(1, 2e9) x", 60_000);
    assert!(!executed.success, "{}", executed.message);
    assert!(executed.message.contains("temp_file_limit"), "{}", executed.message);
    let written = temp_bytes(&admin).saturating_sub(before);
    // The limit, plus what other tests on this database may write meanwhile.
    let bound = CALLER_TEMP_FILE_BYTES + (64 << 20);
    eprintln!("temporary bytes written by the numeric series: {written} (bound {bound})");
    assert!(written <= bound, "{written} temporary bytes written, more than {bound}");
    // An ordinary analytic query still runs.
    let executed = execute(
        &registry_ro,
        "pg",
        "SELECT g.\"Name\", count(*) AS n FROM \"Track\" t JOIN \"Genre\" g ON g.\"GenreId\" = t.\"GenreId\" GROUP BY g.\"Name\" ORDER BY n DESC LIMIT 1",
        20_000,
    );
    assert_eq!(executed.data["rows"], serde_json::json!([["Rock", 1297]]), "{}", executed.message);
}
