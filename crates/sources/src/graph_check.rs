//! The first pass over a graph file's nodes and edges: the errors that fail a graph file — an
//! element that is not an object, an id or end missing or of the wrong type, a repeated node or
//! edge id, `data` that is not an object — are found here, in file order, reading only member
//! names and ids, before any node or edge is built. A file that fails so costs its text, one
//! pointer per element and a hash per id seen; building every element first (a parsed object
//! per node) took about 27 times the file before a repeated id at its start was reported.

use std::collections::HashMap;
use std::hash::BuildHasher as _;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{SourceError, position};

/// The members of one node or edge the checks read, each as its raw text; the last of a repeated
/// member counts, as when the element is parsed.
#[derive(Default)]
pub(crate) struct Members<'a> {
    pub id: Option<&'a RawValue>,
    pub source: Option<&'a RawValue>,
    pub target: Option<&'a RawValue>,
    pub data: Option<&'a RawValue>,
    /// A member other than `id` and `data` (a node-link attribute).
    pub other: bool,
    /// A member other than `id`, `data`, `source` and `target` (an edge's node-link attribute).
    pub attribute: bool,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Members::default();
                while let Some(key) = map.next_key::<String>()? {
                    let value: &'de RawValue = map.next_value()?;
                    match key.as_str() {
                        "id" => members.id = Some(value),
                        "data" => members.data = Some(value),
                        other => {
                            members.other = true;
                            match other {
                                "source" => members.source = Some(value),
                                "target" => members.target = Some(value),
                                _ => members.attribute = true,
                            }
                        }
                    }
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Read)
    }
}

/// The id text of a scalar id (a string, or a number as it is written back), else `None`.
pub(crate) fn scalar_text(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(text).ok(),
        b'-' | b'0'..=b'9' => {
            serde_json::from_str::<serde_json::Number>(text).ok().map(|n| n.to_string())
        }
        _ => None,
    }
}

/// True when `data` is absent, `null` or an object: what a graphty element's `data` may be.
pub(crate) fn data_is_object(data: Option<&RawValue>) -> bool {
    data.is_none_or(|d| d.get() == "null" || d.get().starts_with('{'))
}

/// The ids seen so far, kept as 64-bit hashes with the index of the element that had them: an
/// equal hash is confirmed against that element's id (re-read from its text), and ids whose
/// hash an earlier, different id had are kept whole.
pub(crate) struct SeenIds {
    hash: fn(&str) -> u64,
    first: HashMap<u64, usize, foldhash::fast::FixedState>,
    collided: HashMap<String, usize>,
}

fn id_hash(id: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5eed).hash_one(id)
}

impl SeenIds {
    /// No id seen yet.
    pub(crate) fn new() -> Self {
        Self { hash: id_hash, first: HashMap::default(), collided: HashMap::new() }
    }

    /// Records `id`, of element `index`; returns the index of the element that had it first when
    /// it is repeated. `id_of` gives the id of an earlier element.
    pub(crate) fn insert(
        &mut self,
        id: &str,
        index: usize,
        id_of: impl Fn(usize) -> Option<String>,
    ) -> Option<usize> {
        let hash = (self.hash)(id);
        match self.first.get(&hash) {
            None => {
                self.first.insert(hash, index);
                None
            }
            Some(&earlier) if id_of(earlier).as_deref() == Some(id) => Some(earlier),
            Some(_) => match self.collided.get(id) {
                Some(&earlier) => Some(earlier),
                None => {
                    self.collided.insert(id.to_string(), index);
                    None
                }
            },
        }
    }
}

/// How much of a wrong value a message quotes.
const QUOTED_CHARS: usize = 80;

/// A value's text as a message quotes it: at most [`QUOTED_CHARS`] characters.
pub(crate) fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `node #3 is not an object: …`.
pub(crate) fn not_object(kind: &str, index: usize) -> String {
    let needs = if kind == "node" { "at least an `id`" } else { "`source` and `target`" };
    format!("{kind} #{index} is not an object: each {kind} needs {needs}")
}

/// `edge #3 has no `source``.
pub(crate) fn missing(kind: &str, index: usize, member: &str) -> String {
    format!("{kind} #{index} has no `{member}`")
}

/// `node #3 has an `id` that is neither a string nor a number: {}`.
pub(crate) fn not_scalar(kind: &str, index: usize, member: &str, value: &str) -> String {
    let article = if member == "id" { "an" } else { "a" };
    format!(
        "{kind} #{index} has {article} `{member}` that is neither a string nor a number: {}",
        quoted(value)
    )
}

/// `node #3 has `data` that is not an object: 7`.
pub(crate) fn data_not_object(kind: &str, index: usize, value: &str) -> String {
    format!("{kind} #{index} has `data` that is not an object: {}", quoted(value))
}

/// `duplicate node id `a` (node #7; node #0 had it, at line 1)`.
pub(crate) fn repeated(kind: &str, id: &str, index: usize, earlier: usize, line: usize) -> String {
    format!(
        "duplicate {kind} id `{}` ({kind} #{index}; {kind} #{earlier} had it first, at line {line})",
        quoted(id)
    )
}

