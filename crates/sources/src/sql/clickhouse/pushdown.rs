//! ClickHouse's SQL for pushdown profiling and samples: columns aggregated as stored where
//! their type allows, numbers read as the doubles their text denotes, exact aggregates
//! (`uniqExact`, compensated sums), `SAMPLE` by the table's sampling key.

use schemascope_core::{ColumnInfo, TableInfo, TableKind};
use serde_json::Value;

use super::distributed;
use super::quartiles;
use super::text;
use super::zones;
use crate::error::SourceError;
use crate::sql::engine::{EngineSql, NumberColumn, ReadRows, Spread};
use crate::sql::pushdown::text_order::{self, TextOrder};
use crate::sql::pushdown::{ValueClass, is_view_alias};
use crate::sql::rows::POOL_ROWS;
use crate::sql::{Database, Dialect, Rows, SqlValue};

/// ClickHouse's [`EngineSql`].
#[derive(Debug)]
pub(crate) struct ClickHouseSql;

/// The class of a ClickHouse column from its type (`Nullable(…)` and `LowCardinality(…)` seen
/// through) — the rule [`super::text::value`] applies to the values themselves.
pub(crate) fn clickhouse_class(column: &ColumnInfo) -> ValueClass {
    let ty = &column.declared_type;
    if text::is_document(ty) {
        ValueClass::Json
    } else if text::is_integer(ty) {
        ValueClass::Integer
    } else if text::is_float_or_decimal(ty) {
        ValueClass::Number
    } else if text::stored_type(ty) == "Bool" {
        ValueClass::Boolean
    } else {
        ValueClass::Text
    }
}

/// The precision `P` of a ClickHouse `Decimal(P, S)` (0 when it cannot be read).
fn decimal_precision(stored: &str) -> u32 {
    stored
        .strip_prefix("Decimal(")
        .and_then(|rest| rest.split(',').next())
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(0)
}

/// A prefix that, followed by a column position, names no column of `table`.
fn clickhouse_positional_prefix(table: &TableInfo) -> String {
    let mut prefix = String::from("_schemascope_");
    while table.columns.iter().any(|c| c.name.starts_with(&prefix)) {
        prefix.push('_');
    }
    prefix
}

/// The double a ClickHouse number's text reads as (a Float32 1.1 is the double 1.1, as
/// shown), exactly: ClickHouse 18.16's own text-to-float can be a unit or two in the last place
/// off, so of the double it reads and its neighbours the one written as that text is taken
/// (the double nearest a text of at most 15 digits is written as it). Past 15 digits (a long
/// decimal) the server's reading stands.
fn clickhouse_text_as_double(quoted: &str) -> String {
    let text = format!("toString({quoted})");
    let read = format!("toFloat64({text})");
    let neighbour = |step: &str| {
        format!(
            "reinterpretAsFloat64(reinterpretAsString(reinterpretAsUInt64(reinterpretAsString({read})) {step}))"
        )
    };
    let candidates =
        [read.clone(), neighbour("+ 1"), neighbour("- 1"), neighbour("+ 2"), neighbour("- 2")];
    let branches: Vec<String> =
        candidates.iter().map(|c| format!("toString({c}) = {text}, {c}")).collect();
    format!("multiIf({}, {read})", branches.join(", "))
}

impl EngineSql for ClickHouseSql {
    fn view_column(
        &self,
        i: usize,
        column: &ColumnInfo,
        quoted: &str,
        select: &mut Vec<String>,
        exact_columns: &mut Vec<usize>,
    ) -> (String, ValueClass) {
        let _ = exact_columns;
        // Samples read each column as it is, as execute_query does.
        select.push(format!("{quoted} AS r{i}"));
        let class = clickhouse_class(column);
        // A plain column is aggregated as it is stored: no conversion per row.
        // (ClickHouse 18.16 refuses some aggregates over a LowCardinality column.)
        let stored = text::stored_type(&column.declared_type);
        let plain = !column.declared_type.contains("LowCardinality(");
        let expr = match class {
            // Every value of these types is an Int64's.
            ValueClass::Integer
                if plain
                    && matches!(
                        stored,
                        "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32"
                    ) =>
            {
                quoted.to_string()
            }
            // UInt64 values past 2^63 are counted as their digits, as execute_query shows
            // them (the others as numbers): an Int64 would wrap them negative.
            ValueClass::Integer if stored == "UInt64" => {
                let within = format!("{quoted} <= {}", i64::MAX);
                select.push(format!("if(NOT ({within}), toString({quoted}), NULL) AS t{i}"));
                return (format!("if({within}, toInt64({quoted}), NULL)"), ValueClass::WideInteger);
            }
            ValueClass::Integer => format!("toInt64({quoted})"),
            ValueClass::Number => {
                // NaN and infinities are text, as JSON shows them.
                select.push(format!(
                    "if(isFinite(c{i}), NULL, if(isNaN(c{i}), 'NaN', if(c{i} > 0, 'Infinity', '-Infinity'))) AS t{i}"
                ));
                select.push(format!("1 AS x{i}"));
                if plain && stored == "Float64" {
                    // Written shortest, so its text reads as the stored double —
                    // read by a correct parser: ClickHouse 18.16's own text-to-float
                    // is a unit or two in the last place off for about 1% of
                    // doubles (and 12% of Float32s' texts).
                    quoted.to_string()
                } else if decimal_precision(stored) > 18 {
                    // ClickHouse 18.16 writes some Decimal128 values wrongly with
                    // `toString` (queries' output is right): converted directly, to
                    // within an ulp or two of the nearest double.
                    format!("toFloat64({quoted})")
                } else {
                    clickhouse_text_as_double(quoted)
                }
            }
            ValueClass::Boolean | ValueClass::Json => quoted.to_string(),
            // Strings as stored: `toString` of a FixedString drops its NUL padding,
            // which queries show.
            ValueClass::Text
                if plain && (stored == "String" || stored.starts_with("FixedString(")) =>
            {
                quoted.to_string()
            }
            // As ClickHouse writes the value (dates, enums, UUIDs); a time without a zone of
            // its own in the zone of the server the client talks to, named: under a
            // Distributed table this runs on each shard, in the shard's zone otherwise.
            _ => match column.base_type.as_deref().and_then(zones::zone_of) {
                Some(zone) => format!("toString({quoted}, {})", text::quote_string(&zone)),
                None => format!("toString({quoted})"),
            },
        };
        (expr, class)
    }

