//! Running independent tasks on all cores, their results in task order. A task's panic reaches
//! the caller with its own payload ([`crate::sync`]'s policy).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::sync::{into_inner, joined, lock};

/// `task(0..count)` on all cores, results in order; tasks are handed out one at a time so a slow
/// one does not hold up a whole share. A panicking task is resumed on the caller.
pub fn on_all_cores<T: Send>(count: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    on_threads(threads, count, task)
}

/// [`on_all_cores`] on at most `threads` threads, the caller's among them.
fn on_threads<T: Send>(threads: usize, count: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                break;
            }
            let result = task(k);
            // One slot replaced whole: a panic elsewhere leaves the others valid.
            lock(&results)[k] = Some(result);
        }
    };
    let threads = threads.min(count);
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            work();
            // Joined here, not left to the scope, which would replace the payload with its own
            // "a scoped thread panicked".
            for worker in workers {
                joined(worker.join());
            }
        });
    }
    into_inner(results).into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_task_order() {
        assert_eq!(on_threads(4, 1000, |k| k * 2), (0..1000).map(|k| k * 2).collect::<Vec<_>>());
        assert_eq!(on_threads(4, 0, |k| k), Vec::<usize>::new());
    }

    #[test]
    fn a_task_panicking_on_a_worker_thread_reaches_the_caller_with_its_payload() {
        let caller = std::thread::current().id();
        let caught = std::panic::catch_unwind(|| {
            on_threads(4, 64, |k| {
                if std::thread::current().id() != caller {
                    panic!("task {k} failed on a worker");
                }
                // Slow enough on the caller's thread that the workers take tasks too.
                std::thread::sleep(std::time::Duration::from_millis(5));
                k
            })
        });
        let payload = caught.expect_err("the panic propagates");
        let message = payload.downcast_ref::<String>().expect("the task's own message");
        assert!(
            message.starts_with("task ") && message.ends_with(" failed on a worker"),
            "{message}"
        );
    }
}
