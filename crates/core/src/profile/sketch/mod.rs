//! What a property switches to when its exact counters outgrow the memory budget: mergeable
//! sketches whose error is known and reported with every figure they give (see
//! [`super::Approximation`]). Counts, extremes, lengths, formats, means and standard deviations
//! stay exact — they are running sums; distinct counts, frequent values, quantiles and
//! histograms become estimates.

mod distinct;
mod frequent;
mod quantiles;

pub(crate) use distinct::{DistinctSketch, RELATIVE_STANDARD_ERROR};
pub(crate) use frequent::{FREQUENT_KEPT, FrequentStrings, string_hash};
pub(crate) use quantiles::QuantileSketch;

use std::hash::BuildHasher;

use super::accumulate::{Lengths, value_key};
use super::exact::NumberKey;
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
    /// The smallest and largest value key (exact).
    pub min: Option<String>,
    pub max: Option<String>,
}

impl StringSketch {
    /// Bytes held, beyond the struct.
    pub(crate) fn bytes(&self) -> usize {
        DistinctSketch::BYTES + self.frequent.bytes()
    }

    /// Counts one string `n` times. `key` is what it is counted under (the value itself, or the
    /// shortened key of an over-long one) and `chars` its length in characters, when not already
    /// counted.
    pub(crate) fn add_key(
        &mut self,
        key: &str,
        chars: Option<u64>,
        format: Option<StringFormat>,
        n: u64,
    ) {
        let hash = string_hash(key);
        self.distinct.add_hash(hash);
        self.frequent.add(hash, key, n);
        if let Some(chars) = chars {
            self.lengths.add(chars, n);
        }
        if let Some(format) = format {
            self.count_format(format, n);
        }
        // Ascending ids and timestamps make every value a new largest: the buffer is reused.
        keep_if(&mut self.min, key, |m| key < m);
        keep_if(&mut self.max, key, |m| key > m);
    }

    /// Counts one string value as it arrives.
    #[inline]
    pub(crate) fn add(&mut self, value: &str) {
        let chars = if value.is_ascii() { value.len() } else { value.chars().count() } as u64;
        self.add_key(&value_key(value), Some(chars), formats::detect(value), 1);
    }

    fn count_format(&mut self, format: StringFormat, n: u64) {
        match self.formats.iter_mut().find(|(f, _)| *f == format) {
            Some((_, count)) => *count += n,
            None => self.formats.push((format, n)),
        }
    }

    /// Adds everything `other` counted.
    pub(crate) fn merge(&mut self, other: &StringSketch) {
        self.distinct.merge(&other.distinct);
        self.frequent.merge(&other.frequent);
        self.lengths.merge(other.lengths);
        for &(format, n) in &other.formats {
            self.count_format(format, n);
        }
        if let Some(m) = &other.min {
            keep_if(&mut self.min, m, |mine| m.as_str() < mine);
        }
        if let Some(m) = &other.max {
            keep_if(&mut self.max, m, |mine| m.as_str() > mine);
        }
    }
}

/// Puts `key` in `slot` when the slot is empty or `better` says so of what it holds.
#[inline]
fn keep_if(slot: &mut Option<String>, key: &str, better: impl FnOnce(&str) -> bool) {
    match slot {
        Some(held) if better(held) => {
            held.clear();
            held.push_str(key);
        }
        Some(_) => {}
        None => *slot = Some(key.to_string()),
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
    /// as Chan et al.): computed from every value.
    pub count: u64,
    pub mean: f64,
    pub m2: f64,
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
        let exact = value + key.offset() as f64;
        let count = self.count + n;
        let delta = exact - self.mean;
        self.mean += delta * (n as f64 / count as f64);
        self.m2 += delta * (exact - self.mean) * n as f64;
        self.count = count;
    }

    /// Adds everything `other` counted.
    pub(crate) fn merge(&mut self, other: NumberSketch) {
        self.distinct.merge(&other.distinct);
        self.quantiles.merge(other.quantiles);
        if let Some((lo, hi)) = other.range {
            self.add_range(lo, hi);
        }
        if other.count > 0 {
            let count = self.count + other.count;
            let delta = other.mean - self.mean;
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

    /// The sample standard deviation (n − 1); 0 for a single value.
    pub(crate) fn std_dev(&self) -> f64 {
        if self.count > 1 { (self.m2 / (self.count - 1) as f64).max(0.0).sqrt() } else { 0.0 }
    }
}
