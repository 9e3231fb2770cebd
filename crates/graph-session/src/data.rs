//! The data a session works on: the loaded graph with every algorithm's results written into its
//! items under `algorithmResults.<namespace>.<type>.<name>`, so one selector root — the item's
//! data plus `algorithmResults` — serves counting, styling and rendering, and describe_schema
//! sees the new properties. Selector matches, the property columns fast selectors read (see
//! `schemascope_core::selector::columns`) and parsed items are cached per data version.

use schemascope_core::sync::lock;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use std::sync::atomic::Ordering::Relaxed;

use crate::mapping::{self, Resolved, StyleMapping, value_at};
use crate::style::{ElementKind, StyleRule};
use schemascope_core::path::{PropertyPath, Segment};
use schemascope_core::selector::columns::{FieldPath, PathColumn};
use schemascope_core::selector::{Halt, Selector, Unevaluated, Verdict};
use schemascope_core::{Collection, CollectionKind};
use schemascope_graph::GraphData;
use schemascope_sources::Source;
use serde_json::Value;

use crate::error::GraphSessionError;
use crate::state::AlgorithmOutput;

/// The property every algorithm writes under.
pub const RESULTS_ROOT: &str = "algorithmResults";

/// A selector's matches over one element kind, in item order.
pub type Matches = Arc<Vec<bool>>;

/// The session's graph: the source as loaded (`base`) and with algorithm results (`source`).
#[derive(Debug)]
pub struct SessionData {
    /// The source as loaded from its file.
    pub base: Arc<Source>,
    /// The source with algorithm results; this is the one the sources serve.
    pub source: Arc<Source>,
    nodes: Arc<Collection>,
    edges: Arc<Collection>,
    graph: OnceLock<Arc<GraphData>>,
    directed_graph: OnceLock<Arc<GraphData>>,
    fingerprint: OnceLock<String>,
    parsed: [OnceLock<Arc<[Option<Value>]>>; 2],
    indexes: [OnceLock<Arc<HashMap<String, usize>>>; 2],
    matches: Mutex<HashMap<(usize, String), Matches>>,
    /// Per selector: the elements it could not be evaluated on (they do not match).
    unevaluated: Mutex<HashMap<(usize, String), Unevaluated>>,
    columns: Mutex<HashMap<(usize, FieldPath), Arc<PathColumn>>>,
    /// Per mapping (as JSON): resolved over this version's values.
    mapped: Mutex<HashMap<(usize, String), Arc<Mapped>>>,
    /// Where each output's values go among the loaded items, shared by every version.
    rows: Arc<crate::augment::RowsCache>,
}

fn slot(kind: ElementKind) -> usize {
    match kind {
        ElementKind::Node => 0,
        ElementKind::Edge => 1,
    }
}

/// Checks that `source` is a graph and returns its nodes and edges.
pub fn graph_collections(
    source: &Source,
) -> Result<(&Arc<Collection>, &Arc<Collection>), GraphSessionError> {
    let nodes = source.collections.iter().find(|c| c.kind() == CollectionKind::Nodes);
    let edges = source.collections.iter().find(|c| c.kind() == CollectionKind::Edges);
    match (nodes, edges) {
        (Some(nodes), Some(edges)) => Ok((nodes, edges)),
        _ => Err(GraphSessionError::InvalidParams(format!(
            "source `{}` is not a graph (its collections: {}); graph tools need a graph file with nodes and edges",
            source.name(),
            source.collection_names().join(", ")
        ))),
    }
}

impl SessionData {
    /// The session data for `base` with `results` written into its items.
    pub fn new(
        base: Arc<Source>,
        results: &BTreeMap<String, Arc<AlgorithmOutput>>,
    ) -> Result<Self, GraphSessionError> {
        Self::with_rows(base, results, Arc::default())
    }

