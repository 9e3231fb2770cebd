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
    Some(format!("{}{CUT_MARK}{total} chars]", &text[..cut]))
}

/// A counted string value (see [`crate::profile::value_key`]) shortened to `max` characters;
/// the note gives the length of the original string, not of the key it was counted under.
pub fn shorten_value_key(key: &str, max: usize) -> String {
    shorten_value_keys(&[key], max).pop().unwrap_or_default()
}

/// Characters shown past the first one in which two listed values differ, so the difference is
/// seen with a little of what follows it.
const PAST_DIFFERENCE: usize = 10;

/// Counted values as a list shows them, each as [`shorten_value_key`] shows it, but never two
/// alike where the values differ: one that would look like another is shown up to a few
/// characters past where their texts part. Over-long values are kept by their first 256 bytes
/// and length only (see [`crate::profile::value_key`]); those alike in both say how many of the
/// listed values share them, rather than looking like one value listed twice.
pub fn shorten_value_keys(keys: &[&str], max: usize) -> Vec<String> {
    // Each key's length in characters and kept start (all of it but for an over-long value).
    let parts: Vec<(u64, &str)> = keys
        .iter()
        .map(|key| match crate::profile::long_key_parts(key) {
            Some((start, total)) => (total, start),
            None => (key.chars().count() as u64, *key),
        })
        .collect();
    // A cut value shows its length, so only values of one length can look alike.
    let (mut needed, alike) = parting_chars(&parts);
    let mut shown = show_value_keys(keys, &parts, &needed, &alike, max);
    // A value's own text can read as another's cut form (it may hold `… [truncated: 150
    // chars]` itself): such pairs are shown past where they part too. A cut form that met
    // another shares all it shows with it, so each round lengthens it past that; a few rounds
    // settle any list.
    for _ in 0..MAX_PARTING_ROUNDS {
        let mut first = std::collections::HashMap::new();
        let mut lengthened = false;
        for (i, text) in shown.iter().enumerate() {
            let j = *first.entry(text.as_str()).or_insert(i);
            if parts[i] != parts[j] {
                let shared = shared_chars(parts[i].1, parts[j].1) + 1;
                needed[i] = needed[i].max(shared);
                needed[j] = needed[j].max(shared);
                lengthened = true;
            }
        }
        if !lengthened {
            break;
        }
        shown = show_value_keys(keys, &parts, &needed, &alike, max);
    }
    shown
}

/// Rounds [`shorten_value_keys`] takes at most to part values that read alike across lengths.
const MAX_PARTING_ROUNDS: usize = 4;

/// Each of `keys` as [`shorten_value_keys`] shows it: cut at `max` characters, or a few past
/// `needed` where that is more; `parts` and `alike` as it found them.
fn show_value_keys(
    keys: &[&str],
    parts: &[(u64, &str)],
    needed: &[usize],
    alike: &[usize],
    max: usize,
) -> Vec<String> {
    keys.iter()
        .enumerate()
        .map(|(i, key)| {
            let (total, start) = parts[i];
            let long = start.len() < key.len();
            // Only a value that a cut at `max` would make look like another is shown longer.
            let shown =
                if needed[i] > max { needed[i].saturating_add(PAST_DIFFERENCE) } else { max };
            let cut = start.char_indices().nth(shown).map(|(at, _)| at);
            match (long, cut) {
                (false, None) => key.to_string(),
                (false, Some(cut)) => format!("{}{CUT_MARK}{total} chars]", &start[..cut]),
                (true, cut) => {
                    let shown_start = &start[..cut.unwrap_or(start.len())];
                    match alike[i] {
                        1 => format!("{shown_start}{CUT_MARK}{total} chars]"),
                        n => format!("{shown_start}{CUT_MARK}{total} chars; {n} {ALIKE_NOTE}]"),
                    }
                }
            }
        })
        .collect()
}

/// What follows the shown start of a cut value, before its length.
const CUT_MARK: &str = "… [truncated: ";

/// What a cut value's mark says when other listed values are alike in all that was kept.
const ALIKE_NOTE: &str = "listed values have this start and length";

/// [`shorten_value_keys`] over listed values of any type: strings shown as it shows them,
/// others as they are.
pub fn shorten_value_list<'a>(
    values: impl IntoIterator<Item = &'a Value>,
    max: usize,
) -> Vec<Value> {
    let values: Vec<&Value> = values.into_iter().collect();
    let strings: Vec<&str> = values.iter().filter_map(|v| v.as_str()).collect();
    let mut shown = shorten_value_keys(&strings, max).into_iter();
    values
        .into_iter()
        .map(|v| match v {
            Value::String(_) => shown.next().map_or_else(|| v.clone(), Value::String),
            other => other.clone(),
        })
        .collect()
}

