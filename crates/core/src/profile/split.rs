//! One JSON object split into the scalar members a loader takes out (a graph element's id and
//! ends) and the item it keeps, written as serde_json writes the parsed value and profiled, from
//! one scan of its text: a graph file's half-million edges then cost no parsed tree each and no
//! second pass through serde_json.
//!
//! Like the tape scanner it rests on, it *declines* what it does not handle — a taken member that
//! is not a string without escapes or an integer, a repeated key at any depth (a parsed object
//! keeps only the last), deep nesting, `data` that is not an object — and the caller then builds
//! the item the slow way, through a parsed value. For what it accepts, the text and the profile
//! are exactly what parsing, removing the members, `serde_json::to_string` and
//! [`ProfileBuilder::add_value`] give (tests compare the two).

use std::collections::HashSet;

use super::ProfileBuilder;
use super::accumulate::TapeWalk;
use super::tape::{self, Token};

/// Nesting past this many levels is declined: far below serde_json's recursion limit and the
/// depth at which items are cut for showing, so neither can differ.
const MAX_SPLIT_DEPTH: usize = 64;

/// Objects with more keys than this are checked for repeats through a set, not pairwise.
const PAIRWISE_KEYS: usize = 16;

/// A taken member's value: a string without escapes, or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// A string's content as written (it has no escapes, so it is also its value).
    Text(&'a str),
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
}

impl Scalar<'_> {
    /// Appends the scalar as an id's text: a string's value, an integer's digits (what
    /// `serde_json::Number::to_string` gives).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match *self {
            Self::Text(text) => out.extend_from_slice(text.as_bytes()),
            Self::Unsigned(v) => write_unsigned(v, out),
            Self::Signed(v) => write_signed(v, out),
        }
    }
}

/// Appends `v`'s decimal digits (as `to_string` writes them, without its allocation).
pub fn write_unsigned(mut v: u64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Appends `v` in decimal, with its sign.
fn write_signed(v: i64, out: &mut Vec<u8>) {
    if v < 0 {
        out.push(b'-');
    }
    write_unsigned(v.unsigned_abs(), out);
}

/// Which part of the object becomes the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemPart {
    /// The object without the taken members (a networkx node-link element).
    Rest,
    /// The object's `data` member, `{}` when it is absent or null; every other member is dropped
    /// (a graphty element).
    Data,
}

/// What [`ProfileBuilder::add_split`] took out of an object.
#[derive(Debug, Clone, Copy)]
pub struct Split<'a, const N: usize> {
    /// Each taken member, in the order asked; `None` when the object has no such member.
    pub taken: [Option<Scalar<'a>>; N],
    /// True when the object has a member neither taken nor named `data`.
    pub others: bool,
}

