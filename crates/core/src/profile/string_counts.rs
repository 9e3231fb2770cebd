//! Exact counts of distinct strings, stored without an allocation per string.
//!
//! A column of a million unique ids or timestamps would otherwise cost a million small
//! allocations to count and as many frees to drop. Here every distinct string is appended once to
//! one arena `String`, and a `hashbrown::HashTable` maps it, by hash, to its arena range and
//! count. Hashes are kept beside the ranges, and every table in the process hashes with the same
//! (randomly seeded) hasher, so merging the tables of parallel builders never rehashes a string.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    start: usize,
    len: usize,
    count: u64,
}

/// The process-wide hasher: seeded once at random, so crafted inputs cannot predict collisions.
fn hasher() -> &'static FixedState {
    static HASHER: OnceLock<FixedState> = OnceLock::new();
    HASHER.get_or_init(|| FixedState::with_seed(foldhash::fast::RandomState::default().hash_one(0x5c4e_u64)))
}

/// Distinct strings with their counts.
#[derive(Debug, Default)]
pub(crate) struct StringCounts {
    table: HashTable<Slot>,
    arena: String,
}

impl StringCounts {
    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Counts `value` `n` more times.
    pub fn add(&mut self, value: &str, n: u64) {
        let hash = hasher().hash_one(value);
        self.add_hashed(hash, value, n);
    }

    fn add_hashed(&mut self, hash: u64, value: &str, n: u64) {
        let arena = &self.arena;
        if let Some(slot) = self.table.find_mut(hash, |s| s.hash == hash && &arena[s.start..s.start + s.len] == value) {
            slot.count += n;
            return;
        }
        let start = self.arena.len();
        self.arena.push_str(value);
        self.table.insert_unique(hash, Slot { hash, start, len: value.len(), count: n }, |s| s.hash);
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, mut other: StringCounts) {
        if other.len() > self.len() {
            std::mem::swap(self, &mut other);
        }
        self.table.reserve(other.len(), |s| s.hash);
        for slot in other.table.iter() {
            self.add_hashed(slot.hash, &other.arena[slot.start..slot.start + slot.len], slot.count);
        }
    }

    /// Every distinct string with its count, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.table.iter().map(|s| (&self.arena[s.start..s.start + s.len], s.count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut all: Vec<(&str, u64)> = a.iter().collect();
        all.sort();
        assert_eq!(all, [("", 1), ("x", 3), ("y", 3), ("z", 1)]);
    }
}
