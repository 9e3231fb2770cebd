//! SQLite sources on real data (Chinook, Northwind): the catalog, pushdown profiles equal to the
//! in-memory profiler's on the same rows, histogram bins counted in the database, and writes
//! refused through every path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemascope_core::{Catalog, TableKind};
use schemascope_sources::sql::{Database, SqliteDatabase};
use schemascope_sources::{NoProgress, SourceSpec, load};

use crate::common;

fn chinook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite")
}

/// Northwind, built from its SQL script into a temporary file.
fn northwind(dir: &Path) -> PathBuf {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/northwind/create.sql"),
    )
    .expect("script");
    let path = dir.join("northwind.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection.execute_batch(&script).expect("load northwind");
    path
}

#[test]
fn chinook_catalog_has_keys_in_both_directions_and_row_counts() {
    let source = load(
        &format!("chinook={}", chinook().display()).parse::<SourceSpec>().expect("spec"),
        &NoProgress,
    )
    .expect("load");
    assert_eq!(source.collections.len(), 11);
    let db = source.database.as_ref().expect("database");
    let catalog: Catalog = db.catalog().expect("catalog");
    let track = catalog.table("Track").expect("Track");
    assert_eq!(track.primary_key, ["TrackId"]);
    let mut targets: Vec<&str> =
        track.foreign_keys.iter().map(|f| f.referenced_table.as_str()).collect();
    targets.sort_unstable();
    assert_eq!(targets, ["Album", "Genre", "MediaType"]);
    assert_eq!(
        catalog.table("PlaylistTrack").expect("PlaylistTrack").primary_key,
        ["PlaylistId", "TrackId"]
    );
    assert_eq!(catalog.neighbours("Customer"), ["Employee", "Invoice"]);
    let name = track.column("Name").expect("Name");
    assert_eq!((name.declared_type.as_str(), name.nullable), ("NVARCHAR(200)", false));
    assert!(track.column("Composer").expect("Composer").nullable);
    let counts: Vec<(String, usize)> =
        source.collections.iter().map(|c| (c.name().to_string(), c.len())).collect();
    assert!(counts.contains(&("Track".into(), 3503)), "{counts:?}");
    assert!(counts.contains(&("InvoiceLine".into(), 2240)), "{counts:?}");
    let invoice = source.collection("Invoice").expect("Invoice");
    assert_eq!(invoice.table().and_then(|t| t.row_count), Some(412));
}

#[test]
fn chinook_pushdown_profiles_equal_the_in_memory_profiles() {
    let db = SqliteDatabase::open(&chinook()).expect("open");
    common::assert_pushdown_matches_memory(&db);
}

#[test]
fn northwind_pushdown_profiles_equal_the_in_memory_profiles_with_views_and_blobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SqliteDatabase::open(&northwind(dir.path())).expect("open");
    let catalog = db.catalog().expect("catalog");
    assert!(catalog.tables.iter().any(|t| t.kind == TableKind::View), "Northwind has views");
    common::assert_pushdown_matches_memory(&db);
}

