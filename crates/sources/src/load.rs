//! Loading a source: reading the file, recognising its format, and handing it to the loader of
//! that format. Every loader returns collections already profiled.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use schemascope_core::{Collection, SharedText, Text};

use serde::de::IgnoredAny;

use crate::demo;
use crate::documents::{DocumentLayout, load_document_lines, load_documents};
use crate::error::{LoadWarning, SourceError};
use crate::graph::load_graph;
use crate::profile_store::ProfileStore;
use crate::read::ReadMode;
use crate::records::{load_record_lines, load_record_object, looks_like_record_lines};
use crate::skipped_lines::SkippedLines;
use crate::source::{Progress, Source};
use crate::spec::{Format, Location, SourceSpec};
use crate::sql::{
    ClickHouseDatabase, Database, MySqlDatabase, PostgresDatabase, SqliteDatabase, load_database,
};
use crate::ssh::{Engine, Tunneled};

/// Loads a source from its specification, reading a file into a private copy; database tables
/// are profiled anew.
pub fn load(spec: &SourceSpec, progress: &dyn Progress) -> Result<Source, SourceError> {
    load_with(spec, progress, ReadMode::COPY, None)
}

/// Loads a source from its specification, bringing a file into memory as `mode` says; a
/// database's tables reuse the profiles in `store` while their data is unchanged.
pub fn load_with(
    spec: &SourceSpec,
    progress: &dyn Progress,
    mode: ReadMode,
    store: Option<&ProfileStore>,
) -> Result<Source, SourceError> {
    match &spec.location {
        Location::Demo(set) => {
            let (format, file, text) = demo::file(*set);
            let file = LoadedFile::of(Path::new(file), text.into());
            load_text(spec, file, Some(format), progress, None)
        }
        Location::Aimdb(socket) => {
            Ok(crate::aimdb::Snapshot::fetch(socket, crate::aimdb::DEFAULT_TIMEOUT)?
                .to_source(spec))
        }
        // A bare path that is a socket is an AimDB instance, as AimDB's own tools take it.
        Location::File { path, format: None } if crate::aimdb::endpoint::is_socket(path) => {
            Ok(crate::aimdb::Snapshot::fetch(path, crate::aimdb::DEFAULT_TIMEOUT)?.to_source(spec))
        }
        Location::File { path, format } => {
            if format.is_none() && crate::folder::is_folder(path) {
                return crate::folder::load_folder(spec, path, mode, progress);
            }
            if let Some(table) = table_format(path, *format) {
                return crate::tabular::load_table(spec, path, table, mode, progress);
            }
            let mut not_lines = None;
            if wants_streaming(path, mode) && crate::stream::is_document_lines(path, *format) {
                let defaults = crate::stream::StreamOptions::default();
                let options = crate::stream::StreamOptions {
                    announce_sample: !mode.is_streamed(),
                    budget: spec.limits.memory_budget.unwrap_or(defaults.budget),
                    ..defaults
                };
                match crate::stream::stream(spec, path, options, mode, progress) {
                    // Not JSON lines after all: the whole load decides what it is.
                    Err(e @ SourceError::ValuesOverLines { .. }) => not_lines = Some(e),
                    streamed => return Ok(streamed?.0),
                }
            }
            let is_lines = |text: &str| matches!(detect(path, text), Ok(Shape::Lines));
            let read = crate::read::read_shared(path, mode, is_lines);
            // Too large to be read whole, which its lines turned out to need: say why it was.
            if let (Err(SourceError::File(crate::file::FileError::TooLarge { .. })), Some(e)) =
                (&read, not_lines)
            {
                return Err(e);
            }
            let (text, not_utf8) = read?;
            let file = LoadedFile { path, text, not_utf8 };
            load_text(spec, file, *format, progress, Some(path.clone()))
        }
        Location::Sqlite(path) => {
            let database: Arc<dyn Database> = Arc::new(SqliteDatabase::open(path)?);
            load_database_source(spec, Format::Sqlite, database, Some(path.clone()), store)
        }
        Location::Postgres(uri) => {
            let database = connect(spec, uri, Engine::Postgres, |uri| {
                Ok(Arc::new(PostgresDatabase::connect(uri)?))
            })?;
            load_database_source(spec, Format::Postgres, database, None, store)
        }
        Location::ClickHouse(uri) => {
            let database = connect(spec, uri, Engine::ClickHouse, |uri| {
                Ok(Arc::new(ClickHouseDatabase::connect(uri)?))
            })?;
            load_database_source(spec, Format::ClickHouse, database, None, store)
        }
        Location::MySql(uri) => {
            let database = connect(spec, uri, Engine::MySql, |uri| {
                Ok(Arc::new(MySqlDatabase::connect(uri)?))
            })?;
            load_database_source(spec, Format::MySql, database, None, store)
        }
    }
}

