//! describe_property (seed 000, component 3): one property in depth — value counts, numeric
//! statistics and histogram, boolean shares, array element statistics, a per-type breakdown for
//! mixed properties, and "did you mean" help when the property does not exist.

use serde_json::{Map, Value, json};

use crate::PropertyPath;
use crate::figure::{self, percent};
use crate::profile::numeric::HistogramLayout;
use crate::profile::{
    CollectionProfile, DataType, PropertyProfile, Unprofiled, ValueCount, ValueType,
};
use crate::suggest::closest;
use crate::summary::type_phrase;

/// Options of describe_property.
#[derive(Debug, Clone, Copy)]
pub struct PropertyOptions {
    /// Most distinct values listed (default 20, at most 50).
    pub limit: usize,
    /// Histogram bins; `None` picks them automatically.
    pub bins: Option<usize>,
}

impl Default for PropertyOptions {
    fn default() -> Self {
        Self { limit: 20, bins: None }
    }
}

/// Most values listed, whatever `limit` asks.
pub const MAX_LIMIT: usize = 50;
/// Most property names listed when a property is missing.
const MAX_AVAILABLE: usize = 60;

/// The answer: a one-line message and the structured data.
#[derive(Debug, Clone)]
pub struct PropertyDescription {
    /// One sentence for the reader.
    pub message: String,
    /// The seed's per-type fields.
    pub data: Value,
    /// False when the property was not found.
    pub exists: bool,
}

/// Counts numeric values into histogram bins when the values are not in memory: a database
/// source answers with one `GROUP BY` over the bin edges instead of sending its rows.
pub trait BinCounter {
    /// The number of values at `path` in each bin of `layout` (as many counts as bins), or
    /// `None` when they cannot be counted (the histogram is then left out).
    fn count_bins(&self, path: &PropertyPath, layout: &HistogramLayout) -> Option<Vec<u64>>;
}

/// Describes the property at `path` (a dot path) in `profile`, whose values are in memory.
pub fn describe_property(
    profile: &CollectionProfile,
    collection: &str,
    path: &PropertyPath,
    options: PropertyOptions,
) -> PropertyDescription {
    describe_property_with(profile, collection, path, options, None)
}

