//! Where a numeric property's histogram bins lie, decided from summary statistics alone (count,
//! range, quartiles), before any value is counted, so values in memory and values in a database
//! are binned on the same edges.
//!
//! Edges are exact decimals (`k × m × 10^e`, read back from their decimal text), so `6e-8` is
//! `6e-8` and not `6.000000000000001e-08`. The first bin always holds the minimum and the last
//! the maximum: a histogram never has an empty or single-value bin added by rounding at either
//! end. An explicit bin count fixes the number of bins (unless integer data has fewer distinct
//! possible values); it does not fix the scale. Asked or automatic, one rule picks the scale:
//! equal-width bins, unless most values would land in one of them (skewed data), then log-scale
//! or outlier bins (`skewed_bins.rs`), and [`BinScale`] says which.

use serde::Serialize;

use super::model::NumberProfile;
use super::numeric::{HistogramBin, MAX_BINS, ValueRuns, auto_bins_for};
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
    pub(super) integers: bool,
    /// True when the last bin is labelled with its top edge included (integers only; float bins
    /// are always labelled by their edges).
    pub(super) closed_top: bool,
    /// The smallest and largest integer of the data, exactly, when known: past 2^53 the edges
    /// (doubles) may stop short of them, and the end bins' labels reach them.
    exact_ends: Option<(i128, i128)>,
}

/// Computed (not round) edges keep at least this many significant digits: enough to tell apart
/// values that differ in the 6th, never the float noise of the 17th.
pub(super) const EDGE_DIGITS: usize = 6;

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
pub(super) fn decimal(units: i128, exponent: i32) -> f64 {
    format!("{units}e{exponent}").parse().unwrap_or(f64::NAN)
}

impl HistogramLayout {
    /// A layout of these edges.
    pub(super) fn of(edges: Vec<f64>, scale: BinScale, integers: bool, closed_top: bool) -> Self {
        Self { edges, scale, integers, closed_top, exact_ends: None }
    }

    /// The layout describe_property uses for `numbers`: `bins` bins when asked, else the
    /// automatic count; either way on the scale [`Self::automatic`]'s rule picks.
    pub fn for_numbers(numbers: &NumberProfile, bins: Option<usize>) -> Option<Self> {
        let integers = numbers.all_integers();
        let mut layout = match bins {
            Some(bins) => {
                Self::with_bins(numbers.min, numbers.max, numbers.quartiles, bins, integers)
            }
            None => Self::automatic(
                numbers.count,
                numbers.min,
                numbers.max,
                numbers.quartiles,
                integers,
            ),
        }?;
        layout.exact_ends = numbers
            .exact_range
            .and_then(|(min, max)| min.integer_value().zip(max.integer_value()))
            .filter(|_| integers);
        Some(layout)
    }

    /// Exactly `bins` equal-width bins covering `min..=max` (fewer only when integer data has
    /// fewer possible values), on round edges when round edges give that many, else equal-width
    /// edges. `None` when `min > max` or either is not finite.
    pub fn new(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        let bins = bins.clamp(1, MAX_BINS);
        // No round step gives one bin across zero (its edges would be -k·step and 0).
        match Self::round(min, max, bins, integers) {
            Some(round) if round.bins() == bins || min == max => Some(round),
            round => Self::equal_width(min, max, bins, integers).or(round),
        }
    }

    /// The automatic layout: the Freedman–Diaconis bin count on round edges, on the scale
    /// `Self::scaled` picks.
    pub fn automatic(
        count: u64,
        min: f64,
        max: f64,
        quartiles: [f64; 2],
        integers: bool,
    ) -> Option<Self> {
        let bins = auto_bins_for(count, min, max, quartiles[0], quartiles[1]);
        let linear = Self::round(min, max, bins, integers)?;
        Some(linear.scaled(min, max, quartiles, bins, false))
    }

