//! The 10,000-path profiling limit is never silent: on generated data with more distinct keys
//! than the limit, the summary, the markdown and describe_property say what it kept out.

use schemascope_core::collection::{Collection, CollectionKind, OwnedItem};
use schemascope_core::markdown::schema_markdown;
use schemascope_core::profile::{ProfileLimits, Unprofiled};
use schemascope_core::property::{PropertyOptions, describe_property};
use schemascope_core::summary::summarize_collection;
use schemascope_core::{ProfileBuilder, PropertyPath};
use serde_json::{Value, json};

/// 12,000 documents, each with `id` and one key of its own (`k<i>`): 12,001 distinct paths.
fn unique_keys() -> Collection {
    let items =
        (0..12_000).map(|i| OwnedItem::new(i.to_string(), json!({"id": i, format!("k{i}"): 1})));
    Collection::from_values("docs", CollectionKind::Documents, items)
}

fn describe(collection: &Collection, path: &str) -> (String, Value) {
    let path: PropertyPath = path.parse().expect("path");
    let answer =
        describe_property(collection.profile(), "documents", &path, PropertyOptions::default());
    (answer.message, answer.data)
}

#[test]
fn the_profile_and_summary_count_the_keys_past_the_limit() {
    let docs = unique_keys();
    let profile = docs.profile();
    // `id` and k0..k9998 fill the 10,000 paths; k9999..k11999 are refused.
    assert_eq!(profile.properties().len(), 10_000);
    assert!(profile.path_limit_hit);
    assert_eq!(profile.path_limit.max_paths, 10_000);
    assert_eq!(profile.path_limit.unprofiled, 2_001);
    assert!(!profile.path_limit.more_unprofiled);
    let summary = serde_json::to_value(summarize_collection(&docs)).expect("json");
    assert_eq!(summary["pathLimitHit"], json!(true));
    assert_eq!(summary["pathLimit"]["maxPaths"], json!(10_000));
    assert_eq!(summary["pathLimit"]["unprofiled"], json!(2_001));
}

#[test]
fn the_markdown_says_the_limit_was_hit_and_counts_every_property_not_shown() {
    let docs = unique_keys();
    let full = schema_markdown("src", &[&docs], None);
    assert!(
        full.markdown.contains("- +2001 more properties not profiled: past the 10,000-path limit"),
        "{}",
        &full.markdown[full.markdown.len() - 300..]
    );
    assert_eq!(full.properties_not_profiled, 2_001);
    // Under a budget: 10,000 profiled properties minus those listed, plus the 2,001 never profiled.
    let fitted = schema_markdown("src", &[&docs], Some(400));
    let listed = fitted.markdown.lines().filter(|l| l.starts_with("- `")).count();
    let more = fitted.markdown.lines().find(|l| l.starts_with("- +")).expect("a +N more line");
    let expected = 10_000 - listed + 2_001;
    assert!(
        more.starts_with(&format!(
            "- +{expected} more properties ({} left out for the token budget",
            10_000 - listed
        )),
        "{more}"
    );
    assert!(more.contains("2001 not profiled: past the 10,000-path limit"), "{more}");
    assert_eq!(fitted.properties_omitted, 10_000 - listed);
}

#[test]
fn describe_property_says_not_profiled_for_a_key_past_the_limit() {
    let docs = unique_keys();
    let (message, data) = describe(&docs, "k11000");
    assert!(message.contains("not profiled: past the 10,000-path limit"), "{message}");
    assert_eq!(data["exists"], json!(true));
    assert_eq!(data["profiled"], json!(false));
    assert_eq!(data["pathLimit"], json!(10_000));
    // Below a refused key nothing was read: whether a member exists is not known.
    let (message, data) = describe(&docs, "k11000.inner");
    assert!(message.contains("under 'k11000'"), "{message}");
    assert_eq!(data["exists"], Value::Null);
    // A profiled key and a key that is nowhere keep their answers.
    assert_eq!(describe(&docs, "k5").1["presentCount"], json!(1));
    let (message, data) = describe(&docs, "nowhere");
    assert!(message.contains("was not found"), "{message}");
    assert_eq!(data["exists"], json!(false));
}

#[test]
fn merged_parts_tell_refused_keys_from_keys_profiled_in_part() {
    let limits = ProfileLimits { max_paths: 3, ..ProfileLimits::default() };
    // Part A sees a, b, c, d and refuses d; part B sees only d.
    let mut a = ProfileBuilder::with_limits(limits);
    for key in ["a", "b", "c", "d"] {
        a.add_value(&json!({ key: 1 }));
    }
    let mut b = ProfileBuilder::with_limits(limits);
    b.add_value(&json!({"d": 2}));
    // Merged into B: d is profiled (from B's occurrence only), a and b join, c is refused.
    b.merge(a);
    let profile = b.finish(5);
    let d: PropertyPath = "d".parse().expect("path");
    assert_eq!(profile.property(&d).map(|p| p.present), Some(1));
    assert_eq!(profile.path_limit.partial, vec![d.clone()]);
    assert_eq!(profile.path_limit.unprofiled, 1);
    assert_eq!(
        profile.path_limit.unprofiled_at(&"c".parse().expect("path")),
        Some(Unprofiled::Refused)
    );
    assert_eq!(profile.path_limit.unprofiled_at(&d), None);
    let answer = describe_property(&profile, "documents", &d, PropertyOptions::default());
    assert_eq!(answer.data["partial"], json!(true));
    assert!(answer.message.contains("counts are partial"), "{}", answer.message);
}

#[test]
fn reaching_the_limit_exactly_keeps_nothing_out() {
    let limits = ProfileLimits { max_paths: 2, ..ProfileLimits::default() };
    let mut builder = ProfileBuilder::with_limits(limits);
    builder.add_value(&json!({"a": 1, "b": 2}));
    builder.add_value(&json!({"a": 3}));
    let profile = builder.finish(2);
    assert!(!profile.path_limit_hit);
    assert!(profile.path_limit.is_clear());
}

/// Documents whose arrays hold objects with keys of their own: the paths live below `a[]`.
fn nested_lines(range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| json!({"a": [{format!("k{i}"): 1, "x": {format!("y{i}"): 2}}]}).to_string())
        .collect()
}

#[test]
fn merged_builders_keep_the_limit_below_arrays_too() {
    // Two builders (two slices, two streamed workers) each under the limit, merged: array
    // elements' paths count against the merged limit as the others do.
    let mut first = ProfileBuilder::new();
    for line in nested_lines(0..3_000) {
        first.add_json(&line).expect("valid");
    }
    let mut second = ProfileBuilder::new();
    for line in nested_lines(3_000..9_000) {
        second.add_json(&line).expect("valid");
    }
    let mut one = ProfileBuilder::new();
    for line in nested_lines(0..9_000) {
        one.add_json(&line).expect("valid");
    }
    // The second builder has no `a` yet when merged into a fresh one: its element subtree is
    // merged member by member.
    let mut merged = ProfileBuilder::new();
    merged.merge(second);
    merged.merge(first);
    let (merged, one) = (merged.finish(9_000), one.finish(9_000));
    assert_eq!(merged.properties().len(), one.properties().len());
    assert!(merged.properties().len() <= 10_000, "{}", merged.properties().len());
    assert!(merged.path_limit_hit && one.path_limit_hit);
}
