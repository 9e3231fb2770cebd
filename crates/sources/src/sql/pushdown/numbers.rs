//! A column's numbers profiled inside the database: spread, quartiles, distinct and top values.
//!
//! Figures come out as the in-memory profiler computes them from the same rows, to the last
//! digit: integers are read as integers (never through `float8`, which merges neighbours past
//! 2^53), their quartiles are read as the values at the quartile ranks and interpolated exactly
//! by the core's own rule, and grouped values are ranked by the core's own code.

use schemascope_core::profile::exact::{
    NumberKey, Quarters, interpolate, median_key, quarter_ranks,
};
use schemascope_core::profile::numeric::{NUMBER_TOP_DISTINCT, ValueRuns, top_numbers};
use schemascope_core::profile::{NumberProfile, ValueCount};

use super::{ColumnSlots, JsonView, Kind, TopWanted, count, float, get, top_values};
use crate::error::SourceError;
use crate::sql::engine::NumberColumn;
use crate::sql::{Database, PROFILE_TIMEOUT_MS, SqlValue};

/// Columns estimated to have at most this many distinct values are profiled by one `GROUP BY`.
pub(super) const GROUPED_DISTINCT: u64 = 50_000;

/// The planner's estimate of column `i`'s distinct values, where the engine keeps one
/// ([`crate::sql::engine::EngineSql::estimated_distinct`]).
pub(super) fn estimated_distinct(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
) -> Result<Option<u64>, SourceError> {
    let (Some(table), Some(column)) = (&view.table, view.columns.get(i)) else { return Ok(None) };
    view.engine().estimated_distinct(db, table, column)
}

/// A number read from the database, exactly: integers as integers.
pub(crate) fn key(value: &SqlValue) -> Option<NumberKey> {
    match value {
        SqlValue::Integer(i) => Some(NumberKey::integer(i128::from(*i))),
        other => other.as_f64().map(NumberKey::float),
    }
}

/// What a column's numbers look like beyond the one-scan counters.
struct Distribution {
    mean: f64,
    std_dev: f64,
    quartiles: [f64; 2],
    median: (f64, Option<Quarters>),
    median_key: Option<NumberKey>,
    distinct: u64,
    top: Vec<ValueCount>,
}

/// The numeric part of column `i`'s profile; `row` is the one scan's result.
#[allow(clippy::too_many_arguments)]
pub(super) fn number_profile(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    row: &[SqlValue],
    s: &ColumnSlots,
    integers: u64,
    reals: u64,
    unique: bool,
) -> Result<NumberProfile, SourceError> {
    let n = integers + reals;
    // Few distinct values (by the planner's statistics): one GROUP BY gives the whole
    // distribution without sorting every row.
    let few = estimated_distinct(db, view, i)?.is_some_and(|d| d <= GROUPED_DISTINCT);
    let d = if few {
        grouped_distribution(db, view, i, reals == 0)?
    } else {
        sorted_distribution(
            db,
            view,
            i,
            n,
            float(row, s.num_avg),
            reals == 0,
            float(row, s.num_std),
            unique,
        )?
    };
    let exact_range = key(get(row, s.num_min)).zip(key(get(row, s.num_max)));
    Ok(NumberProfile {
        count: n,
        integer_count: integers,
        float_count: reals,
        min: float(row, s.num_min),
        max: float(row, s.num_max),
        mean: d.mean,
        exact_sum: None,
        median: d.median.0,
        median_key: d.median_key,
        std_dev: d.std_dev,
        distinct: d.distinct,
        top: d.top,
        quartiles: d.quartiles,
        exact_median: d.median.1.filter(|_| reals == 0),
        runs: None,
        edge_counts: None,
        exact_range,
        exact_text_count: count(row, s.exact_texts),
    })
}

/// The distribution from every distinct value with its count (PostgreSQL, few values), through
/// the same [`ValueRuns`] the in-memory profiler builds.
fn grouped_distribution(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    integers: bool,
) -> Result<Distribution, SourceError> {
    let c = format!("c{i}");
    let predicate = view.is(i, Kind::Numeric).unwrap_or_else(|| "FALSE".into());
    let grouped = db.query_with_timeout(
        &format!("SELECT {c}, COUNT(*) FROM {} WHERE {predicate} GROUP BY {c}", view.from),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let runs = ValueRuns::from_key_counts(
        grouped.iter().filter_map(|r| key(&r[0]).map(|k| (k, r[1].as_count()))).collect(),
    );
    let (mean, std_dev) = runs.mean_std();
    Ok(Distribution {
        mean,
        std_dev,
        quartiles: [runs.quarter(1).0, runs.quarter(3).0],
        median: runs.quarter(2),
        median_key: runs.median_key(),
        distinct: runs.distinct() as u64,
        top: if runs.distinct() as u64 <= NUMBER_TOP_DISTINCT {
            top_numbers(runs.iter(), integers)
        } else {
            Vec::new()
        },
    })
}

/// A number column's quartiles, as the in-memory profiler computes them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quartiles {
    /// `[q1, median, q3]`, each exact too where its values are integers.
    pub(crate) at: [(f64, Option<Quarters>); 3],
    /// See [`NumberProfile::median_key`].
    pub(crate) median_key: Option<NumberKey>,
}

