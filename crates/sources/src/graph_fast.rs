//! A graph file of the common shape, loaded in one scan of each element on all cores: each node
//! and edge split into its id (or ends) and its item, written into one text per collection,
//! profiled on the way, the edges' ends kept as node indices ([`EdgeEndsColumn`]).
//!
//! It gives up — and [`crate::graph`]'s reference path loads the file, parsing every element —
//! on anything it does not handle exactly as that path does: an element
//! [`ProfileBuilder::add_split`] declines, a missing or repeated id, edge ids that would need a
//! `~n` suffix, a profile that reached the path limit. Every file that fails to load fails there,
//! with its error. For what it accepts, the collections are the reference path's, item for item
//! and figure for figure (tests compare the two).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use schemascope_core::profile::split::{ItemPart, Scalar};
use schemascope_core::{
    Collection, CollectionKind, EdgeEndsColumn, ItemEntry, ItemId, ProfileBuilder, SharedText,
};
use serde_json::value::RawValue;

use crate::error::LoadWarning;
use crate::graph_check::offset_of;

/// Elements per task: large enough that a task's overhead vanishes, small enough that both
/// cores stay busy to the end.
const TASK_ELEMENTS: usize = 32_768;

/// The nodes and edges of a graph file, and the warnings loading them gave.
pub(crate) struct FastGraph {
    pub nodes: Collection,
    pub edges: Collection,
    pub warnings: Vec<LoadWarning>,
}

/// An end that names no node, in a [`Part`]'s ends: its name is in the part's `dangling`.
const DANGLING: u32 = u32::MAX;

/// What one task made of its share of the elements.
struct Part {
    /// The items' text, each element's id after its item.
    text: Vec<u8>,
    /// The items, spans in `text`; an edge without an id has an [`unnamed`] one until its id is
    /// generated.
    entries: Vec<ItemEntry>,
    /// For nodes: each id's value when it is a non-negative integer.
    numbers: Vec<Option<u64>>,
    /// For edges: each edge's source and target node, [`DANGLING`] for a name no node has.
    ends: Vec<[u32; 2]>,
    /// The names no node has: the edge (in the part), the side (0 source, 1 target), the name.
    dangling: Vec<(usize, usize, String)>,
    builder: ProfileBuilder,
    /// True when an element has members besides its taken ones and `data`.
    others: bool,
}

/// The id of an edge without one until it is generated: an `Owned` id, which no id written in
/// the text is.
fn unnamed() -> ItemId {
    ItemId::Owned(Box::default())
}

impl Part {
    fn new(capacity: usize) -> Self {
        Self {
            text: Vec::with_capacity(capacity * 8),
            entries: Vec::with_capacity(capacity),
            numbers: Vec::new(),
            ends: Vec::new(),
            dangling: Vec::new(),
            builder: ProfileBuilder::new(),
            others: false,
        }
    }

    /// Appends `scalar` as an id; the id, a span of `text`.
    fn id(&mut self, scalar: Scalar<'_>) -> Option<ItemId> {
        let start = self.text.len();
        scalar.write_to(&mut self.text);
        let len = u32::try_from(self.text.len() - start).ok()?;
        Some(ItemId::InText { start, len })
    }
}

/// The ranges `0..count` is cut into, one per task.
fn tasks(count: usize, task_elements: usize) -> Vec<Range<usize>> {
    let per_task = task_elements.max(1);
    (0..count.div_ceil(per_task)).map(|k| k * per_task..((k + 1) * per_task).min(count)).collect()
}

/// Runs `task` on every range on all cores; `None` when any task gave up.
fn run<T: Send>(
    ranges: &[Range<usize>],
    task: impl Fn(Range<usize>) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    schemascope_core::parallel::on_all_cores(ranges.len(), |k| task(ranges[k].clone()))
        .into_iter()
        .collect()
}

