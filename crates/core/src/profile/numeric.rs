//! Exact numeric summaries and histograms over sorted values.

use serde::Serialize;

use super::exact::{NumberKey, Quarters, interpolate, power_of_two, quarter_ranks};
use super::model::ValueCount;

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

/// The most frequent numbers, most frequent first and ties in ascending order, when there are at
/// most [`NUMBER_TOP_DISTINCT`] distinct ones (else none). `integers`: every value of the
/// property was written as an integer, so each is shown as one (`5`, not `5.0`), exactly.
pub fn top_numbers(
    runs: impl IntoIterator<Item = (NumberKey, u64)>,
    integers: bool,
) -> Vec<ValueCount> {
    let mut counted: Vec<(NumberKey, u64)> = runs.into_iter().collect();
    if counted.len() as u64 > NUMBER_TOP_DISTINCT {
        return Vec::new();
    }
    counted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.order(b.0)));
    counted.into_iter().map(|(v, count)| ValueCount { value: v.to_json(integers), count }).collect()
}

pub use crate::figure::percent;

/// Sorts `values` as `total_cmp` orders them: a radix sort by the doubles' bits, in a few passes
/// instead of a comparison sort's log n (sorting is most of finishing a property of a million
/// distinct numbers). Values that arrived in order (ids, times) need none.
pub(super) fn sort_values(values: &mut [f64]) {
    if !values.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
        radsort::sort(values);
    }
}

/// The runs of `sorted` (ascending as [`sort_values`] leaves them): each distinct value with how
/// many times it occurs. `-0.0` and `0.0` are one value, as `==` says (the first is kept).
pub(super) fn sorted_runs(sorted: &[f64]) -> impl Iterator<Item = (f64, u64)> + '_ {
    let mut rest = sorted;
    std::iter::from_fn(move || {
        let value = *rest.first()?;
        let n = run_len(rest);
        rest = &rest[n..];
        Some((value, n as u64))
    })
}

/// How many values `sorted` starts with equal to its first: at least one (a NaN equals nothing,
/// so each is a run of its own), none when it is empty.
fn run_len(sorted: &[f64]) -> usize {
    match sorted.split_first() {
        Some((&first, rest)) => 1 + rest.iter().position(|&v| v != first).unwrap_or(rest.len()),
        None => 0,
    }
}

/// The values of `parts` in ascending order where each part ascends (a column of ids or times
/// that the threads read stretches of): merged, where sorting them all would undo the order
/// each thread saw. `None` otherwise, or for fewer than two parts holding values.
fn merged_in_order(parts: &[Vec<f64>]) -> Option<Vec<f64>> {
    use std::borrow::Cow;
    let ascends = |part: &&Vec<f64>| part.is_sorted_by(|a, b| a.total_cmp(b).is_le());
    let parts: Vec<&Vec<f64>> = parts.iter().filter(|p| !p.is_empty()).collect();
    if parts.len() < 2 || !parts.iter().all(ascends) {
        return None;
    }
    let mut runs: Vec<Cow<'_, [f64]>> = parts.into_iter().map(|p| Cow::Borrowed(&p[..])).collect();
    // Pairs merged until one run is left: a handful of parts (one per core), so a few passes.
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut pending = runs.into_iter();
        while let Some(a) = pending.next() {
            next.push(match pending.next() {
                Some(b) => Cow::Owned(merge_two(&a, &b)),
                None => a,
            });
        }
        runs = next;
    }
    runs.pop().map(Cow::into_owned)
}

