//! A small pool of read-only connections to one database (SQLite's to one file, PostgreSQL's to
//! one server), so that one slow statement does not hold up every other query on the source. Connections are opened on demand up to a
//! bound, each set up the same way by the caller's `open`; a caller waits for a free one at
//! most as long as its statement may run.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use schemascope_core::sync;

use crate::error::{ErrorClass, SourceError};

/// How often a caller waiting for a free connection checks that its call is not cancelled.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Connections one source opens at most: one per core (at least 2, at most 4) for profiles'
/// statements, which run that many at once, plus one, so that a caller's query always gets
/// through beside a profile computed in the background.
pub(crate) fn pool_size() -> usize {
    profile_parallelism() + 1
}

/// How many statements of one table's profile run at once: one per core, at least 2 (a sort
/// beside a scan pays even on one core) and at most 4 (each holds its own memory on the
/// database host).
pub(crate) fn profile_parallelism() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4)
}

struct State<C> {
    idle: Vec<C>,
    open: usize,
}

/// Connections of type `C`, at most `max` open.
pub(crate) struct Pool<C> {
    state: Mutex<State<C>>,
    freed: Condvar,
    max: usize,
}

/// A connection taken from the pool; it goes back when dropped.
pub(crate) struct Lease<'a, C> {
    pool: &'a Pool<C>,
    connection: Option<C>,
}

impl<C> std::ops::Deref for Lease<'_, C> {
    type Target = C;

    fn deref(&self) -> &C {
        // Present from creation until drop.
        self.connection
            .as_ref()
            .unwrap_or_else(|| unreachable!("a lease holds its connection until dropped"))
    }
}

impl<C> std::ops::DerefMut for Lease<'_, C> {
    fn deref_mut(&mut self) -> &mut C {
        self.connection
            .as_mut()
            .unwrap_or_else(|| unreachable!("a lease holds its connection until dropped"))
    }
}

impl<C> Drop for Lease<'_, C> {
    fn drop(&mut self) {
        if let Some(connection) = self.connection.take() {
            self.pool.lock().idle.push(connection);
            self.pool.freed.notify_one();
        }
    }
}

/// A connection counted as open before it is: dropped (the opening failed or panicked), it
/// gives its count back and wakes a waiter.
struct Reserved<'a, C>(&'a Pool<C>);

impl<C> Drop for Reserved<'_, C> {
    fn drop(&mut self) {
        self.0.lock().open -= 1;
        self.0.freed.notify_one();
    }
}

impl<C> Pool<C> {
    /// A pool holding `first` (already open), opening up to `max` in all.
    pub(crate) fn new(first: C, max: usize) -> Self {
        Self {
            state: Mutex::new(State { idle: vec![first], open: 1 }),
            freed: Condvar::new(),
            max: max.max(1),
        }
    }

    /// The state, also after a panic elsewhere: it holds only connections and a count, each
    /// changed in one step, which a panic cannot leave half-done.
    fn lock(&self) -> MutexGuard<'_, State<C>> {
        sync::lock(&self.state)
    }

    /// A free connection, opening one with `open` when none is free and fewer than `max` are
    /// open; otherwise waits for one, at most `wait`. `Err(None)` when none came free in time.
    pub(crate) fn acquire<E>(
        &self,
        wait: Duration,
        open: impl FnOnce() -> Result<C, E>,
    ) -> Result<Lease<'_, C>, Option<E>> {
        let deadline = Instant::now() + wait;
        let mut state = self.lock();
        loop {
            if let Some(connection) = state.idle.pop() {
                return Ok(Lease { pool: self, connection: Some(connection) });
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                // Counted before it is opened (outside the lock): should `open` fail or panic,
                // the reservation gives the count back, so no slot is lost for good.
                let reserved = Reserved(self);
                return match open() {
                    Ok(connection) => {
                        std::mem::forget(reserved);
                        Ok(Lease { pool: self, connection: Some(connection) })
                    }
                    Err(e) => Err(Some(e)),
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(None);
            }
            state = sync::wait_timeout(&self.freed, state, left).0;
        }
    }

    /// Every connection, taken out (no lease can be out: leases borrow the pool).
    pub(crate) fn drain(&mut self) -> Vec<C> {
        std::mem::take(&mut sync::get_mut(&mut self.state).idle)
    }

    /// The most connections this pool opens.
    pub(crate) fn max(&self) -> usize {
        self.max
    }
}

impl<C> Pool<Option<C>> {
    /// A slot of a pool whose slots connect on first use (`None` until then, and after a lost
    /// connection), waiting for a free one at most `timeout_ms` (the statement's own timeout;
    /// 0: at most the default statement timeout, for connecting at start) and no longer than
    /// the call is not cancelled. `location` names the database in the error.
    pub(crate) fn free_slot(
        &self,
        location: &str,
        timeout_ms: u64,
    ) -> Result<Lease<'_, Option<C>>, SourceError> {
        let cancel = schemascope_core::cancel::current();
        let wait = Duration::from_millis(if timeout_ms == 0 {
            super::STATEMENT_TIMEOUT_MS
        } else {
            timeout_ms
        });
        let started = Instant::now();
        loop {
            cancel.check()?;
            // Waited for in short turns, so that a cancelled call stops waiting at once.
            let turn = wait.saturating_sub(started.elapsed()).min(CANCEL_POLL);
            match self.acquire(turn, || Ok::<_, std::convert::Infallible>(None)) {
                Ok(lease) => return Ok(lease),
                Err(_) if started.elapsed() < wait => {}
                Err(_) => {
                    return Err(SourceError::Statement {
                        location: location.to_string(),
                        message: format!(
                            "all {} connections stayed busy for the statement's {timeout_ms} ms timeout; try again",
                            self.max
                        ),
                        class: ErrorClass::Resource,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_reused_opened_up_to_the_bound_and_waited_for_at_most_the_wait() {
        let pool = Pool::new(0u32, 2);
        let first = pool.acquire::<()>(Duration::ZERO, || Ok(99)).expect("the first connection");
        assert_eq!(*first, 0);
        let second = pool.acquire::<()>(Duration::ZERO, || Ok(1)).expect("opens a second");
        assert_eq!(*second, 1);
        assert!(
            matches!(pool.acquire::<()>(Duration::from_millis(1), || Ok(2)), Err(None)),
            "the bound holds"
        );
        drop(first);
        assert_eq!(*pool.acquire::<()>(Duration::ZERO, || Ok(3)).expect("reused"), 0);
        drop(second);
        let failed = pool.acquire::<&str>(Duration::ZERO, || Err("cannot open"));
        assert!(failed.is_ok(), "an idle connection is taken before opening");
    }

    #[test]
    fn an_open_that_fails_or_panics_gives_its_slot_back() {
        let pool = Pool::new(0u32, 2);
        let _first = pool.acquire::<()>(Duration::ZERO, || Ok(99)).expect("the first connection");
        assert!(matches!(
            pool.acquire(Duration::ZERO, || Err("cannot open")),
            Err(Some("cannot open"))
        ));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.acquire::<()>(Duration::ZERO, || panic!("open panicked"))
        }));
        assert!(panicked.is_err(), "the panic reaches the caller");
        assert_eq!(
            *pool.acquire::<()>(Duration::ZERO, || Ok(2)).expect("the slot is free again"),
            2
        );
    }
}
