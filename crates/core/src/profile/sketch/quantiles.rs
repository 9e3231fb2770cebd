//! Quantiles and histograms past the memory budget: values counted in logarithmic buckets
//! (DDSketch, Masson et al. 2019), so every value is known to within a relative error `α` of
//! itself. When the buckets would span more than [`MAX_BUCKETS`] per sign, neighbouring buckets
//! are merged pairwise and `α` roughly doubles (the uniform collapse of UDDSketch): memory stays
//! bounded and the error actually reached is the one reported.

/// Relative error to start with: 1/512 (about 0.2 %).
const ALPHA_START: f64 = 1.0 / 512.0;
/// Most buckets per sign before neighbours merge.
const MAX_BUCKETS: usize = 2_048;

/// Buckets of one sign: `counts[i]` counts values whose index is `first + i`.
#[derive(Debug, Clone, Default)]
struct Store {
    first: i64,
    counts: Vec<u64>,
}

impl Store {
    fn add(&mut self, index: i64, n: u64) {
        if self.counts.is_empty() {
            self.first = index;
            self.counts.push(n);
            return;
        }
        if index < self.first {
            let grow = (self.first - index) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = index;
        }
        let at = (index - self.first) as usize;
        if at >= self.counts.len() {
            self.counts.resize(at + 1, 0);
        }
        self.counts[at] += n;
    }

    /// The span in buckets if `index` were added.
    fn span_with(&self, index: i64) -> usize {
        if self.counts.is_empty() {
            return 1;
        }
        let last = self.first + self.counts.len() as i64 - 1;
        (last.max(index) - self.first.min(index) + 1) as usize
    }

    /// Merges pairs: index `i` becomes `ceil(i / 2)`, the index of the same values at `γ²`.
    fn collapse(&mut self) {
        let mut merged = Store::default();
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                merged.add(half_up(self.first + i as i64), n);
            }
        }
        *self = merged;
    }

    fn iter(&self) -> impl DoubleEndedIterator<Item = (i64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, &n)| (self.first + i as i64, n))
    }
}

fn half_up(i: i64) -> i64 {
    i.div_euclid(2) + i.rem_euclid(2)
}

/// A relative-error quantile sketch; see the module docs.
#[derive(Debug, Clone, Default)]
pub(crate) struct QuantileSketch {
    /// How many times the buckets were merged pairwise (`γ = γ₀^(2^level)`).
    level: u32,
    positive: Store,
    negative: Store,
    zeros: u64,
}

impl QuantileSketch {
    fn ln_gamma(level: u32) -> f64 {
        let gamma0 = (1.0 + ALPHA_START) / (1.0 - ALPHA_START);
        gamma0.ln() * f64::from(1u32 << level.min(31))
    }

    /// The relative error every value is known to: `(γ - 1) / (γ + 1)`.
    pub(crate) fn relative_error(&self) -> f64 {
        let gamma = Self::ln_gamma(self.level).exp();
        if gamma.is_finite() { (gamma - 1.0) / (gamma + 1.0) } else { 1.0 }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        (self.positive.counts.capacity() + self.negative.counts.capacity()) * 8
    }

    fn index(&self, magnitude: f64) -> i64 {
        // Magnitudes are finite and positive here; the clamp keeps an overflowing logarithm
        // (values near f64::MAX at a fine level) an index.
        let x = (magnitude.ln() / Self::ln_gamma(self.level)).clamp(-1e15, 1e15);
        // The ceiling by hand: `f64::ceil` is a library call on baseline x86-64.
        let truncated = x as i64;
        if (truncated as f64) < x { truncated + 1 } else { truncated }
    }

    /// Counts `value` `n` times.
    pub(crate) fn add(&mut self, value: f64, n: u64) {
        if value == 0.0 || value.is_nan() {
            self.zeros += n;
            return;
        }
        let magnitude = value.abs().min(f64::MAX);
        // Each collapse halves the span; 64 of them put the whole f64 range in two buckets.
        for _ in 0..64 {
            let index = self.index(magnitude);
            let store = if value > 0.0 { &mut self.positive } else { &mut self.negative };
            if store.span_with(index) <= MAX_BUCKETS {
                store.add(index, n);
                return;
            }
            self.collapse();
        }
    }

    fn collapse(&mut self) {
        self.level += 1;
        self.positive.collapse();
        self.negative.collapse();
    }

    /// Adds every value `other` counted (at the coarser of the two levels).
    pub(crate) fn merge(&mut self, mut other: QuantileSketch) {
        while self.level < other.level {
            self.collapse();
        }
        while other.level < self.level {
            other.collapse();
        }
        self.zeros += other.zeros;
        for (index, n) in other.positive.iter() {
            self.positive.add(index, n);
        }
        for (index, n) in other.negative.iter() {
            self.negative.add(index, n);
        }
        for _ in 0..64 {
            if self.positive.counts.len() <= MAX_BUCKETS
                && self.negative.counts.len() <= MAX_BUCKETS
            {
                break;
            }
            self.collapse();
        }
    }

    /// The value standing for bucket `index`: within the relative error of every value in it.
    fn representative(&self, index: i64) -> f64 {
        let ln_gamma = Self::ln_gamma(self.level);
        let gamma = ln_gamma.exp();
        // In logarithms: 2·γ^i overflows for values past half of f64::MAX.
        (index as f64 * ln_gamma + (2.0 / (gamma + 1.0)).ln()).exp()
    }

