//! Hostile SQL: one table of statements that try to write, escape or change the session —
//! multi-statements, transaction control, ATTACH, PRAGMA writes, load_extension, VACUUM INTO,
//! DML in CTEs, SELECT … INTO, COPY … TO PROGRAM, file and large-object functions, SET ROLE,
//! set_config, functions with side effects, functions that run SQL text (ts_stat,
//! query_to_xml), index maintenance (brin_*, gin_clean_pending_list), names written with
//! escapes (U&"…"), quoting, case and schema qualification, calls hidden in CTEs, subqueries,
//! LATERAL, ORDER BY and FROM, and calls made through an operator, a cast, a typed literal or
//! attribute notation — each refused with a clear reason by validate_query, by execute_query,
//! and by the database layer called directly (PostgreSQL's checks what it calls against the
//! server's own catalog; SQLite's authorizer is the engine's gate); then the database is
//! checked unchanged: SQLite's file byte for byte, PostgreSQL's rows of every table and its
//! catalog facts, and the source's own session state. Legitimate queries that merely look
//! scary run and return their rows.
//!
//! PostgreSQL runs when `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it), as the role
//! that owns the tables: read-only must come from schemascope, not from missing privileges.

use std::path::Path;
use std::sync::Arc;

use schemascope_sources::sql::{Database, PostgresDatabase, SqlValue};
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::registry;

#[derive(Debug, Clone, Copy, PartialEq)]
enum On {
    Sqlite,
    Postgres,
    Both,
}