/// Texts holding NULs or bytes that are not UTF-8, and blobs, in columns of every storage
/// class: the pushdown profile is the in-memory profile of the rows as read — lengths in
/// characters of the text as read (SQLite's `length()` stops at a NUL and counts bad bytes its
/// own way), blobs described by size and digest, so different blobs count as different values.
#[test]
fn texts_with_nuls_or_bad_bytes_and_blobs_are_profiled_as_read() {
    use rusqlite::types::Value as V;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("odd.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, anything)")
        .expect("table");
    let rows: [(V, V); 10] = [
        (V::Text("ab\0cd".into()), V::Integer(7)),
        (V::Text("ab\0ce\0".into()), V::Text("x\0yz".into())),
        (V::Text("é\0ü€😀".into()), V::Real(2.5)),
        (V::Text("\0".into()), V::Blob(vec![0, 1, 2])),
        (V::Text("abc".into()), V::Null),
        (V::Text("日本".into()), V::Blob(vec![0, 1, 3])),
        (V::Text("ab".into()), V::Blob(vec![0, 1, 2])),
        (V::Blob(vec![0xed, 0xa0, 0x80, b'z']), V::Text("<blob: 3 bytes>".into())),
        (V::Blob(vec![0xff]), V::Blob(Vec::new())),
        // Twice, so that no two texts not UTF-8 tie on their count: ties are listed in the order
        // of their bytes in SQLite and of their text as read in memory.
        (V::Blob(vec![0xff]), V::Null),
    ];
    for (body, anything) in rows {
        // A blob bound to `body` is stored as text holding its bytes (not UTF-8 here).
        connection
            .execute(
                "INSERT INTO notes (body, anything) VALUES (CASE WHEN typeof(?1) = 'blob' THEN CAST(?1 AS TEXT) ELSE ?1 END, ?2)",
                rusqlite::params![body, anything],
            )
            .expect("insert");
    }
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    common::assert_pushdown_matches_memory(&db);
    let catalog = db.catalog().expect("catalog");
    let table = catalog.tables.iter().find(|t| t.name == "notes").expect("notes");
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, table).expect("profile");
    let strings = |column: &str| {
        profile
            .property(&schemascope_core::PropertyPath::root().child(column))
            .and_then(|p| p.strings.clone())
            .expect("strings")
    };
    let body = strings("body");
    assert_eq!(
        (body.min_length, body.max_length),
        (1, 6),
        "\\0 alone is one character; ab\\0ce\\0 six"
    );
    assert_eq!(body.distinct, 9);
    // A text, two different blobs of 3 bytes (one of them twice), an empty blob and a text like
    // the old blob description: five strings.
    let anything = strings("anything");
    assert_eq!(anything.distinct, 5, "{:?}", anything.top);
}

/// A view calling a function of the application that made the file cannot be compiled here,
/// nor an rtree table connected: each is listed with no columns and the reason, and the file's
/// other tables are read as ever, generated columns included.
#[test]
fn a_view_that_cannot_be_compiled_leaves_the_other_tables_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("app.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO b (v) VALUES ('x'), ('y');
             CREATE VIEW shown AS SELECT app_format(v) AS f FROM b;
             CREATE VIEW plain AS SELECT v FROM b;
             CREATE TABLE g (x INTEGER, y INTEGER AS (x * 2), z TEXT AS (upper('a' || x)) STORED);
             INSERT INTO g (x) VALUES (1), (2);
             CREATE VIRTUAL TABLE r USING rtree(id, minx, maxx);",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    let catalog = db.catalog().expect("catalog");
    let names: Vec<&str> = catalog.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["b", "g", "plain", "r", "r_node", "r_parent", "r_rowid", "shown"]);
    // Generated columns are columns (`table_info` leaves them out).
    let g: Vec<&str> =
        catalog.table("g").expect("g").columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(g, ["x", "y", "z"]);
    // rtree prepares writes to its own tables when connected, which the gate refuses: listed
    // as unreadable, saying so in words.
    let r = catalog.table("r").expect("r");
    assert!(r.comment.as_deref().is_some_and(|c| c.contains("writing to r_node")), "{r:?}");
    let shown = catalog.table("shown").expect("listed");
    assert!(shown.columns.is_empty());
    assert!(
        shown.comment.as_deref().is_some_and(|c| c.contains("no such function: app_format")),
        "{shown:?}"
    );
    assert_eq!(catalog.table("plain").and_then(|t| t.row_count), Some(2));
    let rows = db.query("SELECT count(*) FROM b", &[]).expect("the table reads");
    assert_eq!(rows[0][0].as_count(), 2);
}

