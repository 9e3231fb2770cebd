//! The JSON Schema facts of an NDJSON document file, streamed: what `schemascope schema FILE`
//! needs, read as [`crate::stream`] reads a file for its profile (the same blocks, workers,
//! sample and line warnings) into a schema-only pass ([`SchemaBuilder`]) instead of a full
//! profile, so nothing is counted that the schema does not show, and nothing is spilled.
//!
//! The answer is not a [`crate::Source`]: it holds no profile, so no tool can read figures
//! from it that were never computed. The schema it gives is the one a full profile of the file
//! gives (a differential test in the core holds the two passes to the same schema text).

use std::path::Path;

use schemascope_core::profile::{SchemaBuilder, Spill};
use schemascope_core::schema_facts::SchemaFacts;

use crate::error::{LoadWarning, SourceError};
use crate::source::Progress;
use crate::spec::{Location, SourceSpec};
use crate::stream::{Read, StreamOptions, is_document_lines, read_documents};

/// The schema facts of a streamed document file, with what a schema answer shows beside them.
#[derive(Debug, Clone)]
pub struct StreamedSchema {
    /// The collection's name (the source's).
    pub name: String,
    /// What the schema is inferred from.
    pub facts: SchemaFacts,
    /// The first document of the uniform sample a full load keeps (the example it shows), as
    /// its text.
    pub example: Option<String>,
    /// Warnings about the file's lines (skipped, too long).
    pub warnings: Vec<LoadWarning>,
}

/// The document file `spec` names, when a one-shot command would stream it: a file (not a
/// socket) that holds NDJSON documents.
pub fn document_file(spec: &SourceSpec) -> Option<&Path> {
    let Location::File { path, format } = &spec.location else { return None };
    let plain = format.is_some() || !crate::aimdb::endpoint::is_socket(path);
    (plain && is_document_lines(path, *format)).then_some(path.as_path())
}

