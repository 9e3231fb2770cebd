//! Exact counts of distinct strings, stored without an allocation per string.
//!
//! Every string lives in one arena `String`; what is kept per string is its hash, its arena range
//! and its count. Two layouts, because the two common kinds of string property behave opposite:
//!
//! - **Few distinct values** (`kind`, `region`): a `hashbrown::HashTable` finds the value's slot
//!   and bumps its count. The table stays small and in cache.
//! - **Mostly distinct values** (ids, timestamps): a hash table of a million entries turns every
//!   value into cache misses, and merging two such tables is as costly again. Once a property
//!   looks like this (past [`LOG_AFTER`] distinct values, more than half of all values), every
//!   occurrence is instead *appended* to a log — sequential writes only — and the log is sorted by
//!   hash and folded into counts once, at the end ([`StringCounts::compact`]). Merging two logs
//!   is a concatenation.
//!
//! Either way the counts are exact. Every table in the process hashes with the same randomly
//! seeded hasher, so hashes computed by one thread stay valid in another's table.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

/// Distinct values past which a mostly-distinct property switches to the log layout.
const LOG_AFTER: usize = 4_096;

#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    start: usize,
    len: usize,
    count: u64,
}

/// String equality without a call to `memcmp` for short strings: every key and every repeated
/// value of every item is compared once, and most are a few bytes long, shorter than the call.
/// Up to 16 bytes, two overlapping word loads from each end cover every byte.
#[inline]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The `N` bytes of `bytes` at `at` (in bounds: callers check the length).
#[inline]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut word = [0; N];
    word.copy_from_slice(&bytes[at..at + N]);
    word
}

/// The process-wide hasher: seeded once at random, so crafted inputs cannot predict collisions.
pub(crate) fn hasher() -> &'static FixedState {
    static HASHER: OnceLock<FixedState> = OnceLock::new();
    HASHER.get_or_init(|| FixedState::with_seed(foldhash::fast::RandomState::default().hash_one(0x5c4e_u64)))
}

/// Distinct strings with their counts.
#[derive(Debug, Default)]
pub(crate) struct StringCounts {
    table: HashTable<Slot>,
    /// Occurrences in the log layout (unsorted until [`StringCounts::compact`]).
    log: Vec<Slot>,
    logging: bool,
    compacted: bool,
    arena: String,
    total: u64,
}

impl StringCounts {
    /// Number of distinct strings; exact after [`StringCounts::compact`], an upper bound before.
    pub fn len(&self) -> usize {
        self.table.len() + self.log.len()
    }

    /// Counts `value` `n` more times.
    pub fn add(&mut self, value: &str, n: u64) {
        let hash = hasher().hash_one(value);
        self.add_hashed(hash, value, n);
    }

