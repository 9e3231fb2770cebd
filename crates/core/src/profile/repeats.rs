//! A streamed property's numbers counted as they come, once they are known to repeat.
//!
//! A numeric property's values are pushed one by one and sorted when they are spilled or
//! finished. For a property of a hundred thousand distinct prices over ten million rows, each
//! spill sorted millions of values to write a hundred thousand runs, and finishing merged those
//! runs again. When a spill finds the values it sorted repeat (few runs for many values), the
//! values that follow are counted in a table of distinct values instead: a table that stays in
//! cache, so the property holds its distinct values, not its items, and is rarely spilled again.
//! The same table ([`RepeatCounts`]) counts few-valued numbers when they are compacted or
//! finished (`numeric::count_few`).

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::string_counts::hasher;

/// Most distinct values counted; past it the property goes back to pushing values (a table of
/// this size no longer stays in cache).
const MOST_DISTINCT: usize = 1 << 18;

/// Least average number of times a spilled chunk's values repeat for the values that follow to
/// be counted.
pub(super) const LEAST_REPEATS: usize = 4;

/// Least average repeats for values to be counted when the memory budget would otherwise
/// sketch them: a distinct value counted needs about what two values pushed need.
pub(super) const REPEATS_TO_FIT: usize = 2;

/// Whether a spill of `values` values holding `distinct` distinct ones says the property's
/// values are worth counting.
pub(super) fn worth_counting(values: usize, distinct: usize) -> bool {
    repeat_enough(values, distinct, LEAST_REPEATS)
}

/// Whether `values` values holding `distinct` distinct ones repeat each `repeats` times on
/// average, with few enough distinct ones to count.
fn repeat_enough(values: usize, distinct: usize, repeats: usize) -> bool {
    distinct <= MOST_DISTINCT / 2 && distinct.saturating_mul(repeats) <= values
}

/// Bits of the bitmap distinct values are estimated on: 128 KiB, which stays in cache.
const ESTIMATE_BITS: u32 = 20;

/// Least values worth estimating before sorting: below it a sort is already cheap.
pub(super) const ESTIMATE_FROM: usize = 1 << 16;

/// About how many distinct values `values` holds, by linear counting over a bitmap (within a
/// few percent up to a few million distinct values; infinite past them): one pass costing a
/// fifteenth of a sort.
fn distinct_estimate<'a>(values: impl Iterator<Item = &'a f64>) -> f64 {
    distinct_hashes_estimate(values.map(|value| hasher().hash_one(value.to_bits())), ESTIMATE_BITS)
}

/// About how many distinct hashes `hashes` holds (of the process-wide [`hasher`]), by linear
/// counting over a bitmap of `2^bits` bits: within a few percent up to a few times `2^bits`
/// distinct hashes, infinite past them.
pub(super) fn distinct_hashes_estimate(hashes: impl Iterator<Item = u64>, bits: u32) -> f64 {
    let mut bitmap = vec![0u64; 1 << bits.saturating_sub(6)];
    for hash in hashes {
        let at = (hash >> (64 - bits)) as usize;
        bitmap[at >> 6] |= 1 << (at & 63);
    }
    let size = f64::from(1u32 << bits);
    let zeros = f64::from(bitmap.iter().map(|w| w.count_zeros()).sum::<u32>());
    -size * (zeros / size).ln()
}

/// The values of `parts` as distinct values in ascending order with their counts (equal
/// values as [`super::numeric::sorted_runs`] folds them: the two zeros one value, the first in
/// order kept), where an estimate says they repeat as [`worth_counting`] asks: a table of
/// distinct values counts them several times faster than sorting them all (a million prices of
/// 90,000 distinct values: 9 ms against 20 ms; four million: 28 ms against 127 ms). `None`
/// where they do not, for a few values, and for any NaN (which equals nothing).
pub(super) fn counted_if_repeating(parts: &[Vec<f64>]) -> Option<Vec<(f64, u64)>> {
    let n: usize = parts.iter().map(Vec::len).sum();
    if n < ESTIMATE_FROM {
        return None;
    }
    let estimate = distinct_estimate(parts.iter().flatten());
    if !(estimate.is_finite() && worth_counting(n, estimate as usize)) {
        return None;
    }
    let mut table = RepeatCounts::with_capacity(estimate as usize * 9 / 8);
    for value in parts.iter().flatten() {
        if value.is_nan() {
            return None;
        }
        // By their own bits: which zero comes first in order is kept, as sorting keeps it.
        table.add_bits(value.to_bits(), 1);
    }
    let mut distinct = table.into_counts();
    distinct.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    distinct.dedup_by(|later, first| {
        let same = later.0 == first.0;
        if same {
            first.1 += later.1;
        }
        same
    });
    Some(distinct)
}

