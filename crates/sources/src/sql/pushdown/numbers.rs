//! A column's numbers profiled inside the database: spread, quartiles, distinct and top values.
//!
//! Figures come out as the in-memory profiler computes them from the same rows, to the last
//! digit: integers are read as integers (never through `float8`, which merges neighbours past
//! 2^53), their quartiles are read as the values at the quartile ranks and interpolated exactly
//! by the core's own rule, and grouped values are ranked by the core's own code.

use schemascope_core::profile::exact::{NumberKey, Quarters, interpolate, quarter_ranks};
use schemascope_core::profile::numeric::{NUMBER_TOP_DISTINCT, ValueRuns, top_numbers};
use schemascope_core::profile::{NumberProfile, ValueCount};

use super::{ColumnSlots, JsonView, Kind, TopWanted, count, float, get, top_values};
use crate::error::SourceError;
use crate::sql::{Database, Dialect, PROFILE_TIMEOUT_MS, SqlValue};

/// Columns estimated to have at most this many distinct values are profiled by one `GROUP BY`.
pub(super) const GROUPED_DISTINCT: u64 = 50_000;

/// The planner's estimate of column `i`'s distinct values (PostgreSQL's `pg_stats`), if analysed.
pub(super) fn estimated_distinct(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
) -> Result<Option<u64>, SourceError> {
    let (Some(table), Some(column)) = (&view.table, view.columns.get(i)) else { return Ok(None) };
    let (schema, name) = table.split_once('.').unwrap_or(("public", table));
    let rows = db.query(
        "SELECT s.n_distinct::float8, c.reltuples::float8 FROM pg_stats s JOIN pg_namespace n ON n.nspname = s.schemaname \
         JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = n.oid WHERE s.schemaname = $1 AND s.tablename = $2 AND s.attname = $3",
        &[SqlValue::Text(schema.into()), SqlValue::Text(name.into()), SqlValue::Text(column.clone())],
    )?;
    Ok(rows.first().and_then(|r| {
        let (d, rows) = (r[0].as_f64()?, r[1].as_f64()?);
        // Negative: a fraction of the rows.
        let estimate = if d < 0.0 { -d * rows.max(0.0) } else { d };
        Some(estimate as u64)
    }))
}

/// A number read from the database, exactly: integers as integers.
fn key(value: &SqlValue) -> Option<NumberKey> {
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
    let few = view.dialect == Dialect::Postgres
        && estimated_distinct(db, view, i)?.is_some_and(|d| d <= GROUPED_DISTINCT);
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
        median: d.median.0,
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
        distinct: runs.distinct() as u64,
        top: if runs.distinct() as u64 <= NUMBER_TOP_DISTINCT {
            top_numbers(runs.iter(), integers)
        } else {
            Vec::new()
        },
    })
}

/// The three quartiles from the values at their ranks (`at(rank)`, 0-based), interpolated as
/// in memory: `[q1, median, q3]`.
fn quartiles_from(n: u64, at: impl Fn(u64) -> Option<NumberKey>) -> [(f64, Option<Quarters>); 3] {
    [1, 2, 3].map(|k| {
        let (low, high, weight) = quarter_ranks(n, k);
        match (at(low), at(high)) {
            (Some(a), Some(b)) => interpolate(a, b, weight),
            _ => (0.0, None),
        }
    })
}

/// The ranks every quartile reads (0-based), ascending, without repeats.
fn quartile_ranks(n: u64) -> Vec<u64> {
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
    (mean, ((squares - deviations * deviations / count) / (count - 1.0)).max(0.0).sqrt())
}

