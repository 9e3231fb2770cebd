//! Integers past 2^53 (up to the ends of the i64 and u64 ranges, which JSON carries exactly) are
//! counted, ranked and shown exactly by describe_property, the summary and the inferred schema:
//! distinct counts, top values, median, mean, standard deviation, extremes and histogram labels,
//! checked against hand computations in exact integer arithmetic.

use schemascope_core::collection::{Collection, CollectionKind, OwnedItem};
use schemascope_core::json_schema::infer_schema;
use schemascope_core::markdown::schema_markdown;
use schemascope_core::profile::{CollectionProfile, NumberProfile};
use schemascope_core::property::{PropertyOptions, describe_property};
use schemascope_core::validate::validate;
use schemascope_core::{ProfileBuilder, PropertyPath};
use serde_json::{Value, json};

const TWO_53: i64 = 1 << 53;

/// Profiles `{"n": v}` items, as JSON text (the tape scanner's path) and as parsed values (the
/// serde path), which must agree.
fn profile(values: &[Value]) -> CollectionProfile {
    let items: Vec<Value> = values.iter().map(|v| json!({ "n": v })).collect();
    let mut by_text = ProfileBuilder::new();
    let mut by_value = ProfileBuilder::new();
    for item in &items {
        by_text.add_json(&item.to_string()).expect("valid json");
        by_value.add_value(item);
    }
    let (text, value) = (by_text.finish(items.len() as u64), by_value.finish(items.len() as u64));
    let path: PropertyPath = "n".parse().expect("path");
    let (a, b) = (
        text.property(&path).and_then(|p| p.numbers.clone()),
        value.property(&path).and_then(|p| p.numbers.clone()),
    );
    let facts = |n: NumberProfile| (n.distinct, n.median_value(), n.mean, n.std_dev, n.top);
    assert_eq!(a.map(facts), b.map(facts));
    text
}

fn describe(values: &[Value], bins: Option<usize>) -> Value {
    describe_property(
        &profile(values),
        "items",
        &"n".parse().expect("path"),
        PropertyOptions { limit: 20, bins },
    )
    .data
}

/// The brief's values: 2^53, 2^53+1 (twice), 2^53+2, i64::MAX, i64::MIN, -2^53-1, small ints, nulls.
fn mixed_values() -> Vec<Value> {
    vec![
        json!(TWO_53),
        json!(TWO_53 + 1),
        json!(null),
        json!(TWO_53 + 2),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(-TWO_53 - 1),
        json!(1),
        json!(2),
        json!(3),
        json!(null),
        json!(TWO_53 + 1),
        json!(7),
    ]
}

