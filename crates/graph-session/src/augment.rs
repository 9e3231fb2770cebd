//! Algorithm results written into the graph's items, under
//! `algorithmResults.<namespace>.<type>.<name>`: what the session serves after a run.
//!
//! A collection no result touches is served as loaded (the same `Arc`, so the caches built over
//! it stay valid). One that results touch is written by splicing each item's results into its
//! JSON text, and its profile is the loaded profile plus one profiled `algorithmResults` member:
//! an algorithm's run then costs its results, not a parse, a serialisation and a profile of every
//! item. Where splicing could differ from editing the parsed items (an item that is not an object,
//! one already holding `algorithmResults`, a profile near its path limit), every item is parsed,
//! edited and profiled again, as before; a test holds the two ways equal.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use schemascope_core::sync::lock;

use schemascope_core::collection::{ItemEntry, ItemId};
use schemascope_core::profile::ProfileLimits;
use schemascope_core::{
    Collection, CollectionProfile, EdgeEnds, ItemsOnUse, OwnedItem, ProfileBuilder, ProfileOnUse,
    SharedText,
};
use schemascope_sources::Source;
use serde_json::{Map, Value};

use crate::data::{RESULTS_ROOT, graph_collections};
use crate::error::GraphSessionError;
use crate::state::AlgorithmOutput;
use crate::style::ElementKind;

/// One algorithm's values for one element kind.
struct Written<'a> {
    output: &'a Arc<AlgorithmOutput>,
    namespace: &'a str,
    algorithm_type: &'a str,
    ids: &'a [String],
    columns: &'a [(String, Vec<Value>)],
}

/// Which row of an output's values each item of a loaded collection takes, per output and
/// element kind: the same for every version of the session's data over one loaded graph, so it
/// is found once per run, not once per run per later run.
#[derive(Debug, Default)]
pub(crate) struct RowsCache {
    rows: Mutex<HashMap<(usize, bool), CachedRows>>,
    /// Per element kind (nodes, edges): whether the loaded items' ids are all different.
    unique_ids: [std::sync::OnceLock<bool>; 2],
}

/// An output's rows, with the output itself (so the address keying it is not reused).
type CachedRows = (Arc<AlgorithmOutput>, Arc<[Option<u32>]>);

/// `base` with every output's columns written into its nodes' and edges' items.
pub(crate) fn augment(
    base: &Source,
    results: &BTreeMap<String, Arc<AlgorithmOutput>>,
    cache: &RowsCache,
) -> Result<Source, GraphSessionError> {
    // Rows of outputs no longer held are dropped.
    lock(&cache.rows).retain(|_, (output, _)| results.values().any(|r| Arc::ptr_eq(r, output)));
    let (nodes, edges) = graph_collections(base)?;
    let collections = base
        .collections
        .iter()
        .map(|c| {
            let kind = if Arc::ptr_eq(c, nodes) {
                ElementKind::Node
            } else if Arc::ptr_eq(c, edges) {
                ElementKind::Edge
            } else {
                return Ok(c.clone());
            };
            let written = written(results, kind);
            if written.is_empty() {
                return Ok(c.clone());
            }
            match spliced(c, &written, kind, cache) {
                Some(collection) => Ok(Arc::new(collection)),
                None => rebuilt(c, &written).map(Arc::new),
            }
        })
        .collect::<Result<Vec<_>, GraphSessionError>>()?;
    // SQL over this version of the items, algorithm results included (built when first used).
    let database = match &base.database {
        Some(db) => {
            schemascope_sources::sql::CollectionsDatabase::over(db.location(), &collections)
        }
        None => None,
    };
    Ok(Source {
        spec: base.spec.clone(),
        format: base.format,
        collections,
        warnings: base.warnings.clone(),
        path: base.path.clone(),
        bytes: base.bytes,
        database,
        aimdb: base.aimdb.clone(),
        direction: base.direction,
    })
}

/// The outputs with values for `kind`, in the results' order.
fn written(
    results: &BTreeMap<String, Arc<AlgorithmOutput>>,
    kind: ElementKind,
) -> Vec<Written<'_>> {
    written_from(results.values(), kind)
}