/// Two ascending runs as one (the first's equal values before the second's).
fn merge_two(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    // Runs that follow one another (stretches read in order) are copied whole.
    if let (Some(last), Some(first)) = (a.last(), b.first())
        && last.total_cmp(first).is_le()
    {
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        return out;
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Distinct values past which [`ValueRuns::from_parts`] stops counting and sorts.
const COUNT_UP_TO: usize = 1 << 14;

/// Each distinct value of `values` (each given with a count) with its total count, or `None`
/// once there are more than `COUNT_UP_TO` distinct ones.
pub(super) fn count_few(values: impl IntoIterator<Item = (f64, u64)>) -> Option<Vec<(f64, u64)>> {
    let mut table = super::repeats::RepeatCounts::default();
    for (value, n) in values {
        table.add(value, n);
        if table.len() > COUNT_UP_TO {
            return None;
        }
    }
    Some(table.into_counts())
}

/// Every value of a numeric property as its distinct values in ascending order, each with how
/// many times it occurred: exact order statistics and histograms without one entry per value.
///
/// Values are doubles, except integers past 2^53 that a double cannot hold: those carry their
/// offset from the nearest double (see [`NumberKey`]), kept only when there are any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValueRuns {
    values: Vec<f64>,
    /// Each value's offset from its double; empty when every offset is 0.
    offsets: Vec<i64>,
    /// `ends[i]`: how many values are at most `values[i]`.
    ends: Vec<u64>,
}

impl ValueRuns {
    /// Runs of `values` in any order. Values that repeat a few thousand distinct ones (levels,
    /// prices, percentages) are counted in a table small enough to stay in cache and only the
    /// distinct ones are sorted; past `COUNT_UP_TO` distinct values, sorting them all is cheaper.
    pub fn from_values(values: Vec<f64>) -> Self {
        Self::from_parts(vec![values])
    }

    /// Runs of all the values of `parts` (one per thread that profiled), without gathering them
    /// into one vector first: counted across the parts, or each part sorted and the sorted parts
    /// merged.
    pub fn from_parts(parts: Vec<Vec<f64>>) -> Self {
        Self::from_parts_counted(parts, Vec::new())
    }

    /// [`Self::from_parts`] plus values already counted (distinct or not, in any order).
    pub fn from_parts_counted(mut parts: Vec<Vec<f64>>, counted: Vec<(f64, u64)>) -> Self {
        let all = parts.iter().flatten().map(|&v| (v, 1)).chain(counted.iter().copied());
        if let Some(counted) = count_few(all) {
            return Self::from_counts(counted);
        }
        if !counted.is_empty() {
            let counted = Self::from_counts(counted);
            return Self::from_parts(parts).merged(&counted);
        }
        if counted.is_empty()
            && let Some(distinct) = super::repeats::counted_if_repeating(&parts)
        {
            return Self::from_counts(distinct);
        }
        if let Some(all) = merged_in_order(&parts) {
            return Self::from_sorted_vec(all);
        }
        // The parts gathered into the largest one (whose memory grows in place), sorted, and
        // folded into runs in that same memory: finishing ten million numbers then holds them
        // about twice (the sort's buffer) instead of three times (parts, a merged copy and its
        // counts), and the peak of a streamed profile is the finishing of its largest property.
        let largest = (0..parts.len()).max_by_key(|&i| parts[i].len()).unwrap_or(0);
        let mut all = if parts.is_empty() { Vec::new() } else { parts.swap_remove(largest) };
        all.reserve_exact(parts.iter().map(Vec::len).sum());
        for part in parts {
            all.extend_from_slice(&part);
        }
        sort_values(&mut all);
        Self::from_sorted_vec(all)
    }

    /// Runs of `sorted` (see [`sorted_runs`]), folded in place: the distinct values take the
    /// front of its own memory.
    fn from_sorted_vec(mut sorted: Vec<f64>) -> Self {
        let mut ends: Vec<u64> = Vec::new();
        let (mut kept, mut at) = (0, 0);
        while at < sorted.len() {
            sorted[kept] = sorted[at];
            kept += 1;
            at += run_len(&sorted[at..]);
            ends.push(at as u64);
        }
        sorted.truncate(kept);
        sorted.shrink_to_fit();
        Self { values: sorted, offsets: Vec::new(), ends }
    }

    /// These runs plus `wide`: integers past 2^53, in any order, counted exactly. They are rare,
    /// so they are kept apart while profiling and merged in here.
    pub fn with_wide(self, mut wide: Vec<(i128, u64)>) -> Self {
        if wide.is_empty() {
            return self;
        }
        wide.sort_unstable_by_key(|&(w, _)| w);
        let extra = wide.into_iter().map(|(w, n)| (NumberKey::integer(w), n));
        Self::merge_sorted(self.iter(), extra)
    }

    /// These runs and `other`'s, as one.
    fn merged(&self, other: &ValueRuns) -> Self {
        Self::merge_sorted(self.iter(), other.iter())
    }

    /// Runs of two ascending sequences of counted values.
    fn merge_sorted(
        mine: impl Iterator<Item = (NumberKey, u64)>,
        theirs: impl Iterator<Item = (NumberKey, u64)>,
    ) -> Self {
        let (mut mine, mut theirs) = (mine.peekable(), theirs.peekable());
        let mut merged = Self::default();
        loop {
            let next = match (mine.peek(), theirs.peek()) {
                (Some((a, _)), Some((b, _))) if a.order(*b).is_le() => mine.next(),
                (Some(_), Some(_)) | (None, Some(_)) => theirs.next(),
                (Some(_), None) => mine.next(),
                (None, None) => break,
            };
            if let Some((key, n)) = next {
                merged.push(key, n);
            }
        }
        merged
    }

    /// Runs of values sorted ascending (equal values adjacent; `-0.0` and `0.0` are one value).
    pub fn from_sorted(sorted: &[f64]) -> Self {
        let mut runs = Self::default();
        for &v in sorted {
            runs.push(NumberKey::float(v), 1);
        }
        runs
    }

    /// Runs of distinct `(value, count)` pairs in any order.
    pub fn from_counts(pairs: Vec<(f64, u64)>) -> Self {
        Self::from_key_counts(pairs.into_iter().map(|(v, n)| (NumberKey::float(v), n)).collect())
    }

    /// Runs of distinct `(value, count)` pairs in any order, integers past 2^53 exact (as a
    /// database groups them).
    pub fn from_key_counts(mut pairs: Vec<(NumberKey, u64)>) -> Self {
        pairs.sort_unstable_by(|a, b| a.0.order(b.0));
        let mut runs = Self {
            values: Vec::with_capacity(pairs.len()),
            offsets: Vec::new(),
            ends: Vec::with_capacity(pairs.len()),
        };
        for (v, n) in pairs {
            runs.push(v, n);
        }
        runs
    }

    fn push(&mut self, value: NumberKey, n: u64) {
        let before = self.count();
        // The hot loop of profiling: compare doubles and offsets directly (`==` makes the two
        // zeros one value; an absent offset is 0).
        let same = self.values.last().is_some_and(|&last| {
            last == value.double() && self.offsets.last().copied().unwrap_or(0) == value.offset()
        });
        match same {
            true => {
                if let Some(end) = self.ends.last_mut() {
                    *end += n;
                }
            }
            false => {
                // Offsets are stored from the first value that has one on (earlier ones are 0).
                if !self.offsets.is_empty() || value.offset() != 0 {
                    self.offsets.resize(self.values.len(), 0);
                    self.offsets.push(value.offset());
                }
                self.values.push(value.double());
                self.ends.push(before + n);
            }
        }
    }

    /// The distinct value at `index` (ascending).
    fn key(&self, index: usize) -> NumberKey {
        let double = self.values.get(index).copied().unwrap_or(0.0);
        match self.offsets.get(index) {
            Some(&offset) if offset != 0 => {
                NumberKey::integer((double as i128).saturating_add(i128::from(offset)))
            }
            _ => NumberKey::float(double),
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

    /// Smallest value, as its nearest double (0 when empty).
    pub fn min(&self) -> f64 {
        self.values.first().copied().unwrap_or(0.0)
    }

    /// Largest value, as its nearest double (0 when empty).
    pub fn max(&self) -> f64 {
        self.values.last().copied().unwrap_or(0.0)
    }

    /// The smallest value, exactly.
    pub fn first_key(&self) -> Option<NumberKey> {
        (!self.values.is_empty()).then(|| self.key(0))
    }

    /// The largest value, exactly.
    pub fn last_key(&self) -> Option<NumberKey> {
        self.values.len().checked_sub(1).map(|last| self.key(last))
    }

    /// Each distinct value with its count, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (NumberKey, u64)> + '_ {
        self.ends.iter().enumerate().scan(0, |before, (i, &end)| {
            let n = end - *before;
            *before = end;
            Some((self.key(i), n))
        })
    }

    /// The value of 0-based `rank` in ascending order.
    fn at_rank(&self, rank: u64) -> NumberKey {
        let run = self.ends.partition_point(|&end| end <= rank);
        self.key(run.min(self.values.len().saturating_sub(1)))
    }

    /// The `k`/4 quantile (`k` from 0 to 4) by linear interpolation between ranks: its nearest
    /// double, and the exact value when the two values it reads are integers.
    /// The median, when it is one of the values (see [`super::exact::is_value`]).
    pub fn median_key(&self) -> Option<NumberKey> {
        super::exact::median_key(self.count(), |rank| Some(self.at_rank(rank)))
    }

    /// The `k`/4 quantile (see [`interpolate`]).
    pub fn quarter(&self, k: u64) -> (f64, Option<Quarters>) {
        if self.count() == 0 {
            return (0.0, None);
        }
        let (low, high, weight) = quarter_ranks(self.count(), k);
        interpolate(self.at_rank(low), self.at_rank(high), weight)
    }

    /// The value at quantile `q` (0..=1), by linear interpolation between ranks; quartiles of
    /// integers are exact before their one rounding to a double.
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let quarters = q.clamp(0.0, 1.0) * 4.0;
        if quarters.fract() == 0.0 {
            return self.quarter(quarters as u64).0;
        }
        let position = q.clamp(0.0, 1.0) * (n - 1) as f64;
        let (low, high) = (position.floor(), position.ceil());
        let (a, b) = (self.at_rank(low as u64).double(), self.at_rank(high as u64).double());
        a + (b - a) * (position - low)
    }

    /// Median (mean of the middle two for an even count).
    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    /// Mean and sample standard deviation. Over whole numbers, from their exact sum and exact
    /// distances from it; otherwise from the exact sum rounded once, weighted by run length
    /// (the same code finishes spilled values, which are never all in memory).
    pub fn mean_std(&self) -> (f64, f64) {
        let (mean, std_dev, _) = self.mean_std_sum();
        (mean, std_dev)
    }

    /// [`Self::mean_std`], and the exact sum when every value is whole and the mean lies past
    /// 2^53 (see [`ExactTotal::whole_sum_past_doubles`]).
    pub(crate) fn mean_std_sum(&self) -> (f64, f64, Option<i128>) {
        mean_std_of(|| self.iter(), self.count(), self.min(), self.max())
    }

    /// The exact sum rounded once (see [`ExactTotal::fixed_point_sum`]).
    #[cfg(test)]
    fn fixed_point_sum(&self) -> Option<f64> {
        let mut total = ExactTotal::default();
        for (x, n) in self.iter() {
            total.add(x, n);
        }
        total.fixed_point_sum()
    }

    /// How many values are below `edge`.
    pub(crate) fn count_below(&self, edge: f64) -> u64 {
        let below = |i: usize| self.key(i).below(edge);
        let mut first_not = self.values.partition_point(|&v| v < edge);
        // Values equal to the edge as doubles may still lie below it (an integer just under it).
        while first_not < self.values.len() && below(first_not) {
            first_not += 1;
        }
        match first_not {
            0 => 0,
            run => self.ends[run - 1],
        }
    }
}

/// Mean and sample standard deviation of the runs `runs` yields (each call a pass from the
/// start, ascending), of `count` values from `min` to `max`: the exact sum in one pass
/// ([`ExactTotal`]), then the distances from the mean in another ([`Spread`]). Spilled values
/// are finished by the same steps (`spilled.rs`), the sum taken during their merge. With them,
/// the exact sum of whole numbers whose mean lies past 2^53.
fn mean_std_of<I: Iterator<Item = (NumberKey, u64)>>(
    runs: impl Fn() -> I,
    count: u64,
    min: f64,
    max: f64,
) -> (f64, f64, Option<i128>) {
    let mut total = ExactTotal::default();
    for (x, n) in runs() {
        total.add(x, n);
    }
    let centre = total.centre(min, max, &runs);
    let mut spread = Spread::default();
    for (x, n) in runs() {
        spread.add(&centre, x, n);
    }
    (centre.mean(), spread.std_dev(&centre, count), total.whole_sum_past_doubles())
}

/// The exact sum of values handed over in any order, in one pass: as whole numbers while every
/// value is one and the sum fits an `i128` (past 2^53 doubles would merge neighbours and
/// cancel), and in fixed point while no value is an integer past 2^53.
#[derive(Debug, Default)]
pub(super) struct ExactTotal {
    count: u64,
    /// The whole-number sum, until `not_whole`.
    integer: i128,
    /// A value was not whole, or the whole-number sum overflowed.
    not_whole: bool,
    /// Once a value is not whole: for each binary exponent (`e + 1074`), the sum of `m × n`
    /// over the values `m × 2^e` seen `n` times (the whole numbers before it are one term at
    /// the lowest exponent among them), one integer addition a value instead of an exact
    /// floating-point sum's several.
    fixed: Option<Vec<i128>>,
    /// The fixed-point sum cannot be kept: an integer past 2^53 (not a double), or an overflow.
    no_fixed: bool,
    /// The lowest and highest exponent of a nonzero value.
    exponents: Option<(i32, i32)>,
}

/// Exponents a double's `m × 2^e` form takes (`e` from -1074 to 971).
const EXPONENTS: usize = 2046;

/// The `m × 2^e` form of a double, `m` an integer of at most 53 bits.
fn mantissa_exponent(x: f64) -> (i128, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1 << 52) - 1)) as i128;
    let (m, e) =
        if exponent == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent - 1075) };
    (if x < 0.0 { -m } else { m }, e)
}