#[test]
fn distinct_counts_and_top_values_are_keyed_by_the_exact_integer() {
    let d = describe(&mixed_values(), None);
    assert_eq!((d["numberCount"].clone(), d["nullCount"].clone()), (json!(11), json!(2)));
    // 2^53 and 2^53+1 share one double, and so do 2^53+2 and 2^53+3: counted apart here.
    assert_eq!(d["distinctNumbers"], 10);
    assert_eq!(d["uniqueCount"], 10);
    let values: Vec<(Value, u64)> = d["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| (v["value"].clone(), v["count"].as_u64().unwrap_or(0)))
        .collect();
    let expected: Vec<(Value, u64)> = vec![
        (json!(TWO_53 + 1), 2),
        (json!(i64::MIN), 1),
        (json!(-TWO_53 - 1), 1),
        (json!(1), 1),
        (json!(2), 1),
        (json!(3), 1),
        (json!(7), 1),
        (json!(TWO_53), 1),
        (json!(TWO_53 + 2), 1),
        (json!(i64::MAX), 1),
    ];
    assert_eq!(values, expected);
    assert_eq!((d["min"].clone(), d["max"].clone()), (json!(i64::MIN), json!(i64::MAX)));
    // Sorted: MIN, -2^53-1, 1, 2, 3, 7, 2^53, 2^53+1, 2^53+1, 2^53+2, MAX; the 6th of 11 is 7.
    assert_eq!(d["median"], json!(7));
    assert_eq!(d["median"].to_string(), "7");
}

#[test]
fn medians_of_large_integers_are_a_value_or_the_exact_midpoint_of_two() {
    assert_eq!(
        describe(&[json!(TWO_53), json!(TWO_53 + 1), json!(TWO_53 + 3)], None)["median"],
        json!(TWO_53 + 1)
    );
    // (2^53+1 + 2^53+2) / 2 is no double: its exact decimal, as text.
    let even =
        describe(&[json!(TWO_53), json!(TWO_53 + 1), json!(TWO_53 + 2), json!(TWO_53 + 3)], None);
    assert_eq!(even["median"], json!("9007199254740993.5"));
    let top = describe(&[json!(u64::MAX), json!(u64::MAX - 2), json!(u64::MAX - 1)], None);
    assert_eq!(top["median"], json!(u64::MAX - 1));
    assert_eq!(top["max"], json!(u64::MAX));
    // A midpoint a double holds is a JSON number.
    assert_eq!(
        describe(&[json!(1), json!(2), json!(i64::MAX), json!(-5)], None)["median"],
        json!(1.5)
    );
}

#[test]
fn mean_and_spread_come_from_the_exact_sum() {
    // As doubles these are one value (2^63): mean 2^63, spread 0.
    let top = describe(&[json!(i64::MAX - 2), json!(i64::MAX - 1), json!(i64::MAX)], None);
    assert_eq!(top["stdDev"], json!(1.0));
    assert_eq!(top["distinctNumbers"], 3);
    // i64::MIN + i64::MAX = -1: the mean is -0.5, not the 0 of doubles.
    let ends = describe(&[json!(i64::MIN), json!(i64::MAX)], None);
    assert_eq!(ends["avg"], json!(-0.5));
    assert_eq!(ends["median"], json!(-0.5));
    // Sum 27021597764222991 over 11 values, by hand: 2456508887656635.545…, to 15 digits.
    let d = describe(&mixed_values(), None);
    assert_eq!(d["avg"], json!(2_456_508_887_656_640.0));
    let small = describe(&[json!(TWO_53), json!(TWO_53 + 1), json!(TWO_53 + 2)], None);
    assert_eq!(small["stdDev"], json!(1.0));
}

#[test]
fn histogram_bins_of_large_integers_count_and_name_them_exactly() {
    let values: Vec<Value> = [
        0,
        999_999_999_999_999_999,
        1_000_000_000_000_000_000,
        1_999_999_999_999_999_999,
        2_000_000_000_000_000_000,
    ]
    .iter()
    .map(|&v: &i64| json!(v))
    .collect();
    let d = describe(&values, Some(2));
    let bins: Vec<(String, u64)> = d["histogram"]
        .as_array()
        .expect("bins")
        .iter()
        .map(|b| {
            (b["range"].as_str().unwrap_or_default().to_string(), b["count"].as_u64().unwrap_or(0))
        })
        .collect();
    // 999999999999999999 is below the edge 1e18 although its double is 1e18.
    assert_eq!(bins, [("0-999999999999999999".to_string(), 2), ("1e18 to 2e18".to_string(), 3)]);
}

#[test]
fn the_schema_summary_and_validation_use_the_exact_bounds() {
    let profile = profile(&mixed_values());
    let schema = infer_schema(&profile);
    assert_eq!(
        schema["properties"]["n"]["x-observed"],
        json!({"minimum": i64::MIN, "maximum": i64::MAX})
    );
    let small = infer_schema(&self::profile(&[json!(TWO_53 + 1), json!(5)]));
    assert!(validate(&small, &json!({"n": TWO_53 + 1})).expect("validates").warnings.is_empty());
    let above = validate(&small, &json!({"n": TWO_53 + 2})).expect("validates");
    assert!(
        above
            .warnings
            .iter()
            .any(|w| w.keyword == "maximum" && w.error.contains("9007199254740993")),
        "{:?}",
        above.warnings
    );
    let items = mixed_values()
        .into_iter()
        .enumerate()
        .map(|(i, v)| OwnedItem::new(i.to_string(), json!({ "n": v })));
    let markdown = schema_markdown(
        "src",
        &[&Collection::from_values("items", CollectionKind::Documents, items)],
        None,
    )
    .markdown;
    assert!(markdown.contains("-9223372036854775808 - 9223372036854775807"), "{markdown}");
}

/// Tester round: the first bin's edge, a double, lies above -2^53 - 1 (written -2^53), and the
/// smallest value fell out of every bin while the bins still said 100%.
#[test]
fn the_smallest_value_is_counted_when_its_double_rounds_up() {
    for bins in [1, 3, 7] {
        let described = describe(&[json!(-TWO_53 - 1), json!(0), json!(1)], Some(bins));
        let counts: Vec<u64> = described["histogram"]
            .as_array()
            .expect("histogram")
            .iter()
            .map(|bin| bin["count"].as_u64().expect("count"))
            .collect();
        assert_eq!(counts.iter().sum::<u64>(), 3, "{bins} bins: {described}");
        assert!(counts[0] >= 1, "{bins} bins: {described}");
    }
}
