//! Exact counts of a property's numbers, in the layout that suits how many distinct ones it has.
//!
//! Most numeric properties repeat a few thousand values (levels, prices, percentages): a small
//! hash table of value → count holds them, stays in cache, and finishing means sorting only the
//! distinct values. A property of mostly distinct numbers (ids, timestamps, measurements) would
//! turn that table into cache misses, so past [`TABLE_UP_TO`] distinct values every number is
//! appended to a plain list instead and the list is sorted once at the end. Either way the result
//! is the same exact [`ValueRuns`].

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::numeric::ValueRuns;
use super::string_counts::hasher;

/// Distinct values past which the table spills into the list.
const TABLE_UP_TO: usize = 1 << 16;

/// Every number seen at one path.
#[derive(Debug, Default)]
pub(crate) struct NumberCounts {
    /// (bits of the value, count), while the values are few.
    table: HashTable<(u64, u64)>,
    /// Every value, once the table has spilled.
    list: Vec<f64>,
    listing: bool,
}

fn hash(bits: u64) -> u64 {
    hasher().hash_one(bits)
}

impl NumberCounts {
    /// Counts `value` once more.
    pub fn add(&mut self, value: f64) {
        // `-0.0 + 0.0` is `0.0`: the two zeros are one value, as `==` says.
        let value = value + 0.0;
        if self.listing {
            self.list.push(value);
            return;
        }
        self.add_counted(value, 1);
    }

    fn add_counted(&mut self, value: f64, n: u64) {
        let bits = value.to_bits();
        let full = self.table.len() >= TABLE_UP_TO;
        let spill = match self.table.entry(hash(bits), |e| e.0 == bits, |e| hash(e.0)) {
            hashbrown::hash_table::Entry::Occupied(mut entry) => {
                entry.get_mut().1 += n;
                false
            }
            hashbrown::hash_table::Entry::Vacant(entry) if !full => {
                entry.insert((bits, n));
                false
            }
            hashbrown::hash_table::Entry::Vacant(_) => true,
        };
        if spill {
            self.spill();
            self.list.extend(std::iter::repeat_n(value, n as usize));
        }
    }

    /// Moves the table's counts into the list and lists from now on.
    fn spill(&mut self) {
        if self.listing {
            return;
        }
        self.listing = true;
        for (bits, n) in self.table.drain() {
            self.list.extend(std::iter::repeat_n(f64::from_bits(bits), n as usize));
        }
    }

    /// Adds every number of `other`.
    pub fn merge(&mut self, mut other: NumberCounts) {
        if other.listing && !self.listing {
            std::mem::swap(self, &mut other);
        }
        if self.listing {
            other.spill();
            self.list.append(&mut other.list);
            return;
        }
        for (bits, n) in other.table.drain() {
            if self.listing {
                self.list.extend(std::iter::repeat_n(f64::from_bits(bits), n as usize));
            } else {
                self.add_counted(f64::from_bits(bits), n);
            }
        }
    }

    /// The distinct values in order with their counts.
    pub fn into_runs(self) -> ValueRuns {
        if self.listing {
            let mut list = self.list;
            list.sort_unstable_by(f64::total_cmp);
            ValueRuns::from_sorted(&list)
        } else {
            ValueRuns::from_counts(self.table.into_iter().map(|(bits, n)| (f64::from_bits(bits), n)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(values: &[f64]) -> ValueRuns {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        ValueRuns::from_sorted(&sorted)
    }

    #[test]
    fn few_distinct_values_are_counted_exactly() {
        let values = [3.0, -0.0, 1.5, 3.0, 0.0, 3.0];
        let mut counts = NumberCounts::default();
        values.iter().for_each(|&v| counts.add(v));
        assert!(!counts.listing);
        let runs = counts.into_runs();
        assert_eq!(runs.iter().collect::<Vec<_>>(), [(0.0, 2), (1.5, 1), (3.0, 3)]);
        assert_eq!(runs, listed(&values));
    }

    #[test]
    fn many_distinct_values_spill_and_merge_in_every_combination() {
        let many: Vec<f64> = (0..TABLE_UP_TO + 10).map(|i| i as f64 * 0.5).collect();
        let few = [1.0, 1.0, 7.25, -3.0];
        for (left, right) in [(&many[..], &few[..]), (&few[..], &many[..]), (&many[..], &many[..]), (&few[..], &few[..])] {
            let (mut a, mut b) = (NumberCounts::default(), NumberCounts::default());
            left.iter().for_each(|&v| a.add(v));
            right.iter().for_each(|&v| b.add(v));
            assert_eq!(a.listing, left.len() > TABLE_UP_TO);
            a.merge(b);
            let all: Vec<f64> = left.iter().chain(right).copied().collect();
            assert_eq!(a.into_runs(), listed(&all));
        }
    }

    #[test]
    fn merged_tables_spill_when_together_they_are_too_many() {
        let (mut a, mut b) = (NumberCounts::default(), NumberCounts::default());
        (0..TABLE_UP_TO).for_each(|i| a.add(i as f64));
        (0..TABLE_UP_TO).for_each(|i| b.add(-(i as f64) - 1.0));
        assert!(!a.listing && !b.listing);
        a.merge(b);
        assert!(a.listing);
        let runs = a.into_runs();
        assert_eq!((runs.count(), runs.distinct()), (2 * TABLE_UP_TO as u64, 2 * TABLE_UP_TO));
    }
}