/// Connects to the database at `uri` with `connect`, through the source's SSH tunnel when it
/// has one (opened here, and kept open by the connection).
fn connect(
    spec: &SourceSpec,
    uri: &str,
    engine: Engine,
    connect: impl Fn(&str) -> Result<Arc<dyn Database>, SourceError>,
) -> Result<Arc<dyn Database>, SourceError> {
    let Some(ssh) = &spec.ssh else { return connect(uri) };
    let shown = crate::spec::redact_uri(uri);
    let (through, tunnel) =
        crate::ssh::route(uri, engine, ssh).map_err(|reason| SourceError::Database {
            location: format!("{shown} through ssh {}", ssh.display()),
            message: reason,
        })?;
    let database = connect(&through).map_err(|e| crate::ssh::explained(e, &tunnel))?;
    Ok(Arc::new(Tunneled::new(database, &shown, tunnel)))
}

/// The table format of a file: forced by its scheme, else said by its name or, for Parquet, by
/// its first bytes.
pub(crate) fn table_format(
    path: &Path,
    forced: Option<Format>,
) -> Option<crate::tabular::TableFormat> {
    use crate::tabular::TableFormat;
    match forced {
        Some(Format::Csv) => Some(TableFormat::Csv),
        Some(Format::Parquet) => Some(TableFormat::Parquet),
        Some(_) => None,
        None => TableFormat::of_path(path).or_else(|| {
            use std::io::Read;
            let mut magic = [0u8; 4];
            let (mut file, _) = crate::file::open_regular(path).ok()?;
            file.read_exact(&mut magic).ok()?;
            (&magic == b"PAR1").then_some(TableFormat::Parquet)
        }),
    }
}

/// True when a file is profiled by streaming: a one-shot command asked for it, or the file is
/// too large to be held whole by a server (see [`crate::stream`]).
fn wants_streaming(path: &Path, mode: ReadMode) -> bool {
    mode.is_streamed()
        || std::fs::metadata(path).is_ok_and(|m| m.len() >= crate::stream::SERVE_STREAM_FROM)
}

/// Loads a graph, record set or document set from JSON text already in memory, as [`load`] does
/// after reading a file (`name` names the file in errors; `format` forces a format as `graph:`,
/// `records:` or `documents:` do). For embedding, and for fuzzing the loaders.
pub fn load_str(
    spec: &SourceSpec,
    name: &str,
    format: Option<Format>,
    text: String,
) -> Result<Source, SourceError> {
    load_text(spec, LoadedFile::of(Path::new(name), text.into()), format, &crate::NoProgress, None)
}

fn load_database_source(
    spec: &SourceSpec,
    format: Format,
    database: Arc<dyn Database>,
    path: Option<std::path::PathBuf>,
    store: Option<&ProfileStore>,
) -> Result<Source, SourceError> {
    let loaded = load_database(database, store)?;
    let bytes = path.as_deref().and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
    Ok(Source {
        spec: spec.clone(),
        format,
        collections: loaded.collections,
        warnings: Vec::new(),
        path,
        bytes,
        database: Some(loaded.database),
        aimdb: None,
        direction: None,
    })
}

pub(crate) fn is_ndjson_path(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(),
        Some("ndjson" | "jsonl" | "ldjson")
    )
}

/// What a file's top level is.
enum Shape {
    Array,
    Object {
        has_nodes: bool,
    },
    /// One JSON value per line (NDJSON), by extension or because values follow one another.
    Lines,
    /// JSON values one after another, the first over several lines (as `jq` writes them):
    /// documents.
    Sequence,
}

/// A JSON parse error of the file at `path`, at its line and column.
pub(crate) fn syntax(path: &Path, e: &serde_json::Error) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

fn shape_error(path: &Path, message: &str) -> SourceError {
    SourceError::Shape { path: path.to_path_buf(), line: 1, column: 1, message: message.into() }
}

