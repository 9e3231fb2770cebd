//! A streamed property's numbers counted as they come, once they are known to repeat.
//!
//! A numeric property's values are pushed one by one and sorted when they are spilled or
//! finished. For a property of a hundred thousand distinct prices over ten million rows, each
//! spill sorted millions of values to write a hundred thousand runs, and finishing merged those
//! runs again. When a spill finds the values it sorted repeat (few runs for many values), the
//! values that follow are counted in a table of distinct values instead: a table that stays in
//! cache, so the property holds its distinct values, not its items, and is rarely spilled again.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::string_counts::hasher;

/// Most distinct values counted; past it the property goes back to pushing values (a table of
/// this size no longer stays in cache).
const MOST_DISTINCT: usize = 1 << 18;

/// Least average number of times a spilled chunk's values repeat for the values that follow to
/// be counted.
const LEAST_REPEATS: usize = 4;

/// Whether a spill of `values` values holding `distinct` distinct ones says the property's
/// values are worth counting.
pub(super) fn worth_counting(values: usize, distinct: usize) -> bool {
    distinct <= MOST_DISTINCT / 2 && distinct.saturating_mul(LEAST_REPEATS) <= values
}

/// Distinct values (by their bits, the two zeros as one) with their counts.
#[derive(Debug, Default)]
pub(super) struct RepeatCounts {
    table: HashTable<(u64, u64)>,
}

impl RepeatCounts {
    /// A table sized for `distinct` values.
    pub(super) fn with_capacity(distinct: usize) -> Self {
        Self { table: HashTable::with_capacity(distinct) }
    }

    /// Distinct values counted.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Counts each of `values` once. False once the table holds more than [`MOST_DISTINCT`]
    /// values: the caller stops counting.
    pub(super) fn add_all(&mut self, values: &[f64]) -> bool {
        let hash = |bits: u64| hasher().hash_one(bits);
        for &value in values {
            // `-0.0 + 0.0` is `0.0`: the two zeros are one value, as `==` says.
            let bits = (value + 0.0).to_bits();
            match self.table.entry(hash(bits), |e| e.0 == bits, |e| hash(e.0)) {
                hashbrown::hash_table::Entry::Occupied(mut entry) => entry.get_mut().1 += 1,
                hashbrown::hash_table::Entry::Vacant(entry) => {
                    entry.insert((bits, 1));
                }
            }
        }
        self.table.len() <= MOST_DISTINCT
    }

    /// Moves every counted value onto `counted` (in no order), leaving the table empty with its
    /// memory kept.
    pub(super) fn drain_into(&mut self, counted: &mut Vec<(f64, u64)>) {
        counted.extend(self.table.drain().map(|(bits, n)| (f64::from_bits(bits), n)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_value_with_both_zeros_as_one() {
        let mut counts = RepeatCounts::with_capacity(4);
        assert!(counts.add_all(&[1.5, -0.0, 0.0, 1.5, 2.0, 1.5]));
        assert_eq!(counts.len(), 3);
        let mut counted = Vec::new();
        counts.drain_into(&mut counted);
        counted.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(counted, vec![(0.0, 2), (1.5, 3), (2.0, 1)]);
        assert_eq!(counts.len(), 0);
    }

    #[test]
    fn says_when_the_table_outgrows_its_bound() {
        let mut counts = RepeatCounts::default();
        let values: Vec<f64> = (0..=MOST_DISTINCT).map(|i| i as f64).collect();
        assert!(!counts.add_all(&values));
        assert!(worth_counting(1_000, 250));
        assert!(!worth_counting(1_000, 251));
        assert!(!worth_counting(usize::MAX, MOST_DISTINCT));
    }
}
