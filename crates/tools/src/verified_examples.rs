//! Verified examples (question → SQL pairs a person confirmed): checked on the database when a
//! source's docs index is built, so that an example the schema no longer fits is reported and
//! not shown; and recorded, opt-in, to the file the operator named (`--record-examples`), after
//! a person confirms an answer.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemascope_core::Catalog;
use schemascope_core::sync::lock;
use schemascope_core::value_index::ValueIndex;
use schemascope_docs::DocWarning;
use schemascope_docs::examples::{Example, MAX_EXAMPLES, example_entry, parse_examples};
use schemascope_docs::semantic::Semantic;
use schemascope_query::Query;
use schemascope_sources::Source;
use serde_json::json;

use crate::params::RecordExampleParams;
use crate::query_tools::check_with_semantic;
use crate::result::{ToolError, ToolResult, envelope};
use crate::schema_docs::{Docs, catalog, schema_index};

/// The longest question or SQL recorded, in bytes.
const MAX_RECORDED_BYTES: usize = 16 * 1024;

/// Appends to a file of recorded examples one at a time (within this process).
static APPENDING: Mutex<()> = Mutex::new(());

/// The examples of `examples` that are for `source` and still validate on it (metric names
/// and all, as `validate_query` reads them with `semantic`), first of each (question, SQL) pair,
/// at most [`MAX_EXAMPLES`]; a warning naming file and line for each left out, and for each
/// that names a source not served (`served`). Stops at a cancelled call (the index is then not
/// kept).
pub(crate) fn checked_examples(
    source: &Source,
    catalog: &Catalog,
    values: &Arc<ValueIndex>,
    semantic: Option<&Semantic>,
    served: &[String],
    examples: Vec<Example>,
) -> (Vec<Example>, Vec<DocWarning>) {
    let mut kept: Vec<Example> = Vec::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut warnings = Vec::new();
    let mut mine: Vec<Example> = Vec::new();
    for example in examples {
        match example.source.as_deref() {
            Some(other) if !served.iter().any(|s| s == other) => warnings.push(
                example
                    .warning(format!("the example is for source `{other}`, which is not served")),
            ),
            _ if example.is_for(source.name()) => mine.push(example),
            _ => {}
        }
    }
    let total = mine.len();
    for example in mine {
        if kept.len() == MAX_EXAMPLES {
            warnings.push(example.warning(format!(
                "only the first {MAX_EXAMPLES} of {total} verified examples are used"
            )));
            break;
        }
        if schemascope_core::cancel::current().check().is_err() {
            break;
        }
        if !seen.insert(pair_key(&example.question, &example.sql)) {
            continue;
        }
        let query = Query::Sql(example.sql.clone());
        let checked = check_with_semantic(
            source,
            catalog,
            Some(values.clone()),
            semantic,
            &query,
            Some(&example.question),
        );
        match checked {
            Ok(report) if report.valid => kept.push(example),
            Ok(report) => {
                let first = report.errors.first().map_or("", |e| e.message.as_str());
                warnings.push(example.warning(format!(
                    "the example \"{}\" no longer validates ({first}); not used",
                    shown(&example.question)
                )));
            }
            Err(error) => warnings.push(example.warning(format!(
                "the example \"{}\" could not be checked ({error}); not used",
                shown(&example.question)
            ))),
        }
    }
    (kept, warnings)
}

/// A question and its SQL as duplicates are found: case and spacing aside.
fn pair_key(question: &str, sql: &str) -> (String, String) {
    (words(question), sql.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `text`'s words, lower case, one space apart.
fn words(text: &str) -> String {
    text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
}

/// The start of a question, for a warning.
fn shown(question: &str) -> String {
    schemascope_core::display::shorten_str(question, 80).unwrap_or_else(|| question.to_string())
}

/// The examples recorded to `path` so far, as the docs index reads them (none while it does not
/// exist).
pub(crate) fn read_recorded(path: &Path) -> Result<Option<String>, ToolError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    schemascope_sources::file::read_small_string(path)
        .map(Some)
        .map_err(|e| ToolError::InvalidParams(format!("cannot read the recorded examples: {e}")))
}

/// What recording a pair did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Appended to the file, and in use from the next question on.
    Added,
    /// Appended to the file, but not among the examples in use (why is in the docs' warnings).
    AddedNotUsed(String),
    /// The same pair is a verified example already (where it is, `file:line`).
    AlreadyKnown(String),
}

