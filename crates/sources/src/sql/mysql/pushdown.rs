//! MySQL's and MariaDB's SQL for pushdown profiling: each column read as `execute_query` shows
//! it — text converted to UTF-8 under a binary collation without padding (so `a`, `A` and
//! `a ` stay three values, whatever the column's collation), binary strings as `0x…`, `BIT` as
//! its number, dates and times as the server writes them, `DECIMAL` as its nearest double
//! (noting those whose exact text execute_query shows instead).

use schemascope_core::ColumnInfo;

use super::quartiles;
use crate::error::SourceError;
use crate::sql::Dialect;
use crate::sql::engine::{EngineSql, NumberColumn, Spread};
use crate::sql::pushdown::ValueClass;

/// MySQL's or MariaDB's [`EngineSql`]: the two differ in the name of their binary collation
/// without padding.
#[derive(Debug)]
pub(crate) struct MySqlSql(pub(crate) Dialect);

/// Significant digits every decimal of which a double recovers exactly (`DBL_DIG`).
const DOUBLE_DIGITS: u32 = 15;

/// How a column's values are read for its profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    Integer,
    /// `BIGINT UNSIGNED`, whose values past `i64` are shown as text.
    WideInteger,
    Bits,
    Double,
    Float,
    /// `DECIMAL(p, s)`.
    Decimal {
        precision: u32,
        scale: u32,
    },
    Json,
    Binary,
    /// Dates and times: their text as the server writes it.
    Temporal,
    Text,
}

/// What a column stores, from its full type (`int(11) unsigned`, `decimal(10,2)`, `json`).
fn stored(column: &ColumnInfo) -> Stored {
    let ty = column.declared_type.to_ascii_lowercase();
    let family = ty.split(['(', ' ']).next().unwrap_or("");
    match family {
        "bigint" if ty.contains("unsigned") => Stored::WideInteger,
        "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "year" => {
            Stored::Integer
        }
        "bit" => Stored::Bits,
        "double" | "real" => Stored::Double,
        "float" => Stored::Float,
        "decimal" | "numeric" | "dec" | "fixed" => {
            let inside =
                ty.split_once('(').and_then(|(_, rest)| rest.split_once(')')).map(|(a, _)| a);
            let mut parts = inside.unwrap_or("10,0").split(',').map(|p| p.trim().parse::<u32>());
            let precision = parts.next().and_then(Result::ok).unwrap_or(10);
            let scale = parts.next().and_then(Result::ok).unwrap_or(0);
            Stored::Decimal { precision, scale }
        }
        "json" => Stored::Json,
        "binary" | "varbinary" | "tinyblob" | "blob" | "mediumblob" | "longblob" | "geometry"
        | "point" | "linestring" | "polygon" | "multipoint" | "multilinestring"
        | "multipolygon" | "geometrycollection" | "geomcollection" => Stored::Binary,
        "date" | "datetime" | "timestamp" | "time" => Stored::Temporal,
        _ => Stored::Text,
    }
}

impl MySqlSql {
    /// The server's binary collation of `utf8mb4` that does not pad: text compared code point
    /// by code point, trailing spaces included, as Rust compares strings.
    fn collation(&self) -> &'static str {
        match self.0 {
            Dialect::MariaDb => "utf8mb4_nopad_bin",
            _ => "utf8mb4_0900_bin",
        }
    }
}