    /// Exactly `bins` bins (as [`Self::new`] counts them), on the scale `Self::scaled` picks:
    /// asking for a bin count does not turn skewed data's log-scale bins into equal-width ones.
    pub fn with_bins(
        min: f64,
        max: f64,
        quartiles: [f64; 2],
        bins: usize,
        integers: bool,
    ) -> Option<Self> {
        let bins = bins.clamp(1, MAX_BINS);
        let linear = Self::new(min, max, bins, integers)?;
        Some(linear.scaled(min, max, quartiles, bins, true))
    }

    /// The scale rule, one for asked and automatic bin counts: these equal-width bins, unless
    /// the data is skewed (three quarters of the values share the first or last bin); then
    /// log-scale bins for positive values over two or more orders of magnitude, else outlier
    /// bins around the quartiles. `exact`: the layout must keep `bins` bins.
    fn scaled(self, min: f64, max: f64, [q1, q3]: [f64; 2], bins: usize, exact: bool) -> Self {
        let n = self.bins();
        let skewed = n >= 4 && (q3 < self.edges[1] || q1 >= self.edges[n - 1]);
        if !skewed {
            return self;
        }
        let integers = self.integers;
        let log = || {
            if exact {
                Self::log_exact(min, max, bins, integers)
            } else {
                Self::log(min, max, integers)
            }
        };
        if min > 0.0
            && max / min >= 100.0
            && let Some(log) = log()
        {
            return log;
        }
        let outliers = if exact {
            Self::outlier_bins_exact(min, max, q1, q3, bins, integers)
        } else {
            Self::with_outlier_bins(min, max, q1, q3, bins, integers)
        };
        outliers.unwrap_or(self)
    }

    /// At most `bins` bins on multiples of the smallest round step that needs no more.
    pub(super) fn round(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        if !(min.is_finite() && max.is_finite()) || min > max {
            return None;
        }
        if min == max {
            return Some(Self::of(vec![min, max], BinScale::Linear, integers, integers));
        }
        // Halves, so that a range near ±f64::MAX does not overflow; one bin across the whole
        // range of doubles still does, and has no round step.
        let raw = max / bins as f64 - min / bins as f64;
        if !raw.is_finite() {
            return None;
        }
        let mut step = Step::at_least(raw);
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
            // Past 2^53, `max + 1` is `max`: the top bin is closed there.
            let open_top = if integers && max + 1.0 > max { max + 1.0 } else { f64::INFINITY };
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
            return Some(Self::of(edges, BinScale::Linear, integers, closed_top));
        }
        None
    }

    /// Exactly `bins` equal-width bins from `min` to `max` (integers: to one past `max`,
    /// half-open); inner edges rounded to [`EDGE_DIGITS`] significant digits, or more where
    /// needed to keep them within a thousandth of a bin of the exact edge, and integers' to
    /// whole numbers.
    pub(super) fn equal_width(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        let top = if integers { max + 1.0 } else { max };
        if integers && top - min < bins as f64 {
            return None;
        }
        let width = top / bins as f64 - min / bins as f64;
        let mut edges = vec![min];
        for i in 1..bins {
            let exact = min + width * i as f64;
            // A double has at most 17 significant digits (bins of subnormal width would ask for
            // infinitely many).
            let digits = (((exact.abs() / width).log10().ceil().clamp(0.0, 17.0) as usize) + 3)
                .max(EDGE_DIGITS);
            let edge = figure::significant(exact, digits);
            edges.push(if integers { edge.round() } else { edge });
        }
        edges.push(top);
        // Past 2^53, `max + 1` is `max`: the top bin is closed there.
        let closed_top = integers && top == max;
        strictly_ascending(&edges).then_some(Self::of(
            edges,
            BinScale::Linear,
            integers,
            closed_top,
        ))
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.edges.len().saturating_sub(1)
    }

    /// Counts the values into the bins. The first bin starts at the smallest value: its edge,
    /// a double, can lie above an integer it rounds (-2^53 - 1 is written -2^53).
    pub fn count_runs(&self, runs: &ValueRuns) -> Vec<u64> {
        let bins = self.bins();
        (0..bins)
            .map(|i| {
                let to =
                    if i + 1 == bins { runs.count() } else { runs.count_below(self.edges[i + 1]) };
                let from = if i == 0 { 0 } else { runs.count_below(self.edges[i]) };
                to - from
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
                let range = if self.integers
                    && let (Some(first), Some(top)) = (whole(low.ceil()), whole(high))
                {
                    // Integer bins name the whole numbers they hold, counted exactly: past 2^53,
                    // `high - 1` as a double would be `high` itself.
                    let (mut first, mut last) = (
                        first,
                        if i + 1 == bins && self.closed_top { top } else { (top - 1).max(first) },
                    );
                    // The end bins reach the data's exact extremes, which the edges may round.
                    if let Some((min, max)) = self.exact_ends {
                        if i == 0 {
                            first = first.min(min);
                        }
                        if i + 1 == bins {
                            last = last.max(max);
                        }
                    }
                    if last <= first {
                        figure::integer_text(first)
                    } else {
                        span_text(figure::integer_text(first), figure::integer_text(last))
                    }
                } else if low == high {
                    figure::text(low)
                } else {
                    span(low, high)
                };
                HistogramBin {
                    range,
                    min: low,
                    max: high,
                    count,
                    percentage: figure::percent(count, total),
                }
            })
            .collect()
    }
}

