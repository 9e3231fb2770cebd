//! Running independent tasks on all cores, their results in task order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `task(0..count)` on all cores, results in order; tasks are handed out one at a time so a slow
/// one does not hold up a whole share.
pub(crate) fn on_all_cores<T: Send>(count: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                break;
            }
            let result = task(k);
            results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[k] = Some(result);
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(count);
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(work);
            }
            work();
        });
    }
    results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).into_iter().flatten().collect()
}
