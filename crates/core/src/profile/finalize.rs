//! Turning accumulated counters into a [`CollectionProfile`]: sorting, top values, formats, stats.
//!
//! The work per path is independent (sorting a million numbers, ranking a million strings), so
//! paths are finalised on all cores and the tree is reassembled afterwards.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::TOP_VALUES;
use super::accumulate::{MAX_KEY_LEN, PathNode, ValueStats};
use super::exact::NumberKey;
use super::formats::{self, StringFormat};
use super::model::*;
use super::numeric::{NUMBER_TOP_DISTINCT, ValueRuns, top_numbers};
use super::path_limit::PathLimit;
use super::sketch::{NumberSketch, RELATIVE_STANDARD_ERROR, StringSketch};
use crate::path::PropertyPath;
use crate::sync::lock;

struct Pending {
    path: PropertyPath,
    total: u64,
    stats: ValueStats,
    deferred: Vec<ValueStats>,
    dropped_keys: u64,
}

impl Pending {
    /// A rough cost, to hand out the heaviest paths first. Spilled numbers weigh the most: their
    /// merge runs on one core, where spilled strings are finished on all of them.
    fn cost(&self) -> u64 {
        let entries =
            |chunks: &[super::spill::Chunk]| chunks.iter().map(|c| c.entries).sum::<u64>();
        let one = |s: &ValueStats| {
            s.present
                + 4 * (s.strings.values.len() as u64 + entries(&s.strings.spilled))
                + 8 * entries(&s.numbers.spilled)
        };
        one(&self.stats) + self.deferred.iter().map(one).sum::<u64>()
    }
}

/// A node's shape, remembered while flattening the tree depth first so it can be rebuilt.
struct Shape {
    children: usize,
    has_items: bool,
}

fn flatten(
    node: PathNode,
    path: PropertyPath,
    total: u64,
    pending: &mut Vec<Pending>,
    shapes: &mut Vec<Shape>,
    limit: &mut PathLimit,
) {
    // Array elements are counted over every merged builder.
    let elements = node.stats.arrays.lengths.sum
        + node.deferred.iter().map(|d| d.arrays.lengths.sum).sum::<u64>();
    // The element node is created when an array opens; if every array was empty it saw nothing.
    let mut node = node;
    if let Some(refused) = node.refused.take() {
        let profiled: Vec<Box<str>> = node.keys.iter().map(|(k, _)| k.clone()).collect();
        limit.record(&path, *refused, &profiled);
    }
    node.items = node
        .items
        .filter(|i| i.stats.present + i.deferred.iter().map(|d| d.present).sum::<u64>() > 0);
    shapes.push(Shape { children: node.keys.len(), has_items: node.items.is_some() });
    pending.push(Pending {
        path: path.clone(),
        total,
        stats: node.stats,
        deferred: node.deferred,
        dropped_keys: node.dropped_keys,
    });
    // Presence is counted over the whole collection (items, or all elements inside an array),
    // not over the parent objects: a key under a partly present parent is missing where the
    // parent is.
    for (key, child) in node.keys {
        flatten(child, path.child(&key), total, pending, shapes, limit);
    }
    if let Some(items) = node.items {
        flatten(*items, path.items(), elements, pending, shapes, limit);
    }
}

fn rebuild(
    profiles: &mut std::vec::IntoIter<PropertyProfile>,
    shapes: &mut std::slice::Iter<'_, Shape>,
) -> Option<ProfileNode> {
    let Shape { children, has_items } = shapes.next()?;
    let profile = profiles.next()?;
    let children = (0..*children).filter_map(|_| rebuild(profiles, shapes)).collect();
    let items = if *has_items { rebuild(profiles, shapes).map(Box::new) } else { None };
    Some(ProfileNode { profile, children, items })
}

pub(crate) fn finish(
    root: PathNode,
    item_count: u64,
    path_limit_hit: bool,
    mut path_limit: PathLimit,
) -> CollectionProfile {
    let mut pending = Vec::new();
    let mut shapes = Vec::new();
    flatten(root, PropertyPath::root(), item_count, &mut pending, &mut shapes, &mut path_limit);

    // Heaviest paths first, handed out one at a time to whichever thread is free.
    let mut order: Vec<(usize, u64)> = pending.iter().map(Pending::cost).enumerate().collect();
    order.sort_by_key(|o| std::cmp::Reverse(o.1));
    let work: Vec<Mutex<Option<Pending>>> =
        pending.into_iter().map(|p| Mutex::new(Some(p))).collect();
    // Turn `t` finishes the path `order[t]` names. Each job is taken from its slot once, whole,
    // so a panic on another path leaves every slot valid (and reaches the caller).
    let finished = crate::parallel::on_all_cores(order.len(), |turn| {
        let &(index, _) = order.get(turn)?;
        let job = lock(work.get(index)?).take()?;
        Some((index, finalize(job)))
    });
    let mut slots: Vec<Option<PropertyProfile>> = (0..work.len()).map(|_| None).collect();
    for (index, profile) in finished.into_iter().flatten() {
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(profile);
        }
    }
    let profiles: Vec<PropertyProfile> = slots.into_iter().flatten().collect();
    let mut profiles = profiles.into_iter();
    let mut shapes = shapes.iter();
    let root = rebuild(&mut profiles, &mut shapes).unwrap_or_else(|| ProfileNode {
        profile: finalize(Pending {
            path: PropertyPath::root(),
            total: item_count,
            stats: ValueStats::default(),
            deferred: Vec::new(),
            dropped_keys: 0,
        }),
        children: Vec::new(),
        items: None,
    });
    CollectionProfile { item_count, root, path_limit_hit, path_limit }
}

