//! What describe_property, the schema summary and the markdown section show, checked against
//! hand computations: presence over the whole collection, present/null/missing, significant
//! digits, histogram bins, long strings and hidden control characters.

use schemascope_core::collection::{Collection, CollectionKind, OwnedItem};
use schemascope_core::markdown::schema_markdown;
use schemascope_core::profile::CollectionProfile;
use schemascope_core::property::{PropertyOptions, describe_property};
use schemascope_core::summary::summarize_properties;
use schemascope_core::{ProfileBuilder, PropertyPath};
use serde_json::{Value, json};

fn profile(values: &[Value]) -> CollectionProfile {
    let mut builder = ProfileBuilder::new();
    for v in values {
        builder.add_value(v);
    }
    builder.finish(values.len() as u64)
}

fn describe(values: &[Value], path: &str, bins: Option<usize>) -> Value {
    let path: PropertyPath = path.parse().expect("path");
    describe_property(&profile(values), "items", &path, PropertyOptions { limit: 20, bins }).data
}

fn markdown(values: Vec<Value>) -> String {
    let items = values.into_iter().enumerate().map(|(i, v)| OwnedItem::new(i.to_string(), v));
    let collection = Collection::from_values("items", CollectionKind::Documents, items);
    schema_markdown("src", &[&collection], None).markdown
}

fn counts(d: &Value) -> (u64, u64, u64, u64) {
    let n = |k: &str| d[k].as_u64().unwrap_or(u64::MAX);
    (n("totalCount"), n("presentCount"), n("nullCount"), n("missingCount"))
}

/// 10 items: `metrics` on 4 (one of them without `cpu`, one with `cpu: null`), absent on 6.
fn partly_present_parent() -> Vec<Value> {
    let mut items: Vec<Value> = (0..6).map(|i| json!({"name": format!("n{i}")})).collect();
    items.push(json!({"metrics": {"cpu": {"current": 0.5}}}));
    items.push(json!({"metrics": {"cpu": {"current": 0.25}}}));
    items.push(json!({"metrics": {"cpu": null}}));
    items.push(json!({"metrics": {}}));
    items
}

#[test]
fn nested_properties_under_a_partly_present_parent_count_over_every_item() {
    let items = partly_present_parent();
    assert_eq!(counts(&describe(&items, "metrics", None)), (10, 4, 0, 6));
    assert_eq!(counts(&describe(&items, "metrics.cpu", None)), (10, 2, 1, 7));
    assert_eq!(counts(&describe(&items, "metrics.cpu.current", None)), (10, 2, 0, 8));
    for s in summarize_properties(&profile(&items)) {
        assert_eq!(s.present_count + s.null_count + s.missing_count, s.total_count, "{}", s.path);
        assert_eq!(s.total_count, 10, "{}", s.path);
    }
    let md = markdown(items);
    assert!(md.contains("- `metrics.cpu.current` (number, 2/10 present)"), "{md}");
    assert!(md.contains("- `metrics` (object, 4/10 present)"), "{md}");
    assert!(md.contains("- `metrics.cpu` (object, 2/10 present, 1 null)"), "{md}");
}

#[test]
fn array_element_paths_count_over_every_element_of_those_arrays() {
    // 5 elements in all: 3 with `v` (one null), 1 without, 1 not an object.
    let items = vec![
        json!({"readings": [{"v": 1}, {"v": null}]}),
        json!({"readings": [{"w": 2}, 7, {"v": 3}]}),
        json!({"other": true}),
    ];
    let d = describe(&items, "readings[].v", None);
    assert_eq!(counts(&d), (5, 2, 1, 2));
    assert_eq!(d["totalOf"], "elements of `readings[]` in all items");
    assert_eq!(counts(&describe(&items, "readings", None)), (3, 2, 0, 1));
    let md = markdown(items);
    assert!(md.contains("- `readings[].v` (integer, 2/5 elements present, 1 null)"), "{md}");
}

#[test]
fn present_excludes_null_everywhere() {
    let items = vec![json!({"a": 1}), json!({"a": null}), json!({})];
    assert_eq!(counts(&describe(&items, "a", None)), (3, 1, 1, 1));
    let s = summarize_properties(&profile(&items));
    assert_eq!((s[0].present_count, s[0].null_count, s[0].missing_count), (1, 1, 1));
}