    fn spread_and_quartiles(&self, column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
        quartiles::spread_and_quartiles(column)
    }

    // `length` counts bytes in ClickHouse.
    fn length(&self, expr: &str) -> String {
        format!("lengthUTF8({expr})")
    }

    fn as_float(&self, expr: &str) -> String {
        format!("toFloat64({expr})")
    }

    // ClickHouse resolves a name to an alias of the same SELECT before a column: a column
    // named `c1` would read as the view's `c1`. Such a table is read through positional
    // names no column has.
    fn positional_prefix(&self, table: &TableInfo) -> Option<String> {
        table
            .columns
            .iter()
            .any(|c| is_view_alias(&c.name))
            .then(|| clickhouse_positional_prefix(table))
    }

    fn text_order_in_zone(
        &self,
        column: &ColumnInfo,
        server_zone: Option<&str>,
    ) -> Option<TextOrder> {
        Some(TextOrder::of_clickhouse(column, server_zone))
    }

    fn text_length(&self, _: usize, column: &ColumnInfo, class: ValueClass) -> Option<String> {
        match class {
            ValueClass::Text => text_order::clickhouse_text_length(column).map(|n| n.to_string()),
            _ => None,
        }
    }

    // ClickHouse 18.16 refuses some aggregates of a function of a LowCardinality(Nullable)
    // column (and accepts them of a CASE), and counts its NULLs in COUNT(c).
    fn guarded(&self, column: &ColumnInfo) -> bool {
        column.declared_type.contains("LowCardinality(")
    }

    fn counts_stored(&self) -> bool {
        true
    }

    // ClickHouse sums integers in their own width (an Int64 sum wraps) and doubles
    // plainly: integers in 128 bits, doubles compensated (Kahan). Its `…If`
    // combinators, since some of its aggregates refuse a Nullable argument.
    fn mean(
        &self,
        class: ValueClass,
        c: &str,
        p: &str,
        _exact: &str,
        _when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        Some(match class {
            ValueClass::Integer => {
                format!("toFloat64(sumIf(toDecimal128(assumeNotNull({c}), 0), {p})) / countIf({p})")
            }
            _ => format!("sumKahanIf(assumeNotNull(toFloat64({c})), {p}) / countIf({p})"),
        })
    }

    // ClickHouse's primary key orders the data and does not make it unique.
    fn primary_key_unique(&self) -> bool {
        false
    }

    fn exact_distinct(&self, key: &str) -> Option<String> {
        Some(format!("uniqExact({key})"))
    }

    // A ClickHouse document column is never NULL, and its type says what JSON shows:
    // arrays and tuples as arrays, maps as objects.
    fn document_kinds(&self, column: &ColumnInfo, rows: u64) -> Option<Rows> {
        let kind = match text::stored_type(&column.declared_type).split('(').next() {
            Some("Map") => "object",
            _ => "array",
        };
        Some(vec![vec![SqlValue::Text(kind.into()), SqlValue::Integer(rows as i64)]])
    }

    fn random_rows(
        &self,
        db: &dyn Database,
        table: &TableInfo,
        rows: u64,
        _: u64,
        read: &ReadRows<'_>,
    ) -> Option<Result<Vec<Value>, SourceError>> {
        if table.kind != TableKind::Table {
            return None;
        }
        // `SAMPLE` reads a deterministic fraction by the table's sampling key (a Distributed
        // table's shards' key: each shard reads its fraction); a table without one (most)
        // gives its first rows, a bounded LIMIT.
        let key = match distributed::sampling_key(db, &table.name) {
            Ok(key) if key.is_empty() => return None,
            Ok(key) => key,
            Err(e) => return Some(Err(e)),
        };
        let quoted = Dialect::ClickHouse.quote_table(&table.name);
        let fraction = (POOL_ROWS as f64 * 2.0 / rows.max(1) as f64).clamp(0.000_001, 1.0);
        // Of the fraction (about twice the pool), the rows of the smallest keys: the key is
        // meant to spread rows evenly (a hash), so they are as random as the fraction, and the
        // same each time — not those of whichever shard, or part, answers first. Sorted a
        // level up: ClickHouse 18.16 fails a Distributed table's SAMPLE in a SELECT that has
        // an ORDER BY or a LIMIT ("Cannot find column `less(…)`").
        let columns: Vec<String> =
            table.columns.iter().map(|c| Dialect::ClickHouse.quote(&c.name)).collect();
        Some(read(
            format!(
                "(SELECT * FROM (SELECT {} FROM {quoted} SAMPLE {fraction:?}) ORDER BY {key} LIMIT {POOL_ROWS})",
                columns.join(", ")
            ),
            &[],
        ))
    }
}
