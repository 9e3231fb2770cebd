//! Hostile SQL on the embedded engine (DataFusion, serving a CSV file): statements that would
//! read a file or a table the operator did not serve (`CREATE EXTERNAL TABLE`, a path in FROM,
//! table functions, other catalogs and schemas, a file beside the served one), write (`COPY …
//! TO`, DDL, DML), change the session (`SET`), run several statements or hide one in comments —
//! each refused by validate_query, by execute_query and by the database layer called directly;
//! then the served file is checked unchanged byte for byte and nothing new is in its directory.
//! Legitimate queries that merely look scary run and return their rows.

use std::sync::Arc;

use schemascope_sources::sql::Database;
use serde_json::{Value, json};

use crate::common::registry;
use crate::hostile_sql::hostile_failures;

/// (SQL, what validate_query's errors say — alternatives separated by ` | `). `{dir}` is the
/// served file's directory.
const CASES: &[(&str, &str)] = &[
    (
        "CREATE EXTERNAL TABLE s STORED AS CSV LOCATION '{dir}/cars.json'",
        "read-only | does not parse",
    ),
    ("SELECT * FROM '{dir}/cars.json'", "not a table this source serves | does not parse"),
    ("SELECT * FROM \"{dir}/cars.json\"", "not a table this source serves"),
    ("SELECT * FROM read_csv('{dir}/cars.json')", "table function"),
    ("SELECT * FROM read_parquet('{dir}/x.parquet')", "table function"),
    ("SELECT * FROM read_json('{dir}/cars.json')", "table function"),
    ("SELECT * FROM generate_series(1, 1000000000000)", "table function"),
    ("SELECT * FROM range(10)", "table function"),
    ("SELECT * FROM stocks s JOIN generate_series(1, 3) g ON true", "table function"),
    ("SELECT * FROM cars", "not a table this source serves"),
    ("SELECT * FROM stocks, cars", "not a table this source serves"),
    ("SELECT * FROM information_schema.tables", "named without a schema"),
    ("SELECT * FROM information_schema.df_settings", "named without a schema"),
    ("SELECT * FROM datafusion.public.stocks", "named without a schema"),
    ("SELECT * FROM public.stocks", "named without a schema"),
    ("SELECT (SELECT COUNT(*) FROM cars) AS n", "not a table this source serves"),
    ("WITH c AS (SELECT * FROM cars) SELECT * FROM c", "not a table this source serves"),
    ("COPY (SELECT 1) TO '{dir}/out.csv'", "read-only | does not parse"),
    ("COPY stocks TO '{dir}/out.parquet' STORED AS PARQUET", "read-only | does not parse"),
    ("INSERT INTO stocks VALUES ('X', 'Jan 1 2000', 1.0)", "read-only"),
    ("INSERT INTO stocks SELECT * FROM stocks", "read-only"),
    ("CREATE TABLE t AS SELECT 1", "read-only"),
    ("CREATE VIEW v AS SELECT * FROM stocks", "read-only"),
    ("CREATE TABLE t (x INT)", "read-only"),
    ("DROP TABLE stocks", "read-only"),
    ("DELETE FROM stocks", "read-only"),
    ("UPDATE stocks SET price = 0", "read-only"),
    ("TRUNCATE TABLE stocks", "read-only | does not parse"),
    ("SET datafusion.execution.batch_size = 1", "read-only | does not parse"),
    ("SET datafusion.catalog.information_schema = true", "read-only | does not parse"),
    ("SHOW TABLES", "read-only | does not parse"),
    ("DESCRIBE stocks", "read-only | does not parse"),
    ("EXPLAIN SELECT 1", "read-only | does not parse"),
    ("PREPARE p AS SELECT 1", "read-only | does not parse"),
    ("SELECT 1; DROP TABLE stocks", "exactly one statement"),
    ("SELECT 1 /* ; */; DROP TABLE stocks", "exactly one statement"),
    ("/* SELECT */ DROP TABLE stocks", "read-only"),
    ("-- SELECT\nDROP TABLE stocks", "read-only"),
    ("SELECT nosuchfunction(1)", "does not exist"),
    ("SELECT \"ABS\"(price) FROM stocks", "does not exist"),
];

/// Legitimate queries that look scary, with their rows.
fn legit() -> Vec<(&'static str, Value)> {
    vec![
        (
            "SELECT symbol AS \"drop\", price FROM stocks WHERE symbol = 'GOOG' ORDER BY price DESC LIMIT 1",
            json!([["GOOG", 707.0]]),
        ),
        ("SELECT 'x; DROP TABLE stocks; --' AS s", json!([["x; DROP TABLE stocks; --"]])),
        ("SELECT 'read_csv(''/etc/passwd'')' AS s", json!([["read_csv('/etc/passwd')"]])),
        (
            "SELECT /* DELETE FROM stocks; */ COUNT(*) AS n FROM stocks -- ; DROP TABLE stocks",
            json!([[560]]),
        ),
        (
            "WITH t AS (SELECT symbol, MAX(price) AS m FROM stocks GROUP BY symbol) SELECT COUNT(*) AS n FROM t",
            json!([[5]]),
        ),
        (
            "SELECT symbol FROM stocks WHERE symbol IN (SELECT symbol FROM stocks WHERE price > 700) GROUP BY symbol",
            json!([["GOOG"]]),
        ),
    ]
}

/// The directory's files with their bytes.
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).expect("read"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn hostile_sql_is_refused_and_leaves_the_served_files_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tables");
    for name in ["stocks.csv", "cars.json"] {
        std::fs::copy(data.join(name), dir.path().join(name)).expect("copy");
    }
    let before = snapshot(dir.path());
    let registry = registry(&[&format!("stocks={}", dir.path().join("stocks.csv").display())]);
    let database: Arc<dyn Database> =
        registry.sources.get(Some("stocks")).expect("source").database.clone().expect("SQL");
    let shown_dir = dir.path().display().to_string();
    let cases: Vec<(String, &str)> =
        CASES.iter().map(|(sql, want)| (sql.replace("{dir}", &shown_dir), *want)).collect();
    let failures = hostile_failures(&registry, "stocks", &*database, &cases, &legit());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(snapshot(dir.path()), before, "the directory changed");
}
