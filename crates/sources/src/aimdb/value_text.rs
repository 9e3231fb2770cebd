//! A record value as compact JSON text: how AimDB values are read, kept and handed on. Parsed into
//! a `serde_json::Value` tree, a line of many tiny objects costs about 100 times its length (a
//! 64 MB `record.get` reply of `{"a":0}` elements reached 7.6 GB), so values stay text — checked
//! to be JSON, accounted by their length, profiled from the text — and only a value shown is
//! parsed, one at a time.

use std::sync::Arc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The most nodes [`ValueText::parse_sample`] keeps.
pub(super) const SAMPLE_NODES: usize = 10_000;

/// One record value's JSON text, whitespace outside strings removed. Cloning shares the text.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ValueText(Arc<str>);

impl ValueText {
    /// The value of valid JSON text `json` (as a `RawValue` has checked it), without the
    /// whitespace outside its strings, so the same value sent twice reads the same.
    pub(super) fn compact(json: &str) -> Self {
        let bytes = json.as_bytes();
        if !bytes.iter().any(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            return Self(Arc::from(json));
        }
        let mut out = String::with_capacity(json.len());
        let (mut in_string, mut escaped) = (false, false);
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
            } else if b == b'"' {
                in_string = true;
            } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                // Whitespace is ASCII, so these are character boundaries.
                out.push_str(&json[start..i]);
                start = i + 1;
            }
        }
        out.push_str(&json[start..]);
        Self(Arc::from(out))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its length in bytes: what the value is accounted as.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text is empty (never, for a value read from an instance).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value as a tree: for showing one value, never for keeping many.
    pub fn parse(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The start of the value as a tree, for an example: at most 10,000 arrays,
    /// objects and scalars are kept, later elements and members are read past, so showing a
    /// value of many tiny objects costs a bounded tree, not 100 times its text. `null` for text
    /// that does not parse (never, for a value read from an instance).
    pub fn parse_sample(&self) -> Value {
        let mut left = SAMPLE_NODES;
        let mut deserializer = serde_json::Deserializer::from_str(&self.0);
        Sample { left: &mut left }.deserialize(&mut deserializer).unwrap_or(Value::Null)
    }
}

impl From<&Value> for ValueText {
    fn from(value: &Value) -> Self {
        // Serializing a Value cannot fail: its keys are strings and its numbers finite.
        Self(Arc::from(serde_json::to_string(value).unwrap_or_else(|_| "null".into())))
    }
}

/// Compares as values (parsing the text): for tests and the rare check, never in bulk.
impl PartialEq<Value> for ValueText {
    fn eq(&self, other: &Value) -> bool {
        self.parse().is_ok_and(|value| value == *other)
    }
}

impl std::fmt::Debug for ValueText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cut: String = self.0.chars().take(200).collect();
        if cut.len() < self.0.len() {
            write!(f, "ValueText({cut}… {} bytes)", self.0.len())
        } else {
            write!(f, "ValueText({cut})")
        }
    }
}

/// A tree of at most `left` nodes; what is past it is read, not kept.
struct Sample<'a> {
    left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for Sample<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        *self.left = self.left.saturating_sub(1);
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Sample<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while *self.left > 0 {
            match seq.next_element_seed(Sample { left: &mut *self.left })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while *self.left > 0 {
            match map.next_key::<String>()? {
                Some(key) => {
                    let value = map.next_value_seed(Sample { left: &mut *self.left })?;
                    members.insert(key, value);
                }
                None => return Ok(Value::Object(members)),
            }
        }
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacts_whitespace_outside_strings_only() {
        let text = ValueText::compact(" { \"a b\" : [ 1 , \"x \\\" y\" ] ,\n\"c\":null } ");
        assert_eq!(text.as_str(), r#"{"a b":[1,"x \" y"],"c":null}"#);
        assert_eq!(text, ValueText::from(&text.parse().expect("JSON")));
        assert_eq!(ValueText::compact("42").as_str(), "42");
    }

    #[test]
    fn a_sample_keeps_a_bounded_tree() {
        let text = ValueText::compact(&format!("[{}{{\"a\":0}}]", r#"{"a":0},"#.repeat(50_000)));
        let sample = text.parse_sample();
        let kept = sample.as_array().map_or(0, Vec::len);
        assert!((1..=SAMPLE_NODES).contains(&kept), "{kept}");
        assert_eq!(sample[0], serde_json::json!({"a": 0}));
        let small = ValueText::from(&serde_json::json!({"x": [1, "two", null]}));
        assert_eq!(small.parse_sample(), serde_json::json!({"x": [1, "two", null]}));
    }
}