#[test]
fn tiny_numbers_keep_their_significant_digits() {
    let values: Vec<Value> =
        [1.234567e-8, 2.5e-8, 6e-8, 9.87654321e-8].iter().map(|v| json!({ "x": v })).collect();
    let d = describe(&values, "x", None);
    assert_eq!(d["min"], json!(1.234567e-8));
    assert_eq!(d["max"], json!(9.87654321e-8));
    // Mean by hand: (1.234567 + 2.5 + 6 + 9.87654321) / 4 = 19.61111021 / 4 = 4.9027775525 (e-8).
    assert_eq!(d["avg"].as_f64().expect("avg"), 4.9027775525e-8);
    assert_eq!(d["median"].as_f64().expect("median"), 4.25e-8);
    assert!(d["stdDev"].as_f64().expect("std") > 3e-8);
    for bin in d["histogram"].as_array().expect("bins") {
        for edge in [&bin["min"], &bin["max"]] {
            let text = edge.to_string();
            assert!(text.len() <= 6, "edge with float noise: {text}");
        }
    }
}

#[test]
fn huge_and_tiny_values_in_one_property_and_negative_zero() {
    let values = vec![
        json!({"x": 1e-9}),
        json!({"x": 1e15}),
        json!({"x": -0.0}),
        json!({"x": 0.6000000000000001}),
    ];
    let d = describe(&values, "x", None);
    assert_eq!(d["min"], json!(0.0));
    assert_eq!(d["min"].to_string(), "0.0");
    assert_eq!(d["max"], json!(1e15));
    let md = markdown(values);
    assert!(md.contains(": 0 - 1e15"), "{md}");
}

#[test]
fn integers_past_two_to_the_53_are_shown_exactly() {
    let values = vec![
        json!({"id": 9_007_199_254_740_993u64}),
        json!({"id": 9_007_199_254_740_995u64}),
        json!({"id": -9_007_199_254_740_993i64}),
    ];
    let d = describe(&values, "id", None);
    assert_eq!(d["max"], json!(9_007_199_254_740_995u64));
    assert_eq!(d["min"], json!(-9_007_199_254_740_993i64));
    let md = markdown(values);
    assert!(md.contains("-9007199254740993 - 9007199254740995"), "{md}");
}

#[test]
fn asked_bin_counts_are_honoured_and_no_bin_holds_only_the_maximum() {
    let ints: Vec<Value> = (0..=100).map(|i| json!({ "n": i })).collect();
    for bins in [1, 3, 4, 5, 7, 10, 37] {
        let d = describe(&ints, "n", Some(bins));
        let h = d["histogram"].as_array().expect("bins");
        assert_eq!(h.len(), bins, "{bins}: {h:?}");
        assert_eq!(h.iter().map(|b| b["count"].as_u64().unwrap_or(0)).sum::<u64>(), 101);
        assert!(h.iter().all(|b| b["count"].as_u64() > Some(0)), "{bins}: {h:?}");
    }
    let four = describe(&ints, "n", Some(4));
    let ranges: Vec<&str> = four["histogram"]
        .as_array()
        .expect("bins")
        .iter()
        .filter_map(|b| b["range"].as_str())
        .collect();
    assert_eq!(ranges, ["0-24", "25-49", "50-74", "75-100"]);
    let floats: Vec<Value> = (0..=30).map(|i| json!({ "f": f64::from(i) / 10.0 + 0.05 })).collect();
    for bins in [2, 3, 4, 6, 9] {
        let d = describe(&floats, "f", Some(bins));
        assert_eq!(d["histogram"].as_array().map(Vec::len), Some(bins), "{bins}");
    }
}