/// Where `raw`, a slice of `text`, starts in it.
pub(crate) fn offset_of(text: &str, raw: &RawValue) -> usize {
    (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Checks every node and edge of a graph file (see the module docs); `fail` makes the error at
/// a byte offset. Returns whether the file is graphty's (nodes carry only `id` and `data`).
pub(crate) fn check<'a>(
    text: &str,
    nodes: &[&'a RawValue],
    edges: &[&'a RawValue],
    fail: &dyn Fn(usize, String) -> SourceError,
) -> Result<bool, SourceError> {
    fn read<'r>(
        text: &str,
        kind: &str,
        index: usize,
        raw: &'r RawValue,
        fail: &dyn Fn(usize, String) -> SourceError,
    ) -> Result<Members<'r>, SourceError> {
        let offset = offset_of(text, raw);
        if !raw.get().starts_with('{') {
            return Err(fail(offset, not_object(kind, index)));
        }
        serde_json::from_str::<Members<'r>>(raw.get()).map_err(|e| fail(offset, e.to_string()))
    }
    let members = |kind: &str, index: usize, raw: &'a RawValue| read(text, kind, index, raw, fail);
    let scalar =
        |kind: &str, index: usize, raw: &RawValue, member: &str, value: Option<&RawValue>| {
            let offset = offset_of(text, raw);
            match value {
                None => Err(fail(offset, missing(kind, index, member))),
                Some(value) => scalar_text(value)
                    .ok_or_else(|| fail(offset, not_scalar(kind, index, member, value.get()))),
            }
        };
    let id_at = |elements: &[&RawValue], index: usize| {
        let raw = elements.get(index)?;
        serde_json::from_str::<Members<'_>>(raw.get()).ok()?.id.and_then(scalar_text)
    };
    let line_of = |elements: &[&RawValue], index: usize| {
        elements.get(index).map_or(0, |raw| position(text, offset_of(text, raw)).0)
    };

    let mut graphty = true;
    let mut data_not_object_at = None;
    let mut seen = SeenIds::new();
    for (index, raw) in nodes.iter().enumerate() {
        let node = members("node", index, raw)?;
        let id = scalar("node", index, raw, "id", node.id)?;
        if let Some(earlier) = seen.insert(&id, index, |i| id_at(nodes, i)) {
            let line = line_of(nodes, earlier);
            return Err(fail(offset_of(text, raw), repeated("node", &id, index, earlier, line)));
        }
        graphty &= !node.other;
        if data_not_object_at.is_none() && !data_is_object(node.data) {
            data_not_object_at = Some((index, node.data.map(RawValue::get).unwrap_or_default()));
        }
    }
    if graphty && let Some((index, data)) = data_not_object_at {
        let offset = nodes.get(index).map_or(0, |raw| offset_of(text, raw));
        return Err(fail(offset, data_not_object("node", index, data)));
    }
    drop(seen);
    // An edge with an attribute of its own (`weight`) makes the file node-link's even when no
    // node has one: graphty keeps an edge's data under `data` only.
    if graphty {
        for (index, raw) in edges.iter().enumerate() {
            if members("edge", index, raw)?.attribute {
                graphty = false;
                break;
            }
        }
    }

    let mut seen = SeenIds::new();
    for (index, raw) in edges.iter().enumerate() {
        let edge = members("edge", index, raw)?;
        scalar("edge", index, raw, "source", edge.source)?;
        scalar("edge", index, raw, "target", edge.target)?;
        let id = match edge.id {
            Some(_) => Some(scalar("edge", index, raw, "id", edge.id)?),
            None => None,
        };
        if graphty && !data_is_object(edge.data) {
            let data = edge.data.map(RawValue::get).unwrap_or_default();
            return Err(fail(offset_of(text, raw), data_not_object("edge", index, data)));
        }
        if let Some(id) = id
            && let Some(earlier) = seen.insert(&id, index, |i| id_at(edges, i))
        {
            let line = line_of(edges, earlier);
            return Err(fail(offset_of(text, raw), repeated("edge", &id, index, earlier, line)));
        }
    }
    Ok(graphty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_found_through_hash_collisions_too() {
        let ids = ["a", "b", "a", "c", "b", "a"];
        let found = |mut seen: SeenIds| -> Vec<Option<usize>> {
            ids.iter()
                .enumerate()
                .map(|(i, id)| seen.insert(id, i, |j| Some(ids[j].to_string())))
                .collect()
        };
        let expected = [None, None, Some(0), None, Some(1), Some(0)];
        assert_eq!(found(SeenIds::new()), expected);
        // Every id given the same hash: the whole ids decide.
        assert_eq!(found(SeenIds { hash: |_| 7, ..SeenIds::new() }), expected);
    }

    #[test]
    fn members_and_scalar_ids_are_read_as_the_parser_reads_them() {
        let members: Members<'_> = serde_json::from_str(
            r#"{"i\u0064": 7, "data": {"deep": [[[1]]]}, "id": 1.50, "x": 1}"#,
        )
        .expect("members");
        assert_eq!(members.id.map(|r| r.get()), Some("1.50"));
        assert!(members.other && members.data.is_some());
        let parsed: serde_json::Value = serde_json::from_str("1.50").expect("number");
        assert_eq!(members.id.and_then(scalar_text), Some(parsed.to_string()));
        let id = RawValue::from_string(r#""\u00e9""#.into()).expect("raw");
        assert_eq!(scalar_text(&id).as_deref(), Some("é"));
        let object = RawValue::from_string("{}".into()).expect("raw");
        assert_eq!(scalar_text(&object), None);
    }
}