/// Whether `e`, from parsing `text` as one value, found more after the first on a later line:
/// values one after another. (More on the same line is a line that is not one JSON value.)
fn is_trailing(e: &serde_json::Error, text: &str) -> bool {
    if !e.to_string().starts_with("trailing characters") {
        return false;
    }
    let line_start = match e.line() {
        1 => Some(0),
        line => memchr::memchr_iter(b'\n', text.as_bytes()).nth(line - 2).map(|at| at + 1),
    };
    // serde_json counts columns in bytes, the trailing character's included.
    let at = line_start.map(|start| start + e.column().saturating_sub(1));
    at.and_then(|at| text.get(..at))
        .is_some_and(|before| before.trim_end_matches([' ', '\t', '\r']).ends_with('\n'))
}

/// What a file source can be, for errors about a file that is none of them.
const FILE_FORMATS: &str = "schemascope reads JSON (a graph, a record set or a document array), NDJSON (.ndjson, .jsonl), CSV/TSV, Parquet and SQLite files, and PostgreSQL, ClickHouse and AimDB by URI";

/// Extensions of formats people often point at that are not read: named in the error rather
/// than a JSON parser's complaint about the first byte.
const NOT_READ: &[&str] =
    &["arrow", "feather", "avro", "orc", "xlsx", "xls", "yaml", "yml", "xml", "toml", "txt"];

/// What to tell about `path`, a file that is not what schemascope reads: `reason` (what was
/// found wrong) unless its extension already says it, then what is read instead.
pub(crate) fn not_read(path: &Path, reason: &str) -> String {
    let extension =
        path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    if NOT_READ.contains(&extension.as_str()) {
        format!("`.{extension}` files are not read; {FILE_FORMATS}")
    } else {
        format!("{reason}; {FILE_FORMATS}")
    }
}

/// The error for `path`, whose text is not JSON from its first line: what is read instead.
fn not_json(path: &Path, e: &serde_json::Error) -> SourceError {
    SourceError::Shape {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: not_read(path, &format!("not JSON ({e})")),
    }
}

fn detect(path: &Path, text: &str) -> Result<Shape, SourceError> {
    if is_ndjson_path(path) {
        return lines_or_sequence(path, text);
    }
    match text.trim_start().chars().next() {
        None => Err(SourceError::Syntax {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "the file is empty; expected JSON".into(),
        }),
        // A first line that is a whole array with more after it is NDJSON of arrays (a JSON
        // array's first line is rarely whole): read as lines, as a streamed profile reads it.
        Some('[') if first_line_is_json_with_more_after(text) => lines_or_sequence(path, text),
        Some('[') if lines_after_a_broken_first(text, true) == Some(true) => Ok(Shape::Lines),
        Some('[') => Ok(Shape::Array),
        // Only the top-level keys are kept: values are skipped without building anything.
        Some('{') => match serde_json::from_str::<HashMap<String, IgnoredAny>>(text) {
            Ok(keys) => Ok(Shape::Object { has_nodes: keys.contains_key("nodes") }),
            Err(e) if is_trailing(&e, text) => lines_or_sequence(path, text),
            Err(_) if lines_after_a_broken_first(text, true) == Some(true) => Ok(Shape::Lines),
            Err(e) => Err(syntax(path, &e)),
        },
        Some(_) => match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Err(shape_error(
                path,
                "the top level is a single scalar; expected an object (graph or records), an array (documents) or NDJSON",
            )),
            Err(e) if is_trailing(&e, text) => lines_or_sequence(path, text),
            Err(_) if lines_after_a_broken_first(text, true) == Some(true) => Ok(Shape::Lines),
            // The first value does not even start: not a JSON file at all.
            Err(e) if e.line() == 1 => Err(not_json(path, &e)),
            Err(e) => Err(syntax(path, &e)),
        },
    }
}

/// Whether the first non-blank line of `text` is JSON on its own and more text follows it.
fn first_line_is_json_with_more_after(text: &str) -> bool {
    let text = text.trim_start();
    let Some(newline) = text.find('\n') else { return false };
    !text[newline..].trim().is_empty()
        && serde_json::from_str::<IgnoredAny>(&text[..newline]).is_ok()
}

/// Lines after the first looked at to tell NDJSON with a broken first line.
const LINES_CHECKED: usize = 8;

