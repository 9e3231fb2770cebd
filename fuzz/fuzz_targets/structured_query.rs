//! Fuzzes the structured-query reader, validator and compiler on arbitrary JSON against the
//! Chinook catalog: parse errors name a path, and validation and compilation to both dialects
//! never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_fuzz::chinook;
use schemascope_query::{NoValues, Query, SqlDialect, compile, validate_structured};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(Query::Structured(query)) = Query::from_json(value) else { return };
    let _ = validate_structured(&query, chinook(), &NoValues);
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 22).unwrap_or_default();
    for dialect in [SqlDialect::Sqlite, SqlDialect::Postgres, SqlDialect::DataFusion] {
        let _ = compile(&query, chinook(), dialect, today);
    }
});
