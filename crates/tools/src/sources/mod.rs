//! The sources being served, and what a change of one does.
//!
//! Sources are held as `Arc<Source>` and replaced whole on reload, so a tool call in flight keeps
//! the snapshot it started with and every cache (profiles live inside collections) is invalidated
//! by construction. A reload that fails keeps the previous data and records the error, so a file
//! caught half-written never empties a source.
//!
//! Every change takes one path, [`Sources::insert`]: the services that keep state about a source
//! (graph sessions, live feeds) see it first through their [`ServeHook`] — a graph session writes
//! its algorithm results into the new data — then it is served (the generation counts up, cached
//! answers are dropped, subscribers are told), then the hooks hear that it is served (a saved
//! session is restored, a live source that loaded late is followed). `Sources` knows those
//! services only as hooks, so they depend on it one way.

mod cache;
pub mod failing;
mod instances;
mod profiling;
mod watch;

pub use cache::CacheKey;
pub(crate) use instances::names_instance;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use schemascope_core::sync::{lock, read, write};
use schemascope_sources::{
    FileWatcher, NoProgress, ProfileStore, Progress, ReadMode, Source, SourceSpec, load_with,
};
use tokio::sync::broadcast;

use crate::result::{ToolError, ToolResult};
use cache::AnswerCache;

pub use watch::REFRESH_DEBOUNCE;

/// How long a call waits for database tables' profiles by default before it answers with what is
/// known ([`Sources::set_profile_patience`]).
pub const DEFAULT_PROFILE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// A service that keeps state about sources and must see each one before and after it is served.
pub trait ServeHook: Send + Sync {
    /// What to serve in place of `source` (by default `source` itself).
    fn serving(&self, source: Arc<Source>) -> Arc<Source> {
        source
    }

    /// Source `name` is now served.
    fn served(&self, _name: &str) {}

    /// Source `name` is no longer served (its configuration entry was removed): what is kept
    /// about it stops.
    fn removed(&self, _name: &str) {}
}

/// The named sources, shared by every service and surface.
pub struct Sources {
    sources: RwLock<BTreeMap<String, Arc<Source>>>,
    reload_errors: Mutex<BTreeMap<String, String>>,
    /// Why the configuration file's last edit was not applied, while it is not.
    config_error: Mutex<Option<String>>,
    changes: broadcast::Sender<String>,
    watcher: Mutex<Option<FileWatcher>>,
    cache: AnswerCache,
    generation: AtomicU64,
    hooks: RwLock<Vec<Weak<dyn ServeHook>>>,
    /// Sources that failed to load while serving, retried (see `failing.rs`).
    failed: Mutex<BTreeMap<String, failing::FailedSource>>,
    /// The first retry wait of a failed source, in milliseconds.
    retry_first_ms: AtomicU64,
    /// Whether the retry thread runs.
    retrying: AtomicBool,
    /// Sources whose last reload failed, with their failed attempts and next retry (see
    /// `failing.rs`): a file locked for a while is read again, not left stale until it changes.
    reload_retries: Mutex<BTreeMap<String, (u32, std::time::Instant)>>,
    /// Database tables' profiles computed in the background.
    profiles: Arc<profiling::ProfileQueue>,
    /// How long a call waits for tables' profiles before answering with what is known, in
    /// milliseconds; `u64::MAX` waits until they are done (one-shot commands).
    profile_patience_ms: AtomicU64,
    /// Where database tables' profiles are kept across restarts; `None`: not kept.
    profile_store: RwLock<Option<ProfileStore>>,
    /// The directories AimDB instances may be named in by their socket path (`instances.rs`).
    aimdb_dirs: RwLock<schemascope_sources::aimdb::discover::AllowedDirs>,
}

impl Drop for Sources {
    fn drop(&mut self) {
        // Nobody is left to show the profiles: a statement under way is cancelled.
        self.profiles.stop();
    }
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources").field("sources", &self.names()).finish()
    }
}

