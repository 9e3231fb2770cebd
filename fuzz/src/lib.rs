//! What the fuzz targets share: the Chinook catalog the SQL, docs and structured-query targets
//! check their inputs against, and the loading the three loader targets do.

use std::sync::OnceLock;

use schemascope_core::Catalog;
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
