//! PostgreSQL values read from their text output, by the column's type: every type PostgreSQL
//! can return has a text form, so no type (extension types, ranges, composites, …) fails to
//! decode.
//!
//! Integers (and `oid`) become JSON integers, booleans booleans, `json`/`jsonb` their JSON, and
//! arrays JSON arrays of their elements read by the same rule. Floats and `numeric` become JSON
//! numbers when the number written is exactly the database's value — its shortest `float8`
//! form denotes the same decimal — and otherwise the database's exact text as a string
//! (`numeric` past 17 significant digits, `NaN`, `Infinity`, `-Infinity`); a number inside
//! JSON that a JSON number cannot hold exactly becomes that string too. Domains read as their
//! base type. Everything else (dates, times, intervals, uuid, bytea as `\x…`, ranges, money,
//! …) is its text, as `psql` shows it. The same rule is written in SQL ([`number_sql`]) for the
//! profiles computed inside the database.

use postgres::types::{Kind, Type};
use serde_json::Value;

use crate::sql::SqlValue;

/// The value of a column of type `ty` whose text output is `text` (`None`: NULL).
pub(crate) fn value(ty: &Type, text: Option<&str>) -> SqlValue {
    let Some(text) = text else { return SqlValue::Null };
    if let Kind::Domain(base) = ty.kind() {
        return value(base, Some(text));
    }
    match *ty {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => {
            text.parse().map_or_else(|_| SqlValue::Text(text.into()), SqlValue::Integer)
        }
        Type::BOOL => match text {
            "t" => SqlValue::Bool(true),
            "f" => SqlValue::Bool(false),
            _ => SqlValue::Text(text.into()),
        },
        Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC => number(text),
        Type::JSON | Type::JSONB => json(text),
        _ => match ty.kind() {
            Kind::Array(element) => {
                array(element, text).map_or_else(|| SqlValue::Text(text.into()), SqlValue::Json)
            }
            _ => SqlValue::Text(text.into()),
        },
    }
}

/// Nesting of array dimensions read at most (PostgreSQL allows 6).
const MAX_DIMENSIONS: usize = 6;

/// An array's text output (`{1,2,NULL}`, `{{"a b",c},{d,e}}`) as a JSON array of its elements,
/// each read as a value of `element`; `None` when the text is not in that form (an array with
/// explicit bounds, `[0:1]={…}`, keeps its text: the bounds would be lost).
fn array(element: &Type, text: &str) -> Option<Value> {
    let delimiter = if *element == Type::BOX { b';' } else { b',' };
    let mut reader = ArrayText { text, at: 0, delimiter };
    let value = reader.array(element, 0)?;
    (reader.at == text.len()).then_some(value)
}

/// A cursor over an array's text output.
struct ArrayText<'a> {
    text: &'a str,
    at: usize,
    delimiter: u8,
}

impl ArrayText<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// `{ element, … }` at the cursor.
    fn array(&mut self, element: &Type, depth: usize) -> Option<Value> {
        if depth >= MAX_DIMENSIONS || self.peek() != Some(b'{') {
            return None;
        }
        self.at += 1;
        let mut items = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(Value::Array(items));
        }
        loop {
            let item = match self.peek()? {
                b'{' => self.array(element, depth + 1)?,
                b'"' => value(element, Some(&self.quoted()?)).to_json(),
                _ => {
                    let raw = self.unquoted()?;
                    if raw.eq_ignore_ascii_case("NULL") {
                        Value::Null
                    } else {
                        value(element, Some(&raw)).to_json()
                    }
                }
            };
            items.push(item);
            match self.peek()? {
                b'}' => {
                    self.at += 1;
                    return Some(Value::Array(items));
                }
                b if b == self.delimiter => self.at += 1,
                _ => return None,
            }
        }
    }

    /// A double-quoted element, its backslash escapes undone.
    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.text[self.at + 1..].char_indices();
        while let Some((i, ch)) = chars.next() {
            match ch {
                '"' => {
                    self.at += 1 + i + 1;
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                _ => out.push(ch),
            }
        }
        None
    }

    /// An unquoted element, up to the delimiter or the closing brace.
    fn unquoted(&mut self) -> Option<String> {
        let rest = &self.text[self.at..];
        let end = rest
            .find(|c: char| c == char::from(self.delimiter) || c == '}' || c == '{' || c == '"')?;
        if rest.as_bytes()[end] != self.delimiter && rest.as_bytes()[end] != b'}' {
            return None;
        }
        self.at += end;
        let raw = rest[..end].trim();
        (!raw.is_empty() && !raw.contains('\\')).then(|| raw.to_string())
    }
}

