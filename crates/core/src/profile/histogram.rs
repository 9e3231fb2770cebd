//! Where a numeric property's histogram bins lie, decided from summary statistics alone (count,
//! range, quartiles), before any value is counted, so values in memory and values in a database
//! are binned on the same edges.
//!
//! Edges are exact decimals (`k × m × 10^e`, read back from their decimal text), so `6e-8` is
//! `6e-8` and not `6.000000000000001e-08`. The first bin always holds the minimum and the last
//! the maximum: a histogram never has an empty or single-value bin added by rounding at either
//! end. An explicit bin count is honoured exactly (unless integer data has fewer distinct
//! possible values); the automatic choice switches away from equal-width bins when most values
//! would land in one bin (skewed data), and says so in [`BinScale`].

use serde::Serialize;

use super::model::NumberProfile;
use super::numeric::{AUTO_MAX_BINS, HistogramBin, MAX_BINS, ValueRuns, auto_bins_for};
use crate::figure;

/// How a histogram's edges were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BinScale {
    /// Equal-width bins on round edges (or exactly the asked number of equal-width bins).
    Linear,
    /// Bins on a logarithmic scale (1, 2, 5 × powers of ten): positive values spread over
    /// several orders of magnitude.
    Log,
    /// Equal-width bins over the bulk of the values (the quartiles ± 1.5 × IQR), with one bin for
    /// the low outliers and/or one for the high outliers.
    LinearWithOutlierBins,
}

/// Bin edges for a histogram. Bin `i` is `[edges[i], edges[i+1])`; the last bin also holds its
/// top edge.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramLayout {
    /// Bin edges, strictly ascending.
    pub edges: Vec<f64>,
    /// How the edges were chosen.
    pub scale: BinScale,
    /// True when bins hold whole numbers (labels name the integers a bin holds).
    integers: bool,
    /// True when the last bin is labelled with its top edge included (integers only; float bins
    /// are always labelled by their edges).
    closed_top: bool,
}

/// A round step: `mantissa × 10^exponent`, mantissa 1, 2, 25 (with `exponent` one lower) or 5.
#[derive(Debug, Clone, Copy)]
struct Step {
    mantissa: i64,
    exponent: i32,
}

impl Step {
    /// The smallest round step at least `raw` (> 0).
    fn at_least(raw: f64) -> Self {
        let exponent = raw.log10().floor() as i32;
        let mut step = Self { mantissa: 1, exponent };
        // `log10` may be off by one at exact powers of ten; walk to the right step.
        while step.value() > raw && step.value() / 10.0 >= raw {
            step.exponent -= 1;
        }
        while step.value() < raw {
            step = step.next();
        }
        step
    }

    /// The next larger round step.
    fn next(self) -> Self {
        match self.mantissa {
            1 => Self { mantissa: 2, ..self },
            2 => Self { mantissa: 25, exponent: self.exponent - 1 },
            25 => Self { mantissa: 5, exponent: self.exponent + 1 },
            _ => Self { mantissa: 1, exponent: self.exponent + 1 },
        }
    }

    fn value(self) -> f64 {
        decimal(i128::from(self.mantissa), self.exponent)
    }

    /// The `k`-th multiple of the step, as the double nearest that exact decimal.
    fn multiple(self, k: i128) -> f64 {
        decimal(k * i128::from(self.mantissa), self.exponent)
    }
}

/// `units × 10^exponent`, correctly rounded (std's float parser is).
fn decimal(units: i128, exponent: i32) -> f64 {
    format!("{units}e{exponent}").parse().unwrap_or(f64::NAN)
}

impl HistogramLayout {
    /// The layout describe_property uses for `numbers`: `bins` equal-width bins when asked,
    /// else the automatic choice (see [`BinScale`]).
    pub fn for_numbers(numbers: &NumberProfile, bins: Option<usize>) -> Option<Self> {
        let integers = numbers.all_integers();
        match bins {
            Some(bins) => Self::new(numbers.min, numbers.max, bins, integers),
            None => Self::automatic(numbers.count, numbers.min, numbers.max, numbers.quartiles, integers),
        }
    }

    /// Exactly `bins` bins covering `min..=max` (fewer only when integer data has fewer possible
    /// values), on round edges when round edges give that many, else equal-width edges.
    /// `None` when `min > max` or either is not finite.
    pub fn new(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        let bins = bins.clamp(1, MAX_BINS);
        let round = Self::round(min, max, bins, integers)?;
        if round.bins() == bins || min == max {
            return Some(round);
        }
        Some(Self::equal_width(min, max, bins, integers).unwrap_or(round))
    }