fn finalize(p: Pending) -> PropertyProfile {
    let mut s = p.stats;
    for other in p.deferred {
        s.merge(other);
    }
    let types = TypeCounts {
        string: s.strings.count,
        integer: s.numbers.integers,
        number: s.numbers.floats,
        boolean: s.trues + s.falses,
        array: s.arrays.lengths.count,
        object: s.objects,
        null: s.nulls,
    };
    let mut approximate: Option<Approximation> = None;
    let mut approximated = |a: Approximation| {
        approximate = Some(approximate.map_or(a, |b| b.union(a)));
    };
    let strings = (s.strings.count > 0).then(|| match s.strings.sketch.take() {
        Some(sketch) => {
            let (profile, approximation) = sketched_strings(s.strings.count, *sketch);
            approximated(approximation);
            profile
        }
        None if !s.strings.spilled.is_empty() => super::spilled::spilled_strings(s.strings),
        None => finalize_strings(s.strings),
    });
    let numbers = (!s.numbers.is_empty()).then(|| match s.numbers.sketch.take() {
        Some(sketch) => {
            let (profile, approximation) =
                sketched_numbers(s.numbers.integers, s.numbers.floats, *sketch);
            approximated(approximation);
            profile
        }
        None if !s.numbers.spilled.is_empty() => super::spilled::spilled_numbers(s.numbers),
        None => finalize_numbers(s.numbers),
    });
    let booleans = (s.trues + s.falses > 0)
        .then_some(BooleanProfile { true_count: s.trues, false_count: s.falses });
    let lengths = s.arrays.lengths;
    let arrays = (lengths.count > 0).then(|| ArrayProfile {
        count: lengths.count,
        min_length: lengths.min,
        max_length: lengths.max,
        avg_length: lengths.mean(),
        empty_count: s.arrays.empty,
    });
    let distinct = strings.as_ref().map_or(0, |x| x.distinct)
        + numbers.as_ref().map_or(0, |x| x.distinct)
        + u64::from(s.trues > 0)
        + u64::from(s.falses > 0);
    PropertyProfile {
        path: p.path,
        total: p.total,
        present: s.present,
        nulls: s.nulls,
        types,
        distinct,
        strings,
        numbers,
        booleans,
        arrays,
        objects: s.objects,
        dropped_keys: p.dropped_keys,
        depth_limited: s.depth_limited,
        approximate,
    }
}

/// The string statistics of a property whose counts became sketches.
fn sketched_strings(count: u64, sketch: StringSketch) -> (StringProfile, Approximation) {
    let undercount = sketch.frequent.undercount();
    // Only values whose count exceeds the bound are surely more frequent than any value left
    // out; within the list the order is the estimates'.
    let heavy = sketch.frequent.counts().into_iter().filter(|(_, n)| *n > undercount);
    let top = top_values(heavy, TOP_VALUES);
    let formats = formats::with_counts(sketch.formats, []);
    let format = formats.first().filter(|(_, n)| *n == count).map(|(f, _)| *f);
    let dated = format.is_some_and(StringFormat::is_temporal);
    let (min, max) = if dated { sketch.extremes.into_range() } else { (None, None) };
    let distinct = sketch.distinct.estimate().clamp(u64::from(count > 0), count);
    let profile = StringProfile {
        count,
        distinct,
        top: top
            .into_iter()
            .map(|(v, count)| ValueCount { value: Value::String(v.to_string()), count })
            .collect(),
        min_length: sketch.lengths.min,
        max_length: sketch.lengths.max,
        avg_length: sketch.lengths.mean(),
        min,
        max,
        format,
        format_counts: formats,
        format_sample: None,
    };
    let approximation = Approximation {
        distinct_relative_error: Some(RELATIVE_STANDARD_ERROR),
        value_relative_error: None,
        count_undercount: Some(undercount),
    };
    (profile, approximation)
}

