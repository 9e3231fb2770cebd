//! One memory budget shared by the workers reading a file's contiguous parts. A fixed share
//! each wasted what a worker did not need: a file whose distinct values all come late left the
//! first worker's half idle while the second sketched (or spilled) properties that fitted the
//! whole budget with room to spare. So each worker may hold what the others do not hold now.
//!
//! What the others hold is what they last reported, up to a block old: meanwhile each grows by
//! about what its last block added (8 MiB of nested documents add 10 MiB of counters), and
//! counting them at their reports alone let the counters together pass the budget by that much.
//! So each other worker is counted at its report plus its last block's growth. Each is also
//! counted as holding at least half its fair share ([`FLOOR_SHARE`]), so one worker filling the
//! budget first leaves the others room for their sketches and a sizeable chunk to spill, not a
//! sliver after every block.

use std::sync::atomic::{AtomicUsize, Ordering};

use schemascope_core::profile::Fitted;

/// The fraction of its fair share a worker may always hold: a half.
const FLOOR_SHARE: usize = 2;

/// What one worker reported.
#[derive(Debug, Default)]
struct Held {
    /// Bytes its counters need after its last fit.
    need: AtomicUsize,
    /// Bytes they grew by over its last block (from the fit before to the last one's start).
    growth: AtomicUsize,
}

/// The budget of `workers` workers, and what each needs now.
#[derive(Debug)]
pub(crate) struct WorkerBudget {
    bytes: usize,
    held: Vec<Held>,
    /// The most the workers were seen needing together.
    peak: AtomicUsize,
}

impl WorkerBudget {
    /// `bytes` for `workers` workers (at least one), none of it used yet.
    pub(crate) fn new(bytes: usize, workers: usize) -> Self {
        let workers = workers.max(1);
        Self {
            bytes,
            held: (0..workers).map(|_| Held::default()).collect(),
            peak: AtomicUsize::new(0),
        }
    }

    /// What worker `worker` may hold now: the budget less what the others hold and are about to
    /// add, each at least its floor.
    pub(crate) fn allowance(&self, worker: usize) -> usize {
        let floor = self.bytes / self.held.len() / FLOOR_SHARE;
        let others: usize = self
            .held
            .iter()
            .enumerate()
            .filter(|&(w, _)| w != worker)
            .map(|(_, held)| {
                let need = held.need.load(Ordering::Relaxed);
                need.saturating_add(held.growth.load(Ordering::Relaxed)).max(floor)
            })
            .sum();
        self.bytes.saturating_sub(others).max(floor)
    }

    /// Records what worker `worker`'s counters needed at its fit.
    pub(crate) fn report(&self, worker: usize, fitted: Fitted) {
        if let Some(held) = self.held.get(worker) {
            let last = held.need.swap(fitted.after, Ordering::Relaxed);
            held.growth.store(fitted.before.saturating_sub(last), Ordering::Relaxed);
        }
        let together: usize = self.held.iter().map(|held| held.need.load(Ordering::Relaxed)).sum();
        self.peak.fetch_max(together, Ordering::Relaxed);
    }

    /// The most the workers needed together at any report.
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::{Fitted, WorkerBudget};

    /// A fit at which nothing grew or was freed.
    fn steady(bytes: usize) -> Fitted {
        Fitted { before: bytes, after: bytes }
    }

    #[test]
    fn a_worker_may_hold_what_the_others_do_not_and_never_less_than_its_floor() {
        let budget = WorkerBudget::new(96 << 20, 2);
        // An idle worker is counted at its floor, half of its half.
        assert_eq!(budget.allowance(1), 72 << 20);
        budget.report(0, steady(30 << 20));
        // Grown by 30 MiB over its first block: counted as about to grow by as much again.
        assert_eq!(budget.allowance(1), 36 << 20);
        budget.report(0, steady(30 << 20));
        assert_eq!(budget.allowance(1), 66 << 20);
        assert_eq!(budget.allowance(0), 72 << 20);
        budget.report(1, Fitted { before: 60 << 20, after: 60 << 20 });
        budget.report(1, steady(60 << 20));
        assert_eq!(budget.allowance(0), 36 << 20);
        assert_eq!(budget.peak(), 90 << 20);
        // A worker holding everything still leaves the other its floor.
        budget.report(1, steady(96 << 20));
        assert_eq!(budget.allowance(0), 24 << 20);
        budget.report(1, Fitted { before: 96 << 20, after: 1 << 20 });
        assert_eq!(budget.peak(), 126 << 20);
        assert_eq!(budget.allowance(0), 72 << 20);
    }

    /// Two workers growing by a block's worth between fits: counting the other's growth keeps
    /// what they hold together within the budget at every fit, where counting its last report
    /// alone let them pass it by a block's growth.
    #[test]
    fn the_others_growth_over_a_block_is_left_room_for() {
        let (bytes, growth) = (96usize << 20, 10usize << 20);
        let budget = WorkerBudget::new(bytes, 2);
        let mut held = [0usize; 2];
        for step in 0..200 {
            let worker = step % 2;
            let before = held[worker] + growth;
            let allowance = budget.allowance(worker);
            // Fitting brings a worker past its allowance down to half of it, as spilling does.
            let after = if before > allowance { allowance / 2 } else { before };
            held[worker] = after;
            budget.report(worker, Fitted { before, after });
            // The other worker, mid-block, grows by as much before it fits again.
            let other = held[1 - worker] + growth;
            assert!(after + other <= bytes, "step {step}: {after} + {other} > {bytes}");
        }
        assert!(budget.peak() <= bytes);
    }
}