/// `a-b` for plain non-negative numbers, `a to b` when a sign or exponent would make `-` ambiguous.
fn span(low: f64, high: f64) -> String {
    span_text(figure::text(low), figure::text(high))
}

fn span_text(a: String, b: String) -> String {
    let plain = |t: &str| !t.contains(['-', 'e']);
    if plain(&a) && plain(&b) { format!("{a}-{b}") } else { format!("{a} to {b}") }
}

/// A whole double as an exact integer.
fn whole(value: f64) -> Option<i128> {
    (value.is_finite() && value.fract() == 0.0 && value.abs() < 1.7e38).then_some(value as i128)
}

pub(super) fn strictly_ascending(edges: &[f64]) -> bool {
    edges.len() >= 2 && edges.windows(2).all(|w| w[0] < w[1])
}

/// How many values lie below each edge of the histograms a property can have, kept in place of
/// its values once they are gone (a spilled property, `spilled.rs`): every layout
/// [`HistogramLayout::for_numbers`] gives for it is counted from these, exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeCounts {
    /// Edges, ascending, distinct.
    edges: Vec<f64>,
    /// `below[i]`: values below `edges[i]`.
    below: Vec<u64>,
    count: u64,
}

impl EdgeCounts {
    /// The counts below `edges` (ascending, distinct) of `count` values.
    pub(super) fn new(edges: Vec<f64>, below: Vec<u64>, count: u64) -> Self {
        Self { edges, below, count }
    }

    /// Values below `edge`, when it is one of the edges counted.
    fn below(&self, edge: f64) -> Option<u64> {
        let at = self.edges.binary_search_by(|e| e.total_cmp(&edge)).ok()?;
        self.below.get(at).copied()
    }

    /// The values in each bin of `layout`, as [`HistogramLayout::count_runs`] counts them;
    /// `None` when one of its edges was not counted.
    pub fn count(&self, layout: &HistogramLayout) -> Option<Vec<u64>> {
        let bins = layout.bins();
        (0..bins)
            .map(|i| {
                let to = if i + 1 == bins { self.count } else { self.below(layout.edges[i + 1])? };
                // As `count_runs`: the first bin starts at the smallest value.
                let from = if i == 0 { 0 } else { self.below(layout.edges[i])? };
                Some(to - from)
            })
            .collect()
    }
}

/// Builds a histogram of the values with `bins` bins (see [`HistogramLayout::with_bins`]).
pub fn histogram(runs: &ValueRuns, bins: usize, integers: bool) -> Vec<HistogramBin> {
    if runs.count() == 0 {
        return Vec::new();
    }
    let quartiles = [runs.quantile(0.25), runs.quantile(0.75)];
    match HistogramLayout::with_bins(runs.min(), runs.max(), quartiles, bins, integers) {
        Some(layout) => layout.label(&layout.count_runs(runs)),
        None => Vec::new(),
    }
}
