//! Which blocks of a file each worker reads. Each worker starts on one contiguous part of the
//! file, so that counters merged part by part in file order hold the values in file order
//! (ascending ids and timestamps stay ascending, which finishing folds in one pass). A fixed
//! split left one core idle whenever the other fell behind (it spilled more, or the machine
//! took its core away for a while): up to a quarter of a flat 1M-line profile's wall time ran
//! on one core. So a worker whose part is done takes the back half of the part with the most
//! blocks left, as a new part of its own: the parts stay contiguous and ordered.

use std::ops::Range;
use std::sync::Mutex;

/// The blocks not yet claimed, part by part.
#[derive(Debug)]
pub(crate) struct BlockClaims {
    /// Part `p`'s blocks not yet claimed; a part's first block is where it started.
    parts: Mutex<Vec<Part>>,
    /// Most parts there may be: a bound on the builders merged at the end.
    max_parts: usize,
}

#[derive(Debug, Clone)]
struct Part {
    first: u64,
    left: Range<u64>,
}

impl BlockClaims {
    /// `blocks` blocks split evenly into `workers` contiguous parts (at least one), with room
    /// for `max_steals` parts more taken from them.
    pub(crate) fn new(blocks: u64, workers: usize, max_steals: usize) -> Self {
        let workers = workers.max(1) as u64;
        let parts = (0..workers)
            .map(|w| {
                let left = blocks * w / workers..blocks * (w + 1) / workers;
                Part { first: left.start, left }
            })
            .collect();
        Self { parts: Mutex::new(parts), max_parts: workers as usize + max_steals }
    }

    /// Claims the next block of part `part`; `None` once it has none left.
    pub(crate) fn next(&self, part: usize) -> Option<u64> {
        let mut parts = self.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let left = &mut parts.get_mut(part)?.left;
        let block = left.start;
        (block < left.end).then(|| {
            left.start += 1;
            block
        })
    }

    /// Makes a new part of the back half (rounded up) of the part with the most blocks left,
    /// and returns it with its first block; `None` when no block is left or no part may be
    /// added.
    pub(crate) fn steal(&self) -> Option<(usize, u64)> {
        let mut parts = self.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if parts.len() >= self.max_parts {
            return None;
        }
        let victim = parts.iter_mut().max_by_key(|p| p.left.end - p.left.start)?;
        let count = victim.left.end - victim.left.start;
        if count == 0 {
            return None;
        }
        let split = victim.left.end - count.div_ceil(2);
        let taken = split..victim.left.end;
        victim.left.end = split;
        parts.push(Part { first: split, left: taken });
        Some((parts.len() - 1, split))
    }

    /// True while some part has a block not yet claimed.
    pub(crate) fn any_left(&self) -> bool {
        let parts = self.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        parts.iter().any(|p| p.left.start < p.left.end)
    }

    /// The first block of part `part`.
    pub(crate) fn first(&self, part: usize) -> Option<u64> {
        let parts = self.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        parts.get(part).map(|p| p.first)
    }
}

#[cfg(test)]
mod tests {
    use super::BlockClaims;

    /// Every block claimed once, in ascending order within each part.
    fn drain(claims: &BlockClaims, part: usize, out: &mut Vec<u64>) {
        let mut last = None;
        while let Some(k) = claims.next(part) {
            assert!(last.is_none_or(|l| l < k), "part {part} went back from {last:?} to {k}");
            last = Some(k);
            out.push(k);
        }
    }

    #[test]
    fn the_parts_split_the_blocks_evenly_and_in_order() {
        let claims = BlockClaims::new(7, 2, 0);
        assert_eq!(claims.first(0), Some(0));
        assert_eq!(claims.first(1), Some(3));
        let mut seen = Vec::new();
        drain(&claims, 1, &mut seen);
        drain(&claims, 0, &mut seen);
        assert_eq!(seen, [3, 4, 5, 6, 0, 1, 2]);
        assert!(!claims.any_left());
        assert_eq!(claims.steal(), None, "nothing left, nothing stolen");
    }

    #[test]
    fn a_steal_takes_the_back_half_of_the_largest_part() {
        let claims = BlockClaims::new(10, 2, 4);
        // Part 1 (blocks 5..10) done; part 0 has read block 0 only.
        assert_eq!(claims.next(0), Some(0));
        let mut seen = vec![0];
        drain(&claims, 1, &mut seen);
        // Part 0 has 1..5 left: the new part takes 3..5.
        assert!(claims.any_left());
        assert_eq!(claims.steal(), Some((2, 3)));
        assert_eq!(claims.first(2), Some(3));
        drain(&claims, 2, &mut seen);
        drain(&claims, 0, &mut seen);
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>(), "each block claimed exactly once");
    }

    #[test]
    fn a_single_block_left_is_taken_whole_and_steals_are_bounded() {
        let claims = BlockClaims::new(4, 2, 1);
        assert_eq!(claims.next(0), Some(0));
        assert_eq!(claims.next(0), Some(1));
        assert_eq!(claims.next(1), Some(2));
        // Part 1 has block 3 left: taken whole.
        assert_eq!(claims.steal(), Some((2, 3)));
        assert_eq!(claims.next(1), None, "the victim's block went to the thief");
        assert_eq!(claims.next(2), Some(3));
        assert_eq!(claims.steal(), None, "no part may be added past the bound");
        let bounded = BlockClaims::new(100, 2, 1);
        assert!(bounded.steal().is_some());
        assert_eq!(bounded.steal(), None);
    }

    #[test]
    fn concurrent_workers_claim_every_block_exactly_once() {
        let claims = BlockClaims::new(1000, 4, 64);
        let claimed: Vec<Vec<(usize, u64)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|w| {
                    let claims = &claims;
                    scope.spawn(move || {
                        let mut part = w;
                        let mut got = Vec::new();
                        loop {
                            while let Some(k) = claims.next(part) {
                                got.push((part, k));
                            }
                            match claims.steal() {
                                Some((p, _)) => part = p,
                                None => break got,
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
        });
        let mut blocks: Vec<u64> = claimed.iter().flatten().map(|&(_, k)| k).collect();
        blocks.sort_unstable();
        assert_eq!(blocks, (0..1000).collect::<Vec<_>>());
        // Each part is one contiguous run starting at its first block.
        let mut by_part = std::collections::BTreeMap::<usize, Vec<u64>>::new();
        for &(p, k) in claimed.iter().flatten() {
            by_part.entry(p).or_default().push(k);
        }
        for (p, mut ks) in by_part {
            ks.sort_unstable();
            assert_eq!(Some(ks[0]), claims.first(p));
            assert!(ks.windows(2).all(|w| w[1] == w[0] + 1), "part {p} has a gap: {ks:?}");
        }
    }
}