/// [`describe_property`] for a profile computed elsewhere: `bins` counts histogram bins for
/// numbers whose sorted values the profile does not hold.
pub fn describe_property_with(
    profile: &CollectionProfile,
    collection: &str,
    path: &PropertyPath,
    options: PropertyOptions,
    bins: Option<&dyn BinCounter>,
) -> PropertyDescription {
    let Some(node) = profile.node(path).filter(|n| !n.profile.path.is_root() || path.is_root())
    else {
        return missing(profile, collection, path);
    };
    let p = &node.profile;
    let limit = options.limit.clamp(1, MAX_LIMIT);
    let mut data = Map::new();
    data.insert("property".into(), json!(path.to_string()));
    data.insert("collection".into(), json!(collection));
    data.insert("exists".into(), json!(true));
    data.insert("dataType".into(), json!(p.data_type().name()));
    data.insert("totalCount".into(), json!(p.total));
    // present + null + missing = total, all over the same units (seed 000: present excludes null).
    data.insert("totalOf".into(), json!(unit_name(path, collection)));
    data.insert("presentCount".into(), json!(p.non_null()));
    data.insert("missingCount".into(), json!(p.missing()));
    data.insert("nullCount".into(), json!(p.nulls));
    // Distinct values are counted among scalars only: where the property also holds arrays or
    // objects, their count would understate it, so `uniqueCount` is null and
    // `uniqueScalarCount` says what was counted (see `uniqueValues` for array elements).
    if p.types.array + p.types.object > 0 {
        data.insert("uniqueCount".into(), Value::Null);
        data.insert("uniqueScalarCount".into(), json!(p.distinct));
    } else {
        data.insert("uniqueCount".into(), json!(p.distinct));
    }
    // Exact or not, said of every figure: `exact`, and when some are estimates, which and how
    // close they are.
    data.insert("exact".into(), json!(p.approximate.is_none()));
    let message = match p.data_type() {
        DataType::Single(ValueType::String) => {
            extend(&mut data, string_stats(p, limit));
            let s = p.strings.as_ref();
            format!(
                "Property '{path}' is a string with {} unique values.",
                s.map_or(0, |s| s.distinct)
            )
        }
        DataType::Single(ValueType::Integer | ValueType::Number) => {
            extend(&mut data, number_stats(p, options.bins, limit, bins));
            let n = p.numbers.as_ref();
            let (min, max) =
                n.map_or((Value::Null, Value::Null), |n| (n.min_value(), n.max_value()));
            format!(
                "Property '{path}' is a number ranging from {} to {}.",
                number_text(&min),
                number_text(&max)
            )
        }
        DataType::Single(ValueType::Boolean) => {
            extend(&mut data, boolean_stats(p));
            let b = p.booleans.map_or(0, |b| b.true_count);
            format!(
                "Property '{path}' is a boolean, {}% true.",
                figure::text(percent(b, p.types.boolean))
            )
        }
        DataType::Single(ValueType::Array) => {
            extend(&mut data, array_stats(profile, p, limit));
            let unique = profile.property(&path.items()).map_or(0, |i| i.distinct);
            format!(
                "Property '{path}' is an array with {unique} unique values across {} {collection}.",
                p.types.array
            )
        }
        DataType::Single(ValueType::Object) => {
            extend(&mut data, object_stats(node));
            format!(
                "Property '{path}' is an object with {} key{}.",
                node.children.len(),
                if node.children.len() == 1 { "" } else { "s" }
            )
        }
        DataType::Single(ValueType::Null) | DataType::Null => {
            format!("Property '{path}' is always null.")
        }
        DataType::Mixed => {
            let breakdown: Vec<Value> =
                p.types.breakdown().into_iter().map(|(t, n)| json!({"type": t.name(), "count": n, "percentage": percent(n, p.present)})).collect();
            data.insert("typeBreakdown".into(), Value::Array(breakdown));
            if p.strings.is_some() {
                data.insert("string".into(), Value::Object(string_stats(p, limit)));
            }
            if p.numbers.is_some() {
                data.insert(
                    "number".into(),
                    Value::Object(number_stats(p, options.bins, limit, bins)),
                );
            }
            if p.booleans.is_some() {
                data.insert("boolean".into(), Value::Object(boolean_stats(p)));
            }
            if p.arrays.is_some() {
                data.insert("array".into(), Value::Object(array_stats(profile, p, limit)));
            }
            if p.objects > 0 {
                data.insert("object".into(), Value::Object(object_stats(node)));
            }
            format!(
                "Property '{path}' has mixed types: {}.",
                type_phrase(p).trim_start_matches("mixed ").trim_matches(['(', ')'])
            )
        }
    };
    let mut message = message;
    if profile.path_limit.partial.contains(path) {
        // Some occurrences came to a part of the load that had no room left for the key.
        data.insert("partial".into(), json!(true));
        message.push_str(&format!(
            " Its counts are partial: some of its occurrences came past the {}-path profiling limit and were not counted.",
            figure::grouped(profile.path_limit.max_paths as u64)
        ));
    }
    // An array's element figures (`uniqueValues`, its `values`) are its elements' estimates.
    let elements = p.arrays.and_then(|_| profile.property(&p.path.items())?.approximate);
    let approximate = match (p.approximate, elements) {
        (Some(a), Some(b)) => Some(a.union(b)),
        (a, b) => a.or(b),
    };
    if let Some(approximate) = approximate {
        let mut figures = approximate.figures();
        if elements.is_some()
            && let Some(distinct) = figures.get("uniqueCount").cloned()
        {
            figures.insert("uniqueValues".into(), distinct);
        }
        // The profile's `mean` is this answer's `avg`.
        if let Some(mean) = figures.get("mean").cloned() {
            figures.insert("avg".into(), mean);
        }
        // Only the estimated figures this answer shows, at its top level or under a type
        // (a mixed property's `string`, `number`, … parts).
        figures.retain(|name, _| shows(&data, name));
        data.insert("exact".into(), json!(false));
        let names: Vec<String> = figures.keys().map(|k| format!("`{k}`")).collect();
        data.insert("approximate".into(), Value::Object(figures));
        message.push_str(&format!(
            " Some of its figures are estimates ({}): its exact counters outgrew the memory budget of a streamed profile (`approximate` says how close each is); the other figures are exact.",
            names.join(", ")
        ));
    }
    PropertyDescription { message, data: Value::Object(data), exists: true }
}

/// True when `data` shows the figure `name`, at its top level or one object below.
fn shows(data: &Map<String, Value>, name: &str) -> bool {
    let here = |m: &Map<String, Value>| m.get(name).is_some_and(|v| !v.is_null());
    here(data) || data.values().any(|v| v.as_object().is_some_and(here))
}

/// What `totalCount` counts: the collection's items, or for a path inside an array the elements
/// of those arrays across the collection.
fn unit_name(path: &PropertyPath, collection: &str) -> String {
    let text = path.to_string();
    match text.rfind("[]") {
        Some(at) => format!("elements of `{}` in all {collection}", &text[..at + 2]),
        None => collection.to_string(),
    }
}

/// A number from the output as prose text.
fn number_text(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), figure::text),
        other => other.to_string(),
    }
}

fn extend(data: &mut Map<String, Value>, more: Map<String, Value>) {
    data.extend(more);
}

