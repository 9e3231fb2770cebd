//! SQLite's spread and quartiles of a number column: SQLite has neither stddev nor
//! percentiles, so one sort picks the rows at the quartile ranks, then a pass around the mean.

use schemascope_core::profile::exact::Quarters;

use crate::error::SourceError;
use crate::sql::engine::{NumberColumn, Spread};
use crate::sql::pushdown::JsonView;
use crate::sql::pushdown::numbers::{
    binary_exponent, key, quartile_ranks, quartiles_from, spread_out_of_range,
};
use crate::sql::{Database, PROFILE_TIMEOUT_MS, SqlValue};

/// The column's mean, deviation and quartiles ([`crate::sql::engine::EngineSql::spread_and_quartiles`]).
pub(super) fn spread_and_quartiles(column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
    let NumberColumn { db, view, i, n, mean, integers, .. } = *column;
    let c = format!("c{i}");
    let predicate = view.numeric(i);
    // SQLite has neither stddev nor percentiles: one sort picks the rows at the quartile
    // ranks, then a pass around the mean.
    let ranks = quartile_ranks(n);
    let list = ranks.iter().map(|r| (r + 1).to_string()).collect::<Vec<_>>().join(", ");
    let picked = db.query_with_timeout(
        &format!(
            "SELECT rn, v FROM (SELECT {c} AS v, row_number() OVER (ORDER BY {c}) AS rn FROM {} WHERE {predicate}) WHERE rn IN ({list})",
            view.from
        ),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let at =
        |rank: u64| picked.iter().find(|r| r[0].as_count() == rank + 1).and_then(|r| key(&r[1]));
    let q = quartiles_from(n, at);
    let (mean, std_dev) = sqlite_spread(db, view, i, n, mean, q.at[1].1.filter(|_| integers))?;
    if integers || !spread_out_of_range(mean, std_dev, &q) {
        return Ok((mean, std_dev, q));
    }
    let (mean, std_dev) = rescaled_spread(db, view, i, n)?;
    Ok((mean, std_dev, q))
}

/// The mean and sample deviation of doubles too large or too small for their sums of squares
/// (1e-300 or 1e307: squares underflow to zero or sums overflow to infinity), computed on the
/// values divided by a power of two near the largest magnitude — exact divisions, so the result
/// is what the unscaled sums would give with unbounded exponents.
fn rescaled_spread(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    n: u64,
) -> Result<(f64, f64), SourceError> {
    let c = format!("c{i}");
    let predicate = view.numeric(i);
    let first = |rows: Vec<Vec<SqlValue>>| {
        rows.first().and_then(|r| r.first()).and_then(SqlValue::as_f64).unwrap_or(0.0)
    };
    let largest = first(db.query_with_timeout(
        &format!("SELECT MAX(abs({c})) FROM {} WHERE {predicate}", view.from),
        &[],
        PROFILE_TIMEOUT_MS,
    )?);
    if largest == 0.0 || !largest.is_finite() {
        return Ok((0.0, 0.0));
    }
    // 2^e with the largest magnitude in [1, 2) once divided by it (2^1023 at most: 2^1024 is
    // past the doubles; 2^-1022 at least: the smallest normal power, exact to divide by).
    let scale = 2f64.powi(binary_exponent(largest));
    let total = first(db.query_with_timeout(
        &format!("SELECT TOTAL({c} / ?1) FROM {} WHERE {predicate}", view.from),
        &[SqlValue::Real(scale)],
        PROFILE_TIMEOUT_MS,
    )?);
    let scaled_mean = total / n as f64;
    let sum_sq = first(db.query_with_timeout(
        &format!(
            "SELECT TOTAL(({c} / ?1 - ?2) * ({c} / ?1 - ?2)) FROM {} WHERE {predicate}",
            view.from
        ),
        &[SqlValue::Real(scale), SqlValue::Real(scaled_mean)],
        PROFILE_TIMEOUT_MS,
    )?);
    let scaled_std = if n > 1 { (sum_sq / (n - 1) as f64).sqrt() } else { 0.0 };
    Ok((scaled_mean * scale, scaled_std * scale))
}

/// The mean and sample standard deviation in SQLite. For integers, around a pivot from the data
/// (the median, rounded down): the differences are exact integers, so neighbours past 2^53 do
/// not merge and large values do not cancel, as they would in doubles.
fn sqlite_spread(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    n: u64,
    mean: f64,
    median: Option<Quarters>,
) -> Result<(f64, f64), SourceError> {
    let c = format!("c{i}");
    let predicate = view.numeric(i);
    let pivot = median.and_then(|m| i64::try_from(m.floor()).ok());
    let (mean, shift) = match pivot {
        Some(pivot) => {
            // TOTAL never overflows (SUM of integers would fail); each difference is exact.
            let total = db.query_with_timeout(
                &format!("SELECT TOTAL({c} - ?1) FROM {} WHERE {predicate}", view.from),
                &[SqlValue::Integer(pivot)],
                PROFILE_TIMEOUT_MS,
            )?;
            let offset =
                total.first().map_or(0.0, |r| r.first().and_then(SqlValue::as_f64).unwrap_or(0.0))
                    / n as f64;
            ((pivot as f64) + offset, Some((pivot, offset)))
        }
        None => (mean, None),
    };
    let spread = match shift {
        Some((pivot, offset)) => db.query_with_timeout(
            &format!("SELECT TOTAL((({c} - ?1) * 1.0 - ?2) * (({c} - ?1) * 1.0 - ?2)) FROM {} WHERE {predicate}", view.from),
            &[SqlValue::Integer(pivot), SqlValue::Real(offset)],
            PROFILE_TIMEOUT_MS,
        )?,
        None => db.query_with_timeout(
            &format!("SELECT SUM(({c} - ?1) * ({c} - ?1)) FROM {} WHERE {predicate}", view.from),
            &[SqlValue::Real(mean)],
            PROFILE_TIMEOUT_MS,
        )?,
    };
    let sum_sq =
        spread.first().map_or(0.0, |r| r.first().and_then(SqlValue::as_f64).unwrap_or(0.0));
    let std_dev = if n > 1 { (sum_sq / (n - 1) as f64).sqrt() } else { 0.0 };
    Ok((mean, std_dev))
}