    fn with_rows(
        base: Arc<Source>,
        results: &BTreeMap<String, Arc<AlgorithmOutput>>,
        rows: Arc<crate::augment::RowsCache>,
    ) -> Result<Self, GraphSessionError> {
        graph_collections(&base)?;
        let source = if results.is_empty() {
            base.clone()
        } else {
            Arc::new(crate::augment::augment(&base, results, &rows)?)
        };
        let (nodes, edges) = graph_collections(&source).map(|(n, e)| (n.clone(), e.clone()))?;
        Ok(Self {
            base,
            source,
            nodes,
            edges,
            graph: OnceLock::new(),
            directed_graph: OnceLock::new(),
            fingerprint: OnceLock::new(),
            parsed: [OnceLock::new(), OnceLock::new()],
            indexes: [OnceLock::new(), OnceLock::new()],
            matches: Mutex::new(HashMap::new()),
            unevaluated: Mutex::new(HashMap::new()),
            columns: Mutex::new(HashMap::new()),
            mapped: Mutex::new(HashMap::new()),
            rows,
        })
    }

    /// The nodes or edges, with algorithm results.
    pub fn collection(&self, kind: ElementKind) -> &Arc<Collection> {
        match kind {
            ElementKind::Node => &self.nodes,
            ElementKind::Edge => &self.edges,
        }
    }

    /// The unweighted, undirected graph (layouts; algorithms with other options build their own).
    pub fn graph(&self) -> Arc<GraphData> {
        self.graph.get_or_init(|| Arc::new(self.build_graph(None, false))).clone()
    }

    /// The unweighted graph, directed or not as asked (both kept once built).
    pub fn graph_as(&self, directed: bool) -> Arc<GraphData> {
        if directed {
            self.directed_graph.get_or_init(|| Arc::new(self.build_graph(None, true))).clone()
        } else {
            self.graph()
        }
    }

    /// The loaded data's fingerprint (`reconcile::data_fingerprint`), computed once.
    pub fn fingerprint(&self) -> Result<String, GraphSessionError> {
        if let Some(known) = self.fingerprint.get() {
            return Ok(known.clone());
        }
        let computed = crate::reconcile::data_fingerprint(&self.base)?;
        Ok(self.fingerprint.get_or_init(|| computed).clone())
    }

    /// Records the fingerprint computed by the caller from the same base.
    pub(crate) fn know_fingerprint(&self, fingerprint: String) {
        let _ = self.fingerprint.set(fingerprint);
    }

    /// The same data with other algorithm results: keeps what does not depend on them — the
    /// fingerprint, the graphs (the same nodes and edges in the same order), the id indexes —
    /// and every cache of a collection the results left as it was, so a run does not pay for
    /// rebuilding them.
    pub fn with_results(
        &self,
        results: &BTreeMap<String, Arc<AlgorithmOutput>>,
    ) -> Result<Self, GraphSessionError> {
        let next = Self::with_rows(self.base.clone(), results, self.rows.clone())?;
        keep(&self.fingerprint, &next.fingerprint);
        keep(&self.graph, &next.graph);
        keep(&self.directed_graph, &next.directed_graph);
        for kind in [ElementKind::Node, ElementKind::Edge] {
            let s = slot(kind);
            keep(&self.indexes[s], &next.indexes[s]);
            if !Arc::ptr_eq(self.collection(kind), next.collection(kind)) {
                continue;
            }
            keep(&self.parsed[s], &next.parsed[s]);
            carry(&self.matches, &next.matches, s);
            carry(&self.unevaluated, &next.unevaluated, s);
            carry(&self.columns, &next.columns, s);
        }
        Ok(next)
    }

    /// Whether the file's edges have a direction and what decided it (a graph source without
    /// that knowledge reads as undirected, said so by its basis).
    pub fn direction(&self) -> Option<schemascope_sources::GraphDirection> {
        self.base.direction
    }

