//! What one Arrow cell is as a JSON value: the one reading of every Arrow type that both the
//! profile ([`super::arrow_columns`]) and the rows shown as items use, so that the two agree.
//!
//! - Integers stay integers (an unsigned 64-bit value past `i64` too); floats are numbers, a
//!   32- or 16-bit float as the shortest decimal that reads back as it (`0.1f32` is `0.1`, not
//!   `0.100000001…`); NaN and the infinities, which JSON cannot write, are the strings `NaN`,
//!   `Infinity` and `-Infinity`.
//! - A decimal is the number its digits write (correctly rounded to a double, as a JSON
//!   reader rounds `12.34`); with scale ≤ 0 it is an integer.
//! - Dates are `YYYY-MM-DD`; times `HH:MM:SS[.f]`; timestamps RFC 3339, `T` between date and
//!   time, the fraction without trailing zeros, and for a timestamp with a zone the instant in
//!   UTC written `+00:00` (so that, unlike `Z`, text order is time order); durations and
//!   intervals ISO 8601 (`PT1.5S`, `P1M2DT3S`).
//! - Binary values are `\x` and their bytes in hex, as PostgreSQL writes `bytea`.
//! - Lists are arrays, structs objects, maps objects of their keys' text; a dictionary is
//!   its value.

use std::borrow::Cow;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta};

/// A cell of a scalar (not nested) type, read as a JSON scalar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer outside `i64` (a large `u64`, a decimal with negative scale).
    Wide(i128),
    Float(f64),
    Text(Cow<'a, str>),
}

/// The cell `i` of `array`, of a type that does not nest values; `None` for a type this reading
/// does not know.
pub(crate) fn scalar(array: &dyn Array, i: usize) -> Option<Scalar<'_>> {
    if array.is_null(i) {
        return Some(Scalar::Null);
    }
    let value = match array.data_type() {
        DataType::Null => Scalar::Null,
        DataType::Boolean => Scalar::Bool(array.as_boolean().value(i)),
        DataType::Int8 => Scalar::Int(array.as_primitive::<Int8Type>().value(i).into()),
        DataType::Int16 => Scalar::Int(array.as_primitive::<Int16Type>().value(i).into()),
        DataType::Int32 => Scalar::Int(array.as_primitive::<Int32Type>().value(i).into()),
        DataType::Int64 => Scalar::Int(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Scalar::Int(array.as_primitive::<UInt8Type>().value(i).into()),
        DataType::UInt16 => Scalar::Int(array.as_primitive::<UInt16Type>().value(i).into()),
        DataType::UInt32 => Scalar::Int(array.as_primitive::<UInt32Type>().value(i).into()),
        DataType::UInt64 => unsigned(array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float16 => short_float(f64::from(array.as_primitive::<Float16Type>().value(i))),
        DataType::Float32 => float32(array.as_primitive::<Float32Type>().value(i)),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        DataType::Decimal32(_, scale) => {
            decimal(array.as_primitive::<Decimal32Type>().value(i).into(), *scale)
        }
        DataType::Decimal64(_, scale) => {
            decimal(array.as_primitive::<Decimal64Type>().value(i).into(), *scale)
        }
        DataType::Decimal128(_, scale) => {
            decimal(array.as_primitive::<Decimal128Type>().value(i), *scale)
        }
        DataType::Decimal256(_, scale) => {
            let value = array.as_primitive::<Decimal256Type>().value(i);
            match value.to_i128() {
                Some(v) => decimal(v, *scale),
                None => float(decimal_text(&value.to_string(), *scale).parse().unwrap_or(f64::NAN)),
            }
        }
        DataType::Utf8 => Scalar::Text(array.as_string::<i32>().value(i).into()),
        DataType::LargeUtf8 => Scalar::Text(array.as_string::<i64>().value(i).into()),
        DataType::Utf8View => Scalar::Text(array.as_string_view().value(i).into()),
        DataType::Binary => Scalar::Text(hex(array.as_binary::<i32>().value(i)).into()),
        DataType::LargeBinary => Scalar::Text(hex(array.as_binary::<i64>().value(i)).into()),
        DataType::BinaryView => Scalar::Text(hex(array.as_binary_view().value(i)).into()),
        DataType::FixedSizeBinary(_) => {
            Scalar::Text(hex(array.as_fixed_size_binary().value(i)).into())
        }
        DataType::Date32 => text(date(array.as_primitive::<Date32Type>().value(i).into())),
        DataType::Date64 => {
            let ms = array.as_primitive::<Date64Type>().value(i);
            text(if ms % 86_400_000 == 0 {
                date(ms / 86_400_000)
            } else {
                timestamp(ms, TimeUnit::Millisecond, false)
            })
        }
        DataType::Timestamp(unit, zone) => {
            let v = primitive_i64(array, i)?;
            text(timestamp(v, *unit, zone.is_some()))
        }
        DataType::Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().value(i),
                _ => array.as_primitive::<Time32MillisecondType>().value(i),
            };
            text(time(i64::from(v), *unit))
        }
        DataType::Time64(unit) => {
            let v = match unit {
                TimeUnit::Microsecond => array.as_primitive::<Time64MicrosecondType>().value(i),
                _ => array.as_primitive::<Time64NanosecondType>().value(i),
            };
            text(time(v, *unit))
        }
        DataType::Duration(unit) => {
            let v = primitive_i64(array, i)?;
            text(duration(v, *unit))
        }
        DataType::Interval(IntervalUnit::YearMonth) => {
            let months = array.as_primitive::<IntervalYearMonthType>().value(i);
            text(interval(months, 0, 0))
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = array.as_primitive::<IntervalDayTimeType>().value(i);
            text(interval(0, v.days, i64::from(v.milliseconds) * 1_000_000))
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = array.as_primitive::<IntervalMonthDayNanoType>().value(i);
            text(interval(v.months, v.days, v.nanoseconds))
        }
        _ => return None,
    };
    Some(value)
}

