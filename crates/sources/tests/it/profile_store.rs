//! Tables' profiles kept across restarts (`profile_store`): reused while the table is
//! unchanged, recomputed as soon as its rows may have changed, on SQLite, PostgreSQL and
//! ClickHouse; never kept for what the engine cannot version (views, Memory tables).
//!
//! Reuse is proven by editing the stored entry: a count no scan would give comes back only
//! from the store. PostgreSQL and ClickHouse parts run when `scripts/test` set their URIs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemascope_sources::ProfileStore;
use schemascope_sources::sql::{
    ClickHouseDatabase, Database, PostgresDatabase, SqliteDatabase, load_database,
};
use serde_json::Value;

/// The item count a table's profile gives, loading the database afresh (as a restart does).
fn count(database: Arc<dyn Database>, store: &ProfileStore, table: &str) -> u64 {
    let loaded = load_database(database, Some(store)).expect("catalog");
    let collection =
        loaded.collections.iter().find(|c| c.name() == table).expect("the table is listed");
    collection.profile().item_count
}

fn entries(store: &Path) -> Vec<PathBuf> {
    let Ok(listed) = std::fs::read_dir(store) else { return Vec::new() };
    let mut files: Vec<PathBuf> = listed
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The entry stored for `table`, by the table name it holds.
fn entry_of(store: &Path, table: &str) -> Option<(PathBuf, Value)> {
    entries(store).into_iter().find_map(|path| {
        let entry: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        (entry["key"]["table"] == table).then_some((path, entry))
    })
}

/// Rewrites `table`'s stored item count to one no scan of it gives.
fn forge_count(store: &Path, table: &str, forged: u64) {
    let (path, mut entry) = entry_of(store, table).expect("the profile was stored");
    entry["profile"]["item_count"] = forged.into();
    std::fs::write(path, serde_json::to_vec(&entry).expect("json")).expect("write");
}

#[test]
fn a_sqlite_table_is_reused_until_the_file_changes_in_either_journal_mode() {
    use rusqlite::Connection;
    let dir = tempfile::tempdir().expect("tempdir");
    let store_dir = dir.path().join("store");
    let store = ProfileStore::new(&store_dir);
    let path = dir.path().join("data.db");
    let writer = Connection::open(&path).expect("create");
    writer
        .execute_batch(
            "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL);
             CREATE VIEW v AS SELECT a FROM t;",
        )
        .expect("setup");
    let open = || -> Arc<dyn Database> { Arc::new(SqliteDatabase::open(&path).expect("open")) };

    assert_eq!(count(open(), &store, "t"), 3);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&store_dir), 0o700, "only the owner may list stored profiles");
        let (entry, _) = entry_of(&store_dir, "t").expect("stored");
        assert_eq!(mode(&entry), 0o600, "only the owner may read a stored profile");
    }
    forge_count(&store_dir, "t", 4242);
    assert_eq!(count(open(), &store, "t"), 4242, "unchanged: read from the store");

    writer.execute("INSERT INTO t VALUES (4, 'z')", []).expect("insert");
    assert_eq!(count(open(), &store, "t"), 4, "changed: profiled again");

    // In WAL mode committed rows may live only in the log.
    writer.execute_batch("PRAGMA journal_mode = WAL").expect("wal");
    assert_eq!(count(open(), &store, "t"), 4);
    forge_count(&store_dir, "t", 4242);
    writer.execute("INSERT INTO t VALUES (5, 'w')", []).expect("insert");
    assert!(path.with_extension("db-wal").exists(), "the row waits in the log");
    assert_eq!(count(open(), &store, "t"), 5, "a change in the log is a change");

    // A view of the same file is versioned by the file too.
    assert_eq!(count(open(), &store, "v"), 5);
    assert!(entry_of(&store_dir, "v").is_some());
}

