//! Stopping a statement on its server when the call it runs for ends: a watcher thread polls
//! the call's cancel flag (its time is up, its client went away) and an optional deadline while
//! the statement runs, and sends the engine's stop (PostgreSQL's cancel request, MySQL's
//! `KILL QUERY`) — again until the statement ends, since a stop that reaches the server before
//! the statement does stops nothing.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use schemascope_core::sync::joined;

/// How often the watcher looks at the call's flag.
const POLL: Duration = Duration::from_millis(20);

/// Runs `statement`, calling `stop` from a watcher thread (named `name`) once the current call
/// is cancelled or `deadline` has passed, and every few polls after that until the statement
/// ends. A stop that fails leaves the server's own time limit as the bound.
pub(crate) fn stopped_with_the_call<T>(
    name: &str,
    deadline: Option<Instant>,
    stop: impl Fn() + Send + 'static,
    statement: impl FnOnce() -> T,
) -> T {
    let flag = schemascope_core::cancel::current().flag();
    // Dropping the sender when the statement ends wakes the watcher at once.
    let (ended, watch) = mpsc::channel::<()>();
    let watcher = std::thread::Builder::new().name(name.into()).spawn(move || {
        let mut poll = POLL;
        while let Err(RecvTimeoutError::Timeout) = watch.recv_timeout(poll) {
            if flag.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                stop();
                poll = POLL * 5;
            }
        }
    });
    let result = statement();
    drop(ended);
    if let Ok(watcher) = watcher {
        joined(watcher.join());
    }
    result
}
