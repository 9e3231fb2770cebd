//! The registry of named sources being served, and their live refresh.
//!
//! Sources are held as `Arc<Source>` and replaced whole on reload, so a tool call in flight keeps
//! the snapshot it started with and every cache (profiles live inside collections) is invalidated
//! by construction. A reload that fails keeps the previous data and records the error, so a file
//! caught half-written never empties a source.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use schemascope_core::sync::{lock, read, write};
use schemascope_sources::{FileWatcher, NoProgress, Progress, ReadMode, Source, SourceSpec, load, load_with};
use tokio::sync::broadcast;

use crate::cache::{AnswerCache, CacheKey};
use crate::graph_session::data::graph_collections;
use crate::graph_session::session::GraphSession;
use crate::graph_session::store::SessionStore;
use crate::result::{ToolError, ToolResult};
use crate::schema_docs::DocsState;

/// The debounce of live refresh (seed 000: one second).
pub const REFRESH_DEBOUNCE: Duration = Duration::from_secs(1);

/// Named sources, shared by every surface.
pub struct Registry {
    sources: RwLock<BTreeMap<String, Arc<Source>>>,
    reload_errors: Mutex<BTreeMap<String, String>>,
    changes: broadcast::Sender<String>,
    watcher: Mutex<Option<FileWatcher>>,
    cache: AnswerCache,
    generation: AtomicU64,
    docs: DocsState,
    metrics: crate::metrics::Metrics,
    llm: Mutex<Option<schemascope_agent::llm::LlmConfig>>,
    trace_file: Mutex<Option<PathBuf>>,
    graph_sessions: Mutex<BTreeMap<String, Arc<GraphSession>>>,
    session_store: Mutex<Option<Arc<SessionStore>>>,
    /// Subscriptions following AimDB sources (see `live.rs`).
    pub(crate) feeds: Mutex<Vec<(String, schemascope_sources::aimdb::Feed)>>,
    /// The batch of AimDB feeds (the debounce `watch_with` was given), in milliseconds.
    pub(crate) live_batch_ms: AtomicU64,
    /// Serialises read-modify-write updates of AimDB sources, so no batch of values is lost.
    pub(crate) live_update: Mutex<()>,
    /// The byte cap on every tool result the surfaces send (see `cap.rs`).
    max_result_bytes: AtomicU64,
    /// Sources that failed to load while serving, retried (see `failing.rs`).
    pub(crate) failed: Mutex<BTreeMap<String, crate::failing::FailedSource>>,
    /// The first retry wait of a failed source, in milliseconds.
    pub(crate) retry_first_ms: AtomicU64,
    /// Whether the retry thread runs.
    pub(crate) retrying: AtomicBool,
    /// Whether AimDB sources are followed (so one that loads late is followed too).
    pub(crate) following: AtomicBool,
    /// Live AimDB sources whose connection is lost, with when it was lost (see `live.rs`).
    pub(crate) live_lost: Mutex<BTreeMap<String, chrono::DateTime<chrono::Utc>>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("sources", &self.names()).finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Arc<Self> {
        let (changes, _) = broadcast::channel(64);
        Arc::new(Self {
            sources: RwLock::new(BTreeMap::new()),
            reload_errors: Mutex::new(BTreeMap::new()),
            changes,
            watcher: Mutex::new(None),
            cache: AnswerCache::default(),
            generation: AtomicU64::new(0),
            docs: DocsState::default(),
            metrics: crate::metrics::Metrics::default(),
            llm: Mutex::new(None),
            trace_file: Mutex::new(None),
            graph_sessions: Mutex::new(BTreeMap::new()),
            session_store: Mutex::new(None),
            feeds: Mutex::new(Vec::new()),
            live_update: Mutex::new(()),
            live_batch_ms: AtomicU64::new(u64::try_from(REFRESH_DEBOUNCE.as_millis()).unwrap_or(1000)),
            max_result_bytes: AtomicU64::new(crate::cap::DEFAULT_MAX_RESULT_BYTES as u64),
            failed: Mutex::new(BTreeMap::new()),
            retry_first_ms: AtomicU64::new(u64::try_from(crate::failing::RETRY_FIRST.as_millis()).unwrap_or(1000)),
            retrying: AtomicBool::new(false),
            following: AtomicBool::new(false),
            live_lost: Mutex::new(BTreeMap::new()),
        })
    }