/// `values` counted in a table, where an estimate says each repeats `repeats` times on average
/// (the check a spill makes, for a property that is not spilled: under `--no-spill`, or before
/// its first spill). `None` where they do not, and for any NaN.
pub(super) fn table_if_repeating(values: &[f64], repeats: usize) -> Option<RepeatCounts> {
    if values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let estimate = distinct_estimate(values.iter());
    if !(estimate.is_finite() && repeat_enough(values.len(), estimate as usize, repeats)) {
        return None;
    }
    let mut table = RepeatCounts::with_capacity(estimate as usize * 9 / 8);
    table.add_all(values).then_some(table)
}

/// Distinct values (by their bits; [`RepeatCounts::add`] makes the two zeros one) with their
/// counts.
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

    /// Counts `value` `n` more times (the two zeros as one value, as `==` says).
    pub(super) fn add(&mut self, value: f64, n: u64) {
        // `-0.0 + 0.0` is `0.0`.
        self.add_bits((value + 0.0).to_bits(), n);
    }

    /// Counts the value whose bits are `bits` `n` more times.
    fn add_bits(&mut self, bits: u64, n: u64) {
        let hash = |bits: u64| hasher().hash_one(bits);
        match self.table.entry(hash(bits), |e| e.0 == bits, |e| hash(e.0)) {
            hashbrown::hash_table::Entry::Occupied(mut entry) => entry.get_mut().1 += n,
            hashbrown::hash_table::Entry::Vacant(entry) => {
                entry.insert((bits, n));
            }
        }
    }

    /// Counts each of `values` once. False once the table holds more than [`MOST_DISTINCT`]
    /// values: the caller stops counting.
    pub(super) fn add_all(&mut self, values: &[f64]) -> bool {
        for &value in values {
            self.add(value, 1);
        }
        self.table.len() <= MOST_DISTINCT
    }

    /// Every counted value with its count, in no order.
    pub(super) fn into_counts(self) -> Vec<(f64, u64)> {
        self.table.into_iter().map(|(bits, n)| (f64::from_bits(bits), n)).collect()
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
    fn repeating_values_are_counted_as_sorting_folds_them_and_others_left_to_sorting() {
        let mut rng = fastrand::Rng::with_seed(17);
        let price = |rng: &mut fastrand::Rng| match rng.usize(..500) {
            0 => -0.0,
            1 => 0.0,
            _ => rng.i64(-5_000..20_000) as f64 / 100.0,
        };
        let parts: Vec<Vec<f64>> =
            (0..3).map(|_| (0..60_000).map(|_| price(&mut rng)).collect()).collect();
        let counted = counted_if_repeating(&parts).expect("prices repeat");
        let mut all = parts.concat();
        super::super::numeric::sort_values(&mut all);
        let sorted: Vec<(f64, u64)> = super::super::numeric::sorted_runs(&all).collect();
        assert_eq!(counted.len(), sorted.len());
        for (a, b) in counted.iter().zip(&sorted) {
            // Same value, same sign of zero (the first in order), same count.
            assert!(a.0.to_bits() == b.0.to_bits() && a.1 == b.1, "{a:?} against {b:?}");
        }
        // Mostly distinct values, a few values, and a NaN are left to sorting.
        let distinct: Vec<f64> = (0..200_000).map(|i| i as f64 * 0.5).collect();
        assert!(counted_if_repeating(&[distinct]).is_none());
        assert!(counted_if_repeating(&[vec![1.0; 1_000]]).is_none());
        let mut with_nan = parts[0].clone();
        with_nan[30_000] = f64::NAN;
        assert!(counted_if_repeating(&[with_nan, parts[1].clone()]).is_none());
        let estimate = distinct_estimate(parts.iter().flatten());
        assert!((estimate - sorted.len() as f64).abs() < sorted.len() as f64 * 0.05, "{estimate}");
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
