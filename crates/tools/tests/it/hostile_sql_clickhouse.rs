//! Hostile SQL on ClickHouse: table functions that reach files, URLs and other servers (`url`,
//! `file`, `remote`, `s3`, `input`, `mysql`, …) wherever they hide, `SYSTEM`, `SET` and
//! `SETTINGS` (`readonly = 0`), `INSERT INTO FUNCTION`, DDL and mutations, `OPTIMIZE`, `KILL`,
//! several statements and statements hidden by comments, `FORMAT` and `INTO OUTFILE`, and
//! functions that reach outside the data (`file`, `sleep`) — each refused by validate_query, by
//! execute_query and by the database layer called directly, for each of the three users
//! (readonly=1, readonly=2, and one that may write); then every table's rows, the list of
//! databases and tables, and the server's user files are checked unchanged. Legitimate queries
//! that merely look scary run and return their rows.
//!
//! Runs when `SCHEMASCOPE_TEST_CLICKHOUSE` (and `_RO2`, `_RW`) are set, as scripts/test does.

use std::sync::Arc;

use schemascope_sources::sql::{ClickHouseDatabase, Database};
use serde_json::{Value, json};

use crate::common::registry;
use crate::hostile_sql::hostile_failures;

/// (SQL, what validate_query's errors say — alternatives separated by ` | `).
const CASES: &[(&str, &str)] = &[
    ("SELECT * FROM url('http://127.0.0.1:9/', 'CSV', 'a String')", "table function url"),
    ("SELECT * FROM file('/etc/passwd', 'CSV', 'a String')", "table function file"),
    ("SELECT * FROM remote('127.0.0.1', system.one)", "table function remote"),
    ("SELECT * FROM remoteSecure('127.0.0.1', system.one)", "table function remoteSecure"),
    ("SELECT * FROM cluster('default', system.one)", "table function cluster"),
    ("SELECT * FROM s3('http://127.0.0.1:9/b/k', 'CSV', 'a String')", "table function s3"),
    ("SELECT * FROM input('a String')", "table function input"),
    ("SELECT * FROM mysql('127.0.0.1:9', 'd', 't', 'u', 'p')", "table function mysql"),
    ("SELECT * FROM jdbc('x', 'y', 'z')", "table function jdbc"),
    ("SELECT * FROM odbc('x', 'y', 'z')", "table function odbc"),
    ("SELECT * FROM hdfs('hdfs://x/y', 'CSV', 'a String')", "table function hdfs"),
    ("SELECT * FROM executable('x.sh', 'CSV', 'a String')", "table function executable"),
    ("SELECT * FROM numbers(1000000000000)", "table function numbers"),
    ("SELECT * FROM \"url\"('http://127.0.0.1:9/', 'CSV', 'a String')", "table function url"),
    ("SELECT * FROM `file`('x', 'CSV', 'a String')", "table function file | does not parse"),
    ("SELECT * FROM FILE('x', 'CSV', 'a String')", "table function FILE"),
    (
        "SELECT Name FROM Genre WHERE GenreId IN (SELECT toInt64(number) FROM numbers(3))",
        "table function numbers",
    ),
    (
        "SELECT g.Name FROM Genre g JOIN url('http://127.0.0.1:9/', 'CSV', 'Name String') u ON g.Name = u.Name",
        "table function url",
    ),
    ("SELECT * FROM (SELECT * FROM file('x', 'CSV', 'a String'))", "table function file"),
    ("SELECT (SELECT count() FROM remote('127.0.0.1', system.one)) AS n", "table function remote"),
    (
        "INSERT INTO FUNCTION file('x.tsv', 'TSV', 'a String') VALUES ('x')",
        "read-only | does not parse | starts with INSERT",
    ),
    ("INSERT INTO Genre VALUES (999, 'x')", "read-only"),
    ("INSERT INTO Genre SELECT * FROM Genre", "read-only"),
    ("CREATE TABLE t (x UInt8) ENGINE = Memory", "read-only | does not parse"),
    ("DROP TABLE Genre", "read-only"),
    ("TRUNCATE TABLE Genre", "read-only"),
    ("ALTER TABLE Genre DELETE WHERE 1", "read-only | does not parse"),
    ("ALTER TABLE Track UPDATE Milliseconds = 0 WHERE 1", "read-only | does not parse"),
    ("OPTIMIZE TABLE Track FINAL", "read-only | does not parse"),
    ("SYSTEM SHUTDOWN", "read-only | does not parse | starts with SYSTEM"),
    ("SYSTEM DROP DNS CACHE", "read-only | does not parse | starts with SYSTEM"),
    ("KILL QUERY WHERE 1", "read-only | does not parse | starts with KILL"),
    ("SET readonly = 0", "read-only"),
    ("SELECT 1 SETTINGS readonly = 0", "SETTINGS clause | does not parse"),
    ("SELECT * FROM Genre SETTINGS max_execution_time = 0, max_result_rows = 0", "SETTINGS clause"),
    ("SELECT 1; DROP TABLE Genre", "exactly one statement"),
    ("SELECT 1 /* ; */; DROP TABLE Genre", "exactly one statement"),
    ("/* SELECT */ DROP TABLE Genre", "read-only"),
    ("-- SELECT\nDROP TABLE Genre", "read-only"),
    ("SELECT * FROM Genre FORMAT JSON", "FORMAT clause"),
    ("SELECT * FROM Genre INTO OUTFILE '/tmp/schemascope-genre.tsv'", "INTO | does not parse"),
    ("SELECT sleep(3)", "function sleep is not allowed"),
    ("SELECT sleepEachRow(1) FROM Genre", "function sleepEachRow is not allowed"),
    ("SELECT file('x')", "function file is not allowed | function file does not exist"),
    ("SELECT nosuchfunction(1)", "does not exist"),
];