    /// Loads every spec; fails on the first that cannot be loaded, or on a repeated name.
    pub fn load(&self, specs: &[SourceSpec], progress: &dyn Progress) -> Result<(), ToolError> {
        self.load_with(specs, progress, ReadMode::COPY)
    }

    /// [`Registry::load`], bringing files into memory as `mode` says ([`ReadMode::map`] only for
    /// a registry that answers and is dropped, never for one that serves and watches).
    pub fn load_with(&self, specs: &[SourceSpec], progress: &dyn Progress, mode: ReadMode) -> Result<(), ToolError> {
        for spec in specs {
            if read(&self.sources).contains_key(&spec.name) {
                return Err(ToolError::InvalidParams(format!("two sources are named `{}`; name them apart with NAME=PATH", spec.name)));
            }
            let source = load_with(spec, progress, mode)?;
            self.insert(source);
        }
        Ok(())
    }

    /// Adds or replaces a source and tells subscribers. A graph with a live session gets the
    /// session's algorithm results written into it again.
    pub fn insert(&self, source: Source) {
        let source = Arc::new(source);
        let session = lock(&self.graph_sessions).get(source.name()).cloned();
        let served = match session {
            Some(session) => session.rebase(source.clone()).unwrap_or_else(|error| {
                tracing::warn!(source = source.name(), %error, "the reloaded source no longer fits its graph session; serving it as loaded");
                source
            }),
            None => source,
        };
        let name = served.name().to_string();
        self.put(served);
        self.restore_saved_session(&name);
    }

    /// Opens the saved session of graph `name`, if the session file holds one and it is not
    /// open yet, so the algorithm results it restores are served to every tool from the start
    /// (describe_property found them only after a graph tool had opened the session).
    fn restore_saved_session(&self, name: &str) {
        let Some(store) = lock(&self.session_store).clone() else { return };
        if lock(&self.graph_sessions).contains_key(name) || store.last_saved(name).is_none() {
            return;
        }
        let is_graph = read(&self.sources).get(name).is_some_and(|s| graph_collections(s).is_ok());
        if is_graph && let Err(error) = self.graph_session(Some(name)) {
            tracing::warn!(source = name, %error, "the saved graph session could not be restored; it opens on first use");
        }
    }

    /// Serves `source` as it is and tells subscribers.
    fn put(&self, source: Arc<Source>) {
        let name = source.name().to_string();
        write(&self.sources).insert(name.clone(), source);
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.cache.clear();
        // Nobody listening is fine.
        let _ = self.changes.send(name);
    }

