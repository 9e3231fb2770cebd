//! Integers past 2^53 and skewed columns, profiled inside SQLite and PostgreSQL, give the figures
//! the in-memory profiler gives from the same rows — exact distinct counts, top values, medians
//! and extremes, means and spreads from exact sums — and an asked bin count picks the same log
//! or outlier layout with the same counts on both paths.
//!
//! PostgreSQL objects are made in a schema of their own, dropped at the end; that part runs when
//! `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it).

use postgres::{Client, NoTls};
use schemascope_core::TableInfo;
use schemascope_core::path::PropertyPath;
use schemascope_core::profile::NumberProfile;
use schemascope_core::profile::numeric::{BinScale, HistogramLayout};
use schemascope_sources::sql::pushdown::profile_table;
use schemascope_sources::sql::{Database, PostgresDatabase, SqliteDatabase};
use serde_json::json;

use crate::common;

const TWO_53: i64 = 1 << 53;

/// The brief's values: 2^53, 2^53+1 (twice), 2^53+2, i64::MAX, i64::MIN, -2^53-1, small ints, nulls.
const BIG: [Option<i64>; 13] = [
    Some(TWO_53),
    Some(TWO_53 + 1),
    None,
    Some(TWO_53 + 2),
    Some(i64::MAX),
    Some(i64::MIN),
    Some(-TWO_53 - 1),
    Some(1),
    Some(2),
    Some(3),
    None,
    Some(TWO_53 + 1),
    Some(7),
];

/// Neighbours at the top of the i64 range: one double (2^63) for all three.
const TOP: [i64; 4] = [i64::MAX - 2, i64::MAX - 1, i64::MAX, i64::MAX - 1];

/// 1000 positive values over five orders of magnitude, most of them small (see the core's
/// `asked_bins` test), and whole numbers spread the same way.
fn skewed() -> Vec<(f64, i64)> {
    let mut values: Vec<f64> =
        (0..993).map(|i| 10f64.powf(-2.0 + 3.0 * f64::from(i) / 992.0)).collect();
    values.extend([20.0, 50.0, 100.0, 200.0, 500.0, 800.0, 1000.0]);
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, 10f64.powf(4.0 * i as f64 / 999.0).floor() as i64))
        .collect()
}

fn sql_int(v: Option<i64>) -> String {
    v.map_or_else(|| "NULL".into(), |v| v.to_string())
}

/// Statements creating the test tables, `prefix` naming their schema (or nothing).
fn create(prefix: &str, big: &str, float: &str) -> Vec<String> {
    let rows = |values: &[String]| {
        values.iter().enumerate().map(|(i, v)| format!("({i}, {v})")).collect::<Vec<_>>().join(", ")
    };
    let big_rows = rows(&BIG.map(sql_int));
    let skew_rows: Vec<String> =
        skewed().iter().enumerate().map(|(i, (v, k))| format!("({i}, {v:?}, {k})")).collect();
    vec![
        format!("CREATE TABLE {prefix}big (id integer PRIMARY KEY, n {big})"),
        format!("INSERT INTO {prefix}big VALUES {big_rows}"),
        format!("CREATE TABLE {prefix}big_sorted (id integer PRIMARY KEY, n {big})"),
        format!("INSERT INTO {prefix}big_sorted VALUES {big_rows}"),
        format!("CREATE TABLE {prefix}top (id integer PRIMARY KEY, n {big})"),
        format!("INSERT INTO {prefix}top VALUES {}", rows(&TOP.map(|v| v.to_string()))),
        format!("CREATE TABLE {prefix}skew (id integer PRIMARY KEY, v {float}, k {big})"),
        format!("INSERT INTO {prefix}skew VALUES {}", skew_rows.join(", ")),
    ]
}

fn numbers(db: &dyn Database, table: &TableInfo, column: &str) -> NumberProfile {
    let profile = profile_table(db, table).expect("pushdown profile");
    profile
        .property(&PropertyPath::root().child(column))
        .and_then(|p| p.numbers.clone())
        .expect("numbers")
}

/// The hand-computed figures of the test tables, from the database's own profile, then the same
/// profile as the in-memory profiler's, and the same histograms.
fn check(db: &dyn Database, name: impl Fn(&str) -> String) {
    let catalog = db.catalog().expect("catalog");
    let table = |t: &str| {
        catalog.table(&name(t)).unwrap_or_else(|| panic!("table {t}: {:?}", catalog.table_names()))
    };
    for big in ["big", "big_sorted"] {
        let n = numbers(db, table(big), "n");
        assert_eq!((n.count, n.distinct), (11, 10), "{big}");
        assert_eq!(
            n.top.first().map(|v| (v.value.clone(), v.count)),
            Some((json!(TWO_53 + 1), 2)),
            "{big}"
        );
        let tops: Vec<_> = n.top.iter().map(|v| v.value.clone()).collect();
        assert!(
            tops.contains(&json!(TWO_53))
                && tops.contains(&json!(TWO_53 + 2))
                && tops.contains(&json!(-TWO_53 - 1)),
            "{big}: {tops:?}"
        );
        assert_eq!(
            (n.min_value(), n.max_value(), n.median_value()),
            (json!(i64::MIN), json!(i64::MAX), json!(7)),
            "{big}"
        );
        common::assert_table_matches_memory(db, table(big));
    }
    let top = numbers(db, table("top"), "n");
    // As doubles the three are one value, with no spread; exactly: distances -1, 0, 1, 0.
    assert_eq!((top.distinct, top.median_value()), (3, json!(i64::MAX - 1)), "{top:?}");
    assert!((top.std_dev - (2.0f64 / 3.0).sqrt()).abs() < 1e-12, "{}", top.std_dev);
    common::assert_table_matches_memory(db, table("top"));
    common::assert_table_matches_memory(db, table("skew"));
    for column in ["v", "k"] {
        let layout = HistogramLayout::for_numbers(&numbers(db, table("skew"), column), Some(6))
            .expect("layout");
        assert_eq!((layout.scale, layout.bins()), (BinScale::Log, 6), "{column}");
    }
    common::assert_histograms_match(db, &name("skew"), &["v", "k"]);
    common::assert_histograms_match(db, &name("big"), &["n"]);
}

#[test]
fn sqlite_profiles_large_integers_and_skewed_columns_as_memory_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("exact.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    for statement in create("", "INTEGER", "REAL") {
        connection.execute_batch(&statement).expect("fill");
    }
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    check(&db, str::to_string);
}

#[test]
fn postgres_profiles_large_integers_and_skewed_columns_as_memory_does() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri);
    let schema = scratch.schema.clone();
    for statement in create(&format!("{schema}."), "bigint", "double precision") {
        scratch.client.batch_execute(&statement).expect("fill");
    }
    // Planner statistics send `big` through the grouped path; `big_sorted` has none and sorts.
    scratch
        .client
        .batch_execute(&format!("ANALYZE {schema}.big; ANALYZE {schema}.skew"))
        .expect("analyse");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    check(&db, |t| format!("{schema}.{t}"));
}

/// The schema made for this run, dropped when the test ends, passed or not.
struct Scratch {
    client: Client,
    schema: String,
}

impl Scratch {
    fn new(uri: &str) -> Self {
        let mut client = Client::connect(uri, NoTls).expect("admin connection");
        let schema = format!("schemascope_exact_{}", std::process::id());
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .expect("schema");
        Self { client, schema }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ =
            self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
    }
}
