//! ClickHouse values as text: the fields of its `TabSeparated` output unescaped and converted
//! by the column's type (as the engine names it: `Nullable(Int64)`, `Array(String)`, …), and
//! values written back as literals for the statements schemascope sends.
//!
//! `TabSeparatedWithNamesAndTypes` is chosen because ClickHouse 18.16 and current releases write
//! it the same way, one row per line, so rows are read one by one within the caps; 64-bit
//! integers keep all their digits (JSON output quotes them) and NaN and infinities stay what
//! they are (JSON output writes them as `null`).

use serde_json::{Map, Number, Value};

use crate::sql::SqlValue;

/// A field of a `TabSeparated` line with its escapes resolved (`\t`, `\n`, `\\`, `\'`, `\0`,
/// …); `None` for `\N` (NULL).
pub(crate) fn unescape(field: &[u8]) -> Option<Vec<u8>> {
    if field == b"\\N" {
        return None;
    }
    let mut out = Vec::with_capacity(field.len());
    let mut bytes = field.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'r') => out.push(b'\r'),
            Some(b'b') => out.push(0x08),
            Some(b'f') => out.push(0x0c),
            Some(b'0') => out.push(0),
            Some(b'a') => out.push(0x07),
            Some(b'v') => out.push(0x0b),
            Some(&other) => out.push(other),
            None => out.push(b'\\'),
        }
    }
    Some(out)
}

/// `ty` without the wrappers that do not change how a value is written: `Nullable(…)`,
/// `LowCardinality(…)`, `SimpleAggregateFunction(f, …)`.
pub(crate) fn stored_type(ty: &str) -> &str {
    let mut ty = ty.trim();
    loop {
        let inner = ["Nullable(", "LowCardinality("]
            .iter()
            .find_map(|w| ty.strip_prefix(w).and_then(|r| r.strip_suffix(')')));
        match inner {
            Some(inner) => ty = inner.trim(),
            None => return ty,
        }
    }
}

/// The family of a stored type: `Decimal(18, 3)` → `Decimal`.
fn family(ty: &str) -> &str {
    ty.split('(').next().unwrap_or(ty).trim()
}

/// Whether a stored type holds whole numbers.
pub(crate) fn is_integer(ty: &str) -> bool {
    matches!(
        family(stored_type(ty)),
        "Int8"
            | "Int16"
            | "Int32"
            | "Int64"
            | "Int128"
            | "Int256"
            | "UInt8"
            | "UInt16"
            | "UInt32"
            | "UInt64"
            | "UInt128"
            | "UInt256"
    )
}

/// Whether a stored type holds other numbers (floats and decimals).
pub(crate) fn is_float_or_decimal(ty: &str) -> bool {
    let f = family(stored_type(ty));
    f.starts_with("Float") || f.starts_with("Decimal")
}

/// Whether values of the type are shown as JSON documents (arrays, tuples, maps).
pub(crate) fn is_document(ty: &str) -> bool {
    matches!(family(stored_type(ty)), "Array" | "Tuple" | "Map" | "Nested")
}

/// The value of one field (`raw`: as it stands in the line, escapes included) of type `ty`.
pub(crate) fn value(ty: &str, raw: &[u8]) -> SqlValue {
    let stored = stored_type(ty);
    if is_document(stored) {
        if raw == b"\\N" {
            return SqlValue::Null;
        }
        // Elements are written quoted, with their own escapes: parsed from the raw field.
        return match literal(raw) {
            Some(json) => SqlValue::Json(json),
            None => SqlValue::Text(String::from_utf8_lossy(raw).into_owned()),
        };
    }
    let Some(bytes) = unescape(raw) else { return SqlValue::Null };
    let text = String::from_utf8_lossy(&bytes);
    match family(stored) {
        "Nothing" => SqlValue::Null,
        _ if is_integer(stored) => match text.parse::<i64>() {
            Ok(i) => SqlValue::Integer(i),
            // Past i64 (UInt64 above 2^63, 128- and 256-bit integers): all the digits, as text.
            Err(_) => SqlValue::Text(text.into_owned()),
        },
        f if f.starts_with("Float") => {
            float(&text).map_or_else(|| SqlValue::Text(text.into_owned()), SqlValue::Real)
        }
        f if f.starts_with("Decimal") => crate::sql::postgres::text::number(&text),
        "Bool" => match &*text {
            "true" | "1" => SqlValue::Bool(true),
            "false" | "0" => SqlValue::Bool(false),
            _ => SqlValue::Text(text.into_owned()),
        },
        _ => SqlValue::Text(text.into_owned()),
    }
}

