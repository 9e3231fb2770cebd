//! Cancelling a tool call's work. A surface makes a [`Cancel`] token per call, runs the call
//! inside [`with`], and cancels the token when the call's time is up or its client went away;
//! the long loops (selector evaluation over items, algorithm runs, profiling) check
//! [`current`] every few thousand steps and stop with [`Cancelled`]. The token is ambient — one
//! per thread, handed on explicitly to the threads a loop spawns — so the functions between the
//! surface and the loop need no extra parameter. The core reads no clock: a deadline is the
//! surface's timer cancelling the token.
//!
//! Work that waits on something shared (another call computing a table's profile) names it with
//! [`during`], so a call cancelled meanwhile can say what it was waiting for
//! ([`Cancel::stopped_during`]) instead of only that its time was up.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How many steps a loop may take between two looks at its token: checking is one atomic load,
/// so this keeps its cost out of sight while a cancelled call stops within microseconds.
pub const CHECK_EVERY: usize = 1_024;

/// A cancellation token: cheap to clone, shared by the surface that cancels and the work that
/// checks.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    cancelled: Arc<AtomicBool>,
    reason: Arc<OnceLock<String>>,
    /// The steps the work is in now, innermost last (see [`during`]).
    steps: Arc<Mutex<Vec<String>>>,
    /// The innermost step when the token was cancelled.
    stopped_during: Arc<OnceLock<String>>,
}

/// The work stopped because its token was cancelled; the reason is the surface's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the work was stopped: {reason}")]
pub struct Cancelled {
    /// Why (e.g. "the request took longer than 60 s").
    pub reason: String,
}

impl Cancel {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the work; the first reason given is kept.
    pub fn cancel_because(&self, reason: impl Into<String>) {
        if self.reason.set(reason.into()).is_ok()
            && let Some(step) = crate::sync::lock(&self.steps).last()
        {
            let _ = self.stopped_during.set(step.clone());
        }
        self.cancelled.store(true, Ordering::Release);
    }

    /// What the work was doing when the token was cancelled, if it had named it with
    /// [`during`] (e.g. "waiting for the profile of table `orders`, which another call is
    /// computing").
    pub fn stopped_during(&self) -> Option<String> {
        self.stopped_during.get().cloned()
    }

    /// Cancels the work without a reason of its own.
    pub fn cancel(&self) {
        self.cancel_because("the call was cancelled");
    }

    /// Whether the token was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// The flag itself, for code that cannot depend on this crate (the graph algorithms) and
    /// only needs to see whether to stop.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }

    /// `Err` once the token was cancelled.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() { Err(self.cancelled()) } else { Ok(()) }
    }

    /// The error for this token's cancellation.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            reason: self.reason.get().cloned().unwrap_or_else(|| "the call was cancelled".into()),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

/// Runs `work` with `token` as this thread's current token, then restores the previous one.
pub fn with<T>(token: &Cancel, work: impl FnOnce() -> T) -> T {
    /// Restores the previous token even when `work` panics.
    struct Restore(Option<Cancel>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|current| current.borrow_mut().replace(token.clone()));
    let _restore = Restore(previous);
    work()
}

/// This thread's current token; a token nobody cancels when none was set (a CLI command, a
/// test).
pub fn current() -> Cancel {
    CURRENT.with(|current| current.borrow().clone()).unwrap_or_default()
}

/// Runs `work` as the step `what` of the current token's work: if the token is cancelled
/// meanwhile, [`Cancel::stopped_during`] names it.
pub fn during<T>(what: impl Into<String>, work: impl FnOnce() -> T) -> T {
    /// Leaves the step even when `work` panics.
    struct Leave(Arc<Mutex<Vec<String>>>);
    impl Drop for Leave {
        fn drop(&mut self) {
            crate::sync::lock(&self.0).pop();
        }
    }
    let steps = Arc::clone(&current().steps);
    crate::sync::lock(&steps).push(what.into());
    let _leave = Leave(steps);
    work()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_current_inside_with_only_and_keeps_its_first_reason() {
        let token = Cancel::new();
        assert!(!current().is_cancelled());
        with(&token, || {
            assert!(current().check().is_ok());
            token.cancel_because("the request took longer than 2 s");
            token.cancel_because("later reason");
            assert_eq!(
                current().check(),
                Err(Cancelled { reason: "the request took longer than 2 s".into() })
            );
        });
        assert!(!current().is_cancelled(), "the token does not outlive `with`");
    }

    #[test]
    fn a_token_cancelled_during_a_step_names_the_innermost_one() {
        let token = Cancel::new();
        with(&token, || {
            during("computing the profile of table `a`", || {
                during("waiting for the profile of table `b`", || token.cancel());
            });
        });
        assert_eq!(token.stopped_during().as_deref(), Some("waiting for the profile of table `b`"));
        let finished = Cancel::new();
        with(&finished, || during("a step", || {}));
        finished.cancel();
        assert_eq!(finished.stopped_during(), None, "a step left is not named");
    }
}
