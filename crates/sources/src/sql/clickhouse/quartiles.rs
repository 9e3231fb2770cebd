//! ClickHouse's spread and quartiles of a number column: `quantilesExact` at the quartile
//! ranks and compensated sums of the deviations from the scan's mean, in one pass (computed
//! again on scaled values where doubles overflowed).

use crate::error::SourceError;
use crate::sql::engine::{NumberColumn, Spread};
use crate::sql::pushdown::JsonView;
use schemascope_core::profile::exact::NumberKey;

use crate::sql::pushdown::numbers::{
    binary_exponent, quartile_ranks, quartiles_from, spread_out_of_range,
};
use crate::sql::{Database, PROFILE_TIMEOUT_MS, SqlValue};

/// The column's mean, deviation and quartiles ([`crate::sql::engine::EngineSql::spread_and_quartiles`]).
pub(super) fn spread_and_quartiles(column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
    let NumberColumn { db, view, i, n, mean, integers, .. } = *column;
    let c = format!("c{i}");
    let predicate = view.numeric(i);
    // The values at the quartile ranks, exactly, from one sort: `quantilesExact(p)` is
    // the value at 0-based rank ⌊p·n⌋, so (rank + ½)/n picks that rank however the
    // fraction rounds; interpolated here by the core's rule (integers exactly).
    let ranks = quartile_ranks(n);
    let levels: Vec<String> =
        ranks.iter().map(|&r| format!("{:?}", (r as f64 + 0.5) / n as f64)).collect();
    // The same pass sums the deviations from the scan's mean (given by its bits: the
    // server's text-to-float can be an ulp off), compensated: the mean corrected by
    // their sum and the deviation from their squares are as exact as doubles allow —
    // ClickHouse's own `stddevSamp` cancels catastrophically around large values and
    // Welford's method is only close.
    let shift = if mean.is_finite() { mean } else { 0.0 };
    let stats = db.query_with_timeout(
        &format!(
            "SELECT quantilesExact({})(assumeNotNull({c})), {} FROM {} WHERE {predicate}",
            levels.join(", "),
            clickhouse_deviation_sums(i, shift, 1.0),
            view.from
        ),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let sum = |k: usize| {
        stats.first().and_then(|r| r.get(k)).and_then(SqlValue::as_f64).unwrap_or(f64::NAN)
    };
    let (mean, std_dev) = spread_from_sums(n, shift, sum(1), sum(2));
    let values: Vec<NumberKey> = match stats.first().map(|r| &r[0]) {
        Some(SqlValue::Json(serde_json::Value::Array(items))) => items
            .iter()
            .filter_map(|v| match v.as_i64() {
                Some(i) if integers => Some(NumberKey::integer(i128::from(i))),
                _ => v.as_f64().map(NumberKey::float),
            })
            .collect(),
        _ => Vec::new(),
    };
    let at = |rank: u64| ranks.iter().position(|&r| r == rank).and_then(|p| values.get(p)).cloned();
    let q = quartiles_from(n, at);
    let (mean, std_dev) = if spread_out_of_range(mean, std_dev, &q) {
        clickhouse_spread(db, view, i, n)?
    } else {
        (mean, std_dev)
    };
    Ok((mean, std_dev, q))
}

/// A double as a ClickHouse expression of its exact bits (the server's text-to-float can be an
/// ulp off).
fn clickhouse_double(value: f64) -> String {
    format!("reinterpretAsFloat64(unhex('{}'))", crate::profile_store::hex(&value.to_le_bytes()))
}

/// The compensated sums of the deviations of column `i`'s values divided by `scale` from
/// `shift`, and of their squares, as two ClickHouse aggregates (over rows holding numbers).
fn clickhouse_deviation_sums(i: usize, shift: f64, scale: f64) -> String {
    let deviation = format!(
        "(assumeNotNull(toFloat64(c{i})) / {} - {})",
        clickhouse_double(scale),
        clickhouse_double(shift)
    );
    format!("sumKahan({deviation}), sumKahan({deviation} * {deviation})")
}

/// The mean and deviation of `n` values whose deviations from `shift` sum to `deviations` and
/// their squares to `squares` (0 below two values, as in memory).
fn spread_from_sums(n: u64, shift: f64, deviations: f64, squares: f64) -> (f64, f64) {
    let count = n as f64;
    let mean = shift + deviations / count;
    if n < 2 {
        return (mean, 0.0);
    }
    let variance = (squares - deviations * deviations / count) / (count - 1.0);
    // Rounding can make it a hair below 0; NaN (overflowed sums, inf − inf) must stay NaN so
    // that the sums are computed again on scaled values — `NaN.max(0.0)` is 0, "no spread".
    let std_dev = if variance.is_nan() { f64::NAN } else { variance.max(0.0).sqrt() };
    (mean, std_dev)
}

/// ClickHouse's mean and deviation computed again where the doubles' range overflowed (values
/// near ±1.8e308) or their squares underflowed (near 1e-300): on the values divided by a power
/// of two near their largest magnitude (which changes no digit), the mean first, then the
/// deviations from it.
fn clickhouse_spread(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    n: u64,
) -> Result<(f64, f64), SourceError> {
    if n == 0 {
        return Ok((0.0, 0.0));
    }
    let predicate = view.numeric(i);
    let value = |sql: String| -> Result<Vec<f64>, SourceError> {
        let rows = db.query_with_timeout(&sql, &[], PROFILE_TIMEOUT_MS)?;
        Ok(rows
            .first()
            .map(|r| r.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect())
            .unwrap_or_default())
    };
    let from = format!("FROM {} WHERE {predicate}", view.from);
    let largest = value(format!("SELECT max(abs(toFloat64(assumeNotNull(c{i})))) {from}"))?;
    let largest = largest.first().copied().unwrap_or(1.0);
    let scale = 2f64.powi(binary_exponent(largest));
    let first = value(format!("SELECT {} {from}", clickhouse_deviation_sums(i, 0.0, scale)))?;
    let (scaled_mean, _) =
        spread_from_sums(n, 0.0, first.first().copied().unwrap_or(f64::NAN), 0.0);
    let sums =
        value(format!("SELECT {} {from}", clickhouse_deviation_sums(i, scaled_mean, scale)))?;
    let (sum, squares) =
        (sums.first().copied().unwrap_or(f64::NAN), sums.get(1).copied().unwrap_or(f64::NAN));
    let (scaled_mean, scaled_std) = spread_from_sums(n, scaled_mean, sum, squares);
    Ok((scaled_mean * scale, scaled_std * scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowed_sums_give_no_deviation_rather_than_zero() {
        // inf − inf: the scaled computation must follow, not a deviation of 0.
        let (_, std_dev) = spread_from_sums(3, 0.0, f64::INFINITY, f64::INFINITY);
        assert!(std_dev.is_nan(), "{std_dev}");
        let (mean, std_dev) = spread_from_sums(3, 10.0, 0.0, 2.0);
        assert_eq!((mean, std_dev), (10.0, 1.0));
        // A variance rounded a hair below zero is no spread.
        assert_eq!(spread_from_sums(2, 5.0, 0.0, -1e-30).1, 0.0);
    }
}