/// What the database layer does with the statement when called directly, past the validator:
/// every case is refused there too (PostgreSQL's check against the server's allow-list,
/// SQLite's authorizer, or each engine's own refusal), with this reason (alternatives
/// separated by ` | `).
#[derive(Debug, Clone, Copy)]
enum Db {
    /// It refuses, with this reason.
    Refuses(&'static str),
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

use Db::Refuses;
use On::{Both, Postgres, Sqlite};

const ONE: &str = "exactly one statement";
const WRITES: &str = "it is not a read-only query";
/// Writes inside a query: refused by the database layer's check, or else by the transaction.
const PG_RO: &str = "read-only transaction | writes data";
/// Several statements: refused by the check, the engine, or SQLite's authorizer (which sees
/// the second statement's write when SQLite compiles it).
const SEVERAL: &str = "several statements | multiple commands | exactly one statement | authorizer";
/// The database layer's own refusal of a call (PostgreSQL: the allow-list; SQLite: its authorizer).
const NOT_ALLOWED: &str = "is not allowed | authorizer";
/// The scratch schema holding a volatile function behind an operator, a domain, and a function
/// callable on a row (created before the suite, dropped after).
const SCRATCH: &str = "schemascope_hostile";

/// `@DIR@` is the SQLite database's directory (checked for new files afterwards).
const CASES: &[Case] = &[
    // Several statements, however they are separated.
    case(Both, "SELECT 1; DROP TABLE \"Genre\"", ONE, Refuses(SEVERAL)),
    case(Both, "COMMIT; DROP TABLE \"Genre\"", ONE, Refuses("starts with COMMIT")),
    case(Both, "SELECT 1 -- a comment\n; DELETE FROM \"Genre\"", ONE, Refuses(SEVERAL)),
    case(
        Both,
        "SELECT 1 /* ; */ ; /* */ UPDATE \"Genre\" SET \"Name\" = 'x'",
        ONE,
        Refuses(SEVERAL),
    ),
    unparsed(
        Both,
        "SELECT 1;\u{a0}DROP TABLE \"Genre\"",
        ONE,
        Refuses("several statements | multiple commands | syntax error | exactly one statement"),
    ),
    unparsed(
        Both,
        "SELECT 1;\u{2028}DELETE FROM \"Genre\"",
        ONE,
        Refuses("several statements | multiple commands | syntax error | exactly one statement"),
    ),
    // A backslash does not escape a quote in standard SQL: the string ends, a DROP follows.
    case(Both, "SELECT '\\'; DROP TABLE \"Genre\"; --'", ONE, Refuses(SEVERAL)),
    case(Postgres, "SELECT E'\\''; DROP TABLE \"Genre\"; --'", ONE, Refuses(SEVERAL)),
    case(Postgres, "SELECT $a$ $$ $a$; DROP TABLE \"Genre\"", ONE, Refuses(SEVERAL)),
    // Transaction control and the session.
    case(Both, "COMMIT", "transaction control", Refuses("starts with COMMIT")),
    case(Both, "ROLLBACK", "transaction control", Refuses("starts with ROLLBACK")),
    case(Both, "BEGIN", "transaction control", Refuses("starts with BEGIN")),
    case(
        Postgres,
        "START TRANSACTION READ WRITE",
        "transaction control",
        Refuses("starts with START"),
    ),
    case(Both, "SAVEPOINT s", WRITES, Refuses("starts with SAVEPOINT")),
    case(Postgres, "SET ROLE postgres", "SET changes the session", Refuses("starts with SET")),
    // Read with PostgreSQL's own grammar: refused for what they are.
    case(
        Postgres,
        "SET SESSION AUTHORIZATION postgres",
        "SET changes the session",
        Refuses("starts with SET | SET changes the session"),
    ),
    case(
        Postgres,
        "set default_transaction_read_only = off",
        "SET changes the session",
        Refuses("starts with set"),
    ),
    case(
        Postgres,
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        "SET changes the session",
        Refuses("starts with SET"),
    ),
    case(Postgres, "RESET ALL", "RESET", Refuses("starts with RESET")),
    case(
        Postgres,
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        "set_config is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT set_config('search_path', 'pg_temp', false)",
        "set_config is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_catalog.SET_CONFIG('search_path', 'pg_temp', false)",
        "SET_CONFIG is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(Postgres, "DISCARD ALL", WRITES, Refuses("starts with DISCARD")),
    case(Postgres, "PREPARE q AS DELETE FROM \"Genre\"", WRITES, Refuses("starts with PREPARE")),
    case(Postgres, "EXECUTE q", WRITES, Refuses("starts with EXECUTE")),
    case(Postgres, "DEALLOCATE ALL", WRITES, Refuses("starts with DEALLOCATE")),
    case(Postgres, "LISTEN schemascope", WRITES, Refuses("starts with LISTEN")),
    case(Postgres, "NOTIFY schemascope, 'x'", WRITES, Refuses("starts with NOTIFY")),
    case(
        Postgres,
        "SELECT pg_notify('schemascope', 'x')",
        "pg_notify is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Plain writes, in any spelling.
    case(Both, "DELETE FROM \"Genre\"", "DELETE statement", Refuses("starts with DELETE")),
    case(Both, "dElEtE FROM \"Genre\"", "DELETE statement", Refuses("starts with dElEtE")),
    case(
        Both,
        "/* SELECT */ INSERT INTO \"Genre\" VALUES (999, 'x')",
        "INSERT statement",
        Refuses("starts with INSERT"),
    ),
    case(
        Both,
        "UPDATE \"Genre\" SET \"Name\" = 'x'",
        "UPDATE statement",
        Refuses("starts with UPDATE"),
    ),
    case(Sqlite, "REPLACE INTO \"Genre\" VALUES (1, 'x')", WRITES, Refuses("starts with REPLACE")),
    case(Both, "DROP TABLE \"Genre\"", "DROP statement", Refuses("starts with DROP")),
    unparsed(Both, "DR/**/OP TABLE \"Genre\"", "starts with DR", Refuses("starts with DR")),
    unparsed(
        Both,
        "\"DELETE\" FROM \"Genre\"",
        "starts with \"DELETE\"",
        Refuses("starts with \"DELETE\""),
    ),
    case(
        Both,
        "ALTER TABLE \"Genre\" ADD COLUMN x INT",
        "ALTER statement",
        Refuses("starts with ALTER"),
    ),
    case(
        Both,
        "CREATE INDEX i ON \"Genre\" (\"Name\")",
        "CREATE statement",
        Refuses("starts with CREATE"),
    ),
    case(
        Both,
        "CREATE TEMP TABLE t AS SELECT 1 AS x",
        "CREATE statement",
        Refuses("starts with CREATE"),
    ),
    case(Postgres, "TRUNCATE \"Genre\"", "TRUNCATE statement", Refuses("starts with TRUNCATE")),
    case(
        Postgres,
        "GRANT ALL ON \"Genre\" TO PUBLIC",
        "GRANT statement",
        Refuses("starts with GRANT"),
    ),
    case(
        Postgres,
        "COMMENT ON TABLE \"Genre\" IS 'x'",
        "COMMENT statement",
        Refuses("starts with COMMENT"),
    ),
    case(
        Postgres,
        "LOCK TABLE \"Genre\" IN ACCESS EXCLUSIVE MODE",
        "LOCK statement",
        Refuses("starts with LOCK | LOCK statement"),
    ),
    case(
        Postgres,
        "MERGE INTO \"Genre\" g USING \"Genre\" s ON g.\"GenreId\" = s.\"GenreId\" WHEN MATCHED THEN DELETE",
        "MERGE statement",
        Refuses("starts with MERGE"),
    ),
    case(Both, "VACUUM", WRITES, Refuses("starts with VACUUM")),
    unparsed(
        Both,
        "ANALYZE",
        "starts with ANALYZE | ANALYZE statement",
        Refuses("starts with ANALYZE | ANALYZE statement"),
    ),
    // Writes inside a query.
    case(
        Postgres,
        "WITH d AS (DELETE FROM \"Genre\" RETURNING *) SELECT * FROM d",
        "DELETE statement inside the query",
        Refuses(PG_RO),
    ),
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
    case(
        Both,
        "SELECT * INTO \"GenreCopy\" FROM \"Genre\"",
        "SELECT … INTO creates a table",
        Refuses("creates a table | syntax error | near"),
    ),
    case(
        Postgres,
        "SELECT 1 UNION SELECT \"GenreId\" INTO \"GenreCopy\" FROM \"Genre\"",
        "SELECT … INTO creates a table",
        Refuses("creates a table | INTO"),
    ),
    case(
        Postgres,
        "SELECT \"Name\" FROM \"Genre\" FOR UPDATE",
        "FOR UPDATE/FOR SHARE locks rows",
        Refuses("locks rows"),
    ),
    case(
        Both,
        "EXPLAIN ANALYZE DELETE FROM \"Genre\"",
        "EXPLAIN is not a query",
        Refuses("starts with EXPLAIN"),
    ),
    // Other files, programs and code.
    case(
        Sqlite,
        "ATTACH DATABASE '@DIR@/attached.db' AS x",
        "ATTACH opens another database file",
        Refuses("starts with ATTACH"),
    ),
    case(
        Sqlite,
        "/**/aTTach '@DIR@/attached.db' as y",
        "ATTACH opens another database file",
        Refuses("starts with aTTach"),
    ),
    case(Sqlite, "DETACH DATABASE main", "DETACH | does not parse", Refuses("starts with DETACH")),
    case(
        Sqlite,
        "PRAGMA writable_schema = 1",
        "PRAGMA reads or changes database settings",
        Refuses("starts with PRAGMA"),
    ),
    case(
        Sqlite,
        "PRAGMA query_only = 0",
        "PRAGMA reads or changes database settings",
        Refuses("starts with PRAGMA"),
    ),
    unparsed(
        Sqlite,
        "pragma JOURNAL_MODE = delete",
        "starts with pragma",
        Refuses("starts with pragma"),
    ),
    case(
        Sqlite,
        "SELECT load_extension('@DIR@/evil.so')",
        "load_extension is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT \"LOAD_EXTENSION\"('@DIR@/evil.so', 'init')",
        "LOAD_EXTENSION is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT \"Genre\".\"Name\" FROM \"Genre\" WHERE load_extension('@DIR@/evil.so') IS NULL",
        "load_extension is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "WITH x AS (SELECT Load_Extension('@DIR@/evil.so') AS v) SELECT v FROM x",
        "Load_Extension is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT fts3_tokenizer('simple')",
        "fts3_tokenizer is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT sqlite_log(1, 'schemascope')",
        "sqlite_log is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT \"Name\" FROM \"Genre\" ORDER BY sqlite_log(1, \"Name\")",
        "sqlite_log is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Sqlite,
        "SELECT writefile('@DIR@/written', 'x')",
        "writefile does not exist",
        Refuses("no such function"),
    ),
    case(
        Sqlite,
        "SELECT * FROM fsdir('@DIR@')",
        "table function fsdir does not exist",
        Refuses("no such table"),
    ),
    unparsed(
        Sqlite,
        "VACUUM INTO '@DIR@/copy.db'",
        "starts with VACUUM",
        Refuses("starts with VACUUM"),
    ),
    case(
        Postgres,
        "COPY \"Genre\" TO PROGRAM 'touch /tmp/schemascope-pwned'",
        "COPY reads or writes files or runs programs",
        Refuses("starts with COPY"),
    ),
    case(
        Postgres,
        "COPY (SELECT 1) TO '/tmp/schemascope-copied'",
        "COPY reads or writes files or runs programs",
        Refuses("starts with COPY"),
    ),
    case(
        Postgres,
        "COPY \"Genre\" FROM '/etc/passwd'",
        "COPY reads or writes files or runs programs",
        Refuses("starts with COPY"),
    ),
    case(
        Postgres,
        "SELECT pg_read_file('/etc/passwd')",
        "pg_read_file is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_catalog.pg_read_binary_file('/etc/passwd')",
        "pg_read_binary_file is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT \"pg_read_file\"('/etc/passwd')",
        "pg_read_file is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT PG_READ_FILE /* hidden */ ('/etc/passwd')",
        "PG_READ_FILE is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT \"PG_READ_FILE\"('/etc/passwd')",
        "PG_READ_FILE does not exist",
        Refuses("PG_READ_FILE does not exist"),
    ),
    case(
        Postgres,
        "SELECT * FROM pg_ls_dir('.')",
        "pg_ls_dir is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT lo_import('/etc/passwd')",
        "lo_import is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT lo_export(1, '/tmp/schemascope-exported')",
        "lo_export is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // PostgreSQL 15+ would create the object even in a READ ONLY transaction.
    case(Postgres, "SELECT lo_create(0)", "lo_create is not allowed", Refuses(NOT_ALLOWED)),
    case(
        Postgres,
        "SELECT * FROM \"Genre\" WHERE \"GenreId\" = (SELECT lo_creat(-1))",
        "lo_creat is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "DO $$BEGIN DELETE FROM \"Genre\"; END$$",
        "DO statement",
        Refuses("starts with DO | DO statement"),
    ),
    case(Postgres, "CALL schemascope_missing()", WRITES, Refuses("starts with CALL")),
    case(Postgres, "LOAD 'plpgsql'", "LOAD statement", Refuses("starts with LOAD")),
    // Not installed here: unknown to the catalog, so refused as such.
    case(
        Postgres,
        "SELECT * FROM dblink('dbname=chinook', 'DELETE FROM \"Genre\"') AS t(n int)",
        "dblink does not exist",
        Refuses("does not exist"),
    ),
    // Functions that run the SQL text they are given, which no check of the outer text sees.
    case(
        Postgres,
        "SELECT query_to_xml('DELETE FROM \"Genre\" RETURNING 1', true, true, '')",
        "query_to_xml is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT * FROM ts_stat('SELECT to_tsvector(pg_terminate_backend(pid)::text) FROM pg_stat_activity WHERE usename = current_user AND pid = -1')",
        "ts_stat is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT word FROM pg_catalog.ts_stat($$SELECT to_tsvector(pg_logical_emit_message(false, 'schemascope', 'x')::text)$$)",
        "ts_stat is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "WITH w AS (SELECT * FROM TS_STAT('SELECT to_tsvector(set_config(''search_path'', ''x'', false))')) SELECT count(*) FROM w",
        "TS_STAT is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')",
        "ts_rewrite is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT cursor_to_xml('c', 1, true, true, '')",
        "cursor_to_xml is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Names written with escapes: decoded by PostgreSQL, so refused outright.
    case(Postgres, "SELECT U&\"pg_\\0073leep\"(1)::text", "U&", Refuses("U&")),
    case(Postgres, "SELECT u&\"pg_\\0073leep\"(0.01)", "U&", Refuses("U&")),
    case(Postgres, "SELECT U&\"pg_!0073leep\" UESCAPE '!' (0.01)", "U&", Refuses("U&")),
    case(Postgres, "SELECT * FROM U&\"ts_st\\+000061t\"('SELECT 1')", "U&", Refuses("U&")),
    // Index maintenance: writes that outlive the rollback.
    case(
        Postgres,
        "SELECT brin_summarize_new_values('\"Genre\"'::regclass)",
        "brin_summarize_new_values is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT brin_summarize_range('\"Genre\"'::regclass, 0)",
        "brin_summarize_range is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT brin_desummarize_range('\"Genre\"'::regclass, 0)",
        "brin_desummarize_range is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT gin_clean_pending_list('\"Genre\"'::regclass)",
        "gin_clean_pending_list is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Functions with side effects beyond the transaction, in every spelling and place.
    case(Postgres, "SELECT pg_sleep(0.01)", "pg_sleep is not allowed", Refuses(NOT_ALLOWED)),
    case(Postgres, "SELECT \"pg_sleep\"(0.01)", "pg_sleep is not allowed", Refuses(NOT_ALLOWED)),
    case(Postgres, "SELECT Pg_SlEeP(0.01)", "Pg_SlEeP is not allowed", Refuses(NOT_ALLOWED)),
    case(
        Postgres,
        "SELECT PG_CATALOG . /* x */ \"pg_sleep\" (0.01)",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(Postgres, "SELECT * FROM pg_sleep(0.01)", "pg_sleep is not allowed", Refuses(NOT_ALLOWED)),
    case(
        Postgres,
        "WITH s AS (SELECT pg_sleep(0.01) AS z) SELECT * FROM s",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT g.\"Name\" FROM \"Genre\" g, LATERAL pg_sleep(0.001) AS s",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT \"Name\" FROM \"Genre\" ORDER BY pg_sleep(0.001)",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT CASE WHEN true THEN pg_sleep(0.01) END",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_terminate_backend(0)",
        "pg_terminate_backend is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = -1",
        "pg_cancel_backend is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_advisory_lock(4242)",
        "pg_advisory_lock is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_advisory_xact_lock(4242)",
        "pg_advisory_xact_lock is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT \"GenreId\" FROM \"Genre\" WHERE pg_try_advisory_lock(\"GenreId\")",
        "pg_try_advisory_lock is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT count(*) FILTER (WHERE pg_try_advisory_lock(1)) FROM \"Genre\"",
        "pg_try_advisory_lock is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT nextval('schemascope_missing_seq')",
        "nextval is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT * FROM \"Genre\" WHERE \"GenreId\" = (SELECT setval('schemascope_missing_seq', 1))",
        "setval is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_reload_conf()",
        "pg_reload_conf is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Parallel-unsafe though stable: they assign a transaction id.
    case(Postgres, "SELECT txid_current()", "txid_current is not allowed", Refuses(NOT_ALLOWED)),
    case(
        Postgres,
        "SELECT * FROM \"Genre\" WHERE \"GenreId\" IN (SELECT pg_current_xact_id()::text::int)",
        "pg_current_xact_id is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT pg_logical_emit_message(false, 'schemascope', 'x')",
        "pg_logical_emit_message is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Attribute notation over any value, not only a row: `(x).f` is `f(x)` whatever x's type
    // (found by an independent tester: each of these ran, and terminated or read other sessions).
    case(
        Postgres,
        "SELECT (2::float8).pg_sleep",
        "may call function pg_sleep",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT (x).\"pg_sleep\" FROM (VALUES (0.01::float8)) AS v(x)",
        "may call function pg_sleep",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "WITH a AS (SELECT (CAST(0 AS int)).pg_terminate_backend AS z) SELECT * FROM a",
        "may call function pg_terminate_backend",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT (pg_backend_pid()).pg_cancel_backend",
        "may call function pg_cancel_backend",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT (4242::bigint).pg_advisory_lock",
        "may call function pg_advisory_lock",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT i, (i).pg_stat_get_backend_activity FROM generate_series(1, 3) AS i",
        "may call function pg_stat_get_backend_activity",
        Refuses(NOT_ALLOWED),
    ),
    // Calls made through an operator, a cast, a typed literal and attribute notation (objects of
    // the scratch schema: a volatile function behind each).
    case(
        Postgres,
        "SELECT 1 OPERATOR(schemascope_hostile.#@#) 2",
        "operator schemascope_hostile.#@# is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(Postgres, "SELECT 1 #@# 2", "operator #@# is not allowed", Refuses(NOT_ALLOWED)),
    case(
        Postgres,
        "SELECT 1::schemascope_hostile.slow_int",
        "a cast to schemascope_hostile.slow_int is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT CAST(\"GenreId\" AS SCHEMASCOPE_HOSTILE.SLOW_INT) FROM \"Genre\"",
        "is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT '{1}'::schemascope_hostile.slow_int[]",
        "a cast to schemascope_hostile.slow_int is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT schemascope_hostile.slow_int '1'",
        "schemascope_hostile.slow_int is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT g.touch_row FROM \"Genre\" g",
        ".touch_row may call function touch_row",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT (g).touch_row FROM \"Genre\" g",
        ".touch_row may call function touch_row",
        Refuses(NOT_ALLOWED),
    ),
    // Stable functions PostgreSQL would make call a volatile one on their behalf, without the
    // statement naming it: a domain check on an argument, an implicit cast into an argument's
    // type, a parameter default.
    case(
        Postgres,
        "SELECT schemascope_hostile.takes_slow(1)",
        "takes_slow is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT schemascope_hostile.takes_comp('x'::text)",
        "takes_comp is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT schemascope_hostile.with_default()",
        "with_default is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // The same through PostgreSQL's own volatile functions, which pg_depend does not record.
    case(
        Postgres,
        "SELECT 1::schemascope_hostile.sleepy",
        "a cast to schemascope_hostile.sleepy is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT schemascope_hostile.default_sleep()",
        "default_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT schemascope_hostile.slow_add(1, 2)",
        "slow_add is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    // Unknown names: refused, with a did-you-mean among the allowed ones.
    case(
        Postgres,
        "SELECT uppr(\"Name\") FROM \"Genre\"",
        "Did you mean `upper`?",
        Refuses("does not exist"),
    ),
    // Forms only PostgreSQL's grammar reads are judged by what they call, as any other.
    case(
        Postgres,
        "SELECT inet '10.0.0.1' AS ip, schemascope_hostile.slow_int '1' AS s",
        "schemascope_hostile.slow_int is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT count(*) FROM \"Genre\" TABLESAMPLE pg_sleep (1)",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT * FROM ROWS FROM (generate_series(1, 2), pg_sleep(0.01)) AS r",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT \"Name\" FROM \"Genre\" ORDER BY \"Name\" USING OPERATOR(schemascope_hostile.#@#)",
        "operator schemascope_hostile.#@# is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(
        Postgres,
        "SELECT 1 BETWEEN SYMMETRIC pg_sleep(0.01)::text::int AND 2",
        "pg_sleep is not allowed",
        Refuses(NOT_ALLOWED),
    ),
    case(Postgres, "TABLE \"Genre\" FOR UPDATE", "locks rows", Refuses("locks rows")),
    case(
        Postgres,
        "WITH d AS (DELETE FROM \"Genre\" RETURNING *) TABLE d",
        "DELETE statement inside the query",
        Refuses(PG_RO),
    ),
];

/// Queries that look dangerous and are not: each must validate and run, returning `expect`.
fn legit(on: On) -> Vec<(&'static str, Value)> {
    let mut queries = vec![
        ("SELECT \"Name\" AS \"drop\" FROM \"Genre\" WHERE \"GenreId\" = 1", json!([["Rock"]])),
        ("SELECT 'x; DROP TABLE \"Genre\"; --' AS s", json!([["x; DROP TABLE \"Genre\"; --"]])),
        (
            "SELECT 'pg_read_file(''/etc/passwd''); COMMIT' AS s",
            json!([["pg_read_file('/etc/passwd'); COMMIT"]]),
        ),
        (
            "SELECT /* DELETE FROM \"Genre\"; */ COUNT(*) AS n FROM \"Genre\" -- ; DROP TABLE \"Genre\"",
            json!([[25]]),
        ),
        ("SELECT 1 AS one /*! ; DROP TABLE \"Genre\" */", json!([[1]])),
        ("SELECT COUNT(*) AS n FROM \"Track\" WHERE \"Name\" LIKE '%; DELETE%'", json!([[0]])),
        (
            "WITH \"delete\" AS (SELECT \"GenreId\" AS \"update\" FROM \"Genre\") SELECT MAX(\"update\") AS m FROM \"delete\"",
            json!([[25]]),
        ),
    ];
    match on {
        Sqlite => queries.extend([
            ("SELECT SUM(value) AS s FROM json_each('[1, 2, 3]')", json!([[6]])),
            ("SELECT name FROM pragma_table_info('Genre') ORDER BY cid", json!([["GenreId"], ["Name"]])),
            (
                "SELECT abs(-1) AS a, upper('a') AS u, 'a' LIKE 'A' AS l, json_extract('{\"a\": 1}', '$.a') AS j, random() IS NOT NULL AS r",
                json!([[1, "A", 1, 1, 1]]),
            ),
            ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT SUM(i) AS s FROM n", json!([[6]])),
        ]),
        _ => queries.extend([
            ("SELECT $$; DROP TABLE \"Genre\"; $$ AS s", json!([["; DROP TABLE \"Genre\"; "]])),
            ("SELECT SUM(value::int) AS s FROM json_array_elements_text('[1, 2, 3]')", json!([[6]])),
            // Syntax forms, harmless volatile functions, operators and casts of the catalog.
            (
                "SELECT COALESCE(NULL, 1) AS c, greatest(1, 2) AS g, extract(year FROM DATE '2020-05-01')::int AS y, NULLIF(1, 1) AS n",
                json!([[1, 2, 2020, null]]),
            ),
            ("SELECT length(gen_random_uuid()::text) AS n, random() < 2 AS r, clock_timestamp() IS NOT NULL AS t", json!([[36, true, true]])),
            ("SELECT pg_catalog.upper('a') AS u, 'a' || 'b' AS c, 5 % 3 AS m, '{\"k\": 1}'::jsonb -> 'k' AS j", json!([["A", "ab", 2, 1]])),
            (
                "SELECT count(*) AS n FROM generate_series(1, 3) g, LATERAL (SELECT g * 2 AS d) x WHERE x.d BETWEEN 2 AND 6 AND 'ab' ILIKE 'A%'",
                json!([[3]]),
            ),
            (
                "SELECT \"Name\" FROM \"Genre\" WHERE \"GenreId\" IN (1, 2) AND \"Name\" IS DISTINCT FROM 'x' ORDER BY lower(\"Name\") DESC",
                json!([["Rock"], ["Jazz"]]),
            ),
            // Legal PostgreSQL that sqlparser does not parse, read with PostgreSQL's grammar.
            (
                "SELECT host(inet '10.0.0.1') AS ip, 2 BETWEEN SYMMETRIC 3 AND 1 AS b",
                json!([["10.0.0.1", true]]),
            ),
            (
                "SELECT count(*) AS n FROM \"Genre\" TABLESAMPLE BERNOULLI (100) REPEATABLE (1)",
                json!([[25]]),
            ),
            ("SELECT xmlelement(name a, xmlattributes(1 AS b), 'x')::text AS x", json!([["<a b=\"1\">x</a>"]])),
            ("TABLE \"Genre\" ORDER BY 1 LIMIT 1", json!([[1, "Rock"]])),
            (
                "SELECT \"Name\" FROM \"Genre\" WHERE \"GenreId\" <= 3 ORDER BY \"Name\" USING ~<~",
                json!([["Jazz"], ["Metal"], ["Rock"]]),
            ),
            (
                "SELECT * FROM ROWS FROM (generate_series(1, 2), generate_series(1, 3)) AS r(a, b)",
                json!([[1, 1], [2, 2], [null, 3]]),
            ),
        ]),
    }
    queries
}

/// Whether `text` holds one of the ` | `-separated `alternatives`.
pub(crate) fn contains_any(text: &str, alternatives: &str) -> bool {
    alternatives.split(" | ").any(|a| text.contains(a))
}

/// Each hostile statement refused by validate_query (with an error containing one of its
/// ` | `-separated reasons), by execute_query and by `database` called directly; each
/// legitimate one valid and answering its rows. The failures, one line each.
pub(crate) fn hostile_failures(
    registry: &Services,
    source: &str,
    database: &dyn Database,
    cases: &[(String, &str)],
    legit: &[(&str, Value)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (sql, want) in cases {
        let (report, errors) = validation_errors(registry, source, sql);
        if report.data["valid"] != false || !contains_any(&errors.join(" / "), want) {
            failures.push(format!(
                "validate {sql:?}: expected {want:?}, got {} {errors:?}",
                report.message
            ));
        }
        let executed = execute_query(
            &registry.sources,
            ExecuteQueryParams {
                source: Some(source.into()),
                query: Value::from(sql.as_str()),
                timeout_ms: Some(2_000),
                ..Default::default()
            },
        );
        if executed.success {
            failures.push(format!("execute ran {sql:?}: {}", executed.data));
        }
        if let Ok(rows) = database.run(sql, &[], Some(10), 2_000) {
            failures.push(format!("database layer ran {sql:?}: {rows:?}"));
        }
    }
    for (sql, expect) in legit {
        let (report, _) = validation_errors(registry, source, sql);
        if report.data["valid"] != true {
            failures.push(format!(
                "validate rejected the legitimate {sql:?}: {} {}",
                report.message, report.data
            ));
        }
        let executed = execute_query(
            &registry.sources,
            ExecuteQueryParams {
                source: Some(source.into()),
                query: Value::from(*sql),
                ..Default::default()
            },
        );
        if !executed.success || executed.data["rows"] != *expect {
            failures.push(format!(
                "execute of the legitimate {sql:?}: expected {expect}, got {} {}",
                executed.message, executed.data["rows"]
            ));
        }
    }
    failures
}

/// validate_query's answer on `sql` in `source`, with its error messages.
pub(crate) fn validation_errors(
    registry: &Services,
    source: &str,
    sql: &str,
) -> (ToolResult, Vec<String>) {
    let report = validate_query(
        &registry.docs,
        ValidateQueryParams {
            source: Some(source.into()),
            query: Value::from(sql),
            question: None,
        },
    );
    let errors = report.data["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect();
    (report, errors)
}

/// Runs every case for `on` against `source`; returns the failures as readable lines.
fn run_cases(registry: &Services, source: &str, on: On, dir: &str) -> Vec<String> {
    let database: Arc<dyn Database> =
        registry.sources.get(Some(source)).expect("source").database.clone().expect("a SQL source");
    let mut failures = Vec::new();
    for case in CASES.iter().filter(|c| c.on == on || c.on == Both) {
        let sql = case.sql.replace("@DIR@", dir);
        let (report, errors) = validation_errors(registry, source, &sql);
        if !report.success
            || report.data["valid"] != false
            || !contains_any(&errors.join(" / "), case.validate)
        {
            failures.push(format!(
                "validate {sql:?}: expected a refusal with {:?}, got {} {errors:?}",
                case.validate, report.message
            ));
        }
        let executed = execute_query(
            &registry.sources,
            ExecuteQueryParams {
                source: Some(source.into()),
                query: Value::from(sql.as_str()),
                timeout_ms: Some(2_000),
                ..Default::default()
            },
        );
        let want = case.execute.unwrap_or(case.validate);
        if executed.success
            || executed.data["class"] != "refused"
            || !contains_any(&executed.message, want)
        {
            failures.push(format!(
                "execute {sql:?}: expected a refusal with {want:?}, got {} ({})",
                executed.message, executed.data
            ));
        }
        match case.db {
            Refuses(why) => match database.run(&sql, &[], Some(10), 2_000) {
                Ok(rows) => failures.push(format!("database layer ran {sql:?}: {rows:?}")),
                Err(e) if !contains_any(&e.to_string(), why) => {
                    failures.push(format!("database layer {sql:?}: expected {why:?}, got {e}"))
                }
                Err(_) => {}
            },
        }
    }
    for (sql, expect) in legit(on) {
        let report = validate_query(
            &registry.docs,
            ValidateQueryParams {
                source: Some(source.into()),
                query: Value::from(sql),
                question: None,
            },
        );
        if report.data["valid"] != true {
            failures.push(format!("validate rejected the legitimate {sql:?}: {}", report.message));
        }
        let executed = execute_query(
            &registry.sources,
            ExecuteQueryParams {
                source: Some(source.into()),
                query: Value::from(sql),
                ..Default::default()
            },
        );
        if !executed.success || executed.data["rows"] != expect {
            failures.push(format!(
                "execute of the legitimate {sql:?}: expected {expect}, got {} {}",
                executed.message, executed.data["rows"]
            ));
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
        // ClickHouse has no session across statements: hostile_sql_clickhouse.rs checks its data.
        schemascope_sources::sql::Dialect::ClickHouse => "SELECT 1",
        // DataFusion has no session across statements: hostile_sql_datafusion.rs checks its files.
        schemascope_sources::sql::Dialect::DataFusion => "SELECT 1",
        schemascope_sources::sql::Dialect::MySql | schemascope_sources::sql::Dialect::MariaDb => {
            "SELECT CURRENT_USER(), @@SESSION.sql_mode, @@SESSION.time_zone, @@SESSION.autocommit, @@SESSION.character_set_results"
        }
    };
    database.query(sql, &[]).expect("session state")
}

#[test]
fn hostile_sql_is_refused_and_leaves_the_sqlite_file_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("chinook.sqlite");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite"),
        &path,
    )
    .expect("copy");
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (bytes, files) = (std::fs::read(&path).expect("read"), listing());
    let registry = registry(&[&format!("lite=sqlite:{}", path.display())]);
    let database =
        registry.sources.get(Some("lite")).expect("source").database.clone().expect("SQL");
    let state = session_state(&*database);
    assert_eq!(
        state,
        vec![vec![SqlValue::Integer(1), SqlValue::Integer(1)]],
        "query_only on, only main attached"
    );

    let failures = run_cases(&registry, "lite", Sqlite, &dir.path().display().to_string());
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));

    assert_eq!(session_state(&*database), state, "the source's connection is as it was");
    drop(registry);
    assert!(std::fs::read(&path).expect("read") == bytes, "the database file changed");
    assert_eq!(listing(), files, "no file was created beside the database");
    let check =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let integrity: String =
        check.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check");
    assert_eq!(integrity, "ok");
}

/// Every user table's rows (md5 of the ordered row texts) and the catalog facts a hostile
/// statement could change: relations, roles, databases, settings per role and database,
/// large objects, sequences' values.
fn postgres_checksum(database: &dyn Database) -> Vec<String> {
    let one = |sql: &str| -> String {
        let rows = database.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter()
            .map(|r| r.iter().map(|v| format!("{:?}", v)).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
            .join("\n")
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
        facts.push(format!(
            "{}: {}",
            table.name,
            one(&format!(
                "SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) FROM {quoted} t"
            ))
        ));
    }
    facts
}

#[test]
fn hostile_sql_is_refused_and_leaves_postgres_unchanged() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    // The scratch schema's objects exist before the source connects (it reads what may be
    // called when it connects); they hold no rows and are not relations, so the checksums
    // below do not see them.
    let mut admin = postgres::Client::connect(&uri, postgres::NoTls).expect("admin connection");
    admin.batch_execute(&scratch_objects()).expect("scratch schema");
    // A separate connection reads the checksums, so nothing the suite does to its own session
    // can colour them.
    let checker = PostgresDatabase::connect(&uri).expect("connect");
    let before = postgres_checksum(&checker);
    let registry = registry(&[&format!("pg={uri}")]);
    let database = registry.sources.get(Some("pg")).expect("source").database.clone().expect("SQL");
    let state = session_state(&*database);

    let failures = run_cases(&registry, "pg", Postgres, "/tmp");
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));

    assert_eq!(
        session_state(&*database),
        state,
        "the source's session is as it was (role, settings, prepared statements, LISTEN, advisory locks)"
    );
    assert_eq!(postgres_checksum(&checker), before, "the database changed");
    for file in ["/tmp/schemascope-pwned", "/tmp/schemascope-copied", "/tmp/schemascope-exported"] {
        assert!(!Path::new(file).exists(), "{file} was written");
    }
    admin
        .batch_execute(&format!("DROP SCHEMA {SCRATCH} CASCADE"))
        .expect("drop the scratch schema");
}

/// A volatile function, an operator and a domain over it, a volatile function taking a row, and
/// stable functions that reach a volatile one through a domain argument, an implicit cast and a
/// parameter default.
fn scratch_objects() -> String {
    format!(
        "DROP SCHEMA IF EXISTS {SCRATCH} CASCADE; CREATE SCHEMA {SCRATCH};
         CREATE FUNCTION {SCRATCH}.slow_add(int, int) RETURNS int VOLATILE LANGUAGE sql AS 'SELECT $1 + $2';
         CREATE OPERATOR {SCRATCH}.#@# (LEFTARG = int, RIGHTARG = int, FUNCTION = {SCRATCH}.slow_add);
         CREATE DOMAIN {SCRATCH}.slow_int AS int CHECK ({SCRATCH}.slow_add(VALUE, 0) IS NOT NULL);
         CREATE FUNCTION {SCRATCH}.touch_row(anyelement) RETURNS int VOLATILE LANGUAGE sql AS 'SELECT 1';
         CREATE FUNCTION {SCRATCH}.takes_slow(d {SCRATCH}.slow_int) RETURNS int STABLE PARALLEL SAFE LANGUAGE sql AS 'SELECT 1';
         CREATE TYPE {SCRATCH}.comp AS (v text);
         CREATE FUNCTION {SCRATCH}.to_comp(text) RETURNS {SCRATCH}.comp VOLATILE LANGUAGE sql AS 'SELECT ROW($1)::{SCRATCH}.comp';
         CREATE CAST (text AS {SCRATCH}.comp) WITH FUNCTION {SCRATCH}.to_comp(text) AS IMPLICIT;
         CREATE FUNCTION {SCRATCH}.takes_comp(c {SCRATCH}.comp) RETURNS int STABLE PARALLEL SAFE LANGUAGE sql AS 'SELECT 1';
         CREATE FUNCTION {SCRATCH}.with_default(a int DEFAULT {SCRATCH}.slow_add(1, 1)) RETURNS int STABLE PARALLEL SAFE LANGUAGE sql AS 'SELECT $1';
         CREATE DOMAIN {SCRATCH}.sleepy AS int CHECK (pg_sleep(0) IS NOT NULL);
         CREATE FUNCTION {SCRATCH}.default_sleep(a int DEFAULT (pg_sleep(0) IS NOT NULL)::int) RETURNS int STABLE PARALLEL SAFE LANGUAGE sql AS 'SELECT $1';"
    )
}
