//! PostgreSQL's SQL for pushdown profiling and samples: each column read through its type's
//! output or an exact number, deviations in numeric, text ordered by the `C` collation, the
//! planner's statistics for columns of few values, `width_bucket` bins, `TABLESAMPLE`.

use schemascope_core::{ColumnInfo, TableInfo, TableKind};
use serde_json::Value;

use super::quartiles;
use crate::error::SourceError;
use crate::sql::engine::{EngineSql, NumberColumn, ReadRows, Spread};
use crate::sql::pushdown::ValueClass;
use crate::sql::pushdown::text_order::{self, TextOrder};
use crate::sql::rows::POOL_ROWS;
use crate::sql::{Database, SqlValue};

/// PostgreSQL's [`EngineSql`].
#[derive(Debug)]
pub(crate) struct PostgresSql;

/// The class of a PostgreSQL column from its type (`format_type` spelling; a domain's base type
/// when it has one) — the rule [`super::text::value`] applies to the values themselves.
pub(crate) fn postgres_class(column: &ColumnInfo) -> ValueClass {
    let stored = column.base_type.as_deref().unwrap_or(&column.declared_type);
    if stored.ends_with("[]") {
        return ValueClass::Json;
    }
    match stored.split('(').next().unwrap_or(stored).trim() {
        "smallint" | "integer" | "bigint" | "oid" => ValueClass::Integer,
        "real" | "double precision" | "numeric" => ValueClass::Number,
        "boolean" => ValueClass::Boolean,
        "json" | "jsonb" => ValueClass::Json,
        _ => ValueClass::Text,
    }
}

/// A PostgreSQL float type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FloatType {
    /// `double precision`.
    Double,
    /// `real`.
    Real,
}

/// The float type a PostgreSQL column stores, if it stores one.
fn float_type(column: &ColumnInfo) -> Option<FloatType> {
    match column.base_type.as_deref().unwrap_or(&column.declared_type) {
        "double precision" => Some(FloatType::Double),
        "real" => Some(FloatType::Real),
        _ => None,
    }
}

/// True when a PostgreSQL column stores `text` or `character varying`, whose output is the
/// value itself.
fn is_plain_text(column: &ColumnInfo) -> bool {
    let stored = column.base_type.as_deref().unwrap_or(&column.declared_type);
    stored == "text" || stored == "character varying" || stored.starts_with("character varying(")
}

impl EngineSql for PostgresSql {
    fn view_column(
        &self,
        i: usize,
        column: &ColumnInfo,
        quoted: &str,
        select: &mut Vec<String>,
        exact_columns: &mut Vec<usize>,
    ) -> (String, ValueClass) {
        // Samples read each column as it is, as execute_query does.
        select.push(format!("{quoted} AS r{i}"));
        let class = postgres_class(column);
        let expr = match class {
            ValueClass::Integer => format!("{quoted}::int8"),
            // Read as is: its text output, read by the client's rule, is exact.
            ValueClass::Number if float_type(column).is_some() => {
                // A float's text (extra_float_digits = 1: shortest, exact) is always
                // the JSON number it reads as: exact and in range unless NaN or ±Infinity,
                // so nothing is converted per row but for the exact mean and deviation
                // (`e<i>`). A `real` is read as the decimal it shows.
                select.push(format!(
                    "CASE WHEN {quoted} IN ('NaN', 'Infinity', '-Infinity') THEN {quoted}::text END AS t{i}"
                ));
                select.push(format!("true AS x{i}"));
                select.push(format!(
                    "CASE WHEN {quoted} NOT IN ('NaN', 'Infinity', '-Infinity') THEN {quoted}::text::numeric END AS e{i}"
                ));
                exact_columns.push(i);
                match float_type(column) {
                    Some(FloatType::Double) => quoted.to_string(),
                    _ => format!("{quoted}::text::float8"),
                }
            }
            ValueClass::Number => {
                // Exact numbers as they are; other finite ones in float8's range as their
                // nearest double (written shortest, as float8 text with extra digits: a
                // cast to numeric would round it to 15 digits),
                // so one long numeric never turns a column "mixed" with a range over the
                // rest; NaN, ±Infinity and values past float8's range are text.
                // execute_query keeps every numeric exact. Read through the text, so a
                // `real` is the decimal it shows (widened, 1.1 would be 1.100000023841858).
                let finite = super::text::float_range_sql(quoted);
                let exact = super::text::number_sql(quoted);
                select.push(format!("CASE WHEN NOT {finite} THEN {quoted}::text END AS t{i}"));
                select.push(format!("{exact} AS x{i}"));
                format!(
                    "(CASE WHEN {exact} THEN {quoted}::text::numeric WHEN {finite} THEN {quoted}::text::float8::text::numeric \
                     ELSE {quoted}::text::numeric END)"
                )
            }
            ValueClass::Boolean => format!("{quoted}::boolean"),
            ValueClass::Json => quoted.to_string(),
            // Text is its own output: nothing to convert per row. A scalar type
            // TextOrder knows has its output as its cast to text.
            ValueClass::Text
                if is_plain_text(column) || TextOrder::of(column) != TextOrder::Text =>
            {
                format!("{quoted}::text")
            }
            // The type's output function, as execute_query shows the value: a cast to
            // text differs for some types (`char(n)` loses its padding, `inet` gains
            // a netmask). `format` writes NULL as '', and `IS NULL` is also true of a
            // composite whose fields are all NULL (written `(,)`): both together mean
            // NULL.
            _ => format!(
                "(CASE WHEN {quoted} IS NULL AND format('%s', {quoted}) = '' THEN NULL ELSE format('%s', {quoted}) END)"
            ),
        };
        (expr, class)
    }

