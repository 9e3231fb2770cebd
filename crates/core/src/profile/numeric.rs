//! Exact numeric summaries and histograms over sorted values.

use serde::Serialize;

/// One histogram bin. Bins are half-open `[min, max)` except the last, which includes `max`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistogramBin {
    /// Human-readable range, e.g. `0.2-0.4`, `25-49` (integers), `1e-8 to 2e-8`.
    pub range: String,
    /// Lower edge.
    pub min: f64,
    /// Upper edge.
    pub max: f64,
    /// Values in the bin.
    pub count: u64,
    /// Share of all values, in percent (see [`crate::figure::percent`]).
    pub percentage: f64,
}

/// Most bins the automatic rule picks; an explicit `bins` option may ask for up to [`MAX_BINS`].
pub const AUTO_MAX_BINS: usize = 20;
/// Most bins ever produced.
pub const MAX_BINS: usize = 100;

/// Numbers list their most frequent values only when they have at most this many distinct ones.
pub const NUMBER_TOP_DISTINCT: u64 = 20;

/// A counted number as a JSON value: written as an integer when every value of its property
/// was one, so top values read as they were written (`5`, not `5.0`).
pub fn number_value(v: f64, integer: bool) -> serde_json::Value {
    if integer && v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

pub use crate::figure::percent;

/// Distinct values past which [`ValueRuns::from_parts`] stops counting and sorts.
const COUNT_UP_TO: usize = 1 << 14;

/// Each distinct value of `values` with its count, or `None` once there are more than
/// [`COUNT_UP_TO`] distinct ones.
fn count_few<'a>(values: impl IntoIterator<Item = &'a f64>) -> Option<Vec<(f64, u64)>> {
    use std::hash::BuildHasher;
    let hash = |bits: u64| super::string_counts::hasher().hash_one(bits);
    let mut table: hashbrown::HashTable<(u64, u64)> = hashbrown::HashTable::new();
    for &value in values {
        // `-0.0 + 0.0` is `0.0`: the two zeros are one value, as `==` says.
        let bits = (value + 0.0).to_bits();
        let full = table.len() >= COUNT_UP_TO;
        match table.entry(hash(bits), |e| e.0 == bits, |e| hash(e.0)) {
            hashbrown::hash_table::Entry::Occupied(mut entry) => entry.get_mut().1 += 1,
            hashbrown::hash_table::Entry::Vacant(_) if full => return None,
            hashbrown::hash_table::Entry::Vacant(entry) => {
                entry.insert((bits, 1));
            }
        }
    }
    Some(table.into_iter().map(|(bits, n)| (f64::from_bits(bits), n)).collect())
}

/// Every value of a numeric property as its distinct values in ascending order, each with how
/// many times it occurred: exact order statistics and histograms without one entry per value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValueRuns {
    values: Vec<f64>,
    /// `ends[i]`: how many values are at most `values[i]`.
    ends: Vec<u64>,
}

impl ValueRuns {
    /// Runs of `values` in any order. Values that repeat a few thousand distinct ones (levels,
    /// prices, percentages) are counted in a table small enough to stay in cache and only the
    /// distinct ones are sorted; past [`COUNT_UP_TO`] distinct values, sorting them all is cheaper.
    pub fn from_values(values: Vec<f64>) -> Self {
        Self::from_parts(vec![values])
    }

    /// Runs of all the values of `parts` (one per thread that profiled), without gathering them
    /// into one vector first: counted across the parts, or each part sorted and the sorted parts
    /// merged.
    pub fn from_parts(mut parts: Vec<Vec<f64>>) -> Self {
        if let Some(counted) = count_few(parts.iter().flatten()) {
            return Self::from_counts(counted);
        }
        for part in &mut parts {
            part.sort_unstable_by(f64::total_cmp);
        }
        let mut heads: Vec<std::iter::Peekable<std::vec::IntoIter<f64>>> = parts.into_iter().map(|p| p.into_iter().peekable()).collect();
        let mut runs = Self::default();
        loop {
            // Few parts (one per core): finding the smallest head by scanning them is cheapest.
            let next = heads.iter_mut().filter_map(|h| h.peek().copied().map(|v| (v, h))).min_by(|a, b| a.0.total_cmp(&b.0));
            let Some((value, head)) = next else { break };
            head.next();
            runs.push(value, 1);
        }
        runs
    }