/// SQLite asks the authorizer about the functions of a column's DEFAULT when a statement reads
/// the column: one calling a function of the application that made the file (which this
/// connection does not have, so cannot run) leaves the table readable and profiled like any
/// other; one calling a refused function of the engine does not.
#[test]
fn a_default_calling_an_applications_function_leaves_its_table_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("defaults.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE t (a INTEGER, b TEXT DEFAULT (app_now()), c DEFAULT (upper('k')));
             INSERT INTO t (a, b, c) VALUES (1, 'x', 'K'), (2, NULL, 'K'), (3, 'y', NULL);",
        )
        .expect("fill");
    let db = SqliteDatabase::open(&path).expect("open");
    let rows = db.query("SELECT a, b, c FROM t ORDER BY a", &[]).expect("t reads");
    assert_eq!(rows.len(), 3);
    common::assert_pushdown_matches_memory(&db);
    let catalog = db.catalog().expect("catalog");
    let t = catalog.table("t").expect("t");
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, t).expect("profile");
    let b = profile.property(&schemascope_core::PropertyPath::root().child("b")).expect("b");
    assert_eq!((b.present, b.nulls, b.distinct), (3, 1, 2));
    // Called where it is written, an application's function is unknown, a refused one refused.
    let unknown = db.query("SELECT app_now()", &[]).expect_err("no such function");
    assert!(unknown.to_string().contains("no such function: app_now"), "{unknown}");
    connection
        .execute_batch(
            "CREATE TABLE h (a INTEGER, c DEFAULT (load_extension('x')));
             INSERT INTO h (a, c) VALUES (1, 2);",
        )
        .expect("h");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open again");
    let refused = db.query("SELECT c FROM h", &[]).expect_err("refused");
    assert!(refused.to_string().contains("load_extension"), "{refused}");
}

/// The function `app_double` of an application that writes a file with columns computed by it
/// (registered on the connection that writes it, never on schemascope's).
fn register_app_double(connection: &rusqlite::Connection) {
    connection
        .create_scalar_function(
            "app_double",
            1,
            rusqlite::functions::FunctionFlags::SQLITE_UTF8
                | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
            |context| Ok(context.get::<Option<i64>>(0)?.map(|x| x * 2)),
        )
        .expect("function");
}

/// A virtual generated column computed by a function of the application that made the file
/// fails every statement that reads it, `SELECT *` too: it is left out of the catalog, the
/// table saying which and why, and the table's other columns — a stored generated column of
/// the same function among them — are listed and profiled.
#[test]
fn a_column_computed_by_an_applications_function_is_left_out_and_its_table_profiled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("generated.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    register_app_double(&connection);
    connection
        .execute_batch(
            "PRAGMA foreign_keys = OFF;
             CREATE TABLE p (id INTEGER PRIMARY KEY);
             INSERT INTO p VALUES (2), (4);
             CREATE TABLE t (x INTEGER, label TEXT, twice INTEGER AS (app_double(x)) VIRTUAL,
                 kept INTEGER AS (app_double(x)) STORED, plus INTEGER AS (x + 1),
                 FOREIGN KEY (twice) REFERENCES p (id), FOREIGN KEY (x) REFERENCES p (id));
             INSERT INTO t (x, label) VALUES (1, 'a'), (2, 'b'), (NULL, 'b');",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    db.query("SELECT * FROM t", &[]).expect_err("the column cannot be computed here");
    let catalog = db.catalog().expect("catalog");
    let t = catalog.table("t").expect("t");
    let columns: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["x", "label", "kept", "plus"]);
    let comment = t.comment.as_deref().expect("says what was left out");
    assert!(comment.contains("twice (") && comment.contains("app_double"), "{comment}");
    // A key over the column left out would name a column the model cannot see.
    let keys: Vec<&[String]> = t.foreign_keys.iter().map(|k| k.columns.as_slice()).collect();
    assert_eq!(keys, [["x".to_string()]]);
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, t).expect("profile");
    let property = |name: &str| {
        profile.property(&schemascope_core::PropertyPath::root().child(name)).expect(name)
    };
    let kept = property("kept");
    assert_eq!((kept.present, kept.nulls, kept.distinct), (3, 1, 2));
    assert_eq!(kept.numbers.as_ref().map(|n| (n.min, n.max)), Some((2.0, 4.0)));
    assert_eq!(property("plus").numbers.as_ref().map(|n| n.max), Some(3.0));
    assert_eq!(property("label").distinct, 2);
    common::assert_pushdown_matches_memory(&db);
}