/// The members of an object's tape at `at`: each key and the index of its value's first token.
fn members<'t>(
    tape: &'t [Token],
    text: &'t str,
    at: usize,
) -> impl Iterator<Item = (&'t str, usize)> + 't {
    let end = match tape.get(at) {
        Some(Token::Object { end }) => *end as usize,
        _ => at + 1,
    };
    let mut i = at + 1;
    std::iter::from_fn(move || {
        if i >= end {
            return None;
        }
        let Some(&Token::Key { start, len }) = tape.get(i) else { return None };
        let key = text.get(start as usize..start as usize + len as usize).unwrap_or_default();
        let value = i + 1;
        i = tape::skip(tape, value);
        Some((key, value))
    })
}

/// True when no object in `tape[at..end]` repeats a key and nothing nests deeper than
/// [`MAX_SPLIT_DEPTH`] (`depth` is the nesting of the token at `at`).
fn plain(tape: &[Token], text: &str, at: usize, depth: usize) -> bool {
    match tape.get(at) {
        Some(Token::Object { .. }) => {
            if depth >= MAX_SPLIT_DEPTH {
                return false;
            }
            let keys: Vec<(&str, usize)> = members(tape, text, at).collect();
            let unique = if keys.len() <= PAIRWISE_KEYS {
                keys.iter().enumerate().all(|(i, (k, _))| keys[..i].iter().all(|(o, _)| o != k))
            } else {
                let mut seen = HashSet::with_capacity(keys.len());
                keys.iter().all(|(k, _)| seen.insert(*k))
            };
            unique && keys.iter().all(|&(_, value)| plain(tape, text, value, depth + 1))
        }
        Some(&Token::Array { end, .. }) => {
            if depth >= MAX_SPLIT_DEPTH {
                return false;
            }
            let mut i = at + 1;
            while i < end as usize {
                if !plain(tape, text, i, depth + 1) {
                    return false;
                }
                i = tape::skip(tape, i);
            }
            true
        }
        _ => true,
    }
}

/// Appends the value at `at` as serde_json writes it compactly; the index after it.
fn write(tape: &[Token], text: &str, unescaped: &str, at: usize, out: &mut Vec<u8>) -> usize {
    fn slice(source: &str, start: u32, len: u32) -> &[u8] {
        source.get(start as usize..start as usize + len as usize).unwrap_or_default().as_bytes()
    }
    let Some(&token) = tape.get(at) else { return at + 1 };
    match token {
        Token::Object { end } => {
            out.push(b'{');
            let mut i = at + 1;
            let mut first = true;
            while i < end as usize {
                let Some(&Token::Key { start, len }) = tape.get(i) else { break };
                if !first {
                    out.push(b',');
                }
                first = false;
                out.push(b'"');
                out.extend_from_slice(slice(text, start, len));
                out.extend_from_slice(b"\":");
                i = write(tape, text, unescaped, i + 1, out);
            }
            out.push(b'}');
            end as usize
        }
        Token::Array { end, .. } => {
            out.push(b'[');
            let mut i = at + 1;
            while i < end as usize {
                if i > at + 1 {
                    out.push(b',');
                }
                i = write(tape, text, unescaped, i, out);
            }
            out.push(b']');
            end as usize
        }
        // Keys and plain strings hold no escapes and no control characters: written as they are.
        Token::Key { start, len } | Token::Str { start, len } => {
            out.push(b'"');
            out.extend_from_slice(slice(text, start, len));
            out.push(b'"');
            at + 1
        }
        Token::Unescaped { start, len } => {
            let value = std::str::from_utf8(slice(unescaped, start, len)).unwrap_or_default();
            // Writing a string or a number into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, value);
            at + 1
        }
        Token::Unsigned(v) => {
            write_unsigned(v, out);
            at + 1
        }
        Token::Signed(v) => {
            write_signed(v, out);
            at + 1
        }
        Token::Float(v) => {
            let _ = serde_json::to_writer(&mut *out, &v);
            at + 1
        }
        Token::Bool(v) => {
            out.extend_from_slice(if v { b"true" } else { b"false" });
            at + 1
        }
        Token::Null => {
            out.extend_from_slice(b"null");
            at + 1
        }
    }
}

/// The tape of `{}`, walked for a graphty element without `data`.
const EMPTY_OBJECT: [Token; 1] = [Token::Object { end: 1 }];

impl ProfileBuilder {
    /// Splits the JSON object `json` (see the module docs): takes out the scalar members named
    /// in `take`, appends the item `part` names to `out` as serde_json writes it, and profiles
    /// that item. `None`, with nothing appended and nothing profiled, when the object is not
    /// one this handles (the caller then parses it).
    pub fn add_split<'a, const N: usize>(
        &mut self,
        json: &'a str,
        take: [&str; N],
        part: ItemPart,
        out: &mut Vec<u8>,
    ) -> Option<Split<'a, N>> {
        if !tape::scan(json, &mut self.tape, &mut self.unescaped) {
            return None;
        }
        let tape = &self.tape;
        if !matches!(tape.first(), Some(Token::Object { .. })) || !plain(tape, json, 0, 0) {
            return None;
        }
        let mut split = Split { taken: [None; N], others: false };
        let mut data = None;
        for (key, value) in members(tape, json, 0) {
            if let Some(slot) = take.iter().position(|t| *t == key) {
                split.taken[slot] = Some(match *tape.get(value)? {
                    Token::Str { start, len } => {
                        Scalar::Text(json.get(start as usize..start as usize + len as usize)?)
                    }
                    Token::Unsigned(v) => Scalar::Unsigned(v),
                    Token::Signed(v) => Scalar::Signed(v),
                    _ => return None,
                });
            } else if key == "data" {
                data = Some(value);
            } else {
                split.others = true;
            }
        }
        let data = match part {
            ItemPart::Rest => None,
            ItemPart::Data => match data.map(|at| (at, tape.get(at))) {
                None | Some((_, Some(Token::Null))) => Some(None),
                Some((at, Some(Token::Object { .. }))) => Some(Some(at)),
                Some(_) => return None,
            },
        };
        let unescaped = self.unescaped.as_str();
        let (walked, at, omit): (&[Token], usize, &[&str]) = match data {
            None => {
                // The object's own members, written without the taken ones.
                out.push(b'{');
                let mut first = true;
                for (key, value) in members(tape, json, 0) {
                    if take.contains(&key) {
                        continue;
                    }
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    out.push(b'"');
                    out.extend_from_slice(key.as_bytes());
                    out.extend_from_slice(b"\":");
                    write(tape, json, unescaped, value, out);
                }
                out.push(b'}');
                (tape, 0, &take[..])
            }
            Some(Some(at)) => {
                write(tape, json, unescaped, at, out);
                (tape, at, &[])
            }
            Some(None) => {
                out.extend_from_slice(b"{}");
                (&EMPTY_OBJECT, 0, &[])
            }
        };
        let mut walk = TapeWalk {
            tape: walked,
            text: json,
            unescaped,
            ctx: &mut self.ctx,
            want_id: false,
            omit,
        };
        walk.value(at, &mut self.root, 0, false);
        Some(split)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The slow way: parse, take the members out, serialise, profile the value.
    fn by_value<const N: usize>(
        json: &str,
        take: [&str; N],
        part: ItemPart,
    ) -> (String, [Option<String>; N], String) {
        let Value::Object(mut map) = serde_json::from_str(json).expect("an object") else {
            panic!("not an object")
        };
        let taken = take.map(|t| {
            map.shift_remove(t).map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            })
        });
        let item = match part {
            ItemPart::Rest => Value::Object(map),
            ItemPart::Data => match map.shift_remove("data") {
                None | Some(Value::Null) => Value::Object(Default::default()),
                Some(data) => data,
            },
        };
        let mut builder = ProfileBuilder::new();
        builder.add_value(&item);
        let profile = serde_json::to_string(&builder.finish(1)).expect("profile");
        (serde_json::to_string(&item).expect("item"), taken, profile)
    }

    fn by_split<const N: usize>(
        json: &str,
        take: [&str; N],
        part: ItemPart,
    ) -> Option<(String, [Option<String>; N], String)> {
        let mut builder = ProfileBuilder::new();
        let mut out = Vec::new();
        let split = builder.add_split(json, take, part, &mut out)?;
        let taken = split.taken.map(|s| {
            s.map(|s| {
                let mut id = Vec::new();
                s.write_to(&mut id);
                String::from_utf8(id).expect("utf-8")
            })
        });
        let profile = serde_json::to_string(&builder.finish(1)).expect("profile");
        Some((String::from_utf8(out).expect("utf-8"), taken, profile))
    }

    #[test]
    fn split_items_are_what_parsing_and_serialising_give() {
        let cases = [
            r#"{"id": 0, "group": "g7"}"#,
            r#"{"group":"g7","id":"n\u00e9"}"#,
            r#"{"id": -3, "w": 1.50, "big": 1e20, "tiny": 1.2345678901234567e-5, "z": -0.0}"#,
            r#"{ "id" : "a b", "s": "tab\there \"q\" \u00e9 \ud83d\ude00", "n": null, "t": true }"#,
            r#"{"id": 1, "nested": {"a": [1, [2, {"b": []}], {}], "c": {"d": "e"}}, "f": false}"#,
            r#"{"source": "a", "target": 7, "weight": 2, "id": "e1"}"#,
            r#"{"source": "a", "target": "b"}"#,
            r#"{"target": "b", "data": {"k": [1,2]}, "source": "a"}"#,
            r#"{"id": 5, "data": null}"#,
            r#"{"id": 5}"#,
            r#"{"id": "x", "data": {"label": "é", "deep": {"x": [null]}}, "extra": 1}"#,
            r#"{"id": 18446744073709551615, "big": 123456789012345678}"#,
        ];
        for json in cases {
            for part in [ItemPart::Rest, ItemPart::Data] {
                let take = ["id", "source", "target"];
                let (item, taken, profile) = by_value(json, take, part);
                let Some(fast) = by_split(json, take, part) else {
                    continue;
                };
                assert_eq!(fast, (item, taken, profile), "{json} as {part:?}");
            }
        }
    }

    #[test]
    fn what_it_cannot_split_exactly_is_declined() {
        let take = ["id", "source", "target"];
        let declined = [
            r#"[1, 2]"#,
            r#"{"id": 1.5}"#,
            r#"{"id": "\u0041"}"#,
            r#"{"id": true}"#,
            r#"{"id": {"a": 1}}"#,
            r#"{"id": 1, "a": 1, "a": 2}"#,
            r#"{"id": 1, "a": {"b": 1, "b": 2}}"#,
            r#"{"id": 1, "id": 2}"#,
            r#"{"id": 1"#,
        ];
        for json in declined {
            let mut builder = ProfileBuilder::new();
            let mut out = Vec::new();
            assert!(builder.add_split(json, take, ItemPart::Rest, &mut out).is_none(), "{json}");
            assert!(out.is_empty());
        }
        let mut out = Vec::new();
        let data_not_object = r#"{"id": 1, "data": [1]}"#;
        assert!(
            ProfileBuilder::new()
                .add_split(data_not_object, take, ItemPart::Data, &mut out)
                .is_none()
        );
        let deep = format!("{{\"id\": 1, \"d\": {}{}}}", "[".repeat(70), "]".repeat(70));
        assert!(ProfileBuilder::new().add_split(&deep, take, ItemPart::Rest, &mut out).is_none());
        let wide: String = (0..40).map(|k| format!(",\"k{}\": 1", k % 39)).collect();
        let wide = format!("{{\"id\": 1{wide}}}");
        assert!(ProfileBuilder::new().add_split(&wide, take, ItemPart::Rest, &mut out).is_none());
        assert!(out.is_empty());
    }

    #[test]
    fn integers_are_written_as_to_string_writes_them() {
        for v in [0, 7, 10, 99, 12_345, u64::MAX] {
            let mut out = Vec::new();
            write_unsigned(v, &mut out);
            assert_eq!(out, v.to_string().into_bytes());
        }
        for v in [0, -1, -10, 42, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            write_signed(v, &mut out);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    #[test]
    fn members_besides_the_taken_ones_and_data_are_reported() {
        let mut out = Vec::new();
        let mut builder = ProfileBuilder::new();
        let graphty =
            builder.add_split(r#"{"id": 1, "data": {}}"#, ["id"], ItemPart::Data, &mut out);
        assert!(!graphty.expect("split").others);
        let link = builder.add_split(r#"{"id": 1, "group": 2}"#, ["id"], ItemPart::Data, &mut out);
        assert!(link.expect("split").others);
    }
}
