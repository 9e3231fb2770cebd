//! Schema-documentation retrieval for SQL sources: search_schema_docs, get_schema_context and
//! `docs generate`. The index of a source (catalog + docs chunks + BM25) is built once and
//! rebuilt only when the schema, the docs files or the configuration change.

use schemascope_core::sync::lock;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemascope_core::ceilings::Ceiling;
use schemascope_core::{Catalog, figure};
use schemascope_docs::Encoder;
use schemascope_docs::dbt::{DBT_PREFIX, is_dbt_file};
use schemascope_docs::examples::{EXAMPLES_DIR, EXAMPLES_FILE, parse_examples};
use schemascope_docs::generate::{TableData, column_notes, generate_docs, is_unedited};
use schemascope_docs::{
    ColumnNotes, DocWarning, RetrievalConfig, SchemaIndex, input_fingerprint, parse_docs,
};
use schemascope_sources::file::{ConfinedDir, FileError};
use schemascope_sources::sql::rows;
use schemascope_sources::{Location, Source};
use serde_json::{Value, json};

use crate::docs_watch::DirWatch;
use crate::embedding_model::{EmbeddingModel, Readiness};
use crate::params::{GenerateDocsParams, GetSchemaContextParams, SearchSchemaDocsParams};
use crate::result::{ToolError, ToolResult, envelope};
use crate::sources::Sources;
use crate::verified_examples::read_recorded;

/// Tables up to this many rows lend their value domains to the index (profiling them is cheap);
/// larger ones do once profiled for another reason.
const NOTE_ROWS: u64 = 100_000;
/// Rows shown as examples in generated docs.
const EXAMPLE_ROWS: usize = 3;

/// The schema documentation of the SQL sources: where each source's docs are, the retrieval
/// configuration, and the built indexes.
#[derive(Debug)]
pub struct Docs {
    sources: Arc<Sources>,
    dirs: Mutex<HashMap<String, PathBuf>>,
    /// Whether links out of a docs directory are followed (off unless asked).
    follow_links: AtomicBool,
    config: Mutex<RetrievalConfig>,
    /// Bumped by every change of the directories, links rule or configuration: an index read
    /// under an older value is checked again.
    settings: AtomicU64,
    indexes: Mutex<HashMap<String, BuiltIndex>>,
    /// The file confirmed question → SQL pairs are recorded to (`--record-examples`), whose
    /// examples every source's index reads too.
    record_file: Mutex<Option<PathBuf>>,
    /// Each source's dbt project, `manifest.json` or properties file (`--dbt`).
    dbt: Mutex<HashMap<String, PathBuf>>,
    /// The sentence-embedding model retrieval ranks by meaning with (`--embedding-model`).
    encoder: Mutex<Option<Arc<EmbeddingModel>>>,
    /// How long a call waits for the model to encode a schema's chunks before it answers by
    /// words (`None`: until they are encoded).
    encoding_patience: Mutex<Option<Duration>>,
}

#[derive(Debug, Clone)]
struct BuiltIndex {
    /// The sources' generation it was last checked in (any reload changes it).
    generation: u64,
    /// The docs files it was built from.
    files: u64,
    fingerprint: u64,
    /// The value of [`Docs::settings`] it was read under.
    settings: u64,
    /// Says whether the docs directory may have changed since it was read; without one, the
    /// directory is read on every call.
    watch: Option<Arc<Mutex<DirWatch>>>,
    index: Arc<SchemaIndex>,
    warnings: Arc<[DocWarning]>,
    /// True when this index was reused rather than built for the call.
    reused: bool,
    /// True while the embedding model has yet to be added (its vectors being encoded).
    awaits_meaning: bool,
}

impl Docs {
    /// No docs directories yet, the default retrieval configuration.
    pub fn new(sources: Arc<Sources>) -> Self {
        Self {
            sources,
            dirs: Mutex::default(),
            follow_links: AtomicBool::new(false),
            config: Mutex::default(),
            settings: AtomicU64::new(0),
            indexes: Mutex::default(),
            record_file: Mutex::default(),
            dbt: Mutex::default(),
            encoder: Mutex::default(),
            encoding_patience: Mutex::default(),
        }
    }

