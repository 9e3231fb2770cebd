//! Items nested deeper than the profile and the selectors read: what selectors and the markdown
//! say about them is true (depth is named as the cause, never "no such property").

use schemascope_core::collection::{Collection, CollectionKind, OwnedItem};
use schemascope_core::display::DisplayLimits;
use schemascope_core::markdown::schema_markdown;
use schemascope_core::selector::{Selector, find_items};
use serde_json::{Value, json};

/// `{"a": {"a": … leaf …}}`, `depth` objects deep.
fn nested(depth: usize, leaf: Value) -> Value {
    (0..depth).fold(leaf, |inner, _| json!({ "a": inner }))
}

fn deep_documents() -> Collection {
    let items = [130, 140].into_iter().map(|depth| {
        OwnedItem::new(
            format!("d{depth}"),
            json!({"type": "deep", "deep": nested(depth, json!({"leaf": 1}))}),
        )
    });
    Collection::from_values("docs", CollectionKind::Documents, items)
}

#[test]
fn a_path_past_the_profiled_depth_is_not_called_missing() {
    let docs = deep_documents();
    // Both items hold `deep.a…a` (70 levels): below the 64 the profile reads, above the 100 the
    // selectors read (the items are read cut there), so the selector answers.
    let selector = format!("length(deep{}) > `0`", ".a".repeat(70));
    let found = find_items(
        &docs,
        &[],
        &Selector::parse(&selector).expect("parses"),
        5,
        &DisplayLimits::default(),
    )
    .expect("runs");
    assert_eq!((found.count, found.unevaluated.count), (2, 0), "{:?}", found.unevaluated);
    // Past the 100 levels: not evaluated, depth named as the cause, never "no such property".
    let selector = format!("length(deep{}) > `0`", ".a".repeat(105));
    let found = find_items(
        &docs,
        &[],
        &Selector::parse(&selector).expect("parses"),
        5,
        &DisplayLimits::default(),
    )
    .expect("runs");
    assert_eq!(found.count, 0);
    assert_eq!(found.unevaluated.count, 2);
    assert!(
        found
            .unevaluated
            .example_error
            .as_deref()
            .is_some_and(|e| e.contains("nested deeper than 100 levels")),
        "{:?}",
        found.unevaluated
    );
    assert_eq!(found.hints.len(), 1, "{:?}", found.hints);
    let hint = &found.hints[0];
    assert!(!hint.starts_with("No document has a property"), "{hint}");
    assert!(!hint.contains("Did you mean"), "{hint}");
    assert!(hint.contains("nest deeper than the profile reads (64 levels)"), "{hint}");
    assert!(hint.contains(&format!("lies below `deep{}`", ".a".repeat(63))), "{hint}");
}

#[test]
fn a_property_no_item_has_is_still_called_missing() {
    let docs = deep_documents();
    let found = find_items(
        &docs,
        &[],
        &Selector::parse("length(colour) > `0`").expect("parses"),
        5,
        &DisplayLimits::default(),
    )
    .expect("runs");
    assert!(
        found.hints.iter().any(|h| h.starts_with("No document has a property `colour`")),
        "{:?}",
        found.hints
    );
}

#[test]
fn markdown_code_spans_hold_keys_with_backticks() {
    let items = [OwnedItem::new("1", json!({"a`b": 1, "``c": "x"}))];
    let docs = Collection::from_values("we`ird", CollectionKind::Documents, items);
    let md = schema_markdown("s`rc", &[&docs], None).markdown;
    assert!(md.contains("## Data Schema: ``s`rc``"), "{md}");
    assert!(md.contains("**Collection ``we`ird``**"), "{md}");
    // Paths quote keys that are not identifiers, as JMESPath does.
    assert!(md.contains("- ``\"a`b\"`` (integer)"), "{md}");
    assert!(md.contains("- ```\"``c\"``` (string)"), "{md}");
}

#[test]
fn samples_show_twenty_levels_and_count_what_is_cut() {
    use schemascope_core::sample::{SampleOptions, SampleStrategy, sample};
    let items = [
        OwnedItem::new("shallow", json!({"v": nested(18, json!({"leaf": 1}))})),
        OwnedItem::new("deep", json!({"v": nested(30, json!(1))})),
    ];
    let docs = Collection::from_values("docs", CollectionKind::Documents, items);
    let options = SampleOptions {
        count: 2,
        strategy: SampleStrategy::Random,
        seed: Some(1),
        ..SampleOptions::default()
    };
    let sampled = sample(&docs, &options).expect("samples");
    let by_id = |id: &str| {
        sampled.items.iter().find(|i| i["id"] == id).map(|i| i["data"].clone()).expect("sampled")
    };
    // `v`, 18 objects and the leaf object: its value is 20 levels below the data, all shown.
    let shallow = by_id("shallow").to_string();
    assert!(shallow.contains("\"leaf\":1") && !shallow.contains("depth limit"), "{shallow}");
    let deep = by_id("deep");
    let mut at = &deep;
    for _ in 0..19 {
        at = at.as_object().and_then(|o| o.values().next()).expect("an object");
    }
    assert_eq!(at["a"], json!("[depth limit: object with 1 keys]"), "{at}");
    assert_eq!(sampled.depth_limited, 1);
}
