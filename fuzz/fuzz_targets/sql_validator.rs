//! Fuzzes the SQL validator on arbitrary text against the Chinook catalog, in every dialect
//! (with each engine's allow-list of callables): every input gets a report (never a panic),
//! and what the full validator accepts as valid the read-only check accepts too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_fuzz::{callables, chinook};
use schemascope_query::{NoValues, SqlDialect, check_read_only, validate_sql};

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else { return };
    for dialect in [SqlDialect::Sqlite, SqlDialect::Postgres, SqlDialect::ClickHouse, SqlDialect::DataFusion, SqlDialect::MariaDb] {
        let report = validate_sql(sql, chinook(), &NoValues, callables(dialect));
        let read_only = check_read_only(sql, callables(dialect));
        if report.valid {
            assert!(read_only.is_ok(), "validate_sql accepted what check_read_only refuses ({dialect:?}): {sql:?}: {read_only:?}");
        }
    }
});
