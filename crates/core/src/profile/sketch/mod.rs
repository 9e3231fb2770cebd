//! What a property switches to when its exact counters outgrow the memory budget: mergeable
//! sketches whose error is known and reported with every figure they give (see
//! [`super::Approximation`]). Counts, extremes, lengths and formats stay exact; means and
//! standard deviations become running sums (Welford's, accurate to about 13 significant digits,
//! where an exact profile sums exactly and takes a second pass); distinct counts, frequent
//! values, quantiles and histograms become estimates.

mod distinct;
mod frequent;
mod quantiles;

pub(crate) use distinct::{DistinctSketch, RELATIVE_STANDARD_ERROR};
pub(crate) use frequent::{FREQUENT_KEPT, FrequentStrings, string_hash};
pub(crate) use quantiles::QuantileSketch;

use std::hash::BuildHasher;

use super::accumulate::{Lengths, value_key};
use super::exact::{NumberKey, power_of_two};
use super::formats::{self, StringFormat};

/// The hash distinct counts are estimated from: seeded the same in every run, so the same file
/// gets the same estimate every time (the hash tables keep the process's random seed).
fn fixed_hash(bytes: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5c4e_5ca1_ab1e).hash_one(bytes)
}

/// The sketches of a property's strings.
#[derive(Debug, Default)]
pub(crate) struct StringSketch {
    pub distinct: DistinctSketch,
    pub frequent: FrequentStrings,
    /// Lengths of every string, in characters (exact).
    pub lengths: Lengths,
    /// Values per recognised format (exact: every value is checked).
    pub formats: Vec<(StringFormat, u64)>,
    /// The earliest and latest of dates and times (exact), shown when every value is one.
    pub extremes: formats::Extremes,
}

impl StringSketch {
    /// Bytes held, beyond the struct.
    pub(crate) fn bytes(&self) -> usize {
        DistinctSketch::BYTES + self.frequent.bytes()
    }

    /// Counts one string `n` times. `key` is what it is counted under (the value itself, or the
    /// shortened key of an over-long one), `chars` its length in characters, when not already
    /// counted, and `whole` its whole text, whose moment a date or time is ordered by (a
    /// shortened key's format is `None`: its range was taken from the whole string).
    pub(crate) fn add_key(
        &mut self,
        key: &str,
        chars: Option<u64>,
        format: Option<StringFormat>,
        whole: &str,
        n: u64,
    ) {
        let hash = string_hash(key);
        self.distinct.add_hash(hash);
        self.frequent.add(hash, key, n);
        if let Some(chars) = chars {
            self.lengths.add(chars, n);
        }
        if let Some(format) = format {
            formats::add_count(&mut self.formats, format, n);
            // A value of no temporal format leaves the property without a range to show.
            if format.is_temporal() {
                self.extremes.add(format, whole);
            }
        }
    }

    /// Counts one string value as it arrives.
    #[inline]
    pub(crate) fn add(&mut self, value: &str) {
        self.add_n(value, 1);
    }

    /// Counts one string value `n` times.
    pub(crate) fn add_n(&mut self, value: &str, n: u64) {
        let chars = if value.is_ascii() { value.len() } else { value.chars().count() } as u64;
        self.add_key(&value_key(value), Some(chars), formats::detect(value), value, n);
    }

    /// Adds everything `other` counted.
    pub(crate) fn merge(&mut self, other: &StringSketch) {
        self.distinct.merge(&other.distinct);
        self.frequent.merge(&other.frequent);
        self.lengths.merge(other.lengths);
        formats::add_counts(&mut self.formats, other.formats.iter().copied());
        self.extremes.merge(&other.extremes);
    }
}

/// The sketches and running sums of a property's numbers.
#[derive(Debug, Default)]
pub(crate) struct NumberSketch {
    pub distinct: DistinctSketch,
    pub quantiles: QuantileSketch,
    /// The smallest and largest value, exactly.
    pub range: Option<(NumberKey, NumberKey)>,
    /// Values counted, their running mean and sum of squared distances from it (Welford, merged
    /// as Chan et al.): computed from every value, as distances from `pivot`.
    pub count: u64,
    mean: f64,
    m2: f64,
    /// The first value counted. The running sums hold distances from it, exact for values close
    /// to each other however far from zero: 2^62 ± 3 as doubles are all 2^62, and 1e18 ± 1e6
    /// summed as they are lost five digits of their deviation.
    pivot: Option<NumberKey>,
    /// `mean` and `m2` are in units of 2^SCALED_UNIT: squared distances between values past
    /// 2^500 would overflow.
    scaled: bool,
}

