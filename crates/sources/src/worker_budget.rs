//! One memory budget shared by the workers reading a file's contiguous parts. A fixed share
//! each wasted what a worker did not need: a file whose distinct values all come late left the
//! first worker's half idle while the second sketched (or spilled) properties that fitted the
//! whole budget with room to spare. So each worker may hold what the others do not hold now.
//!
//! What the others hold is what they last reported, up to a block old, so the counters together
//! may pass the budget by what a block adds. Each worker is counted as holding at least half its
//! fair share ([`FLOOR_SHARE`]), so one worker filling the budget first leaves the others room
//! for their sketches and a sizeable chunk to spill, not a sliver after every block.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The fraction of its fair share a worker may always hold: a half.
const FLOOR_SHARE: usize = 2;

/// The budget of `workers` workers, and what each needs now.
#[derive(Debug)]
pub(crate) struct WorkerBudget {
    bytes: usize,
    needs: Vec<AtomicUsize>,
    /// The most the workers were seen needing together.
    peak: AtomicUsize,
}

impl WorkerBudget {
    /// `bytes` for `workers` workers (at least one), none of it used yet.
    pub(crate) fn new(bytes: usize, workers: usize) -> Self {
        let workers = workers.max(1);
        Self {
            bytes,
            needs: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            peak: AtomicUsize::new(0),
        }
    }

    /// What worker `worker` may hold now: the budget less what the others hold, each at least
    /// its floor.
    pub(crate) fn allowance(&self, worker: usize) -> usize {
        let floor = self.bytes / self.needs.len() / FLOOR_SHARE;
        let others: usize = self
            .needs
            .iter()
            .enumerate()
            .filter(|&(w, _)| w != worker)
            .map(|(_, need)| need.load(Ordering::Relaxed).max(floor))
            .sum();
        self.bytes.saturating_sub(others).max(floor)
    }

    /// Records that worker `worker` needs `bytes` now.
    pub(crate) fn report(&self, worker: usize, bytes: usize) {
        if let Some(need) = self.needs.get(worker) {
            need.store(bytes, Ordering::Relaxed);
        }
        let together: usize = self.needs.iter().map(|need| need.load(Ordering::Relaxed)).sum();
        self.peak.fetch_max(together, Ordering::Relaxed);
    }

    /// The most the workers needed together at any report.
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::WorkerBudget;

    #[test]
    fn a_worker_may_hold_what_the_others_do_not_and_never_less_than_its_floor() {
        let budget = WorkerBudget::new(96 << 20, 2);
        // An idle worker is counted at its floor, half of its half.
        assert_eq!(budget.allowance(1), 72 << 20);
        budget.report(0, 30 << 20);
        assert_eq!(budget.allowance(1), 66 << 20);
        assert_eq!(budget.allowance(0), 72 << 20);
        budget.report(1, 60 << 20);
        assert_eq!(budget.allowance(0), 36 << 20);
        assert_eq!(budget.peak(), 90 << 20);
        // A worker holding everything still leaves the other its floor.
        budget.report(1, 96 << 20);
        assert_eq!(budget.allowance(0), 24 << 20);
        budget.report(1, 1 << 20);
        assert_eq!(budget.peak(), 126 << 20);
        assert_eq!(budget.allowance(0), 72 << 20);
    }
}
