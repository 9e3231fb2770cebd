//! The graph sessions being served: one per graph source, opened on first use with its saved
//! state restored, kept in step with reloads of its data ([`GraphSessions::serving`] and
//! [`GraphSessions::served`], which the host calls on every change of a source).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemascope_core::sync::lock;
use schemascope_sources::Source;

use crate::data::graph_collections;
use crate::error::GraphSessionError;
use crate::session::GraphSession;
use crate::store::SessionStore;

/// The sources a host serves, as the graph sessions need them.
pub trait GraphSources: Send + Sync {
    /// The source called `name`; with no name, the only source.
    fn source(&self, name: Option<&str>) -> Result<Arc<Source>, GraphSessionError>;
    /// Every source served.
    fn all(&self) -> Vec<Arc<Source>>;
    /// Serves `source` as it is: a session's data with its algorithm results written in.
    fn serve(&self, source: Arc<Source>);
}

/// The live sessions of the graph sources, and the file they are saved to.
pub struct GraphSessions {
    sources: Arc<dyn GraphSources>,
    sessions: Mutex<BTreeMap<String, Arc<GraphSession>>>,
    store: Mutex<Option<Arc<SessionStore>>>,
}

impl std::fmt::Debug for GraphSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphSessions")
            .field("open", &lock(&self.sessions).keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl GraphSessions {
    /// What to serve in place of `source`, about to be served: a graph with a live session gets
    /// the session's algorithm results written into its new data (or, when they no longer fit,
    /// is served as loaded).
    pub fn serving(&self, source: Arc<Source>) -> Arc<Source> {
        let session = lock(&self.sessions).get(source.name()).cloned();
        let Some(session) = session else { return source };
        match session.rebase(source.clone()) {
            Ok(served) => served,
            Err(error) => {
                // The session's data is gone (the file is no longer a graph, or no longer fits
                // it): the session closes, so no graph tool answers from the old data; a graph
                // of that name served again opens a new one from its saved state.
                tracing::warn!(source = source.name(), %error, "the reloaded source no longer fits its graph session; the session is closed and the source served as loaded");
                lock(&self.sessions).remove(source.name());
                source
            }
        }
    }

    /// Source `name` is now served: its saved session, if any, is restored.
    pub fn served(&self, name: &str) {
        self.restore_saved_session(name);
    }

    /// No sessions yet, kept in memory only, over the host's `sources` (which must call
    /// [`GraphSessions::serving`] and [`GraphSessions::served`] on every change of a source).
    pub fn new(sources: Arc<dyn GraphSources>) -> Self {
        Self { sources, sessions: Mutex::new(BTreeMap::new()), store: Mutex::new(None) }
    }

    fn names(&self) -> Vec<String> {
        self.sources.all().iter().map(|s| s.name().to_string()).collect()
    }

    /// Saves graph sessions to the SQLite file at `path` (created if missing); without it
    /// sessions live in memory only. Set it before the first graph tool call.
    pub fn set_session_file(&self, path: &Path) -> Result<(), GraphSessionError> {
        let store = SessionStore::open(path)?;
        *lock(&self.store) = Some(Arc::new(store));
        for name in self.names() {
            self.restore_saved_session(&name);
        }
        Ok(())
    }

    /// Opens the saved session of graph `name`, if the session file holds one and it is not
    /// open yet, so the algorithm results it restores are served to every tool from the start
    /// (describe_property found them only after a graph tool had opened the session).
    fn restore_saved_session(&self, name: &str) {
        let Some(store) = lock(&self.store).clone() else { return };
        if lock(&self.sessions).contains_key(name) || store.last_saved(name).is_none() {
            return;
        }
        let is_graph = self.sources.source(Some(name)).is_ok_and(|s| graph_collections(&s).is_ok());
        if is_graph && let Err(error) = self.session(Some(name)) {
            tracing::warn!(source = name, %error, "the saved graph session could not be restored; it opens on first use");
        }
    }

    /// The live session of a graph source (the one named, else the only graph), opened on
    /// first use with its saved state restored.
    pub fn session(&self, name: Option<&str>) -> Result<Arc<GraphSession>, GraphSessionError> {
        let source = match name {
            Some(_) => self.sources.source(name)?,
            None => {
                let graphs: Vec<Arc<Source>> = self
                    .sources
                    .all()
                    .into_iter()
                    .filter(|s| graph_collections(s).is_ok())
                    .collect();
                match graphs.as_slice() {
                    [only] => only.clone(),
                    [] => {
                        return Err(GraphSessionError::UnknownSource(format!(
                            "no graph source is served (sources: {}); graph tools need a graph file",
                            self.names().join(", ")
                        )));
                    }
                    _ => {
                        let names: Vec<&str> = graphs.iter().map(|s| s.name()).collect();
                        return Err(GraphSessionError::UnknownSource(format!(
                            "several graphs are served; name one with `source`: {}",
                            names.join(", ")
                        )));
                    }
                }
            }
        };
        if let Some(session) = lock(&self.sessions).get(source.name()) {
            return Ok(session.clone());
        }
        // Opened outside the map's lock: opening may lay the graph out, which must not keep the
        // other graphs' sessions (nor this one's readers) waiting. Two calls opening at once
        // both open it; the first one in is kept.
        let store = lock(&self.store).clone();
        let opened = Arc::new(GraphSession::open(source.clone(), store)?);
        let session = {
            let mut sessions = lock(&self.sessions);
            if let Some(first) = sessions.get(source.name()) {
                return Ok(first.clone());
            }
            // Reloaded while it was opened: its reload found no session to rebase, so the
            // session opened on the old data is dropped and the new data opened.
            let still_served = self
                .sources
                .source(Some(source.name()))
                .is_ok_and(|now| Arc::ptr_eq(&now, &source));
            if !still_served {
                drop(sessions);
                return self.session(Some(source.name()));
            }
            sessions.insert(source.name().to_string(), opened.clone());
            opened
        };
        for note in session.restore_notes() {
            tracing::warn!(source = source.name(), note, "restoring the graph session");
        }
        let served = session.data().source.clone();
        if !Arc::ptr_eq(&served, &source) {
            self.sources.serve(served);
        }
        Ok(session)
    }

    /// The algorithm runs of graph `name`'s session, when one is open or saved (for hints).
    pub fn history(&self, name: &str) -> Vec<crate::state::AlgorithmRun> {
        self.session(Some(name)).map(|session| session.state().history).unwrap_or_default()
    }

    /// Serves the source a session change produced (new algorithm results).
    pub(crate) fn serve_session_source(&self, source: Arc<Source>) {
        self.sources.serve(source);
    }
}
