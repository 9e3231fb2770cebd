//! What the validator's tests share: each engine's allow-list of callables.

use schemascope_query::{Callables, SqlDialect};
use schemascope_sources::sql::{Database, PostgresDatabase, SqliteDatabase};

/// Chinook's SQLite file.
pub(crate) fn chinook_sqlite() -> SqliteDatabase {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    SqliteDatabase::open(&path).expect("open")
}

/// SQLite's allow-list, as the engine lists it.
pub(crate) fn sqlite_callables() -> Callables {
    (*chinook_sqlite().callables().expect("callables")).clone()
}

/// PostgreSQL's allow-list: the test server's own (`SCHEMASCOPE_TEST_POSTGRES`, set by
/// scripts/test), or without a server a stand-in with the functions and operators these
/// tests use, allowed or refused as PostgreSQL 15's catalog has them.
#[allow(dead_code)]
pub(crate) fn postgres_callables() -> Callables {
    if let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") {
        return (*PostgresDatabase::connect(&uri)
            .expect("connect")
            .callables()
            .expect("callables"))
        .clone();
    }
    let mut callables = Callables::new(SqlDialect::Postgres);
    for name in [
        "count",
        "sum",
        "avg",
        "min",
        "max",
        "lower",
        "upper",
        "abs",
        "round",
        "length",
        "generate_series",
        "now",
        "date_trunc",
        "to_char",
    ] {
        callables.add_function(Some("pg_catalog"), name, true);
    }
    for name in [
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "lo_import",
        "lo_export",
        "set_config",
        "nextval",
        "pg_sleep",
        "pg_terminate_backend",
        "query_to_xml",
        "ts_stat",
        "txid_current",
    ] {
        callables.add_function(Some("pg_catalog"), name, false);
    }
    for symbol in ["=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "||", "~~", "~~*"] {
        callables.add_operator(Some("pg_catalog"), symbol, true);
    }
    callables
}

/// ClickHouse's allow-list: the test server's own (`SCHEMASCOPE_TEST_CLICKHOUSE`, set by
/// scripts/test), or without a server a stand-in with the functions these tests use, as
/// ClickHouse lists them (`count` matches in any case, `toYear` only as written).
#[allow(dead_code)]
pub(crate) fn clickhouse_callables() -> Callables {
    if let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") {
        return (*schemascope_sources::sql::ClickHouseDatabase::connect(&uri)
            .expect("connect")
            .callables()
            .expect("callables"))
        .clone();
    }
    let mut callables = Callables::new(SqlDialect::ClickHouse);
    for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length"] {
        callables.add_function(None, name, true);
        callables.add_case_insensitive(name);
    }
    for name in ["toYear", "toString", "arrayMap", "uniqExact", "quantilesExact", "now"] {
        callables.add_function(None, name, true);
    }
    for name in ["sleep", "sleepEachRow", "file"] {
        callables.add_function(None, name, false);
    }
    callables
}

/// MariaDB's allow-list: the test server's own (`SCHEMASCOPE_TEST_MARIADB`, set by
/// scripts/test), or without a server a stand-in with the functions these tests use.
#[allow(dead_code)]
pub(crate) fn mariadb_callables() -> Callables {
    if let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") {
        return (*schemascope_sources::sql::Database::callables(
            &schemascope_sources::sql::MySqlDatabase::connect(&uri).expect("connect"),
        )
        .expect("callables"))
        .clone();
    }
    let mut callables = Callables::new(SqlDialect::MariaDb);
    for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length"] {
        callables.add_function(None, name, true);
    }
    for name in ["sleep", "benchmark", "load_file", "get_lock"] {
        callables.add_function(None, name, false);
    }
    callables
}

/// DataFusion's allow-list, as the embedded engine builds it (its registry's functions).
pub(crate) fn datafusion_callables() -> Callables {
    let db = schemascope_sources::sql::DataFusionDatabase::new("test", Vec::new()).expect("engine");
    (*schemascope_sources::sql::Database::callables(&db).expect("callables")).clone()
}