/// `value × n`, without a multiplication for the common `n` of 1.
fn times(value: i128, n: u64) -> Option<i128> {
    if n == 1 { Some(value) } else { value.checked_mul(i128::from(n)) }
}

impl ExactTotal {
    /// Adds `x`, seen `n` times.
    pub(super) fn add(&mut self, x: NumberKey, n: u64) {
        self.count += n;
        let double = x.double();
        // Integers past 2^53 are not doubles: an exact floating-point sum takes them.
        if x.offset() != 0 || !double.is_finite() {
            self.stop_fixed();
        }
        if !self.not_whole {
            let value = x.integer_value();
            match value.and_then(|v| self.integer.checked_add(times(v, n)?)) {
                Some(sum) => {
                    self.integer = sum;
                    self.note_exponent(double);
                    return;
                }
                None => {
                    self.not_whole = true;
                    if value.is_some() {
                        // The whole sum overflowed: past any fixed-point sum's range too.
                        self.stop_fixed();
                    } else if !self.no_fixed {
                        self.fixed = self.whole_as_fixed();
                        self.no_fixed = self.fixed.is_none();
                    }
                }
            }
        }
        if self.no_fixed || double == 0.0 {
            return;
        }
        let (m, e) = mantissa_exponent(double);
        let slot = (e + 1074) as usize;
        let Some(sums) = self.fixed.as_mut() else { return };
        let added = sums.get(slot).zip(times(m, n));
        match added.and_then(|(sum, term)| sum.checked_add(term)) {
            Some(added) => sums[slot] = added,
            None => return self.stop_fixed(),
        }
        self.note_exponent(double);
    }