/// A view over a table whose column this connection cannot compute leaves that column out too,
/// and profiles the rest; a view of nothing but such columns is listed as unreadable.
#[test]
fn a_views_column_that_cannot_be_computed_here_is_left_out_of_the_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("views.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    register_app_double(&connection);
    connection
        .execute_batch(
            "CREATE TABLE t (x INTEGER, twice INTEGER AS (app_double(x)) VIRTUAL);
             INSERT INTO t (x) VALUES (1), (2), (2), (NULL);
             CREATE VIEW every AS SELECT * FROM t;
             CREATE VIEW only_twice AS SELECT twice FROM t;",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    let catalog = db.catalog().expect("catalog");
    let every = catalog.table("every").expect("every");
    let columns: Vec<&str> = every.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(columns, ["x"]);
    assert_eq!(every.row_count, Some(4));
    let comment = every.comment.as_deref().expect("says what was left out");
    assert!(comment.contains("twice (") && comment.contains("app_double"), "{comment}");
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, every).expect("profile");
    let x = profile.property(&schemascope_core::PropertyPath::root().child("x")).expect("x");
    assert_eq!((x.present, x.nulls, x.distinct), (4, 1, 2));
    let only = catalog.table("only_twice").expect("listed");
    assert!(only.columns.is_empty());
    assert!(
        only.comment.as_deref().is_some_and(|c| c.starts_with("Cannot be read here")),
        "{only:?}"
    );
}

/// A collation of the application that made the file is not on this connection: SQLite cannot
/// compare that column's values by it, nor read an index ordered by it. The table is counted
/// (without the index), profiled and looked up by bytes, as every column is.
#[test]
fn a_column_in_an_applications_collation_is_profiled_and_looked_up_by_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("collation.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    // The file as an application with its own collation `app_order` wrote it: made with NOCASE,
    // then renamed in the schema (this connection cannot register a collation).
    connection
        .execute_batch(
            "CREATE TABLE w (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, n INTEGER);
             CREATE INDEX w_name ON w (name);
             INSERT INTO w (name, n) VALUES ('ab', 1), ('AB', 2), ('Ab', 3), ('cd', 4), (9e999, 5);
             PRAGMA writable_schema = ON;
             UPDATE sqlite_schema SET sql = replace(sql, 'COLLATE NOCASE', 'COLLATE app_order')
                 WHERE name = 'w';
             PRAGMA writable_schema = OFF;",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    db.query("SELECT count(*) FROM w WHERE name = 'ab'", &[])
        .expect_err("the collation is not on this connection");
    let catalog = db.catalog().expect("catalog");
    let w = catalog.table("w").expect("w");
    assert_eq!(w.row_count, Some(5));
    assert_eq!(w.columns.len(), 3, "{w:?}");
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, w).expect("profile");
    let name =
        profile.property(&schemascope_core::PropertyPath::root().child("name")).expect("name");
    assert_eq!((name.present, name.distinct), (5, 5));
    common::assert_pushdown_matches_memory(&db);
    for (shown, stored) in [("ab", 1), ("AB", 1), ("aB", 0), ("Infinity", 1)] {
        let predicate = db.shown_value_predicate("name", shown);
        let sql = format!("SELECT count(*) FROM w WHERE {predicate}");
        let rows = db.query(&sql, &[schemascope_sources::sql::SqlValue::Text(shown.into())]);
        assert_eq!(rows.expect("looked up")[0][0].as_count(), stored, "{shown}");
    }
}

