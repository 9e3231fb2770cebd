//! The schema-only pass against the full profile: the same items must give the very same JSON
//! Schema text either way, on generated, hostile and real items, read whole or in merged parts,
//! within and past the path and depth limits.

use serde_json::{Value, json};

use super::tape_differential::Gen;
use super::{ProfileBuilder, ProfileLimits, SchemaBuilder};
use crate::json_schema::{infer_schema, schema_of};

/// The schema of `items` both ways, each read by `parts` builders (items dealt out in
/// contiguous runs, positioned as a streamed file's blocks are) and merged: (full, schema-only).
fn both(items: &[String], limits: ProfileLimits, parts: usize) -> (String, String) {
    let parts = parts.max(1);
    let run = items.len().div_ceil(parts).max(1);
    let mut full: Option<ProfileBuilder> = None;
    let mut only: Option<SchemaBuilder> = None;
    let mut good = 0u64;
    for (p, chunk) in items.chunks(run).enumerate() {
        let mut f = ProfileBuilder::with_limits(limits).capture_ids();
        let mut s = SchemaBuilder::with_limits(limits).capture_ids();
        for (i, text) in chunk.iter().enumerate() {
            let position = ((p * run + i) as u64) << 8;
            f.set_position(position);
            s.set_position(position);
            let a = f.add_json_whole(text).map_err(|e| e.to_string());
            let b = s.add_json_whole(text).map_err(|e| e.to_string());
            let id = |r: Result<Option<crate::ItemId>, String>| {
                r.map(|id| id.map(|id| id.resolve(text).to_string()))
            };
            let (a, b) = (id(a), id(b));
            assert_eq!(a, b, "{text}");
            good += u64::from(a.is_ok());
        }
        match &mut full {
            Some(b) => b.merge(f),
            None => full = Some(f),
        }
        match &mut only {
            Some(b) => b.merge(s),
            None => only = Some(s),
        }
    }
    let full = full.unwrap_or_default().finish(good);
    let only = only.unwrap_or_default().finish(good);
    let text = |v: Value| serde_json::to_string_pretty(&v).expect("serializable");
    (text(infer_schema(&full)), text(schema_of(&only)))
}

/// Asserts that `items` give the same schema both ways, whole and in several merged parts.
fn assert_same(case: &str, items: &[String], limits: ProfileLimits) {
    for parts in [1, 2, 3, 7] {
        let (full, only) = both(items, limits, parts);
        assert!(
            full == only,
            "{case}, {parts} part(s):\nfull profile:\n{full}\nschema only:\n{only}"
        );
    }
}

fn texts(values: &[Value]) -> Vec<String> {
    values.iter().map(Value::to_string).collect()
}

#[test]
fn generated_items_give_the_same_schema_as_the_full_profile() {
    let mut generator = Gen(fastrand::Rng::with_seed(20261128));
    for batch in 0..300 {
        let items: Vec<String> = (0..40).map(|_| generator.item()).collect();
        assert_same(&format!("batch {batch}"), &items, ProfileLimits::default());
    }
}

#[test]
fn generated_items_past_small_path_and_depth_limits_give_the_same_schema() {
    let mut generator = Gen(fastrand::Rng::with_seed(28));
    for (batch, limits) in (0..120).map(|b| {
        let limits = ProfileLimits { max_paths: 1 + b % 9, max_depth: 1 + b % 4 };
        (b, limits)
    }) {
        let items: Vec<String> = (0..30).map(|_| generator.item()).collect();
        assert_same(&format!("batch {batch}, {limits:?}"), &items, limits);
    }
}