    /// Builds the graph with edge weights from the edge property `weight` (default 1) and direction.
    pub fn build_graph(&self, weight: Option<&str>, directed: bool) -> GraphData {
        let nodes = self.collection(ElementKind::Node);
        let edges = self.collection(ElementKind::Edge);
        let weight_path: Option<Vec<&str>> = weight.map(|w| w.split('.').collect());
        let triples = edges.items().filter_map(|item| {
            let ends = item.ends?;
            let w = match &weight_path {
                Some(path) => item
                    .value()
                    .ok()
                    .and_then(|v| path.iter().try_fold(v, |v, key| v.get(key).cloned()))
                    .and_then(|v| v.as_f64())
                    .unwrap_or(1.0),
                None => 1.0,
            };
            Some((ends.source, ends.target, w))
        });
        GraphData::build(nodes.items().map(|i| i.id.to_string()), triples, directed)
    }

    /// The position of every id of `kind` in its collection.
    pub fn id_index(&self, kind: ElementKind) -> &HashMap<String, usize> {
        self.indexes[slot(kind)].get_or_init(|| {
            Arc::new(self.collection(kind).items().map(|i| (i.id.to_string(), i.index)).collect())
        })
    }

    /// Each element's data parsed (item order; `None` where its text does not parse); cached.
    pub fn parsed_items(&self, kind: ElementKind) -> &[Option<Value>] {
        self.parsed(kind)
    }

    fn parsed(&self, kind: ElementKind) -> &[Option<Value>] {
        self.parsed[slot(kind)].get_or_init(|| {
            let collection = self.collection(kind);
            parallel_map(collection.len(), |i| {
                collection.item(i).and_then(|item| item.value().ok())
            })
            .into()
        })
    }

    /// Which elements of `kind` match `selector` (empty matches all); cached per selector.
    pub fn matches(&self, kind: ElementKind, selector: &str) -> Result<Matches, GraphSessionError> {
        self.prepare_matches(kind, &[selector])?;
        let key = (slot(kind), selector.to_string());
        let cached = lock(&self.matches).get(&key).cloned();
        // prepare_matches cached it (or returned its error).
        Ok(cached.unwrap_or_else(|| Arc::new(Vec::new())))
    }

    /// The elements of `kind` that `selector` could not be evaluated on (after it was matched).
    pub fn unevaluated(&self, kind: ElementKind, selector: &str) -> Unevaluated {
        lock(&self.unevaluated)
            .get(&(slot(kind), selector.to_string()))
            .cloned()
            .unwrap_or_default()
    }

