//! MySQL and MariaDB sources against a real server (MariaDB, started by `scripts/mariadb`,
//! loaded with Chinook and Northwind): catalog with comments, keys and views, pushdown
//! profiles equal to the in-memory ones, histogram bins, agreement with SQLite's profiles of
//! the same data, read-only statements, and a dead server's error.
//!
//! The server's URI comes from `SCHEMASCOPE_TEST_MARIADB` (set by `scripts/test`). Without it
//! these tests say so and pass vacuously — run them through `scripts/test`, as CI does.

use std::sync::Arc;

use schemascope_sources::sql::{Database, Dialect, MySqlDatabase};
use schemascope_sources::{NoProgress, SourceSpec, load};

use crate::common;

fn uri() -> Option<String> {
    let uri = std::env::var("SCHEMASCOPE_TEST_MARIADB").ok();
    if uri.is_none() {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
    }
    uri
}

/// The URI of another database of the same server.
fn database(uri: &str, name: &str) -> String {
    match uri.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => uri.to_string(),
    }
}

#[test]
fn catalog_reads_keys_comments_views_and_row_counts() {
    let Some(uri) = uri() else { return };
    let source =
        load(&format!("my={uri}").parse::<SourceSpec>().expect("spec"), &NoProgress).expect("load");
    let db = source.database.as_ref().expect("database");
    assert_eq!(db.dialect(), Dialect::MariaDb, "the server says which it is");
    let catalog = db.catalog().expect("catalog");
    assert_eq!(catalog.table_names().len(), 12, "11 tables and one view");
    let customer = catalog.table("Customer").expect("Customer");
    assert_eq!(
        customer.comment.as_deref(),
        Some("People and companies who bought music from the store.")
    );
    let total = catalog.table("Invoice").and_then(|t| t.column("Total")).expect("Invoice.Total");
    assert_eq!(total.comment.as_deref(), Some("Invoice total in USD, tax included."));
    assert_eq!(total.declared_type, "decimal(10,2)");
    assert_eq!(
        catalog.table("PlaylistTrack").expect("PlaylistTrack").primary_key,
        ["PlaylistId", "TrackId"]
    );
    assert_eq!(catalog.neighbours("Customer"), ["Employee", "Invoice"]);
    assert_eq!(
        catalog.table("CustomerInvoiceTotals").map(|t| t.kind),
        Some(schemascope_core::TableKind::View)
    );
    assert_eq!(catalog.table("CustomerInvoiceTotals").and_then(|t| t.comment.clone()), None);
    assert_eq!(source.collection("Track").map(|c| c.len()), Some(3503));
    assert_eq!(source.collection("InvoiceLine").map(|c| c.len()), Some(2240));
}

#[test]
fn pushdown_profiles_equal_the_in_memory_profiles_of_chinook_and_northwind() {
    let Some(uri) = uri() else { return };
    for name in ["chinook", "northwind"] {
        let db = MySqlDatabase::connect(&database(&uri, name)).expect("connect");
        common::assert_pushdown_matches_memory(&db);
    }
}

#[test]
fn histograms_counted_in_mariadb_equal_those_counted_in_memory() {
    let Some(uri) = uri() else { return };
    let db = MySqlDatabase::connect(&uri).expect("connect");
    common::assert_histograms_match(
        &db,
        "Track",
        &["Milliseconds", "Bytes", "UnitPrice", "GenreId"],
    );
    common::assert_histograms_match(&db, "Invoice", &["Total"]);
}

/// The same data in SQLite and MariaDB: every column's counts agree, and so do the numbers'
/// ranges and the texts' distinct values (MariaDB's collation ignores case; the profile does
/// not).
#[test]
fn sqlite_and_mariadb_profiles_agree() {
    let Some(uri) = uri() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let northwind = dir.path().join("northwind.sqlite");
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/northwind/create.sql"),
    )
    .expect("script");
    rusqlite::Connection::open(&northwind).expect("create").execute_batch(&script).expect("load");
    let chinook = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    for (name, file, tables) in [
        ("chinook", chinook, &["Track", "Customer", "Invoice", "Employee"][..]),
        ("northwind", northwind, &["Orders", "Order Details", "Products", "Customers"][..]),
    ] {
        let my = load(
            &format!("my={}", database(&uri, name)).parse::<SourceSpec>().expect("spec"),
            &NoProgress,
        )
        .expect("load");
        let lite = load(
            &format!("lite=sqlite:{}", file.display()).parse::<SourceSpec>().expect("spec"),
            &NoProgress,
        )
        .expect("load");
        for table in tables {
            let (a, b) =
                (my.collection(table).expect("mariadb"), lite.collection(table).expect("sqlite"));
            for (p, q) in a.profile().properties().iter().zip(b.profile().properties()) {
                assert_eq!(p.path, q.path);
                assert_eq!(
                    (p.present, p.nulls, p.distinct),
                    (q.present, q.nulls, q.distinct),
                    "{name}.{table}.{}",
                    p.path
                );
                if let (Some(x), Some(y)) = (&p.numbers, &q.numbers) {
                    assert_eq!(
                        (x.min_value(), x.max_value()),
                        (y.min_value(), y.max_value()),
                        "{table}.{}",
                        p.path
                    );
                }
            }
        }
    }
}