fn value_list(top: &[ValueCount], whole: u64, limit: usize) -> (Vec<Value>, u64) {
    let listed = &top[..limit.min(top.len())];
    let values = crate::display::shorten_value_list(listed.iter().map(|v| &v.value), 100);
    let shown: Vec<Value> = listed
        .iter()
        .zip(values)
        .map(|(v, value)| {
            json!({"value": value, "count": v.count, "percentage": percent(v.count, whole)})
        })
        .collect();
    let listed: u64 = listed.iter().map(|v| v.count).sum();
    (shown, whole.saturating_sub(listed))
}

fn string_stats(p: &PropertyProfile, limit: usize) -> Map<String, Value> {
    let mut m = Map::new();
    let Some(s) = &p.strings else { return m };
    let (values, other) = value_list(&s.top, s.count, limit);
    m.insert("stringCount".into(), json!(s.count));
    m.insert("distinctStrings".into(), json!(s.distinct));
    m.insert("values".into(), Value::Array(values));
    if other > 0 {
        m.insert("otherCount".into(), json!(other));
        m.insert(
            "otherDistinct".into(),
            json!(s.distinct.saturating_sub(limit.min(s.top.len()) as u64)),
        );
    }
    m.insert("minLength".into(), json!(s.min_length));
    m.insert("maxLength".into(), json!(s.max_length));
    m.insert("avgLength".into(), figure::stat_json(s.avg_length));
    // Dates and times compare as their text: the earliest and the latest.
    if let (Some(min), Some(max)) = (&s.min, &s.max) {
        m.insert("min".into(), json!(min));
        m.insert("max".into(), json!(max));
    }
    let counts = || -> Value {
        s.format_counts.iter().map(|(f, n)| json!({"format": f, "count": n})).collect()
    };
    match (s.format, s.format_sample) {
        (Some(format), _) => {
            m.insert("format".into(), json!(format));
        }
        // Counts over a sample are named so, beside its size, even when none has a format: no
        // counts would read as no value having one.
        (None, Some(sampled)) => {
            m.insert("formatCountsInSample".into(), counts());
            m.insert("formatSampleValues".into(), json!(sampled));
        }
        (None, None) if !s.format_counts.is_empty() => {
            m.insert("formatCounts".into(), counts());
        }
        (None, None) => {}
    }
    m
}

fn number_stats(
    p: &PropertyProfile,
    bins: Option<usize>,
    limit: usize,
    counter: Option<&dyn BinCounter>,
) -> Map<String, Value> {
    let mut m = Map::new();
    let Some(n) = &p.numbers else { return m };
    m.insert("numberCount".into(), json!(n.count));
    m.insert("integer".into(), json!(n.all_integers()));
    // The extremes are values from the data, shown exactly, and so is the median of integers
    // (a value or the midpoint of two); the rest are computed, shown to fifteen significant
    // digits (see `figure`), or all of them where rounding would carry them past an end.
    m.insert("min".into(), n.min_value());
    m.insert("max".into(), n.max_value());
    m.insert("avg".into(), n.mean_value());
    m.insert("median".into(), n.median_value());
    m.insert("stdDev".into(), figure::stat_json(n.std_dev));
    m.insert("distinctNumbers".into(), json!(n.distinct));
    let histogram = HistogramLayout::for_numbers(n, bins).and_then(|layout| {
        let counts = match (&n.runs, counter) {
            (Some(runs), _) => Some(layout.count_runs(runs)),
            (None, _) if let Some(edges) = &n.edge_counts => edges.count(&layout),
            (None, Some(counter)) => counter.count_bins(&p.path, &layout),
            (None, None) => None,
        };
        counts.map(|counts| (layout.scale, layout.label(&counts)))
    });
    if let Some((scale, histogram)) = histogram {
        m.insert("histogramScale".into(), json!(scale));
        m.insert("histogram".into(), json!(histogram));
    }
    if !n.top.is_empty() {
        let (values, _) = value_list(&n.top, n.count, limit);
        m.insert("values".into(), Value::Array(values));
    }
    m
}

fn boolean_stats(p: &PropertyProfile) -> Map<String, Value> {
    let mut m = Map::new();
    let Some(b) = p.booleans else { return m };
    let total = b.true_count + b.false_count;
    m.insert("trueCount".into(), json!(b.true_count));
    m.insert("falseCount".into(), json!(b.false_count));
    m.insert("truePercentage".into(), json!(percent(b.true_count, total)));
    m.insert("falsePercentage".into(), json!(percent(b.false_count, total)));
    m
}

