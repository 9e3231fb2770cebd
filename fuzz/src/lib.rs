//! What the fuzz targets share: the Chinook catalog the SQL, docs and structured-query targets
//! check their inputs against, each engine's allow-list of callables, and the loading the three
//! loader targets do.

use std::sync::OnceLock;

use schemascope_core::Catalog;
use schemascope_query::{Callables, SqlDialect};
use schemascope_sources::sql::{Database, SqliteDatabase};
use schemascope_sources::{Format, SourceSpec, load_str};

/// The Chinook catalog, read once per fuzzing process from `testdata/`.
pub fn chinook() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/chinook/Chinook_Sqlite.sqlite");
        SqliteDatabase::open(&path).and_then(|db| db.catalog()).expect("the Chinook catalog")
    })
}

/// Functions a PostgreSQL stand-in allow-list refuses (as PostgreSQL 15's catalog does).
pub const POSTGRES_REFUSED: &[&str] = &["pg_sleep", "pg_terminate_backend", "set_config", "ts_stat", "query_to_xml", "txid_current", "lo_create"];

/// The allow-list of `dialect`: SQLite's from the engine (Chinook's file); for PostgreSQL, which
/// is not running while fuzzing, a stand-in with common functions and operators allowed, the
/// functions of [`POSTGRES_REFUSED`] refused, a refused operator `#@#`, an unsafe type
/// `slow_int` and a refused row function `touch_row`.
pub fn callables(dialect: SqlDialect) -> &'static Callables {
    static SQLITE: OnceLock<Callables> = OnceLock::new();
    static POSTGRES: OnceLock<Callables> = OnceLock::new();
    static CLICKHOUSE: OnceLock<Callables> = OnceLock::new();
    static DATAFUSION: OnceLock<Callables> = OnceLock::new();
    static MYSQL: OnceLock<Callables> = OnceLock::new();
    match dialect {
        SqlDialect::Sqlite => SQLITE.get_or_init(|| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/chinook/Chinook_Sqlite.sqlite");
            let database = SqliteDatabase::open(&path).expect("the Chinook database");
            (*database.callables().expect("SQLite's function list")).clone()
        }),
        SqlDialect::Postgres => POSTGRES.get_or_init(|| {
            let mut callables = Callables::new(SqlDialect::Postgres);
            for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length", "substr", "now", "random", "generate_series", "unnest"] {
                callables.add_function(Some("pg_catalog"), name, true);
            }
            for name in POSTGRES_REFUSED {
                callables.add_function(Some("pg_catalog"), name, false);
            }
            callables.add_function(Some("scratch"), "touch_row", false);
            callables.add_attribute_call("touch_row");
            for symbol in ["=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "||", "~~", "~~*", "!~~", "!~~*", "~", "!~"] {
                callables.add_operator(Some("pg_catalog"), symbol, true);
            }
            callables.add_operator(Some("scratch"), "#@#", false);
            callables.add_unsafe_type(Some("scratch"), "slow_int");
            callables
        }),
        SqlDialect::ClickHouse => CLICKHOUSE.get_or_init(|| {
            let mut callables = Callables::new(SqlDialect::ClickHouse);
            for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length"] {
                callables.add_function(None, name, true);
                callables.add_case_insensitive(name);
            }
            for name in ["toYear", "toString", "arrayMap", "uniqExact", "now"] {
                callables.add_function(None, name, true);
            }
            for name in ["sleep", "sleepEachRow", "file"] {
                callables.add_function(None, name, false);
            }
            callables
        }),
        // DataFusion's registry holds no function with side effects: the fuzzer's list is a few
        // of its names.
        SqlDialect::DataFusion => DATAFUSION.get_or_init(|| {
            let mut callables = Callables::new(SqlDialect::DataFusion);
            for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length", "date_trunc", "strpos", "now"] {
                callables.add_function(None, name, true);
            }
            callables
        }),
        // MySQL's and MariaDB's servers are not running while fuzzing: a stand-in with common
        // built-ins allowed and those that wait, lock or read files refused.
        SqlDialect::MySql | SqlDialect::MariaDb => MYSQL.get_or_init(|| {
            let mut callables = Callables::new(SqlDialect::MariaDb);
            for name in ["count", "sum", "avg", "min", "max", "lower", "upper", "abs", "round", "length", "date_format", "ifnull", "concat", "now"] {
                callables.add_function(None, name, true);
            }
            for name in ["sleep", "benchmark", "get_lock", "load_file"] {
                callables.add_function(None, name, false);
            }
            callables
        }),
    }
}

/// Loads arbitrary bytes as `format` and as auto-detected, profiling whatever loads: every input
/// loads or gives an error naming the problem (never a panic, hang or unbounded memory).
pub fn load_as(data: &[u8], format: Format) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = "fuzz=input.json".parse::<SourceSpec>() else { return };
    for format in [Some(format), None] {
        if let Ok(source) = load_str(&spec, "input.json", format, text.to_string()) {
            for collection in &source.collections {
                let _ = collection.profile();
            }
        }
    }
}