#[test]
fn hostile_items_give_the_same_schema_as_the_full_profile() {
    let deep = |n: usize, leaf: Value, array: bool| {
        (0..n).fold(leaf, |v, _| if array { json!([v]) } else { json!({ "n": v }) })
    };
    let cases: Vec<(&str, Vec<Value>)> = vec![
        (
            "nulls everywhere",
            vec![json!(null), json!({"a": null}), json!({"a": null, "b": [null]})],
        ),
        (
            "mixed types",
            vec![
                json!({"v": 1}),
                json!({"v": 1.5}),
                json!({"v": "x"}),
                json!({"v": true}),
                json!({"v": [1]}),
                json!({"v": {"w": 1}}),
                json!({"v": null}),
            ],
        ),
        (
            "ten distinct values, each twice",
            (0..20).map(|i| json!({"s": format!("v{}", i % 10)})).collect(),
        ),
        ("eleven distinct values", (0..22).map(|i| json!({"s": format!("v{}", i % 11)})).collect()),
        (
            "ten values, seen too few times",
            (0..19).map(|i| json!({"s": format!("v{}", i % 10)})).collect(),
        ),
        (
            "few values with nulls and a number",
            vec![json!({"s": "a"}), json!({"s": "a"}), json!({"s": null}), json!({"s": 1})],
        ),
        (
            "formats read from whole strings past 256 bytes",
            [250, 256, 257, 1_000]
                .iter()
                .map(|&n| {
                    let fraction = "5".repeat(n - 21);
                    json!({
                        "url": format!("https://example.com/{}", "a".repeat(n - 20)),
                        "at": format!("2024-01-01T00:00:00.{fraction}Z"),
                        "mixed": if n == 1_000 { json!("x".repeat(n)) } else { json!("2024-01-01") },
                    })
                })
                .collect(),
        ),
        (
            "strings around 64 characters and 256 bytes",
            [63, 64, 65, 255, 256, 257, 300]
                .iter()
                .flat_map(|&n| {
                    let s = "é".repeat(n / 2) + &"x".repeat(n % 2);
                    [
                        json!({"e": s.clone(), "a": "a".repeat(n)}),
                        json!({"e": s, "a": "a".repeat(n)}),
                    ]
                })
                .collect(),
        ),
        (
            "a long string among few short ones",
            vec![json!("a"), json!("a"), json!("b"), json!("b"), json!("x".repeat(65))],
        ),
        (
            "a long url and a long date-like string",
            vec![
                json!(format!("https://example.com/{}", "p".repeat(400))),
                json!(format!("https://example.com/{}", "q".repeat(400))),
                json!(format!("2024-01-01T00:00:00.{}Z", "1".repeat(300))),
            ],
        ),
        (
            "integers past 2^53",
            vec![
                json!(9_007_199_254_740_993_u64),
                json!(-9_007_199_254_740_993_i64),
                json!(u64::MAX),
                json!(i64::MIN),
                json!(5),
            ],
        ),
        ("integers past 2^53 with floats", vec![json!(9_007_199_254_740_993_u64), json!(0.5)]),
        (
            "big and tiny floats, zeros",
            vec![
                json!(1e-300),
                json!(1.7e308),
                json!(-1.7e308),
                json!(-0.0),
                json!(0),
                json!(5e-324),
            ],
        ),
        ("negative zero alone", vec![json!(-0.0), json!(-0.0)]),
        ("integer and float zeros", vec![json!(0), json!(-0.0), json!(0.0)]),
        (
            "unicode and control characters",
            vec![
                json!({"k": "Zoë", "é": "日本", "😀": "\u{202e}"}),
                json!({"k": "ZOË", "é": "\u{0}", "😀": "a\nb"}),
                json!({"k": "Zoë", "é": "日本", "😀": "\u{202e}"}),
            ],
        ),
        (
            "formats, all and but one",
            vec![
                json!({"t": "2024-01-01T00:00:00Z", "d": "2024-01-01", "u": "https://a.b/c", "m": "a@b.co", "i": "10.0.0.1", "g": "123e4567-e89b-12d3-a456-426614174000"}),
                json!({"t": "2024-02-30T00:00:00Z", "d": "2024-01-02", "u": "https://a.b/d", "m": "x", "i": "10.0.0.2", "g": "123e4567-e89b-12d3-a456-426614174001"}),
                json!({"t": "2024-03-01T00:00:00+01:00", "d": "2024-01-02", "u": "ftp://a.b", "m": "c@d.org", "i": "999.0.0.1", "g": "x"}),
            ],
        ),
        (
            "empty arrays and objects",
            vec![json!([]), json!({"a": []}), json!({"a": [[]]}), json!({}), json!({"o": {}})],
        ),
        ("only empty arrays", vec![json!({"a": []}), json!({"a": []})]),
        (
            "arrays of mixed elements",
            vec![json!({"xs": [1, "a"]}), json!({"xs": [{"k": 1}]}), json!({"xs": []})],
        ),
        ("deep objects past the schema's depth limit", vec![deep(30, json!(1), false)]),
        ("deep arrays past the schema's depth limit", vec![deep(30, json!("x"), true)]),
        (
            "nesting past the profile's depth limit",
            vec![deep(70, json!(1), false), deep(70, json!([1]), true)],
        ),
        (
            "keys in other orders",
            vec![json!({"b": 1, "a": 2}), json!({"a": 1, "c": 3}), json!({"c": 1, "b": 1, "d": 1})],
        ),
        (
            "many keys in one object",
            vec![Value::Object((0..3_000).map(|i| (format!("k{i}"), json!(i))).collect())],
        ),
        ("scalars at the top", vec![json!(1), json!("a"), json!("a"), json!(true), json!(null)]),
        ("no items", vec![]),
    ];
    for (case, values) in cases {
        assert_same(case, &texts(&values), ProfileLimits::default());
    }
}

#[test]
fn the_path_limit_gives_the_same_schema() {
    let items: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                format!("k{}", i % 13): i,
                "nested": {format!("n{}", i % 7): "v", "arr": [{format!("e{}", i % 5): null}]},
            })
        })
        .collect();
    for max_paths in [0, 1, 2, 5, 10, 20] {
        let limits = ProfileLimits { max_paths, max_depth: 64 };
        assert_same(&format!("max_paths {max_paths}"), &texts(&items), limits);
    }
}

#[test]
fn bad_lines_are_refused_alike_and_leave_nothing_behind() {
    let items: Vec<String> = [
        "{\"a\": 1",
        "{\"a\": \"x\"}",
        "[1, 2,]",
        "{\"a\": 1e999}",
        "{\"a\": \"\\ud800\"}",
        "{\"a\": 2}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_same("bad lines", &items, ProfileLimits::default());
}

/// Every JSON and NDJSON file under testdata/: its elements (or lines) as items, and the whole
/// file as one item.
#[test]
fn the_testdata_files_give_the_same_schema() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("testdata").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "json" || e == "ndjson") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let case = path.display().to_string();
        let items: Vec<String> = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(elements)) => texts(&elements),
            Ok(whole) => vec![whole.to_string()],
            Err(_) => text.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect(),
        };
        assert_same(&case, &items, ProfileLimits::default());
        assert_same(&format!("{case}, whole"), &[text], ProfileLimits::default());
    }
}
