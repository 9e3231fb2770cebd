//! sample_data (seed 000, component 2): a few real items, chosen at random (seedable), one per
//! value of a property (stratified), or so that together they show every property path
//! (representative).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::{Value, json};

use crate::collection::{Collection, CollectionKind, ItemRef};
use crate::display::{Cuts, DisplayLimits, shorten};
use crate::error::CoreError;
use crate::path::{PropertyPath, Segment};

/// How items are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleStrategy {
    /// Uniformly at random, reproducible with a seed.
    #[default]
    Random,
    /// One item per distinct value of `stratify_by`, most common values first.
    Stratified,
    /// A small set that together covers every observed property path.
    Representative,
}

/// Most items one call returns.
pub const MAX_SAMPLE: usize = 100;

/// Options of sample_data.
#[derive(Debug, Clone)]
pub struct SampleOptions {
    /// Items wanted (default 3).
    pub count: usize,
    /// How to choose them.
    pub strategy: SampleStrategy,
    /// The property to stratify by (required for `stratified`).
    pub stratify_by: Option<PropertyPath>,
    /// Random seed; a fresh one is drawn (and reported) when absent.
    pub seed: Option<u64>,
    /// How values are shortened.
    pub limits: DisplayLimits,
    /// Only items with this id (for record sets: one record's values).
    pub only_id: Option<String>,
}

impl Default for SampleOptions {
    fn default() -> Self {
        Self {
            count: 3,
            strategy: SampleStrategy::Random,
            stratify_by: None,
            seed: None,
            limits: DisplayLimits::default(),
            only_id: None,
        }
    }
}

/// The chosen items, rendered, with how they were chosen.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Rendered items (`{id, data}`, `{id, source, target, data}`, `{key, value, metadata}`).
    pub items: Vec<Value>,
    /// The strategy used.
    pub strategy: SampleStrategy,
    /// The seed used (random and stratified choices depend on it).
    pub seed: u64,
    /// For stratified samples: how many distinct values the property has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strata: Option<usize>,
    /// For representative samples: paths covered out of all observed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths_covered: Option<(usize, usize)>,
    /// Values cut for display.
    pub truncated_strings: usize,
    /// Values replaced by a depth marker.
    pub depth_limited: usize,
}

/// Renders one item in its kind's shape, shortened for display.
pub fn render_item(
    kind: CollectionKind,
    item: &ItemRef<'_>,
    value: &Value,
    limits: &DisplayLimits,
    cuts: &mut Cuts,
) -> Value {
    let data = shorten(value, limits, cuts);
    match kind {
        CollectionKind::Edges => {
            let (source, target) = item.ends.map_or(("", ""), |e| (e.source, e.target));
            json!({"id": item.id, "source": source, "target": target, "data": data})
        }
        CollectionKind::Records => {
            let mut out = json!({"key": item.id, "value": data});
            if let Some(metadata) = item.metadata() {
                out["metadata"] = metadata;
            }
            out
        }
        CollectionKind::Nodes | CollectionKind::Documents => json!({"id": item.id, "data": data}),
        // A row is its columns; its key is among them.
        CollectionKind::Table => data,
    }
}

/// The value at `path` inside `value`: for paths through arrays, the first element's.
pub fn value_at<'v>(value: &'v Value, path: &PropertyPath) -> Option<&'v Value> {
    let mut current = value;
    for segment in path.segments() {
        current = match segment {
            Segment::Key(key) => current.as_object()?.get(&**key)?,
            Segment::Items => current.as_array()?.first()?,
        };
    }
    Some(current)
}

/// Chooses and renders items of `collection`.
pub fn sample(collection: &Collection, options: &SampleOptions) -> Result<Sample, CoreError> {
    let count = options.count.clamp(1, MAX_SAMPLE);
    let seed = options.seed.unwrap_or_else(|| fastrand::u64(..));
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut strata = None;
    let mut paths_covered = None;
    let pool: Vec<usize> = match &options.only_id {
        Some(id) => {
            collection.items().filter(|item| item.id == id).map(|item| item.index).collect()
        }
        None => (0..collection.len()).collect(),
    };
    let chosen: Vec<usize> = match options.strategy {
        SampleStrategy::Random => {
            let mut picked = rng.choose_multiple(pool.iter().copied(), count);
            picked.sort_unstable();
            picked
        }
        SampleStrategy::Stratified => {
            let path = options.stratify_by.clone().ok_or_else(|| CoreError::InvalidPath {
                path: String::new(),
                reason: "the stratified strategy needs `stratify_by`, the property whose values to spread over".into(),
            })?;
            let (picked, groups) = stratified(collection, &pool, &path, count, &mut rng)?;
            strata = Some(groups);
            picked
        }
        SampleStrategy::Representative => {
            let (picked, covered, total) = representative(collection, &pool, count)?;
            paths_covered = Some((covered, total));
            picked
        }
    };
    let mut cuts = Cuts::default();
    let mut items = Vec::with_capacity(chosen.len());
    for index in chosen {
        let Some(item) = collection.item(index) else { continue };
        let value = collection.parse_item(&item)?;
        let mut rendered =
            render_item(collection.kind(), &item, &value, &options.limits, &mut cuts);
        if let (Some(path), SampleStrategy::Stratified) = (&options.stratify_by, options.strategy) {
            rendered["stratum"] =
                value_at(&value, path).cloned().unwrap_or(Value::String("(missing)".into()));
        }
        items.push(rendered);
    }
    Ok(Sample {
        items,
        strategy: options.strategy,
        seed,
        strata,
        paths_covered,
        truncated_strings: cuts.strings,
        depth_limited: cuts.depth,
    })
}