/// Legitimate queries that look scary, with their rows.
fn legit() -> Vec<(&'static str, Value)> {
    vec![
        ("SELECT \"Name\" AS \"drop\" FROM \"Genre\" WHERE \"GenreId\" = 1", json!([["Rock"]])),
        ("SELECT 'x; DROP TABLE Genre; --' AS s", json!([["x; DROP TABLE Genre; --"]])),
        ("SELECT 'url(''x'') SETTINGS readonly=0' AS s", json!([["url('x') SETTINGS readonly=0"]])),
        (
            "SELECT /* DELETE FROM Genre; */ COUNT(*) AS n FROM Genre -- ; DROP TABLE Genre",
            json!([[25]]),
        ),
        ("SELECT count() AS n FROM Track WHERE Name LIKE '%; DELETE%'", json!([[0]])),
        ("SELECT arrayMap(x -> x * 2, [1, 2]) AS a", json!([[[2, 4]]])),
        (
            "SELECT Name FROM Genre WHERE GenreId IN (1, 2) ORDER BY lower(Name) DESC",
            json!([["Rock"], ["Jazz"]]),
        ),
    ]
}

/// Every table's rows (a hash of each ordered row set), and the databases and tables there are.
fn checksum(database: &dyn Database) -> Vec<String> {
    let one = |sql: &str| {
        format!("{:?}", database.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}")))
    };
    let mut facts = vec![
        one("SELECT name FROM system.databases ORDER BY name"),
        one(
            "SELECT database, name, engine FROM system.tables WHERE database NOT IN ('system') ORDER BY database, name",
        ),
    ];
    for table in database.catalog().expect("catalog").tables {
        let quoted = schemascope_sources::sql::Dialect::ClickHouse.quote_table(&table.name);
        facts.push(format!(
            "{}: {}",
            table.name,
            one(&format!("SELECT count(), sum(cityHash64(*)) FROM {quoted}"))
        ));
    }
    facts
}

#[test]
fn hostile_sql_is_refused_and_leaves_clickhouse_unchanged_for_every_user() {
    let users: Vec<String> = [
        "SCHEMASCOPE_TEST_CLICKHOUSE",
        "SCHEMASCOPE_TEST_CLICKHOUSE_RO2",
        "SCHEMASCOPE_TEST_CLICKHOUSE_RW",
    ]
    .iter()
    .filter_map(|var| {
        let uri = std::env::var(var).ok();
        if uri.is_none() {
            eprintln!("{var} is not set: run through scripts/test to test against ClickHouse");
        }
        uri
    })
    .collect();
    let user_files = std::path::Path::new(&std::env::var("HOME").unwrap_or_default())
        .join(".cache/schemascope-clickhouse/user_files");
    for uri in users {
        let checker = ClickHouseDatabase::connect(&uri).expect("connect");
        let before = checksum(&checker);
        let files_before = std::fs::read_dir(&user_files).map(|d| d.count()).unwrap_or(0);
        let registry = registry(&[&format!("ch={uri}")]);
        let database: Arc<dyn Database> =
            registry.sources.get(Some("ch")).expect("source").database.clone().expect("SQL");
        let cases: Vec<(String, &str)> =
            CASES.iter().map(|(sql, want)| (sql.to_string(), *want)).collect();
        let failures = hostile_failures(&registry, "ch", &*database, &cases, &legit());
        assert!(
            failures.is_empty(),
            "{uri}: {} failure(s):\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert_eq!(checksum(&checker), before, "{}", checker.location());
        assert_eq!(std::fs::read_dir(&user_files).map(|d| d.count()).unwrap_or(0), files_before);
    }
}
