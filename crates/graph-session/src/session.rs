//! One live session per served graph: its state behind a lock, every change saved before it is
//! applied, a version counter, and change events for the web view and other clients.

use schemascope_core::sync::{lock, read, write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::restore;
use crate::view::{Camera, CameraPreset, Layout};
use schemascope_sources::Source;
use serde::Serialize;
use tokio::sync::broadcast;

use crate::data::SessionData;
use crate::error::GraphSessionError;
use crate::layout;
use crate::reconcile;
use crate::state::{Decoded, Part, SessionState};
use crate::store::SessionStore;

/// What changed in a session, as the web view hears it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SessionEvent {
    /// The graph's source name.
    pub source: String,
    /// The session's version after the change.
    pub version: u64,
    /// What changed: styles, selection, view, layout, algorithms, data.
    pub changed: Vec<&'static str>,
    /// What a data change did to the session, in words (selection pruned, results removed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A live graph session.
#[derive(Debug)]
pub struct GraphSession {
    name: String,
    state: Mutex<SessionState>,
    data: RwLock<Arc<SessionData>>,
    version: AtomicU64,
    events: broadcast::Sender<SessionEvent>,
    store: Option<Arc<SessionStore>>,
    restore_notes: Vec<String>,
    /// The element under the person's pointer in the web view: where the pointer is now, so
    /// it is neither saved nor announced (the page reports it as it moves).
    hover: Mutex<Option<Hover>>,
}

/// The element under the pointer in the web view (seed 003's hover target).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hover {
    /// Its id.
    pub id: String,
    /// `node` or `edge`.
    pub element_type: crate::style::ElementKind,
}

fn part_topic(part: &Part) -> &'static str {
    match part {
        Part::Layers => "styles",
        Part::Selection => "selection",
        Part::View => "view",
        Part::Layout => "layout",
        Part::History | Part::Results(_) => "algorithms",
    }
}