    /// The byte cap on every tool result (default [`crate::cap::DEFAULT_MAX_RESULT_BYTES`]).
    pub fn max_result_bytes(&self) -> usize {
        usize::try_from(self.max_result_bytes.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    /// Sets the byte cap on every tool result (4 KiB at least).
    pub fn set_max_result_bytes(&self, bytes: usize) {
        self.max_result_bytes.store(bytes as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// Saves graph sessions to the SQLite file at `path` (created if missing); without it
    /// sessions live in memory only. Set it before the first graph tool call.
    pub fn set_session_file(&self, path: &Path) -> Result<(), ToolError> {
        let store = SessionStore::open(path)?;
        *lock(&self.session_store) = Some(Arc::new(store));
        for name in self.names() {
            self.restore_saved_session(&name);
        }
        Ok(())
    }

    /// The live session of a graph source (the one named, else the only graph), opened on
    /// first use with its saved state restored.
    pub fn graph_session(&self, name: Option<&str>) -> Result<Arc<GraphSession>, ToolError> {
        let source = match name {
            Some(_) => self.get(name)?,
            None => {
                let graphs: Vec<Arc<Source>> = self.sources().into_iter().filter(|s| graph_collections(s).is_ok()).collect();
                match graphs.as_slice() {
                    [only] => only.clone(),
                    [] => {
                        return Err(ToolError::UnknownSource(format!(
                            "no graph source is served (sources: {}); graph tools need a graph file",
                            self.names().join(", ")
                        )));
                    }
                    _ => {
                        let names: Vec<&str> = graphs.iter().map(|s| s.name()).collect();
                        return Err(ToolError::UnknownSource(format!("several graphs are served; name one with `source`: {}", names.join(", "))));
                    }
                }
            }
        };
        let mut sessions = lock(&self.graph_sessions);
        if let Some(session) = sessions.get(source.name()) {
            return Ok(session.clone());
        }
        let store = lock(&self.session_store).clone();
        let session = Arc::new(GraphSession::open(source.clone(), store)?);
        for note in session.restore_notes() {
            tracing::warn!(source = source.name(), note, "restoring the graph session");
        }
        sessions.insert(source.name().to_string(), session.clone());
        drop(sessions);
        let served = session.data().source.clone();
        if !Arc::ptr_eq(&served, &source) {
            self.put(served);
        }
        Ok(session)
    }

    /// Serves the source a session change produced (new algorithm results).
    pub(crate) fn serve_session_source(&self, source: Arc<Source>) {
        self.put(source);
    }

    /// Docs directories, retrieval configuration and indexes of the SQL sources.
    pub fn docs(&self) -> &DocsState {
        &self.docs
    }

    /// Counts every change of any source: equal values mean nothing was reloaded in between.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The pipeline metrics.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Sets the LLM the `ask` pipeline calls (else it is configured from the environment).
    pub fn set_llm(&self, config: Option<schemascope_agent::llm::LlmConfig>) {
        {
            let mut llm = lock(&self.llm);
            *llm = config;
        }
    }

    /// The LLM configuration: the one set, else from the environment.
    pub fn llm(&self) -> Result<schemascope_agent::llm::LlmConfig, ToolError> {
        if let Some(config) = lock(&self.llm).clone() {
            return Ok(config);
        }
        schemascope_agent::llm::LlmConfig::from_env(|name| std::env::var(name).ok()).map_err(|e| ToolError::InvalidParams(e.to_string()))
    }

    /// Appends every `ask` run's trace to `path`, one JSON object per line.
    pub fn set_trace_file(&self, path: Option<PathBuf>) {
        {
            let mut file = lock(&self.trace_file);
            *file = path;
        }
    }

    /// Appends one line to the trace file, if one is set; a write failure is logged, not fatal.
    pub fn write_trace(&self, line: &serde_json::Value) {
        let Some(path) = lock(&self.trace_file).clone() else { return };
        // Opened without blocking and only as a regular file: a FIFO or device named as the
        // trace file must not stall or feed the pipeline.
        let written = schemascope_sources::file::open_append_regular(&path).map_err(|e| e.to_string()).and_then(|mut file| {
            use std::io::Write;
            writeln!(file, "{line}").map_err(|e| e.to_string())
        });
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "cannot write the trace file");
        }
    }

    /// Source names, sorted.
    pub fn names(&self) -> Vec<String> {
        read(&self.sources).keys().cloned().collect()
    }

    /// All sources, by name.
    pub fn sources(&self) -> Vec<Arc<Source>> {
        read(&self.sources).values().cloned().collect()
    }

    /// The source called `name`; with no name, the only source. A source that failed to load
    /// is an error naming the failure and the next retry.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Source>, ToolError> {
        let sources = read(&self.sources);
        let names = || sources.keys().cloned().collect::<Vec<_>>().join(", ");
        if let Some(failed) = name.and_then(|name| lock(&self.failed).get(name).cloned()) {
            return Err(failed.tool_error());
        }
        if name.is_none() && sources.is_empty() {
            let failed = lock(&self.failed);
            match failed.len() {
                0 => {}
                1 => {
                    return Err(failed
                        .values()
                        .next()
                        .map(|f| f.tool_error())
                        .unwrap_or_else(|| ToolError::UnknownSource("no sources are loaded".into())));
                }
                _ => {
                    let listed: Vec<String> = failed.values().map(|f| format!("`{}` ({})", f.spec.name, f.error)).collect();
                    return Err(ToolError::SourceUnavailable(format!(
                        "No source is available; every source failed to load and is retried: {}",
                        listed.join("; ")
                    )));
                }
            }
        }
        match name {
            Some(name) => sources.get(name).cloned().ok_or_else(|| {
                let hint = schemascope_core::suggest::did_you_mean(name, sources.keys().map(String::as_str));
                ToolError::UnknownSource(format!("Unknown source `{name}`.{hint} Available sources: {}", names()))
            }),
            None if sources.len() == 1 => sources.values().next().cloned().ok_or_else(|| ToolError::UnknownSource("no sources are loaded".into())),
            None if sources.is_empty() => Err(ToolError::UnknownSource("no sources are loaded".into())),
            None => Err(ToolError::UnknownSource(format!("Several sources are served; name one with `source`: {}", names()))),
        }
    }

    /// The last reload error of a source, if its latest reload failed.
    pub fn reload_error(&self, name: &str) -> Option<String> {
        lock(&self.reload_errors).get(name).cloned()
    }

    /// Records (or with `None` clears) the refresh error shown for source `name`.
    pub(crate) fn set_reload_error(&self, name: &str, error: Option<String>) {
        {
            let mut errors = lock(&self.reload_errors);
            match error {
                Some(error) => errors.insert(name.to_string(), error),
                None => errors.remove(name),
            };
        }
        // Answers say whether the data is stale: cached ones would keep saying it was current.
        self.cache.clear();
    }

    /// Reloads a source from its file. On failure the previous data stays and the error is kept.
    /// A source that failed to load is tried again (see [`crate::failing`]).
    pub fn reload(self: &Arc<Self>, name: &str) -> Result<(), ToolError> {
        if self.failed_source(name).is_some() {
            return self.retry_failed(name);
        }
        let current = self.get(Some(name))?;
        match load(&current.spec, &NoProgress) {
            Ok(source) => {
                lock(&self.reload_errors).remove(name);
                self.insert(source);
                Ok(())
            }
            Err(e) => {
                self.set_reload_error(name, Some(format!("reload failed, previous data kept: {e}")));
                Err(e.into())
            }
        }
    }

    /// The cached answer for `key`, or the answer `compute` gives (cached when successful and no
    /// profile is pending).
    pub fn cached(&self, key: CacheKey, compute: impl FnOnce() -> ToolResult) -> ToolResult {
        let key = key.in_generation(self.generation.load(Ordering::SeqCst));
        if let Some(answer) = self.cache.get(&key) {
            return answer;
        }
        let answer = compute();
        // An answer made while a table's profile waits for its database (unreachable for now)
        // would keep the columns-only profile after the database is back.
        let pending = self.sources().iter().any(|s| s.collections.iter().any(|c| c.profile_pending()));
        if !pending {
            self.cache.put(key, &answer);
        }
        answer
    }

    /// Names of sources that reloaded, as they do.
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changes.subscribe()
    }