    /// The whole numbers summed so far as one fixed-point term, at the lowest exponent among
    /// them (each is a multiple of its power of two, so the term is exact); `None` when the
    /// term overflows, as the sum of magnitudes then leaves a fixed-point sum's range anyway.
    fn whole_as_fixed(&self) -> Option<Vec<i128>> {
        let mut sums = vec![0; EXPONENTS];
        if let Some((lowest, _)) = self.exponents {
            let term = if lowest >= 0 {
                self.integer >> lowest
            } else {
                let shift = lowest.unsigned_abs();
                (self.integer.unsigned_abs().leading_zeros() > shift + 1)
                    .then(|| self.integer << shift)?
            };
            sums[(lowest + 1074) as usize] = term;
        }
        Some(sums)
    }

    /// The exact sum when every value was whole, kept only where the mean lies past 2^53 (see
    /// `NumberProfile::exact_sum`).
    pub(super) fn whole_sum_past_doubles(&self) -> Option<i128> {
        let n = i128::from(self.count.max(1));
        let past = (self.integer / n).unsigned_abs() >= 1 << 53;
        (!self.not_whole && self.count > 0 && past).then_some(self.integer)
    }

    /// Widens the exponent range to `double`'s (zero has none).
    fn note_exponent(&mut self, double: f64) {
        if double != 0.0 {
            self.widen_exponents(mantissa_exponent(double).1);
        }
    }

    fn widen_exponents(&mut self, e: i32) {
        self.exponents =
            Some(self.exponents.map_or((e, e), |(low, high)| (low.min(e), high.max(e))));
    }

    fn stop_fixed(&mut self) {
        self.no_fixed = true;
        self.fixed = None;
    }

    /// The sum rounded once, when it fits one `i128` in fixed point and the result is a normal
    /// double; `None` otherwise.
    fn fixed_point_sum(&self) -> Option<f64> {
        if self.no_fixed {
            return None;
        }
        let Some((lowest, highest)) = self.exponents else { return Some(0.0) };
        let count_bits = 64 - self.count.leading_zeros() as i32;
        // Every term and the sum below 2^126; the scaled result a normal double. (The sum of the
        // terms' magnitudes is below 2^125, so no exponent's sum overflowed either.)
        if highest - lowest + 53 + count_bits > 125 || lowest < -1022 || highest > 900 {
            return None;
        }
        let sum = match &self.fixed {
            Some(sums) => {
                (lowest..=highest).map(|e| sums[(e + 1074) as usize] << (e - lowest)).sum::<i128>()
            }
            // Every value was whole: their sum, in units of 2^lowest (a whole number, as each
            // value is one).
            None if lowest >= 0 => self.integer >> lowest,
            None => self.integer << -lowest,
        };
        // `as` rounds to the nearest double; scaling by a power of two in range is exact.
        Some(sum as f64 * power_of_two(lowest))
    }

    /// Where the distances are measured from: the mean, found from the exact sum (`runs`
    /// passes over the values again only when neither exact form held it).
    pub(super) fn centre<I: Iterator<Item = (NumberKey, u64)>>(
        &self,
        min: f64,
        max: f64,
        runs: impl Fn() -> I,
    ) -> Centre {
        let n = self.count;
        if n == 0 {
            return Centre::Scaled { mean: 0.0, unit: 1.0 };
        }
        if !self.not_whole {
            let sum = self.integer;
            let whole = i128::from(n);
            let (quotient, remainder) = (sum.div_euclid(whole), sum.rem_euclid(whole));
            let fraction = remainder as f64 / n as f64;
            let mean = if sum.abs() <= super::exact::F64_EXACT_INTEGER {
                // Both operands exact: one correctly rounded division.
                sum as f64 / n as f64
            } else {
                quotient as f64 + fraction
            };
            return Centre::Whole { quotient, fraction, mean };
        }
        // Squares of distances between tiny numbers underflow to 0 (and of huge ones overflow):
        // such values are summed in units of the largest magnitude.
        let largest = min.abs().max(max.abs());
        // A power of two (the largest magnitude's), so each value divides into it exactly.
        let unit = if largest.is_finite() && largest > 0.0 && !(1e-100..=1e100).contains(&largest) {
            // A subnormal's exponent, -1074 + 52, is the least a normal power has.
            super::exact::power_of_two(mantissa_exponent(largest).1 + 52)
        } else {
            1.0
        };
        // The sum is exact, then rounded once: huge values of both signs cancel exactly, where
        // a running mean kept their rounding error (1e308 and -1e308 beside 0.1 gave -5.6e291).
        let sum_in = |unit: f64| {
            let mut sum = ExactSum::default();
            for (x, n) in runs() {
                sum.add_product(x.double() / unit, n as f64);
                sum.add_product(x.offset() as f64 / unit, n as f64);
            }
            sum.value()
        };
        let mean = match self.fixed_point_sum().filter(|_| unit == 1.0) {
            Some(sum) => sum / n as f64,
            // Summed as they are while the sum stays finite: in units of 1e300, the 1e-300
            // beside 1e300 and -1e300 was lost, and the mean read 0.
            None => match sum_in(1.0) {
                sum if sum.is_finite() => sum / n as f64,
                _ => sum_in(unit) / n as f64 * unit,
            },
        };
        Centre::Scaled { mean, unit }
    }
}