/// For texts in groups (`(group, text)`; texts of different groups never look alike), how many
/// characters of each tell it from every other text of its group (its longest start shared with
/// one, plus one; 0 for a text alone in its group), and how many texts of its group are the same
/// text (itself included).
fn parting_chars(parts: &[(u64, &str)]) -> (Vec<usize>, Vec<usize>) {
    // The longest start a text shares with any other it shares with a neighbour in sorted order;
    // the same texts are taken as one (no cut tells them apart).
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| parts[a].cmp(&parts[b]));
    let runs: Vec<&[usize]> = order.chunk_by(|&a, &b| parts[a] == parts[b]).collect();
    let mut needed = vec![0usize; parts.len()];
    let mut alike = vec![1usize; parts.len()];
    for run in &runs {
        for &i in *run {
            alike[i] = run.len();
        }
    }
    for pair in runs.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if parts[a[0]].0 == parts[b[0]].0 {
            let shared = shared_chars(parts[a[0]].1, parts[b[0]].1) + 1;
            for &i in a.iter().chain(b) {
                needed[i] = needed[i].max(shared);
            }
        }
    }
    (needed, alike)
}

/// How many characters `a` and `b` share at their start.
fn shared_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
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
    match value {
        Value::String(s) => {
            let short = match s.char_indices().nth(max_chars) {
                Some((cut, _)) => format!("{}…", &s[..cut]),
                None => s.clone(),
            };
            inline_text(&short)
        }
        other => escape_controls(&other.to_string()),
    }
}

/// `text` quoted as [`inline`] shows a string.
fn inline_text(text: &str) -> String {
    // JSON escapes C0 controls but not bidi or other format controls.
    escape_controls(&serde_json::to_string(text).unwrap_or_default())
}

/// Values as [`inline`] shows each, but strings that a cut at `max_chars` would make look alike
/// shown a few characters past where they part, and values [`shorten_value_keys`] marked as
/// alike with others (the same text more than once in the list) keeping that mark.
pub fn inline_list(values: &[Value], max_chars: usize) -> Vec<String> {
    let texts: Vec<(u64, &str)> =
        values.iter().filter_map(|v| v.as_str()).map(|t| (0, t)).collect();
    let (needed, alike) = parting_chars(&texts);
    let mut parted = needed.into_iter().zip(alike);
    values
        .iter()
        .map(|v| match v {
            Value::String(text) => {
                let (needed, alike) = parted.next().unwrap_or((0, 1));
                let max = if needed > max_chars {
                    needed.saturating_add(PAST_DIFFERENCE)
                } else {
                    max_chars
                };
                inline_text(&cut_keeping_mark(text, max, alike > 1))
            }
            other => inline(other, max_chars),
        })
        .collect()
}

