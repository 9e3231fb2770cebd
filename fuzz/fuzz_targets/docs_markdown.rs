//! Fuzzes the schema-documentation parser and chunker on arbitrary markdown: parsing never
//! fails (a malformed file is a warning), and chunking the result against the Chinook catalog
//! never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_docs::chunk::build_chunks;
use schemascope_docs::notes::ColumnNotes;
use schemascope_docs::parse::parse_docs;
use schemascope_fuzz::chinook;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The same text as the index and as a table's page.
    let files = [("_index.md", text), ("Track.md", text)];
    let (docs, _warnings) = parse_docs(&files);
    let _ = build_chunks(chinook(), &docs, &ColumnNotes::default());
});