#[test]
fn equal_width_bin_edges_keep_six_significant_digits() {
    // PageRank-like scores: 6 bins over [0.0026343092633327346, 0.03319493743687862] have no round
    // edges, so they are equal-width; the inner edges used to be cut to 4 digits (0.007728).
    let (min, max) = (0.0026343092633327346, 0.03319493743687862);
    let values: Vec<Value> =
        (0..=60).map(|i| json!({ "rank": min + (max - min) * f64::from(i) / 60.0 })).collect();
    let d = describe(&values, "rank", Some(6));
    let edges: Vec<f64> =
        d["histogram"].as_array().expect("bins").iter().filter_map(|b| b["min"].as_f64()).collect();
    assert_eq!(edges.len(), 6);
    assert_eq!(edges[0], min, "the first edge is the minimum, exactly");
    let width = (max - min) / 6.0;
    for (i, edge) in edges.iter().enumerate().skip(1) {
        let exact = min + width * i as f64;
        assert_eq!(*edge, schemascope_core::figure::significant(exact, 6), "edge {i}");
        assert!((edge - exact).abs() <= exact * 1e-5, "edge {i}: {edge} vs {exact}");
        assert!(edge.to_string().len() <= 10, "no float noise: {edge}");
    }
    assert_eq!(edges[1], 0.00772775);
}

#[test]
fn skewed_data_gets_bins_that_show_the_distribution() {
    // PageRank-like: most values tiny, a few large.
    let mut values: Vec<Value> = (1..=200).map(|i| json!({ "r": f64::from(i) * 1e-4 })).collect();
    values.extend([json!({"r": 0.5}), json!({"r": 2.0}), json!({"r": 9.0})]);
    let d = describe(&values, "r", None);
    assert_eq!(d["histogramScale"], "log");
    let h = d["histogram"].as_array().expect("bins");
    let nonempty = h.iter().filter(|b| b["count"].as_u64() > Some(0)).count();
    assert!(nonempty * 2 >= h.len(), "most bins empty: {h:?}");
    // With zeros, a log scale is impossible: outlier bins instead.
    let mut zeros: Vec<Value> = (0..200).map(|i| json!({ "z": i % 10 })).collect();
    zeros.extend([json!({"z": 0}), json!({"z": 10_000})]);
    let d = describe(&zeros, "z", None);
    assert_eq!(d["histogramScale"], "linearWithOutlierBins");
    let h = d["histogram"].as_array().expect("bins");
    assert_eq!(h.last().and_then(|b| b["count"].as_u64()), Some(1));
    assert_eq!(h.iter().map(|b| b["count"].as_u64().unwrap_or(0)).sum::<u64>(), 202);
}

#[test]
fn long_string_truncation_notes_state_the_true_length() {
    let long = "é".repeat(264);
    let d = describe(&[json!({ "s": long })], "s", None);
    let shown = d["values"][0]["value"].as_str().expect("value");
    assert!(shown.ends_with("[truncated: 264 chars]"), "{shown}");
    assert_eq!(d["maxLength"], 264);
}

#[test]
fn hidden_controls_are_escaped_in_markdown_and_exact_in_json() {
    let evil = "ok\u{202E}gnp.exe\u{0}\u{1b}[31m";
    let values = vec![json!({ "kind": evil, format!("k\u{202E}ey"): 1 }), json!({"kind": "plain"})];
    let md = markdown(values.clone());
    assert!(!md.chars().any(|c| c.is_control() && c != '\n' || c == '\u{202E}'), "{md:?}");
    assert!(md.contains("\\u{202E}"), "{md}");
    let d = describe(&values, "kind", None);
    let listed: Vec<&str> = d["values"]
        .as_array()
        .expect("values")
        .iter()
        .filter_map(|v| v["value"].as_str())
        .collect();
    assert!(listed.contains(&evil));
}

/// Documents that are not objects (an NDJSON line that is a number, a string, an array or
/// null) are counted as documents and said to be no objects, not left to read as documents
/// missing every property.
#[test]
fn documents_that_are_not_objects_are_named_with_their_types() {
    let items =
        vec![json!({"a": 1}), json!({"a": 2}), json!(42), json!("text"), json!([1, 2]), json!(7)];
    let md = markdown(items);
    assert!(md.contains("(6 documents)"), "{md}");
    assert!(md.contains("- (4 of 6 documents are not objects and have no properties: 2 integer, 1 string, 1 array)"), "{md}");
    assert!(md.contains("- `a` (integer, 2/6 present)"), "{md}");
    // All objects: no such line.
    let md = markdown(vec![json!({"a": 1}), json!({})]);
    assert!(!md.contains("not objects"), "{md}");
}