    /// The automatic layout: the Freedman–Diaconis bin count on round edges, unless the data is
    /// skewed (three quarters of the values would share the first or last bin), in which case
    /// log-scale bins (positive values over two or more orders of magnitude) or outlier bins.
    pub fn automatic(count: u64, min: f64, max: f64, quartiles: [f64; 2], integers: bool) -> Option<Self> {
        let [q1, q3] = quartiles;
        let bins = auto_bins_for(count, min, max, q1, q3);
        let linear = Self::round(min, max, bins, integers)?;
        let n = linear.bins();
        let skewed = n >= 4 && (q3 < linear.edges[1] || q1 >= linear.edges[n - 1]);
        if !skewed {
            return Some(linear);
        }
        if min > 0.0
            && max / min >= 100.0
            && let Some(log) = Self::log(min, max, integers)
        {
            return Some(log);
        }
        Some(Self::with_outlier_bins(min, max, q1, q3, bins, integers).unwrap_or(linear))
    }

    /// At most `bins` bins on multiples of the smallest round step that needs no more.
    fn round(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        if !(min.is_finite() && max.is_finite()) || min > max {
            return None;
        }
        if min == max {
            return Some(Self { edges: vec![min, max], scale: BinScale::Linear, integers, closed_top: integers });
        }
        let mut step = Step::at_least((max - min) / bins as f64);
        if integers && step.value() < 1.0 {
            step = Step { mantissa: 1, exponent: 0 };
        }
        for _ in 0..64 {
            if integers && step.value().fract() != 0.0 {
                step = step.next();
                continue;
            }
            let start = (min / step.value()).floor();
            if !start.is_finite() || start.abs() > 1e30 {
                return None;
            }
            let start = start as i128;
            // Guard against the floor landing one step high through rounding.
            let start = if step.multiple(start) > min {
                start - 1
            } else if step.multiple(start + 1) <= min {
                start + 1
            } else {
                start
            };
            // Integer bins are labelled by the whole numbers they hold: all half-open with the
            // top one reaching past `max` when that fits, else the last bin closed at its top.
            let open_top = if integers { max + 1.0 } else { f64::INFINITY };
            let covering = |top: f64| (1..=bins as i128).find(|&n| step.multiple(start + n) >= top);
            let (n, closed_top) = match (covering(open_top), covering(max)) {
                (Some(n), _) if integers => (n, false),
                (_, Some(n)) => (n, integers),
                _ => {
                    step = step.next();
                    continue;
                }
            };
            let edges = (0..=n).map(|i| step.multiple(start + i)).collect();
            return Some(Self { edges, scale: BinScale::Linear, integers, closed_top });
        }
        None
    }

    /// Exactly `bins` equal-width bins from `min` to `max`; inner edges rounded to the fewest
    /// significant digits that keep them within a thousandth of a bin of the exact edge, and
    /// never to fewer than [`figure::MIN_DIGITS`] (an edge of `0.007728` between values like
    /// `0.0077284` would misplace them to the reader).
    fn equal_width(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        if integers {
            let span = max - min + 1.0;
            if span < bins as f64 {
                return None;
            }
            let edges: Vec<f64> = (0..=bins).map(|i| min + (i as f64 * span / bins as f64).round()).collect();
            return strictly_ascending(&edges).then_some(Self { edges, scale: BinScale::Linear, integers, closed_top: false });
        }
        let width = (max - min) / bins as f64;
        let mut edges = vec![min];
        for i in 1..bins {
            let exact = min + width * i as f64;
            let digits = (((exact.abs() / width).log10().ceil().max(0.0) as usize) + 3).max(figure::MIN_DIGITS);
            edges.push(figure::significant(exact, digits));
        }
        edges.push(max);
        strictly_ascending(&edges).then_some(Self { edges, scale: BinScale::Linear, integers, closed_top: false })
    }