    /// Runs of values sorted ascending (equal values adjacent; `-0.0` and `0.0` are one value).
    pub fn from_sorted(sorted: &[f64]) -> Self {
        let mut runs = Self::default();
        for &v in sorted {
            runs.push(v, 1);
        }
        runs
    }

    /// Runs of distinct `(value, count)` pairs in any order.
    pub fn from_counts(mut pairs: Vec<(f64, u64)>) -> Self {
        pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut runs = Self { values: Vec::with_capacity(pairs.len()), ends: Vec::with_capacity(pairs.len()) };
        for (v, n) in pairs {
            runs.push(v, n);
        }
        runs
    }

    fn push(&mut self, value: f64, n: u64) {
        let before = self.count();
        match self.values.last() {
            Some(&last) if last == value => {
                if let Some(end) = self.ends.last_mut() {
                    *end += n;
                }
            }
            _ => {
                self.values.push(value);
                self.ends.push(before + n);
            }
        }
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Number of distinct values.
    pub fn distinct(&self) -> usize {
        self.values.len()
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> f64 {
        self.values.first().copied().unwrap_or(0.0)
    }

    /// Largest value (0 when empty).
    pub fn max(&self) -> f64 {
        self.values.last().copied().unwrap_or(0.0)
    }

    /// Each distinct value with its count, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.values.iter().zip(&self.ends).scan(0, |before, (&v, &end)| {
            let n = end - *before;
            *before = end;
            Some((v, n))
        })
    }

    /// The value of 0-based `rank` in ascending order.
    fn at_rank(&self, rank: u64) -> f64 {
        let run = self.ends.partition_point(|&end| end <= rank);
        self.values.get(run).or(self.values.last()).copied().unwrap_or(0.0)
    }

    /// The value at quantile `q` (0..=1), by linear interpolation between ranks.
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let position = q.clamp(0.0, 1.0) * (n - 1) as f64;
        let (low, high) = (position.floor(), position.ceil());
        let (a, b) = (self.at_rank(low as u64), self.at_rank(high as u64));
        a + (b - a) * (position - low)
    }

    /// Median (mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    /// Mean and sample standard deviation, by Welford's method weighted by run length (stable
    /// for large counts).
    pub fn mean_std(&self) -> (f64, f64) {
        let (mut seen, mut mean, mut m2) = (0u64, 0.0, 0.0);
        for (x, n) in self.iter() {
            seen += n;
            let delta = x - mean;
            mean += delta * n as f64 / seen as f64;
            m2 += delta * (x - mean) * n as f64;
        }
        let std = if seen > 1 { (m2 / (seen - 1) as f64).sqrt() } else { 0.0 };
        (mean, std)
    }

    /// How many values are below `edge`.
    pub(crate) fn count_below(&self, edge: f64) -> u64 {
        match self.values.partition_point(|&v| v < edge) {
            0 => 0,
            run => self.ends[run - 1],
        }
    }
}

/// The bin count the automatic rule picks: Freedman–Diaconis (robust to outliers), falling back
/// to Sturges when the interquartile range is zero, capped at [`AUTO_MAX_BINS`].
pub fn auto_bins(runs: &ValueRuns) -> usize {
    match runs.count() {
        0 | 1 => 1,
        n => auto_bins_for(n, runs.min(), runs.max(), runs.quantile(0.25), runs.quantile(0.75)),
    }
}