/// Whether `text` is NDJSON whose first line is broken (a log cut at its start, a stray header),
/// whatever the file is named: its first non-blank line is not JSON on its own, and of the next
/// ones (up to [`LINES_CHECKED`]) more are a JSON object or array on their own than not, at
/// least one. A document broken on its first line has no such lines after it, and of an
/// array's lines at most half are (all but its last element's end in commas). `None` when
/// `text` is only the start of a file (not `complete`) and its lines do not settle it yet.
pub(crate) fn lines_after_a_broken_first(text: &str, complete: bool) -> Option<bool> {
    let mut lines = text.split_inclusive('\n').filter(|line| !line.trim().is_empty()).peekable();
    let first = lines.next()?;
    let is_json = |line: &str| serde_json::from_str::<IgnoredAny>(line).is_ok();
    if !first.ends_with('\n') && !complete {
        return None;
    }
    // Checked before the first line is parsed: a file of one long line has none.
    if lines.peek().is_none() && complete {
        return Some(false);
    }
    if is_json(first) {
        return Some(false);
    }
    let (mut json, mut checked) = (0, 0);
    for line in lines.take(LINES_CHECKED) {
        if !line.ends_with('\n') && !complete {
            return None;
        }
        let trimmed = line.trim_start();
        json +=
            usize::from((trimmed.starts_with('{') || trimmed.starts_with('[')) && is_json(line));
        checked += 1;
    }
    if checked < LINES_CHECKED && !complete {
        return None;
    }
    Some(json > 0 && json * 2 > checked)
}

/// Whether the first JSON value of `text` runs over several lines: false when it is not valid
/// JSON; `None` when `text` is only the start of a file (not `complete`) and ends inside it.
pub(crate) fn first_value_spans_lines(text: &str, complete: bool) -> Option<bool> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    match values.next() {
        Some(Ok(_)) => {
            Some(text.get(..values.byte_offset()).is_some_and(|t| t.trim().contains('\n')))
        }
        Some(Err(e)) if e.is_eof() && !complete => None,
        _ => Some(false),
    }
}

/// NDJSON, unless the first value runs over several lines: then JSON values one after another,
/// a sequence of documents, and an error where one is not valid JSON. (NDJSON's first document
/// is on its first line; read as NDJSON, every line of pretty-printed documents is a bad line.)
fn lines_or_sequence(path: &Path, text: &str) -> Result<Shape, SourceError> {
    if first_value_spans_lines(text, true) != Some(true) {
        return Ok(Shape::Lines);
    }
    match broken_value(path, text) {
        None => Ok(Shape::Sequence),
        Some(error) => Err(error),
    }
}

/// The error at the first value of `text`, JSON values one after another, that is not valid
/// JSON; `None` when every one is.
fn broken_value(path: &Path, text: &str) -> Option<SourceError> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let e = values.find_map(Result::err)?;
    Some(SourceError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        // serde_json says column 0 for the end of the text after a newline.
        column: e.column().max(1),
        message: format!(
            "JSON documents follow one another over several lines, and this one is not valid JSON: {}",
            e.to_string().split(" at line ").next().unwrap_or_default()
        ),
    })
}

/// Read as lines, `text` had bad lines (`bad`, ascending): an error when some of them hold a
/// JSON value over several lines with document lines inside it (`crate::nesting`), which are
/// then not documents. The file is refused as not UTF-8 where it had such lines (the first at
/// `first_not_utf8`), else at its first value that is not valid JSON.
fn values_over_lines(
    path: &Path,
    text: &str,
    bad: &[usize],
    first_not_utf8: Option<&LoadWarning>,
) -> Result<(), SourceError> {
    if bad.is_empty() || !crate::nesting::values_over_lines(text, bad) {
        return Ok(());
    }
    let refused = match first_not_utf8 {
        Some(w) => crate::read::not_utf8_at(path, w.line.unwrap_or(1), w.column.unwrap_or(1)),
        None => broken_value(path, text).unwrap_or_else(|| {
            shape_error(path, "JSON values run over several lines among lines that are not JSON")
        }),
    };
    Err(refused)
}

