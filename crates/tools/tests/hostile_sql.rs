//! Hostile SQL: one table of statements that try to write, escape or change the session —
//! multi-statements, transaction control, ATTACH, PRAGMA writes, load_extension, VACUUM INTO,
//! DML in CTEs, SELECT … INTO, COPY … TO PROGRAM, file and large-object functions, SET ROLE,
//! set_config, functions with side effects, and comments, casing, quoting, unicode whitespace
//! and string literals hiding keywords — each refused with a clear reason by validate_query,
//! by execute_query, and (where it can on its own) by the database layer called directly; then
//! the database is checked unchanged: SQLite's file byte for byte, PostgreSQL's rows of every
//! table and its catalog facts, and the source's own session state. Legitimate queries that
//! merely look scary run and return their rows.
//!
//! PostgreSQL runs when `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it), as the role
//! that owns the tables: read-only must come from schemascope, not from missing privileges.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::registry;
use schemascope_sources::sql::{Database, PostgresDatabase, SqlValue};
use schemascope_tools::*;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq)]
enum On {
    Sqlite,
    Postgres,
    Both,
}

/// What the database layer does with the statement when called directly, past the validator.
#[derive(Debug, Clone, Copy)]
enum Db {
    /// It refuses, with this reason (alternatives separated by ` | `).
    Refuses(&'static str),
    /// It may run or fail; the checks after the suite prove it left nothing behind.
    Harmless,
    /// Not run directly: its effect would land outside the database (other sessions).
    Skip,
}

struct Case {
    on: On,
    sql: &'static str,
    /// In validate_query's errors (alternatives separated by ` | `).
    validate: &'static str,
    /// In execute_query's message, when it differs from `validate`.
    execute: Option<&'static str>,
    db: Db,
}

const fn case(on: On, sql: &'static str, validate: &'static str, db: Db) -> Case {
    Case { on, sql, validate, execute: None, db }
}

/// SQL that does not parse: both the validator and execute_query refuse it on its tokens.
const fn unparsed(on: On, sql: &'static str, reason: &'static str, db: Db) -> Case {
    Case { on, sql, validate: reason, execute: None, db }
}

use Db::{Harmless, Refuses, Skip};
use On::{Both, Postgres, Sqlite};

const ONE: &str = "exactly one statement";
const WRITES: &str = "it is not a read-only query";
const PG_RO: &str = "read-only transaction";

/// `@DIR@` is the SQLite database's directory (checked for new files afterwards).
const CASES: &[Case] = &[
    // Several statements, however they are separated.
    case(Both, "SELECT 1; DROP TABLE \"Genre\"", ONE, Refuses("several statements | multiple commands")),
    case(Both, "COMMIT; DROP TABLE \"Genre\"", ONE, Refuses("starts with COMMIT")),
    case(Both, "SELECT 1 -- a comment\n; DELETE FROM \"Genre\"", ONE, Refuses("several statements | multiple commands")),
    case(Both, "SELECT 1 /* ; */ ; /* */ UPDATE \"Genre\" SET \"Name\" = 'x'", ONE, Refuses("several statements | multiple commands")),
    unparsed(Both, "SELECT 1;\u{a0}DROP TABLE \"Genre\"", ONE, Refuses("several statements | multiple commands | syntax error")),
    unparsed(Both, "SELECT 1;\u{2028}DELETE FROM \"Genre\"", ONE, Refuses("several statements | multiple commands | syntax error")),
    // A backslash does not escape a quote in standard SQL: the string ends, a DROP follows.
    case(Both, "SELECT '\\'; DROP TABLE \"Genre\"; --'", ONE, Refuses("several statements | multiple commands")),
    case(Postgres, "SELECT E'\\''; DROP TABLE \"Genre\"; --'", ONE, Refuses("multiple commands")),
    case(Postgres, "SELECT $a$ $$ $a$; DROP TABLE \"Genre\"", ONE, Refuses("multiple commands")),
    // Transaction control and the session.
    case(Both, "COMMIT", "transaction control", Refuses("starts with COMMIT")),
    case(Both, "ROLLBACK", "transaction control", Refuses("starts with ROLLBACK")),
    case(Both, "BEGIN", "transaction control", Refuses("starts with BEGIN")),
    case(Postgres, "START TRANSACTION READ WRITE", "transaction control", Refuses("starts with START")),
    case(Both, "SAVEPOINT s", WRITES, Refuses("starts with SAVEPOINT")),
    case(Postgres, "SET ROLE postgres", "SET changes the session", Refuses("starts with SET")),
    unparsed(Postgres, "SET SESSION AUTHORIZATION postgres", "starts with SET", Refuses("starts with SET")),
    case(Postgres, "set default_transaction_read_only = off", "SET changes the session", Refuses("starts with set")),
    case(Postgres, "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", "SET changes the session", Refuses("starts with SET")),
    case(Postgres, "RESET ALL", "RESET", Refuses("starts with RESET")),
    case(Postgres, "SELECT set_config('default_transaction_read_only', 'off', false)", "set_config is not allowed", Harmless),
    case(Postgres, "SELECT set_config('search_path', 'pg_temp', false)", "set_config is not allowed", Harmless),
    case(Postgres, "DISCARD ALL", WRITES, Refuses("starts with DISCARD")),
    case(Postgres, "PREPARE q AS DELETE FROM \"Genre\"", WRITES, Refuses("starts with PREPARE")),
    case(Postgres, "EXECUTE q", WRITES, Refuses("starts with EXECUTE")),
    case(Postgres, "DEALLOCATE ALL", WRITES, Refuses("starts with DEALLOCATE")),
    case(Postgres, "LISTEN schemascope", WRITES, Refuses("starts with LISTEN")),
    case(Postgres, "NOTIFY schemascope, 'x'", WRITES, Refuses("starts with NOTIFY")),
    case(Postgres, "SELECT pg_notify('schemascope', 'x')", "pg_notify is not allowed", Harmless),
    // Plain writes, in any spelling.
    case(Both, "DELETE FROM \"Genre\"", "DELETE statement", Refuses("starts with DELETE")),
    case(Both, "dElEtE FROM \"Genre\"", "DELETE statement", Refuses("starts with dElEtE")),
    case(Both, "/* SELECT */ INSERT INTO \"Genre\" VALUES (999, 'x')", "INSERT statement", Refuses("starts with INSERT")),
    case(Both, "UPDATE \"Genre\" SET \"Name\" = 'x'", "UPDATE statement", Refuses("starts with UPDATE")),
    case(Sqlite, "REPLACE INTO \"Genre\" VALUES (1, 'x')", WRITES, Refuses("starts with REPLACE")),
    case(Both, "DROP TABLE \"Genre\"", "DROP statement", Refuses("starts with DROP")),
    unparsed(Both, "DR/**/OP TABLE \"Genre\"", "starts with DR", Refuses("starts with DR")),
    unparsed(Both, "\"DELETE\" FROM \"Genre\"", "starts with \"DELETE\"", Refuses("starts with \"DELETE\"")),
    case(Both, "ALTER TABLE \"Genre\" ADD COLUMN x INT", "ALTER statement", Refuses("starts with ALTER")),
    case(Both, "CREATE INDEX i ON \"Genre\" (\"Name\")", "CREATE statement", Refuses("starts with CREATE")),
    case(Both, "CREATE TEMP TABLE t AS SELECT 1 AS x", "CREATE statement", Refuses("starts with CREATE")),
    case(Postgres, "TRUNCATE \"Genre\"", "TRUNCATE statement", Refuses("starts with TRUNCATE")),
    case(Postgres, "GRANT ALL ON \"Genre\" TO PUBLIC", "GRANT statement", Refuses("starts with GRANT")),
    case(Postgres, "COMMENT ON TABLE \"Genre\" IS 'x'", "COMMENT statement", Refuses("starts with COMMENT")),
    unparsed(Postgres, "LOCK TABLE \"Genre\" IN ACCESS EXCLUSIVE MODE", "starts with LOCK", Refuses("starts with LOCK")),
    case(
        Postgres,
        "MERGE INTO \"Genre\" g USING \"Genre\" s ON g.\"GenreId\" = s.\"GenreId\" WHEN MATCHED THEN DELETE",
        "MERGE statement",
        Refuses("starts with MERGE"),
    ),
    case(Both, "VACUUM", WRITES, Refuses("starts with VACUUM")),
    unparsed(Both, "ANALYZE", "starts with ANALYZE", Refuses("starts with ANALYZE")),
    // Writes inside a query.
    case(Postgres, "WITH d AS (DELETE FROM \"Genre\" RETURNING *) SELECT * FROM d", "DELETE statement inside the query", Refuses(PG_RO)),
    case(
        Postgres,
        "WITH d AS (INSERT INTO \"Genre\" VALUES (999, 'x') RETURNING 1) SELECT * FROM d",
        "INSERT statement inside the query",
        Refuses(PG_RO),
    ),
    case(
        Postgres,
        "with d as (update \"Genre\" set \"Name\" = 'x' returning 1) select * from d",
        "UPDATE statement inside the query",
        Refuses(PG_RO),
    ),
    case(
        Sqlite,
        "WITH d AS (DELETE FROM \"Genre\" RETURNING *) SELECT * FROM d",
        "DELETE statement inside the query | does not parse",
        Refuses("syntax error | would write"),
    ),
    case(Both, "SELECT * INTO \"GenreCopy\" FROM \"Genre\"", "SELECT … INTO creates a table", Refuses("read-only transaction | syntax error | near")),
    case(
        Postgres,
        "SELECT 1 UNION SELECT \"GenreId\" INTO \"GenreCopy\" FROM \"Genre\"",
        "SELECT … INTO creates a table",
        Refuses("read-only transaction | INTO"),
    ),
    case(Postgres, "SELECT \"Name\" FROM \"Genre\" FOR UPDATE", "FOR UPDATE/FOR SHARE locks rows", Refuses(PG_RO)),
    case(Both, "EXPLAIN ANALYZE DELETE FROM \"Genre\"", "EXPLAIN is not a query", Refuses("starts with EXPLAIN")),
    // Other files, programs and code.
    case(Sqlite, "ATTACH DATABASE '@DIR@/attached.db' AS x", "ATTACH opens another database file", Refuses("starts with ATTACH")),
    case(Sqlite, "/**/aTTach '@DIR@/attached.db' as y", "ATTACH opens another database file", Refuses("starts with aTTach")),
    case(Sqlite, "DETACH DATABASE main", "DETACH | does not parse", Refuses("starts with DETACH")),
    case(Sqlite, "PRAGMA writable_schema = 1", "PRAGMA reads or changes database settings", Refuses("starts with PRAGMA")),
    case(Sqlite, "PRAGMA query_only = 0", "PRAGMA reads or changes database settings", Refuses("starts with PRAGMA")),
    unparsed(Sqlite, "pragma JOURNAL_MODE = delete", "starts with pragma", Refuses("starts with pragma")),
    case(Sqlite, "SELECT load_extension('@DIR@/evil.so')", "load_extension is not allowed", Refuses("not authorized | no such function")),
    case(Sqlite, "SELECT \"LOAD_EXTENSION\"('@DIR@/evil.so', 'init')", "LOAD_EXTENSION is not allowed", Refuses("not authorized | no such function")),
    case(Sqlite, "SELECT writefile('@DIR@/written', 'x')", "writefile is not allowed", Refuses("no such function")),
    case(Sqlite, "SELECT * FROM fsdir('@DIR@')", "fsdir is not allowed", Refuses("no such table")),
    unparsed(Sqlite, "VACUUM INTO '@DIR@/copy.db'", "starts with VACUUM", Refuses("starts with VACUUM")),
    case(
        Postgres,
        "COPY \"Genre\" TO PROGRAM 'touch /tmp/schemascope-pwned'",
        "COPY reads or writes files or runs programs",
        Refuses("starts with COPY"),
    ),
    case(Postgres, "COPY (SELECT 1) TO '/tmp/schemascope-copied'", "COPY reads or writes files or runs programs", Refuses("starts with COPY")),
    case(Postgres, "COPY \"Genre\" FROM '/etc/passwd'", "COPY reads or writes files or runs programs", Refuses("starts with COPY")),
    case(Postgres, "SELECT pg_read_file('/etc/passwd')", "pg_read_file is not allowed", Refuses("permission denied")),
    case(Postgres, "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", "pg_read_binary_file is not allowed", Refuses("permission denied")),
    case(Postgres, "SELECT \"pg_read_file\"('/etc/passwd')", "pg_read_file is not allowed", Refuses("permission denied")),
    case(Postgres, "SELECT PG_READ_FILE /* hidden */ ('/etc/passwd')", "PG_READ_FILE is not allowed", Refuses("permission denied")),
    case(Postgres, "SELECT * FROM pg_ls_dir('.')", "pg_ls_dir is not allowed", Refuses("permission denied")),
    case(Postgres, "SELECT lo_import('/etc/passwd')", "lo_import is not allowed", Refuses("permission denied | read-only transaction")),
    case(
        Postgres,
        "SELECT lo_export(1, '/tmp/schemascope-exported')",
        "lo_export is not allowed",
        Refuses("permission denied | read-only transaction | does not exist"),
    ),
    // PostgreSQL 15+ creates the object even in a READ ONLY transaction; the rollback undoes it.
    case(Postgres, "SELECT lo_create(0)", "lo_create is not allowed", Harmless),
    unparsed(Postgres, "DO $$BEGIN DELETE FROM \"Genre\"; END$$", "starts with DO", Refuses("starts with DO")),
    case(Postgres, "CALL schemascope_missing()", WRITES, Refuses("starts with CALL")),
    case(Postgres, "LOAD 'plpgsql'", "LOAD statement", Refuses("starts with LOAD")),
    case(Postgres, "SELECT * FROM dblink('dbname=chinook', 'DELETE FROM \"Genre\"') AS t(n int)", "dblink is not allowed", Harmless),
    case(
        Postgres,
        "SELECT query_to_xml('DELETE FROM \"Genre\" RETURNING 1', true, true, '')",
        "query_to_xml is not allowed",
        Refuses("DELETE is not allowed in a non-volatile function"),
    ),
    // Functions with side effects beyond the transaction.
    case(Postgres, "SELECT pg_sleep(0.01)", "pg_sleep is not allowed", Harmless),
    case(Postgres, "SELECT pg_terminate_backend(0)", "pg_terminate_backend is not allowed", Skip),
    case(Postgres, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity", "pg_cancel_backend is not allowed", Skip),
    case(Postgres, "SELECT pg_advisory_lock(4242)", "pg_advisory_lock is not allowed", Harmless),
    case(Postgres, "SELECT \"GenreId\" FROM \"Genre\" WHERE pg_try_advisory_lock(\"GenreId\")", "pg_try_advisory_lock is not allowed", Harmless),
    case(Postgres, "SELECT nextval('schemascope_missing_seq')", "nextval is not allowed", Harmless),
    case(Postgres, "SELECT * FROM \"Genre\" WHERE \"GenreId\" = (SELECT setval('schemascope_missing_seq', 1))", "setval is not allowed", Harmless),
    case(Postgres, "SELECT pg_reload_conf()", "pg_reload_conf is not allowed", Harmless),
    case(Postgres, "SELECT txid_current()", "txid_current is not allowed", Harmless),
    case(Postgres, "SELECT pg_logical_emit_message(false, 'schemascope', 'x')", "pg_logical_emit_message is not allowed", Skip),
];

/// Queries that look dangerous and are not: each must validate and run, returning `expect`.
fn legit(on: On) -> Vec<(&'static str, Value)> {
    let mut queries = vec![
        ("SELECT \"Name\" AS \"drop\" FROM \"Genre\" WHERE \"GenreId\" = 1", json!([["Rock"]])),
        ("SELECT 'x; DROP TABLE \"Genre\"; --' AS s", json!([["x; DROP TABLE \"Genre\"; --"]])),
        ("SELECT 'pg_read_file(''/etc/passwd''); COMMIT' AS s", json!([["pg_read_file('/etc/passwd'); COMMIT"]])),
        ("SELECT /* DELETE FROM \"Genre\"; */ COUNT(*) AS n FROM \"Genre\" -- ; DROP TABLE \"Genre\"", json!([[25]])),
        ("SELECT 1 AS one /*! ; DROP TABLE \"Genre\" */", json!([[1]])),
        ("SELECT COUNT(*) AS n FROM \"Track\" WHERE \"Name\" LIKE '%; DELETE%'", json!([[0]])),
        ("WITH \"delete\" AS (SELECT \"GenreId\" AS \"update\" FROM \"Genre\") SELECT MAX(\"update\") AS m FROM \"delete\"", json!([[25]])),
    ];
    match on {
        Sqlite => queries.extend([
            ("SELECT SUM(value) AS s FROM json_each('[1, 2, 3]')", json!([[6]])),
            ("SELECT name FROM pragma_table_info('Genre') ORDER BY cid", json!([["GenreId"], ["Name"]])),
        ]),
        _ => queries.extend([
            ("SELECT $$; DROP TABLE \"Genre\"; $$ AS s", json!([["; DROP TABLE \"Genre\"; "]])),
            ("SELECT SUM(value::int) AS s FROM json_array_elements_text('[1, 2, 3]')", json!([[6]])),
        ]),
    }
    queries
}

fn contains_any(text: &str, alternatives: &str) -> bool {
    alternatives.split(" | ").any(|a| text.contains(a))
}

/// Runs every case for `on` against `source`; returns the failures as readable lines.
fn run_cases(registry: &Registry, source: &str, on: On, dir: &str) -> Vec<String> {
    let database: Arc<dyn Database> = registry.get(Some(source)).expect("source").database.clone().expect("a SQL source");
    let mut failures = Vec::new();
    for case in CASES.iter().filter(|c| c.on == on || c.on == Both) {
        let sql = case.sql.replace("@DIR@", dir);
        let report = validate_query(registry, ValidateQueryParams { source: Some(source.into()), query: Value::from(sql.as_str()) });
        let errors: Vec<String> =
            report.data["errors"].as_array().into_iter().flatten().filter_map(|e| e["message"].as_str().map(str::to_string)).collect();
        if !report.success || report.data["valid"] != false || !contains_any(&errors.join(" / "), case.validate) {
            failures.push(format!("validate {sql:?}: expected a refusal with {:?}, got {} {errors:?}", case.validate, report.message));
        }
        let executed = execute_query(
            registry,
            ExecuteQueryParams { source: Some(source.into()), query: Value::from(sql.as_str()), timeout_ms: Some(2_000), ..Default::default() },
        );
        let want = case.execute.unwrap_or(case.validate);
        if executed.success || executed.data["class"] != "refused" || !contains_any(&executed.message, want) {
            failures.push(format!("execute {sql:?}: expected a refusal with {want:?}, got {} ({})", executed.message, executed.data));
        }
        match case.db {
            Refuses(why) => match database.run(&sql, &[], Some(10), 2_000) {
                Ok(rows) => failures.push(format!("database layer ran {sql:?}: {rows:?}")),
                Err(e) if !contains_any(&e.to_string(), why) => failures.push(format!("database layer {sql:?}: expected {why:?}, got {e}")),
                Err(_) => {}
            },
            Harmless => {
                let _ = database.run(&sql, &[], Some(10), 2_000);
            }
            Skip => {}
        }
    }
    for (sql, expect) in legit(on) {
        let report = validate_query(registry, ValidateQueryParams { source: Some(source.into()), query: Value::from(sql) });
        if report.data["valid"] != true {
            failures.push(format!("validate rejected the legitimate {sql:?}: {}", report.message));
        }
        let executed = execute_query(registry, ExecuteQueryParams { source: Some(source.into()), query: Value::from(sql), ..Default::default() });
        if !executed.success || executed.data["rows"] != expect {
            failures.push(format!("execute of the legitimate {sql:?}: expected {expect}, got {} {}", executed.message, executed.data["rows"]));
        }
    }
    failures
}

/// Facts about the source's own connection that a statement could leave changed.
fn session_state(database: &dyn Database) -> Vec<Vec<SqlValue>> {
    let sql = match database.dialect() {
        schemascope_sources::sql::Dialect::Sqlite => "SELECT (SELECT query_only FROM pragma_query_only), (SELECT COUNT(*) FROM pragma_database_list)",
        schemascope_sources::sql::Dialect::Postgres => {
            "SELECT current_user::text, session_user::text, current_setting('default_transaction_read_only'), current_setting('search_path'),
                    current_setting('statement_timeout'), (SELECT COUNT(*) FROM pg_prepared_statements WHERE from_sql),
                    (SELECT COUNT(*) FROM pg_listening_channels()), (SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory')"
        }
    };
    database.query(sql, &[]).expect("session state")
}

#[test]
fn hostile_sql_is_refused_and_leaves_the_sqlite_file_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("chinook.sqlite");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite"), &path).expect("copy");
    let listing = || {
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).expect("list").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    let (bytes, files) = (std::fs::read(&path).expect("read"), listing());
    let registry = registry(&[&format!("lite=sqlite:{}", path.display())]);
    let database = registry.get(Some("lite")).expect("source").database.clone().expect("SQL");
    let state = session_state(&*database);
    assert_eq!(state, vec![vec![SqlValue::Integer(1), SqlValue::Integer(1)]], "query_only on, only main attached");

    let failures = run_cases(&registry, "lite", Sqlite, &dir.path().display().to_string());
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));

