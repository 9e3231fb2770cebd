//! Fuzzes the schema-documentation parser and chunker on arbitrary markdown: parsing never
//! fails (a malformed file is a warning), and chunking the result against the Chinook catalog
//! never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use schemascope_core::Catalog;
use schemascope_docs::chunk::build_chunks;
use schemascope_docs::notes::ColumnNotes;
use schemascope_docs::parse::parse_docs;
use schemascope_sources::sql::{Database, SqliteDatabase};

fn chinook() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/chinook/Chinook_Sqlite.sqlite");
        SqliteDatabase::open(&path).and_then(|db| db.catalog()).expect("the Chinook catalog")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The same text as the index and as a table's page.
    let files = [("_index.md", text), ("Track.md", text)];
    let (docs, _warnings) = parse_docs(&files);
    let _ = build_chunks(chinook(), &docs, &ColumnNotes::default());
});