/// The mean, as the deviation's pass measures distances from it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Centre {
    /// Of whole numbers: the floor of the mean and the fraction above it, so each distance is
    /// exact up to its own rounding, with no cancellation.
    Whole { quotient: i128, fraction: f64, mean: f64 },
    /// Of other numbers; distances are measured in units of `unit`.
    Scaled { mean: f64, unit: f64 },
}

impl Centre {
    /// The mean.
    pub(super) fn mean(&self) -> f64 {
        match *self {
            Centre::Whole { mean, .. } => mean,
            Centre::Scaled { mean, .. } => mean,
        }
    }

    /// The distance of `x` from the mean, in the centre's units.
    fn distance(&self, x: NumberKey) -> f64 {
        match *self {
            Centre::Whole { quotient, fraction, mean } => {
                x.integer_value().map_or(x.double() - mean, |v| {
                    // Rounded as `i128 as f64` rounds, by the processor where the value allows.
                    let whole = v.saturating_sub(quotient);
                    i64::try_from(whole).map_or_else(|_| whole as f64, |w| w as f64) - fraction
                })
            }
            Centre::Scaled { mean, unit } => {
                (x.double() / unit - mean / unit) + x.offset() as f64 / unit
            }
        }
    }
}

/// The sum of squared distances from a [`Centre`], in ascending order of the values (the order
/// decides its rounding, the same in memory and spilled). Both sums are compensated
/// (Neumaier's): added plainly, two million values lost the last four of the fifteen digits shown
/// (each addition's rounding, relative to a sum that grows, adds up over the values).
#[derive(Debug, Default)]
pub(super) struct Spread {
    m2: Compensated,
    /// The sum of the distances: not zero when the mean was rounded (see [`Spread::std_dev`]).
    drift: Compensated,
}

/// A sum of doubles with the rounding of each addition carried beside it (Neumaier's variant of
/// Kahan's summation): its error stays a few units in the last place of the sum, whatever the
/// number of terms.
#[derive(Debug, Default, Clone, Copy)]
struct Compensated {
    sum: f64,
    carry: f64,
}

impl Compensated {
    fn add(&mut self, x: f64) {
        let sum = self.sum + x;
        self.carry +=
            if self.sum.abs() >= x.abs() { (self.sum - sum) + x } else { (x - sum) + self.sum };
        self.sum = sum;
    }

    fn value(self) -> f64 {
        self.sum + self.carry
    }
}

impl Spread {
    /// Adds `x`, seen `n` times.
    pub(super) fn add(&mut self, centre: &Centre, x: NumberKey, n: u64) {
        let distance = centre.distance(x);
        self.m2.add(distance * distance * n as f64);
        self.drift.add(distance * n as f64);
    }