    assert_eq!(session_state(&*database), state, "the source's connection is as it was");
    drop(registry);
    assert!(std::fs::read(&path).expect("read") == bytes, "the database file changed");
    assert_eq!(listing(), files, "no file was created beside the database");
    let check = rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
    let integrity: String = check.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check");
    assert_eq!(integrity, "ok");
}

/// Every user table's rows (md5 of the ordered row texts) and the catalog facts a hostile
/// statement could change: relations, roles, databases, settings per role and database,
/// large objects, sequences' values.
fn postgres_checksum(database: &dyn Database) -> Vec<String> {
    let one = |sql: &str| -> String {
        let rows = database.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter().map(|r| r.iter().map(|v| format!("{:?}", v)).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join("\n")
    };
    let mut facts = vec![
        one("SELECT n.nspname::text, c.relname::text, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1, 2"),
        one("SELECT rolname::text, rolsuper, rolcreaterole, rolcanlogin FROM pg_roles ORDER BY 1"),
        one("SELECT datname::text FROM pg_database ORDER BY 1"),
        one("SELECT COALESCE(array_to_string(setconfig, ','), '') FROM pg_db_role_setting ORDER BY 1"),
        one("SELECT COUNT(*) FROM pg_largeobject_metadata"),
        one("SELECT schemaname::text, sequencename::text, last_value FROM pg_sequences ORDER BY 1, 2"),
        one("SELECT proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1"),
    ];
    let tables = database.catalog().expect("catalog").tables;
    assert!(tables.len() >= 11, "Chinook has 11 tables");
    for table in tables {
        let quoted = schemascope_sources::sql::Dialect::Postgres.quote_table(&table.name);
        facts.push(format!("{}: {}", table.name, one(&format!("SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) FROM {quoted} t"))));
    }
    facts
}

#[test]
fn hostile_sql_is_refused_and_leaves_postgres_unchanged() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL");
        return;
    };
    // A separate connection reads the checksums, so nothing the suite does to its own session
    // can colour them.
    let checker = PostgresDatabase::connect(&uri).expect("connect");
    let before = postgres_checksum(&checker);
    let registry = registry(&[&format!("pg={uri}")]);
    let database = registry.get(Some("pg")).expect("source").database.clone().expect("SQL");
    let state = session_state(&*database);

    let failures = run_cases(&registry, "pg", Postgres, "/tmp");
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));

    assert_eq!(session_state(&*database), state, "the source's session is as it was (role, settings, prepared statements, LISTEN, advisory locks)");
    assert_eq!(postgres_checksum(&checker), before, "the database changed");
    for file in ["/tmp/schemascope-pwned", "/tmp/schemascope-copied", "/tmp/schemascope-exported"] {
        assert!(!Path::new(file).exists(), "{file} was written");
    }
}