fn array_stats(
    profile: &CollectionProfile,
    p: &PropertyProfile,
    limit: usize,
) -> Map<String, Value> {
    let mut m = Map::new();
    let Some(a) = p.arrays else { return m };
    let items = profile.property(&p.path.items());
    m.insert("arrayCount".into(), json!(a.count));
    m.insert("itemType".into(), json!(items.map_or_else(|| "unknown".to_string(), type_phrase)));
    m.insert("avgLength".into(), figure::stat_json(a.avg_length));
    m.insert("minLength".into(), json!(a.min_length));
    m.insert("maxLength".into(), json!(a.max_length));
    m.insert("emptyCount".into(), json!(a.empty_count));
    if let Some(items) = items {
        m.insert("uniqueValues".into(), json!(items.distinct));
        // Percentages are of the arrays: "production" in 56.3% of the arrays.
        let mut top: Vec<ValueCount> = Vec::new();
        if let Some(s) = &items.strings {
            top.extend(s.top.iter().cloned());
        }
        if let Some(n) = &items.numbers {
            top.extend(n.top.iter().cloned());
        }
        if let Some(b) = items.booleans {
            top.push(ValueCount { value: json!(true), count: b.true_count });
            top.push(ValueCount { value: json!(false), count: b.false_count });
        }
        top.retain(|v| v.count > 0);
        top.sort_by_key(|v| std::cmp::Reverse(v.count));
        let (values, _) = value_list(&top, a.count, limit);
        m.insert("valueCounts".into(), Value::Array(values));
        m.insert("itemPath".into(), json!(items.path.to_string()));
    }
    m
}

fn object_stats(node: &crate::profile::ProfileNode) -> Map<String, Value> {
    let mut m = Map::new();
    let keys: Vec<Value> = node
        .children
        .iter()
        .map(|c| {
            json!({
                "path": c.profile.path.to_string(),
                "type": type_phrase(&c.profile),
                "presentCount": c.profile.non_null(),
                "percentage": percent(c.profile.non_null(), c.profile.total),
            })
        })
        .collect();
    m.insert("objectCount".into(), json!(node.profile.objects));
    m.insert("keys".into(), Value::Array(keys));
    m
}

/// The answer for a path the profile lacks because the path limit kept it out: `None` when the
/// limit is not why.
fn not_profiled(
    profile: &CollectionProfile,
    collection: &str,
    path: &PropertyPath,
) -> Option<PropertyDescription> {
    let wanted = path.to_string();
    let limit = figure::grouped(profile.path_limit.max_paths as u64);
    let (message, exists) = match profile.path_limit.unprofiled_at(path)? {
        Unprofiled::Refused => (
            format!(
                "Property '{wanted}' exists on some {collection} but was not profiled: past the {limit}-path limit (the {collection} have more distinct property paths than that). sample_data or find_items show its values."
            ),
            json!(true),
        ),
        Unprofiled::Under(refused) => (
            format!(
                "Property '{wanted}' was not profiled: it lies under '{refused}', which is past the {limit}-path limit, so whether it exists is not known. sample_data or find_items show the values."
            ),
            Value::Null,
        ),
        Unprofiled::Unknown => (
            format!(
                "Property '{wanted}' is not among the profiled properties of the {collection}, but profiling stopped at the {limit}-path limit and more keys came past it than are remembered, so it may exist past the limit. sample_data or find_items show the values."
            ),
            Value::Null,
        ),
    };
    Some(PropertyDescription {
        message,
        data: json!({
            "property": wanted,
            "collection": collection,
            "exists": exists,
            "profiled": false,
            "reason": "pathLimit",
            "pathLimit": profile.path_limit.max_paths,
        }),
        exists: false,
    })
}

fn missing(
    profile: &CollectionProfile,
    collection: &str,
    path: &PropertyPath,
) -> PropertyDescription {
    if let Some(answer) = not_profiled(profile, collection, path) {
        return answer;
    }
    let available: Vec<String> = profile.properties().iter().map(|p| p.path.to_string()).collect();
    let wanted = path.to_string();
    let suggestions = closest(&wanted, available.iter().map(String::as_str), 5);
    let mut listed: Vec<&str> = available.iter().map(String::as_str).take(MAX_AVAILABLE).collect();
    let more = available.len().saturating_sub(listed.len());
    let mut text = format!("Available properties: {}", listed.join(", "));
    if more > 0 {
        text.push_str(&format!(" (+{more} more)"));
    }
    listed.truncate(MAX_AVAILABLE);
    let mut message = format!("Property '{wanted}' was not found on any {collection}.");
    if let Some(best) = suggestions.first() {
        message.push_str(&format!(" Did you mean '{best}'?"));
    }
    PropertyDescription {
        message,
        data: json!({
            "property": wanted,
            "collection": collection,
            "exists": false,
            "didYouMean": suggestions,
            "availableProperties": listed,
            "suggestion": text,
        }),
        exists: false,
    }
}