fn text(s: String) -> Scalar<'static> {
    Scalar::Text(Cow::Owned(s))
}

/// The `i64` of a timestamp or duration cell, whatever its unit.
fn primitive_i64(array: &dyn Array, i: usize) -> Option<i64> {
    fn get<T: ArrowPrimitiveType<Native = i64>>(array: &dyn Array, i: usize) -> i64 {
        array.as_primitive::<T>().value(i)
    }
    Some(match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => get::<TimestampSecondType>(array, i),
        DataType::Timestamp(TimeUnit::Millisecond, _) => get::<TimestampMillisecondType>(array, i),
        DataType::Timestamp(TimeUnit::Microsecond, _) => get::<TimestampMicrosecondType>(array, i),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => get::<TimestampNanosecondType>(array, i),
        DataType::Duration(TimeUnit::Second) => get::<DurationSecondType>(array, i),
        DataType::Duration(TimeUnit::Millisecond) => get::<DurationMillisecondType>(array, i),
        DataType::Duration(TimeUnit::Microsecond) => get::<DurationMicrosecondType>(array, i),
        DataType::Duration(TimeUnit::Nanosecond) => get::<DurationNanosecondType>(array, i),
        _ => return None,
    })
}

/// An unsigned 64-bit integer.
pub(crate) fn unsigned(v: u64) -> Scalar<'static> {
    match i64::try_from(v) {
        Ok(v) => Scalar::Int(v),
        Err(_) => Scalar::Wide(i128::from(v)),
    }
}

/// A double; NaN and the infinities as text.
pub(crate) fn float(v: f64) -> Scalar<'static> {
    if v.is_finite() { Scalar::Float(v) } else { Scalar::Text(Cow::Borrowed(non_finite(v))) }
}

/// A 32-bit float as the shortest decimal that reads back as it.
pub(crate) fn float32(v: f32) -> Scalar<'static> {
    if v.is_finite() { short_float(f64::from(v)) } else { float(f64::from(v)) }
}