impl Sources {
    /// No sources yet.
    pub fn new() -> Arc<Self> {
        let (changes, _) = broadcast::channel(64);
        Arc::new(Self {
            sources: RwLock::new(BTreeMap::new()),
            reload_errors: Mutex::new(BTreeMap::new()),
            config_error: Mutex::new(None),
            changes,
            watcher: Mutex::new(None),
            cache: AnswerCache::default(),
            generation: AtomicU64::new(0),
            hooks: RwLock::new(Vec::new()),
            failed: Mutex::new(BTreeMap::new()),
            reload_retries: Mutex::new(BTreeMap::new()),
            retry_first_ms: AtomicU64::new(
                u64::try_from(failing::RETRY_FIRST.as_millis()).unwrap_or(1000),
            ),
            retrying: AtomicBool::new(false),
            profiles: Arc::default(),
            profile_patience_ms: AtomicU64::new(
                u64::try_from(DEFAULT_PROFILE_PATIENCE.as_millis()).unwrap_or(u64::MAX),
            ),
            profile_store: RwLock::new(None),
            aimdb_dirs: RwLock::default(),
        })
    }

    /// Keeps database tables' profiles in `store` across restarts, reused while a table's data
    /// is unchanged (see [`schemascope_sources::profile_store`]); `None` profiles every table
    /// anew. Applies to sources loaded from now on.
    pub fn set_profile_store(&self, store: Option<ProfileStore>) {
        *write(&self.profile_store) = store;
    }

    /// Loads one source as every path here does: files as `mode` says, database tables'
    /// profiles from the store while unchanged.
    fn load_spec(
        &self,
        spec: &SourceSpec,
        progress: &dyn Progress,
        mode: ReadMode,
    ) -> Result<Source, schemascope_sources::SourceError> {
        let store = read(&self.profile_store).clone();
        load_with(spec, progress, mode, store.as_ref())
    }

    /// How long a call waits for database tables' profiles before it answers with what is known
    /// (the catalog, row estimates, the columns profiled so far) while they go on in the
    /// background ([`DEFAULT_PROFILE_PATIENCE`] unless set); `None` (for one-shot commands) waits
    /// until they are done.
    pub fn set_profile_patience(&self, patience: Option<std::time::Duration>) {
        let ms = patience.map_or(u64::MAX, |p| u64::try_from(p.as_millis()).unwrap_or(u64::MAX));
        self.profile_patience_ms.store(ms, Ordering::SeqCst);
    }

    /// Has the profiles of those of `source`'s `collections` that are not ready computed in the
    /// background (smallest tables first) and waits for them at most the patience set by
    /// [`Self::set_profile_patience`].
    pub fn await_profiles(
        &self,
        source: &Source,
        collections: &[Arc<schemascope_core::Collection>],
    ) {
        // The source is announced when one of their profiles is done: a `schema://` resource
        // read while they were pending is then read again.
        let announced = Some((source.name().to_string(), self.changes.clone()));
        self.profiles.request(collections, announced);
        let ms = self.profile_patience_ms.load(Ordering::SeqCst);
        let patience = (ms != u64::MAX).then(|| std::time::Duration::from_millis(ms));
        self.profiles.wait(collections, patience);
    }

    /// Queues the profile of `collection` of `source` (a database table's) in the background,
    /// waiting for nothing: a call that answered from one column alone has the next ones read
    /// the table's finished columns.
    pub fn profile_in_background(
        &self,
        source: &Source,
        collection: &schemascope_core::Collection,
    ) {
        if let Some(shared) = source.collections.iter().find(|c| std::ptr::eq(&***c, collection)) {
            let announced = Some((source.name().to_string(), self.changes.clone()));
            self.profiles.request(std::slice::from_ref(shared), announced);
        }
    }

