//! What a JSON Schema is inferred from: per path, the few facts [`crate::json_schema`] reads —
//! types, presence, the observed number range, the few strings, a format — and nothing else.
//!
//! Two things make them: a full profile ([`SchemaFacts::of_profile`], what a served source's
//! query_schema reads) and a schema-only pass over a file ([`crate::profile::SchemaBuilder`],
//! which counts no distinct values past [`ENUM_MAX`] and keeps no medians, histograms or spills).
//! Being a type of their own, the facts cannot be taken for a profile: no figure they do not
//! hold can be read from them as if it were known.

use serde_json::Value;

use crate::json_schema::{ENUM_MAX, VALUES_MAX_CHARS};
use crate::profile::{CollectionProfile, NumberProfile, ProfileNode, StringFormat, TypeCounts};

/// The facts of a whole collection.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaFacts {
    /// Items read.
    pub item_count: u64,
    /// The items themselves (path `@`), with every path below.
    pub root: FactsNode,
}

/// The facts of one path and its children: object members in first-seen order, array elements
/// as `items`.
#[derive(Debug, Clone, PartialEq)]
pub struct FactsNode {
    /// Values per JSON type.
    pub types: TypeCounts,
    /// Units where the key occurs, nulls included (what `required` compares with the parent's
    /// `objects`).
    pub present: u64,
    /// Objects seen here.
    pub objects: u64,
    /// The smallest and largest number, as JSON (exact for integers; a bound known only as a
    /// double is rounded outwards), when numbers occur.
    pub range: Option<(Value, Value)>,
    /// True when some numbers came as their exact text (no JSON number holds them exactly).
    pub exact_text: bool,
    /// What is known of the strings, when strings occur.
    pub strings: Option<StringFacts>,
    /// Members not read because the path limit was reached.
    pub dropped_keys: u64,
    /// Objects and arrays nested past the depth limit.
    pub depth_limited: u64,
    /// Object members, by key.
    pub children: Vec<(String, FactsNode)>,
    /// Array elements.
    pub items: Option<Box<FactsNode>>,
}

/// What a schema needs of the strings at a path.
#[derive(Debug, Clone, PartialEq)]
pub struct StringFacts {
    /// Number of strings.
    pub count: u64,
    /// Every distinct string, exactly, when there are at most [`ENUM_MAX`] of them and none is
    /// longer than [`VALUES_MAX_CHARS`] characters; `None` otherwise (or when not known exactly).
    pub values: Option<Vec<String>>,
    /// The format every string has, if any.
    pub format: Option<StringFormat>,
}

impl SchemaFacts {
    /// The facts a full profile holds.
    pub fn of_profile(profile: &CollectionProfile) -> Self {
        Self { item_count: profile.item_count, root: node_of(&profile.root) }
    }
}

fn node_of(node: &ProfileNode) -> FactsNode {
    let p = &node.profile;
    let strings = p.strings.as_ref().map(|s| {
        // The profile keys strings past 256 bytes by a shortened form; 64 characters are at most
        // 256 bytes, so no listed value was shortened. An estimated distinct count proves
        // nothing about a list being complete.
        let listed = s.max_length <= VALUES_MAX_CHARS
            && p.approximate.is_none()
            && s.distinct <= ENUM_MAX
            && (s.top.len() as u64) == s.distinct;
        StringFacts {
            count: s.count,
            values: listed.then(|| {
                s.top.iter().filter_map(|v| v.value.as_str().map(str::to_string)).collect()
            }),
            format: s.format,
        }
    });
    FactsNode {
        types: p.types,
        present: p.present,
        objects: p.objects,
        range: p.numbers.as_ref().map(range_of),
        exact_text: p.numbers.as_ref().is_some_and(|n| n.exact_text_count > 0),
        strings,
        dropped_keys: p.dropped_keys,
        depth_limited: p.depth_limited,
        children: node
            .children
            .iter()
            .filter_map(|c| Some((c.profile.path.last_key()?.to_string(), node_of(c))))
            .collect(),
        items: node.items.as_deref().map(|i| Box::new(node_of(i))),
    }
}

/// Which way an observed bound that is not exactly representable is rounded.
#[derive(Clone, Copy)]
enum Round {
    Down,
    Up,
}

/// The observed bounds of `numbers` as JSON. Integers are known exactly (JSON carries the whole
/// i64 and u64 ranges); only a bound known as a double alone is rounded outwards.
fn range_of(numbers: &NumberProfile) -> (Value, Value) {
    let integer = numbers.all_integers();
    let exact = numbers.exact_range.map(|_| (numbers.min_value(), numbers.max_value()));
    exact.unwrap_or_else(|| {
        (number(numbers.min, integer, Round::Down), number(numbers.max, integer, Round::Up))
    })
}

/// An observed bound as JSON: an integer when every value was one and the bound is exact in an
/// `f64`; past 2^53 the nearest float rounded outwards, so the observed values stay inside it.
fn number(v: f64, integer: bool, round: Round) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if integer && v.fract() == 0.0 && v.abs() < EXACT {
        return serde_json::json!(v as i64);
    }
    let v = if integer && v.abs() >= EXACT && v.is_finite() {
        match round {
            Round::Down => v.next_down(),
            Round::Up => v.next_up(),
        }
    } else {
        v
    };
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}