/// The unit of a scaled [`NumberSketch`]'s running sums, as a power of two.
const SCALED_UNIT: i32 = 1000;

/// `key - pivot`: exact for nearby values (the doubles' difference is exact within a factor of
/// two of each other, and the offsets of integers past 2^53 are small integers).
fn distance(key: NumberKey, pivot: NumberKey) -> f64 {
    (key.double() - pivot.double()) + (key.offset() as f64 - pivot.offset() as f64)
}

/// [`distance`] in units of 2^SCALED_UNIT, where the difference of values near the largest
/// doubles would overflow.
fn scaled_distance(key: NumberKey, pivot: NumberKey) -> f64 {
    let unit = power_of_two(-SCALED_UNIT);
    (key.double() * unit - pivot.double() * unit)
        + (key.offset() as f64 - pivot.offset() as f64) * unit
}

impl NumberSketch {
    /// Bytes held, beyond the struct.
    pub(crate) fn bytes(&self) -> usize {
        DistinctSketch::BYTES + self.quantiles.bytes()
    }

    /// Counts `key` `n` times.
    pub(crate) fn add(&mut self, key: NumberKey, n: u64) {
        if n == 0 {
            return;
        }
        let value = key.double();
        // `-0.0 + 0.0` is `0.0`: the two zeros are one value, as the exact counts say.
        let bits = (value + 0.0).to_bits();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&bits.to_le_bytes());
        bytes[8..].copy_from_slice(&key.offset().to_le_bytes());
        self.distinct.add_hash(fixed_hash(&bytes));
        self.quantiles.add(value, n);
        self.add_range(key, key);
        let pivot = *self.pivot.get_or_insert(key);
        let mut exact = distance(key, pivot);
        if !self.scaled && exact.abs() > power_of_two(500) {
            self.scale();
        }
        if self.scaled {
            exact = scaled_distance(key, pivot);
        }
        let count = self.count + n;
        let delta = exact - self.mean;
        self.mean += delta * (n as f64 / count as f64);
        self.m2 += delta * (exact - self.mean) * n as f64;
        self.count = count;
    }

    /// Puts the running sums in units of 2^SCALED_UNIT.
    fn scale(&mut self) {
        self.mean *= power_of_two(-SCALED_UNIT);
        self.m2 *= power_of_two(-SCALED_UNIT) * power_of_two(-SCALED_UNIT);
        self.scaled = true;
    }

    /// Adds everything `other` counted.
    pub(crate) fn merge(&mut self, mut other: NumberSketch) {
        if other.scaled && !self.scaled {
            self.scale();
        } else if self.scaled && !other.scaled {
            other.scale();
        }
        self.distinct.merge(&other.distinct);
        self.quantiles.merge(other.quantiles);
        if let Some((lo, hi)) = other.range {
            self.add_range(lo, hi);
        }
        if other.count > 0 {
            // `other`'s mean as a distance from this sketch's pivot.
            let other_mean = match (self.pivot, other.pivot) {
                (Some(mine), Some(theirs)) if self.scaled => {
                    other.mean + scaled_distance(theirs, mine)
                }
                (Some(mine), Some(theirs)) => other.mean + distance(theirs, mine),
                _ => {
                    self.pivot = other.pivot;
                    other.mean
                }
            };
            let count = self.count + other.count;
            let delta = other_mean - self.mean;
            let weight = other.count as f64 / count as f64;
            self.m2 += other.m2 + delta * delta * self.count as f64 * weight;
            self.mean += delta * weight;
            self.count = count;
        }
    }

    fn add_range(&mut self, lo: NumberKey, hi: NumberKey) {
        self.range = Some(match self.range {
            None => (lo, hi),
            Some((a, b)) => {
                (if lo.order(a).is_lt() { lo } else { a }, if hi.order(b).is_gt() { hi } else { b })
            }
        });
    }

    /// The unit of the running sums.
    fn unit(&self) -> f64 {
        if self.scaled { power_of_two(SCALED_UNIT) } else { 1.0 }
    }

    /// The mean of every value counted.
    pub(crate) fn mean(&self) -> f64 {
        let Some(pivot) = self.pivot else { return 0.0 };
        // The pivot as a double plus the rest (its offset, then the mean distance), each part
        // small beside the one before it.
        pivot.double() + (pivot.offset() as f64 + self.mean * self.unit())
    }

    /// The sample standard deviation (n − 1); 0 for a single value.
    pub(crate) fn std_dev(&self) -> f64 {
        let std =
            if self.count > 1 { (self.m2 / (self.count - 1) as f64).max(0.0).sqrt() } else { 0.0 };
        std * self.unit()
    }
}