    /// Each bucket's representative value with its count, ascending, clamped into `[min, max]`
    /// (the exact extremes) so no shown figure lies outside the data.
    pub(crate) fn runs(&self, min: f64, max: f64) -> Vec<(f64, u64)> {
        // A representative past f64::MAX is infinite: the extreme on its own side.
        let clamp = |v: f64| {
            if v.is_finite() {
                v.clamp(min, max)
            } else if v > 0.0 {
                max
            } else {
                min
            }
        };
        let mut out = Vec::new();
        for (index, n) in self.negative.iter().rev() {
            out.push((clamp(-self.representative(index)), n));
        }
        if self.zeros > 0 {
            out.push((clamp(0.0), self.zeros));
        }
        for (index, n) in self.positive.iter() {
            out.push((clamp(self.representative(index)), n));
        }
        // Clamping may make neighbours equal: fold them.
        let mut folded: Vec<(f64, u64)> = Vec::with_capacity(out.len());
        for (v, n) in out {
            match folded.last_mut() {
                Some((last, count)) if *last == v => *count += n,
                _ => folded.push((v, n)),
            }
        }
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts `values` in `sketch` and sorts them: the sketch's runs and its stated error.
    fn sketched(sketch: &mut QuantileSketch, values: &mut [f64]) -> (Vec<(f64, u64)>, f64) {
        for &v in values.iter() {
            sketch.add(v, 1);
        }
        values.sort_by(f64::total_cmp);
        let (min, max) = (values[0], values[values.len() - 1]);
        (sketch.runs(min, max), sketch.relative_error())
    }

    #[test]
    fn values_near_the_largest_doubles_keep_their_sign_and_bound() {
        let mut rng = fastrand::Rng::with_seed(5);
        for sign in [1.0, -1.0] {
            let mut sketch = QuantileSketch::default();
            let mut values: Vec<f64> =
                (0..20_000).map(|_| sign * 10f64.powf(307.0 + rng.f64())).collect();
            values.extend([sign * f64::MAX, sign * 1e308]);
            let (runs, alpha) = sketched(&mut sketch, &mut values);
            assert!(alpha < 0.01, "{alpha}");
            // Every value's representative within alpha of it, rank by rank.
            let mut rank = 0;
            for (representative, n) in runs {
                for v in &values[rank..rank + n as usize] {
                    assert!(
                        (representative - v).abs() <= alpha * v.abs() * 1.000_001,
                        "{representative:e} for {v:e}"
                    );
                }
                rank += n as usize;
            }
            assert_eq!(rank, values.len());
        }
    }

    #[test]
    fn bucket_indexes_are_the_ceiling_of_the_scaled_logarithm() {
        let mut rng = fastrand::Rng::with_seed(3);
        for level in [0, 1, 5, 12] {
            let sketch = QuantileSketch { level, ..QuantileSketch::default() };
            for _ in 0..20_000 {
                let magnitude = match rng.u8(0..4) {
                    0 => f64::from_bits(rng.u64(1..0x7fef_ffff_ffff_ffff)),
                    1 => f64::from(rng.u32(1..10_000)),
                    2 => rng.f64() * 1e3,
                    _ => 1.0 + rng.f64() * 1e-9,
                };
                if magnitude <= 0.0 {
                    continue;
                }
                let x = magnitude.ln() / QuantileSketch::ln_gamma(level);
                let expected = x.ceil().clamp(-1e15, 1e15) as i64;
                assert_eq!(sketch.index(magnitude), expected, "{magnitude:e} at level {level}");
            }
        }
    }

    /// The value of rank `rank` (0-based) among runs.
    fn at_rank(runs: &[(f64, u64)], rank: u64) -> f64 {
        let mut seen = 0;
        for &(v, n) in runs {
            seen += n;
            if rank < seen {
                return v;
            }
        }
        runs.last().map_or(0.0, |r| r.0)
    }

    #[test]
    fn every_rank_is_within_the_stated_relative_error() {
        let mut values: Vec<f64> =
            (0..200_000).map(|i| ((i as f64) * 0.618_033_988_7).fract() * 1e4 - 2e3).collect();
        values.extend([0.0, 1e-6, -1e-6, 12345.678]);
        let mut sketch = QuantileSketch::default();
        let (runs, alpha) = sketched(&mut sketch, &mut values);
        assert!(alpha > 0.0 && alpha < 0.05, "{alpha}");
        for rank in (0..values.len()).step_by(997) {
            let exact = values[rank];
            let got = at_rank(&runs, rank as u64);
            assert!(
                (got - exact).abs() <= alpha * exact.abs() + 1e-12,
                "rank {rank}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn a_wide_range_collapses_and_says_so_and_merging_keeps_the_bound() {
        let mut a = QuantileSketch::default();
        let mut b = QuantileSketch::default();
        let values: Vec<f64> = (0..2_000).map(|i| 10f64.powf(-300.0 + 0.3 * i as f64)).collect();
        for (i, &v) in values.iter().enumerate() {
            if i % 2 == 0 { a.add(v, 1) } else { b.add(v, 1) }
        }
        a.merge(b);
        assert!(a.bytes() <= 2 * MAX_BUCKETS * 8 * 2);
        let alpha = a.relative_error();
        assert!(alpha > ALPHA_START, "{alpha}");
        let runs = a.runs(values[0], values[values.len() - 1]);
        for rank in (0..values.len()).step_by(37) {
            let got = at_rank(&runs, rank as u64);
            let exact = values[rank];
            assert!((got - exact).abs() <= alpha * exact * (1.0 + 1e-9), "{got} vs {exact}");
        }
    }
}