/// A narrow float widened to a double: the double of its shortest decimal.
fn short_float(wide: f64) -> Scalar<'static> {
    if !wide.is_finite() {
        return float(wide);
    }
    // The shortest text that reads back as the `f32` — of two, the nearer to its value, the even
    // one on a tie, as Ryu, JSON writers and numpy choose (`Display` takes the one above:
    // -0.25976563 for -0.259765625, where they show -0.25976562); read as a double it is the
    // value a JSON writer of the narrow float shows.
    let narrow = wide as f32;
    float(ryu::Buffer::new().format_finite(narrow).parse().unwrap_or(wide))
}

fn non_finite(v: f64) -> &'static str {
    if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// Powers of ten exactly representable as `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal of unscaled value `v` and `scale`.
pub(crate) fn decimal(v: i128, scale: i8) -> Scalar<'static> {
    if scale <= 0 {
        let factor = 10i128.checked_pow(u32::from(scale.unsigned_abs()));
        return match factor.and_then(|f| v.checked_mul(f)) {
            Some(n) => match i64::try_from(n) {
                Ok(n) => Scalar::Int(n),
                Err(_) => Scalar::Wide(n),
            },
            None => float(decimal_text(&v.to_string(), scale).parse().unwrap_or(f64::NAN)),
        };
    }
    // Both operands exact, one division: correctly rounded (Clinger's fast path), as the
    // digits read by a JSON reader.
    let scale = usize::from(scale.unsigned_abs());
    if v.unsigned_abs() < 1 << 53
        && let Some(&p) = POW10.get(scale)
    {
        return Scalar::Float(v as f64 / p);
    }
    float(decimal_text(&v.to_string(), scale as i8).parse().unwrap_or(f64::NAN))
}

/// The decimal text of unscaled digits `digits` (with an optional `-`) at `scale`.
pub(crate) fn decimal_text(digits: &str, scale: i8) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    if scale <= 0 {
        return format!("{sign}{digits}{}", "0".repeat(usize::from(scale.unsigned_abs())));
    }
    let scale = usize::from(scale.unsigned_abs());
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

/// Bytes as PostgreSQL's `bytea` hex output.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("\\x");
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// Days since 1970-01-01 as `YYYY-MM-DD`.
pub(crate) fn date(days: i64) -> String {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    match TimeDelta::try_days(days).and_then(|d| epoch.checked_add_signed(d)) {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => format!("{days} days since 1970-01-01"),
    }
}

/// Nanoseconds per unit.
fn nanos_per(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// Splits `v` units into whole seconds and nanoseconds (the latter in `0..1e9`).
fn seconds_nanos(v: i64, unit: TimeUnit) -> (i64, u32) {
    let per_second = 1_000_000_000 / nanos_per(unit);
    let seconds = v.div_euclid(per_second);
    let nanos = v.rem_euclid(per_second) * nanos_per(unit);
    (seconds, nanos as u32)
}

/// `.f` with the digits a fraction of a second needs (none when it is whole).
fn fraction(nanos: u32) -> String {
    if nanos == 0 {
        return String::new();
    }
    let digits = format!("{nanos:09}");
    format!(".{}", digits.trim_end_matches('0'))
}

/// A timestamp of `v` units since the epoch: RFC 3339, in UTC with `+00:00` when `zoned`.
pub(crate) fn timestamp(v: i64, unit: TimeUnit, zoned: bool) -> String {
    let (seconds, nanos) = seconds_nanos(v, unit);
    match DateTime::from_timestamp(seconds, 0) {
        Some(t) => {
            let zone = if zoned { "+00:00" } else { "" };
            format!("{}{}{zone}", t.format("%Y-%m-%dT%H:%M:%S"), fraction(nanos))
        }
        None => format!("{v} {} since 1970-01-01", unit_name(unit)),
    }
}

fn unit_name(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "seconds",
        TimeUnit::Millisecond => "milliseconds",
        TimeUnit::Microsecond => "microseconds",
        TimeUnit::Nanosecond => "nanoseconds",
    }
}

