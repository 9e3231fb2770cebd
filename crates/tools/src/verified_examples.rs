//! Verified examples (question → SQL pairs a person confirmed): checked on the database when a
//! source's docs index is built, so that an example the schema no longer fits is reported and
//! not shown; and recorded, opt-in, to the file the operator named (`--record-examples`), after
//! a person confirms an answer.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemascope_core::Catalog;
use schemascope_core::sync::lock;
use schemascope_core::value_index::ValueIndex;
use schemascope_docs::DocWarning;
use schemascope_docs::examples::{Example, MAX_EXAMPLES, example_entry, parse_examples};
use schemascope_query::Query;
use schemascope_sources::Source;
use serde_json::json;

use crate::params::RecordExampleParams;
use crate::query_tools::check_with_values;
use crate::result::{ToolError, ToolResult, envelope};
use crate::schema_docs::{Docs, catalog, schema_index};

/// The longest question or SQL recorded, in bytes.
const MAX_RECORDED_BYTES: usize = 16 * 1024;

/// Appends to a file of recorded examples one at a time (within this process).
static APPENDING: Mutex<()> = Mutex::new(());

/// The examples of `examples` that are for `source` and still validate on it, first of each
/// (question, SQL) pair, at most [`MAX_EXAMPLES`]; a warning naming file and line for each left
/// out. Stops at a cancelled call (the index is then not kept).
pub(crate) fn checked_examples(
    source: &Source,
    catalog: &Catalog,
    values: &Arc<ValueIndex>,
    examples: Vec<Example>,
) -> (Vec<Example>, Vec<DocWarning>) {
    let mut kept: Vec<Example> = Vec::new();
    let mut warnings = Vec::new();
    let mine: Vec<Example> = examples.into_iter().filter(|e| e.is_for(source.name())).collect();
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
        if kept.iter().any(|k| same_pair(k, &example.question, &example.sql)) {
            continue;
        }
        let query = Query::Sql(example.sql.clone());
        match check_with_values(
            source,
            catalog,
            Some(values.clone()),
            &query,
            Some(&example.question),
        ) {
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

/// True when `example` is `question` answered by `sql` (case and spacing of the question aside).
fn same_pair(example: &Example, question: &str, sql: &str) -> bool {
    let words = |text: &str| text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>();
    example.sql.trim() == sql.trim() && words(&example.question) == words(question)
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
    /// Appended to the file.
    Added,
    /// The same pair is a verified example already (where it is, `file:line`).
    AlreadyKnown(String),
}

/// Records `question` answered by `sql` for `source` in the operator's examples file, once it
/// validates; the source's docs index is rebuilt on its next use, so the pair is shown from the
/// next question on.
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
    let index = schema_index(docs, source)?;
    if let Some(known) = index.examples().iter().find(|e| same_pair(e, question, sql)) {
        return Ok(Recorded::AlreadyKnown(format!("{}:{}", known.file, known.line)));
    }
    let catalog = catalog(source)?;
    let report = check_with_values(
        source,
        &catalog,
        index.values().cloned(),
        &Query::Sql(sql.to_string()),
        Some(question),
    )?;
    if let Some(first) = report.errors.first() {
        return Err(ToolError::InvalidParams(format!(
            "not recorded: the SQL does not validate on `{}`: {}",
            source.name(),
            first.message
        )));
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let entry = example_entry(source.name(), question, sql, &now);
    // What is appended must read back as one example: a file whose last entry is cut or
    // broken would take this one with it.
    let (read, problems) = parse_examples("entry", &entry);
    if read.len() != 1 || !problems.is_empty() {
        return Err(ToolError::InvalidParams("the pair cannot be written as TOML".into()));
    }
    {
        let _one_at_a_time = lock(&APPENDING);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| cannot_write(&path, &e))?;
        file.write_all(entry.as_bytes()).map_err(|e| cannot_write(&path, &e))?;
        file.sync_data().map_err(|e| cannot_write(&path, &e))?;
    }
    docs.examples_recorded();
    Ok(Recorded::Added)
}

fn cannot_write(path: &Path, error: &std::io::Error) -> ToolError {
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
                json!({"recorded": true, "file": path}),
            ),
            Recorded::AlreadyKnown(place) => ToolResult::ok(
                format!("Already a verified example ({place}); nothing recorded."),
                json!({"recorded": false, "existing": place}),
            ),
        })
    })())
}