    fn add_hashed(&mut self, hash: u64, value: &str, n: u64) {
        self.total += n;
        if self.logging {
            self.log.push(Slot { hash, start: self.arena.len(), len: value.len(), count: n });
            self.arena.push_str(value);
            self.compacted = false;
            return;
        }
        let arena = &mut self.arena;
        match self.table.entry(hash, |s| s.hash == hash && same_text(&arena[s.start..s.start + s.len], value), |s| s.hash) {
            hashbrown::hash_table::Entry::Occupied(mut slot) => slot.get_mut().count += n,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                let start = arena.len();
                arena.push_str(value);
                vacant.insert(Slot { hash, start, len: value.len(), count: n });
                if self.table.len() > LOG_AFTER && self.table.len() as u64 * 2 > self.total {
                    self.start_logging();
                }
            }
        }
    }

    fn start_logging(&mut self) {
        self.logging = true;
        self.compacted = false;
        self.log.extend(self.table.drain());
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, mut other: StringCounts) {
        if self.logging || other.logging {
            if !self.logging {
                self.start_logging();
            }
            let base = self.arena.len();
            self.arena.push_str(&other.arena);
            self.total += other.total;
            let rebase = |s: Slot| Slot { start: s.start + base, ..s };
            self.log.extend(other.log.into_iter().map(rebase));
            self.log.extend(other.table.drain().map(rebase));
            self.compacted = false;
            return;
        }
        if other.len() > self.len() {
            std::mem::swap(self, &mut other);
        }
        for slot in other.table.iter() {
            self.add_hashed(slot.hash, &other.arena[slot.start..slot.start + slot.len], slot.count);
        }
    }

    /// Folds the log into one slot per distinct string, keeping the log's order (which is the
    /// arena's, so later passes over the values read memory front to back instead of jumping).
    ///
    /// Only a small index of (hash, position) pairs is sorted: hashes are uniform, so a two-pass
    /// radix sort on their top 16 bits leaves runs of a few pairs to finish. Texts are compared
    /// only within a run of equal hashes (the same string, or a rare collision); each repeat's
    /// count goes to the first occurrence and the repeat is dropped.
    pub fn compact(&mut self) {
        if !self.logging || self.compacted {
            return;
        }
        let mut order: Vec<(u64, usize)> = self.log.iter().enumerate().map(|(i, s)| (s.hash, i)).collect();
        radsort::sort_by_key(&mut order, |&(hash, _)| (hash >> 48) as u16);
        for run in order.chunk_by_mut(|a, b| a.0 >> 48 == b.0 >> 48) {
            run.sort_unstable();
        }
        let arena = &self.arena;
        let text = |s: &Slot| &arena[s.start..s.start + s.len];
        let mut repeat = vec![false; self.log.len()];
        for run in order.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
            // Positions ascend within a run, so the first of equal texts is the earliest.
            for (k, &(_, later)) in run.iter().enumerate().skip(1) {
                let first = run[..k].iter().map(|&(_, i)| i).find(|&i| !repeat[i] && text(&self.log[i]) == text(&self.log[later]));
                if let Some(first) = first {
                    self.log[first].count += self.log[later].count;
                    repeat[later] = true;
                }
            }
        }
        let mut position = 0;
        self.log.retain(|_| {
            position += 1;
            !repeat[position - 1]
        });
        self.log.shrink_to_fit();
        self.compacted = true;
    }

    /// Every distinct string with its count: a table's in no particular order, a log's in order
    /// of first appearance. Call
    /// [`StringCounts::compact`] first, or strings in the log may repeat.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.table.iter().chain(self.log.iter()).map(|s| (&self.arena[s.start..s.start + s.len], s.count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(counts: &mut StringCounts) -> Vec<(String, u64)> {
        counts.compact();
        let mut all: Vec<(String, u64)> = counts.iter().map(|(s, n)| (s.to_string(), n)).collect();
        all.sort();
        all
    }

    #[test]
    fn same_text_compares_every_byte_at_every_length() {
        let base: String = ('a'..='z').collect();
        for len in 0..=base.len() {
            let a = &base[..len];
            assert!(same_text(a, a));
            for at in 0..len {
                let mut b = a.as_bytes().to_vec();
                b[at] = b'#';
                assert!(!same_text(a, std::str::from_utf8(&b).unwrap_or_default()), "{a} at {at}");
            }
            assert!(!same_text(a, &base[..len.saturating_sub(1)]) || len == 0);
        }
    }

    #[test]
    fn counts_and_merges_exactly() {
        let mut a = StringCounts::default();
        for s in ["x", "y", "x", "", "x"] {
            a.add(s, 1);
        }
        let mut b = StringCounts::default();
        b.add("y", 2);
        b.add("z", 1);
        a.merge(b);
        let expected: Vec<(String, u64)> = [("", 1), ("x", 3), ("y", 3), ("z", 1)].iter().map(|(s, n)| (s.to_string(), *n)).collect();
        assert_eq!(sorted(&mut a), expected);
    }

    #[test]
    fn mostly_distinct_values_switch_to_the_log_and_stay_exact() {
        let mut a = StringCounts::default();
        let mut b = StringCounts::default();
        for i in 0..10_000 {
            a.add(&format!("id-{i}"), 1);
            b.add(&format!("id-{}", i + 5_000), 1);
        }
        b.add("id-1", 1);
        assert!(a.logging && b.logging);
        a.merge(b);
        let all = sorted(&mut a);
        assert_eq!(all.len(), 15_000);
        assert_eq!(all.iter().map(|(_, n)| n).sum::<u64>(), 20_001);
        assert_eq!(all.iter().find(|(s, _)| s == "id-1").map(|(_, n)| *n), Some(2));
        assert_eq!(all.iter().find(|(s, _)| s == "id-7000").map(|(_, n)| *n), Some(2));
    }

    #[test]
    fn a_table_merges_into_a_log() {
        let mut small = StringCounts::default();
        small.add("id-3", 4);
        let mut big = StringCounts::default();
        for i in 0..10_000 {
            big.add(&format!("id-{i}"), 1);
        }
        small.merge(big);
        let all = sorted(&mut small);
        assert_eq!(all.len(), 10_000);
        assert_eq!(all.iter().find(|(s, _)| s == "id-3").map(|(_, n)| *n), Some(5));
    }
}
