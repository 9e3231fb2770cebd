//! What the fuzz targets share: the Chinook catalog the SQL, docs and structured-query targets
//! check their inputs against.

use std::sync::OnceLock;

use schemascope_core::Catalog;
use schemascope_sources::sql::{Database, SqliteDatabase};

/// The Chinook catalog, read once per fuzzing process from `testdata/`.
pub fn chinook() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/chinook/Chinook_Sqlite.sqlite");
        SqliteDatabase::open(&path).and_then(|db| db.catalog()).expect("the Chinook catalog")
    })
}