    /// Ranks by meaning as well as by words with `encoder` (`None`: by words alone). Every
    /// index is built again, its chunks encoded, on its next use.
    pub fn set_encoder(&self, encoder: Option<Arc<EmbeddingModel>>) {
        *lock(&self.encoder) = encoder;
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits at most `patience` for the model to encode a schema's chunks (`None`: until it is
    /// done, the default for one-shot commands); a call that waits no longer is answered by
    /// words, the encoding going on in the background, and a later call ranks by meaning.
    pub fn set_encoding_patience(&self, patience: Option<Duration>) {
        *lock(&self.encoding_patience) = patience;
    }

    /// Reads the docs dbt keeps for `source` from `path`: a dbt project directory (its
    /// `target/manifest.json` when dbt compiled one, else the properties files under
    /// `models/`), a `manifest.json`, or one properties file.
    pub fn set_dbt(&self, source: &str, path: PathBuf) {
        lock(&self.dbt).insert(source.to_string(), path);
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Forgets source `source`'s dbt docs.
    pub fn unset_dbt(&self, source: &str) {
        lock(&self.dbt).remove(source);
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Records confirmed question → SQL pairs to `path` (`None`: recording off), and reads the
    /// examples recorded there for every source.
    pub fn set_record_file(&self, path: Option<PathBuf>) {
        *lock(&self.record_file) = path;
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// The file confirmed pairs are recorded to, when recording is on.
    pub fn record_file(&self) -> Option<PathBuf> {
        lock(&self.record_file).clone()
    }

    /// An example was recorded: every index reads the record file again on its next use.
    pub(crate) fn examples_recorded(&self) {
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// The sources the docs are about.
    pub fn sources(&self) -> &Arc<Sources> {
        &self.sources
    }

    /// Uses `dir` as the docs directory of `source`.
    pub fn set_dir(&self, source: &str, dir: PathBuf) {
        {
            let mut dirs = lock(&self.dirs);
            dirs.insert(source.to_string(), dir);
        }
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Forgets source `source`'s docs directory (its configuration entry no longer names one):
    /// the default place is looked at again.
    pub fn unset_dir(&self, source: &str) {
        lock(&self.dirs).remove(source);
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Follows symbolic links out of docs directories too (`--docs-follow-links`); by default a
    /// link leading outside its docs directory is skipped with a warning.
    pub fn set_follow_links(&self, follow: bool) {
        self.follow_links.store(follow, Ordering::Relaxed);
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether links out of docs directories are followed.
    pub fn follow_links(&self) -> bool {
        self.follow_links.load(Ordering::Relaxed)
    }

    /// Replaces the retrieval configuration (indexes rebuild on next use).
    pub fn set_config(&self, config: RetrievalConfig) {
        {
            let mut current = lock(&self.config);
            *current = config;
        }
        self.settings.fetch_add(1, Ordering::SeqCst);
    }

    /// The retrieval configuration.
    pub fn config(&self) -> RetrievalConfig {
        lock(&self.config).clone()
    }

    /// The docs directory of `source`: the one given, else `<name>/docs/` beside a database file.
    pub fn dir(&self, source: &Source) -> Option<PathBuf> {
        if let Some(dir) = lock(&self.dirs).get(source.name()).cloned() {
            return Some(dir);
        }
        match &source.spec.location {
            Location::Sqlite(path) => {
                let stem = path.file_stem()?.to_str()?;
                Some(path.with_file_name(stem).join("docs"))
            }
            _ => None,
        }
    }
}

/// The catalog of a SQL source, from its table collections.
pub fn catalog(source: &Source) -> Result<Catalog, ToolError> {
    if source.database.is_none() {
        return Err(ToolError::InvalidParams(format!(
            "source `{}` is not served to SQL: schema docs retrieval works on databases, table files and collections held in memory (describe_schema covers this one)",
            source.name()
        )));
    }
    let tables: Vec<_> = source.collections.iter().filter_map(|c| c.table().cloned()).collect();
    match &source.database {
        // Files and in-memory collections: the embedded engine's tables of them.
        Some(database) if tables.is_empty() => Ok(database.catalog()?),
        _ => Ok(Catalog { tables }),
    }
}

/// The largest docs file read; a table's doc is a few kilobytes.
const MAX_DOC_BYTES: u64 = 4 << 20;
/// The most `.md` files read from one docs directory.
const MAX_DOC_FILES: usize = 10_000;
/// The most bytes of docs read from one directory, all files together.
const MAX_DOCS_TOTAL_BYTES: u64 = 64 << 20;
/// The most directory entries looked at (most are expected to be docs).
const MAX_DIR_ENTRIES: usize = 100_000;

/// Docs files read: (file name, text), sorted by name.
type DocFiles = Vec<(String, String)>;

/// What reading a docs directory found: the files, the ones skipped with why, and whether a
/// watch on the directory sees every change of what was read (not when a file is reached through
/// a link, or has another hard link whose writes the directory is not told of).
struct DocsRead {
    files: DocFiles,
    skipped: Vec<DocWarning>,
    watchable: bool,
}

/// A docs file skipped before parsing, as a warning naming it.
fn skipped(name: &str, message: String) -> DocWarning {
    DocWarning { file: name.to_string(), line: 0, message, file_skipped: true }
}

/// The `.md` files of a docs directory, sorted by name, and the ones skipped with why; none
/// when it does not exist. Only regular files inside the directory are read (unless
/// `follow_links` allows links out of it), each within [`MAX_DOC_BYTES`] and all within
/// [`MAX_DOC_FILES`] and [`MAX_DOCS_TOTAL_BYTES`]: a FIFO, a link to a device or out of the
/// directory, a directory named `*.md` or a huge file is skipped with a warning, never read.
fn read_docs(dir: Option<&Path>, follow_links: bool) -> Result<DocsRead, ToolError> {
    let Some(dir) = dir.filter(|d| d.is_dir()) else {
        return Ok(DocsRead { files: Vec::new(), skipped: Vec::new(), watchable: true });
    };
    let cannot = |e: &dyn std::fmt::Display| {
        ToolError::InvalidParams(format!("cannot read docs directory {}: {e}", dir.display()))
    };
    let confined = ConfinedDir::new(dir, follow_links).map_err(|e| cannot(&e))?;
    let entries = std::fs::read_dir(dir).map_err(|e| cannot(&e))?;
    let mut warnings = Vec::new();
    let mut watchable = true;
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    for (seen, entry) in entries.flatten().enumerate() {
        if seen == MAX_DIR_ENTRIES {
            warnings.push(skipped(".", format!("the directory has more than {MAX_DIR_ENTRIES} entries; the rest were not looked at")));
            break;
        }
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if name.eq_ignore_ascii_case(EXAMPLES_DIR) {
            if path.is_dir() {
                watchable &= example_files(&path, &mut names, &mut warnings);
            } else {
                warnings.push(skipped(&name, "is not a directory: verified examples go in `_examples/*.sql` or `_examples.toml`; skipped".into()));
            }
            continue;
        }
        // The markdown docs, the business terms file and the verified examples file.
        if path.extension().and_then(|e| e.to_str()) != Some("md")
            && !name.eq_ignore_ascii_case(schemascope_docs::semantic::SEMANTIC_FILE)
            && !name.eq_ignore_ascii_case(EXAMPLES_FILE)
        {
            continue;
        }
        watchable &= watched_as_read(&entry);
        names.push((name, path));
    }
    names.sort();
    if names.len() > MAX_DOC_FILES {
        let first = &names[MAX_DOC_FILES].0;
        warnings.push(skipped(
            first,
            format!("only the first {MAX_DOC_FILES} .md files by name are read; {} from `{first}` on were skipped", names.len() - MAX_DOC_FILES),
        ));
        names.truncate(MAX_DOC_FILES);
    }
    let mut files = Vec::new();
    let mut total = 0u64;
    for (name, path) in names {
        let left = MAX_DOCS_TOTAL_BYTES.saturating_sub(total);
        let (limit, what) = if left < MAX_DOC_BYTES {
            (left, "left of the 64 MiB read from one docs directory")
        } else {
            (MAX_DOC_BYTES, "for one docs file")
        };
        match confined.read_string(&path, limit, what) {
            Ok(text) => {
                total += text.len() as u64;
                files.push((name, text));
            }
            Err(error) => warnings.push(skipped(&name, format!("{error}; skipped"))),
        }
    }
    Ok(DocsRead { files, skipped: warnings, watchable })
}

/// Adds the `.sql` files of the examples directory `dir` to `names` as `_examples/<file>`
/// (within [`MAX_DIR_ENTRIES`]); true when the watch on it sees every change of them.
fn example_files(
    dir: &Path,
    names: &mut Vec<(String, PathBuf)>,
    warnings: &mut Vec<DocWarning>,
) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        warnings.push(skipped(EXAMPLES_DIR, "cannot be read; its examples were skipped".into()));
        return true;
    };
    let mut watchable = true;
    for (seen, entry) in entries.flatten().enumerate() {
        if seen == MAX_DIR_ENTRIES {
            warnings.push(skipped(EXAMPLES_DIR, format!("the directory has more than {MAX_DIR_ENTRIES} entries; the rest were not looked at")));
            break;
        }
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("sql"))
        {
            watchable &= watched_as_read(&entry);
            names.push((format!("{EXAMPLES_DIR}/{name}"), path));
        }
    }
    watchable
}

/// Directories a dbt project is searched to at most.
const MAX_DBT_DEPTH: usize = 16;
/// The largest `manifest.json` read (a large project's is tens of megabytes).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// The dbt files of `path` (see [`Docs::set_dbt`]) as (name, text), and the ones skipped with
/// why.
fn read_dbt(path: &Path) -> (DocFiles, Vec<DocWarning>) {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let shown = |p: &Path| p.display().to_string();
    let read = |file: &Path, files: &mut DocFiles, warnings: &mut Vec<DocWarning>| {
        let manifest = file.file_name().is_some_and(|n| n.eq_ignore_ascii_case("manifest.json"));
        let (limit, what) = if manifest {
            (MAX_MANIFEST_BYTES, "for a dbt manifest")
        } else {
            (MAX_DOC_BYTES, "for one docs file")
        };
        match schemascope_sources::file::read_string(file, limit, what) {
            Ok(text) => files.push((format!("{DBT_PREFIX}{}", shown(file)), text)),
            Err(error) => warnings.push(skipped(&shown(file), format!("{error}; skipped"))),
        }
    };
    if !path.is_dir() {
        if path.exists() {
            read(path, &mut files, &mut warnings);
        } else {
            warnings.push(skipped(&shown(path), "no such dbt project or file".into()));
        }
        return (files, warnings);
    }
    let manifest = path.join("target").join("manifest.json");
    if manifest.is_file() {
        read(&manifest, &mut files, &mut warnings);
        return (files, warnings);
    }
    // The properties files under `models/` (and the seeds' and snapshots'), breadth first,
    // without following links to directories (a loop would never end).
    let mut todo: Vec<(PathBuf, usize)> = ["models", "seeds", "snapshots"]
        .iter()
        .map(|d| (path.join(d), 1))
        .filter(|(d, _)| d.is_dir())
        .collect();
    // No project layout: the directory given is one of models (`--dbt project/models`).
    if todo.is_empty() {
        todo.push((path.to_path_buf(), 1));
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut seen = 0usize;
    while let Some((dir, depth)) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_DIR_ENTRIES || found.len() >= MAX_DOC_FILES {
                warnings.push(skipped(&shown(path), format!("more than {MAX_DIR_ENTRIES} entries or {MAX_DOC_FILES} files; the rest were not looked at")));
                todo.clear();
                break;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let entry_path = entry.path();
            if kind.is_dir() && depth < MAX_DBT_DEPTH {
                todo.push((entry_path, depth + 1));
            } else if !kind.is_dir()
                && is_dbt_file(&entry_path.to_string_lossy())
                && !entry_path.to_string_lossy().to_ascii_lowercase().ends_with(".json")
            {
                found.push(entry_path);
            }
        }
    }
    found.sort();
    let mut total = 0u64;
    for file in found {
        if total > MAX_DOCS_TOTAL_BYTES {
            warnings.push(skipped(
                &shown(&file),
                "past the 64 MiB read from one dbt project; skipped".into(),
            ));
            continue;
        }
        let before = files.len();
        read(&file, &mut files, &mut warnings);
        total += files[before..].iter().map(|(_, t)| t.len() as u64).sum::<u64>();
    }
    (files, warnings)
}

/// The directories a dbt path's docs are in, for the watch (see [`read_dbt`]).
fn read_dbt_dirs(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return path.parent().map(Path::to_path_buf).into_iter().collect();
    }
    let mut dirs = vec![path.to_path_buf(), path.join("target")];
    dirs.extend(["models", "seeds", "snapshots"].iter().map(|d| path.join(d)));
    dirs
}

/// A dbt path that gave nothing, as a warning naming it.
fn skipped_file(name: &str, message: String) -> DocWarning {
    DocWarning { file: name.to_string(), line: 0, message, file_skipped: false }
}

/// The names of the sources served.
fn docs_sources_names(docs: &Docs) -> Vec<String> {
    docs.sources.names()
}

/// The recorded examples file as warnings name it.
fn recorded_name(path: Option<&Path>) -> String {
    path.map(|p| p.display().to_string()).unwrap_or_default()
}

/// Whether a change of the docs entry `entry` is one its directory's watch is told of: a
/// regular file (or anything else the reader skips) with no other hard link.
fn watched_as_read(entry: &std::fs::DirEntry) -> bool {
    use std::os::unix::fs::MetadataExt;
    match entry.metadata() {
        Ok(meta) if meta.file_type().is_symlink() => false,
        Ok(meta) => !meta.is_file() || meta.nlink() == 1,
        Err(_) => false,
    }
}

/// The index of `source`, built now or reused when nothing it depends on changed: with no
/// reload, no new settings and a docs directory its watch says is unchanged, it is reused
/// without reading anything; otherwise the docs are read and fingerprinted again.
fn index(docs: &Docs, source: &Source) -> Result<BuiltIndex, ToolError> {
    let built = index_by_words(docs, source)?;
    if built.awaits_meaning { add_meaning(docs, source, built) } else { Ok(built) }
}

/// Where a warning about the embedding model comes from.
const MODEL_WARNING: &str = "--embedding-model";

/// `built` ranking by meaning too, once the model has encoded every text of its index (waiting
/// at most the configured patience for that); until then by words, with a warning saying how
/// far the encoding is.
fn add_meaning(docs: &Docs, source: &Source, built: BuiltIndex) -> Result<BuiltIndex, ToolError> {
    let Some(model) = lock(&docs.encoder).clone() else {
        return Ok(BuiltIndex { awaits_meaning: false, ..built });
    };
    let patience = *lock(&docs.encoding_patience);
    let texts = built.index.encoded_texts();
    let readiness = model.prepare(&texts, patience);
    let mut warnings: Vec<DocWarning> =
        built.warnings.iter().filter(|w| w.file != MODEL_WARNING).cloned().collect();
    let note = |message: String| DocWarning {
        file: MODEL_WARNING.into(),
        line: 0,
        message,
        file_skipped: false,
    };
    let (index, awaits_meaning) = match readiness {
        Readiness::Ready => {
            let encoder: Arc<dyn Encoder> = model;
            let index = (*built.index).clone().with_encoder(encoder).map_err(|cancelled| {
                ToolError::Source(schemascope_sources::SourceError::Cancelled(cancelled))
            })?;
            (Arc::new(index), false)
        }
        Readiness::Encoding { done, total } => {
            warnings.push(note(format!(
                "the embedding model is still encoding this schema's docs and values ({done} of {total} texts): ranked by words until it is done"
            )));
            (built.index.clone(), true)
        }
        Readiness::Failed { missing } => {
            warnings.push(note(format!(
                "the embedding model could not encode {missing} of this schema's texts: ranked by words alone"
            )));
            (built.index.clone(), false)
        }
        Readiness::TooMany { texts } => {
            warnings.push(note(format!(
                "this schema's docs have {texts} texts, more than the {} the embedding model encodes: ranked by words alone",
                crate::embedding_model::MAX_ENCODED
            )));
            (built.index.clone(), false)
        }
    };
    let upgraded = BuiltIndex { index, awaits_meaning, warnings: warnings.into(), ..built };
    let mut indexes = lock(&docs.indexes);
    // Kept unless the index was rebuilt meanwhile (from other docs or settings).
    if indexes.get(source.name()).is_some_and(|b| b.fingerprint == upgraded.fingerprint) {
        indexes.insert(source.name().to_string(), BuiltIndex { reused: false, ..upgraded.clone() });
    }
    Ok(upgraded)
}

/// The index of `source` by words: reused while nothing it depends on changed, else built.
fn index_by_words(docs: &Docs, source: &Source) -> Result<BuiltIndex, ToolError> {
    let state = docs;
    let generation = docs.sources.generation();
    let settings = docs.settings.load(Ordering::SeqCst);
    if let Some(built) =
        lock(&state.indexes).get(source.name()).filter(|b| b.reusable(generation, settings))
    {
        return Ok(BuiltIndex { reused: true, ..built.clone() });
    }
    let dir = state.dir(source);
    let record_file = state.record_file();
    let dbt = lock(&state.dbt).get(source.name()).cloned();
    // Where dbt keeps its docs is listed before the watch starts, and read after.
    let dbt_dirs: Vec<PathBuf> = dbt.as_deref().map(read_dbt_dirs).unwrap_or_default();
    // Started before reading: a change made while the files are read is seen by the next call.
    let also: Vec<PathBuf> = dir
        .iter()
        .map(|d| d.join(EXAMPLES_DIR))
        .chain(record_file.as_deref().and_then(Path::parent).map(Path::to_path_buf))
        .chain(dbt_dirs)
        .collect();
    let watch = DirWatch::start(dir.as_deref(), &also);
    let DocsRead { mut files, mut skipped, watchable } =
        read_docs(dir.as_deref(), state.follow_links())?;
    if let Some(path) = dbt.as_deref() {
        // After the docs directory's files: its markdown docs come first.
        let (dbt_files, dbt_skipped) = read_dbt(path);
        if dbt_files.is_empty() && dbt_skipped.is_empty() {
            skipped.push(skipped_file(
                &path.display().to_string(),
                "no dbt docs there: --dbt takes a dbt project (its models/*.yml, or target/manifest.json), a manifest.json or a schema.yml".into(),
            ));
        }
        files.extend(dbt_files);
        skipped.extend(dbt_skipped);
    }
    let recorded = match record_file.as_deref().map(read_recorded).transpose() {
        Ok(text) => text.flatten().map(|text| (recorded_name(record_file.as_deref()), text)),
        Err(error) => {
            skipped.push(DocWarning {
                file: recorded_name(record_file.as_deref()),
                line: 0,
                message: error.to_string(),
                file_skipped: true,
            });
            None
        }
    };
    let watch = watch.filter(|_| watchable).map(|w| Arc::new(Mutex::new(w)));
    let config = state.config();
    let encoder = lock(&state.encoder).clone();
    // What was skipped and why is part of the input: a file that becomes readable (or stops
    // being) rebuilds the index and its warnings.
    let skipped_text = skipped.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    let files_print = input_fingerprint(&Catalog::default(), &files)
        ^ input_fingerprint(
            &Catalog::default(),
            &[
                ("config", format!("{config:?}")),
                ("encoder", format!("{encoder:?}")),
                ("skipped", skipped_text),
                ("recorded", format!("{recorded:?}")),
            ],
        );
    let previous = lock(&state.indexes).get(source.name()).cloned();
    // No reload since and the same docs: nothing changed, skip fingerprinting the catalog.
    if let Some(built) =
        previous.as_ref().filter(|b| b.generation == generation && b.files == files_print)
    {
        let built = BuiltIndex { settings, watch, reused: true, ..built.clone() };
        {
            let mut indexes = lock(&state.indexes);
            indexes.insert(source.name().to_string(), built.clone());
        }
        return Ok(built);
    }
    let catalog = catalog(source)?;
    let fingerprint = input_fingerprint(&catalog, &files) ^ files_print;
    if let Some(built) = previous.filter(|b| b.fingerprint == fingerprint) {
        let built =
            BuiltIndex { generation, files: files_print, settings, watch, reused: true, ..built };
        {
            let mut indexes = lock(&state.indexes);
            indexes.insert(source.name().to_string(), built.clone());
        }
        return Ok(built);
    }
    let mut notes = ColumnNotes::new();
    for table in &catalog.tables {
        let Some(collection) = source.collection(&table.name) else { continue };
        let profile = match collection.profile_ready() {
            Some(profile) => Some(profile),
            None if (collection.len() as u64) <= NOTE_ROWS => Some(collection.profile()),
            None => None,
        };
        if let Some(profile) = profile {
            column_notes(table, profile, &mut notes);
        }
    }
    let pairs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let (mut docs, parsed) = parse_docs(&pairs);
    let mut warnings = skipped;
    warnings.extend(parsed);
    if let Some((name, text)) = &recorded {
        let (examples, problems) = parse_examples(name, text);
        docs.examples.extend(examples);
        warnings.extend(problems);
    }
    let values = Arc::new(crate::column_values::value_index(source));
    // Only the examples that still run on the database are shown to a model, read as
    // validate_query reads queries (a metric's name is its SQL).
    let semantic = docs.semantic.as_ref().map(|file| file.resolve(&catalog).0);
    let (examples, stale) = crate::verified_examples::checked_examples(
        source,
        &catalog,
        &values,
        semantic.as_ref(),
        &docs_sources_names(state),
        std::mem::take(&mut docs.examples),
    );
    docs.examples = examples;
    warnings.extend(stale);
    let (index, more) = SchemaIndex::build(catalog, docs, &notes, config);
    let index = index.with_values(values);
    warnings.extend(more);
    // A call cancelled while it built (a profile or a column's values cut short) has an index
    // missing what it did not read: it is not kept for later calls, which build it again.
    schemascope_core::cancel::current().check().map_err(|cancelled| {
        ToolError::Source(schemascope_sources::SourceError::Cancelled(cancelled))
    })?;
    let built = BuiltIndex {
        generation,
        files: files_print,
        fingerprint,
        settings,
        watch,
        index: Arc::new(index),
        warnings: warnings.into(),
        reused: false,
        awaits_meaning: encoder.is_some(),
    };
    {
        let mut indexes = lock(&state.indexes);
        indexes.insert(source.name().to_string(), built.clone());
    }
    Ok(built)
}

impl BuiltIndex {
    /// True when nothing this index depends on can have changed: no reload, no new settings,
    /// and a docs directory its watch says is unchanged (nothing read to know it).
    fn reusable(&self, generation: u64, settings: u64) -> bool {
        self.generation == generation
            && self.settings == settings
            && self.watch.as_ref().is_some_and(|w| lock(w).unchanged())
    }
}

/// True when source `name`'s index (the only source's when `None`) is built and can be reused
/// without reading anything: a search on it needs no I/O.
pub(crate) fn index_is_ready(docs: &Docs, name: Option<&str>) -> bool {
    let Ok(source) = docs.sources.get(name) else { return false };
    let generation = docs.sources.generation();
    let settings = docs.settings.load(Ordering::SeqCst);
    lock(&docs.indexes).get(source.name()).is_some_and(|b| b.reusable(generation, settings))
}

fn warnings_json(warnings: &[DocWarning]) -> Value {
    json!(warnings.iter().map(ToString::to_string).collect::<Vec<_>>())
}

fn question(text: &str) -> Result<&str, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ToolError::InvalidParams(
            "`question` is empty; ask in words, e.g. \"total sales per country\"".into(),
        ));
    }
    Ok(trimmed)
}

/// The schema context for `question` (what get_schema_context returns) and whether the index
/// was reused from an earlier call.
/// The token count is estimated (within a few tokens), which keeps the pipeline's overhead low.
pub(crate) fn context_for(
    docs: &Docs,
    source: &Source,
    question: &str,
    max_tokens: Option<usize>,
) -> Result<(schemascope_docs::SchemaContext, bool), ToolError> {
    let built = index(docs, source)?;
    let retrieval = built.index.retrieve_within(question, None, max_tokens);
    Ok((built.index.render_counted(&retrieval, max_tokens, false), built.reused))
}

/// The value index of `source` (built with its docs index, and rebuilt with it), when its
/// docs index can be built.
pub(crate) fn value_index_of(
    docs: &Docs,
    source: &Source,
) -> Option<Arc<schemascope_core::value_index::ValueIndex>> {
    index(docs, source).ok().and_then(|built| built.index.values().cloned())
}

/// The retrieval index of `source` as search_schema_docs uses it (built now or reused): for
/// comparing its chunks and their terms with another engine's.
pub fn schema_index(docs: &Docs, source: &Source) -> Result<Arc<SchemaIndex>, ToolError> {
    index(docs, source).map(|built| built.index)
}

/// search_schema_docs: the doc chunks most relevant to a question, ranked by BM25.
pub fn search_schema_docs(docs: &Docs, params: SearchSchemaDocsParams) -> ToolResult {
    envelope(run_search(docs, &params))
}

fn run_search(docs: &Docs, params: &SearchSchemaDocsParams) -> Result<ToolResult, ToolError> {
    let source = docs.sources.get(params.source.as_deref())?;
    let question = question(&params.question)?;
    let started = Instant::now();
    let built = index(docs, &source)?;
    let top_k = Ceiling::TopK
        .admit_usize(params.top_k, built.index.config().top_k)?
        .clamp(1, schemascope_docs::retrieve::MAX_TOP_K);
    let searched = Instant::now();
    let hits = built.index.search(question, top_k);
    let search_ms = figure::millis(searched.elapsed());
    let chunks: Vec<Value> = hits
        .iter()
        .map(|h| {
            let mut chunk = json!({
                "table": h.chunk.table,
                "column": h.chunk.column,
                "kind": h.chunk.kind,
                "score": figure::stat_json(h.score),
                "relevance": figure::stat_json(h.relevance),
                "tokens": h.chunk.tokens,
                "relatedTables": h.chunk.related_tables,
                "content": h.chunk.content,
            });
            if let Some(similarity) = h.similarity {
                chunk["similarity"] = figure::stat_json(similarity);
            }
            chunk
        })
        .collect();
    let mut tables: Vec<&str> = Vec::new();
    for h in &hits {
        if !tables.contains(&h.chunk.table.as_str()) {
            tables.push(&h.chunk.table);
        }
    }
    let avg = if hits.is_empty() {
        0.0
    } else {
        hits.iter().map(|h| h.relevance).sum::<f64>() / hits.len() as f64
    };
    let message = if hits.is_empty() {
        format!(
            "No documentation of `{}` matches the question; get_schema_context gives the full schema.",
            source.name()
        )
    } else {
        format!("{} chunk(s) from {} table(s): {}.", hits.len(), tables.len(), tables.join(", "))
    };
    // `json!` would copy the chunks through serde: they are moved in after.
    let mut data = json!({
            "source": source.name(),
            "question": question,
            "chunks": null,
            "metadata": {
                "chunksRetrieved": hits.len(),
                "tablesIncluded": tables,
                "avgRelevance": figure::stat_json(avg),
                "searchMs": search_ms,
                "totalMs": figure::millis(started.elapsed()),
                "indexedChunks": built.index.chunks().len(),
                "semantic": built.index.is_semantic(),
            },
            "warnings": warnings_json(&built.warnings),
    });
    data["chunks"] = Value::from(chunks);
    Ok(ToolResult::ok(message, data))
}

/// get_schema_context: the schema an LLM should get for a question — full or focused — within a
/// token budget, with what retrieval did.
pub fn get_schema_context(docs: &Docs, params: GetSchemaContextParams) -> ToolResult {
    envelope(run_context(docs, &params))
}

fn run_context(docs: &Docs, params: &GetSchemaContextParams) -> Result<ToolResult, ToolError> {
    let source = docs.sources.get(params.source.as_deref())?;
    let question = question(&params.question)?;
    let started = Instant::now();
    Ceiling::TopK.check_usize(params.top_k)?;
    let max_tokens = Ceiling::MaxTokens.check_usize(params.max_tokens)?;
    let built = index(docs, &source)?;
    let top_k = Some(Ceiling::TopK.admit_usize(params.top_k, built.index.config().top_k)?);
    let retrieved = Instant::now();
    let retrieval = built.index.retrieve_within(question, top_k, max_tokens);
    let retrieval_ms = figure::millis(retrieved.elapsed());
    let context = built.index.render(&retrieval, max_tokens);
    let mut metadata = json!(context.metadata);
    metadata["retrievalMs"] = json!(retrieval_ms);
    metadata["totalMs"] = json!(figure::millis(started.elapsed()));
    let strategy = metadata["strategy"].as_str().unwrap_or("full").to_string();
    let message = format!(
        "{} schema context for `{}`: {} tokens (full schema {}), {} table(s).",
        if strategy == "focused" { "Focused" } else { "Full" },
        source.name(),
        context.tokens,
        context.full_schema_tokens,
        context.metadata.tables_included.len()
    );
    Ok(ToolResult::ok(
        message,
        json!({
            "source": source.name(),
            "question": question,
            "context": context.text,
            "tokens": context.tokens,
            "fullSchemaTokens": context.full_schema_tokens,
            "metadata": metadata,
            "omittedTables": context.omitted_tables,
            "omittedChunks": context.omitted_chunks,
            "compactTables": context.compact_tables,
            "undocumentedTables": context.undocumented_tables,
            "omittedSections": context.omitted_sections,
            "warnings": warnings_json(&built.warnings),
        }),
    ))
}

/// `docs generate`: writes a starting set of docs for a SQL source. A file that was edited since
/// it was generated is kept unless `force` is set.
pub fn generate_schema_docs(docs: &Docs, params: GenerateDocsParams) -> ToolResult {
    envelope(run_generate(docs, &params))
}

/// Writes `text` to `path` through a fresh file beside it and a rename: a reader never sees half
/// a file, and neither a link nor a FIFO left at either name is written through (the partial
/// name is removed first and created anew; the rename replaces a link rather than following it).
fn write_beside_then_rename(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let partial = path.with_extension("md.partial");
    match std::fs::remove_file(&partial) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut out = std::fs::OpenOptions::new().write(true).create_new(true).open(&partial)?;
    out.write_all(text.as_bytes())?;
    drop(out);
    std::fs::rename(&partial, path)
}

fn run_generate(docs: &Docs, params: &GenerateDocsParams) -> Result<ToolResult, ToolError> {
    let source = docs.sources.get(params.source.as_deref())?;
    let catalog = catalog(&source)?;
    let dir = match &params.dir {
        Some(dir) => PathBuf::from(dir),
        None => docs
            .dir(&source)
            .ok_or_else(|| ToolError::InvalidParams("give the docs directory to write".into()))?,
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| ToolError::InvalidParams(format!("cannot create {}: {e}", dir.display())))?;
    let db = source.database.clone();
    let mut examples: HashMap<String, Vec<Value>> = HashMap::new();
    for table in &catalog.tables {
        let collection = source.collection(&table.name);
        let rows = match (&db, collection) {
            // A collection held in memory: its first items, as sample_data shows them.
            (_, Some(c)) if c.table().is_none() => {
                c.items().take(EXAMPLE_ROWS).filter_map(|item| c.parse_item(&item).ok()).collect()
            }
            // A table that cannot be read (a SQLite view calling a function of the application
            // that made the file) has no examples; its doc says why from the catalog.
            (Some(db), _) => rows::first_rows(&**db, table, EXAMPLE_ROWS).unwrap_or_default(),
            (None, _) => Vec::new(),
        };
        examples.insert(table.name.clone(), rows);
    }
    let files = generate_docs(&catalog, source.name(), |table| TableData {
        // A profile that failed counts no rows: the docs say nothing of them rather than 0.
        profile: source
            .collection(&table.name)
            .filter(|c| c.profile_error().is_none())
            .map(|c| c.profile()),
        examples: examples.get(&table.name).map_or(&[], Vec::as_slice),
    });
    let confined = ConfinedDir::new(&dir, docs.follow_links()).map_err(|e| {
        ToolError::InvalidParams(format!("cannot read docs directory {}: {e}", dir.display()))
    })?;
    let (mut written, mut kept, mut unchanged) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        // Generated names are sanitised table names; a separator would still write elsewhere.
        if Path::new(&file.name).file_name() != Some(std::ffi::OsStr::new(&file.name)) {
            return Err(ToolError::InvalidParams(format!(
                "refusing to write `{}`: not a plain file name",
                file.name
            )));
        }
        let path = dir.join(&file.name);
        // What is there is read as any doc is (a regular file inside the directory, bounded);
        // anything else — a FIFO, a link out — is replaced, never read or written through.
        match confined.read_string(&path, MAX_DOC_BYTES, "for one docs file") {
            Ok(existing) if existing == file.text => unchanged.push(file.name.clone()),
            Ok(existing) if !params.force && !is_unedited(&existing) => {
                kept.push(file.name.clone())
            }
            // Too large or not text: not a file this command wrote, so someone's own.
            Err(FileError::TooLarge { .. } | FileError::NotText { .. }) if !params.force => {
                kept.push(file.name.clone())
            }
            _ => {
                write_beside_then_rename(&path, &file.text).map_err(|e| {
                    ToolError::InvalidParams(format!("cannot write {}: {e}", path.display()))
                })?;
                written.push(file.name.clone());
            }
        }
    }
    let mut message = format!(
        "Docs for `{}` in {}: {} written, {} unchanged",
        source.name(),
        dir.display(),
        written.len(),
        unchanged.len()
    );
    if kept.is_empty() {
        message.push('.');
    } else {
        message.push_str(&format!(
            ", {} kept because they were edited (use --force to overwrite): {}.",
            kept.len(),
            kept.join(", ")
        ));
    }
    Ok(ToolResult::ok(
        message,
        json!({"dir": dir, "written": written, "unchanged": unchanged, "keptEdited": kept}),
    ))
}
