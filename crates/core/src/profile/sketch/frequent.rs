//! Frequent values past the memory budget: the Misra–Gries summary in its mergeable form
//! (Agarwal et al. 2012). Up to `2k` counters are kept; when they are full, the `(k+1)`-th
//! largest count is subtracted from every counter and those left at zero are dropped. Every
//! estimate is then at most the true count and at least the true count minus the total
//! subtracted, [`FrequentStrings::undercount`], which is at most `n / (k + 1)` — the bound the
//! output states. Purging frees at least `k` counters, so each value costs O(1) amortised.

use hashbrown::HashTable;

use crate::profile::string_counts::same_text;

/// Counters kept after a purge (`k`); the table holds up to twice as many.
const KEEP: usize = 2_048;
/// Most values the sketch holds at once.
pub(crate) const FREQUENT_KEPT: usize = 2 * KEEP;

#[derive(Debug, Clone, Copy)]
struct Counter {
    hash: u64,
    start: usize,
    len: usize,
    count: u64,
}

/// The frequent strings of a property, with a bound on how far each count may be low.
#[derive(Debug, Default)]
pub(crate) struct FrequentStrings {
    table: HashTable<Counter>,
    arena: String,
    /// The total subtracted from every counter so far (the error bound).
    undercount: u64,
    /// Buffers a purge reuses.
    scratch: Scratch,
}

/// What [`FrequentStrings::purge`] reuses from one purge to the next.
#[derive(Debug, Default)]
struct Scratch {
    counts: Vec<u64>,
    kept: Vec<Counter>,
}

impl FrequentStrings {
    /// How much any count may be below the true one.
    pub(crate) fn undercount(&self) -> u64 {
        self.undercount
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        // Not the purge's scratch (a few KiB): counting it would move the budget's decisions.
        self.table.capacity() * std::mem::size_of::<Counter>() + self.arena.capacity()
    }

    /// Counts `value` (whose hash is `hash`) `n` more times.
    pub(crate) fn add(&mut self, hash: u64, value: &str, n: u64) {
        let arena = &mut self.arena;
        match self.table.entry(
            hash,
            |c| {
                c.hash == hash
                    && arena
                        .get(c.start..c.start + c.len)
                        .is_some_and(|held| same_text(held, value))
            },
            |c| c.hash,
        ) {
            hashbrown::hash_table::Entry::Occupied(mut slot) => slot.get_mut().count += n,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                let start = arena.len();
                arena.push_str(value);
                vacant.insert(Counter { hash, start, len: value.len(), count: n });
            }
        }
        if self.table.len() > 2 * KEEP {
            self.purge();
        }
    }

    /// Subtracts the `(k+1)`-th largest count from all and drops the counters at zero; the arena
    /// is rebuilt with the survivors only.
    ///
    /// The survivors go back into the emptied table in the order it listed them, as into a fresh
    /// table of the same size (a table of `2k + 1` counters, which is what a full table holds):
    /// the table lists them in the same order afterwards, so merges, which purge part way
    /// through, keep the same values. Only the table's memory is reused (a property of a million
    /// distinct values purges every two thousand of them); the arena is allocated anew at the
    /// size it had, as the memory budget counts it.
    fn purge(&mut self) {
        let mut counts = std::mem::take(&mut self.scratch.counts);
        counts.clear();
        counts.extend(self.table.iter().map(|c| c.count));
        let cut = if counts.len() > KEEP {
            let (_, kth, _) = counts.select_nth_unstable_by(KEEP, |a, b| b.cmp(a));
            *kth
        } else {
            0
        };
        self.scratch.counts = counts;
        if cut == 0 {
            return;
        }
        self.undercount += cut;
        let mut arena = String::with_capacity(self.arena.len());
        let mut kept = std::mem::take(&mut self.scratch.kept);
        kept.clear();
        for c in self.table.iter().filter(|c| c.count > cut) {
            let text = self.arena.get(c.start..c.start + c.len).unwrap_or_default();
            let start = arena.len();
            arena.push_str(text);
            kept.push(Counter { start, count: c.count - cut, ..*c });
        }
        self.table.clear();
        // A no-op for a table of the usual size; one grown past it is cut back to it.
        self.table.shrink_to(2 * KEEP + 1, |c| c.hash);
        for c in kept.drain(..) {
            self.table.insert_unique(c.hash, c, |c| c.hash);
        }
        self.scratch.kept = kept;
        self.arena = arena;
    }

    /// Adds `other`'s counts; the bounds add up.
    pub(crate) fn merge(&mut self, other: &FrequentStrings) {
        self.undercount += other.undercount;
        for c in other.table.iter() {
            let text = other.arena.get(c.start..c.start + c.len).unwrap_or_default();
            self.add(c.hash, text, c.count);
        }
    }

    /// Every kept value with its estimated count (a lower bound of the true count).
    pub(crate) fn counts(&self) -> Vec<(&str, u64)> {
        self.table
            .iter()
            .map(|c| (self.arena.get(c.start..c.start + c.len).unwrap_or_default(), c.count))
            .collect()
    }
}