/// A time of day `v` units after midnight.
pub(crate) fn time(v: i64, unit: TimeUnit) -> String {
    let (seconds, nanos) = seconds_nanos(v, unit);
    match u32::try_from(seconds)
        .ok()
        .and_then(|s| NaiveTime::from_num_seconds_from_midnight_opt(s, 0))
    {
        Some(t) => format!("{}{}", t.format("%H:%M:%S"), fraction(nanos)),
        None => format!("{v} {} after midnight", unit_name(unit)),
    }
}

/// A duration of `v` units, ISO 8601.
pub(crate) fn duration(v: i64, unit: TimeUnit) -> String {
    // The sign before the designator, whatever the unit: `-PT5S`, `-PT0.005S`.
    let sign = if v < 0 { "-" } else { "" };
    let (seconds, nanos) = seconds_nanos(i64::try_from(v.unsigned_abs()).unwrap_or(i64::MAX), unit);
    format!("{sign}PT{seconds}{}S", fraction(nanos))
}

/// An interval of months, days and nanoseconds, ISO 8601.
pub(crate) fn interval(months: i32, days: i32, nanos: i64) -> String {
    let (seconds, rest) = seconds_nanos(nanos, TimeUnit::Nanosecond);
    let mut out = String::from("P");
    if months != 0 {
        out.push_str(&format!("{months}M"));
    }
    if days != 0 || (months == 0 && nanos == 0) {
        out.push_str(&format!("{days}D"));
    }
    if nanos != 0 {
        out.push_str(&format!("T{seconds}{}S", fraction(rest)));
    }
    out
}

/// The cell `i` of `array` as a JSON value (any type; nested ones recursively, bounded by the
/// type's own depth, which the file's schema fixes).
pub(crate) fn json(array: &dyn Array, i: usize) -> serde_json::Value {
    use serde_json::Value;
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::List(_) => list_json(array.as_list::<i32>().value(i).as_ref()),
        DataType::LargeList(_) => list_json(array.as_list::<i64>().value(i).as_ref()),
        DataType::FixedSizeList(..) => list_json(array.as_fixed_size_list().value(i).as_ref()),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let object = fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| (f.name().clone(), json(c.as_ref(), i)))
                .collect();
            Value::Object(object)
        }
        DataType::Map(..) => {
            let entries = array.as_map().value(i);
            let (keys, values) = (entries.column(0), entries.column(1));
            let object = (0..entries.len())
                .map(|e| (key_text(keys.as_ref(), e), json(values.as_ref(), e)))
                .collect();
            Value::Object(object)
        }
        DataType::Dictionary(..) => {
            let dictionary = array.as_any_dictionary();
            match key_at(dictionary.keys(), i) {
                Some(k) if k < dictionary.values().len() => json(dictionary.values().as_ref(), k),
                _ => Value::Null,
            }
        }
        _ => match scalar(array, i) {
            Some(s) => scalar_json(s),
            None => Value::String(format!("<{} value>", array.data_type())),
        },
    }
}

fn list_json(values: &dyn Array) -> serde_json::Value {
    serde_json::Value::Array((0..values.len()).map(|e| json(values, e)).collect())
}

/// Row `i`'s key of a dictionary's `keys`, `None` when null: one key read, where normalizing
/// them all for each row shown cost a whole batch per row.
fn key_at(keys: &dyn Array, i: usize) -> Option<usize> {
    use arrow_array::types::{
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
    };
    if i >= keys.len() || keys.is_null(i) {
        return None;
    }
    match keys.data_type() {
        DataType::Int8 => usize::try_from(keys.as_primitive::<Int8Type>().value(i)).ok(),
        DataType::Int16 => usize::try_from(keys.as_primitive::<Int16Type>().value(i)).ok(),
        DataType::Int32 => usize::try_from(keys.as_primitive::<Int32Type>().value(i)).ok(),
        DataType::Int64 => usize::try_from(keys.as_primitive::<Int64Type>().value(i)).ok(),
        DataType::UInt8 => Some(usize::from(keys.as_primitive::<UInt8Type>().value(i))),
        DataType::UInt16 => Some(usize::from(keys.as_primitive::<UInt16Type>().value(i))),
        DataType::UInt32 => usize::try_from(keys.as_primitive::<UInt32Type>().value(i)).ok(),
        DataType::UInt64 => usize::try_from(keys.as_primitive::<UInt64Type>().value(i)).ok(),
        _ => None,
    }
}