/// A float as ClickHouse writes it (`nan`, `inf`, `-inf` included).
fn float(text: &str) -> Option<f64> {
    match text {
        "nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

/// A ClickHouse literal of an array, tuple or map (`[1,'a\'b',NULL]`, `(1,2)`, `{'k':1}`) as
/// JSON: tuples become arrays, maps objects; numbers past i64 and non-finite floats become text.
pub(crate) fn literal(raw: &[u8]) -> Option<Value> {
    let mut parser = Literal { bytes: raw, at: 0, depth: 0 };
    let value = parser.value()?;
    (parser.at == raw.len()).then_some(value)
}

/// Deepest nesting of a literal parsed; deeper ones stay text.
const MAX_LITERAL_DEPTH: usize = 128;

struct Literal<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Literal<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'[' => self.sequence(b']').map(Value::Array),
            b'(' => self.sequence(b')').map(Value::Array),
            b'{' => self.map(),
            b'\'' => self.string().map(Value::String),
            _ => self.bare(),
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_LITERAL_DEPTH).then_some(())
    }

    fn sequence(&mut self, close: u8) -> Option<Vec<Value>> {
        self.enter()?;
        self.at += 1;
        let mut items = Vec::new();
        if self.peek()? == close {
            self.at += 1;
            self.depth -= 1;
            return Some(items);
        }
        loop {
            items.push(self.value()?);
            match self.peek()? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(items);
                }
                _ => return None,
            }
        }
    }

    fn map(&mut self) -> Option<Value> {
        self.enter()?;
        self.at += 1;
        let mut object = Map::new();
        if self.peek()? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Some(Value::Object(object));
        }
        loop {
            let key = match self.value()? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            let value = self.value()?;
            object.insert(key, value);
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    self.depth -= 1;
                    return Some(Value::Object(object));
                }
                _ => return None,
            }
        }
    }

    fn string(&mut self) -> Option<String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let b = self.peek()?;
            self.at += 1;
            match b {
                b'\'' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let escaped = self.peek()?;
                    self.at += 1;
                    // `\N` inside a quoted string is the letter N, not NULL.
                    out.extend(unescape(&[b'\\', escaped]).unwrap_or_else(|| vec![escaped]));
                }
                other => out.push(other),
            }
        }
    }

    fn bare(&mut self) -> Option<Value> {
        let start = self.at;
        while let Some(b) = self.peek() {
            if matches!(b, b',' | b']' | b')' | b'}' | b':') {
                break;
            }
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?.trim();
        Some(match text {
            "" => return None,
            "NULL" => Value::Null,
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => {
                if let Ok(i) = text.parse::<i64>() {
                    Value::from(i)
                } else if let Ok(u) = text.parse::<u64>() {
                    Value::from(u)
                } else if let Some(f) = float(text) {
                    Number::from_f64(f).map_or_else(
                        || SqlValue::Real(f).to_json(),
                        // A float that is a whole number stays as ClickHouse wrote it.
                        Value::Number,
                    )
                } else {
                    // Past u64 (128- and 256-bit integers) or a form of its own: the text.
                    Value::String(text.to_string())
                }
            }
        })
    }
}

/// `value` as a ClickHouse literal, for a statement's parameter: text single-quoted with every
/// backslash and quote escaped (ClickHouse reads backslash escapes inside strings), numbers in
/// full, non-finite floats by ClickHouse's names.
pub(crate) fn sql_literal(value: &SqlValue) -> String {
    match value {
        SqlValue::Null => "NULL".into(),
        SqlValue::Integer(i) => i.to_string(),
        SqlValue::Real(f) if f.is_nan() => "nan".into(),
        SqlValue::Real(f) if f.is_infinite() => {
            if *f > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        }
        SqlValue::Real(f) => format!("{f:?}"),
        SqlValue::Bool(b) => if *b { "1" } else { "0" }.into(),
        SqlValue::Text(s) => quote_string(s),
        SqlValue::Json(v) => quote_string(&v.to_string()),
    }
}

/// `text` as a ClickHouse string literal.
pub(crate) fn quote_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            // Written escaped so that no byte of the literal is a control character.
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other => out.push(other),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_unescape_and_null_is_backslash_n() {
        assert_eq!(unescape(b"a\\tb\\\\c\\'d\\0"), Some(b"a\tb\\c'd\0".to_vec()));
        assert_eq!(unescape(b"\\N"), None);
        assert_eq!(unescape(b"\\\\N"), Some(b"\\N".to_vec()));
    }

    #[test]
    fn values_convert_by_their_type() {
        assert_eq!(value("Nullable(Int64)", b"\\N"), SqlValue::Null);
        assert_eq!(
            value("UInt64", b"18446744073709551615"),
            SqlValue::Text("18446744073709551615".into())
        );
        assert_eq!(value("Int64", b"-9223372036854775808"), SqlValue::Integer(i64::MIN));
        assert!(matches!(value("Float64", b"nan"), SqlValue::Real(f) if f.is_nan()));
        assert_eq!(value("Float32", b"-inf"), SqlValue::Real(f64::NEG_INFINITY));
        assert_eq!(value("Float32", b"1.1"), SqlValue::Real(1.1));
        assert_eq!(value("Decimal(18, 3)", b"1.500"), SqlValue::Real(1.5));
        assert_eq!(value("LowCardinality(String)", b"x\\ty"), SqlValue::Text("x\ty".into()));
        assert_eq!(
            value("Array(Nullable(String))", b"['a\\'b',NULL,'c\\\\d']"),
            SqlValue::Json(json!(["a'b", null, "c\\d"]))
        );
        assert_eq!(
            value("Array(Array(UInt64))", b"[[1,18446744073709551615],[]]"),
            SqlValue::Json(json!([[1, 18446744073709551615u64], []]))
        );
        assert_eq!(
            value("Tuple(Float64, String)", b"(nan,'x')"),
            SqlValue::Json(json!(["NaN", "x"]))
        );
        assert_eq!(
            value("Map(String, UInt8)", b"{'a':1,'b':2}"),
            SqlValue::Json(json!({"a": 1, "b": 2}))
        );
        assert_eq!(value("Bool", b"true"), SqlValue::Bool(true));
    }

    #[test]
    fn literals_escape_what_would_end_or_bend_them() {
        assert_eq!(sql_literal(&SqlValue::Text("a'b\\c\n".into())), "'a\\'b\\\\c\\n'");
        assert_eq!(
            sql_literal(&SqlValue::Text("\\'; DROP TABLE t --".into())),
            "'\\\\\\'; DROP TABLE t --'"
        );
        assert_eq!(sql_literal(&SqlValue::Real(f64::NEG_INFINITY)), "-inf");
        assert_eq!(sql_literal(&SqlValue::Real(0.1)), "0.1");
    }
}