/// A value is looked up as stored only when a row holds it: a number written another way
/// (`1.00`, `+10`) finds the number in a numeric column, never a text that reads alike.
#[test]
fn a_number_looked_up_in_a_text_column_finds_only_its_own_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("codes.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE s (code TEXT, n INTEGER, r REAL);
             INSERT INTO s VALUES ('1.0', 10, 1.0), ('007', 7, 2.5), ('10', NULL, NULL);",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    for (column, value, stored) in [
        ("code", "1.0", 1),
        ("code", "1.00", 0),
        ("code", "1e0", 0),
        ("code", "+10", 0),
        ("code", "7", 0),
        ("code", "007", 1),
        ("n", "+10", 1),
        ("n", "10.0", 1),
        ("n", "7", 1),
        ("r", "1", 1),
        ("r", "2.50", 1),
        ("r", "3", 0),
    ] {
        let predicate = db.shown_value_predicate(column, value);
        let sql = format!("SELECT count(*) FROM s WHERE {predicate}");
        let rows = db.query(&sql, &[schemascope_sources::sql::SqlValue::Text(value.into())]);
        assert_eq!(rows.expect("looked up")[0][0].as_count(), stored, "{column} {value}");
    }
}

/// Doubles at the ends of their range profile in SQLite as in memory: infinities are the texts
/// rows show them as (JSON has no such number), and the mean and deviation of values whose
/// squares underflow (1e-300) or whose sums overflow (1e307) are their true figures, not 0 or
/// none.
#[test]
fn infinities_and_doubles_at_the_ends_of_their_range_profile_as_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("extremes.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE m (x REAL, tiny REAL, huge REAL, sign REAL);
             WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 299)
             INSERT INTO m SELECT i, (1 + (i % 9)) * 1e-300, (1 + (i % 17)) * 1e307,
                 CASE WHEN i % 2 = 0 THEN 1e-300 ELSE -1e-300 END FROM k;
             UPDATE m SET x = 9e999 WHERE x = 7;
             UPDATE m SET x = -9e999 WHERE x = 8;",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    common::assert_pushdown_matches_memory(&db);
    let catalog = db.catalog().expect("catalog");
    let profile =
        schemascope_sources::sql::pushdown::profile_table(&db, catalog.table("m").expect("m"))
            .expect("profile");
    let property = |name: &str| {
        profile.property(&schemascope_core::PropertyPath::root().child(name)).expect("property")
    };
    let x = property("x");
    let texts: Vec<&str> =
        x.strings.as_ref().expect("texts").top.iter().filter_map(|v| v.value.as_str()).collect();
    assert_eq!(texts, ["-Infinity", "Infinity"]);
    assert_eq!(x.numbers.as_ref().map(|n| (n.count, n.max)), Some((298, 299.0)));
    // Looked up by the text it is listed as.
    for shown in ["Infinity", "-Infinity"] {
        let predicate = db.shown_value_predicate("x", shown);
        let sql = format!("SELECT count(*) FROM m WHERE {predicate}");
        let rows = db.query(&sql, &[schemascope_sources::sql::SqlValue::Text(shown.into())]);
        assert_eq!(rows.expect("looked up")[0][0].as_count(), 1, "{shown}");
    }
    for name in ["tiny", "huge", "sign"] {
        let numbers = property(name).numbers.clone().expect("numbers");
        assert!(numbers.mean.is_finite() && numbers.std_dev > 0.0, "{name}: {numbers:?}");
    }
}

#[test]
fn histograms_counted_in_sqlite_equal_those_counted_in_memory() {
    let db = SqliteDatabase::open(&chinook()).expect("open");
    common::assert_histograms_match(
        &db,
        "Track",
        &["Milliseconds", "Bytes", "UnitPrice", "GenreId"],
    );
    common::assert_histograms_match(&db, "Invoice", &["Total"]);
}

