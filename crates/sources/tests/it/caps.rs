//! The caps on a statement's rows and bytes stop the reading itself: a database reads one row
//! past a cap and no more, and says which cap cut the result. Checked by counting the rows read,
//! on SQLite and (with `SCHEMASCOPE_TEST_POSTGRES` and `SCHEMASCOPE_TEST_CLICKHOUSE`) PostgreSQL
//! and ClickHouse.

use schemascope_sources::sql::{
    Caps, Cut, Database, PostgresDatabase, SqlValue, SqliteDatabase, row_json_bytes,
};

fn chinook() -> SqliteDatabase {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    SqliteDatabase::open(&path).expect("open")
}

fn postgres() -> Option<PostgresDatabase> {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return None;
    };
    Some(PostgresDatabase::connect(&uri).expect("connect"))
}

/// 40 rows of about 300 KB each, in the database's own SQL.
fn wide_rows(db: &dyn Database) -> &'static str {
    match db.dialect() {
        schemascope_sources::sql::Dialect::Sqlite => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i, printf('%.*c', 300000, 'x') FROM n"
        }
        schemascope_sources::sql::Dialect::Postgres => {
            "SELECT i, repeat('x', 300000) FROM generate_series(1, 40) AS i"
        }
        // ClickHouse 18.16 has no repeat().
        schemascope_sources::sql::Dialect::ClickHouse => {
            "SELECT toInt64(number + 1) AS i, arrayStringConcat(arrayResize(['x'], 300000, 'x')) FROM system.numbers LIMIT 40"
        }
        // The file `numbers_table` serves.
        schemascope_sources::sql::Dialect::DataFusion => {
            "SELECT i, repeat('x', 300000) FROM n ORDER BY i"
        }
        schemascope_sources::sql::Dialect::MySql | schemascope_sources::sql::Dialect::MariaDb => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i, REPEAT('x', 300000) FROM n"
        }
    }
}

fn check_caps(db: &dyn Database) {
    let sql = wide_rows(db);
    let by_bytes = db
        .run_capped(sql, &[], Caps { max_rows: Some(1_000), max_bytes: Some(1_000_000) }, 30_000)
        .expect("runs");
    assert_eq!(
        (by_bytes.rows.len(), by_bytes.rows_read, by_bytes.cut),
        (3, 4, Some(Cut::Bytes)),
        "three rows fit, the fourth is the last read"
    );
    assert!(by_bytes.rows.iter().map(|r| row_json_bytes(r)).sum::<usize>() <= 1_000_000);
    assert_eq!(by_bytes.rows[2][0], SqlValue::Integer(3));
    let by_rows = db
        .run_capped(sql, &[], Caps { max_rows: Some(2), max_bytes: Some(100_000_000) }, 30_000)
        .expect("runs");
    assert_eq!((by_rows.rows.len(), by_rows.rows_read, by_rows.cut), (2, 3, Some(Cut::Rows)));
    let whole = db
        .run_capped(sql, &[], Caps { max_rows: Some(40), max_bytes: Some(100_000_000) }, 30_000)
        .expect("runs");
    assert_eq!(
        (whole.rows.len(), whole.rows_read, whole.cut, whole.more),
        (40, 40, None, false),
        "exactly the cap is not a cut"
    );
    // Rows larger than the cap: the first is read and nothing is kept.
    let huge = match db.dialect() {
        schemascope_sources::sql::Dialect::Sqlite => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT printf('%.*c', 5000000, 'x') FROM n"
        }
        schemascope_sources::sql::Dialect::Postgres => {
            "SELECT repeat('x', 50000000) FROM generate_series(1, 40)"
        }
        schemascope_sources::sql::Dialect::ClickHouse => {
            "SELECT arrayStringConcat(arrayResize(['x'], 5000000, 'x')) FROM system.numbers LIMIT 40"
        }
        schemascope_sources::sql::Dialect::DataFusion => "SELECT repeat('x', 5000000) FROM n",
        schemascope_sources::sql::Dialect::MySql | schemascope_sources::sql::Dialect::MariaDb => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT REPEAT('x', 5000000) FROM n"
        }
    };
    let cut = db
        .run_capped(huge, &[], Caps { max_rows: Some(1_000), max_bytes: Some(1_000_000) }, 60_000)
        .expect("runs");
    assert_eq!((cut.rows.len(), cut.rows_read, cut.cut), (0, 1, Some(Cut::Bytes)));
}

/// A CSV file of the integers 1 to 40, served as the table `n`.
fn numbers_table(dir: &std::path::Path) -> schemascope_sources::Source {
    let path = dir.join("n.csv");
    let lines: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
    std::fs::write(&path, format!("i\n{}\n", lines.join("\n"))).expect("write");
    let spec: schemascope_sources::SourceSpec =
        path.to_str().expect("utf-8").parse().expect("spec");
    schemascope_sources::load(&spec, &schemascope_sources::NoProgress).expect("load")
}

#[test]
fn datafusion_stops_reading_at_the_first_row_past_a_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = numbers_table(dir.path());
    check_caps(source.database.as_deref().expect("served to SQL"));
}

#[test]
fn sqlite_stops_reading_at_the_first_row_past_a_cap() {
    check_caps(&chinook());
}

#[test]
fn clickhouse_stops_reading_at_the_first_row_past_a_cap_for_every_user() {
    for var in [
        "SCHEMASCOPE_TEST_CLICKHOUSE",
        "SCHEMASCOPE_TEST_CLICKHOUSE_RO2",
        "SCHEMASCOPE_TEST_CLICKHOUSE_RW",
    ] {
        let Ok(uri) = std::env::var(var) else {
            eprintln!("{var} is not set: run through scripts/test to test against ClickHouse");
            continue;
        };
        check_caps(&schemascope_sources::sql::ClickHouseDatabase::connect(&uri).expect("connect"));
    }
}

#[test]
fn mariadb_stops_reading_at_the_first_row_past_a_cap() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let db = schemascope_sources::sql::MySqlDatabase::connect(&uri).expect("connect");
    check_caps(&db);
    // The statement stopped at a cap leaves the connection usable.
    let after = db.query("SELECT 41", &[]).expect("runs after a cut");
    assert_eq!(after, vec![vec![SqlValue::Integer(41)]]);
}

#[test]
fn postgres_stops_reading_at_the_first_row_past_a_cap() {
    let Some(db) = postgres() else { return };
    check_caps(&db);
    // Small rows are fetched in growing batches and still cut at the exact row.
    let many = db
        .run_capped(
            "SELECT i FROM generate_series(1, 5000) AS i",
            &[],
            Caps { max_rows: Some(3_000), max_bytes: None },
            30_000,
        )
        .expect("runs");
    assert_eq!((many.rows.len(), many.rows_read, many.cut), (3_000, 3_001, Some(Cut::Rows)));
    assert_eq!(many.rows[2_999], vec![SqlValue::Integer(3_000)]);
}