/// A map key as the member name it becomes.
pub(crate) fn key_text(keys: &dyn Array, i: usize) -> String {
    match scalar(keys, i) {
        Some(Scalar::Text(t)) => t.into_owned(),
        Some(Scalar::Int(v)) => v.to_string(),
        Some(Scalar::Wide(v)) => v.to_string(),
        Some(Scalar::Float(v)) => v.to_string(),
        Some(Scalar::Bool(v)) => v.to_string(),
        Some(Scalar::Null) => "null".to_string(),
        // A nested key (a struct) is named by its JSON text.
        None => json(keys, i).to_string(),
    }
}

/// A scalar as a JSON value.
pub(crate) fn scalar_json(s: Scalar<'_>) -> serde_json::Value {
    use serde_json::Value;
    match s {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(v) => Value::from(v),
        Scalar::Wide(v) => match u64::try_from(v) {
            Ok(u) => Value::from(u),
            // Past u64 a JSON reader holds it as a double; so does this.
            Err(_) => Value::from(v as f64),
        },
        Scalar::Float(v) => Value::from(v),
        Scalar::Text(t) => Value::String(t.into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_as_their_digits() {
        assert_eq!(decimal(1234, 2), Scalar::Float(12.34));
        assert_eq!(decimal(-5, 1), Scalar::Float(-0.5));
        assert_eq!(decimal(12, -3), Scalar::Int(12_000));
        assert_eq!(decimal(1200, 2), Scalar::Float(12.0));
        let big = 123_456_789_012_345_678_901_234_567i128;
        assert_eq!(
            decimal(big, 10),
            Scalar::Float("12345678901234567.8901234567".parse().unwrap_or(0.0))
        );
        assert_eq!(decimal_text("-7", 3), "-0.007");
    }

    #[test]
    fn narrow_floats_are_their_shortest_decimal() {
        assert_eq!(float32(0.1), Scalar::Float(0.1));
        // Exactly between two shortest texts: the even one, as JSON writers and numpy show it.
        assert_eq!(float32(-0.259_765_625_f64 as f32), Scalar::Float(-0.259_765_62));
        assert_eq!(float32(-0.447_265_625_f64 as f32), Scalar::Float(-0.447_265_62));
        assert_eq!(float32(f32::NAN), Scalar::Text("NaN".into()));
        assert_eq!(float(f64::NEG_INFINITY), Scalar::Text("-Infinity".into()));
        assert_eq!(unsigned(u64::MAX), Scalar::Wide(i128::from(u64::MAX)));
    }

    #[test]
    fn times_are_rfc_3339_in_time_order() {
        assert_eq!(timestamp(0, TimeUnit::Second, true), "1970-01-01T00:00:00+00:00");
        assert_eq!(timestamp(1_500, TimeUnit::Millisecond, false), "1970-01-01T00:00:01.5");
        assert_eq!(timestamp(-1, TimeUnit::Nanosecond, false), "1969-12-31T23:59:59.999999999");
        let whole = timestamp(1, TimeUnit::Second, true);
        let later = timestamp(1_250, TimeUnit::Millisecond, true);
        assert!(whole < later, "{whole} sorts before {later}");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(time(3_723_500, TimeUnit::Millisecond), "01:02:03.5");
        assert_eq!(duration(-1_500, TimeUnit::Millisecond), "-PT1.5S");
        assert_eq!(duration(-5, TimeUnit::Second), "-PT5S");
        assert_eq!(duration(-5, TimeUnit::Millisecond), "-PT0.005S");
        assert_eq!(interval(1, 2, 3_000_000_000), "P1M2DT3S");
        assert_eq!(hex(&[0, 255, 16]), "\\x00ff10");
    }
}