#[test]
fn writes_are_refused_through_every_path_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("chinook.sqlite");
    std::fs::copy(chinook(), &path).expect("copy");
    let before = std::fs::read(&path).expect("read");
    let db: Arc<dyn Database> = Arc::new(SqliteDatabase::open(&path).expect("open"));
    let attempts = [
        "DELETE FROM Genre",
        "INSERT INTO Genre (Name) VALUES ('x')",
        "UPDATE Track SET UnitPrice = 0",
        "DROP TABLE Genre",
        "SELECT 1; DROP TABLE Genre",
        "COMMIT; DROP TABLE Genre",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = DELETE",
        "ATTACH DATABASE 'other.sqlite' AS other",
        "WITH doomed AS (DELETE FROM Genre RETURNING *) SELECT * FROM doomed",
        "CREATE TEMP TABLE t (x)",
        "VACUUM INTO 'copy.sqlite'",
        "SELECT load_extension('libevil')",
        "REPLACE INTO Genre VALUES (1, 'x')",
    ];
    for sql in attempts {
        let result = db.query(sql, &[]);
        assert!(result.is_err(), "`{sql}` was allowed");
    }
    assert_eq!(db.query("SELECT COUNT(*) FROM Genre", &[]).expect("read").len(), 1);
    drop(db);
    assert!(std::fs::read(&path).expect("read") == before, "the database file changed");
    assert!(!dir.path().join("other.sqlite").exists() && !dir.path().join("copy.sqlite").exists());
}

#[test]
fn missing_and_non_database_files_get_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = SqliteDatabase::open(&dir.path().join("nope.sqlite")).expect_err("missing");
    assert!(err.to_string().contains("no such file"), "{err}");
    let text = dir.path().join("notes.db");
    std::fs::write(&text, "just some text, not a database\n".repeat(200)).expect("write");
    let err = SqliteDatabase::open(&text).expect_err("not a database");
    assert!(err.to_string().contains("not a readable SQLite database"), "{err}");
}

/// A table `links` of `urls` distinct URLs and then one value that is not a URL.
fn links(dir: &Path, urls: u64) -> SqliteDatabase {
    let path = dir.join(format!("links-{urls}.sqlite"));
    let _ = std::fs::remove_file(&path);
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(&format!(
            "CREATE TABLE links (id INTEGER PRIMARY KEY, url TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {urls})
             INSERT INTO links SELECT i, 'https://example.com/item/' || i FROM n;
             INSERT INTO links VALUES ({urls} + 1, 'n/a');"
        ))
        .expect("fill");
    drop(connection);
    links_opened(dir, urls)
}

/// The table [`links`] made, opened again.
fn links_opened(dir: &Path, urls: u64) -> SqliteDatabase {
    SqliteDatabase::open(&dir.join(format!("links-{urls}.sqlite"))).expect("open")
}

/// `links.url` profiled in the database, and described.
fn profiled_links(
    db: &SqliteDatabase,
) -> (schemascope_core::profile::StringProfile, serde_json::Value) {
    use schemascope_core::path::PropertyPath;
    use schemascope_core::property::{PropertyOptions, describe_property};
    let catalog = db.catalog().expect("catalog");
    let table = catalog.tables.iter().find(|t| t.name == "links").expect("links");
    let profile = schemascope_sources::sql::pushdown::profile_table(db, table).expect("profile");
    let url = PropertyPath::root().child("url");
    let strings = profile.property(&url).and_then(|p| p.strings.clone()).expect("strings");
    (strings, describe_property(&profile, "links", &url, PropertyOptions::default()).data)
}