/// Streams the NDJSON document file `path` into the facts of its JSON Schema (see the module
/// docs); `mode` says whether blocks may be slices of a mapping, as for [`crate::stream`].
pub fn stream_schema(
    spec: &SourceSpec,
    path: &Path,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<StreamedSchema, SourceError> {
    stream_schema_with(spec, path, StreamOptions::default(), mode, progress)
}

/// [`stream_schema`] with explicit blocks and line limit (the budget and spill are not used).
fn stream_schema_with(
    spec: &SourceSpec,
    path: &Path,
    options: StreamOptions,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<StreamedSchema, SourceError> {
    // A schema's counters are bounded per path: no budget to fit, nothing to spill.
    let options = StreamOptions { spill: None, ..options };
    // The example is shown without its id: none is captured.
    let new = |_: Option<&Spill>| SchemaBuilder::new();
    let read: Read<SchemaBuilder> = read_documents(path, &options, mode, progress, &new)?;
    let facts = read.builder.unwrap_or_default().finish(read.items as u64);
    let first = read.sample.heap.iter().min_by_key(|s| s.offset);
    if first.is_none() {
        crate::load::nothing_loaded(path, &[], read.skipped, &read.warnings)?;
    }
    let example = first.map(|s| s.text.to_string());
    progress.finish();
    Ok(StreamedSchema { name: spec.name.clone(), facts, example, warnings: read.warnings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;
    use crate::stream::{MAX_LINE_BYTES, stream};
    use schemascope_core::json_schema::{infer_schema, schema_of};

    /// Documents of many shapes across block edges, with blank, bad and overlong lines.
    fn text() -> String {
        let mut text = String::from("\u{feff}");
        for i in 0..4_000 {
            let line = match i % 41 {
                5 => String::new(),
                9 => "{\"id\": 1, \"broken\": ".into(),
                13 => format!("{{\"id\": \"long-{i}\", \"pad\": \"{}\"}}", "x".repeat(4_000 + i)),
                17 => format!("[{i}, \"{}\", null]", i % 3),
                _ => format!(
                    "{{\"id\": \"d-{i}\", \"n\": {}, \"k\": {}, \"s\": \"ünï-{}\", \"few\": \"{}\", \"at\": \"2024-01-{:02}T00:00:00Z\", \"t\": [{i}, null, {{\"deep\": {{\"x\": {}}}}}], \"o\": {{\"k{}\": true}}}}",
                    i as f64 * 0.37 - 100.0,
                    (i as u64).wrapping_mul(9_007_199_254_740_993),
                    i % 17,
                    ["on", "off", "standby"][i % 3],
                    1 + i % 28,
                    if i % 7 == 0 { "null".to_string() } else { i.to_string() },
                    i % 5
                ),
            };
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str("{\"id\": \"last\", \"n\": 1e-9}");
        text
    }

    #[test]
    #[allow(unsafe_code)]
    fn a_file_streamed_for_its_schema_gives_the_profiles_schema_example_and_warnings() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("docs.ndjson");
        std::fs::write(&path, text()).expect("write");
        let spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        assert_eq!(document_file(&spec), Some(path.as_path()));
        // SAFETY: the test's own file, which nothing rewrites while it is read.
        let mapped = unsafe { crate::ReadMode::map() };
        for mode in [crate::ReadMode::COPY, mapped] {
            for block_bytes in [1 << 10, 65_536, 8 << 20] {
                for max_line_bytes in [3_000, MAX_LINE_BYTES] {
                    let options =
                        StreamOptions { block_bytes, max_line_bytes, ..StreamOptions::default() };
                    let case =
                        format!("{mode:?}, block {block_bytes}, line limit {max_line_bytes}");
                    let (source, _) =
                        stream(&spec, &path, options.clone(), mode, &NoProgress).expect("profiles");
                    let streamed = stream_schema_with(&spec, &path, options, mode, &NoProgress)
                        .expect("streams");
                    let collection = &source.collections[0];
                    let full = infer_schema(collection.profile());
                    assert_eq!(schema_of(&streamed.facts).to_string(), full.to_string(), "{case}");
                    assert_eq!(streamed.name, collection.name(), "{case}");
                    assert_eq!(streamed.facts.item_count, collection.item_count(), "{case}");
                    let example = collection.item(0).map(|i| i.json.to_string());
                    assert_eq!(streamed.example, example, "{case}");
                    // The line warnings; a profile adds its own (repeated ids, budget) after them.
                    let said: Vec<String> =
                        streamed.warnings.iter().map(ToString::to_string).collect();
                    let lines: Vec<String> = source
                        .warnings
                        .iter()
                        .filter(|w| w.line.is_some())
                        .map(ToString::to_string)
                        .collect();
                    assert!(!said.is_empty(), "{case}");
                    assert_eq!(said, lines, "{case}");
                }
            }
        }
    }

    #[test]
    fn a_file_of_bad_lines_only_is_refused_as_a_profile_refuses_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.ndjson");
        std::fs::write(&path, "{\"a\": 1\n[1,\n\n{\"b\"}\n").expect("write");
        let spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        let options = StreamOptions::default();
        let mode = crate::ReadMode::COPY;
        let profiled = stream(&spec, &path, options.clone(), mode, &NoProgress).map(|_| ());
        let streamed = stream_schema_with(&spec, &path, options, mode, &NoProgress).map(|_| ());
        let (profiled, streamed) = (profiled.expect_err("refused"), streamed.expect_err("refused"));
        assert_eq!(streamed.to_string(), profiled.to_string());
    }

    #[test]
    fn an_empty_file_gives_the_schema_of_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("empty.ndjson");
        std::fs::write(&path, "\n\n").expect("write");
        let spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        let mode = crate::ReadMode::COPY;
        let streamed =
            stream_schema_with(&spec, &path, StreamOptions::default(), mode, &NoProgress);
        let (source, _) =
            stream(&spec, &path, StreamOptions::default(), mode, &NoProgress).expect("loads");
        let streamed = streamed.expect("streams");
        let full = infer_schema(source.collections[0].profile());
        assert_eq!(schema_of(&streamed.facts), full);
        assert_eq!(streamed.example, None);
    }
}