/// ClickHouse's mean and deviation computed again where the doubles' range overflowed (values
/// near ±1.8e308): on the values divided by a power of two near their largest magnitude (which
/// changes no digit), the mean first, then the deviations from it.
fn clickhouse_spread(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    n: u64,
    mean: f64,
    std_dev: f64,
) -> Result<(f64, f64), SourceError> {
    if n == 0 || (mean.is_finite() && std_dev.is_finite()) {
        return Ok((mean, std_dev));
    }
    let predicate = view.is(i, Kind::Numeric).unwrap_or_else(|| "FALSE".into());
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
    let scale = if largest.is_normal() { 2f64.powi(largest.log2().floor() as i32) } else { 1.0 };
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
    let (mean, std_dev, q) = match view.dialect {
        Dialect::Postgres if integers => {
            // The integers at the quartile ranks, exactly, from one sort: `percentile_disc(p)`
            // is the value at 1-based rank ⌈p·n⌉, so (rank + ½)/n picks a 0-based rank however
            // the fraction rounds. AVG and stddev_samp of integers are computed in numeric.
            let ranks = quartile_ranks(n);
            let fractions: Vec<String> =
                ranks.iter().map(|&r| format!("{:?}", (r as f64 + 0.5) / n as f64)).collect();
            let stats = db.query_with_timeout(
                &format!(
                    "SELECT (percentile_disc(ARRAY[{}]::float8[]) WITHIN GROUP (ORDER BY {c}))::text FROM {} WHERE {predicate}",
                    fractions.join(", "),
                    view.from
                ),
                &[],
                PROFILE_TIMEOUT_MS,
            )?;
            let values: Vec<i64> = stats
                .first()
                .and_then(|r| r[0].as_str())
                .map(parse_array)
                .unwrap_or_default()
                .iter()
                .filter_map(|x| x.parse().ok())
                .collect();
            let at = |rank: u64| {
                ranks
                    .iter()
                    .position(|&r| r == rank)
                    .and_then(|p| values.get(p))
                    .map(|&v| NumberKey::integer(i128::from(v)))
            };
            (mean, std_dev, quartiles_from(n, at))
        }
        Dialect::Postgres => {
            // One sort for all three quartiles, interpolated in float8 as in memory.
            let stats = db.query_with_timeout(
                &format!(
                    "SELECT (percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY {c}::float8))::text FROM {} WHERE {predicate}",
                    view.from
                ),
                &[],
                PROFILE_TIMEOUT_MS,
            )?;
            let q: Vec<f64> = stats
                .first()
                .and_then(|r| r[0].as_str())
                .map(parse_array)
                .unwrap_or_default()
                .iter()
                .filter_map(|x| x.parse().ok())
                .collect();
            let at = |k: usize| (q.get(k).copied().unwrap_or(0.0), None);
            (mean, std_dev, [at(0), at(1), at(2)])
        }
        Dialect::ClickHouse => {
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
            let at = |rank: u64| {
                ranks.iter().position(|&r| r == rank).and_then(|p| values.get(p)).cloned()
            };
            let (mean, std_dev) = clickhouse_spread(db, view, i, n, mean, std_dev)?;
            (mean, std_dev, quartiles_from(n, at))
        }
        Dialect::Sqlite => {
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
            let at = |rank: u64| {
                picked.iter().find(|r| r[0].as_count() == rank + 1).and_then(|r| key(&r[1]))
            };
            let q = quartiles_from(n, at);
            let (mean, std_dev) = sqlite_spread(db, view, i, n, mean, q[1].1.filter(|_| integers))?;
            (mean, std_dev, q)
        }
    };
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
    let [q1, median, q3] = q;
    Ok(Distribution { mean, std_dev, quartiles: [q1.0, q3.0], median, distinct, top })
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
    let predicate = view.is(i, Kind::Numeric).unwrap_or_else(|| "FALSE".into());
    let pivot = median.and_then(|m| i64::try_from(m.floor()).ok());
    let (mean, shift) = match pivot {
        Some(pivot) => {
            // TOTAL never overflows (SUM of integers would fail); each difference is exact.
            let total = db.query_with_timeout(
                &format!("SELECT TOTAL({c} - ?1) FROM {} WHERE {predicate}", view.from),
                &[SqlValue::Integer(pivot)],
                PROFILE_TIMEOUT_MS,
            )?;
            let offset = total.first().map_or(0.0, |r| float(r, Some(0))) / n as f64;
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
    let sum_sq = spread.first().map_or(0.0, |r| float(r, Some(0)));
    let std_dev = if n > 1 { (sum_sq / (n - 1) as f64).sqrt() } else { 0.0 };
    Ok((mean, std_dev))
}

/// The elements of PostgreSQL's text of a one-dimensional array (`{1,2,3}`).
fn parse_array(text: &str) -> Vec<String> {
    text.trim_matches(|ch| ch == '{' || ch == '}')
        .split(',')
        .map(|x| x.trim().to_string())
        .collect()
}