    /// Starts watching every file-backed source (changes reload it after [`REFRESH_DEBOUNCE`]) and
    /// following every AimDB source's records by subscription.
    pub fn watch(self: &Arc<Self>) -> Result<(), ToolError> {
        self.watch_with(REFRESH_DEBOUNCE)
    }

    /// As [`Registry::watch`], with a chosen debounce (also the longest an AimDB value waits
    /// before it is folded into its source).
    pub fn watch_with(self: &Arc<Self>, debounce: Duration) -> Result<(), ToolError> {
        self.follow_aimdb(debounce);
        let mut files: Vec<(PathBuf, String)> = self.sources().iter().filter_map(|s| s.path.clone().map(|p| (p, s.name().to_string()))).collect();
        // A failed file source is watched too, so it loads as soon as it appears or is fixed
        // (when its directory exists; the retry thread covers the rest).
        for failed in self.failed_sources() {
            let path = match &failed.spec.location {
                schemascope_sources::Location::File { path, .. } | schemascope_sources::Location::Sqlite(path) => path.clone(),
                _ => continue,
            };
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            if dir.is_dir() {
                files.push((path, failed.spec.name.clone()));
            }
        }
        if files.is_empty() {
            return Ok(());
        }
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        let weak = Arc::downgrade(self);
        let watcher = FileWatcher::new(&paths, debounce, move |changed: &Path| {
            let Some(registry) = weak.upgrade() else { return };
            for (path, name) in &files {
                if path == changed {
                    // A failed reload is recorded in the registry and shown by list_sources.
                    let _ = registry.reload(name);
                }
            }
        })?;
        *lock(&self.watcher) = Some(watcher);
        Ok(())
    }
}
