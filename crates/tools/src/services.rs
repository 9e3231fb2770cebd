//! The services every surface holds: the sources, and one service per feature that owns its
//! state and depends on the sources one way. Surfaces (MCP, HTTP, CLI) hold a `Services` and
//! pass each tool the service it needs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use crate::asking::Asking;
use crate::graph_session::{GraphSessions, SessionSources};
use crate::live::LiveFeeds;
use crate::result::ToolError;
use crate::schema_docs::Docs;
use crate::sources::{REFRESH_DEBOUNCE, ServeHook, Sources};
use crate::toolsets::ChosenTools;

/// The sources and the services over them; cloning shares them.
#[derive(Debug, Clone)]
pub struct Services {
    /// The sources being served.
    pub sources: Arc<Sources>,
    /// Schema documentation and retrieval of the SQL sources.
    pub docs: Arc<Docs>,
    /// The graph sessions.
    pub graphs: Arc<GraphSessions>,
    /// The `ask` pipeline's LLM, trace file and metrics.
    pub asking: Arc<Asking>,
    /// The live feeds of AimDB sources.
    pub live: Arc<LiveFeeds>,
    /// Where writes to AimDB records are logged.
    pub writes: Arc<crate::record_write::WriteLog>,
    /// The byte cap on every tool result (see `cap.rs`).
    max_result_bytes: Arc<AtomicUsize>,
    /// list_sources' last answer, given again while it holds.
    pub(crate) listing: Arc<crate::list_sources::ListingMemo>,
    /// The tools the operator chose to offer (all those the sources can use when `None`).
    chosen_tools: Arc<RwLock<Option<ChosenTools>>>,
}

impl Default for Services {
    fn default() -> Self {
        Self::new()
    }
}

impl Services {
    /// No sources yet; every service empty.
    pub fn new() -> Self {
        let sources = Sources::new();
        let graphs = Arc::new(GraphSessions::new(Arc::new(SessionSources(sources.clone()))));
        let live = LiveFeeds::new(sources.clone());
        // The services that keep state about sources follow every change of one, in this order:
        // a graph's session writes its results into the new data before anything else sees it.
        sources.add_hook(Arc::downgrade(&graphs) as Weak<dyn ServeHook>);
        sources.add_hook(Arc::downgrade(&live) as Weak<dyn ServeHook>);
        Self {
            docs: Arc::new(Docs::new(sources.clone())),
            graphs,
            asking: Arc::new(Asking::default()),
            live,
            writes: Arc::default(),
            max_result_bytes: Arc::new(AtomicUsize::new(crate::cap::DEFAULT_MAX_RESULT_BYTES)),
            listing: Arc::new(crate::list_sources::ListingMemo::new(&sources)),
            chosen_tools: Arc::new(RwLock::new(None)),
            sources,
        }
    }

    /// The byte cap on every tool result (default [`crate::cap::DEFAULT_MAX_RESULT_BYTES`]).
    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes.load(Ordering::Relaxed)
    }

    /// Sets the byte cap on every tool result.
    pub fn set_max_result_bytes(&self, bytes: usize) {
        self.max_result_bytes.store(bytes, Ordering::Relaxed);
    }

    /// The tools the operator chose to offer, if they chose (`serve --tools`, `tools = [...]`).
    pub fn chosen_tools(&self) -> Option<ChosenTools> {
        schemascope_core::sync::read(&self.chosen_tools).clone()
    }

    /// Whether tool `name` is offered by the operator's choice (always, when they chose none).
    pub fn is_chosen(&self, name: &str) -> bool {
        schemascope_core::sync::read(&self.chosen_tools).as_ref().is_none_or(|c| c.contains(name))
    }

    /// Offers only the tools `chosen` names (every tool the sources can use when `None`): the
    /// others are not listed, and a call to one is refused naming the setting.
    pub fn choose_tools(&self, chosen: Option<ChosenTools>) {
        *schemascope_core::sync::write(&self.chosen_tools) = chosen;
    }

    /// Starts watching every file-backed source (changes reload it after [`REFRESH_DEBOUNCE`]) and
    /// following every AimDB source's records by subscription.
    pub fn watch(&self) -> Result<(), ToolError> {
        self.watch_with(REFRESH_DEBOUNCE)
    }

    /// As [`Services::watch`], with a chosen debounce (also the longest an AimDB value waits
    /// before it is folded into its source).
    pub fn watch_with(&self, debounce: Duration) -> Result<(), ToolError> {
        self.live.follow(debounce);
        self.sources.watch_files(debounce)
    }
}