/// A number's text as a JSON number when that number is exactly the same decimal, else as text.
pub(crate) fn number(text: &str) -> SqlValue {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && exact(text, f) => SqlValue::Real(f),
        _ => SqlValue::Text(text.into()),
    }
}

/// Whether `f` (parsed from `text`) written shortest is the decimal `text` says: then the JSON
/// number written is the database's value, down to subnormals (`5e-324`) and up to the largest
/// double (a decimal `float8` cannot hold parses to another one, or to infinity).
fn exact(text: &str, f: f64) -> bool {
    match (decimal(text), decimal(&format!("{f:e}"))) {
        (Some(written), Some(shown)) => written == shown,
        _ => false,
    }
}

/// A decimal as (negative, significant digits without leading or trailing zeros, exponent e
/// with value = 0.digits × 10^e); zero has no digits and is never negative.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let all: String = format!("{whole}{fraction}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_start_matches('0').trim_end_matches('0').to_string();
    if digits.is_empty() {
        return Some((false, digits, 0));
    }
    let point = i64::try_from(whole.len()).ok()? - i64::try_from(leading).ok()?;
    Some((negative, digits, point.checked_add(exponent)?))
}

/// JSON text as its value; a number in it that would not survive as a JSON number exactly
/// becomes a string of its exact text, as a `numeric` column's value would, so no digit is lost
/// and the rest of the document keeps its structure.
pub(crate) fn json(text: &str) -> SqlValue {
    let mut exact_text = String::new();
    let mut copied = 0;
    for (start, end) in numbers_in(text) {
        let n = &text[start..end];
        if !n.parse::<f64>().is_ok_and(|f| f.is_finite() && exact(n, f)) {
            exact_text.push_str(&text[copied..start]);
            exact_text.push('"');
            exact_text.push_str(n);
            exact_text.push('"');
            copied = end;
        }
    }
    let parsed = if copied == 0 {
        serde_json::from_str::<Value>(text)
    } else {
        exact_text.push_str(&text[copied..]);
        serde_json::from_str::<Value>(&exact_text)
    };
    parsed.map_or_else(|_| SqlValue::Text(text.into()), SqlValue::Json)
}

/// The byte ranges of the number tokens of JSON text (outside strings).
fn numbers_in(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            match bytes[at] {
                b'"' => {
                    at += 1;
                    while at < bytes.len() && bytes[at] != b'"' {
                        at += if bytes[at] == b'\\' { 2 } else { 1 };
                    }
                    at += 1;
                }
                b'-' | b'0'..=b'9' => {
                    let start = at;
                    while at < bytes.len()
                        && matches!(bytes[at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    {
                        at += 1;
                    }
                    return Some((start, at));
                }
                _ => at += 1,
            }
        }
        None
    })
}

/// The smallest positive double (a subnormal) and the largest, as decimals PostgreSQL converts to
/// `float8` without an underflow or overflow error: the range tested before a cast.
const SMALLEST: &str = "4.9406564584124654e-324";
const LARGEST: &str = "1.7976931348623157e308";

/// SQL for "the number `expr` (a `numeric`, `real` or `double precision` value) is shown as a
/// JSON number" — [`number`]'s rule, evaluated by the database on the same text output. The
/// range is tested before the cast so that the cast never overflows.
pub(crate) fn number_sql(expr: &str) -> String {
    let text = format!("({expr})::text");
    format!(
        "(CASE WHEN {text} IN ('NaN', 'Infinity', '-Infinity') THEN false \
         WHEN {text}::numeric <> 0 AND (abs({text}::numeric) < {SMALLEST} OR abs({text}::numeric) > {LARGEST}) THEN false \
         ELSE {text}::numeric::float8::text::numeric = {text}::numeric END)"
    )
}