/// Now, as the session records times (RFC 3339, milliseconds).
pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl GraphSession {
    /// Opens the session of graph source `base`, restoring its saved state from `store`.
    pub fn open(
        base: Arc<Source>,
        store: Option<Arc<SessionStore>>,
    ) -> Result<Self, GraphSessionError> {
        let name = base.name().to_string();
        let decoded = match &store {
            Some(store) => {
                let (parts, mut unread) = store.load(&name)?;
                let mut decoded = SessionState::decode(&parts);
                unread.append(&mut decoded.notes);
                decoded.notes = unread;
                decoded
            }
            None => Decoded::default(),
        };
        let (mut state, mut restore_notes) = (decoded.state, decoded.notes);
        let fingerprint = reconcile::data_fingerprint(&base)?;
        let why = format!(
            "the data differs from when the session was saved (found on opening it at {})",
            now_rfc3339()
        );
        let reconciled = reconcile::reconcile(&mut state, &base, &fingerprint, &why)?;
        restore_notes.extend(reconciled.notes);
        let restore_notes = restore::bounded_notes(restore_notes);
        let data = SessionData::new(base, &state.results)?;
        data.know_fingerprint(fingerprint);
        let mut initial_parts = reconciled.parts;
        if !positions_fit(&state, &data) {
            if state.positions.ids.is_empty() {
                state.layout = Layout {
                    layout_type: layout::default_type(data.graph().node_count()),
                    options: serde_json::json!({}),
                    settled: false,
                };
            }
            relayout(&mut state, &data)?;
            state.view.camera = Camera::preset(
                CameraPreset::FitToGraph,
                &state.positions.positions,
                state.view.dimension,
            );
            initial_parts.extend([Part::Layout, Part::View]);
        } else if decoded.camera_dropped {
            // As a new session frames its graph.
            state.view.camera = Camera::preset(
                CameraPreset::FitToGraph,
                &state.positions.positions,
                state.view.dimension,
            );
        }
        let (events, _) = broadcast::channel(256);
        let mut session = Self {
            name,
            state: Mutex::new(SessionState::default()),
            data: RwLock::new(Arc::new(data)),
            version: AtomicU64::new(0),
            events,
            store,
            restore_notes,
            hover: Mutex::new(None),
        };
        // What opening worked out is derived from the saved state and the data, so it need not
        // be saved to be found again: a session file that cannot be written (a full disk) must
        // not keep the graph from being read. Changes are refused until it can be.
        if let Err(error) = session.save(&state, &initial_parts) {
            tracing::warn!(source = session.name, %error, "the opened graph session could not be saved; reads are answered, changes wait for the session file");
            session
                .restore_notes
                .push(format!("the session as opened could not be saved: {error}"));
        }
        *lock(&session.state) = state;
        Ok(session)
    }

    /// The element under the pointer, if the web view reported one.
    pub fn hover(&self) -> Option<Hover> {
        lock(&self.hover).clone()
    }

    /// Records the element under the pointer (`None`: nothing).
    pub fn set_hover(&self, hover: Option<Hover>) {
        *lock(&self.hover) = hover;
    }

    /// The graph's source name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Problems met restoring saved state: parts (or entries of them) that were not read, or
    /// not as the tools would have set them, and were dropped.
    pub fn restore_notes(&self) -> &[String] {
        &self.restore_notes
    }

    /// The session file, if state is saved.
    pub fn store(&self) -> Option<&SessionStore> {
        self.store.as_deref()
    }

    /// Counts changes.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// A copy of the state.
    pub fn state(&self) -> SessionState {
        lock(&self.state).clone()
    }

    /// The data (graph with algorithm results) as it is now.
    pub fn data(&self) -> Arc<SessionData> {
        read(&self.data).clone()
    }

    /// Change events, as they happen.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.events.subscribe()
    }

    fn save(&self, state: &SessionState, parts: &[Part]) -> Result<(), GraphSessionError> {
        let Some(store) = &self.store else { return Ok(()) };
        if parts.is_empty() {
            return Ok(());
        }
        let encoded = parts
            .iter()
            .map(|p| p.encode(state).map(|text| (p.key(), text)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                GraphSessionError::Storage(format!("cannot encode the session state: {e}"))
            })?;
        store.save(&self.name, &encoded, &now_rfc3339())
    }

    fn announce(&self, changed: Vec<&'static str>) {
        self.announce_with(changed, Vec::new());
    }

    fn announce_with(&self, changed: Vec<&'static str>, notes: Vec<String>) {
        let version = self.version.fetch_add(1, Ordering::SeqCst) + 1;
        // Nobody listening is fine.
        let _ =
            self.events.send(SessionEvent { source: self.name.clone(), version, changed, notes });
    }

    /// Applies `f` to a copy of the state; if it succeeds and names changed parts, saves them
    /// and only then makes the copy current. A failed save leaves the state as it was. Returns
    /// `f`'s value and, when algorithm results changed, the source to serve instead.
    pub fn change<R>(
        &self,
        f: impl FnOnce(&mut SessionState, &SessionData) -> Result<(R, Vec<Part>), GraphSessionError>,
    ) -> Result<(R, Option<Arc<Source>>), GraphSessionError> {
        let mut state = lock(&self.state);
        let data = self.data();
        let mut next = state.clone();
        let (value, parts) = f(&mut next, &data)?;
        if parts.is_empty() {
            return Ok((value, None));
        }
        let results_changed = parts.iter().any(|p| matches!(p, Part::Results(_)));
        let new_data =
            if results_changed { Some(Arc::new(data.with_results(&next.results)?)) } else { None };
        self.save(&next, &parts)?;
        *state = next;
        let served = new_data.map(|d| {
            let source = d.source.clone();
            *write(&self.data) = d;
            source
        });
        let mut topics: Vec<&'static str> = parts.iter().map(part_topic).collect();
        topics.dedup();
        if served.is_some() {
            topics.push("data");
        }
        drop(state);
        self.announce(topics);
        Ok((value, served))
    }

    /// A change whose work is long (a layout): `compute` runs on a snapshot of the state and
    /// data outside the state lock, so readers (describe_styles, the web view's scene) and other
    /// changes go on meanwhile and a cancelled call stops without holding anything; `apply` then
    /// makes the change under the lock, as [`Self::change`] does, given the snapshot to tell what
    /// moved meanwhile. A result computed on data that was reloaded meanwhile is refused.
    pub fn change_computed<C, R>(
        &self,
        what: &str,
        compute: impl FnOnce(&SessionState, &SessionData) -> Result<C, GraphSessionError>,
        apply: impl FnOnce(
            &SessionState,
            &mut SessionState,
            &SessionData,
            C,
        ) -> Result<(R, Vec<Part>), GraphSessionError>,
    ) -> Result<(R, Option<Arc<Source>>), GraphSessionError> {
        let snapshot = self.state();
        let data = self.data();
        let computed = compute(&snapshot, &data)?;
        self.change(|state, current| {
            if !Arc::ptr_eq(&data.source, &current.source)
                && current.fingerprint()? != data.fingerprint()?
            {
                return Err(GraphSessionError::InvalidParams(format!(
                    "the graph was reloaded while {what} was computed, so its result describes data that is gone; call it again"
                )));
            }
            apply(&snapshot, state, current, computed)
        })
    }

    /// The source was reloaded from its file. Unchanged data keeps its algorithm results; else
    /// they are removed from the elements and their runs marked stale, ids that are gone leave
    /// the selection and the layers (`reconcile.rs`), and the graph is laid out again if its
    /// nodes changed. Returns the source to serve.
    pub fn rebase(&self, base: Arc<Source>) -> Result<Arc<Source>, GraphSessionError> {
        let mut state = lock(&self.state);
        let fingerprint = reconcile::data_fingerprint(&base)?;
        let mut next = state.clone();
        let why = format!("data reloaded at {}", now_rfc3339());
        let reconciled = reconcile::reconcile(&mut next, &base, &fingerprint, &why)?;
        let data = SessionData::new(base, &next.results)?;
        data.know_fingerprint(fingerprint);
        let mut parts = reconciled.parts;
        if !positions_fit(&next, &data) {
            relayout(&mut next, &data)?;
            parts.push(Part::Layout);
        }
        self.save(&next, &parts)?;
        *state = next;
        let source = data.source.clone();
        *write(&self.data) = Arc::new(data);
        drop(state);
        let mut topics = vec!["data"];
        for part in &parts {
            let topic = part_topic(part);
            if !topics.contains(&topic) {
                topics.push(topic);
            }
        }
        self.announce_with(topics, reconciled.notes);
        Ok(source)
    }
}

/// True when the saved positions are for exactly the graph's nodes.
fn positions_fit(state: &SessionState, data: &SessionData) -> bool {
    let g = data.graph();
    state.positions.ids.len() == g.node_count()
        && state.positions.ids.iter().zip(&g.node_ids).all(|(a, b)| a == b)
}

/// Recomputes the positions for the state's layout (falling back to the default layout if its
/// options no longer apply).
pub fn relayout(state: &mut SessionState, data: &SessionData) -> Result<(), GraphSessionError> {
    let computed = layout::compute(
        data,
        state.layout.layout_type,
        &state.layout.options,
        state.view.dimension,
    )
    .or_else(|_| {
        state.layout.layout_type = layout::default_type(data.graph().node_count());
        state.layout.options = serde_json::json!({});
        layout::compute(data, state.layout.layout_type, &state.layout.options, state.view.dimension)
    })?;
    let (positions, settled, options) = computed;
    state.positions = Arc::new(positions);
    state.layout.settled = settled;
    state.layout.options = options;
    Ok(())
}