/// Formats of a text column with many distinct values (more than a sample holds) are counted
/// over every value when there are few enough to fetch; past that, the counts are said to be a
/// sample's and no format is claimed from the first rows, all URLs here while a later value is
/// not.
#[test]
fn formats_are_exact_up_to_many_distinct_values_then_said_to_be_a_sample() {
    use schemascope_core::profile::formats::StringFormat;
    let dir = tempfile::tempdir().expect("tempdir");
    let (strings, described) = profiled_links(&links(dir.path(), 150_000));
    assert_eq!((strings.format, strings.format_sample), (None, None));
    assert_eq!(strings.format_counts, vec![(StringFormat::Uri, 150_000)]);
    assert_eq!(described["formatCounts"], serde_json::json!([{"format": "uri", "count": 150_000}]));

    let (strings, described) = profiled_links(&links(dir.path(), 300_000));
    assert_eq!(strings.format, None, "a sample's format is not the column's");
    // Every value of the first 100,000 rows (not the 10,000 groups whose text sorts first).
    let sampled = strings.format_sample.expect("counted over a sample");
    assert_eq!(sampled, 100_000);
    assert_eq!(strings.format_counts, vec![(StringFormat::Uri, sampled)]);
    assert_eq!(
        described["formatCountsInSample"],
        serde_json::json!([{"format": "uri", "count": sampled}])
    );
    assert_eq!(described["formatSampleValues"], sampled);
    assert!(
        described.get("formatCounts").is_none() && described.get("format").is_none(),
        "{described}"
    );
    assert_eq!(strings.min, None, "no earliest or latest without a format");

    // A sample without a single formatted value still says it is one.
    let connection =
        rusqlite::Connection::open(dir.path().join("links-300000.sqlite")).expect("open");
    connection
        .execute_batch("UPDATE links SET url = 'item ' || id WHERE id <= 100000")
        .expect("plain first rows");
    drop(connection);
    let (strings, described) = profiled_links(&links_opened(dir.path(), 300_000));
    assert_eq!((strings.format_sample, strings.format_counts.len()), (Some(100_000), 0));
    assert_eq!(described["formatCountsInSample"], serde_json::json!([]));
    assert_eq!(described["formatSampleValues"], 100_000);
}

/// Times written as text in several offsets and with and without fractions: the earliest and
/// latest the database profile shows are instants, not the smallest and largest text.
#[test]
fn the_earliest_and_latest_text_times_are_instants() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("times.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE times (id INTEGER PRIMARY KEY, at TEXT);
             INSERT INTO times (at) VALUES ('2024-01-01T09:00:00.5+09:00'), ('2023-12-31T16:07:00-08:00'),
               ('2024-01-05T20:33:00Z'), ('2024-01-05T20:33:00.25Z'), ('2024-01-06T05:12:00+09:00');",
        )
        .expect("fill");
    drop(connection);
    let db = SqliteDatabase::open(&path).expect("open");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.tables.iter().find(|t| t.name == "times").expect("times");
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, table).expect("profile");
    let at = schemascope_core::path::PropertyPath::root().child("at");
    let strings = profile.property(&at).and_then(|p| p.strings.clone()).expect("strings");
    assert_eq!(
        (strings.min.as_deref(), strings.max.as_deref()),
        (Some("2024-01-01T09:00:00.5+09:00"), Some("2024-01-05T20:33:00.25Z"))
    );
    common::assert_table_matches_memory(&db, table);
}

/// URLs longer than a counted key are URLs in a database profile too, few or many.
#[test]
fn long_urls_in_a_database_are_urls() {
    for rows in [5u64, 3_000] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("long.sqlite");
        let connection = rusqlite::Connection::open(&path).expect("create");
        connection
            .execute_batch(&format!(
                "CREATE TABLE long (id INTEGER PRIMARY KEY, url TEXT);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
                 INSERT INTO long SELECT i, 'https://example.com/' || replace(hex(zeroblob(150)), '00', 'ab') || '?sig=' || i FROM n;"
            ))
            .expect("fill");
        drop(connection);
        let db = SqliteDatabase::open(&path).expect("open");
        let catalog = db.catalog().expect("catalog");
        let table = catalog.tables.iter().find(|t| t.name == "long").expect("long");
        let profile =
            schemascope_sources::sql::pushdown::profile_table(&db, table).expect("profile");
        let url = schemascope_core::path::PropertyPath::root().child("url");
        let strings = profile.property(&url).and_then(|p| p.strings.clone()).expect("strings");
        assert!(strings.max_length > 300);
        assert_eq!(
            (strings.format, strings.format_counts),
            (
                Some(schemascope_core::profile::formats::StringFormat::Uri),
                vec![(schemascope_core::profile::formats::StringFormat::Uri, rows)]
            ),
            "{rows} rows"
        );
    }
}