    /// Evaluates every selector not cached yet. Fast-path selectors read columns of the paths
    /// they use, extracted once from the items' text and kept for later selectors; the others
    /// run in one pass over the parsed items, each item tested against all of them while it is
    /// in cache. Both are several times faster than a pass per selector on large graphs.
    pub fn prepare_matches(
        &self,
        kind: ElementKind,
        selectors: &[&str],
    ) -> Result<(), GraphSessionError> {
        let missing: Vec<&str> = {
            let cache = lock(&self.matches);
            let mut missing: Vec<&str> = selectors
                .iter()
                .copied()
                .filter(|s| !cache.contains_key(&(slot(kind), s.to_string())))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        if missing.is_empty() {
            return Ok(());
        }
        let compiled: Vec<Option<Selector>> = missing
            .iter()
            .map(|s| if s.trim().is_empty() { Ok(None) } else { Selector::parse(s).map(Some) })
            .collect::<Result<_, _>>()?;
        let (fast, slow): (Vec<&Selector>, Vec<&Selector>) =
            compiled.iter().flatten().partition(|s| s.is_fast());
        let mut found = self.match_on_columns(kind, &fast)?;
        found.extend(self.match_on_items(kind, &slow)?);
        let everything = Arc::new(vec![true; self.collection(kind).len()]);
        let mut cache = lock(&self.matches);
        let mut skipped = lock(&self.unevaluated);
        for (text, selector) in missing.iter().zip(&compiled) {
            let (flags, unevaluated) = match selector {
                None => (everything.clone(), Unevaluated::default()),
                Some(_) => {
                    found.remove(*text).map(|(flags, u)| (Arc::new(flags), u)).unwrap_or_default()
                }
            };
            cache.insert((slot(kind), text.to_string()), flags);
            skipped.insert((slot(kind), text.to_string()), unevaluated);
        }
        Ok(())
    }

    /// The matches of fast-path selectors, read from (cached) path columns.
    fn match_on_columns(
        &self,
        kind: ElementKind,
        selectors: &[&Selector],
    ) -> Result<HashMap<String, (Vec<bool>, Unevaluated)>, GraphSessionError> {
        if selectors.is_empty() {
            return Ok(HashMap::new());
        }
        let collection = self.collection(kind);
        let paths: Vec<Vec<FieldPath>> =
            selectors.iter().map(|s| s.column_paths().unwrap_or_default()).collect();
        let columns: HashMap<FieldPath, Arc<PathColumn>> = {
            let mut cache = lock(&self.columns);
            let mut new: Vec<FieldPath> = paths
                .iter()
                .flatten()
                .filter(|p| !cache.contains_key(&(slot(kind), (*p).clone())))
                .cloned()
                .collect();
            new.sort_unstable();
            new.dedup();
            let built = if new.is_empty() {
                Vec::new()
            } else {
                PathColumn::build(&new, collection.len(), |i| {
                    collection.item(i).map_or("null", |item| item.json)
                })
            };
            for column in built {
                cache.insert((slot(kind), column.path().clone()), Arc::new(column));
            }
            paths
                .iter()
                .flatten()
                .filter_map(|p| cache.get(&(slot(kind), p.clone())).map(|c| (p.clone(), c.clone())))
                .collect()
        };
        let inputs: Vec<Vec<&PathColumn>> = paths
            .iter()
            .map(|ps| ps.iter().filter_map(|p| columns.get(p).map(|c| &**c)).collect())
            .collect();
        let answers =
            schemascope_core::selector::columns::evaluate(selectors, &inputs, collection.len());
        let cancel = schemascope_core::cancel::current();
        let mut found = HashMap::new();
        for (selector, answers) in selectors.iter().zip(answers) {
            let mut flags = Vec::with_capacity(answers.len());
            let mut unevaluated = Unevaluated::default();
            for (row, answer) in answers.into_iter().enumerate() {
                flags.push(match answer {
                    Some(hit) => hit,
                    // The general evaluator decides; an element it cannot evaluate does not
                    // match and is counted, so one odd element never fails the call.
                    None => {
                        let item = collection.item(row);
                        let id = item.as_ref().map_or("", |item| item.id);
                        match selector
                            .check_json(item.as_ref().map_or("null", |item| item.json), &cancel)
                        {
                            Ok(Ok(hit)) => hit,
                            Ok(Err(reason)) => {
                                unevaluated.add(id, reason);
                                false
                            }
                            Err(halt) => {
                                return Err(halt
                                    .into_error(selector.as_str(), id, row, collection.len())
                                    .into());
                            }
                        }
                    }
                });
            }
            found.insert(selector.as_str().to_string(), (flags, unevaluated));
        }
        Ok(found)
    }

    /// The matches of other selectors, in one pass over the parsed items. One element too
    /// costly to evaluate, or a cancelled call, stops every thread at its next element.
    fn match_on_items(
        &self,
        kind: ElementKind,
        selectors: &[&Selector],
    ) -> Result<HashMap<String, (Vec<bool>, Unevaluated)>, GraphSessionError> {
        if selectors.is_empty() {
            return Ok(HashMap::new());
        }
        let collection = self.collection(kind);
        let parsed = self.parsed(kind);
        let cancel = schemascope_core::cancel::current();
        let halted = std::sync::atomic::AtomicBool::new(false);
        let evaluated = std::sync::atomic::AtomicUsize::new(0);
        let rows: Vec<Vec<Result<Verdict, Halt>>> = parallel_map(parsed.len(), |i| {
            if halted.load(Relaxed) || cancel.is_cancelled() {
                return Vec::new();
            }
            evaluated.fetch_add(1, Relaxed);
            let row: Vec<Result<Verdict, Halt>> = match &parsed[i] {
                Some(value) => {
                    selectors.iter().map(|selector| selector.check_value(value, &cancel)).collect()
                }
                // Text the parser rejects (nested past its limit): the selector words why.
                None => {
                    let json = collection.item(i).map_or("null", |item| item.json);
                    selectors.iter().map(|selector| selector.check_json(json, &cancel)).collect()
                }
            };
            if row.iter().any(Result::is_err) {
                halted.store(true, Relaxed);
            }
            row
        });
        let evaluated = evaluated.load(Relaxed);
        let mut out: Vec<(Vec<bool>, Unevaluated)> = selectors
            .iter()
            .map(|_| (Vec::with_capacity(rows.len()), Unevaluated::default()))
            .collect();
        for (i, row) in rows.into_iter().enumerate() {
            let id = collection.item(i).map_or(String::new(), |item| item.id.to_string());
            if row.is_empty() {
                // Skipped after a halt or a cancellation, reported below.
                continue;
            }
            for (((flags, unevaluated), answer), selector) in out.iter_mut().zip(row).zip(selectors)
            {
                match answer {
                    Ok(Ok(hit)) => flags.push(hit),
                    Ok(Err(reason)) => {
                        unevaluated.add(&id, reason);
                        flags.push(false);
                    }
                    Err(halt) => {
                        return Err(halt
                            .into_error(selector.as_str(), &id, evaluated, parsed.len())
                            .into());
                    }
                }
            }
        }
        if let Err(cancelled) = cancel.check() {
            return Err(Halt::Cancelled(cancelled)
                .into_error("", "", evaluated, parsed.len())
                .into());
        }
        Ok(selectors.iter().map(|s| s.as_str().to_string()).zip(out).collect())
    }

    /// Which elements a style rule applies to: its selector's matches, narrowed to its ids.
    pub fn rule_matches(
        &self,
        kind: ElementKind,
        rule: &StyleRule,
    ) -> Result<Matches, GraphSessionError> {
        let by_selector = self.matches(kind, &rule.selector)?;
        let Some(ids) = &rule.ids else { return Ok(by_selector) };
        let index = self.id_index(kind);
        let mut flags = vec![false; by_selector.len()];
        for i in ids.iter().filter_map(|id| index.get(id)) {
            flags[*i] = by_selector[*i];
        }
        Ok(Arc::new(flags))
    }

    /// Whether the one element at `index` matches a rule (no cache, no full scan).
    pub fn element_matches(&self, kind: ElementKind, index: usize, rule: &StyleRule) -> bool {
        let Some(item) = self.collection(kind).item(index) else { return false };
        if rule.ids.as_ref().is_some_and(|ids| !ids.iter().any(|id| id == item.id)) {
            return false;
        }
        if rule.selector.trim().is_empty() {
            return true;
        }
        let Ok(compiled) = Selector::parse(&rule.selector) else { return false };
        compiled.matches_json(item.json).unwrap_or(false)
    }
}

/// A style mapping resolved over every element of one kind, with what it gives each element.
#[derive(Debug)]
pub struct Mapped {
    /// The mapping's scale, domain or categories, and legend.
    pub resolved: Resolved,
    /// Per element (item order), its index in `outputs`, or [`Mapped::NONE`] when the mapping
    /// sets nothing for it.
    pub output_of: Vec<u32>,
    /// The distinct colours or sizes given.
    pub outputs: Vec<Value>,
}

impl Mapped {
    /// No output: the element has no mappable value.
    pub const NONE: u32 = u32::MAX;