    /// Bins on 1, 2, 5 × powers of ten (whole decades when the values span many).
    fn log(min: f64, max: f64, integers: bool) -> Option<Self> {
        let low = min.log10().floor() as i32;
        let high = max.log10().ceil() as i32;
        let decades = (high - low).max(1) as usize;
        let mantissas: &[i128] = if decades * 3 <= AUTO_MAX_BINS { &[1, 2, 5] } else { &[1] };
        let every = decades.div_ceil(AUTO_MAX_BINS).max(1) as i32;
        let mut ticks = Vec::new();
        let mut exponent = low - 1;
        while exponent <= high + 1 {
            ticks.extend(mantissas.iter().map(|&m| decimal(m, exponent)));
            exponent += every;
        }
        // The last tick at or below `min`, through the first at or above `max`.
        let first = ticks.iter().rposition(|&t| t <= min)?;
        let last = ticks.iter().position(|&t| t >= max)?;
        let edges = ticks[first..=last].to_vec();
        if edges.len() < 2 {
            return None;
        }
        if integers && edges[1] < 1.0 {
            return None;
        }
        strictly_ascending(&edges).then_some(Self { edges, scale: BinScale::Log, integers, closed_top: integers })
    }

    /// Round bins over `[q1 − 1.5 IQR, q3 + 1.5 IQR] ∩ [min, max]`, plus a bin from `min` up
    /// to the body and one from the body up to `max` where values lie outside it.
    fn with_outlier_bins(min: f64, max: f64, q1: f64, q3: f64, bins: usize, integers: bool) -> Option<Self> {
        let iqr = q3 - q1;
        let (mut low, mut high) = ((q1 - 1.5 * iqr).max(min), (q3 + 1.5 * iqr).min(max));
        if integers {
            (low, high) = (low.floor(), high.ceil());
        }
        if high <= low {
            return None;
        }
        let body = Self::round(low, high, bins.saturating_sub(2).max(2), integers)?;
        let mut edges: Vec<f64> = body.edges.clone();
        // Integer bodies end past `high` (half-open); the tail starts where the body ends.
        if integers && body.closed_top {
            let top = edges.len() - 1;
            edges[top] += 1.0;
        }
        if edges[0] > min {
            edges.insert(0, min);
        } else {
            edges[0] = edges[0].min(min);
        }
        let top = edges[edges.len() - 1];
        let closed_top = if top <= max {
            if top < max {
                edges.push(max);
            }
            integers
        } else {
            body.closed_top && !integers
        };
        if edges.len() < 3 {
            return None;
        }
        strictly_ascending(&edges).then_some(Self { edges, scale: BinScale::LinearWithOutlierBins, integers, closed_top })
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.edges.len().saturating_sub(1)
    }

    /// Counts the values into the bins.
    pub fn count_runs(&self, runs: &ValueRuns) -> Vec<u64> {
        let bins = self.bins();
        (0..bins)
            .map(|i| {
                let to = if i + 1 == bins { runs.count() } else { runs.count_below(self.edges[i + 1]) };
                to - runs.count_below(self.edges[i])
            })
            .collect()
    }

    /// The labelled bins from per-bin counts (as many as [`Self::bins`]).
    pub fn label(&self, counts: &[u64]) -> Vec<HistogramBin> {
        let total: u64 = counts.iter().sum();
        let bins = self.bins();
        self.edges
            .windows(2)
            .zip(counts)
            .enumerate()
            .map(|(i, (pair, &count))| {
                let (low, high) = (pair[0], pair[1]);
                let range = if low == high {
                    figure::text(low)
                } else if self.integers {
                    // Integer bins name the whole numbers they hold.
                    let last = if i + 1 == bins && self.closed_top { high } else { (high - 1.0).max(low.ceil()) };
                    let first = low.ceil();
                    if last <= first { figure::text(first) } else { span(first, last) }
                } else {
                    span(low, high)
                };
                HistogramBin { range, min: low, max: high, count, percentage: figure::percent(count, total) }
            })
            .collect()
    }
}

/// `a-b` for plain non-negative numbers, `a to b` when a sign or exponent would make `-` ambiguous.
fn span(low: f64, high: f64) -> String {
    let (a, b) = (figure::text(low), figure::text(high));
    let plain = |t: &str| !t.contains(['-', 'e']);
    if plain(&a) && plain(&b) { format!("{a}-{b}") } else { format!("{a} to {b}") }
}

fn strictly_ascending(edges: &[f64]) -> bool {
    edges.len() >= 2 && edges.windows(2).all(|w| w[0] < w[1])
}

/// Builds a histogram of the values with `bins` bins (see [`HistogramLayout::new`]).
pub fn histogram(runs: &ValueRuns, bins: usize, integers: bool) -> Vec<HistogramBin> {
    if runs.count() == 0 {
        return Vec::new();
    }
    match HistogramLayout::new(runs.min(), runs.max(), bins, integers) {
        Some(layout) => layout.label(&layout.count_runs(runs)),
        None => Vec::new(),
    }
}
