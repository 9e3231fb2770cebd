//! Fuzzes the structured-query reader, validator and compiler on arbitrary JSON against the
//! Chinook catalog: parse errors name a path, and validation and compilation to both dialects
//! never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use schemascope_core::Catalog;
use schemascope_query::{NoValues, Query, SqlDialect, compile, validate_structured};
use schemascope_sources::sql::{Database, SqliteDatabase};

fn chinook() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/chinook/Chinook_Sqlite.sqlite");
        SqliteDatabase::open(&path).and_then(|db| db.catalog()).expect("the Chinook catalog")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(Query::Structured(query)) = Query::from_json(value) else { return };
    let _ = validate_structured(&query, chinook(), &NoValues);
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 22).unwrap_or_default();
    for dialect in [SqlDialect::Sqlite, SqlDialect::Postgres] {
        let _ = compile(&query, chinook(), dialect, today);
    }
});