    /// What the mapping gives the element at `index`.
    pub fn output(&self, index: usize) -> Option<&Value> {
        self.outputs.get(*self.output_of.get(index)? as usize)
    }
}

impl SessionData {
    /// `mapping` resolved over the elements of `kind`; cached per data version.
    pub fn mapped(
        &self,
        kind: ElementKind,
        mapping: &StyleMapping,
    ) -> Result<Arc<Mapped>, GraphSessionError> {
        let key = (slot(kind), serde_json::to_string(mapping).unwrap_or_default());
        if let Some(known) = lock(&self.mapped).get(&key) {
            return Ok(known.clone());
        }
        let path: PropertyPath = mapping.property.parse().map_err(|e| {
            GraphSessionError::InvalidParams(format!("`{}`: {e}", mapping.property))
        })?;
        let parsed = self.parsed(kind);
        let values: Vec<Option<&Value>> =
            parsed.iter().map(|item| item.as_ref().and_then(|v| value_at(v, &path))).collect();
        let resolved = mapping::resolve(mapping, kind, &values)
            .map_err(|e| GraphSessionError::InvalidParams(e.to_string()))?;
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut outputs = Vec::new();
        let output_of = values
            .iter()
            .map(|value| match resolved.output(*value) {
                None => Mapped::NONE,
                Some(out) => *index.entry(out.to_string()).or_insert_with(|| {
                    outputs.push(out);
                    u32::try_from(outputs.len() - 1).unwrap_or(Mapped::NONE)
                }),
            })
            .collect();
        let mapped = Arc::new(Mapped { resolved, output_of, outputs });
        lock(&self.mapped).insert(key, mapped.clone());
        Ok(mapped)
    }