    fn spread_and_quartiles(&self, column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
        quartiles::spread_and_quartiles(column)
    }

    fn length(&self, expr: &str) -> String {
        format!("char_length({expr})")
    }

    fn as_float(&self, expr: &str) -> String {
        format!("({expr})::float8")
    }

    fn text_order(&self, column: &ColumnInfo, class: ValueClass) -> TextOrder {
        match class {
            ValueClass::Text => TextOrder::of(column),
            _ => TextOrder::Text,
        }
    }

    fn text_length(&self, i: usize, column: &ColumnInfo, class: ValueClass) -> Option<String> {
        match class {
            ValueClass::Text => text_order::postgres_text_length(column, &format!("r{i}")),
            _ => None,
        }
    }

    fn small_integers(&self, table: &TableInfo) -> Vec<usize> {
        (0..table.columns.len())
            .filter(|&i| {
                let column = &table.columns[i];
                let stored = column.base_type.as_deref().unwrap_or(&column.declared_type);
                stored == "smallint" || stored == "integer"
            })
            .collect()
    }

    fn binary(&self, expr: &str) -> String {
        format!("{expr} COLLATE \"C\"")
    }

    fn deviation(
        &self,
        small_integer: bool,
        c: &str,
        p: &str,
        exact: &str,
        when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        Some(if small_integer {
            // Exactly, from integer sums (PostgreSQL accumulates them in 128 bits, where a
            // numeric deviation converts every value): a square of a 32-bit integer fits
            // in a bigint.
            let (n, sum, squares) = (
                format!("COUNT({})", when(p, c)),
                format!("SUM({})::numeric", when(p, c)),
                format!("SUM({})::numeric", when(p, &format!("{c} * {c}"))),
            );
            format!(
                "(CASE WHEN {n} > 1 THEN sqrt(({n}::numeric * {squares} - {sum} * {sum}) / ({n}::numeric * ({n} - 1))) END)::float8"
            )
        } else {
            // In numeric: float8 sums of squares cancel catastrophically for large values;
            // the added scale keeps 16 decimals (an integer's is computed to 0).
            format!(
                "stddev_samp({})::float8",
                when(p, &format!("{exact}::numeric + 0.0000000000000000"))
            )
        })
    }

    /// PostgreSQL's `pg_stats`, if the table was analysed.
    fn estimated_distinct(
        &self,
        db: &dyn Database,
        table: &str,
        column: &str,
    ) -> Result<Option<u64>, SourceError> {
        let (schema, name) = table.split_once('.').unwrap_or(("public", table));
        let rows = db.query(
            "SELECT s.n_distinct::float8, c.reltuples::float8 FROM pg_stats s JOIN pg_namespace n ON n.nspname = s.schemaname \
             JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = n.oid WHERE s.schemaname = $1 AND s.tablename = $2 AND s.attname = $3",
            &[SqlValue::Text(schema.into()), SqlValue::Text(name.into()), SqlValue::Text(column.into())],
        )?;
        Ok(rows.first().and_then(|r| {
            let (d, rows) = (r[0].as_f64()?, r[1].as_f64()?);
            // Negative: a fraction of the rows.
            let estimate = if d < 0.0 { -d * rows.max(0.0) } else { d };
            Some(estimate as u64)
        }))
    }

    // A binary search over the edges, per row, in the server. Integers are compared in
    // numeric: as float8, neighbours past 2^53 round onto an edge they are below.
    fn bin_of(&self, i: usize, class: ValueClass, edges: &str) -> Option<String> {
        Some(match class {
            ValueClass::Integer => {
                format!("width_bucket(c{i}::numeric, ARRAY[{edges}]::numeric[])")
            }
            _ => format!("width_bucket(c{i}::float8, ARRAY[{edges}]::float8[])"),
        })
    }

    fn document_kind(&self, i: usize) -> Option<String> {
        let j = format!("to_jsonb(c{i})");
        Some(format!(
            "CASE WHEN c{i} IS NULL THEN 'null' WHEN jsonb_typeof({j}) = 'number' AND {j}::text ~ '^-?[0-9]+$' THEN 'integer' ELSE jsonb_typeof({j}) END"
        ))
    }

    fn random_rows(
        &self,
        _: &dyn Database,
        table: &TableInfo,
        rows: u64,
        seed: u64,
        read: &ReadRows<'_>,
    ) -> Option<Result<Vec<Value>, SourceError>> {
        if table.kind != TableKind::Table {
            return None;
        }
        let quoted = crate::sql::Dialect::Postgres.quote_table(&table.name);
        // Twice the pool, in percent of the table, so block sampling rarely falls short.
        let percent = ((POOL_ROWS as f64 * 2.0 / rows.max(1) as f64) * 100.0).clamp(0.000_1, 100.0);
        Some(read(
            format!(
                "{quoted} TABLESAMPLE SYSTEM ({percent}) REPEATABLE ({})",
                seed % 2_147_483_647
            ),
            &[],
        ))
    }
}