/// The hash [`FrequentStrings`] and the distinct sketch take for a string (one hash for both):
/// fixed-seeded, so a distinct estimate is the same on every run.
pub(crate) fn string_hash(value: &str) -> u64 {
    super::fixed_hash(value.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The purge as it was before its table was reused: survivors into a fresh table and arena.
    fn purge_into_fresh_table(sketch: &mut FrequentStrings) {
        let mut counts: Vec<u64> = sketch.table.iter().map(|c| c.count).collect();
        let cut = if counts.len() > KEEP {
            let (_, kth, _) = counts.select_nth_unstable_by(KEEP, |a, b| b.cmp(a));
            *kth
        } else {
            0
        };
        if cut == 0 {
            return;
        }
        sketch.undercount += cut;
        let kept = sketch.arena.len();
        let old_arena = std::mem::replace(&mut sketch.arena, String::with_capacity(kept));
        let old = std::mem::replace(&mut sketch.table, HashTable::with_capacity(2 * KEEP + 1));
        for c in old {
            if c.count > cut {
                let text = old_arena.get(c.start..c.start + c.len).unwrap_or_default();
                let start = sketch.arena.len();
                sketch.arena.push_str(text);
                sketch.table.insert_unique(
                    c.hash,
                    Counter { start, count: c.count - cut, ..c },
                    |c| c.hash,
                );
            }
        }
    }

    /// [`FrequentStrings::add`] with the purge of before.
    fn add_as_before(sketch: &mut FrequentStrings, hash: u64, value: &str, n: u64) {
        let arena = &mut sketch.arena;
        match sketch.table.entry(
            hash,
            |c| c.hash == hash && arena.get(c.start..c.start + c.len) == Some(value),
            |c| c.hash,
        ) {
            hashbrown::hash_table::Entry::Occupied(mut slot) => slot.get_mut().count += n,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                let start = arena.len();
                arena.push_str(value);
                vacant.insert(Counter { hash, start, len: value.len(), count: n });
            }
        }
        if sketch.table.len() > 2 * KEEP {
            purge_into_fresh_table(sketch);
        }
    }

    #[test]
    fn a_purge_reusing_its_table_keeps_what_a_fresh_table_kept_in_the_same_order() {
        // Skewed values with repeats, so purges keep survivors, and merges part way through.
        let mut rng = fastrand::Rng::with_seed(0x5eed_0fa1);
        let value = |rng: &mut fastrand::Rng| match rng.u8(..4) {
            0 => format!("hot-{}", rng.u32(..50)),
            1 => format!("warm-{}", rng.u32(..5_000)),
            _ => format!("cold-{}-{}", rng.u64(..), "x".repeat(rng.usize(..40))),
        };
        let (mut now, mut before) = (FrequentStrings::default(), FrequentStrings::default());
        let (mut other_now, mut other_before) =
            (FrequentStrings::default(), FrequentStrings::default());
        for i in 0..60_000 {
            let v = value(&mut rng);
            let n = 1 + u64::from(rng.u8(..3) == 0) * rng.u64(..4);
            if i % 3 == 0 {
                other_now.add(string_hash(&v), &v, n);
                add_as_before(&mut other_before, string_hash(&v), &v, n);
            } else {
                now.add(string_hash(&v), &v, n);
                add_as_before(&mut before, string_hash(&v), &v, n);
            }
        }
        // The merge purges as it goes, in the order the other table lists its counters.
        now.merge(&other_now);
        for c in other_before.table.iter() {
            let text = other_before.arena.get(c.start..c.start + c.len).unwrap_or_default();
            add_as_before(&mut before, c.hash, text, c.count);
        }
        before.undercount += other_before.undercount;
        assert!(now.undercount() > 0);
        assert_eq!(now.undercount(), before.undercount());
        assert_eq!(now.counts(), before.counts());
        assert_eq!(now.bytes(), before.bytes());
    }

    #[test]
    fn heavy_values_are_found_and_each_count_is_within_its_bound() {
        // 30 heavy values with known counts among 300,000 unique ones.
        let mut exact: std::collections::HashMap<String, u64> = Default::default();
        let mut sketch = FrequentStrings::default();
        let mut other = FrequentStrings::default();
        for i in 0..300_000u64 {
            let value = if i % 3 == 0 { format!("heavy-{}", i % 30) } else { format!("u-{i}") };
            *exact.entry(value.clone()).or_default() += 1;
            let side = if i % 2 == 0 { &mut sketch } else { &mut other };
            side.add(string_hash(&value), &value, 1);
        }
        sketch.merge(&other);
        let bound = sketch.undercount();
        assert!(bound <= 300_000 / (KEEP as u64 + 1) * 2, "{bound}");
        let counts: std::collections::HashMap<&str, u64> = sketch.counts().into_iter().collect();
        for (value, &truth) in &exact {
            let estimate = counts.get(value.as_str()).copied().unwrap_or(0);
            assert!(
                estimate <= truth && truth <= estimate + bound,
                "{value}: {estimate} vs {truth}"
            );
        }
        for h in (0..30).step_by(3) {
            assert!(counts.contains_key(format!("heavy-{h}").as_str()));
        }
    }
}