#[test]
fn writes_are_refused_and_the_data_is_unchanged() {
    let Some(uri) = uri() else { return };
    // The owner's login, which may write: only schemascope keeps the statements read-only.
    let owner = uri.replacen("schemascope_ro:", "schemascope:", 1);
    let db: Arc<dyn Database> = Arc::new(MySqlDatabase::connect(&owner).expect("connect"));
    let checksum = "SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', TrackId, Name, UnitPrice) ORDER BY TrackId SEPARATOR ',')) FROM Track";
    let before = db.query(checksum, &[]).expect("checksum");
    let attempts = [
        "DELETE FROM Genre",
        "INSERT INTO Genre VALUES (999, 'x')",
        "UPDATE Track SET UnitPrice = 0",
        "DROP TABLE Genre",
        "SELECT 1; DROP TABLE Genre",
        "SELECT 1; DELETE FROM Genre",
        "COMMIT; DROP TABLE Genre",
        "CREATE TABLE t (x int)",
        "SET GLOBAL read_only = 0",
        "SELECT * FROM Genre INTO OUTFILE '/tmp/genre.txt'",
        "SELECT * INTO @x FROM Genre LIMIT 1",
        "SELECT @x := 5",
        "SELECT * FROM Genre FOR UPDATE",
        "SELECT * FROM Genre LOCK IN SHARE MODE",
        "SELECT LOAD_FILE('/etc/passwd')",
        "SELECT SLEEP(5)",
        "SELECT BENCHMARK(100000000, MD5('x'))",
        "SELECT GET_LOCK('x', 10)",
        "HANDLER Genre OPEN",
        "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE Genre",
        "CALL mysql.something()",
    ];
    for sql in attempts {
        assert!(db.query(sql, &[]).is_err(), "`{sql}` was allowed");
    }
    assert_eq!(db.query(checksum, &[]).expect("checksum"), before);
    // Parameters that do not match the statement are the statement's fault, not a lost
    // connection.
    let e = db.query("SELECT Name FROM Genre WHERE Name = ?", &[]).expect_err("no parameter");
    assert_eq!(e.class(), schemascope_sources::error::ErrorClass::Syntax, "{e}");
    assert!(!e.to_string().contains("connection"), "{e}");
    assert_eq!(db.query("SELECT COUNT(*) FROM Genre", &[]).expect("count")[0][0].as_count(), 25);
}

#[test]
fn a_server_that_is_down_gets_a_clear_error() {
    let err =
        MySqlDatabase::connect("mysql://schemascope:secret@127.0.0.1:9/chinook").expect_err("down");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:9"), "{text}");
    assert!(text.contains("is the server running"), "{text}");
    assert!(!text.contains("secret"), "the password leaked: {text}");
}

#[test]
fn warnings_that_change_the_result_come_back_with_it() {
    let Some(uri) = uri() else { return };
    let db = MySqlDatabase::connect(&uri).expect("connect");
    let caps = schemascope_sources::sql::Caps { max_rows: Some(10), max_bytes: None };
    // The recursion stops at max_recursive_iterations (1000 by default): 1001 rows, not 5000,
    // and only a warning says so.
    let recursive = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5000) SELECT COUNT(*) FROM t";
    let cut_short = db.run_for_caller(recursive, &[], caps, 30_000).expect("runs");
    assert_eq!(cut_short.rows[0][0].to_json(), serde_json::json!(1001));
    assert!(
        cut_short.warnings.iter().any(|w| w.contains("1931") && w.contains("may be incomplete")),
        "{:?}",
        cut_short.warnings
    );
    let converted =
        db.run_for_caller("SELECT CAST('12abc' AS SIGNED), 1/0", &[], caps, 30_000).expect("runs");
    assert_eq!(converted.warnings.len(), 2, "{:?}", converted.warnings);
    assert!(converted.warnings[0].starts_with("Warning 1292:"), "{:?}", converted.warnings);
    // A clean statement has none, and a statement stopped at a cap reports the cap, not the stop.
    let clean = db.run_for_caller("SELECT Name FROM Genre", &[], caps, 30_000).expect("runs");
    assert!(clean.warnings.is_empty() && clean.cut.is_some(), "{:?}", clean.warnings);
}
