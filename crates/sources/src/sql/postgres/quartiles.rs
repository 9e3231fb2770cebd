//! PostgreSQL's spread and quartiles of a number column: `percentile_disc` at the quartile
//! ranks for integers (interpolated exactly by the core's rule), `percentile_cont` in float8
//! for other numbers; the mean and deviation are the scan's.

use crate::error::SourceError;
use crate::sql::engine::{NumberColumn, Spread};
use schemascope_core::profile::exact::NumberKey;

use crate::sql::pushdown::numbers::{Quartiles, quartile_ranks, quartiles_from};
use crate::sql::{Database, PROFILE_TIMEOUT_MS};

/// The column's mean, deviation and quartiles ([`crate::sql::engine::EngineSql::spread_and_quartiles`]).
pub(super) fn spread_and_quartiles(column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
    let NumberColumn { db, view, i, n, mean, integers, std_dev } = *column;
    let c = format!("c{i}");
    let predicate = view.numeric(i);
    let spread = if integers {
        // The integers at the quartile ranks, exactly, from one sort: `percentile_disc(p)`
        // is the value at 1-based rank ⌈p·n⌉, so (rank + ½)/n picks a 0-based rank however
        // the fraction rounds. AVG and stddev_samp of integers are computed in numeric.
        let ranks = quartile_ranks(n);
        let fractions: Vec<String> =
            ranks.iter().map(|&r| format!("{:?}", (r as f64 + 0.5) / n as f64)).collect();
        let values: Vec<i64> = numbers_of_array(
            db,
            &format!(
                "SELECT (percentile_disc(ARRAY[{}]::float8[]) WITHIN GROUP (ORDER BY {c}))::text FROM {} WHERE {predicate}",
                fractions.join(", "),
                view.from
            ),
        )?;
        let at = |rank: u64| {
            ranks
                .iter()
                .position(|&r| r == rank)
                .and_then(|p| values.get(p))
                .map(|&v| NumberKey::integer(i128::from(v)))
        };
        (mean, std_dev, quartiles_from(n, at))
    } else {
        // One sort for all three quartiles, interpolated in float8 as in memory.
        let q: Vec<f64> = numbers_of_array(
            db,
            &format!(
                "SELECT (percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY {c}::float8))::text FROM {} WHERE {predicate}",
                view.from
            ),
        )?;
        let at = |k: usize| (q.get(k).copied().unwrap_or(0.0), None);
        // An odd count's median is its middle value; an even count's two middle values are not
        // read (a second sort), so its median is shown as a computed figure even where they
        // are equal.
        let median_key = (n % 2 == 1).then(|| NumberKey::float(at(1).0));
        (mean, std_dev, Quartiles { at: [at(0), at(1), at(2)], median_key })
    };
    Ok(spread)
}

/// The numbers of the one-dimensional array whose text `sql` returns as its one value (elements
/// that are no `T` left out).
fn numbers_of_array<T: std::str::FromStr>(
    db: &dyn Database,
    sql: &str,
) -> Result<Vec<T>, SourceError> {
    let rows = db.query_with_timeout(sql, &[], PROFILE_TIMEOUT_MS)?;
    Ok(rows
        .first()
        .and_then(|r| r[0].as_str())
        .map(parse_array)
        .unwrap_or_default()
        .iter()
        .filter_map(|x| x.parse().ok())
        .collect())
}

/// The elements of PostgreSQL's text of a one-dimensional array (`{1,2,3}`).
fn parse_array(text: &str) -> Vec<String> {
    text.trim_matches(|ch| ch == '{' || ch == '}')
        .split(',')
        .map(|x| x.trim().to_string())
        .collect()
}