#[test]
fn an_entry_of_other_columns_or_a_damaged_one_is_not_used() {
    use rusqlite::Connection;
    let dir = tempfile::tempdir().expect("tempdir");
    let store_dir = dir.path().join("store");
    let store = ProfileStore::new(&store_dir);
    let path = dir.path().join("data.db");
    Connection::open(&path)
        .expect("create")
        .execute_batch("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2);")
        .expect("setup");
    let open = || -> Arc<dyn Database> { Arc::new(SqliteDatabase::open(&path).expect("open")) };
    assert_eq!(count(open(), &store, "t"), 2);

    let (entry_path, mut entry) = entry_of(&store_dir, "t").expect("stored");
    entry["profile"]["item_count"] = 4242.into();
    entry["key"]["columns"] = "a\u{1f}TEXT\u{1f}\u{1f}true".into();
    std::fs::write(&entry_path, serde_json::to_vec(&entry).expect("json")).expect("write");
    assert_eq!(count(open(), &store, "t"), 2, "a profile of other columns is not this one");

    std::fs::write(&entry_path, b"{\"format\": 1, \"key\": ").expect("damage");
    assert_eq!(count(open(), &store, "t"), 2, "a damaged entry is profiled over");
    assert!(entry_of(&store_dir, "t").is_some(), "and stored again");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // An entry others may write could be anyone's.
        forge_count(&store_dir, "t", 4242);
        std::fs::set_permissions(&entry_path, std::fs::Permissions::from_mode(0o666))
            .expect("chmod");
        assert_eq!(count(open(), &store, "t"), 2, "an entry others may write is not believed");

        // A FIFO where the entry belongs is passed over, not waited on.
        std::fs::remove_file(&entry_path).expect("remove");
        let made = std::process::Command::new("mkfifo").arg(&entry_path).status().expect("mkfifo");
        assert!(made.success());
        assert_eq!(count(open(), &store, "t"), 2);
    }
}

