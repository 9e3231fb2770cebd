//! Histogram layouts for skewed data, where equal-width bins would put most values in one bin:
//! log-scale bins for positive values over orders of magnitude, and outlier bins around the
//! quartiles otherwise. Each comes in two forms: the automatic one (round edges, as many bins as
//! they need) and the one for an asked bin count (exactly that many bins).

use super::histogram::{BinScale, EDGE_DIGITS, HistogramLayout, decimal, strictly_ascending};
use super::numeric::AUTO_MAX_BINS;
use crate::figure;

impl HistogramLayout {
    /// Bins on 1, 2, 5 × powers of ten (whole decades when the values span many).
    pub(super) fn log(min: f64, max: f64, integers: bool) -> Option<Self> {
        let decades = (max.log10().ceil() - min.log10().floor()).max(1.0) as usize;
        let mantissas: &[i128] = if decades * 3 <= AUTO_MAX_BINS { &[1, 2, 5] } else { &[1] };
        let every = decades.div_ceil(AUTO_MAX_BINS).max(1) as i32;
        Self::log_ticks(min, max, mantissas, every, integers)
    }

    /// Exactly `bins` log-scale bins: on round ticks (1-2-5, 1-3 or whole decades) when one of
    /// them gives that many, else on a geometric progression from `min` to `max`.
    pub(super) fn log_exact(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        let ticks: [&[i128]; 3] = [&[1, 2, 5], &[1, 3], &[1]];
        ticks
            .iter()
            .filter_map(|mantissas| Self::log_ticks(min, max, mantissas, 1, integers))
            .find(|layout| layout.bins() == bins)
            .or_else(|| Self::geometric(min, max, bins, integers))
    }

    /// Edges on `mantissas` × 10^k, every `every` decades: the last tick at or below `min`
    /// through the first at or above `max`.
    fn log_ticks(
        min: f64,
        max: f64,
        mantissas: &[i128],
        every: i32,
        integers: bool,
    ) -> Option<Self> {
        let (low, high) = (min.log10().floor() as i32, max.log10().ceil() as i32);
        let mut ticks = Vec::new();
        let mut exponent = low - 1;
        while exponent <= high + 1 {
            ticks.extend(mantissas.iter().map(|&m| decimal(m, exponent)));
            exponent += every;
        }
        let first = ticks.iter().rposition(|&t| t <= min)?;
        let last = ticks.iter().position(|&t| t >= max)?;
        let edges = ticks.get(first..=last)?.to_vec();
        // Integer bins below 1 would hold no whole number.
        if edges.len() < 2 || (integers && edges[1] < 1.0) {
            return None;
        }
        strictly_ascending(&edges).then_some(Self::of(edges, BinScale::Log, integers, integers))
    }

    /// `bins` bins whose edges grow by one ratio from `min` to `max`; inner edges to
    /// [`EDGE_DIGITS`] significant digits (whole numbers for integers).
    fn geometric(min: f64, max: f64, bins: usize, integers: bool) -> Option<Self> {
        // Integer bins are half-open up to one past `max`, where a double has room for it.
        let closed_top = integers && max + 1.0 == max;
        let top = if integers && !closed_top { max + 1.0 } else { max };
        let step = (top / min).ln() / bins as f64;
        let mut edges = vec![min];
        for i in 1..bins {
            let exact = min * (step * i as f64).exp();
            edges.push(if integers {
                exact.round()
            } else {
                figure::significant(exact, EDGE_DIGITS)
            });
        }
        edges.push(top);
        strictly_ascending(&edges).then_some(Self::of(edges, BinScale::Log, integers, closed_top))
    }

    /// Round bins over `[q1 − 1.5 IQR, q3 + 1.5 IQR] ∩ [min, max]`, plus a bin from `min` up
    /// to the body and one from the body up to `max` where values lie outside it.
    pub(super) fn with_outlier_bins(
        min: f64,
        max: f64,
        q1: f64,
        q3: f64,
        bins: usize,
        integers: bool,
    ) -> Option<Self> {
        Self::outlier_bins(min, max, q1, q3, integers, |low, high| {
            Self::round(low, high, bins.saturating_sub(2).max(2), integers)
        })
    }

    /// Exactly `bins` bins: outlier bins around a body of as many equal-width bins as are left.
    pub(super) fn outlier_bins_exact(
        min: f64,
        max: f64,
        q1: f64,
        q3: f64,
        bins: usize,
        integers: bool,
    ) -> Option<Self> {
        // The tails take one or two bins, depending on where the body's edges fall.
        (bins.saturating_sub(2).max(1)..=bins)
            .filter_map(|body| {
                Self::outlier_bins(min, max, q1, q3, integers, |low, high| {
                    Self::new(low, high, body, integers)
                })
            })
            .find(|layout| layout.bins() == bins)
    }

    /// Outlier bins around the body that `body` lays over the range it is given.
    fn outlier_bins(
        min: f64,
        max: f64,
        q1: f64,
        q3: f64,
        integers: bool,
        body: impl Fn(f64, f64) -> Option<Self>,
    ) -> Option<Self> {
        let iqr = q3 - q1;
        let (mut low, mut high) = ((q1 - 1.5 * iqr).max(min), (q3 + 1.5 * iqr).min(max));
        if integers {
            (low, high) = (low.floor(), high.ceil());
        }
        if high <= low {
            return None;
        }
        let body = body(low, high)?;
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
        strictly_ascending(&edges).then_some(Self::of(
            edges,
            BinScale::LinearWithOutlierBins,
            integers,
            closed_top,
        ))
    }
}
