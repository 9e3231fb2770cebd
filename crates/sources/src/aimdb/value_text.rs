//! A record value as compact JSON text: how AimDB values are read, kept and handed on. Parsed into
//! a `serde_json::Value` tree, a line of many tiny objects costs about 100 times its length (a
//! 64 MB `record.get` reply of `{"a":0}` elements reached 7.6 GB), so values stay text — checked
//! to be JSON, accounted by their length, profiled from the text — and only a value shown is
//! parsed, one at a time.

use std::sync::Arc;

use serde_json::Value;

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
}