    /// The whole profile of `collection` of `source`: a database table's is waited for as
    /// [`Self::await_profiles`] does, and when it is still being computed the call is answered
    /// with how far it is rather than held until it is done.
    pub fn ready_profile<'c>(
        &self,
        source: &Source,
        collection: &'c schemascope_core::Collection,
    ) -> Result<&'c schemascope_core::CollectionProfile, ToolError> {
        if collection.table().is_none() {
            return Ok(collection.profile());
        }
        if collection.profile_ready().is_none()
            && let Some(shared) =
                source.collections.iter().find(|c| std::ptr::eq(&***c, collection))
        {
            self.await_profiles(source, std::slice::from_ref(shared));
        }
        collection.profile_ready().ok_or_else(|| {
            if collection.profile_state() == schemascope_core::ProfileState::Failed {
                let why = collection.profile_error().unwrap_or_default();
                return ToolError::ProfileFailed(format!(
                    "the profile of table `{}` could not be computed ({why}); describe_schema shows what is known of it",
                    collection.name()
                ));
            }
            let progress = collection.profile_progress();
            let done = progress.partial.as_ref().map_or(0, |p| p.properties().len());
            let columns = collection.table().map_or(0, |t| t.columns.len());
            let now = progress.step.map(|step| format!(", now {step}")).unwrap_or_default();
            let failed =
                collection.profile_error().map(|e| format!(" ({e})")).unwrap_or_default();
            ToolError::ProfilePending(format!(
                "the profile of table `{}` is not ready yet ({}: {done} of {columns} columns done{now}){failed}; describe_schema shows what is known meanwhile; try again in a moment",
                collection.name(),
                collection.profile_state().words()
            ))
        })
    }

    /// Has `hook` see every source before and after it is served (see [`ServeHook`]).
    pub fn add_hook(&self, hook: Weak<dyn ServeHook>) {
        write(&self.hooks).push(hook);
    }

    fn hooks(&self) -> Vec<Arc<dyn ServeHook>> {
        read(&self.hooks).iter().filter_map(Weak::upgrade).collect()
    }

    /// Loads every spec; fails on the first that cannot be loaded, or on a repeated name.
    pub fn load(&self, specs: &[SourceSpec], progress: &dyn Progress) -> Result<(), ToolError> {
        self.load_with(specs, progress, ReadMode::COPY)
    }

    /// [`Sources::load`], bringing files into memory as `mode` says ([`ReadMode::map`] only for
    /// sources that answer and are dropped, never for ones that are served and watched).
    pub fn load_with(
        &self,
        specs: &[SourceSpec],
        progress: &dyn Progress,
        mode: ReadMode,
    ) -> Result<(), ToolError> {
        for spec in specs {
            if read(&self.sources).contains_key(&spec.name) {
                return Err(ToolError::InvalidParams(format!(
                    "two sources are named `{}`; name them apart with NAME=PATH",
                    spec.name
                )));
            }
            let source = self.load_spec(spec, progress, mode)?;
            self.insert(source);
        }
        Ok(())
    }

    /// Serves `source`, new or in place of the one of its name: the one path every change takes
    /// (see the module's documentation).
    pub fn insert(&self, source: Source) {
        let hooks = self.hooks();
        let served = hooks.iter().fold(Arc::new(source), |source, hook| hook.serving(source));
        let name = served.name().to_string();
        self.put(served);
        for hook in &hooks {
            hook.served(&name);
        }
    }

    /// Serves `source` as it is, without the hooks (a graph session serving the data it wrote
    /// its results into), and tells subscribers.
    pub fn put(&self, source: Arc<Source>) {
        let name = source.name().to_string();
        write(&self.sources).insert(name.clone(), source);
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.cache.clear();
        // Nobody listening is fine.
        let _ = self.changes.send(name);
    }

    /// Stops serving source `name`, loaded or failed: it is gone from every list, the hooks
    /// hear of it, subscribers are told. Returns whether there was such a source.
    pub fn remove(&self, name: &str) -> bool {
        let served = write(&self.sources).remove(name).is_some();
        let failed = lock(&self.failed).remove(name).is_some();
        lock(&self.reload_errors).remove(name);
        lock(&self.reload_retries).remove(name);
        if !(served || failed) {
            return false;
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.cache.clear();
        for hook in self.hooks() {
            hook.removed(name);
        }
        let _ = self.changes.send(name.to_string());
        true
    }

    /// Counts every change of any source: equal values mean nothing was reloaded in between.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
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
    /// is an error naming the failure and the next retry. A name holding `/` is an AimDB
    /// instance's socket path, read if the operator allows its directory (`instances.rs`).
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Source>, ToolError> {
        if let Some(name) = name
            && instances::names_instance(name)
        {
            return self.instance(name);
        }
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
                    return Err(failed.values().next().map(|f| f.tool_error()).unwrap_or_else(
                        || ToolError::UnknownSource("no sources are loaded".into()),
                    ));
                }
                _ => {
                    let listed: Vec<String> = failed
                        .values()
                        .map(|f| format!("`{}` ({})", f.spec.name, f.error))
                        .collect();
                    return Err(ToolError::SourceUnavailable(format!(
                        "No source is available; every source failed to load and is retried: {}",
                        listed.join("; ")
                    )));
                }
            }
        }
        match name {
            Some(name) => sources.get(name).cloned().ok_or_else(|| {
                let hint = schemascope_core::suggest::did_you_mean(
                    name,
                    sources.keys().map(String::as_str),
                );
                ToolError::UnknownSource(format!(
                    "Unknown source `{name}`.{hint} Available sources: {}",
                    names()
                ))
            }),
            None if sources.len() == 1 => sources
                .values()
                .next()
                .cloned()
                .ok_or_else(|| ToolError::UnknownSource("no sources are loaded".into())),
            None if sources.is_empty() => {
                Err(ToolError::UnknownSource("no sources are loaded".into()))
            }
            None => Err(ToolError::UnknownSource(format!(
                "Several sources are served; name one with `source`: {}",
                names()
            ))),
        }
    }

    /// The last reload error of a source, if its latest reload failed.
    pub fn reload_error(&self, name: &str) -> Option<String> {
        lock(&self.reload_errors).get(name).cloned()
    }

    /// Records (or with `None` clears) why the configuration file's last edit was not applied,
    /// which `list_sources` shows beside the sources of the last good one.
    pub fn set_config_error(&self, error: Option<String>) {
        *lock(&self.config_error) = error;
        // Answers kept from before would not say it.
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.cache.clear();
    }

    /// Why the configuration file's last edit was not applied, if it was not.
    pub fn config_error(&self) -> Option<String> {
        lock(&self.config_error).clone()
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

    /// Reloads a source from its file. On failure the previous data stays, the error is kept and
    /// the reload is tried again with backoff until it succeeds. A source that failed to load is
    /// tried again (see [`failing`]).
    pub fn reload(self: &Arc<Self>, name: &str) -> Result<(), ToolError> {
        if self.failed_source(name).is_some() {
            return self.retry_failed(name);
        }
        let current = self.get(Some(name))?;
        match self.load_spec(&current.spec, &NoProgress, ReadMode::COPY) {
            Ok(source) => {
                lock(&self.reload_errors).remove(name);
                lock(&self.reload_retries).remove(name);
                self.insert(source);
                Ok(())
            }
            Err(e) => {
                self.set_reload_error(
                    name,
                    Some(format!("reload failed, previous data kept: {e}")),
                );
                self.retry_reload_later(name);
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
        let pending =
            self.sources().iter().any(|s| s.collections.iter().any(|c| c.profile_pending()));
        if !pending {
            self.cache.put(key, &answer);
        }
        answer
    }

    /// Names of sources that reloaded, as they do.
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changes.subscribe()
    }
}
