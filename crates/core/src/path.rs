//! Property paths: the dot-path address of a value inside an item (`metadata.category`, `tags[]`).
//!
//! A path is a list of segments. `Key` steps into an object member; `Items` steps into every
//! element of an array and is written `[]`, as in a JMESPath projection, so `readings[].v` means
//! "the `v` member of every element of `readings`". Keys that are not plain identifiers are written
//! quoted (`"content-type".length`), again as JMESPath writes them, so a path can be pasted into a
//! selector.

use std::fmt;
use std::str::FromStr;

use crate::error::CoreError;

/// One step of a [`PropertyPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// An object member, by key.
    Key(Box<str>),
    /// Every element of an array (`[]`).
    Items,
}

/// The address of a property inside an item's value. The empty path is the item's value itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PropertyPath(Vec<Segment>);

impl PropertyPath {
    /// The path of the item's value itself.
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// True for the item's value itself.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by one object key.
    pub fn child(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.into()));
        Self(segments)
    }

    /// This path extended into array elements.
    pub fn items(&self) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Items);
        Self(segments)
    }

    /// Number of segments (0 for the root).
    pub fn depth(&self) -> usize {
        self.0.len()
    }

    /// The last object key on the path, if any (`category` for `metadata.category`).
    pub fn last_key(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Segment::Key(k) => Some(&**k),
            Segment::Items => None,
        })
    }

    /// True when the path goes through an array (its values are counted per element).
    pub fn is_under_array(&self) -> bool {
        self.0.contains(&Segment::Items)
    }
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl fmt::Display for PropertyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("@");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Items => f.write_str("[]")?,
                Segment::Key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    if is_identifier(key) {
                        f.write_str(key)?;
                    } else {
                        // JSON string quoting is exactly JMESPath's quoted-identifier syntax.
                        let quoted = serde_json::to_string(&**key).map_err(|_| fmt::Error)?;
                        f.write_str(&quoted)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl FromStr for PropertyPath {
    type Err = CoreError;

    /// Parses `a.b`, `a[].b`, `a[*].b` (alias of `[]`), `"odd key".b`; `@` or an empty string is the root.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: &str| CoreError::InvalidPath {
            path: text.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "@" {
            return Ok(Self::root());
        }
        let bytes = trimmed.as_bytes();
        let mut segments = Vec::new();
        let mut i = 0;
        let mut expect_key = true;
        while i < bytes.len() {
            match bytes[i] {
                b'[' => {
                    let rest = &trimmed[i..];
                    let len = if rest.starts_with("[]") {
                        2
                    } else if rest.starts_with("[*]") {
                        3
                    } else {
                        return Err(invalid(
                            "only `[]` (every element) may follow a key; indexes are not supported",
                        ));
                    };
                    if segments.is_empty() {
                        return Err(invalid("a path cannot start with `[]`"));
                    }
                    segments.push(Segment::Items);
                    i += len;
                    expect_key = false;
                }
                b'.' => {
                    if expect_key {
                        return Err(invalid("empty key between dots"));
                    }
                    expect_key = true;
                    i += 1;
                }
                b'"' => {
                    if !expect_key {
                        return Err(invalid("a key must follow a dot"));
                    }
                    // Find the closing quote, honouring backslash escapes, then let serde_json unescape.
                    let mut j = i + 1;
                    while j < bytes.len() && bytes[j] != b'"' {
                        j += if bytes[j] == b'\\' { 2 } else { 1 };
                    }
                    if j >= bytes.len() {
                        return Err(invalid("unterminated quoted key"));
                    }
                    let key: String = serde_json::from_str(&trimmed[i..=j])
                        .map_err(|e| invalid(&format!("bad quoted key: {e}")))?;
                    segments.push(Segment::Key(key.into()));
                    i = j + 1;
                    expect_key = false;
                }
                _ => {
                    if !expect_key {
                        return Err(invalid("a key must follow a dot"));
                    }
                    let end = trimmed[i..].find(['.', '[']).map_or(trimmed.len(), |p| i + p);
                    let key = trimmed[i..end].trim();
                    if key.is_empty() {
                        return Err(invalid("empty key"));
                    }
                    if key.contains('"') {
                        return Err(invalid(
                            "a quote may only open a quoted key, e.g. `\"odd key\".x`",
                        ));
                    }
                    segments.push(Segment::Key(key.into()));
                    i = end;
                    expect_key = false;
                }
            }
        }
        if expect_key {
            return Err(invalid("the path ends with a dot"));
        }
        Ok(Self(segments))
    }
}

impl serde::Serialize for PropertyPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        text.parse::<PropertyPath>().expect("valid path").to_string()
    }

    #[test]
    fn parses_and_prints_nested_and_array_paths() {
        assert_eq!(round_trip("metadata.category"), "metadata.category");
        assert_eq!(round_trip("metrics.cpu.current"), "metrics.cpu.current");
        assert_eq!(round_trip("readings[].v"), "readings[].v");
        assert_eq!(round_trip("readings[*].v"), "readings[].v");
        assert_eq!(round_trip("matrix[][]"), "matrix[][]");
        assert_eq!(round_trip("\"content-type\".x"), "\"content-type\".x");
        assert_eq!(round_trip("@"), "@");
    }

    #[test]
    fn odd_keys_are_quoted_as_jmespath_does() {
        let path = PropertyPath::root().child("my key").child("ok_1");
        assert_eq!(path.to_string(), "\"my key\".ok_1");
        assert_eq!(path.to_string().parse::<PropertyPath>().expect("parses"), path);
    }

    #[test]
    fn rejects_malformed_paths_with_reasons() {
        for bad in ["a..b", "a.", "[]", "a[0]", "\"open", "a\"b\""] {
            let err = bad.parse::<PropertyPath>().expect_err(bad);
            assert!(err.to_string().contains(bad), "{err}");
        }
    }

    #[test]
    fn last_key_and_array_flags() {
        let path: PropertyPath = "readings[].v".parse().expect("valid");
        assert_eq!(path.last_key(), Some("v"));
        assert!(path.is_under_array());
        assert_eq!(path.depth(), 3);
    }
}