    /// The sample standard deviation of `count` values.
    pub(super) fn std_dev(&self, centre: &Centre, count: u64) -> f64 {
        // Distances from a rounded mean overstate the squares by count × (its rounding)²,
        // which the sum of the distances measures: where values differ by a few units in the
        // last place of a large mean (1e10 and 1e10 + 2e-6), that was most of the sum.
        let (m2, drift) = (self.m2.value(), self.drift.value());
        let m2 = match count {
            0 => 0.0,
            n => (m2 - drift * drift / n as f64).max(0.0),
        };
        let std = if count > 1 { (m2 / (count - 1) as f64).sqrt() } else { 0.0 };
        match *centre {
            Centre::Whole { .. } => std,
            Centre::Scaled { unit, .. } => std * unit,
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

/// A sum of doubles kept exactly as non-overlapping partial sums (Shewchuk's algorithm, as
/// Python's `math.fsum`), rounded once when read.
#[derive(Debug, Default)]
pub(super) struct ExactSum {
    partials: Vec<f64>,
    /// The infinite terms' sum (NaN for both signs), which is then the sum, as `math.fsum`.
    infinite: f64,
    /// Adding finite terms overflowed: the sum is no double (Python's `fsum` raises), and the
    /// rest are not added. Before, every later term kept an infinite partial, so each addition
    /// walked one more: a property whose sum passed 1.8e308 took minutes to finish.
    overflowed: bool,
}

impl ExactSum {
    /// Adds `x`.
    fn add(&mut self, mut x: f64) {
        // Zero changes no sum; most products are exact and most offsets zero, so most of the
        // four terms a value brings are zeros.
        if x == 0.0 || self.overflowed {
            return;
        }
        if !x.is_finite() {
            self.infinite += x;
            return;
        }
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let high = x + y;
            if !high.is_finite() {
                self.overflowed = true;
                self.partials = Vec::new();
                return;
            }
            let low = y - (high - x);
            if low != 0.0 {
                self.partials[kept] = low;
                kept += 1;
            }
            x = high;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// Adds `a × b` exactly: the rounded product and its rounding error (a fused multiply-add).
    pub(super) fn add_product(&mut self, a: f64, b: f64) {
        let product = a * b;
        if !product.is_finite() && a.is_finite() && b.is_finite() {
            self.overflowed = true;
        }
        self.add(product);
        if product.is_finite() {
            self.add(a.mul_add(b, -product));
        }
    }

    /// The sum, rounded once to the nearest double (ties to even), as Python's `math.fsum`
    /// rounds it: the partials added from the largest down until one addition is inexact, then
    /// a tie settled by the sign of what is left below.
    /// Not finite when a term was (their sum) or the sum overflowed (NaN: callers sum again in
    /// larger units).
    pub(super) fn value(&self) -> f64 {
        if self.infinite != 0.0 || self.infinite.is_nan() {
            return self.infinite;
        }
        if self.overflowed {
            return f64::NAN;
        }
        let mut rest = self.partials.iter().rev();
        let Some(&first) = rest.next() else { return 0.0 };
        let (mut high, mut low) = (first, 0.0);
        for &y in rest.by_ref() {
            let x = high;
            high = x + y;
            low = y - (high - x);
            if low != 0.0 {
                break;
            }
        }
        // `low` is exactly half an ulp of `high` at a tie; the next partial breaks it.
        if let Some(&below) = rest.next()
            && ((low < 0.0 && below < 0.0) || (low > 0.0 && below > 0.0))
        {
            let y = low * 2.0;
            let x = high + y;
            if x - high == y {
                high = x;
            }
        }
        high
    }
}

/// [`auto_bins`] from summary statistics alone: the count, the range and the quartiles (what a
/// database computes without sending the values).
pub fn auto_bins_for(count: u64, min: f64, max: f64, q1: f64, q3: f64) -> usize {
    if count < 2 {
        return 1;
    }
    // Halves: the range of values near ±f64::MAX overflows; the ratio below is the same.
    let range = max / 2.0 - min / 2.0;
    if range <= 0.0 || !range.is_finite() {
        return 1;
    }
    let iqr = q3 / 2.0 - q1 / 2.0;
    let sturges = (count as f64).log2().ceil() as usize + 1;
    let bins = if iqr > 0.0 {
        let width = 2.0 * iqr / (count as f64).cbrt();
        (range / width).ceil() as usize
    } else {
        sturges
    };
    bins.clamp(1, AUTO_MAX_BINS)
}

pub use super::histogram::{BinScale, EdgeCounts, HistogramLayout, histogram};

#[cfg(test)]
mod tests {
    #[test]
    fn ascending_parts_are_merged_and_the_rest_sorted() {
        use super::{ValueRuns, merged_in_order, sort_values};
        let ids = |range: std::ops::Range<i64>| range.map(|i| i as f64).collect::<Vec<f64>>();
        // Threads' stretches of a column of ids, handed over in any order.
        let parts = vec![ids(50_000..90_000), Vec::new(), ids(0..50_000), ids(90_000..100_000)];
        assert_eq!(merged_in_order(&parts), Some(ids(0..100_000)));
        assert_eq!(ValueRuns::from_parts(parts), ValueRuns::from_sorted_vec(ids(0..100_000)));
        // Stretches read in turns by each thread: each part ascends, the parts interleave.
        let turns = |thread: i64| (0..100_000).filter(move |i| i / 1_000 % 3 == thread);
        let parts: Vec<Vec<f64>> = (0..3).map(|t| turns(t).map(|i| i as f64).collect()).collect();
        assert_eq!(merged_in_order(&parts), Some(ids(0..100_000)));
        // Overlapping parts with repeats and both zeros merge to what sorting gives.
        let meeting = vec![vec![-0.0, 3.0, 5.0, 5.0], vec![-1.0, 0.0, 0.0, 3.0, 9.0]];
        let mut all = meeting.concat();
        sort_values(&mut all);
        let merged = merged_in_order(&meeting).expect("merged");
        assert_eq!(
            merged.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            all.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let runs = ValueRuns::from_sorted_vec(merged);
        assert_eq!(runs.iter().map(|(_, n)| n).collect::<Vec<_>>(), vec![1, 3, 2, 2, 1]);
        // A part that does not ascend, or a single part, is left to sorting, to the same runs.
        let unsorted = vec![ids(0..50_000), ids(50_000..100_000).into_iter().rev().collect()];
        for parts in [unsorted, vec![ids(0..10)]] {
            assert!(merged_in_order(&parts).is_none());
            let mut all: Vec<f64> = parts.concat();
            sort_values(&mut all);
            assert_eq!(ValueRuns::from_parts(parts), ValueRuns::from_sorted_vec(all));
        }
    }

    #[test]
    fn runs_fold_both_zeros_into_one_and_keep_each_nan_apart() {
        use super::{ValueRuns, sort_values, sorted_runs};
        let mut values = vec![3.0, 0.0, f64::NAN, -0.0, 1.5, 3.0, f64::NAN, 0.0, -7.25];
        sort_values(&mut values);
        let runs: Vec<(f64, u64)> = sorted_runs(&values).collect();
        let shown: Vec<String> = runs.iter().map(|(v, n)| format!("{v}x{n}")).collect();
        // The zeros are one value, kept as the first in order (`-0.0`); a NaN equals nothing.
        assert_eq!(shown, ["-7.25x1", "-0x3", "1.5x1", "3x2", "NaNx1", "NaNx1"]);
        let folded = ValueRuns::from_sorted_vec(values);
        let counts: Vec<u64> = folded.iter().map(|(_, n)| n).collect();
        assert_eq!(counts, [1, 3, 1, 2, 1, 1]);
        assert!(sorted_runs(&[]).next().is_none());
    }

    #[test]
    fn the_fixed_point_sum_is_the_exact_sum_rounded_once() {
        use super::{ExactSum, ValueRuns};
        let mut rng = fastrand::Rng::with_seed(19);
        let mut compared = 0;
        for round in 0..400 {
            let n = rng.usize(1..2_000);
            let scale = [1e-6, 0.01, 1.0, 180.0, 1e9, 1e15][round % 6];
            let mut values: Vec<f64> = (0..n)
                .map(|_| match rng.u8(0..10) {
                    0 => 0.0,
                    1 => -0.0,
                    // Decimals as files write them, of both signs: the common case.
                    2..=6 => ((rng.f64() - 0.5) * scale * 1e5).round() / 1e5,
                    7 => (rng.f64() - 0.5) * scale,
                    8 => f64::from(rng.i32(..)),
                    _ => scale * 1e-3 * rng.f64(),
                })
                .collect();
            if round % 7 == 0 {
                // Values that cancel to (nearly) nothing.
                let negated: Vec<f64> = values.iter().map(|v| -v).collect();
                values.extend(negated);
                values.push(1e-9);
            }
            let runs = ValueRuns::from_values(values.clone());
            let Some(ours) = runs.fixed_point_sum() else { continue };
            let mut exact = ExactSum::default();
            for v in &values {
                exact.add(*v);
            }
            assert_eq!(ours.to_bits(), exact.value().to_bits(), "round {round}");
            compared += 1;
        }
        assert!(compared > 300, "{compared}");
        // Exponents too far apart for one i128: declined.
        assert_eq!(ValueRuns::from_values(vec![1e-300, 1.0, 3.0]).fixed_point_sum(), None);
        assert_eq!(ValueRuns::from_values(vec![1e300, 1.0]).fixed_point_sum(), None);
        assert_eq!(ValueRuns::from_values(vec![0.0, -0.0]).fixed_point_sum(), Some(0.0));
    }

    /// A sum past the largest double stops adding (found by an independent tester: 320,000
    /// distinct values near 1e306 took two minutes, each term walking every infinite partial
    /// kept before it), and the mean and deviation are still exact, summed in larger units.
    #[test]
    fn a_sum_that_overflows_holds_no_partials_and_the_figures_stay_exact() {
        use super::{ExactSum, ValueRuns};
        let values: Vec<f64> = (0..100_000).map(|i| 1e306 * (1.0 + f64::from(i) * 1e-9)).collect();
        let mut sum = ExactSum::default();
        for &v in &values {
            sum.add(v);
        }
        assert!(sum.overflowed && sum.partials.is_empty());
        assert!(sum.value().is_nan());
        // Python: the mean of the Fractions of the doubles; statistics' sample deviation over
        // Fractions, its square root taken in Decimal. The exact sum is rounded once and then
        // divided, as every mean is: within a unit in the last place.
        let (mean, std) = ValueRuns::from_values(values).mean_std();
        let close = |got: f64, exact: f64| (got - exact).abs() <= exact * f64::EPSILON;
        assert!(close(mean, 1.0000499995e306), "{mean}");
        assert!(close(std, 2.886765779668774e301), "{std}");
        // Infinite terms make the sum theirs, as math.fsum; an overflowing product overflows.
        let mut sum = ExactSum::default();
        sum.add(1.0);
        sum.add(f64::INFINITY);
        assert_eq!(sum.value(), f64::INFINITY);
        sum.add(f64::NEG_INFINITY);
        assert!(sum.value().is_nan());
        let mut sum = ExactSum::default();
        sum.add_product(1e300, 1e10);
        assert!(sum.overflowed && sum.value().is_nan());
    }

    #[test]
    fn values_a_few_units_in_the_last_place_apart_keep_their_exact_deviation_and_midpoint() {
        use super::ValueRuns;
        // Python: statistics.stdev over Fractions of the doubles, math.sqrt of the result.
        let step = 1.9073486328125e-06; // one unit in the last place of 1e10
        for (n, expected) in [(4, 1.1012082465927615e-06), (1000, 9.54151511490606e-07)] {
            let values: Vec<f64> =
                (0..n).map(|i| 1e10 + if i % 2 == 0 { 0.0 } else { step }).collect();
            let (mean, std) = ValueRuns::from_values(values).mean_std();
            // 1e10 + step / 2, rounded once (to even).
            assert_eq!(mean, 1e10, "{n}");
            assert!((std - expected).abs() <= expected * 1e-12, "{n}: {std} vs {expected}");
        }
        // The midpoint of the two middle values of an even count, rounded once.
        let two_50 = 2f64.powi(50);
        let runs = ValueRuns::from_values(vec![-(two_50 + 0.25), two_50]);
        assert_eq!(runs.mean_std().0, -0.125);
        assert_eq!(runs.quarter(2).0, -0.125);
    }

    #[test]
    fn huge_values_of_both_signs_cancel_exactly_in_the_mean_and_bins_span_them() {
        // Python: math.fsum(values) / 12 and statistics.stdev(values).
        let cycle =
            [1e-300, 5e-324, 1e308, -1e308, 0.1, 0.2, 0.30000000000000004, 123456.789012345];
        let values: Vec<f64> = (0..12).map(|i| cycle[i % 8]).collect();
        let runs = ValueRuns::from_values(values);
        let (mean, std) = runs.mean_std();
        assert_eq!(mean, 10288.11575102875);
        assert!((std / 6.030226891555272e307 - 1.0).abs() < 1e-12, "{std}");
        for bins in [None, Some(7)] {
            let numbers = [runs.min(), runs.max()];
            let layout = match bins {
                Some(bins) => HistogramLayout::new(numbers[0], numbers[1], bins, false),
                None => HistogramLayout::automatic(
                    12,
                    numbers[0],
                    numbers[1],
                    [runs.quantile(0.25), runs.quantile(0.75)],
                    false,
                ),
            }
            .expect("a layout");
            assert!(layout.edges.iter().all(|e| e.is_finite()), "{:?}", layout.edges);
            assert_eq!(
                (layout.edges[0], *layout.edges.last().expect("edges")),
                (-1e308, 1e308),
                "{:?}",
                layout.edges
            );
            if let Some(bins) = bins {
                assert_eq!(layout.bins(), bins);
            }
        }
    }

    #[test]
    fn a_tiny_value_beside_huge_ones_that_cancel_is_the_mean() {
        // Python: math.fsum(values) / len(values).
        for (values, mean) in [
            (vec![1e300, 1e-300, -1e300], 3.3333333333333334e-301),
            (vec![1e308, -1e308, -2.5e-300], -8.333333333333333e-301),
            (vec![1e308, 1.0, -1e308], 0.3333333333333333),
        ] {
            assert_eq!(ValueRuns::from_values(values.clone()).mean_std().0, mean, "{values:?}");
        }
        // A sum past the largest double: its mean is still found, in units of the largest.
        let (mean, _) = ValueRuns::from_values(vec![1e308, 1e308, 1e308]).mean_std();
        assert_eq!(mean, 1e308);
    }

    #[test]
    fn the_spread_of_tiny_and_huge_numbers_neither_underflows_nor_overflows() {
        for scale in [1e-300, 1e-200, 1.0, 1e200, 1e300] {
            let runs = ValueRuns::from_values(vec![2.0 * scale, 3.0 * scale, 4.0 * scale]);
            let (mean, std) = runs.mean_std();
            assert!((mean / (3.0 * scale) - 1.0).abs() < 1e-12, "{scale}: mean {mean}");
            assert!((std / scale - 1.0).abs() < 1e-12, "{scale}: std {std}");
        }
    }

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
        assert_eq!(
            ValueRuns::from_values(few.clone())
                .iter()
                .map(|(v, n)| (v.double(), n))
                .collect::<Vec<_>>(),
            [(0.0, 2), (1.5, 1), (3.0, 3)]
        );
        assert_eq!(ValueRuns::from_values(few.clone()), runs(&few));
        let many: Vec<f64> =
            (0..COUNT_UP_TO as u64 * 3).map(|i| ((i * 7919) % 50_000) as f64 * 0.5).collect();
        assert!(count_few(many.iter().map(|&v| (v, 1))).is_none());
        assert_eq!(ValueRuns::from_values(many.clone()), runs(&many));
    }

    #[test]
    fn runs_from_counts_match_runs_from_sorted_values() {
        let counted = ValueRuns::from_counts(vec![(3.0, 2), (-1.5, 1), (0.0, 4), (-0.0, 1)]);
        let listed = runs(&[3.0, 0.0, -1.5, 0.0, 3.0, 0.0, -0.0, 0.0]);
        assert_eq!(counted.iter().map(|(_, n)| n).collect::<Vec<_>>(), [1, 5, 2]);
        assert_eq!(listed.iter().map(|(_, n)| n).collect::<Vec<_>>(), [1, 5, 2]);
        assert_eq!(
            (counted.count(), counted.distinct(), counted.min(), counted.max()),
            (8, 3, -1.5, 3.0)
        );
        assert_eq!(counted.quantile(0.25), listed.quantile(0.25));
        assert_eq!(counted.quantile(0.9), 3.0);
        assert_eq!(counted.count_below(0.0), 1);
        assert_eq!(counted.count_below(0.5), 6);
    }

    #[test]
    fn runs_from_parts_match_runs_of_all_values() {
        // Past the counting table (sorted and merged) and below it (counted across parts).
        for distinct in [COUNT_UP_TO * 2, 50] {
            let all: Vec<f64> = (0..60_000)
                .map(|i| ((i * 7919) % distinct) as f64 / 4.0 - 100.0)
                .chain([0.0, -0.0, -0.0])
                .collect();
            let parts: Vec<Vec<f64>> = vec![
                all[..10_000].to_vec(),
                Vec::new(),
                all[10_000..59_999].to_vec(),
                all[59_999..].to_vec(),
            ];
            assert_eq!(ValueRuns::from_parts(parts), runs(&all), "{distinct}");
        }
        assert_eq!(ValueRuns::from_parts(vec![Vec::new(), Vec::new()]).count(), 0);
    }

    #[test]
    fn integers_past_2_pow_53_are_runs_of_their_own_in_order() {
        const TWO_53: i128 = 1 << 53;
        // 1e17 as a float and as an integer are one value; 2^53 and 2^53 + 1 share a double.
        let runs =
            ValueRuns::from_values(vec![1e17, 9_007_199_254_740_992.0, 1.5]).with_wide(vec![
                (TWO_53 + 1, 1),
                (100_000_000_000_000_000, 1),
                (TWO_53 + 2, 1),
                (-TWO_53 - 1, 1),
                (TWO_53 + 1, 1),
            ]);
        let listed: Vec<(Option<i128>, u64)> =
            runs.iter().map(|(v, n)| (v.integer_value(), n)).collect();
        assert_eq!(
            listed,
            [
                (Some(-TWO_53 - 1), 1),
                (None, 1),
                (Some(TWO_53), 1),
                (Some(TWO_53 + 1), 2),
                (Some(TWO_53 + 2), 1),
                (Some(100_000_000_000_000_000), 2)
            ]
        );
        assert_eq!((runs.count(), runs.distinct()), (8, 6));
        // 2^53 + 1 is below the edge 2^53 + 2 though its double is 2^53.
        assert_eq!(runs.count_below(9_007_199_254_740_994.0), 5);
        assert_eq!(runs.count_below(9_007_199_254_740_992.0), 2);
        // Ranks 3 and 4 of 8 are both 2^53 + 1; ranks 1 and 2 (1.5 and 2^53) are not both whole.
        assert_eq!(
            runs.quarter(2).1.map(|q| q.to_json()),
            Some(serde_json::json!(9_007_199_254_740_993_u64))
        );
        assert_eq!(runs.quarter(1).1, None);
        let ints = ValueRuns::default().with_wide(vec![(TWO_53 + 1, 1), (TWO_53 + 2, 1)]);
        assert_eq!(ints.quarter(2).1.map(|q| q.text()), Some("9007199254740993.5".to_string()));
        assert_eq!(ints.mean_std().1, std::f64::consts::FRAC_1_SQRT_2);
    }

    #[test]
    fn auto_bins_stays_in_bounds() {
        let values: Vec<f64> = (0..100_000).map(f64::from).collect();
        assert_eq!(auto_bins(&runs(&values)), AUTO_MAX_BINS);
        assert_eq!(auto_bins(&runs(&[1.0])), 1);
        assert!(auto_bins(&runs(&[1.0, 2.0, 3.0])) >= 1);
    }
}