/// Records `question` answered by `sql` for `source` in the operator's examples file, once it
/// validates (as `validate_query` would, metric names and all) and the file reads as TOML; the
/// source's docs index is then rebuilt, and the answer says whether the pair is in use. A
/// question that already has a verified example with other SQL is refused: one question, one
/// verified answer.
pub fn record_confirmed(
    docs: &Docs,
    source: &Source,
    question: &str,
    sql: &str,
) -> Result<Recorded, ToolError> {
    let Some(path) = docs.record_file() else {
        return Err(ToolError::InvalidParams(
            "recording examples is off: the operator enables it with --record-examples FILE".into(),
        ));
    };
    let (question, sql) = (question.trim(), sql.trim());
    if question.is_empty() || sql.is_empty() {
        return Err(ToolError::InvalidParams("`question` and `sql` must not be empty".into()));
    }
    if question.len() > MAX_RECORDED_BYTES || sql.len() > MAX_RECORDED_BYTES {
        return Err(ToolError::InvalidParams(format!(
            "`question` and `sql` are recorded up to {MAX_RECORDED_BYTES} bytes each"
        )));
    }
    let limit = schemascope_docs::examples::MAX_QUESTION_CHARS;
    if question.chars().count() > limit {
        return Err(ToolError::InvalidParams(format!(
            "`question` is recorded up to {limit} characters (it is shown whole beside the schema)"
        )));
    }
    // One recording at a time: the checks below and the append are one step.
    let _one_at_a_time = lock(&APPENDING);
    let index = schema_index(docs, source)?;
    let key = pair_key(question, sql);
    let same_question = |e: &&Example| words(&e.question) == key.0;
    if let Some(known) = index.examples().iter().find(same_question) {
        let place = format!("{}:{}", known.file, known.line);
        if pair_key(&known.question, &known.sql) == key {
            return Ok(Recorded::AlreadyKnown(place));
        }
        return Err(ToolError::InvalidParams(format!(
            "not recorded: the question already has a verified example with other SQL ({place}); change it there"
        )));
    }
    let catalog = catalog(source)?;
    let report = check_with_semantic(
        source,
        &catalog,
        index.values().cloned(),
        index.semantic(),
        &Query::Sql(sql.to_string()),
        Some(question),
    )?;
    if let Some(first) = report.errors.first() {
        let hint =
            first.suggestion.as_deref().map(|s| format!(" (suggestion: {s})")).unwrap_or_default();
        return Err(ToolError::InvalidParams(format!(
            "not recorded: the SQL does not validate on `{}`: {}{hint}",
            source.name(),
            first.message
        )));
    }
    // The file as it is now: its pairs (a duplicate recorded but not in use is still one),
    // and whether it reads at all (a pair appended to a broken file would never be shown).
    let existing = read_recorded_for_append(&path)?;
    let (recorded, problems) = parse_examples(&path.display().to_string(), &existing);
    if let Some(broken) = problems.iter().find(|p| p.file_skipped) {
        return Err(ToolError::InvalidParams(format!(
            "not recorded: {broken}; fix the file first"
        )));
    }
    if let Some(known) =
        recorded.iter().find(|e| e.is_for(source.name()) && pair_key(&e.question, &e.sql) == key)
    {
        return Ok(Recorded::AlreadyKnown(format!("{}:{}", known.file, known.line)));
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let entry = example_entry(source.name(), question, sql, &now);
    // What is appended must read back as one example.
    let (read, problems) = parse_examples("entry", &entry);
    if read.len() != 1 || !problems.is_empty() {
        return Err(ToolError::InvalidParams("the pair cannot be written as TOML".into()));
    }
    append(&path, &entry)?;
    docs.examples_recorded();
    let index = schema_index(docs, source)?;
    let in_use = index.examples().iter().any(|e| pair_key(&e.question, &e.sql) == key);
    Ok(if in_use {
        Recorded::Added
    } else {
        Recorded::AddedNotUsed(
            "it is not among the examples in use; get_schema_context's warnings say why".into(),
        )
    })
}

/// The record file's text before an append: empty when it does not exist yet; refused when it
/// is not a regular file (a FIFO would block the append, a directory cannot take one).
fn read_recorded_for_append(path: &Path) -> Result<String, ToolError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(cannot_write(path, &e)),
        Ok(meta) if !meta.is_file() => Err(ToolError::InvalidParams(format!(
            "cannot record to {}: it is not a regular file",
            path.display()
        ))),
        Ok(_) => read_recorded(path).map(Option::unwrap_or_default),
    }
}

/// Appends `entry` to the regular file `path` (created if missing), in one write; a FIFO
/// swapped in since the check above is refused at once, never waited on.
fn append(path: &Path, entry: &str) -> Result<(), ToolError> {
    let mut file =
        schemascope_sources::file::open_append_regular(path).map_err(|e| cannot_write(path, &e))?;
    file.write_all(entry.as_bytes()).map_err(|e| cannot_write(path, &e))?;
    file.sync_data().map_err(|e| cannot_write(path, &e))
}

fn cannot_write(path: &Path, error: &dyn std::fmt::Display) -> ToolError {
    ToolError::InvalidParams(format!("cannot record to {}: {error}", path.display()))
}

/// record_example: the tool over [`record_confirmed`].
pub fn record_example(docs: &Docs, params: RecordExampleParams) -> ToolResult {
    envelope((|| {
        let source = docs.sources().get(params.source.as_deref())?;
        let path = docs.record_file().map(|p| p.display().to_string()).unwrap_or_default();
        Ok(match record_confirmed(docs, &source, &params.question, &params.sql)? {
            Recorded::Added => ToolResult::ok(
                format!(
                    "Recorded as a verified example of `{}` in {path}; questions like it now show it.",
                    source.name()
                ),
                json!({"recorded": true, "file": path, "inUse": true}),
            ),
            Recorded::AddedNotUsed(why) => ToolResult::ok(
                format!("Recorded in {path}, but {why}."),
                json!({"recorded": true, "file": path, "inUse": false}),
            ),
            Recorded::AlreadyKnown(place) => ToolResult::ok(
                format!("Already a verified example ({place}); nothing recorded."),
                json!({"recorded": false, "existing": place}),
            ),
        })
    })())
}