/// Whether `text` is JSON values one after another, one of them over several lines: not NDJSON,
/// whose every value is one line. When `text` is only the start of a file (not `complete`), a
/// value cut off at its end counts as one that follows.
pub(crate) fn is_sequence_over_lines(text: &str, complete: bool) -> bool {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
    let mut start = 0;
    let mut over_lines = false;
    while let Some(value) = values.next() {
        if let Err(e) = value {
            return over_lines && !complete && e.is_eof();
        }
        let end = values.byte_offset();
        over_lines |= text.get(start..end).is_some_and(|v| v.trim().contains('\n'));
        start = end;
    }
    over_lines
}

/// Lines that failed named in the error of a file where none loaded.
const BAD_LINES_NAMED: usize = 3;

/// A line-oriented file of which every non-empty line was skipped is an error naming the first
/// bad lines, not a source of zero items (an empty file still is one). `skipped` lines were
/// skipped in all; `warnings` lists the first of them (and may hold other warnings).
pub(crate) fn nothing_loaded(
    path: &Path,
    collections: &[schemascope_core::Collection],
    skipped: usize,
    warnings: &[LoadWarning],
) -> Result<(), SourceError> {
    let listed: Vec<&LoadWarning> = warnings.iter().filter(|w| w.line.is_some()).collect();
    let Some(first) = listed.first() else { return Ok(()) };
    if collections.iter().any(|c| !c.is_empty()) {
        return Ok(());
    }
    let named: Vec<String> = listed.iter().take(BAD_LINES_NAMED).map(ToString::to_string).collect();
    let skipped = skipped.max(listed.len());
    let more = skipped.saturating_sub(named.len());
    let more = if more > 0 { format!("; and {more} more") } else { String::new() };
    Err(SourceError::Syntax {
        path: path.to_path_buf(),
        line: first.line.unwrap_or(1),
        column: first.column.unwrap_or(1),
        message: format!(
            "no item loaded: all {skipped} non-empty lines are invalid ({}{more})",
            named.join("; ")
        ),
    })
}

/// A file's text, as [`load_text`] takes it.
struct LoadedFile<'a> {
    path: &'a Path,
    text: SharedText,
    /// Its lines that were not UTF-8, marked in `text` as lines that are not JSON (see
    /// [`crate::read::read_shared`]).
    not_utf8: SkippedLines,
}

impl<'a> LoadedFile<'a> {
    /// Text that was UTF-8 throughout.
    fn of(path: &'a Path, text: Text) -> Self {
        Self { path, text: Arc::new(text), not_utf8: SkippedLines::default() }
    }
}

/// Puts the warnings for lines that were not UTF-8 in place of the loaders' warnings for the
/// same lines (which were told the lines are not JSON), and their numbers among the skipped
/// lines'. Every such line is a bad line to the loaders, so the first of them are among the
/// loaders' first.
fn with_not_utf8(skipped: &mut SkippedLines, not_utf8: SkippedLines) {
    if not_utf8.lines.is_empty() {
        return;
    }
    let mut by_line: HashMap<usize, LoadWarning> =
        not_utf8.listed.into_iter().filter_map(|w| Some((w.line?, w))).collect();
    for warning in &mut skipped.listed {
        if let Some(replaced) = warning.line.and_then(|line| by_line.remove(&line)) {
            *warning = replaced;
        }
    }
    // Should one not be a bad line to the loaders, it is still said.
    if !by_line.is_empty() || not_utf8.lines.iter().any(|l| skipped.lines.binary_search(l).is_err())
    {
        skipped.listed.extend(by_line.into_values());
        skipped.listed.sort_by_key(|w| w.line);
        skipped.listed.truncate(crate::skipped_lines::LINE_WARNINGS_KEPT);
        skipped.lines.extend(not_utf8.lines);
        skipped.lines.sort_unstable();
        skipped.lines.dedup();
    }
}

