//! Rows as JSON, for samples: a bounded, reproducible pool of a table's rows that the core's
//! samplers (random, stratified, representative) then choose from, as they do for items.
//!
//! Small tables are read whole. Large ones are never scanned to the client: SQLite seeks random
//! rowids; PostgreSQL reads a `TABLESAMPLE SYSTEM … REPEATABLE (seed)` block sample; ClickHouse
//! reads `SAMPLE` where the table has a sampling key, else its first rows. Stratified
//! samples add a few rows for each of the most common values of the stratifying column, so rare
//! strata are not lost in a random pool.

use schemascope_core::{Collection, CollectionKind, OwnedItem, TableInfo};
use serde_json::{Map, Value};

use super::engine::engine;
use super::pushdown::JsonView;
use super::{Database, SqlValue};
use crate::error::SourceError;

/// Rows a pool holds at most; tables this small are read whole.
pub const POOL_ROWS: usize = 1_000;
/// Rows fetched per stratum of a stratified pool.
const ROWS_PER_STRATUM: usize = 20;
/// Strata given their own rows.
const MAX_STRATA: usize = 50;

/// A row as a JSON object, columns in table order.
pub fn row_object(table: &TableInfo, values: &[SqlValue]) -> Value {
    let mut object = Map::with_capacity(table.columns.len());
    for (column, value) in table.columns.iter().zip(values) {
        let json =
            if column.declared_type == "json" { value.as_document() } else { value.to_json() };
        object.insert(column.name.clone(), json);
    }
    Value::Object(object)
}

/// The columns of `view` as rows show them (`shown`), or as profiles see them.
fn select_as(view: &JsonView, table: &TableInfo, shown: bool) -> String {
    let columns: Vec<String> = (0..table.columns.len())
        // A wide integer's view is two columns (the text of those past i64 apart): it is
        // read as stored, which is what the profile counts.
        .map(|i| {
            if shown || view.classes[i] == super::pushdown::ValueClass::WideInteger {
                view.shown(i)
            } else {
                format!("c{i}")
            }
        })
        .collect();
    format!(
        "SELECT {} FROM {}",
        if columns.is_empty() { "NULL".into() } else { columns.join(", ") },
        view.from
    )
}

fn select(view: &JsonView, table: &TableInfo) -> String {
    select_as(view, table, true)
}

/// A stable order for reading "the first rows": the primary key, else none.
fn order_by(table: &TableInfo) -> String {
    let keys: Vec<String> = table
        .primary_key
        .iter()
        .filter_map(|k| table.columns.iter().position(|c| &c.name == k))
        .map(|i| format!("c{i}"))
        .collect();
    if keys.is_empty() { String::new() } else { format!(" ORDER BY {}", keys.join(", ")) }
}

/// Reads up to `limit` rows in key order.
pub fn first_rows(
    db: &dyn Database,
    table: &TableInfo,
    limit: usize,
) -> Result<Vec<Value>, SourceError> {
    let view = JsonView::new(db.dialect(), table)?;
    let sql = format!("{}{} LIMIT {limit}", select(&view, table), order_by(table));
    Ok(db.query(&sql, &[])?.iter().map(|r| row_object(table, r)).collect())
}

/// Reads up to `limit` rows in key order as the profile sees them (its JSON view: a PostgreSQL
/// `numeric` past `float8`'s precision as its nearest double), to check a pushdown profile
/// against the in-memory profiler.
pub fn profiled_rows(
    db: &dyn Database,
    table: &TableInfo,
    limit: usize,
) -> Result<Vec<Value>, SourceError> {
    let view = JsonView::new(db.dialect(), table)?;
    let sql = format!("{}{} LIMIT {limit}", select_as(&view, table, false), order_by(table));
    Ok(db.query(&sql, &[])?.iter().map(|r| row_object(table, r)).collect())
}

/// Rows of a large table chosen at random, reproducibly for a given `seed` and data.
fn random_rows(
    db: &dyn Database,
    table: &TableInfo,
    rows: u64,
    seed: u64,
) -> Result<Vec<Value>, SourceError> {
    let dialect = db.dialect();
    let read = |relation: String, params: &[SqlValue]| -> Result<Vec<Value>, SourceError> {
        let view = JsonView::over(dialect, table, &relation)?;
        Ok(db
            .query(&format!("{} LIMIT {POOL_ROWS}", select(&view, table)), params)?
            .iter()
            .map(|r| row_object(table, r))
            .collect())
    };
    // Views cannot be sampled by position cheaply: their first rows, as tables of engines
    // without a cheaper way.
    let sampled = engine(dialect).and_then(|e| e.random_rows(db, table, rows, seed, &read));
    match sampled {
        Some(rows) => rows,
        None => first_rows(db, table, POOL_ROWS),
    }
}

/// Rows whose column `column` equals each of `values` (a few per value).
fn stratum_rows(
    db: &dyn Database,
    table: &TableInfo,
    column: usize,
    values: &[Value],
) -> Result<Vec<Value>, SourceError> {
    let view = JsonView::new(db.dialect(), table)?;
    // Numbers and texts of one column can be apart (a PostgreSQL number shown as text).
    let sql = |expr: String| {
        format!(
            "{} WHERE {expr} = {} LIMIT {ROWS_PER_STRATUM}",
            select(&view, table),
            db.dialect().param(1)
        )
    };
    let mut out = Vec::new();
    for value in values.iter().take(MAX_STRATA) {
        let (expr, bound) = match value {
            Value::String(s) => (view.text(column), SqlValue::Text(s.clone())),
            Value::Bool(b) => (format!("c{column}"), SqlValue::Bool(*b)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => (format!("c{column}"), SqlValue::Integer(i)),
                None => (view.number(column), SqlValue::Real(n.as_f64().unwrap_or(0.0))),
            },
            _ => continue,
        };
        out.extend(db.query(&sql(expr), &[bound])?.iter().map(|r| row_object(table, r)));
    }
    Ok(out)
}

/// A pool of rows to sample from, as an in-memory collection of kind `Table`.
///
/// `strata` names a column whose most common values (`strata_values`) get rows of their own.
pub fn sample_pool(
    db: &dyn Database,
    table: &TableInfo,
    rows: u64,
    seed: u64,
    strata: Option<(&str, &[Value])>,
) -> Result<Collection, SourceError> {
    // A relation listed without columns could not be read here: its rows would read as `{}`.
    if table.columns.is_empty() {
        return Err(SourceError::Statement {
            location: db.location().to_string(),
            message: table
                .comment
                .clone()
                .unwrap_or_else(|| format!("{} has no columns", table.name)),
            class: crate::error::ErrorClass::Syntax,
        });
    }
    let mut values = if rows as usize <= POOL_ROWS {
        first_rows(db, table, POOL_ROWS)?
    } else {
        random_rows(db, table, rows, seed)?
    };
    if rows as usize > POOL_ROWS
        && let Some((column, wanted)) = strata
        && let Some(i) = table.columns.iter().position(|c| c.name == column)
    {
        let extra = stratum_rows(db, table, i, wanted)?;
        let mut seen: std::collections::HashSet<String> =
            values.iter().map(Value::to_string).collect();
        values.extend(extra.into_iter().filter(|v| seen.insert(v.to_string())));
    }
    let items =
        values.into_iter().enumerate().map(|(i, v)| OwnedItem::new(format!("row {}", i + 1), v));
    Ok(Collection::from_values(table.name.clone(), CollectionKind::Table, items))
}