/// The outputs among `outputs` with values for `kind`, in their order.
fn written_from<'a>(
    outputs: impl Iterator<Item = &'a Arc<AlgorithmOutput>>,
    kind: ElementKind,
) -> Vec<Written<'a>> {
    outputs
        .map(|output| {
            let (ids, columns) = match kind {
                ElementKind::Node => (&output.node_ids, &output.node_columns),
                ElementKind::Edge => (&output.edge_ids, &output.edge_columns),
            };
            Written {
                output,
                namespace: &output.namespace,
                algorithm_type: &output.algorithm_type,
                ids,
                columns,
            }
        })
        .filter(|w| w.columns.iter().any(|(_, values)| !values.is_empty() && !w.ids.is_empty()))
        .collect()
}

/// For each output, the row of its values each item takes (the last row of the item's id, as
/// writing the rows in order into a map keeps the last), or `None` past its ids.
fn rows_of(
    collection: &Collection,
    written: &[Written<'_>],
    kind: ElementKind,
    cache: &RowsCache,
) -> Vec<Arc<[Option<u32>]>> {
    written
        .iter()
        .map(|w| {
            let key = (Arc::as_ptr(w.output) as usize, kind == ElementKind::Edge);
            if let Some((_, rows)) = lock(&cache.rows).get(&key) {
                return rows.clone();
            }
            let unique =
                cache.unique_ids[usize::from(kind == ElementKind::Edge)].get_or_init(|| {
                    let mut seen = std::collections::HashSet::with_capacity(collection.len());
                    collection.items().all(|item| seen.insert(item.id))
                });
            let rows: Arc<[Option<u32>]> = find_rows(collection, w.ids, *unique).into();
            lock(&cache.rows).insert(key, (w.output.clone(), rows.clone()));
            rows
        })
        .collect()
}

/// The row of `ids` each item of `collection` takes; `unique_items`: whether the items' ids
/// are all different (found once per loaded collection).
fn find_rows(collection: &Collection, ids: &[String], unique_items: bool) -> Vec<Option<u32>> {
    let aligned = ids.len() == collection.len()
        && collection.items().zip(ids).all(|(item, id)| item.id == id);
    // Aligned ids give row i to item i when no id repeats among them: ids equal to the items'
    // are all different when the items' are.
    if aligned && unique_items {
        return (0..ids.len()).map(|i| u32::try_from(i).ok()).collect();
    }
    let last: HashMap<&str, usize> =
        ids.iter().enumerate().map(|(row, id)| (id.as_str(), row)).collect();
    collection
        .items()
        .map(|item| last.get(item.id).and_then(|&row| u32::try_from(row).ok()))
        .collect()
}

/// The collection with results spliced into each item's text, its profile made on first use
/// (see [`SplicedProfile`]), or `None` where splicing could differ from [`rebuilt`].
fn spliced(
    collection: &Arc<Collection>,
    written: &[Written<'_>],
    kind: ElementKind,
    cache: &RowsCache,
) -> Option<Collection> {
    let loaded = collection.profile();
    let holds_results_root =
        loaded.root.children.iter().any(|c| c.profile.path.last_key() == Some(RESULTS_ROOT));
    if loaded.path_limit_hit || holds_results_root || loaded.root.items.is_some() {
        return None;
    }
    // Writing a name twice into one map keeps one member, where spliced text would repeat it;
    // a column shorter than its ids leaves members out, where spliced text would need a value.
    let irregular = written.iter().any(|w| {
        let mut names: Vec<&str> = w.columns.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names.windows(2).any(|p| p[0] == p[1])
            || w.columns.iter().any(|(_, values)| values.len() != w.ids.len())
    });
    if irregular {
        return None;
    }
    let rows = rows_of(collection, written, kind, cache);
    // Known before any text is written, so the text can wait until an item is read.
    if !collection.items().all(|item| item.json.starts_with('{') && item.json.ends_with('}')) {
        return None;
    }
    let first_written =
        (0..collection.len()).find(|&i| rows.iter().any(|r| r.get(i).copied().flatten().is_some()));
    let items = SplicedItems {
        loaded: collection.clone(),
        outputs: written.iter().map(|w| w.output.clone()).collect(),
        kind,
        keys: Keys::of(written),
        rows,
    };
    let on_use = SplicedProfile { loaded: collection.clone(), first_written };
    let spliced = Collection::with_items_on_use(
        collection.name(),
        collection.kind(),
        collection.len(),
        Box::new(items),
        Box::new(on_use),
    );
    // The same ends in the same order: the column is shared, not copied.
    Some(match collection.ends() {
        Some(ends) => spliced.with_ends(ends.clone()),
        None => spliced,
    })
}

/// What a spliced collection's items are made from when first read: a run's answer, the
/// session file and the next run need none of them, so a run does not write 100k items' text.
#[derive(Debug)]
struct SplicedItems {
    loaded: Arc<Collection>,
    outputs: Vec<Arc<AlgorithmOutput>>,
    kind: ElementKind,
    keys: Keys,
    rows: Vec<Arc<[Option<u32>]>>,
}

impl ItemsOnUse for SplicedItems {
    fn make(self: Box<Self>) -> (SharedText, Vec<ItemEntry>) {
        let written = written_from(self.outputs.iter(), self.kind);
        let collection = &self.loaded;
        // Bytes, so values are written by serde_json's writer rather than through `fmt`.
        let mut buffer: Vec<u8> = Vec::with_capacity(collection.len() * 64);
        let mut entries = Vec::with_capacity(collection.len());
        for (index, item) in collection.items().enumerate() {
            let json = item.json;
            let start = buffer.len();
            let open = &json[..json.len() - 1];
            buffer.extend_from_slice(open.as_bytes());
            let before = buffer.len();
            if open.trim_end() != "{" {
                buffer.push(b',');
            }
            if !write_results(&mut buffer, &written, &self.keys, &self.rows, index) {
                buffer.truncate(before);
            }
            buffer.push(b'}');
            entries.push(ItemEntry::new(ItemId::Owned(Box::default()), start..buffer.len()));
        }
        // The ids follow the items in the same text: one allocation, not one per item.
        for (entry, item) in entries.iter_mut().zip(collection.items()) {
            let start = buffer.len();
            buffer.extend_from_slice(item.id.as_bytes());
            entry.id = match u32::try_from(item.id.len()) {
                Ok(len) => ItemId::InText { start, len },
                Err(_) => ItemId::from(item.id),
            };
        }
        // Made of whole UTF-8 texts and serde_json's output, so always UTF-8.
        let buffer = String::from_utf8(buffer)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        (Arc::new(buffer.into()), entries)
    }
}

/// The JSON text of every member name results are written under, made once per augment.
#[derive(Debug)]
struct Keys {
    root: String,
    /// Per output: its namespace, its type, and its column names.
    outputs: Vec<(String, String, Vec<String>)>,
}

impl Keys {
    fn of(written: &[Written<'_>]) -> Self {
        let text = |key: &str| Value::String(key.to_string()).to_string();
        Keys {
            root: text(RESULTS_ROOT),
            outputs: written
                .iter()
                .map(|w| {
                    let names = w.columns.iter().map(|(name, _)| text(name)).collect();
                    (text(w.namespace), text(w.algorithm_type), names)
                })
                .collect(),
        }
    }
}

/// Writes `"algorithmResults":{"<namespace>":{"<type>":{"<name>":value,…},…},…}` for item
/// `index` and returns true, or writes nothing and returns false when no output has a row for it:
/// namespaces and types in first-written order, as a map written output by output holds them.
fn write_results(
    out: &mut Vec<u8>,
    written: &[Written<'_>],
    keys: &Keys,
    rows: &[Arc<[Option<u32>]>],
    index: usize,
) -> bool {
    let covering: Vec<(usize, usize)> = rows
        .iter()
        .enumerate()
        .filter_map(|(w, rows)| rows.get(index).copied().flatten().map(|row| (w, row as usize)))
        .collect();
    if covering.is_empty() {
        return false;
    }
    out.extend_from_slice(keys.root.as_bytes());
    out.extend_from_slice(b":{");
    let mut namespaces: Vec<&str> = Vec::new();
    for &(w, _) in &covering {
        if !namespaces.contains(&written[w].namespace) {
            namespaces.push(written[w].namespace);
        }
    }
    for (n, namespace) in namespaces.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let mut first_type = true;
        for &(w, row) in covering.iter().filter(|(w, _)| written[*w].namespace == *namespace) {
            let (namespace_key, type_key, names) = &keys.outputs[w];
            if first_type {
                out.extend_from_slice(namespace_key.as_bytes());
                out.extend_from_slice(b":{");
            } else {
                out.push(b',');
            }
            first_type = false;
            out.extend_from_slice(type_key.as_bytes());
            out.extend_from_slice(b":{");
            for (c, (name, (_, values))) in names.iter().zip(written[w].columns).enumerate() {
                if c > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(name.as_bytes());
                out.push(b':');
                // Every column is as long as its ids (`spliced` checked).
                let value = values.get(row).unwrap_or(&Value::Null);
                // Writing a Value into memory cannot fail.
                let _ = serde_json::to_writer(&mut *out, value);
            }
            out.push(b'}');
        }
        out.push(b'}');
    }
    out.push(b'}');
    true
}

/// The profile of a spliced collection: the loaded profile plus its `algorithmResults` member,
/// profiled from the spliced text alone, or where that could differ from profiling every item
/// (near the path limit), every item profiled.
#[derive(Debug)]
struct SplicedProfile {
    loaded: Arc<Collection>,
    /// The first item results were written into (none: the loaded profile stands).
    first_written: Option<usize>,
}

impl ProfileOnUse for SplicedProfile {
    fn compute(&self, spliced: &Collection) -> CollectionProfile {
        let loaded = self.loaded.profile();
        let Some(first) = self.first_written else { return loaded.clone() };
        let mut profiler = ProfileBuilder::new();
        let mut wrapped = String::new();
        for (item, was) in spliced.items().zip(self.loaded.items()) {
            // The spliced text is the loaded text with `,"algorithmResults":{…}` (or without the
            // comma, after `{`) put before its closing brace.
            let added = item.json.get(was.json.len() - 1..item.json.len() - 1).unwrap_or_default();
            let added = added.strip_prefix(',').unwrap_or(added);
            wrapped.clear();
            wrapped.push('{');
            wrapped.push_str(added);
            wrapped.push('}');
            if profiler.add_json(&wrapped).is_err() {
                return profile_items(spliced);
            }
        }
        let added = profiler.finish(spliced.len() as u64);
        keys_before(&self.loaded, first)
            .and_then(|before| extended(loaded, added, before))
            .unwrap_or_else(|| profile_items(spliced))
    }
}

/// Every item parsed and profiled, as [`Collection::from_values`] profiles them.
fn profile_items(collection: &Collection) -> CollectionProfile {
    let mut profiler = ProfileBuilder::new();
    for item in collection.items() {
        if let Ok(value) = collection.parse_item(&item) {
            profiler.add_value(&value);
        }
    }
    profiler.finish(collection.len() as u64)
}

/// How many distinct top-level members items `0..=last` hold: the loaded profile's first
/// members, as it lists them in first-seen order. `None` if an item's text is not an object.
fn keys_before(collection: &Collection, last: usize) -> Option<usize> {
    let mut keys = std::collections::HashSet::new();
    for item in collection.items().take(last + 1) {
        let members: HashMap<String, serde::de::IgnoredAny> =
            serde_json::from_str(item.json).ok()?;
        keys.extend(members.into_keys());
    }
    Some(keys.len())
}

/// `loaded` with the `algorithmResults` member profiled in `added`, listed after the `before`
/// members first seen up to the first item holding it (where a full profile would meet it), when
/// the two together stay under the path limit (else `None`: a full profile would have refused
/// some paths).
fn extended(
    loaded: &CollectionProfile,
    added: CollectionProfile,
    before: usize,
) -> Option<CollectionProfile> {
    if added.path_limit_hit || before > loaded.root.children.len() {
        return None;
    }
    let paths = loaded.root.walk().len() + added.root.walk().len();
    if paths >= ProfileLimits::default().max_paths {
        return None;
    }
    let mut profile = loaded.clone();
    let tail = profile.root.children.split_off(before);
    profile.root.children.extend(added.root.children);
    profile.root.children.extend(tail);
    Some(profile)
}

/// The collection with every item parsed, its results written in, and profiled again.
fn rebuilt(
    collection: &Collection,
    written: &[Written<'_>],
) -> Result<Collection, GraphSessionError> {
    // id -> [(namespace, type, name, value)]
    let mut by_id: HashMap<&str, Vec<(&str, &str, &str, &Value)>> = HashMap::new();
    for w in written {
        for (name, values) in w.columns {
            for (id, value) in w.ids.iter().zip(values) {
                by_id.entry(id.as_str()).or_default().push((
                    w.namespace,
                    w.algorithm_type,
                    name,
                    value,
                ));
            }
        }
    }
    let mut items = Vec::with_capacity(collection.len());
    for item in collection.items() {
        let mut value = collection.parse_item(&item)?;
        if let Some(entries) = by_id.get(item.id) {
            if value.is_null() {
                value = Value::Object(Map::new());
            }
            if let Value::Object(map) = &mut value {
                let root = map.entry(RESULTS_ROOT).or_insert_with(|| Value::Object(Map::new()));
                if !root.is_object() {
                    *root = Value::Object(Map::new());
                }
                for (namespace, algorithm, name, v) in entries {
                    let at = root.as_object_mut().map(|r| {
                        r.entry(namespace.to_string()).or_insert_with(|| Value::Object(Map::new()))
                    });
                    let at = at.and_then(Value::as_object_mut).map(|ns| {
                        ns.entry(algorithm.to_string()).or_insert_with(|| Value::Object(Map::new()))
                    });
                    if let Some(Value::Object(map)) = at {
                        map.insert(name.to_string(), (*v).clone());
                    }
                }
            }
        }
        let ends = item.ends.map(|e| EdgeEnds { source: e.source.into(), target: e.target.into() });
        items.push(OwnedItem { id: item.id.to_string(), value, ends, metadata: None });
    }
    Ok(Collection::from_values(collection.name(), collection.kind(), items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemascope_sources::{Format, SourceSpec, load_str};
    use serde_json::json;

    fn graph(text: serde_json::Value) -> Source {
        let spec: SourceSpec = "g=g.json".parse().expect("spec");
        load_str(&spec, "g.json", Some(Format::Graph), text.to_string()).expect("graph loads")
    }

    /// PageRank results for two nodes `a` and `b`.
    fn ranks_of_a_and_b() -> BTreeMap<String, Arc<AlgorithmOutput>> {
        let mut results = BTreeMap::new();
        results.insert(
            "schemascope.pagerank".into(),
            output(
                "schemascope",
                "pagerank",
                &["a", "b"],
                vec![("rank", vec![json!(0.5), json!(0.5)])],
            ),
        );
        results
    }

    fn output(
        namespace: &str,
        kind: &str,
        ids: &[&str],
        columns: Vec<(&str, Vec<Value>)>,
    ) -> Arc<AlgorithmOutput> {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let columns: Vec<(String, Vec<Value>)> =
            columns.into_iter().map(|(n, v)| (n.to_string(), v)).collect();
        Arc::new(AlgorithmOutput {
            namespace: namespace.into(),
            algorithm_type: kind.into(),
            node_ids: ids,
            node_columns: columns,
            ..AlgorithmOutput::default()
        })
    }

    /// Everything a tool can read of a collection: each item's id, text and ends, and the profile.
    /// One item as a tool reads it: id, JSON text, and ends.
    type Seen = (String, String, Option<(String, String)>);

    fn seen(collection: &Collection) -> (Vec<Seen>, String) {
        let items = collection
            .items()
            .map(|i| {
                let ends = i.ends.map(|e| (e.source.to_string(), e.target.to_string()));
                (i.id.to_string(), i.json.to_string(), ends)
            })
            .collect();
        (items, serde_json::to_string(collection.profile()).expect("profile serialises"))
    }

    /// Splices, and checks it against parsing and editing every item.
    fn check(source: &Source, results: &BTreeMap<String, Arc<AlgorithmOutput>>) -> Collection {
        let (nodes, _) = graph_collections(source).expect("a graph");
        let written = written(results, ElementKind::Node);
        let fast =
            spliced(nodes, &written, ElementKind::Node, &RowsCache::default()).expect("spliced");
        let slow = rebuilt(nodes, &written).expect("rebuilt");
        assert_eq!(seen(&fast), seen(&slow));
        fast
    }

    #[test]
    fn spliced_results_read_as_edited_items() {
        // Keys first seen after the first item, absent, null; nested data; a node without data.
        let source = graph(json!({"directed": true, "nodes": [
            {"id": "a", "data": {"x": 1}},
            {"id": "b", "data": {}},
            {"id": "c", "data": {"y": null, "x": 2.5, "deep": {"k": [1, {"z": "é\"\u{202e}"}]}}},
            {"id": 4},
            {"id": "e", "data": {"late": true}},
        ], "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]}));
        let mut results = BTreeMap::new();
        results.insert(
            "schemascope.pagerank".into(),
            output(
                "schemascope",
                "pagerank",
                &["a", "b", "c", "4", "e"],
                vec![
                    (
                        "rank",
                        vec![
                            json!(0.1),
                            json!(0.2),
                            json!(0.30000000000000004),
                            json!(1e-9),
                            json!(1e15),
                        ],
                    ),
                    ("rankPct", vec![json!(10), json!(20), json!(30), json!(0), json!(100)]),
                ],
            ),
        );
        check(&source, &results);
        // Only some nodes, in another order, with an id that is no node; a second namespace.
        results.insert(
            "other.tags".into(),
            output(
                "other",
                "tags",
                &["e", "zz", "c"],
                vec![("tag", vec![json!("x"), json!(null), json!([1, 2])])],
            ),
        );
        results.insert(
            "schemascope.degree".into(),
            output("schemascope", "degree", &["c"], vec![("degree", vec![json!(3)])]),
        );
        let fast = check(&source, &results);
        assert!(fast.item(2).expect("c").json.contains(r#""algorithmResults":{"other":{"tags":{"tag":[1,2]}},"schemascope":{"degree":{"degree":3},"pagerank""#));
        // Results first met on the last item, whose key the others lack.
        let mut late = BTreeMap::new();
        late.insert(
            "schemascope.x".into(),
            output("schemascope", "x", &["e"], vec![("v", vec![json!(1)])]),
        );
        check(&source, &late);
    }

    #[test]
    fn items_holding_results_already_are_edited() {
        let source = graph(json!({"nodes": [
            {"id": "a", "data": {"algorithmResults": {"mine": 1}}},
            {"id": "b", "data": {"algorithmResults": 7}},
        ], "edges": []}));
        let results = ranks_of_a_and_b();
        let (nodes, _) = graph_collections(&source).expect("a graph");
        assert!(
            spliced(
                nodes,
                &written(&results, ElementKind::Node),
                ElementKind::Node,
                &RowsCache::default()
            )
            .is_none()
        );
        let augmented = augment(&source, &results, &RowsCache::default()).expect("augmented");
        let (nodes, _) = graph_collections(&augmented).expect("a graph");
        assert_eq!(
            nodes.item(0).expect("a").json,
            r#"{"algorithmResults":{"mine":1,"schemascope":{"pagerank":{"rank":0.5}}}}"#
        );
    }

    #[test]
    fn collections_without_results_are_served_as_loaded() {
        let source = graph(
            json!({"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"}]}),
        );
        let results = ranks_of_a_and_b();
        let augmented = augment(&source, &results, &RowsCache::default()).expect("augmented");
        let (nodes, edges) = graph_collections(&source).expect("a graph");
        let (new_nodes, new_edges) = graph_collections(&augmented).expect("a graph");
        assert!(Arc::ptr_eq(edges, new_edges));
        assert!(!Arc::ptr_eq(nodes, new_nodes));
    }
}