fn load_text(
    spec: &SourceSpec,
    file: LoadedFile<'_>,
    forced: Option<Format>,
    progress: &dyn Progress,
    watch: Option<std::path::PathBuf>,
) -> Result<Source, SourceError> {
    let LoadedFile { path, text, not_utf8 } = file;
    let bytes = text.len() as u64;
    progress.start(bytes);
    let mut warnings: Vec<LoadWarning> = Vec::new();
    let mut skipped = SkippedLines::default();
    let name = spec.name.as_str();
    let mut direction = None;
    let shape = detect(path, &text)?;
    let lines = matches!(shape, Shape::Lines);
    let (format, collections) = match (shape, forced) {
        (Shape::Lines, Some(Format::Graph)) => {
            return Err(shape_error(
                path,
                "a graph must be one JSON document with `nodes`, not NDJSON",
            ));
        }
        (Shape::Lines, Some(Format::Records)) => {
            (Format::Records, vec![load_record_lines(name, text.clone(), progress, &mut skipped)])
        }
        (Shape::Lines, None) if looks_like_record_lines(&text) => {
            (Format::Records, vec![load_record_lines(name, text.clone(), progress, &mut skipped)])
        }
        (Shape::Lines, _) => {
            let lines =
                load_document_lines(name, text.clone(), progress, &mut warnings, &mut skipped);
            // Its bad lines may be documents over several lines after one-line ones (`{}` first).
            if !skipped.lines.is_empty() && is_sequence_over_lines(&text, true) {
                warnings.clear();
                skipped = SkippedLines::default();
                let layout = DocumentLayout::Sequence;
                let documents =
                    load_documents(path, name, text.clone(), layout, progress, &mut warnings)?;
                (Format::Documents, vec![documents])
            } else {
                (Format::Documents, vec![lines])
            }
        }
        (Shape::Object { .. }, Some(Format::Graph)) | (Shape::Object { has_nodes: true }, None) => {
            let (collections, found) = load_graph(path, &text, &mut warnings)?;
            direction = Some(found);
            (Format::Graph, collections)
        }
        (Shape::Object { .. }, Some(Format::Records) | None) => {
            (Format::Records, vec![load_record_object(path, name, text.clone())?])
        }
        (Shape::Array, Some(Format::Documents) | None) => (
            Format::Documents,
            vec![load_documents(
                path,
                name,
                text.clone(),
                DocumentLayout::Array,
                progress,
                &mut warnings,
            )?],
        ),
        (Shape::Sequence, Some(Format::Documents) | None) => (
            Format::Documents,
            vec![load_documents(
                path,
                name,
                text.clone(),
                DocumentLayout::Sequence,
                progress,
                &mut warnings,
            )?],
        ),
        (Shape::Sequence, Some(Format::Graph)) => {
            return Err(shape_error(
                path,
                "a graph must be one JSON document with `nodes`, not a sequence of documents",
            ));
        }
        (Shape::Sequence, Some(Format::Records)) => {
            return Err(shape_error(
                path,
                "records must be an object of named records or NDJSON {key, value} lines, not a sequence of documents over several lines",
            ));
        }
        (Shape::Array, Some(Format::Graph)) => {
            return Err(shape_error(
                path,
                "a graph must be an object with a `nodes` array, not an array",
            ));
        }
        (Shape::Array, Some(Format::Records)) => {
            return Err(shape_error(
                path,
                "records must be an object of named records or NDJSON {key, value} lines, not an array",
            ));
        }
        (Shape::Object { .. }, Some(Format::Documents)) => {
            return Err(shape_error(
                path,
                "documents must be a JSON array or NDJSON, not an object",
            ));
        }
        (_, Some(Format::Sqlite | Format::Postgres | Format::ClickHouse | Format::MySql)) => {
            return Err(shape_error(
                path,
                "a database is opened with sqlite:PATH or a postgres:// URI, not as a JSON file",
            ));
        }
        (_, Some(Format::Aimdb)) => {
            return Err(shape_error(
                path,
                "an AimDB instance is opened with aimdb:unix:///PATH.sock, not as a JSON file",
            ));
        }
        (_, Some(Format::Csv | Format::Parquet | Format::Folder)) => {
            return Err(shape_error(
                path,
                "a CSV or Parquet file is read as a table, not as JSON (it was given as text)",
            ));
        }
    };
    if lines {
        let first_not_utf8 = not_utf8.listed.first().cloned();
        with_not_utf8(&mut skipped, not_utf8);
        values_over_lines(path, &text, &skipped.lines, first_not_utf8.as_ref())?;
        nothing_loaded(path, &collections, skipped.lines.len(), &skipped.listed)?;
        // The skipped lines first, as they came.
        warnings.splice(0..0, skipped.into_warnings());
    }
    progress.finish();
    let collections: Vec<Arc<Collection>> = collections.into_iter().map(Arc::new).collect();
    let database = crate::sql::CollectionsDatabase::over(path.display().to_string(), &collections);
    Ok(Source {
        spec: spec.clone(),
        format,
        collections,
        warnings,
        path: watch,
        bytes,
        database,
        aimdb: None,
        direction,
    })
}