#[cfg(test)]
mod welford_tests {
    use super::*;

    /// Values close to each other far from zero: integers past 2^53 (no double tells them
    /// apart) and doubles near 1e18, split over merged sketches.
    #[test]
    fn mean_and_std_dev_of_values_far_from_zero_keep_every_digit() {
        let mut rng = fastrand::Rng::with_seed(4);
        let ints: Vec<i128> =
            (0..20_000).map(|_| (1 << 62) + i128::from(rng.i32(-1_000_000..=1_000_000))).collect();
        let floats: Vec<f64> = (0..20_000).map(|_| 1e18 + (rng.f64() - 0.5) * 2e6).collect();
        let exact = |distances: &[f64]| {
            let n = distances.len() as f64;
            let mean = distances.iter().sum::<f64>() / n;
            let var = distances.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (mean, var.sqrt())
        };
        let sketched = |keys: Vec<NumberKey>| {
            let (mut a, mut b) = (NumberSketch::default(), NumberSketch::default());
            for (i, key) in keys.into_iter().enumerate() {
                if i % 3 == 0 { a.add(key, 1) } else { b.add(key, 1) }
            }
            a.merge(b);
            (a.mean(), a.std_dev())
        };
        let (mean, std) = exact(&ints.iter().map(|&v| (v - (1 << 62)) as f64).collect::<Vec<_>>());
        let (got_mean, got_std) = sketched(ints.iter().map(|&v| NumberKey::integer(v)).collect());
        assert!((got_std / std - 1.0).abs() < 1e-12, "{got_std} vs {std}");
        // The mean as a double: the nearest one to 2^62 + mean (spacing 1,024 there).
        assert!((got_mean - (2f64.powi(62) + mean)).abs() <= 1024.0, "{got_mean}");
        let (mean, std) = exact(&floats.iter().map(|&v| v - 1e18).collect::<Vec<_>>());
        let (got_mean, got_std) = sketched(floats.iter().map(|&v| NumberKey::float(v)).collect());
        assert!((got_std / std - 1.0).abs() < 1e-12, "{got_std} vs {std}");
        assert!((got_mean - (1e18 + mean)).abs() <= 128.0, "{got_mean}");
    }

    #[test]
    fn mean_and_std_dev_survive_values_near_the_largest_doubles() {
        let values: Vec<f64> =
            (0..2_000).map(|i| (-1f64).powi(i) * 1e307 * (1.0 + (i % 17) as f64)).collect();
        let (mut a, mut b) = (NumberSketch::default(), NumberSketch::default());
        for (i, &v) in values.iter().enumerate() {
            // Half the values in each; merged into a sketch that only saw a small one.
            if i % 2 == 0 { a.add(NumberKey::float(v), 1) } else { b.add(NumberKey::float(v), 1) }
        }
        let mut small = NumberSketch::default();
        small.add(NumberKey::float(1.0), 1);
        small.merge(a);
        small.merge(b);
        // The same figures in units of 1e300, where nothing overflows.
        let all: Vec<f64> = values.iter().map(|v| v / 1e300).chain([1e-300]).collect();
        let n = all.len() as f64;
        let mean = all.iter().sum::<f64>() / n;
        let std = (all.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let (mean, std) = (mean * 1e300, std * 1e300);
        assert!((small.std_dev() - std).abs() <= 1e-9 * std, "{} vs {std}", small.std_dev());
        assert!((small.mean() - mean).abs() <= 1e-9 * std, "{} vs {mean}", small.mean());
    }
}