/// Splits the nodes in `range`; `positioned` when the profile is merged from several tasks.
fn node_part(
    nodes: &[&RawValue],
    range: Range<usize>,
    part: ItemPart,
    positioned: bool,
) -> Option<Part> {
    let mut out = Part::new(range.len());
    out.numbers.reserve(range.len());
    // The id before, as a span of the text: a file of one id repeated is given to the
    // reference path at its second node, before anything is built for the rest (see
    // `load_in_tasks`: any repeated id is reported there).
    let mut previous: Option<Range<usize>> = None;
    for index in range {
        if positioned {
            out.builder.set_position(index as u64);
        }
        let start = out.text.len();
        let split = out.builder.add_split(nodes[index].get(), ["id"], part, &mut out.text)?;
        let value = start..out.text.len();
        let id = split.taken[0]?;
        out.numbers.push(match id {
            Scalar::Unsigned(v) => Some(v),
            _ => None,
        });
        let written = out.text.len();
        let id = out.id(id)?;
        let span = written..out.text.len();
        if previous.as_ref().is_some_and(|p| out.text.get(p.clone()) == out.text.get(span.clone()))
        {
            return None;
        }
        previous = Some(span);
        out.entries.push(ItemEntry::new(id, value));
        out.others |= split.others;
    }
    Some(out)
}

/// Where each node id is: node `k` has id `k` (what networkx writes after
/// `convert_node_labels_to_integers`), every id is another integer, or some are names.
enum NodeIndex<'a> {
    Dense(u32),
    Numbers(HashMap<u64, u32, foldhash::quality::RandomState>),
    /// Node positions hashed by their id (a slot of 4 bytes, where a map of names would hold
    /// 24: a file of millions of short ids is held in a small multiple of itself).
    Names(NameIndex<'a>),
}

/// The id of entry `k` (empty past the end).
fn entry_id<'a>(entries: &'a [ItemEntry], text: &'a SharedText, k: u32) -> &'a str {
    entries.get(k as usize).map_or("", |e| e.id.resolve(text))
}

/// Node positions found by their id text, which stays in the nodes' entries.
struct NameIndex<'a> {
    table: hashbrown::HashTable<u32>,
    state: foldhash::quality::RandomState,
    entries: &'a [ItemEntry],
    text: &'a SharedText,
}

impl<'a> NameIndex<'a> {
    fn id(&self, k: u32) -> &'a str {
        entry_id(self.entries, self.text, k)
    }

    fn find(&self, name: &str) -> Option<u32> {
        let hash = std::hash::BuildHasher::hash_one(&self.state, name);
        self.table.find(hash, |&k| self.id(k) == name).copied()
    }

    /// The index of every entry's id; `None` when an id is repeated.
    fn of(entries: &'a [ItemEntry], text: &'a SharedText) -> Option<Self> {
        let mut index = Self {
            table: hashbrown::HashTable::with_capacity(entries.len()),
            state: Default::default(),
            entries,
            text,
        };
        for k in 0..u32::try_from(entries.len()).ok()? {
            let name = index.id(k);
            if index.find(name).is_some() {
                return None;
            }
            let hash = std::hash::BuildHasher::hash_one(&index.state, name);
            let (state, entries, text) = (&index.state, index.entries, index.text);
            index.table.insert_unique(hash, k, |&j| {
                std::hash::BuildHasher::hash_one(state, entry_id(entries, text, j))
            });
        }
        Some(index)
    }
}

impl NodeIndex<'_> {
    /// The node named `end`, if there is one.
    fn find(&self, end: Scalar<'_>) -> Option<u32> {
        let number = match end {
            Scalar::Unsigned(v) => Some(v),
            // A string of an integer's digits names the node with that integer id: ids are
            // compared as text.
            Scalar::Text(text) => canonical_integer(text),
            Scalar::Signed(_) => None,
        };
        match self {
            Self::Dense(count) => number.filter(|&v| v < u64::from(*count)).map(|v| v as u32),
            Self::Numbers(index) => number.and_then(|v| index.get(&v).copied()),
            Self::Names(index) => {
                let mut text = Vec::new();
                end.write_to(&mut text);
                std::str::from_utf8(&text).ok().and_then(|name| index.find(name))
            }
        }
    }
}

