//! Distinct counts past the memory budget: a HyperLogLog of 2^14 one-byte registers (16 KiB)
//! with Ertl's improved estimator, which needs no bias tables and is unbiased from a handful of
//! values to billions. Mergeable: the union of two sketches is the register-wise maximum.

/// Index bits: 2^14 registers.
const P: u32 = 14;
const M: usize = 1 << P;
/// Hash bits left for the rank.
const Q: u32 = 64 - P;

/// The relative standard error of the estimate, 1.04/√m (0.81 % for 2^14 registers).
pub(crate) const RELATIVE_STANDARD_ERROR: f64 = 1.04 / 128.0;

/// A HyperLogLog sketch over 64-bit hashes.
#[derive(Debug, Clone)]
pub(crate) struct DistinctSketch {
    registers: Box<[u8]>,
}

impl Default for DistinctSketch {
    fn default() -> Self {
        Self { registers: vec![0; M].into_boxed_slice() }
    }
}

impl DistinctSketch {
    /// Bytes held.
    pub(crate) const BYTES: usize = M;

    /// Counts one value by its 64-bit hash.
    #[inline]
    pub(crate) fn add_hash(&mut self, hash: u64) {
        // The profiler's hasher is built for hash tables, not for uniform high bits: mix them
        // (the murmur3 finaliser) so every register and rank is equally likely.
        let mut hash = hash ^ (hash >> 33);
        hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
        hash ^= hash >> 33;
        hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        hash ^= hash >> 33;
        let index = (hash >> Q) as usize;
        // The rank: leading zeros of the remaining Q bits, plus one (at most Q + 1).
        let rest = hash << P;
        let rank = (rest.leading_zeros().min(Q) + 1) as u8;
        if let Some(register) = self.registers.get_mut(index)
            && *register < rank
        {
            *register = rank;
        }
    }

    /// Adds every value `other` counted.
    pub(crate) fn merge(&mut self, other: &DistinctSketch) {
        for (mine, theirs) in self.registers.iter_mut().zip(other.registers.iter()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// The estimated number of distinct values (Ertl 2017, "New cardinality estimation
    /// algorithms for HyperLogLog sketches", the improved raw estimator).
    pub(crate) fn estimate(&self) -> u64 {
        let mut histogram = [0u32; Q as usize + 2];
        for &r in self.registers.iter() {
            histogram[usize::from(r).min(Q as usize + 1)] += 1;
        }
        let m = M as f64;
        let mut z = m * tau(1.0 - f64::from(histogram[Q as usize + 1]) / m);
        for k in (1..=Q as usize).rev() {
            z = 0.5 * (z + f64::from(histogram[k]));
        }
        z += m * sigma(f64::from(histogram[0]) / m);
        let alpha_infinity = 0.5 / std::f64::consts::LN_2;
        let estimate = alpha_infinity * m * m / z;
        if estimate.is_finite() { estimate.round() as u64 } else { 0 }
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    // Converges in about 60 steps (x squares towards 0); the bound only guards the loop.
    for _ in 0..1_000 {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            break;
        }
    }
    z
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    for _ in 0..1_000 {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == before {
            break;
        }
    }
    z / 3.0
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    fn sketch_of(range: std::ops::Range<u64>) -> DistinctSketch {
        let hasher = crate::profile::string_counts::hasher();
        let mut sketch = DistinctSketch::default();
        for i in range {
            sketch.add_hash(hasher.hash_one(i));
        }
        sketch
    }

    #[test]
    fn estimates_stay_within_three_standard_errors_from_few_to_millions() {
        for n in [0u64, 1, 10, 1_000, 20_000, 100_000, 2_000_000] {
            let estimate = sketch_of(0..n).estimate() as f64;
            let bound = (3.0 * RELATIVE_STANDARD_ERROR * n as f64).max(1.0);
            assert!((estimate - n as f64).abs() <= bound, "n {n}: estimate {estimate}");
        }
    }

    #[test]
    fn merging_is_the_union_and_repeats_count_once() {
        let mut a = sketch_of(0..60_000);
        let b = sketch_of(40_000..100_000);
        a.merge(&b);
        let estimate = a.estimate() as f64;
        assert!((estimate - 100_000.0).abs() <= 3.0 * RELATIVE_STANDARD_ERROR * 100_000.0);
        let twice = sketch_of(0..50_000);
        let mut again = sketch_of(0..50_000);
        again.merge(&twice);
        assert_eq!(again.estimate(), twice.estimate());
    }
}