/// [`auto_bins`] from summary statistics alone: the count, the range and the quartiles (what a
/// database computes without sending the values).
pub fn auto_bins_for(count: u64, min: f64, max: f64, q1: f64, q3: f64) -> usize {
    if count < 2 {
        return 1;
    }
    let range = max - min;
    if range <= 0.0 {
        return 1;
    }
    let iqr = q3 - q1;
    let sturges = (count as f64).log2().ceil() as usize + 1;
    let bins = if iqr > 0.0 {
        let width = 2.0 * iqr / (count as f64).cbrt();
        (range / width).ceil() as usize
    } else {
        sturges
    };
    bins.clamp(1, AUTO_MAX_BINS)
}

pub use super::histogram::{BinScale, HistogramLayout, histogram};

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(values: &[f64]) -> ValueRuns {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        ValueRuns::from_sorted(&sorted)
    }

    #[test]
    fn median_and_std_are_exact() {
        assert_eq!(runs(&[1.0, 2.0, 3.0]).median(), 2.0);
        assert_eq!(runs(&[1.0, 2.0, 3.0, 10.0]).median(), 2.5);
        assert_eq!(runs(&[5.0, 1.0, 5.0, 5.0]).median(), 5.0);
        let (mean, std) = runs(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).mean_std();
        assert_eq!(mean, 5.0);
        assert!((std - 2.138_089_935).abs() < 1e-6, "{std}");
    }

    #[test]
    fn counted_and_sorted_runs_agree() {
        let few = vec![3.0, -0.0, 1.5, 3.0, 0.0, 3.0];
        assert_eq!(ValueRuns::from_values(few.clone()).iter().collect::<Vec<_>>(), [(0.0, 2), (1.5, 1), (3.0, 3)]);
        assert_eq!(ValueRuns::from_values(few.clone()), runs(&few));
        let many: Vec<f64> = (0..COUNT_UP_TO as u64 * 3).map(|i| ((i * 7919) % 50_000) as f64 * 0.5).collect();
        assert!(count_few(&many).is_none());
        assert_eq!(ValueRuns::from_values(many.clone()), runs(&many));
    }

    #[test]
    fn runs_from_counts_match_runs_from_sorted_values() {
        let counted = ValueRuns::from_counts(vec![(3.0, 2), (-1.5, 1), (0.0, 4), (-0.0, 1)]);
        let listed = runs(&[3.0, 0.0, -1.5, 0.0, 3.0, 0.0, -0.0, 0.0]);
        assert_eq!(counted.iter().map(|(_, n)| n).collect::<Vec<_>>(), [1, 5, 2]);
        assert_eq!(listed.iter().map(|(_, n)| n).collect::<Vec<_>>(), [1, 5, 2]);
        assert_eq!((counted.count(), counted.distinct(), counted.min(), counted.max()), (8, 3, -1.5, 3.0));
        assert_eq!(counted.quantile(0.25), listed.quantile(0.25));
        assert_eq!(counted.quantile(0.9), 3.0);
        assert_eq!(counted.count_below(0.0), 1);
        assert_eq!(counted.count_below(0.5), 6);
    }

    #[test]
    fn runs_from_parts_match_runs_of_all_values() {
        // Past the counting table (sorted and merged) and below it (counted across parts).
        for distinct in [COUNT_UP_TO * 2, 50] {
            let all: Vec<f64> = (0..60_000).map(|i| ((i * 7919) % distinct) as f64 / 4.0 - 100.0).chain([0.0, -0.0, -0.0]).collect();
            let parts: Vec<Vec<f64>> = vec![all[..10_000].to_vec(), Vec::new(), all[10_000..59_999].to_vec(), all[59_999..].to_vec()];
            assert_eq!(ValueRuns::from_parts(parts), runs(&all), "{distinct}");
        }
        assert_eq!(ValueRuns::from_parts(vec![Vec::new(), Vec::new()]).count(), 0);
    }

    #[test]
    fn auto_bins_stays_in_bounds() {
        let values: Vec<f64> = (0..100_000).map(f64::from).collect();
        assert_eq!(auto_bins(&runs(&values)), AUTO_MAX_BINS);
        assert_eq!(auto_bins(&runs(&[1.0])), 1);
        assert!(auto_bins(&runs(&[1.0, 2.0, 3.0])) >= 1);
    }
}
