//! Database tables profiled in the background: a call that needs tables' profiles queues them
//! (smallest first) and waits at most the served patience, then answers with what is known — the
//! catalog, the row estimate and the columns finished — while the profiles go on. Each profile
//! finished is announced as a change of its source, so subscribers to its `schema://` resource
//! read it again.
//!
//! One worker thread computes the queued profiles one at a time: a source's connection pool
//! keeps its other connections for callers' statements, and the engine parallelises each
//! profile's scans itself where it can.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use schemascope_core::sync::lock;
use schemascope_core::{Collection, ProfileState};
use tokio::sync::broadcast;

/// How long a call waiting for profiles sleeps between two looks at them and at its own
/// cancellation.
const WAIT_TURN: Duration = Duration::from_millis(20);

/// The queue of tables to profile and its worker.
#[derive(Default)]
pub(crate) struct ProfileQueue {
    state: Mutex<QueueState>,
    wake: Condvar,
    /// Cancels the profile under way and those queued when the sources are dropped.
    stop: schemascope_core::cancel::Cancel,
}

/// Where a finished profile is announced: the name of its source, on the sources' change
/// broadcast.
pub(crate) type Announce = (String, broadcast::Sender<String>);

#[derive(Default)]
struct QueueState {
    /// Queued tables with their row count (estimated), smallest first when taken, and where
    /// their finished profile is announced.
    queued: Vec<(u64, Weak<Collection>, Option<Announce>)>,
    /// Tables queued or being profiled, by address (to queue each once).
    pending: HashSet<usize>,
    /// Whether the worker thread runs.
    worker: bool,
}

fn address(collection: &Arc<Collection>) -> usize {
    Arc::as_ptr(collection) as usize
}

/// True when `collection`'s profile needs computing: a table whose profile is not ready and has
/// not failed for good.
fn needs_profile(collection: &Collection) -> bool {
    matches!(collection.profile_state(), ProfileState::NotStarted | ProfileState::Retrying)
}

impl ProfileQueue {
    /// Queues the profiles of those `collections` that need one (see [`needs_profile`]).
    pub(crate) fn request(
        self: &Arc<Self>,
        collections: &[Arc<Collection>],
        announce: Option<Announce>,
    ) {
        let mut state = lock(&self.state);
        let mut added = false;
        for collection in collections.iter().filter(|c| needs_profile(c)) {
            if state.pending.insert(address(collection)) {
                state.queued.push((
                    collection.len() as u64,
                    Arc::downgrade(collection),
                    announce.clone(),
                ));
                added = true;
            }
        }
        if !added {
            return;
        }
        if !state.worker {
            let queue = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name("schemascope-profiles".into())
                .spawn(move || queue.work());
            // Without a thread the profiles are computed by the calls that need them, as before.
            state.worker = spawned.is_ok();
            if !state.worker {
                state.queued.clear();
                state.pending.clear();
            }
        }
        drop(state);
        self.wake.notify_all();
    }

    /// Stops the worker's profile under way and forgets those queued.
    pub(crate) fn stop(&self) {
        self.stop.cancel_because("the sources were dropped");
        let mut state = lock(&self.state);
        state.queued.clear();
        drop(state);
        self.wake.notify_all();
    }

    /// True while `collection` is queued or being profiled.
    pub(crate) fn is_pending(&self, collection: &Arc<Collection>) -> bool {
        lock(&self.state).pending.contains(&address(collection))
    }

    /// Waits until none of `collections` is queued or being profiled, at most `patience` (for
    /// ever when `None`) and only while the calling tool is not cancelled.
    pub(crate) fn wait(&self, collections: &[Arc<Collection>], patience: Option<Duration>) {
        let waited: Vec<&Arc<Collection>> =
            collections.iter().filter(|c| self.is_pending(c)).collect();
        let Some(first) = waited.first() else { return };
        // A call cancelled while it waits says what for.
        let what = match waited.len() {
            1 => format!(
                "the profile of table `{}`, which is being computed in the background",
                first.name()
            ),
            n => format!(
                "the profiles of {n} tables (`{}`, …), which are being computed in the background",
                first.name()
            ),
        };
        schemascope_core::cancel::during(format!("waiting for {what}"), || {
            self.wait_for(collections, patience);
        });
    }

    fn wait_for(&self, collections: &[Arc<Collection>], patience: Option<Duration>) {
        let deadline = patience.map(|p| Instant::now() + p);
        let cancel = schemascope_core::cancel::current();
        loop {
            if !collections.iter().any(|c| self.is_pending(c)) || cancel.is_cancelled() {
                return;
            }
            let turn = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return;
                    }
                    left.min(WAIT_TURN)
                }
                None => WAIT_TURN,
            };
            std::thread::sleep(turn);
        }
    }

    /// The worker: takes the smallest queued table, profiles it, and sleeps when none is left.
    fn work(&self) {
        loop {
            let next = {
                let mut state = lock(&self.state);
                loop {
                    if self.stop.is_cancelled() {
                        return;
                    }
                    if let Some(at) = (0..state.queued.len()).min_by_key(|&i| state.queued[i].0) {
                        let (_, next, announce) = state.queued.swap_remove(at);
                        break (next, announce);
                    }
                    state =
                        self.wake.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            let (next, announce) = next;
            // A table of a source replaced since (reloaded) is no longer anyone's to profile.
            if let Some(collection) = next.upgrade() {
                // A panic in one profile must not stop the others: it leaves that profile unset.
                if !self.stop.is_cancelled() {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        schemascope_core::cancel::with(&self.stop, || collection.profile());
                    }));
                }
                lock(&self.state).pending.remove(&address(&collection));
                if let Some((source, changes)) =
                    announce.filter(|_| collection.profile_state() == ProfileState::Ready)
                {
                    // No receiver is no one to tell.
                    let _ = changes.send(source);
                }
            } else {
                let gone = next.as_ptr() as usize;
                lock(&self.state).pending.remove(&gone);
            }
        }
    }
}