/// A hashable stand-in for a stratum value.
fn stratum_key(value: Option<&Value>) -> String {
    match value {
        None => "(missing)".into(),
        Some(Value::Array(_)) => "(array)".into(),
        Some(Value::Object(_)) => "(object)".into(),
        Some(scalar) => scalar.to_string(),
    }
}

fn stratified(
    collection: &Collection,
    pool: &[usize],
    path: &PropertyPath,
    count: usize,
    rng: &mut fastrand::Rng,
) -> Result<(Vec<usize>, usize), CoreError> {
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for item in pool.iter().filter_map(|&i| collection.item(i)) {
        let value = collection.parse_item(&item)?;
        groups.entry(stratum_key(value_at(&value, path))).or_default().push(item.index);
    }
    let mut ordered: Vec<(String, Vec<usize>)> = groups.into_iter().collect();
    // Most common values first, so a small count shows the values that matter most.
    ordered.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    for (_, members) in &mut ordered {
        rng.shuffle(members);
    }
    let strata = ordered.len();
    let mut picked = Vec::new();
    let mut round = 0;
    while picked.len() < count {
        let mut any = false;
        for (_, members) in &ordered {
            if let Some(&index) = members.get(round) {
                picked.push(index);
                any = true;
                if picked.len() == count {
                    break;
                }
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    Ok((picked, strata))
}

fn collect_paths(value: &Value, path: &PropertyPath, out: &mut BTreeSet<PropertyPath>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = path.child(key);
                collect_paths(child, &child_path, out);
                out.insert(child_path);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let items_path = path.items();
            for item in items {
                collect_paths(item, &items_path, out);
            }
            out.insert(items_path);
        }
        _ => {}
    }
}

/// Greedy set cover: repeatedly take the item showing the most paths not yet shown. Items with
/// the same set of paths are considered once. Stops when all paths are covered, or at `count`
/// items if more would be needed… unless fewer than all paths are covered, in which case it goes
/// on up to [`MAX_SAMPLE`] items, because covering every path is the point of this strategy.
fn representative(
    collection: &Collection,
    pool: &[usize],
    count: usize,
) -> Result<(Vec<usize>, usize, usize), CoreError> {
    let mut signatures: HashMap<Vec<PropertyPath>, usize> = HashMap::new();
    for item in pool.iter().filter_map(|&i| collection.item(i)) {
        let value = collection.parse_item(&item)?;
        let mut paths = BTreeSet::new();
        collect_paths(&value, &PropertyPath::root(), &mut paths);
        signatures.entry(paths.into_iter().collect()).or_insert(item.index);
    }
    let mut candidates: Vec<(Vec<PropertyPath>, usize)> = signatures.into_iter().collect();
    candidates.sort_by_key(|c| c.1);
    let all: BTreeSet<&PropertyPath> =
        candidates.iter().flat_map(|(paths, _)| paths.iter()).collect();
    let total = all.len();
    let mut covered: BTreeSet<&PropertyPath> = BTreeSet::new();
    let mut picked = Vec::new();
    while covered.len() < total && picked.len() < MAX_SAMPLE {
        let best = candidates
            .iter()
            .map(|(paths, index)| {
                (paths.iter().filter(|p| !covered.contains(p)).count(), *index, paths)
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let Some((gain, index, paths)) = best else { break };
        if gain == 0 {
            break;
        }
        picked.push(index);
        covered.extend(paths.iter());
    }
    // Fill up to `count` with further items in file order, so small collections still show `count`.
    for (_, index) in &candidates {
        if picked.len() >= count {
            break;
        }
        if !picked.contains(index) {
            picked.push(*index);
        }
    }
    if picked.len() < count {
        for &index in pool {
            if picked.len() >= count {
                break;
            }
            if !picked.contains(&index) {
                picked.push(index);
            }
        }
    }
    Ok((picked, covered.len(), total))
}
