//! MySQL's and MariaDB's quartiles of a number column: the values at the quartile ranks from one
//! sort (`ROW_NUMBER()`, which both servers have, where only MariaDB has `PERCENTILE_DISC`),
//! interpolated here by the core's rule (integers exactly); the mean and deviation are the
//! scan's, computed again on scaled values where doubles near their range's end overflowed.

use schemascope_core::profile::exact::NumberKey;

use crate::error::SourceError;
use crate::sql::engine::{NumberColumn, Spread};
use crate::sql::pushdown::numbers::{
    Quartiles, binary_exponent, quartile_ranks, quartiles_from, spread_out_of_range,
};
use crate::sql::{PROFILE_TIMEOUT_MS, SqlValue};

/// The column's mean, deviation and quartiles ([`crate::sql::engine::EngineSql::spread_and_quartiles`]).
pub(super) fn spread_and_quartiles(column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
    let NumberColumn { db, view, i, n, mean, integers, std_dev } = *column;
    let ranks = quartile_ranks(n);
    let listed: Vec<String> = ranks.iter().map(u64::to_string).collect();
    let rows = db.query_with_timeout(
        &format!(
            "SELECT q.k, q.v FROM (SELECT c{i} AS v, ROW_NUMBER() OVER (ORDER BY c{i}) - 1 AS k FROM {} WHERE {}) AS q WHERE q.k IN ({})",
            view.from,
            view.numeric(i),
            listed.join(", ")
        ),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let values: Vec<(u64, NumberKey)> = rows
        .iter()
        .filter_map(|r| {
            let key = match &r[1] {
                SqlValue::Integer(v) if integers => NumberKey::integer(i128::from(*v)),
                other => NumberKey::float(other.as_f64()?),
            };
            Some((r[0].as_count(), key))
        })
        .collect();
    let at = |rank: u64| values.iter().find(|(k, _)| *k == rank).map(|(_, v)| *v);
    let q = quartiles_from(n, at);
    let (mean, std_dev) = if integers { (mean, std_dev) } else { rescaled(column, &q)? };
    Ok((mean, std_dev, q))
}

/// Past this magnitude a double's square, or a sum of a few, leaves the doubles' range.
pub(super) const LARGE: f64 = 1e150;

/// The mean and deviation of a column of doubles computed again where the scan's may have
/// left the doubles' range (values near ±1.8e308, whose squares the servers sum, or near
/// 1e-300, whose squares underflow): on the
/// values divided by a power of two near their largest magnitude, which changes no digit.
fn rescaled(column: &NumberColumn<'_>, q: &Quartiles) -> Result<(f64, f64), SourceError> {
    let NumberColumn { db, view, i, n, mean, std_dev, .. } = *column;
    let in_range = |x: f64| x.is_finite() && x.abs() < LARGE;
    if n == 0 || (in_range(mean) && in_range(std_dev) && !spread_out_of_range(mean, std_dev, q)) {
        return Ok((mean, std_dev));
    }
    let from = format!("FROM {} WHERE {}", view.from, view.numeric(i));
    let first = |sql: String| -> Result<Option<f64>, SourceError> {
        let rows = db.query_with_timeout(&sql, &[], PROFILE_TIMEOUT_MS)?;
        Ok(rows.first().and_then(|r| r.first()).and_then(SqlValue::as_f64))
    };
    let largest = first(format!("SELECT MAX(ABS(c{i})) {from}"))?.unwrap_or(1.0);
    let power = binary_exponent(largest);
    let scale = 2f64.powi(power);
    let divided = format!("c{i} / POW(2, {power})");
    let rows = db.query_with_timeout(
        &format!("SELECT AVG({divided}), STDDEV_SAMP({divided}) {from}"),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let value = |k: usize| rows.first().and_then(|r| r.get(k)).and_then(SqlValue::as_f64);
    Ok((
        value(0).map_or(mean, |m| m * scale),
        if n < 2 { 0.0 } else { value(1).map_or(std_dev, |d| d * scale) },
    ))
}
