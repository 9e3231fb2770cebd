//! Making values safe to show an LLM: long strings cut at a character limit, deep values cut at
//! a depth limit, each cut marked so the reader knows something was left out.

use serde_json::{Map, Value};

/// Default of [`DisplayLimits::max_depth`]: deep enough for any sensible nesting (so a sample
/// shows the item's real shape; the old 6 cut ordinary configs), shallow enough that a
/// pathological item does not fill an answer.
pub const SHOWN_DEPTH: usize = 20;

/// How values are shortened for output.
#[derive(Debug, Clone, Copy)]
pub struct DisplayLimits {
    /// Longest string shown, in characters (default 100).
    pub max_string: usize,
    /// Deepest nesting shown (default [`SHOWN_DEPTH`]): an object or array this many levels
    /// below the value shown becomes a marker string (`[depth limit: object with 3 keys]`).
    pub max_depth: usize,
    /// Most array elements shown (default 20).
    pub max_array: usize,
}

impl Default for DisplayLimits {
    fn default() -> Self {
        Self { max_string: 100, max_depth: SHOWN_DEPTH, max_array: 20 }
    }
}

/// Counts of what [`shorten`] cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cuts {
    /// Strings truncated.
    pub strings: usize,
    /// Objects or arrays replaced by a depth marker.
    pub depth: usize,
    /// Arrays whose tail was dropped.
    pub arrays: usize,
}

impl Cuts {
    /// True when nothing was cut.
    pub fn is_empty(&self) -> bool {
        self.strings == 0 && self.depth == 0 && self.arrays == 0
    }
}

/// Shortens one string to `max` characters, marking the cut with the original length.
pub fn shorten_str(text: &str, max: usize) -> Option<String> {
    let mut chars = text.char_indices();
    let (cut, _) = chars.nth(max)?;
    let total = text.chars().count();
    Some(format!("{}… [truncated: {total} chars]", &text[..cut]))
}

/// A counted string value (see [`crate::profile::value_key`]) shortened to `max` characters;
/// the note gives the length of the original string, not of the key it was counted under.
pub fn shorten_value_key(key: &str, max: usize) -> String {
    match crate::profile::long_key_parts(key) {
        Some((start, total)) => {
            let cut = start.char_indices().nth(max).map_or(start.len(), |(at, _)| at);
            format!("{}… [truncated: {total} chars]", &start[..cut])
        }
        None => shorten_str(key, max).unwrap_or_else(|| key.to_string()),
    }
}

/// True for characters that must not reach markdown or a prompt raw: control characters (NUL,
/// newlines, ESC, …), bidirectional and other invisible format controls (U+202E reverses the
/// text after it), and line/paragraph separators.
pub fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// `text` with every [`is_hidden_control`] character written as an escape (`\u{202E}`), for
/// markdown and prompts (JSON output keeps the exact text; JSON escapes it itself).
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(is_hidden_control) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a markdown code span, hidden controls escaped. The fence is one backtick longer
/// than the longest run of backticks inside (CommonMark), so a key such as ``a`b`` cannot end
/// the span early; a space pads the content when it starts or ends with a backtick, or starts
/// and ends with a space (which a code span would strip).
pub fn code(text: &str) -> String {
    let text = escape_controls(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let spaced = text.starts_with(' ') && text.ends_with(' ') && !text.trim().is_empty();
    if text.starts_with('`') || text.ends_with('`') || spaced {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Returns `value` shortened to `limits`, counting every cut in `cuts`.
pub fn shorten(value: &Value, limits: &DisplayLimits, cuts: &mut Cuts) -> Value {
    shorten_at(value, limits, cuts, 0)
}

fn shorten_at(value: &Value, limits: &DisplayLimits, cuts: &mut Cuts, depth: usize) -> Value {
    match value {
        Value::String(s) => match shorten_str(s, limits.max_string) {
            Some(short) => {
                cuts.strings += 1;
                Value::String(short)
            }
            None => value.clone(),
        },
        Value::Array(items) if depth >= limits.max_depth && !items.is_empty() => {
            cuts.depth += 1;
            Value::String(format!("[depth limit: array of {} elements]", items.len()))
        }
        Value::Object(map) if depth >= limits.max_depth && !map.is_empty() => {
            cuts.depth += 1;
            Value::String(format!("[depth limit: object with {} keys]", map.len()))
        }
        Value::Array(items) => {
            let mut out: Vec<Value> = items
                .iter()
                .take(limits.max_array)
                .map(|v| shorten_at(v, limits, cuts, depth + 1))
                .collect();
            if items.len() > limits.max_array {
                cuts.arrays += 1;
                out.push(Value::String(format!(
                    "[+{} more elements]",
                    items.len() - limits.max_array
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let out: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), shorten_at(v, limits, cuts, depth + 1)))
                .collect();
            Value::Object(out)
        }
        _ => value.clone(),
    }
}

/// A short, single-line rendering of a scalar for prose (`"server"`, `0.45`, `true`), every
/// hidden control escaped.
pub fn inline(value: &Value, max_chars: usize) -> String {
    let text = match value {
        Value::String(s) => {
            let short = match s.char_indices().nth(max_chars) {
                Some((cut, _)) => format!("{}…", &s[..cut]),
                None => s.clone(),
            };
            serde_json::to_string(&short).unwrap_or_default()
        }
        other => other.to_string(),
    };
    // JSON escapes C0 controls but not bidi or other format controls.
    escape_controls(&text)
}

/// What kind of JSON value `value` is, in words for a message ("an array", "a string").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// " N values nested deeper than 20 levels are shown as `[depth limit: …]` markers." or "": what
/// an answer showing items says when the display depth cut some of their values.
pub fn depth_cut_sentence(cut: usize) -> String {
    match cut {
        0 => String::new(),
        1 => format!(
            " 1 value nested more than {} levels deep is shown as a `[depth limit: …]` marker.",
            SHOWN_DEPTH
        ),
        n => format!(
            " {n} values nested more than {} levels deep are shown as `[depth limit: …]` markers.",
            SHOWN_DEPTH
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_strings_are_cut_and_marked() {
        let long = "x".repeat(250);
        let mut cuts = Cuts::default();
        let out = shorten(&json!({ "note": long }), &DisplayLimits::default(), &mut cuts);
        let note = out["note"].as_str().expect("string");
        assert!(note.starts_with(&"x".repeat(100)));
        assert!(note.ends_with("[truncated: 250 chars]"), "{note}");
        assert_eq!(cuts.strings, 1);
    }

    #[test]
    fn deep_values_are_replaced_by_a_marker() {
        let deep = json!({"a": {"b": {"c": {"d": 1}}}});
        let limits = DisplayLimits { max_depth: 2, ..DisplayLimits::default() };
        let mut cuts = Cuts::default();
        let out = shorten(&deep, &limits, &mut cuts);
        assert_eq!(out, json!({"a": {"b": "[depth limit: object with 1 keys]"}}));
        assert_eq!(cuts.depth, 1);
    }

    #[test]
    fn multibyte_strings_are_cut_on_character_boundaries() {
        let text = "é".repeat(150);
        let short = shorten_str(&text, 100).expect("cut");
        assert!(short.starts_with(&"é".repeat(100)));
    }

    #[test]
    fn code_spans_fence_every_backtick_run_inside() {
        assert_eq!(code("cpu"), "`cpu`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("a``b`c"), "```a``b`c```");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("x`"), "`` x` ``");
        assert_eq!(code(" x "), "`  x  `");
        assert_eq!(code("a\nb"), "`a\\u{000A}b`");
    }
}