    /// The value of the element at `index` that a mapping of `property` reads.
    pub fn mapped_value(&self, kind: ElementKind, index: usize, property: &str) -> Option<Value> {
        let path: PropertyPath = property.parse().ok()?;
        let item = self.parsed(kind).get(index)?.as_ref()?;
        value_at(item, &path).cloned()
    }

    /// The full path of the property a mapping names: the path itself when the elements have
    /// it; else the one property it names unambiguously — an algorithm's type (`pagerank`: its
    /// first result, `…pagerank.rank`) or a last key (`rank`). An unknown name is refused with
    /// the closest properties.
    pub fn resolve_property(
        &self,
        kind: ElementKind,
        given: &str,
    ) -> Result<String, GraphSessionError> {
        let profile = self.collection(kind).profile();
        let given = given.trim();
        let noun = if kind == ElementKind::Node { "nodes" } else { "edges" };
        if let Ok(path) = given.parse::<PropertyPath>()
            && profile.property(&path).is_some()
        {
            return Ok(given.to_string());
        }
        let properties = profile.properties();
        let paths: Vec<String> = properties.iter().map(|p| p.path.to_string()).collect();
        // Members' parents (`a` of `a.b`), looked up in one set rather than each path compared
        // with every other (a collection has up to 10,000 paths).
        let parents: HashSet<&[Segment]> = properties
            .iter()
            .filter_map(|p| match p.path.segments().split_last() {
                Some((Segment::Key(_), parent)) => Some(parent),
                _ => None,
            })
            .collect();
        let leaves: Vec<&String> = properties
            .iter()
            .zip(&paths)
            .filter(|(p, _)| !parents.contains(p.path.segments()))
            .map(|(_, path)| path)
            .collect();
        if let Ok(info) = crate::algorithms::find(crate::algorithms::NAMESPACE, given) {
            let first = info
                .node_properties
                .first()
                .filter(|_| kind == ElementKind::Node)
                .or(info.edge_properties.first().filter(|_| kind == ElementKind::Edge));
            if let Some(first) = first {
                let path = crate::algorithms::property_path(info.algorithm_type, first);
                if paths.contains(&path) {
                    return Ok(path);
                }
                return Err(GraphSessionError::InvalidParams(format!(
                    "the {noun} have no `{given}` results yet: run_algorithm `{}` first, then map `{path}`",
                    info.algorithm_type
                )));
            }
        }
        let named: Vec<&&String> =
            leaves.iter().filter(|p| p.rsplit('.').next() == Some(given)).collect();
        if let [only] = named[..] {
            return Ok((*only).clone());
        }
        let hint = if named.len() > 1 {
            format!(
                " Several properties end in `{given}`: {}.",
                named.iter().take(8).map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            )
        } else {
            let by_path =
                schemascope_core::suggest::did_you_mean(given, leaves.iter().map(|p| p.as_str()));
            // A short name (`rnak`) is compared with the last keys, and the full path offered.
            let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_string();
            let closest = schemascope_core::suggest::closest(
                given,
                leaves.iter().map(|p| p.rsplit('.').next().unwrap_or(p)),
                1,
            );
            // An algorithm's name misspelt (`pagernk`) stands for its results.
            let algorithm = schemascope_core::suggest::did_you_mean(
                given,
                crate::algorithms::ALGORITHMS.iter().map(|a| a.algorithm_type),
            );
            match closest.first().and_then(|key| leaves.iter().find(|p| last(p) == *key)) {
                Some(path) if by_path.is_empty() => format!(" Did you mean `{path}`?"),
                _ if by_path.is_empty() => algorithm,
                _ => by_path,
            }
        };
        Err(GraphSessionError::InvalidParams(format!(
            "the {noun} have no property `{}`.{hint}",
            given.chars().take(100).collect::<String>()
        )))
    }
}

/// Copies the cache entries of slot `s` from `from` into `to`.
fn carry<K: Clone + Eq + std::hash::Hash, V: Clone>(
    from: &Mutex<HashMap<(usize, K), V>>,
    to: &Mutex<HashMap<(usize, K), V>>,
    s: usize,
) {
    let from = lock(from);
    lock(to)
        .extend(from.iter().filter(|((at, _), _)| *at == s).map(|(k, v)| (k.clone(), v.clone())));
}

/// Sets `to` to what `from` holds, if anything (a cache carried to the next data version).
fn keep<T: Clone>(from: &OnceLock<T>, to: &OnceLock<T>) {
    if let Some(known) = from.get() {
        let _ = to.set(known.clone());
    }
}

/// `f(0..n)` on all cores, in order; a panic in `f` propagates to the caller.
pub fn parallel_map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, n.max(1));
    if threads == 1 || n < 2_000 {
        return (0..n).map(&f).collect();
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope
                    .spawn(move || (t * chunk..((t + 1) * chunk).min(n)).map(f).collect::<Vec<T>>())
            })
            .collect();
        // A panicked worker panics the caller too: its part of the results is missing, and
        // results out of line with the items would be worse than no answer.
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_results_keep_the_graphs_and_the_untouched_edges() {
        let spec: schemascope_sources::SourceSpec = "g=g.json".parse().expect("spec");
        let text =
            r#"{"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"}]}"#;
        let base = schemascope_sources::load_str(
            &spec,
            "g.json",
            Some(schemascope_sources::Format::Graph),
            text.into(),
        )
        .expect("graph loads");
        let data = SessionData::new(Arc::new(base), &BTreeMap::new()).expect("session data");
        let (graph, directed) = (data.graph(), data.graph_as(true));
        let edges_match = data.matches(ElementKind::Edge, "").expect("matches");
        let output = AlgorithmOutput {
            namespace: "schemascope".into(),
            algorithm_type: "pagerank".into(),
            node_ids: vec!["a".into(), "b".into()],
            node_columns: vec![("rank".into(), vec![0.5.into(), 0.5.into()])],
            ..AlgorithmOutput::default()
        };
        let results = BTreeMap::from([("schemascope.pagerank".to_string(), Arc::new(output))]);
        let next = data.with_results(&results).expect("with results");
        assert!(Arc::ptr_eq(&graph, &next.graph()));
        assert!(Arc::ptr_eq(&directed, &next.graph_as(true)));
        assert!(Arc::ptr_eq(
            data.collection(ElementKind::Edge),
            next.collection(ElementKind::Edge)
        ));
        assert!(Arc::ptr_eq(&edges_match, &next.matches(ElementKind::Edge, "").expect("matches")));
        let node = next.collection(ElementKind::Node).item(1).expect("b").json.to_string();
        assert_eq!(node, r#"{"algorithmResults":{"schemascope":{"pagerank":{"rank":0.5}}}}"#);
    }

    #[test]
    fn parallel_map_keeps_the_order() {
        assert_eq!(parallel_map(10_000, |i| i * 2), (0..10_000).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_worker_panics_the_caller() {
        // The last item falls to the last worker when the work is split.
        let outcome = std::panic::catch_unwind(|| {
            parallel_map(10_000, |i| if i == 9_999 { panic!("worker failed") } else { i })
        });
        assert!(outcome.is_err(), "a worker's panic became a result");
    }
}
