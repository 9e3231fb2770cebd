//! MySQL's and MariaDB's quartiles of a number column: the values at the quartile ranks from one
//! sort (`ROW_NUMBER()`, which both servers have, where only MariaDB has `PERCENTILE_DISC`),
//! interpolated here by the core's rule (integers exactly); the mean and deviation are the
//! scan's.

use schemascope_core::profile::exact::NumberKey;

use crate::error::SourceError;
use crate::sql::engine::{NumberColumn, Spread};
use crate::sql::pushdown::numbers::{quartile_ranks, quartiles_from};
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
    Ok((mean, std_dev, quartiles_from(n, at)))
}