/// The integer `text` writes as `to_string` would write it, if it is one.
fn canonical_integer(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// Splits the edges in `range`, their ends looked up among the nodes.
fn edge_part(
    edges: &[&RawValue],
    range: Range<usize>,
    part: ItemPart,
    positioned: bool,
    node_index: &NodeIndex<'_>,
) -> Option<Part> {
    let mut out = Part::new(range.len());
    out.ends.reserve(range.len());
    for (local, index) in range.enumerate() {
        if positioned {
            out.builder.set_position(index as u64);
        }
        let start = out.text.len();
        let json = edges[index].get();
        let split = out.builder.add_split(json, ["source", "target", "id"], part, &mut out.text)?;
        let value = start..out.text.len();
        let [source, target, id] = split.taken;
        let mut ends = [DANGLING; 2];
        for (side, end) in [source?, target?].into_iter().enumerate() {
            match node_index.find(end) {
                Some(node) => ends[side] = node,
                None => {
                    let mut name = Vec::new();
                    end.write_to(&mut name);
                    out.dangling.push((local, side, String::from_utf8(name).ok()?));
                }
            }
        }
        out.ends.push(ends);
        let id = match id {
            Some(id) => out.id(id)?,
            None => unnamed(),
        };
        out.entries.push(ItemEntry::new(id, value));
        out.others |= split.others;
    }
    Some(out)
}

/// Whether `element` has members besides `taken` and `data` (false when there is none); `None`
/// when the fast path declines it.
fn has_others<const N: usize>(element: Option<&&RawValue>, taken: [&str; N]) -> Option<bool> {
    let Some(element) = element else { return Some(false) };
    let mut scratch = Vec::new();
    let split =
        ProfileBuilder::new().add_split(element.get(), taken, ItemPart::Rest, &mut scratch)?;
    Some(split.others)
}

/// The parts joined into one text, the spans moved to where their part landed.
struct Joined {
    text: Vec<u8>,
    entries: Vec<ItemEntry>,
    numbers: Vec<Option<u64>>,
    ends: Vec<[u32; 2]>,
    /// As in [`Part`], the edge counted in the whole file.
    dangling: Vec<(usize, usize, String)>,
    builder: ProfileBuilder,
}

fn join(parts: Vec<Part>) -> Joined {
    let total: usize = parts.iter().map(|p| p.text.len()).sum();
    let count: usize = parts.iter().map(|p| p.entries.len()).sum();
    let mut joined = Joined {
        text: Vec::with_capacity(total),
        entries: Vec::with_capacity(count),
        numbers: Vec::new(),
        ends: Vec::new(),
        dangling: Vec::new(),
        builder: ProfileBuilder::new(),
    };
    for (k, part) in parts.into_iter().enumerate() {
        let shift = joined.text.len();
        let before = joined.entries.len();
        joined.text.extend_from_slice(&part.text);
        joined.entries.extend(part.entries.into_iter().map(|entry| {
            let value = entry.value.start + shift..entry.value.end + shift;
            ItemEntry::new(entry.id.shifted(shift), value)
        }));
        joined.numbers.extend(part.numbers);
        joined.ends.extend(part.ends);
        joined.dangling.extend(part.dangling.into_iter().map(|(e, side, n)| (e + before, side, n)));
        if k == 0 {
            joined.builder = part.builder;
        } else {
            joined.builder.merge(part.builder);
        }
    }
    joined
}

/// Loads the graph the fast way (see the module docs); `None` when the reference path must.
pub(crate) fn load(
    text: &str,
    nodes: &[&RawValue],
    edges: &[&RawValue],
    dangling_named: usize,
) -> Option<FastGraph> {
    load_in_tasks(text, nodes, edges, dangling_named, TASK_ELEMENTS)
}

/// [`load`] with `task_elements` elements per task (tests use small tasks on small graphs).
pub(crate) fn load_in_tasks(
    text: &str,
    nodes: &[&RawValue],
    edges: &[&RawValue],
    dangling_named: usize,
    task_elements: usize,
) -> Option<FastGraph> {
    match load_shaped(text, nodes, edges, dangling_named, task_elements, false)? {
        Shaped::Loaded(graph) => Some(*graph),
        // Everything read in graphty's shape is freed before it is read again.
        Shaped::NodeLink => {
            match load_shaped(text, nodes, edges, dangling_named, task_elements, true)? {
                Shaped::Loaded(graph) => Some(*graph),
                Shaped::NodeLink => None,
            }
        }
    }
}

/// What [`load_shaped`] made of the file.
enum Shaped {
    Loaded(Box<FastGraph>),
    /// An edge had an attribute of its own: the file is node-link's, to be read again so.
    NodeLink,
}

/// [`load_in_tasks`], every element read as node-link's when `node_link` (an edge had an
/// attribute of its own, which graphty's shape would drop).
fn load_shaped(
    text: &str,
    nodes: &[&RawValue],
    edges: &[&RawValue],
    dangling_named: usize,
    task_elements: usize,
    node_link: bool,
) -> Option<Shaped> {
    // graphty's shape (nodes of `id` and `data` only, edges of `source`, `target`, `id` and
    // `data`) decides how every element is read; the first node and edge tell which to try,
    // and an element that says otherwise sends the file round again.
    let first_others = has_others(nodes.first(), ["id"])?
        || has_others(edges.first(), ["source", "target", "id"])?;
    let node_ranges = tasks(nodes.len(), task_elements);
    let positioned = node_ranges.len() > 1;
    let mut part = if first_others || node_link { ItemPart::Rest } else { ItemPart::Data };
    let mut node_parts = run(&node_ranges, |r| node_part(nodes, r, part, positioned))?;
    if part == ItemPart::Data && node_parts.iter().any(|p| p.others) {
        part = ItemPart::Rest;
        node_parts = run(&node_ranges, |r| node_part(nodes, r, part, positioned))?;
    }
    let mut node_joined = join(node_parts);
    let node_count = u32::try_from(node_joined.entries.len()).ok()?;
    if node_count == DANGLING {
        return None;
    }
    // Made of slices of UTF-8 text and serde_json's output.
    let node_text: SharedText = Arc::new(String::from_utf8(node_joined.text).ok()?.into());
    let node_id = |k: usize| node_joined.entries.get(k).map_or("", |e| e.id.resolve(&node_text));
    // Taken, so that the ids as numbers are freed as soon as they are indexed.
    let numbers: Option<Vec<u64>> = std::mem::take(&mut node_joined.numbers).into_iter().collect();
    let node_index = match numbers {
        Some(numbers) if numbers.iter().enumerate().all(|(k, &v)| v == k as u64) => {
            NodeIndex::Dense(node_count)
        }
        Some(numbers) => {
            let mut index = HashMap::with_capacity_and_hasher(numbers.len(), Default::default());
            for (k, v) in numbers.into_iter().enumerate() {
                if index.insert(v, k as u32).is_some() {
                    // A repeated node id: the reference path reports it.
                    return None;
                }
            }
            NodeIndex::Numbers(index)
        }
        // A repeated node id: the reference path reports it.
        None => NodeIndex::Names(NameIndex::of(&node_joined.entries, &node_text)?),
    };

    let edge_ranges = tasks(edges.len(), task_elements);
    let positioned = edge_ranges.len() > 1;
    let edge_parts = run(&edge_ranges, |r| edge_part(edges, r, part, positioned, &node_index))?;
    drop(node_index);
    if part == ItemPart::Data && edge_parts.iter().any(|p| p.others) {
        return Some(Shaped::NodeLink);
    }
    let mut edge_joined = join(edge_parts);

    // The table of end names: the node ids, then each name no node has, in order of appearance.
    let mut warnings = Vec::new();
    let mut dangling_names: Vec<&str> = Vec::new();
    let mut dangling_index: HashMap<&str, u32> = HashMap::new();
    let mut named = Vec::new();
    for (edge, side, name) in &edge_joined.dangling {
        if named.len() < dangling_named {
            let offset = edges.get(*edge).map_or(0, |raw| offset_of(text, raw));
            let (line, _) = crate::error::position(text, offset);
            let side = if *side == 0 { "source" } else { "target" };
            named.push(format!("edge #{edge} (line {line}) {side} `{name}`"));
        }
        let next = node_count.checked_add(u32::try_from(dangling_names.len()).ok()?)?;
        let index = *dangling_index.entry(name.as_str()).or_insert_with(|| {
            dangling_names.push(name);
            next
        });
        edge_joined.ends[*edge][*side] = index;
    }
    if !edge_joined.dangling.is_empty() {
        warnings.push(crate::graph::dangling_warning(edge_joined.dangling.len(), &named));
    }
    let names = || (0..node_count as usize).map(node_id).chain(dangling_names.iter().copied());
    let column = EdgeEndsColumn::new(names(), edge_joined.ends.iter().copied().map(Some))?;

    // Edges without an id get `source->target`, `#k` added for the k-th between the same ends.
    let explicit = edge_joined.entries.iter().any(|e| matches!(e.id, ItemId::InText { .. }));
    let occurrences = occurrences(&edge_joined.ends);
    let mut edge_text = edge_joined.text;
    for (index, entry) in edge_joined.entries.iter_mut().enumerate() {
        if matches!(entry.id, ItemId::InText { .. }) {
            continue;
        }
        let [source, target] = column.indices(index)?;
        let start = edge_text.len();
        edge_text.extend_from_slice(column.name(source)?.as_bytes());
        edge_text.extend_from_slice(b"->");
        edge_text.extend_from_slice(column.name(target)?.as_bytes());
        if let Some(&k) = occurrences.get(index).filter(|&&k| k > 1) {
            edge_text.push(b'#');
            schemascope_core::profile::split::write_unsigned(u64::from(k), &mut edge_text);
        }
        let len = u32::try_from(edge_text.len() - start).ok()?;
        entry.id = ItemId::InText { start, len };
    }
    let edge_text = String::from_utf8(edge_text).ok()?;
    // Generated ids are different from each other when no name holds `->` or `#` (the id then
    // tells its ends and its `#k` apart); otherwise, or with ids in the file, they are checked,
    // and a file where two would be equal is left to the reference path's `~n` suffixes.
    let plain_names = names().all(|n| !n.contains("->") && !n.contains('#'));
    if explicit || !plain_names {
        let mut seen: HashSet<&str, foldhash::quality::RandomState> =
            HashSet::with_capacity_and_hasher(edge_joined.entries.len(), Default::default());
        if !edge_joined.entries.iter().all(|e| seen.insert(e.id.resolve(&edge_text))) {
            return None;
        }
    }

    let node_profile = node_joined.builder.finish(u64::from(node_count));
    let edge_profile = edge_joined.builder.finish(edge_joined.entries.len() as u64);
    if node_profile.path_limit_hit || edge_profile.path_limit_hit {
        // Which keys a limit refuses depends on the order builders meet them.
        return None;
    }
    let nodes = Collection::new(
        "nodes",
        CollectionKind::Nodes,
        node_text.clone(),
        node_joined.entries,
        node_profile,
    );
    let edges = Collection::new(
        "edges",
        CollectionKind::Edges,
        Arc::new(edge_text.into()),
        edge_joined.entries,
        edge_profile,
    )
    .with_ends(Arc::new(column));
    Some(Shaped::Loaded(Box::new(FastGraph { nodes, edges, warnings })))
}

/// For each edge, how many edges between the same ends come before it, itself included.
fn occurrences(ends: &[[u32; 2]]) -> Vec<u32> {
    let key = |e: &[u32; 2]| (u64::from(e[0]) << 32) | u64::from(e[1]);
    let mut sorted: Vec<u64> = ends.iter().map(key).collect();
    sorted.sort_unstable();
    let repeated: HashSet<u64> = sorted.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    if repeated.is_empty() {
        return Vec::new();
    }
    let mut seen: HashMap<u64, u32> = HashMap::with_capacity(repeated.len());
    ends.iter()
        .map(|e| {
            let k = key(e);
            if repeated.contains(&k) {
                let n = seen.entry(k).or_insert(0);
                *n += 1;
                *n
            } else {
                1
            }
        })
        .collect()
}