/// SQL for "the number `expr` is finite and within float8's range". Profiles and samples read
/// such a value that is not exact as a JSON number ([`number_sql`]) as its nearest double,
/// written shortest (all its digits, never rounded to 15), so one long numeric does not make a
/// column "mixed" with a range over the others; NaN, ±Infinity and values past float8's range
/// stay text.
pub(crate) fn float_range_sql(expr: &str) -> String {
    let text = format!("({expr})::text");
    format!(
        "(CASE WHEN {text} IN ('NaN', 'Infinity', '-Infinity') THEN false \
         WHEN {text}::numeric <> 0 AND (abs({text}::numeric) < {SMALLEST} OR abs({text}::numeric) > {LARGEST}) THEN false \
         ELSE true END)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_numbers_only_when_the_json_number_is_the_same_decimal() {
        for (text, expected) in [
            ("3.98", SqlValue::Real(3.98)),
            ("3.90", SqlValue::Real(3.9)),
            ("0", SqlValue::Real(0.0)),
            ("-0", SqlValue::Real(-0.0)),
            ("0.000", SqlValue::Real(0.0)),
            ("1e-9", SqlValue::Real(1e-9)),
            ("1000000000000000", SqlValue::Real(1e15)),
            ("9007199254740992", SqlValue::Real(9_007_199_254_740_992.0)),
            ("1.7976931348623157e+308", SqlValue::Real(f64::MAX)),
            ("5e-324", SqlValue::Real(5e-324)),
            ("2.2250738585072014e-308", SqlValue::Real(2.2250738585072014e-308)),
            ("1e400", SqlValue::Text("1e400".into())),
            ("1.234567e-320", SqlValue::Text("1.234567e-320".into())),
            ("9007199254740993", SqlValue::Text("9007199254740993".into())),
            ("12345678901234567.89", SqlValue::Text("12345678901234567.89".into())),
            ("0.1000000000000000000001", SqlValue::Text("0.1000000000000000000001".into())),
            ("1e-320", SqlValue::Real(1e-320)),
            ("NaN", SqlValue::Text("NaN".into())),
            ("Infinity", SqlValue::Text("Infinity".into())),
            ("-Infinity", SqlValue::Text("-Infinity".into())),
        ] {
            assert_eq!(number(text), expected, "{text}");
        }
    }

    #[test]
    fn json_keeps_numbers_that_a_json_number_cannot_hold_as_text() {
        assert_eq!(
            json(r#"{"a": [1, 2.5, null], "b\"1": "x-1"}"#),
            SqlValue::Json(serde_json::json!({"a": [1, 2.5, null], "b\"1": "x-1"}))
        );
        assert_eq!(
            json(r#"{"a": 12345678901234567.89, "b": [1e400, 2]}"#),
            SqlValue::Json(serde_json::json!({"a": "12345678901234567.89", "b": ["1e400", 2]}))
        );
        assert_eq!(json("1e400"), SqlValue::Json(serde_json::json!("1e400")));
        assert_eq!(
            json("-0.1000000000000000000001"),
            SqlValue::Json(serde_json::json!("-0.1000000000000000000001"))
        );
    }

    #[test]
    fn arrays_are_json_arrays_of_their_elements_read_by_type() {
        let read = |ty: &Type, text: &str| value(ty, Some(text)).to_json();
        assert_eq!(read(&Type::INT4_ARRAY, "{1,NULL,-3}"), serde_json::json!([1, null, -3]));
        assert_eq!(read(&Type::INT4_ARRAY, "{{1,2},{3,4}}"), serde_json::json!([[1, 2], [3, 4]]));
        assert_eq!(read(&Type::INT4_ARRAY, "{}"), serde_json::json!([]));
        assert_eq!(
            read(&Type::TEXT_ARRAY, r#"{"a b","NULL",NULL,"x\"y\\z",plain,"{}"," "}"#),
            serde_json::json!(["a b", "NULL", null, "x\"y\\z", "plain", "{}", " "])
        );
        assert_eq!(
            read(&Type::NUMERIC_ARRAY, "{1.5,12345678901234567.89,NaN}"),
            serde_json::json!([1.5, "12345678901234567.89", "NaN"])
        );
        assert_eq!(read(&Type::BOOL_ARRAY, "{t,f}"), serde_json::json!([true, false]));
        assert_eq!(
            read(&Type::JSONB_ARRAY, r#"{"{\"a\": 1}",NULL}"#),
            serde_json::json!([{"a": 1}, null])
        );
        assert_eq!(
            read(&Type::BOX_ARRAY, "{(1,1),(0,0);(2,2),(1,1)}"),
            serde_json::json!(["(1,1),(0,0)", "(2,2),(1,1)"])
        );
        // Explicit bounds and anything malformed keep the text.
        assert_eq!(read(&Type::INT4_ARRAY, "[0:1]={1,2}"), serde_json::json!("[0:1]={1,2}"));
        assert_eq!(read(&Type::INT4_ARRAY, "{1,2"), serde_json::json!("{1,2"));
        assert_eq!(
            read(&Type::INT4_ARRAY, "{{{{{{{1}}}}}}}"),
            serde_json::json!("{{{{{{{1}}}}}}}")
        );
    }

    #[test]
    fn domains_read_as_their_base_type_and_unknown_types_as_text() {
        let domain = Type::new("d".into(), 1, Kind::Domain(Type::NUMERIC), "public".into());
        assert_eq!(value(&domain, Some("1.5")), SqlValue::Real(1.5));
        let other = Type::new("geometry".into(), 2, Kind::Simple, "public".into());
        assert_eq!(value(&other, Some("POINT(1 2)")), SqlValue::Text("POINT(1 2)".into()));
        assert_eq!(value(&Type::INT8, None), SqlValue::Null);
    }
}