/// The number statistics of a property whose values became sketches.
fn sketched_numbers(
    integer_count: u64,
    float_count: u64,
    sketch: NumberSketch,
) -> (NumberProfile, Approximation) {
    let (low, high) = sketch.range.unwrap_or((NumberKey::float(0.0), NumberKey::float(0.0)));
    let (min, max) = (low.double(), high.double());
    let runs = ValueRuns::from_counts(sketch.quantiles.runs(min, max));
    let distinct = sketch.distinct.estimate().clamp(u64::from(sketch.count > 0), sketch.count);
    let profile = NumberProfile {
        count: sketch.count,
        integer_count,
        float_count,
        min,
        max,
        mean: sketch.mean(),
        exact_sum: None,
        median: runs.quarter(2).0,
        // An estimate, never shown with a value's digits.
        median_key: None,
        std_dev: sketch.std_dev(),
        distinct,
        top: Vec::new(),
        quartiles: [runs.quarter(1).0, runs.quarter(3).0],
        exact_median: None,
        exact_range: sketch.range,
        runs: Some(Arc::new(runs)),
        edge_counts: None,
        exact_text_count: 0,
    };
    let approximation = Approximation {
        distinct_relative_error: Some(RELATIVE_STANDARD_ERROR),
        value_relative_error: Some(sketch.quantiles.relative_error()),
        count_undercount: None,
    };
    (profile, approximation)
}

fn finalize_strings(s: super::accumulate::StringStats) -> StringProfile {
    let entries = s.values.tally();
    let distinct = entries.len() as u64;
    let (format_counts, mut range) = formats::count_formats_and_range(&entries);
    range.merge(&s.long_range);
    let format_counts = formats::with_counts(format_counts, s.long_formats);
    let format = format_counts.first().filter(|(_, n)| *n == s.count).map(|(f, _)| *f);
    let (min, max) = match format {
        Some(format) if format.is_temporal() => range.into_range(),
        _ => (None, None),
    };
    let mut lengths = s.long;
    let ascii = s.values.is_ascii();
    for (value, count) in &entries {
        if value.len() <= MAX_KEY_LEN {
            lengths.add(if ascii { value.len() } else { value.chars().count() } as u64, *count);
        }
    }
    let entries = top_values(entries, TOP_VALUES);
    StringProfile {
        count: s.count,
        distinct,
        top: entries
            .into_iter()
            .map(|(v, count)| ValueCount { value: Value::String(v.to_string()), count })
            .collect(),
        min_length: lengths.min,
        max_length: lengths.max,
        avg_length: lengths.mean(),
        min,
        max,
        format,
        format_counts,
        format_sample: None,
    }
}

/// The `k` most common values, most common first and ties in text order. One pass keeping the
/// best `k` so far: a candidate is usually turned away by its count alone, and a million
/// distinct ids cost a million comparisons with the current `k`-th, not a partition of them all.
fn top_values<'a>(
    entries: impl IntoIterator<Item = (&'a str, u64)>,
    k: usize,
) -> Vec<(&'a str, u64)> {
    let ranks_before = |a: &(&str, u64), b: &(&str, u64)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
    let mut best: Vec<(&str, u64)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return best;
    }
    for entry in entries {
        if best.len() == k && !best.last().is_some_and(|worst| ranks_before(&entry, worst)) {
            continue;
        }
        let at = best.partition_point(|b| ranks_before(b, &entry));
        best.insert(at, entry);
        best.truncate(k);
    }
    best
}

fn finalize_numbers(n: super::accumulate::NumberStats) -> NumberProfile {
    let (integer_count, float_count) = (n.integers, n.floats);
    let (parts, wide, counted) = n.into_parts();
    let runs = ValueRuns::from_parts_counted(parts, counted).with_wide(wide);
    let (mean, std_dev, exact_sum) = runs.mean_std_sum();
    let distinct = runs.distinct() as u64;
    let integers = float_count == 0;
    let (median, exact_median) = runs.quarter(2);
    NumberProfile {
        count: runs.count(),
        integer_count,
        float_count,
        min: runs.min(),
        max: runs.max(),
        mean,
        exact_sum,
        median,
        median_key: runs.median_key(),
        std_dev,
        distinct,
        top: if distinct <= NUMBER_TOP_DISTINCT {
            top_numbers(runs.iter(), integers)
        } else {
            Vec::new()
        },
        quartiles: [runs.quarter(1).0, runs.quarter(3).0],
        exact_median: exact_median.filter(|_| integers),
        exact_range: runs.first_key().zip(runs.last_key()),
        runs: Some(Arc::new(runs)),
        edge_counts: None,
        exact_text_count: 0,
    }
}