/// `text` cut to `max` characters and an ellipsis; but for a value listed `alike` with others,
/// its cut mark (which says so) kept whole after the cut start, or all of it where the cut
/// would fall inside the mark. Only the list knows a value is alike: a value's own text may end
/// as a mark does.
fn cut_keeping_mark(text: &str, max: usize, alike: bool) -> String {
    let Some((cut, _)) = text.char_indices().nth(max) else { return text.to_string() };
    match text.rfind(CUT_MARK).filter(|_| alike && text.ends_with(']')) {
        Some(at) if cut > at => text.to_string(),
        Some(at) => format!("{}{}", &text[..cut], &text[at..]),
        None => format!("{}…", &text[..cut]),
    }
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
    fn listed_values_that_differ_never_look_alike() {
        use crate::profile::value_key;
        let head = format!("{}{}", "é".repeat(60), "h".repeat(60));
        // Differ at character 130 (inside the kept start of a long value) and past byte 256.
        let (a, b) = (
            format!("{head}0123456789A{}", "z".repeat(300)),
            format!("{head}0123456789B{}", "z".repeat(300)),
        );
        let (c, d) = (format!("{a}tail-1"), format!("{a}tail-2"));
        // Two values kept whole, one length, apart only at character 121.
        let (plain, other_plain) = (format!("{head}!xxxxx"), format!("{head}?xxxxx"));
        let keys: Vec<String> = [&a, &b, &c, &d, &plain, &other_plain]
            .iter()
            .map(|v| value_key(v).into_owned())
            .collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let shown = shorten_value_keys(&keys, 100);
        // a and b show where they part: character 131 (0-based 130), and ten more.
        let cut = |s: &str| s.split('…').next().expect("start").chars().count();
        assert_eq!(cut(&shown[0]), 141, "{}", shown[0]);
        assert!(shown[0].contains("0123456789A") && shown[1].contains("0123456789B"));
        assert!(shown[0].ends_with("[truncated: 431 chars]"), "{}", shown[0]);
        // c and d differ only past the kept start and have one length: they say so.
        assert_eq!(shown[2], shown[3]);
        assert!(
            shown[2]
                .ends_with("[truncated: 437 chars; 2 listed values have this start and length]"),
            "{}",
            shown[2]
        );
        // Values a cut would have made look alike are shown whole when they are short enough.
        assert_eq!((&shown[4], &shown[5]), (&plain, &other_plain));
        // Every pair of different values is shown differently, but for the pair no cut can tell.
        for i in 0..6 {
            for j in i + 1..6 {
                assert!(shown[i] != shown[j] || (i, j) == (2, 3), "{i} {j}");
            }
        }
        // Values that a cut keeps apart are cut as before.
        let apart = shorten_value_keys(&[&"x".repeat(150), &"y".repeat(150)], 100);
        assert_eq!(apart[0], format!("{}… [truncated: 150 chars]", "x".repeat(100)));
        assert_eq!(apart[0], shorten_value_key(&"x".repeat(150), 100));
        // Shown whole when there is no limit, however alike.
        let whole = shorten_value_keys(&["ab", "abc"], usize::MAX);
        assert_eq!(whole, ["ab", "abc"]);
        // One listed value is shown as it was alone.
        let alone = format!("{}{}… [truncated: 431 chars]", "é".repeat(60), "h".repeat(40));
        assert_eq!(shorten_value_keys(&[keys[0]], 100), [alone]);
    }

    #[test]
    fn inline_lists_show_alike_strings_apart_and_the_same_string_alike() {
        let (a, b) = (format!("{}A tail", "x".repeat(50)), format!("{}B tail", "x".repeat(50)));
        let values = [json!(a), json!(b), json!(7), json!("short"), json!("short")];
        let shown = inline_list(&values, 40);
        assert_eq!(shown[0], format!("\"{}A tail\"", "x".repeat(50)));
        assert_eq!(shown[1], format!("\"{}B tail\"", "x".repeat(50)));
        assert_eq!(shown[2], "7");
        // The same text twice cannot be told apart: it is not lengthened for that.
        assert_eq!(shown[3..], ["\"short\"", "\"short\""]);
        let one = format!("{}A{}", "x".repeat(50), "t".repeat(60));
        let other = format!("{}B{}", "x".repeat(50), "t".repeat(60));
        let shown = inline_list(&[json!(one), json!(other)], 40);
        assert_eq!(shown[0], format!("\"{}A{}…\"", "x".repeat(50), "t".repeat(10)));
        assert_ne!(shown[0], shown[1]);
    }

    #[test]
    fn a_value_holding_a_cut_mark_never_reads_as_a_cut_value() {
        // The independent tester's case: a value whose own text is another's cut form, with a
        // partner of its length that has it shown whole.
        let cut_one = "x".repeat(150);
        let literal = format!("{}… [truncated: 150 chars]", "x".repeat(100));
        let partner = format!("{}}}", &literal[..literal.len() - 1]);
        let shown = shorten_value_keys(&[&cut_one, &literal, &partner], 100);
        assert_eq!(shown[1], literal);
        assert_ne!(shown[0], shown[1]);
        assert_eq!(shown[0], format!("{}… [truncated: 150 chars]", "x".repeat(111)));
        // Likewise against a value shown longer because of a third.
        let (a, b) = (
            format!("{}A{}", "y".repeat(119), "y".repeat(30)),
            format!("{}B{}", "y".repeat(119), "y".repeat(30)),
        );
        let shown_a = shorten_value_keys(&[&a, &b], 100).remove(0);
        let literal_a = shown_a.clone();
        let partner_a = format!("{}}}", &literal_a[..literal_a.len() - 1]);
        let shown = shorten_value_keys(&[&a, &b, &literal_a, &partner_a], 100);
        let distinct: std::collections::HashSet<&String> = shown.iter().collect();
        assert_eq!(distinct.len(), 4, "{shown:#?}");
    }

    #[test]
    fn inline_lists_keep_the_note_of_alike_values() {
        use crate::profile::value_key;
        let (x, y) = (
            format!("{}X{}", "a".repeat(256), "z".repeat(29)),
            format!("{}Y{}", "a".repeat(256), "z".repeat(29)),
        );
        let keys = [value_key(&x).into_owned(), value_key(&y).into_owned()];
        let listed: Vec<Value> = shorten_value_keys(&[&keys[0], &keys[1]], usize::MAX)
            .into_iter()
            .map(Value::String)
            .collect();
        let inline = inline_list(&listed, 40);
        let note = "… [truncated: 286 chars; 2 listed values have this start and length]";
        assert_eq!(inline[0], format!("\"{}{note}\"", "a".repeat(40)));
        assert_eq!(inline[0], inline[1]);
        // A value listed once is cut as any text, whatever it ends with (tester helper-70: its
        // own text ending as the note read as a group that is not there).
        let lone = format!("{}{note}", "q".repeat(60));
        let shown = inline_list(&[json!(lone), json!("c")], 40);
        assert_eq!(shown[0], format!("\"{}…\"", "q".repeat(40)));
        // Alike values cut inside their mark are shown whole.
        assert_eq!(
            cut_keeping_mark("abc… [truncated: 9 chars; 2 x]", 5, true),
            "abc… [truncated: 9 chars; 2 x]"
        );
    }

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
