//! Stopping a long algorithm early. A caller that may be cancelled (a tool call whose time is
//! up) sets a flag for the algorithms run inside [`with`]; the loops whose work grows past
//! linear — one search per source in betweenness and closeness, iterations of PageRank and
//! Louvain, each node's row of pairs in the force layout, each node of clustering — look at it
//! between steps and, once it is set, stop and return what
//! they have. Those results are then incomplete: the caller, which set the flag, must discard
//! them (it knows it cancelled). The flag is the caller's own `AtomicBool`, so this crate keeps
//! its few dependencies.
//!
//! The same loops count their steps in a [`Steps`] set with [`with_steps`], for a caller that
//! reports how far a long run got.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
    static STEPS: RefCell<Option<Arc<Steps>>> = const { RefCell::new(None) };
}

/// How far an algorithm got: `done` of `total` steps of one kind (`unit`, e.g. "sources
/// searched"); a total of 0 is unknown (Louvain's levels).
#[derive(Debug, Default)]
pub struct Steps {
    done: AtomicUsize,
    total: AtomicUsize,
    unit: Mutex<&'static str>,
}

impl Steps {
    /// `(done, total, unit)` now; `unit` is empty before the algorithm counted anything.
    pub fn now(&self) -> (usize, usize, &'static str) {
        let unit = *self.unit.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed), unit)
    }
}

/// Runs `work` with `steps` counting this thread's algorithm steps, then restores the previous.
pub fn with_steps<T>(steps: Arc<Steps>, work: impl FnOnce() -> T) -> T {
    with_local(&STEPS, steps, work)
}

/// Runs `work` with `value` in this thread's `slot`, then puts the previous value back.
fn with_local<V: 'static, T>(
    slot: &'static std::thread::LocalKey<RefCell<Option<V>>>,
    value: V,
    work: impl FnOnce() -> T,
) -> T {
    let previous = slot.with(|current| current.borrow_mut().replace(value));
    let result = work();
    slot.with(|current| *current.borrow_mut() = previous);
    result
}

/// This thread's step counter, to hand to the threads an algorithm spawns.
pub(crate) fn steps() -> Option<Arc<Steps>> {
    STEPS.with(|current| current.borrow().clone())
}

/// Starts counting `total` steps of `unit` (0: a total not known in advance).
pub(crate) fn begin(steps: &Option<Arc<Steps>>, total: usize, unit: &'static str) {
    if let Some(steps) = steps {
        *steps.unit.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = unit;
        steps.total.store(total, Ordering::Relaxed);
        steps.done.store(0, Ordering::Relaxed);
    }
}

/// One more step done.
pub(crate) fn step(steps: &Option<Arc<Steps>>) {
    if let Some(steps) = steps {
        steps.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs `work` with `flag` as this thread's stop flag, then restores the previous one.
pub fn with<T>(flag: Arc<AtomicBool>, work: impl FnOnce() -> T) -> T {
    with_local(&FLAG, flag, work)
}

/// The stop flag of this thread, to hand to the threads an algorithm spawns.
pub(crate) fn current() -> Option<Arc<AtomicBool>> {
    FLAG.with(|current| current.borrow().clone())
}

/// Whether `flag` (from [`current`]) asks to stop.
pub(crate) fn stop(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
}

/// Whether this thread's flag asks to stop.
pub(crate) fn stopping() -> bool {
    FLAG.with(|current| stop(&current.borrow()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        GraphData, PageRankOptions, betweenness_centrality, closeness_centrality, pagerank,
    };

    fn ring(n: usize) -> GraphData {
        let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        let edges: Vec<(String, String, f64)> =
            (0..n).map(|i| (ids[i].clone(), ids[(i + 1) % n].clone(), 1.0)).collect();
        GraphData::build(
            ids.iter().map(String::as_str),
            edges.iter().map(|(a, b, w)| (a.as_str(), b.as_str(), *w)),
            false,
        )
    }

    #[test]
    fn a_set_flag_stops_the_loops_before_their_first_step() {
        let g = ring(200);
        let stop = Arc::new(AtomicBool::new(true));
        // Every node of a ring lies on shortest paths: nonzero unless no source was searched.
        assert!(betweenness_centrality(&g, false).iter().all(|b| *b > 0.0));
        assert!(
            with(Arc::clone(&stop), || betweenness_centrality(&g, false)).iter().all(|b| *b == 0.0)
        );
        assert!(closeness_centrality(&g, false).iter().all(|c| *c > 0.0));
        assert!(
            with(Arc::clone(&stop), || closeness_centrality(&g, false)).iter().all(|c| *c == 0.0)
        );
        assert!(pagerank(&g, &PageRankOptions::default()).converged);
        assert!(
            !with(Arc::clone(&stop), || pagerank(&g, &PageRankOptions::default())).converged,
            "no iteration ran"
        );
        // The force layout stops inside its first iteration (one iteration of a large graph
        // is billions of pairs) and says none was done; clustering skips every node.
        let laid = with(Arc::clone(&stop), || {
            crate::layout::force_directed(&g, &crate::layout::ForceOptions::default())
        });
        assert_eq!((laid.iterations, laid.settled), (0, false));
        assert!(crate::clustering(&g).coefficient.iter().all(|c| *c == 0.0), "a ring has none");
        // A star with one triangle (hub, n1, n2).
        let ids: Vec<String> = (0..50).map(|i| format!("n{i}")).collect();
        let spokes: Vec<(&str, &str, f64)> = (1..50)
            .map(|i| (ids[0].as_str(), ids[i].as_str(), 1.0))
            .chain([(ids[1].as_str(), ids[2].as_str(), 1.0)])
            .collect();
        let star = GraphData::build(ids.iter().map(String::as_str), spokes, false);
        assert!(crate::clustering(&star).coefficient.iter().any(|c| *c > 0.0));
        assert!(
            with(Arc::clone(&stop), || crate::clustering(&star))
                .coefficient
                .iter()
                .all(|c| *c == 0.0)
        );
        // An unset flag changes nothing, and the flag does not outlive `with`.
        let free = Arc::new(AtomicBool::new(false));
        assert_eq!(
            with(free, || betweenness_centrality(&g, false)),
            betweenness_centrality(&g, false)
        );
        assert!(!stopping());
    }
}
