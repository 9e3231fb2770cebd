//! A cell of a DataFusion result as the [`SqlValue`] tools show, and a column's type as SQL
//! names it. Cells are read as the table files' profile reads them (`tabular::cells`), except
//! where a statement's answer must be exact rather than a JSON reader's double: a decimal or an
//! integer past `i64` whose digits a double would change comes back as its exact text, as
//! PostgreSQL's `numeric` does.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type};
use arrow_schema::DataType;

use crate::sql::SqlValue;
use crate::tabular::cells::{self, Scalar};

/// Cell `i` of `array`.
pub(crate) fn cell(array: &dyn Array, i: usize) -> SqlValue {
    if array.is_null(i) {
        return SqlValue::Null;
    }
    // A decimal's unscaled digits, and its scale.
    let decimal = match array.data_type() {
        DataType::Decimal32(_, s) => {
            Some((array.as_primitive::<Decimal32Type>().value(i).to_string(), *s))
        }
        DataType::Decimal64(_, s) => {
            Some((array.as_primitive::<Decimal64Type>().value(i).to_string(), *s))
        }
        DataType::Decimal128(_, s) => {
            Some((array.as_primitive::<Decimal128Type>().value(i).to_string(), *s))
        }
        DataType::Decimal256(_, s) => {
            Some((array.as_primitive::<Decimal256Type>().value(i).to_string(), *s))
        }
        _ => None,
    };
    if let Some((digits, scale)) = decimal {
        return exact_decimal(&digits, scale);
    }
    match array.data_type() {
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(..)
        | DataType::ListView(_)
        | DataType::LargeListView(_)
        | DataType::Struct(_)
        | DataType::Map(..)
        | DataType::Dictionary(..) => match cells::json(array, i) {
            serde_json::Value::String(s) => SqlValue::Text(s),
            serde_json::Value::Bool(b) => SqlValue::Bool(b),
            serde_json::Value::Null => SqlValue::Null,
            serde_json::Value::Number(n) => number(&n),
            nested => SqlValue::Json(nested),
        },
        _ => match cells::scalar(array, i) {
            Some(Scalar::Null) => SqlValue::Null,
            Some(Scalar::Bool(b)) => SqlValue::Bool(b),
            Some(Scalar::Int(v)) => SqlValue::Integer(v),
            Some(Scalar::Wide(v)) => SqlValue::Text(v.to_string()),
            Some(Scalar::Float(v)) => SqlValue::Real(v),
            Some(Scalar::Text(t)) => SqlValue::Text(t.into_owned()),
            None => SqlValue::Text(format!("<{} value>", array.data_type())),
        },
    }
}

fn number(n: &serde_json::Number) -> SqlValue {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => SqlValue::Integer(i),
        (None, Some(f)) if n.is_f64() => SqlValue::Real(f),
        _ => SqlValue::Text(n.to_string()),
    }
}

/// A decimal as a number where a double holds its digits exactly as written, else as its
/// exact text (`12345678901234567.89` stays that, not `12345678901234568`).
fn exact_decimal(digits: &str, scale: i8) -> SqlValue {
    let text = cells::decimal_text(digits, scale);
    if scale <= 0 {
        return match text.parse::<i64>() {
            Ok(n) => SqlValue::Integer(n),
            Err(_) => SqlValue::Text(text),
        };
    }
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    match trimmed.parse::<f64>() {
        // The shortest text of the double is the decimal's own: nothing was rounded.
        Ok(f) if f.is_finite() && same_number(&f.to_string(), trimmed) => SqlValue::Real(f),
        _ => SqlValue::Text(text),
    }
}

/// Whether a double's shortest text and a decimal's (trailing zeros trimmed) are one number.
fn same_number(shortest: &str, decimal: &str) -> bool {
    let strip = |s: &str| -> String {
        let (sign, digits) = s.strip_prefix('-').map_or(("", s), |d| ("-", d));
        let digits = digits.trim_start_matches('0');
        let digits = if digits.starts_with('.') || digits.is_empty() {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        format!("{sign}{digits}")
    };
    strip(shortest) == strip(decimal) || (strip(shortest) == "-0" && strip(decimal) == "0")
}

/// A column type as SQL names it (what `get_schema_context` and the catalog show), from the
/// Arrow type DataFusion plans with.
pub(crate) fn sql_type(data_type: &DataType) -> String {
    match data_type {
        DataType::Null => "NULL".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INT".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::UInt8 => "TINYINT UNSIGNED".into(),
        DataType::UInt16 => "SMALLINT UNSIGNED".into(),
        DataType::UInt32 => "INT UNSIGNED".into(),
        DataType::UInt64 => "BIGINT UNSIGNED".into(),
        DataType::Float16 | DataType::Float32 => "REAL".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "BYTEA".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Time32(_) | DataType::Time64(_) => "TIME".into(),
        DataType::Timestamp(_, None) => "TIMESTAMP".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMPTZ".into(),
        DataType::Interval(_) | DataType::Duration(_) => "INTERVAL".into(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("DECIMAL({p},{s})"),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => {
            format!("{}[]", sql_type(f.data_type()))
        }
        DataType::Struct(fields) => format!(
            "STRUCT({})",
            fields
                .iter()
                .map(|f| format!("{} {}", f.name(), sql_type(f.data_type())))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        DataType::Map(..) => "MAP".into(),
        DataType::Dictionary(_, value) => sql_type(value),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_numbers_only_where_a_double_keeps_their_digits() {
        assert_eq!(exact_decimal("1234", 2), SqlValue::Real(12.34));
        assert_eq!(exact_decimal("-5", 1), SqlValue::Real(-0.5));
        assert_eq!(exact_decimal("100", 2), SqlValue::Real(1.0));
        assert_eq!(
            exact_decimal("123456789012345678", 2),
            SqlValue::Text("1234567890123456.78".into())
        );
        assert_eq!(exact_decimal("42", 0), SqlValue::Integer(42));
        assert_eq!(exact_decimal("7", -20), SqlValue::Text("700000000000000000000".into()));
    }
}
