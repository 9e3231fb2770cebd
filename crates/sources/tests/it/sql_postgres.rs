//! PostgreSQL sources against a real server (started by `scripts/postgres`, loaded with
//! Chinook): catalog with comments and views, pushdown profiles equal to the in-memory ones,
//! histogram bins, read-only transactions, and a dead server's error.
//!
//! The server's URI comes from `SCHEMASCOPE_TEST_POSTGRES` (set by `scripts/test`). Without it
//! these tests say so and pass vacuously — run them through `scripts/test`, as CI does.

use std::sync::Arc;

use schemascope_sources::sql::{Database, PostgresDatabase};
use schemascope_sources::{NoProgress, SourceSpec, load};

use crate::common;

fn uri(var: &str) -> Option<String> {
    let uri = std::env::var(var).ok();
    if uri.is_none() {
        eprintln!("{var} is not set: run through scripts/test to test against PostgreSQL");
    }
    uri
}

#[test]
fn catalog_reads_keys_comments_views_and_row_counts() {
    let Some(uri) = uri("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let source =
        load(&format!("pg={uri}").parse::<SourceSpec>().expect("spec"), &NoProgress).expect("load");
    let db = source.database.as_ref().expect("database");
    let catalog = db.catalog().expect("catalog");
    // Tables of other schemas (other tests' scratch schemas, made and dropped concurrently) are
    // named `schema.table`.
    let public: Vec<&str> =
        catalog.table_names().into_iter().filter(|n| !n.contains('.')).collect();
    assert_eq!(public.len(), 12, "11 tables and one view: {public:?}");
    let customer = catalog.table("Customer").expect("Customer");
    assert_eq!(
        customer.comment.as_deref(),
        Some("People and companies who bought music from the store.")
    );
    let total = catalog.table("Invoice").and_then(|t| t.column("Total")).expect("Invoice.Total");
    assert_eq!(total.comment.as_deref(), Some("Invoice total in USD, tax included."));
    assert_eq!(total.declared_type, "numeric(10,2)");
    assert_eq!(
        catalog.table("PlaylistTrack").expect("PlaylistTrack").primary_key,
        ["PlaylistId", "TrackId"]
    );
    assert_eq!(catalog.neighbours("Customer"), ["Employee", "Invoice"]);
    assert_eq!(
        catalog.table("CustomerInvoiceTotals").map(|t| t.kind),
        Some(schemascope_core::TableKind::View)
    );
    assert_eq!(source.collection("Track").map(|c| c.len()), Some(3503));
    assert_eq!(source.collection("InvoiceLine").map(|c| c.len()), Some(2240));
}

#[test]
fn pushdown_profiles_equal_the_in_memory_profiles() {
    let Some(uri) = uri("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let db = PostgresDatabase::connect(&uri).expect("connect");
    common::assert_pushdown_matches_memory(&db);
}

#[test]
fn histograms_counted_in_postgres_equal_those_counted_in_memory() {
    let Some(uri) = uri("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let db = PostgresDatabase::connect(&uri).expect("connect");
    common::assert_histograms_match(
        &db,
        "Track",
        &["Milliseconds", "Bytes", "UnitPrice", "GenreId"],
    );
    common::assert_histograms_match(&db, "Invoice", &["Total"]);
}

#[test]
fn sqlite_and_postgres_profiles_of_chinook_agree_on_counts() {
    let Some(uri) = uri("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let pg =
        load(&format!("pg={uri}").parse::<SourceSpec>().expect("spec"), &NoProgress).expect("load");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let lite = load(
        &format!("lite=sqlite:{}", path.display()).parse::<SourceSpec>().expect("spec"),
        &NoProgress,
    )
    .expect("load");
    for table in ["Track", "Customer", "Invoice"] {
        let (a, b) = (pg.collection(table).expect("pg"), lite.collection(table).expect("sqlite"));
        for (p, q) in a.profile().properties().iter().zip(b.profile().properties()) {
            assert_eq!(p.path, q.path);
            assert_eq!(
                (p.present, p.nulls, p.distinct),
                (q.present, q.nulls, q.distinct),
                "{table}.{}",
                p.path
            );
        }
    }
}

#[test]
fn writes_are_refused_and_the_data_is_unchanged() {
    let Some(uri) = uri("SCHEMASCOPE_TEST_POSTGRES") else { return };
    let db: Arc<dyn Database> = Arc::new(PostgresDatabase::connect(&uri).expect("connect"));
    let checksum = "SELECT md5(string_agg(t::text, ',' ORDER BY \"TrackId\")) FROM \"Track\" t";
    let before = db.query(checksum, &[]).expect("checksum");
    let attempts = [
        "DELETE FROM \"Genre\"",
        "INSERT INTO \"Genre\" VALUES (999, 'x')",
        "UPDATE \"Track\" SET \"UnitPrice\" = 0",
        "DROP TABLE \"Genre\"",
        "SELECT 1; DROP TABLE \"Genre\"",
        "COMMIT; DROP TABLE \"Genre\"",
        "WITH doomed AS (DELETE FROM \"Genre\" RETURNING *) SELECT * FROM doomed",
        "SELECT * INTO copied FROM \"Genre\"",
        "CREATE TABLE t (x int)",
        "SET ROLE postgres",
        "COPY \"Genre\" TO PROGRAM 'cat'",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT lo_import('/etc/passwd')",
    ];
    for sql in attempts {
        assert!(db.query(sql, &[]).is_err(), "`{sql}` was allowed");
    }
    // The database layer itself refuses what PostgreSQL marks volatile (set_config), however
    // it is spelled; the setting is as it was.
    let path = "SELECT current_setting('search_path')";
    let search_path = db.query(path, &[]).expect("setting");
    for sql in [
        "SELECT set_config('search_path', 'evil', false)",
        "SELECT PG_CATALOG.\"set_config\"('search_path', 'evil', false)",
    ] {
        let refused = db.query(sql, &[]).expect_err("refused").to_string();
        assert!(refused.contains("set_config is not allowed"), "{sql}: {refused}");
    }
    assert_eq!(db.query(path, &[]).expect("setting"), search_path);
    assert_eq!(db.query(checksum, &[]).expect("checksum"), before);
    assert_eq!(
        db.query("SELECT COUNT(*) FROM \"Genre\"", &[]).expect("count")[0][0].as_count(),
        25
    );
}

#[test]
fn a_server_that_is_down_gets_a_clear_error() {
    // Port 9 (discard) on loopback: nothing listens there.
    let err = PostgresDatabase::connect("postgres://schemascope:secret@127.0.0.1:9/chinook")
        .expect_err("down");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:9"), "{text}");
    assert!(text.contains("is the server running"), "{text}");
    assert!(!text.contains("secret"), "the password leaked: {text}");
}