#[test]
fn a_postgres_table_is_reused_until_a_write_or_truncate_and_a_view_is_never_stored() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test");
        return;
    };
    let mut admin = postgres::Client::connect(&uri, postgres::NoTls).expect("admin connection");
    let schema = format!("schemascope_store_{}", std::process::id());
    // Each write is counted in the table's statistics at once (PostgreSQL 15 flushes a
    // session's counters at most once a second otherwise).
    let write = |admin: &mut postgres::Client, sql: &str| {
        admin
            .batch_execute(&format!("SELECT pg_stat_force_next_flush(); {sql}"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        admin.batch_execute("SELECT 1").expect("flushed when idle");
    };
    write(
        &mut admin,
        &format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
             CREATE TABLE {schema}.t (a int, b text); INSERT INTO {schema}.t VALUES (1, 'x'), (2, NULL);
             CREATE VIEW {schema}.v AS SELECT a FROM {schema}.t"
        ),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ProfileStore::new(dir.path());
    let open =
        || -> Arc<dyn Database> { Arc::new(PostgresDatabase::connect(&uri).expect("connect")) };
    let table = format!("{schema}.t");

    assert_eq!(count(open(), &store, &table), 2);
    forge_count(dir.path(), &table, 4242);
    assert_eq!(count(open(), &store, &table), 4242, "unchanged: read from the store");

    write(&mut admin, &format!("UPDATE {schema}.t SET b = 'y' WHERE a = 2"));
    assert_eq!(count(open(), &store, &table), 2, "an update is a change");
    forge_count(dir.path(), &table, 4242);
    write(&mut admin, &format!("INSERT INTO {schema}.t VALUES (3, 'z')"));
    assert_eq!(count(open(), &store, &table), 3, "an insert is a change");
    forge_count(dir.path(), &table, 4242);
    // TRUNCATE moves no insert, update or delete counter; it gives the table a new file.
    write(&mut admin, &format!("TRUNCATE {schema}.t"));
    assert_eq!(count(open(), &store, &table), 0, "a truncate is a change");

    assert_eq!(count(open(), &store, &format!("{schema}.v")), 0);
    assert!(entry_of(dir.path(), &format!("{schema}.v")).is_none(), "a view has no version");

    // A column dropped and added again under its name and type moves no counter.
    write(&mut admin, &format!("INSERT INTO {schema}.t VALUES (1, 'x')"));
    assert_eq!(count(open(), &store, &table), 1);
    forge_count(dir.path(), &table, 4242);
    write(
        &mut admin,
        &format!("ALTER TABLE {schema}.t DROP COLUMN b; ALTER TABLE {schema}.t ADD COLUMN b text"),
    );
    assert_eq!(count(open(), &store, &table), 1, "a column added again is a change");

    // What changes the rows a table shows without a write to it is never kept: a child's
    // rows (read with its parent's), a policy, a user-defined type's definition.
    write(
        &mut admin,
        &format!(
            "CREATE TABLE {schema}.parent (a int); CREATE TABLE {schema}.child () INHERITS ({schema}.parent);
             CREATE TABLE {schema}.guarded (a int); ALTER TABLE {schema}.guarded ENABLE ROW LEVEL SECURITY;
             CREATE TYPE {schema}.mood AS ENUM ('sad', 'ok'); CREATE TABLE {schema}.moods (m {schema}.mood);
             INSERT INTO {schema}.moods VALUES ('sad')"
        ),
    );
    for kept_never in ["parent", "guarded", "moods"] {
        let name = format!("{schema}.{kept_never}");
        count(open(), &store, &name);
        assert!(entry_of(dir.path(), &name).is_none(), "{name} has no version");
    }
    let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}

#[test]
fn a_clickhouse_merge_tree_is_reused_until_a_new_part_and_a_memory_table_is_never_stored() {
    let database = format!("schemascope_store_{}", std::process::id());
    let Some((_, rw)) = crate::sql_clickhouse::scratch_database(
        &database,
        &[
            &format!("DROP TABLE IF EXISTS {database}.t"),
            &format!("DROP TABLE IF EXISTS {database}.m"),
            &format!("CREATE TABLE {database}.t (a Int64, b String) ENGINE = MergeTree ORDER BY a"),
            &format!("INSERT INTO {database}.t VALUES (1, 'x'), (2, 'y')"),
            &format!("CREATE TABLE {database}.m (a Int64) ENGINE = Memory"),
            &format!("INSERT INTO {database}.m VALUES (1)"),
        ],
    ) else {
        return;
    };
    let ro = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE").expect("set with the writer");
    let db_uri = ro.rsplit_once('/').map(|(base, _)| format!("{base}/{database}")).expect("uri");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ProfileStore::new(dir.path());
    let open = || -> Arc<dyn Database> {
        Arc::new(ClickHouseDatabase::connect(&db_uri).expect("connect"))
    };

    // Changed within the last two seconds: a table made again in the same second with the
    // same number of rows would have the same parts, so nothing is kept yet.
    assert_eq!(count(open(), &store, "t"), 2);
    assert!(entry_of(dir.path(), "t").is_none(), "a table changed this second is not kept");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(count(open(), &store, "t"), 2);
    forge_count(dir.path(), "t", 4242);
    assert_eq!(count(open(), &store, "t"), 4242, "unchanged: read from the store");
    crate::sql_clickhouse::as_writer(&rw, &format!("INSERT INTO {database}.t VALUES (3, 'z')"));
    assert_eq!(count(open(), &store, "t"), 3, "a new part is a change");
    // Dropped and made again with other rows: new parts, whatever their names and times.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(count(open(), &store, "t"), 3);
    forge_count(dir.path(), "t", 4343);
    for sql in [
        format!("DROP TABLE {database}.t"),
        format!("CREATE TABLE {database}.t (a Int64, b String) ENGINE = MergeTree ORDER BY a"),
        format!("INSERT INTO {database}.t VALUES (7, 'p'), (8, 'q'), (9, 'r')"),
    ] {
        crate::sql_clickhouse::as_writer(&rw, &sql);
    }
    assert_eq!(count(open(), &store, "t"), 3, "a table made again is a change");

    assert_eq!(count(open(), &store, "m"), 1);
    assert!(entry_of(dir.path(), "m").is_none(), "a Memory table has no version");
    crate::sql_clickhouse::as_writer(&rw, &format!("DROP DATABASE IF EXISTS {database}"));
}