impl EngineSql for MySqlSql {
    fn view_column(
        &self,
        i: usize,
        column: &ColumnInfo,
        quoted: &str,
        select: &mut Vec<String>,
        exact_columns: &mut Vec<usize>,
    ) -> (String, ValueClass) {
        select.push(format!("{quoted} AS r{i}"));
        match stored(column) {
            Stored::Integer => (quoted.to_string(), ValueClass::Integer),
            // Unsigned 64-bit numbers (BIT(64) too): those past i64 are text.
            Stored::WideInteger | Stored::Bits => {
                let n = if stored(column) == Stored::Bits {
                    format!("CAST({quoted} AS UNSIGNED)")
                } else {
                    quoted.to_string()
                };
                let within = format!("{n} <= {}", i64::MAX);
                select.push(format!("CASE WHEN NOT {within} THEN CAST({n} AS CHAR) END AS t{i}"));
                (format!("CASE WHEN {within} THEN {n} END"), ValueClass::WideInteger)
            }
            Stored::Double | Stored::Float => {
                // Every value is a finite double, shown as a JSON number.
                select.push(format!("NULL AS t{i}"));
                select.push(format!("1 AS x{i}"));
                (format!("(({quoted}) + 0e0)"), ValueClass::Number)
            }
            Stored::Decimal { precision, scale } => {
                // The mean from the exact decimals (AVG of a DECIMAL is exact).
                select.push(format!("{quoted} AS e{i}"));
                exact_columns.push(i);
                // Every decimal is finite: the profile counts it as its nearest double (as
                // PostgreSQL's numeric), and notes those execute_query shows as their exact
                // text — the ones whose double's shortest text is another decimal.
                select.push(format!("NULL AS t{i}"));
                if precision <= DOUBLE_DIGITS {
                    select.push(format!("1 AS x{i}"));
                } else {
                    select.push(format!(
                        "(CAST(CAST(({quoted}) + 0e0 AS CHAR) AS DECIMAL(65, {})) = {quoted}) AS x{i}",
                        scale.min(30)
                    ));
                }
                (format!("(({quoted}) + 0e0)"), ValueClass::Number)
            }
            Stored::Json => (quoted.to_string(), ValueClass::Json),
            Stored::Binary => (format!("CONCAT('0x', HEX({quoted}))"), ValueClass::Text),
            Stored::Temporal | Stored::Text => (
                format!("(CONVERT({quoted} USING utf8mb4) COLLATE {})", self.collation()),
                ValueClass::Text,
            ),
        }
    }

    fn spread_and_quartiles(&self, column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
        quartiles::spread_and_quartiles(column)
    }

    fn length(&self, expr: &str) -> String {
        format!("CHAR_LENGTH({expr})")
    }

    fn as_float(&self, expr: &str) -> String {
        format!("(({expr}) + 0e0)")
    }

    fn binary(&self, expr: &str) -> String {
        format!("(CONVERT({expr} USING utf8mb4) COLLATE {})", self.collation())
    }

    // MariaDB's AVG of doubles whose sum passes the doubles' range is 0 with a warning (and
    // an error once used in an expression), so a column whose values reach past `LARGE` is
    // averaged on its values times 2^-500, which changes no digit of those that matter: the
    // sum stays in range for any row count. Its deviation then overflows, and `quartiles`
    // computes both again on values scaled to their largest.
    fn mean(
        &self,
        class: ValueClass,
        c: &str,
        p: &str,
        exact: &str,
        when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        (class == ValueClass::Number).then(|| {
            let value = when(p, c);
            let plain = self.as_float(&format!("AVG({})", when(p, exact)));
            format!(
                "IF(MAX(ABS({value})) > {:e}, AVG({value} * POW(2, -500)) * POW(2, 500), {plain})",
                quartiles::LARGE
            )
        })
    }

    fn deviation(
        &self,
        _small_integer: bool,
        _c: &str,
        p: &str,
        exact: &str,
        when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        Some(format!("STDDEV_SAMP({})", when(p, exact)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(ty: &str) -> ColumnInfo {
        ColumnInfo {
            name: "c".into(),
            declared_type: ty.into(),
            nullable: true,
            comment: None,
            base_type: None,
        }
    }

    #[test]
    fn columns_are_read_by_their_full_type() {
        assert_eq!(stored(&column("int(10) unsigned")), Stored::Integer);
        assert_eq!(stored(&column("bigint(20) unsigned")), Stored::WideInteger);
        assert_eq!(stored(&column("decimal(10,2)")), Stored::Decimal { precision: 10, scale: 2 });
        assert_eq!(stored(&column("decimal(30,4)")), Stored::Decimal { precision: 30, scale: 4 });
        assert_eq!(stored(&column("bit(3)")), Stored::Bits);
        assert_eq!(stored(&column("longblob")), Stored::Binary);
        assert_eq!(stored(&column("datetime(3)")), Stored::Temporal);
        assert_eq!(stored(&column("enum('a','b')")), Stored::Text);
        assert_eq!(stored(&column("json")), Stored::Json);
    }
}