/// The exponent `e` of `x` in base 2 (`2^e <= |x| < 2^(e+1)`), subnormals included, clamped to
/// what a power of two can scale by without leaving the doubles' range (`2^-1022 ..= 2^1023`);
/// 0 for zero and non-finite values. `log2().floor()` rounds DBL_MAX's up to 1024, whose power
/// overflows.
pub(crate) fn binary_exponent(x: f64) -> i32 {
    let x = x.abs();
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let exponent = if biased == 0 {
        // A subnormal is its mantissa times 2^-1074.
        63 - (bits & ((1 << 52) - 1)).leading_zeros() as i32 - 1074
    } else {
        biased - 1023
    };
    exponent.clamp(-1022, 1023)
}

/// A deviation (or mean) of doubles below this may have lost digits to underflow: squares of
/// differences under 1e-162 are subnormal or zero.
const TINY_SPREAD: f64 = 1e-150;

/// Whether the mean and deviation of doubles, as a database sums them, may be wrong for their
/// range: not finite (sums past ±1.8e308), or a deviation so small that the squares it came from
/// underflowed (values near 1e-300) while the values differ (their quartiles do) or are all tiny.
/// An engine then computes them again on the values divided by a power of two near the largest.
pub(crate) fn spread_out_of_range(mean: f64, std_dev: f64, q: &Quartiles) -> bool {
    let differ = q.at[0].0 != q.at[2].0;
    let tiny = mean != 0.0 && mean.abs() < TINY_SPREAD;
    !mean.is_finite() || !std_dev.is_finite() || (std_dev < TINY_SPREAD && (differ || tiny))
}

/// The three quartiles from the values at their ranks (`at(rank)`, 0-based), interpolated as
/// in memory.
pub(crate) fn quartiles_from(n: u64, at: impl Fn(u64) -> Option<NumberKey>) -> Quartiles {
    let median_key = median_key(n, &at);
    let at = [1, 2, 3].map(|k| {
        let (low, high, weight) = quarter_ranks(n, k);
        match (at(low), at(high)) {
            (Some(a), Some(b)) => interpolate(a, b, weight),
            _ => (0.0, None),
        }
    });
    Quartiles { at, median_key }
}

/// The ranks every quartile reads (0-based), ascending, without repeats.
pub(crate) fn quartile_ranks(n: u64) -> Vec<u64> {
    let mut ranks: Vec<u64> = [1, 2, 3]
        .iter()
        .flat_map(|&k| {
            let (low, high, _) = quarter_ranks(n, k);
            [low, high]
        })
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// The distribution by sorting: quartiles from one sort, distinct values counted by another.
#[allow(clippy::too_many_arguments)]
fn sorted_distribution(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    n: u64,
    mean: f64,
    integers: bool,
    std_dev: f64,
    unique: bool,
) -> Result<Distribution, SourceError> {
    let c = format!("c{i}");
    let predicate = view.is(i, Kind::Numeric).unwrap_or_else(|| "FALSE".into());
    let (mean, std_dev, q) = view.engine().spread_and_quartiles(&NumberColumn {
        db,
        view,
        i,
        n,
        mean,
        std_dev,
        integers,
    })?;
    // A single-column primary key is distinct by constraint: no grouping needed.
    let (distinct, top) = if unique && n > NUMBER_TOP_DISTINCT {
        (n, Vec::new())
    } else {
        // Counting distinct numbers by sorting beats hashing millions of them; the values
        // themselves are grouped only when there are few.
        let counted = db.query_with_timeout(
            &format!("SELECT COUNT(DISTINCT {c}) FROM {} WHERE {predicate}", view.from),
            &[],
            PROFILE_TIMEOUT_MS,
        )?;
        let distinct = counted.first().map_or(0, |r| r[0].as_count());
        let top = if distinct <= NUMBER_TOP_DISTINCT {
            let wanted = TopWanted {
                kind: Kind::Numeric,
                limit: NUMBER_TOP_DISTINCT as usize + 1,
                values: n,
                known: Some(distinct),
                stored_order: false,
            };
            let (_, rows) = top_values(db, view, i, wanted)?;
            top_numbers(rows.iter().filter_map(|(v, count)| key(v).map(|k| (k, *count))), integers)
        } else {
            Vec::new()
        };
        (distinct, top)
    };
    let [q1, median, q3] = q.at;
    Ok(Distribution {
        mean,
        std_dev,
        quartiles: [q1.0, q3.0],
        median,
        median_key: q.median_key,
        distinct,
        top,
    })
}

#[cfg(test)]
mod tests {
    use super::binary_exponent;

    #[test]
    fn the_binary_exponent_of_every_double_scales_it_within_range() {
        assert_eq!(binary_exponent(1.0), 0);
        assert_eq!(binary_exponent(-3.0), 1);
        assert_eq!(binary_exponent(f64::MAX), 1023);
        assert_eq!(binary_exponent(f64::MIN_POSITIVE), -1022);
        // Subnormals clamp: dividing them by 2^-1022 is exact.
        assert_eq!(binary_exponent(1e-310), -1022);
        assert_eq!(binary_exponent(0.0), 0);
        assert_eq!(binary_exponent(f64::INFINITY), 0);
        for x in [1e-300, 0.75, 1e300, 1.5e308, 7.0] {
            let scaled = x / 2f64.powi(binary_exponent(x));
            assert!((1.0..2.0).contains(&scaled), "{x}: {scaled}");
        }
    }
}
