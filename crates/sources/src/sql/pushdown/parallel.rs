//! A profile's per-column statements run on several connections at once: most of a large
//! table's profile is sorts and groupings the engine runs on one core per statement.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use schemascope_core::sync::lock;

use crate::error::SourceError;

/// Runs `work` for every job on up to `threads` threads (the calling thread alone when 1), in
/// the calling thread's cancellation scope, and hands each result to `done` on the calling
/// thread's side as it comes (one at a time). Stops taking jobs after the first error, which it
/// returns; otherwise the number of jobs done.
pub(super) fn each<T: Send>(
    threads: usize,
    jobs: &[usize],
    work: impl Fn(usize) -> Result<T, SourceError> + Sync,
    mut done: impl FnMut(usize, T) + Send,
) -> Result<usize, SourceError> {
    let cancel = schemascope_core::cancel::current();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<SourceError>> = Mutex::new(None);
    let finished = AtomicUsize::new(0);
    let done = Mutex::new(&mut done);
    let run = || {
        schemascope_core::cancel::with(&cancel, || {
            loop {
                if failed.load(Ordering::SeqCst) {
                    return;
                }
                let Some(&job) = jobs.get(next.fetch_add(1, Ordering::SeqCst)) else { return };
                // A cancelled call stops before its next statement (a statement under way runs
                // to its own timeout); the profile is tried again on the next use.
                let result = cancel.check().map_err(SourceError::from).and_then(|()| work(job));
                match result {
                    Ok(value) => {
                        (lock(&done))(job, value);
                        finished.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(error) => {
                        failed.store(true, Ordering::SeqCst);
                        lock(&first_error).get_or_insert(error);
                        return;
                    }
                }
            }
        })
    };
    let threads = threads.clamp(1, jobs.len().max(1));
    if threads == 1 {
        run();
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(run)).collect();
            for handle in handles {
                schemascope_core::sync::joined(handle.join());
            }
        });
    }
    match first_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        Some(error) => Err(error),
        None => Ok(finished.load(Ordering::SeqCst)),
    }
}
