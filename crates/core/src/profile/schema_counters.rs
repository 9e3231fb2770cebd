//! A schema-only pass: per path only what a JSON Schema is inferred from ([`SchemaFacts`]), read
//! by the same walks as a full profile, so items, limits and key order are read the same way.
//!
//! A full profile counts every distinct value, keeps every number and spills what outgrows its
//! budget; a schema needs none of it: the types, presence, the number range, whether a string
//! property has at most [`ENUM_MAX`] distinct short values (and which), and the format every
//! string has. So each path holds a bounded set of at most [`ENUM_MAX`] values (then none), its
//! smallest and largest number, and stops looking for a format once one string has none or
//! another. Memory grows with the paths, not with the values; nothing is spilled or estimated.
//! The finished result is [`SchemaFacts`], not a profile: what it does not hold cannot be read
//! from it as if it were known.

use serde_json::Value;

use super::accumulate::{self, Counters, Ctx, PathNode};
use super::exact::{F64_EXACT_INTEGER, NumberKey};
use super::formats::{self, StringFormat};
use super::tape::Token;
use super::{ProfileLimits, TypeCounts};
use crate::collection::ItemId;
use crate::json_schema::{ENUM_MAX, VALUES_MAX_CHARS};
use crate::schema_facts::{FactsNode, SchemaFacts, StringFacts};

/// The strings of a path that may still be listed as observed values.
#[derive(Debug)]
enum Listed {
    /// Every distinct string so far (at most [`ENUM_MAX`], none longer than
    /// [`VALUES_MAX_CHARS`] characters).
    Few(Vec<Box<str>>),
    /// More distinct strings than that, or a longer one: none will be listed.
    Unlisted,
}

impl Default for Listed {
    fn default() -> Self {
        Self::Few(Vec::new())
    }
}

/// The format the strings of a path share, as far as they were read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Shared {
    /// No string yet.
    #[default]
    Unread,
    /// Every string so far has this format.
    Every(StringFormat),
    /// Some string has none, or another: no format (and no more looking).
    Not,
}

impl Shared {
    fn and(self, other: Shared) -> Shared {
        match (self, other) {
            (Shared::Unread, x) | (x, Shared::Unread) => x,
            (Shared::Every(a), Shared::Every(b)) if a == b => self,
            _ => Shared::Not,
        }
    }
}

/// True when `value` is longer than [`VALUES_MAX_CHARS`] characters (counted only when its bytes
/// leave it open).
fn too_long(value: &str) -> bool {
    const MAX: usize = VALUES_MAX_CHARS as usize;
    value.len() > MAX && (value.len() > 4 * MAX || value.chars().count() > MAX)
}

/// The counters of one path in a schema-only pass.
#[derive(Debug, Default)]
pub(crate) struct SchemaCounters {
    present: u64,
    types: TypeCounts,
    depth_limited: u64,
    /// The smallest and largest number, exactly.
    range: Option<(NumberKey, NumberKey)>,
    listed: Listed,
    format: Shared,
}

impl SchemaCounters {
    fn add_key(&mut self, key: NumberKey) {
        self.range = Some(match self.range {
            None => (key, key),
            Some((low, high)) => (
                if key.order(low).is_lt() { key } else { low },
                if key.order(high).is_gt() { key } else { high },
            ),
        });
    }

    /// Adds `value` to the listed strings; true when it was listed already (its format then
    /// counted too).
    fn list(&mut self, value: &str) -> bool {
        let Listed::Few(values) = &mut self.listed else { return false };
        if values.iter().any(|v| **v == *value) {
            return true;
        }
        if values.len() as u64 >= ENUM_MAX || too_long(value) {
            self.listed = Listed::Unlisted;
        } else {
            values.push(value.into());
        }
        false
    }

    fn facts(self, node: PathNodeParts) -> FactsNode {
        let t = self.types;
        let strings = (t.string > 0).then(|| StringFacts {
            count: t.string,
            values: match self.listed {
                Listed::Few(values) => Some(values.into_iter().map(String::from).collect()),
                Listed::Unlisted => None,
            },
            format: match self.format {
                Shared::Every(format) => Some(format),
                Shared::Unread | Shared::Not => None,
            },
        });
        // An integer-only property shows its bounds as integers, as a profile's exact range does.
        let integers = t.number == 0;
        FactsNode {
            types: t,
            present: self.present,
            objects: t.object,
            range: self.range.map(|(low, high)| (low.to_json(integers), high.to_json(integers))),
            exact_text: false,
            strings,
            dropped_keys: node.dropped_keys,
            depth_limited: self.depth_limited,
            children: node.children,
            items: node.items,
        }
    }
}

/// What a node contributes to its facts besides its counters.
struct PathNodeParts {
    dropped_keys: u64,
    children: Vec<(String, FactsNode)>,
    items: Option<Box<FactsNode>>,
}

impl Counters for SchemaCounters {
    #[inline]
    fn add_object(&mut self) {
        self.present += 1;
        self.types.object += 1;
    }

    #[inline]
    fn add_depth_limited(&mut self) {
        self.depth_limited += 1;
    }

    fn add_str(&mut self, value: &str) {
        self.present += 1;
        self.types.string += 1;
        if self.list(value) || self.format == Shared::Not {
            return;
        }
        // The whole string, as a profile checks a long one before counting it under a shortened
        // key (a signed URL of a thousand characters is a `uri`).
        let found = formats::detect(value);
        self.format = self.format.and(found.map_or(Shared::Not, Shared::Every));
    }

    #[inline]
    fn add_number(&mut self, value: f64, integer: bool) {
        self.present += 1;
        if integer {
            self.types.integer += 1;
        } else {
            self.types.number += 1;
        }
        self.add_key(NumberKey::float(value));
    }

    #[inline]
    fn add_integer(&mut self, value: i128) {
        if value.abs() <= F64_EXACT_INTEGER {
            self.add_number(value as i64 as f64, true);
        } else {
            self.present += 1;
            self.types.integer += 1;
            self.add_key(NumberKey::integer(value));
        }
    }

    #[inline]
    fn add_bool(&mut self, _: bool) {
        self.present += 1;
        self.types.boolean += 1;
    }

    #[inline]
    fn add_null(&mut self) {
        self.present += 1;
        self.types.null += 1;
    }

    #[inline]
    fn add_array(&mut self, _: u64) {
        self.present += 1;
        self.types.array += 1;
    }

    fn present(&self) -> u64 {
        self.present
    }

    fn merge(&mut self, other: Self) {
        self.present += other.present;
        let (t, o) = (&mut self.types, other.types);
        t.string += o.string;
        t.integer += o.integer;
        t.number += o.number;
        t.boolean += o.boolean;
        t.array += o.array;
        t.object += o.object;
        t.null += o.null;
        self.depth_limited += other.depth_limited;
        if let Some((low, high)) = other.range {
            self.add_key(low);
            self.add_key(high);
        }
        self.format = self.format.and(other.format);
        match other.listed {
            Listed::Few(values) => {
                for value in values {
                    self.list(&value);
                }
            }
            Listed::Unlisted => self.listed = Listed::Unlisted,
        }
    }
}

/// Reads items into per-path schema counters, finished into [`SchemaFacts`]: a
/// [`super::ProfileBuilder`] for a caller that needs only a JSON Schema. It keeps per path the
/// types, presence, the number range, at most [`ENUM_MAX`] short strings and the format they
/// share; no distinct counts, no values, nothing spilled. Mergeable across threads like it.
#[derive(Debug)]
pub struct SchemaBuilder {
    root: PathNode<SchemaCounters>,
    ctx: Ctx,
    want_id: bool,
    /// The token tape of the item being read, kept to reuse its memory.
    tape: Vec<Token>,
    /// Its strings that had escapes, decoded.
    unescaped: String,
}

impl Default for SchemaBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SchemaBuilder {
    /// A builder with the default [`ProfileLimits`] (a profile's: the same paths are read).
    pub fn new() -> Self {
        Self::with_limits(ProfileLimits::default())
    }

    /// A builder with explicit limits.
    pub fn with_limits(limits: ProfileLimits) -> Self {
        Self {
            root: PathNode::default(),
            ctx: Ctx::new(limits),
            want_id: false,
            tape: Vec::new(),
            unescaped: String::new(),
        }
    }

    /// Makes [`SchemaBuilder::add_json_whole`] return each item's top-level scalar `id` member,
    /// as [`super::ProfileBuilder::capture_ids`] does.
    pub fn capture_ids(mut self) -> Self {
        self.want_id = true;
        self
    }

    /// Reads one item given as JSON text, leaving the counters untouched when it is not valid
    /// JSON; as [`super::ProfileBuilder::add_json_whole`], with the same errors.
    pub fn add_json_whole(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        let Self { root, ctx, tape, unescaped, want_id } = self;
        accumulate::add_json_whole(root, ctx, tape, unescaped, *want_id, json)
    }

    /// Reads one item given as a parsed value.
    pub fn add_value(&mut self, value: &Value) {
        accumulate::add_value(&mut self.root, &mut self.ctx, value);
    }

    /// Says where the next items lie, as [`super::ProfileBuilder::set_position`] does: paths
    /// are listed in the order a front-to-back read meets them, however blocks were split.
    pub fn set_position(&mut self, position: u64) {
        self.ctx.set_position(position);
    }

    /// Adds another builder's counts to this one.
    pub fn merge(&mut self, other: SchemaBuilder) {
        self.ctx.absorb(&other.ctx);
        self.root.merge(other.root, &mut self.ctx);
    }

    /// The facts of the items read. `item_count` is the number of items pushed.
    pub fn finish(self, item_count: u64) -> SchemaFacts {
        let (_, _, positioned) = self.ctx.outcome();
        let mut root = self.root;
        if positioned {
            root.order_by_first_seen();
        }
        SchemaFacts { item_count, root: facts(root) }
    }
}

/// The facts of `node` and everything below it (depth bounded by the profile's depth limit).
fn facts(node: PathNode<SchemaCounters>) -> FactsNode {
    let mut stats = node.stats;
    for other in node.deferred {
        stats.merge(other);
    }
    // The element node is made when an array opens; if every array was empty it saw nothing.
    let items = node.items.map(|i| facts(*i)).filter(|i| i.present > 0).map(Box::new);
    let children = node.keys.into_iter().map(|(key, child)| (key.into(), facts(child))).collect();
    stats.facts(PathNodeParts { dropped_keys: node.dropped_keys, children, items })
}
