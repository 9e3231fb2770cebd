//! `schema FILE` on an NDJSON document file reads it for its schema alone: its answer must be
//! the one the full profile gives (`profile FILE` holds query_schema's answer for the file).

use std::process::{Command, Output};

use serde_json::{Value, json};

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

/// The answer's data without the time it was inferred at.
fn timeless(mut data: Value) -> Value {
    if let Some(map) = data.as_object_mut() {
        map.remove("inferred_at");
    }
    data
}

fn both(path: &str, extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["schema", path, "--json"];
    args.extend_from_slice(extra);
    let schema = schemascope(&args);
    assert!(schema.status.success(), "{}", String::from_utf8_lossy(&schema.stderr));
    let schema: Value = serde_json::from_slice(&schema.stdout).expect("json");
    let profile = schemascope(&["profile", path]);
    assert!(profile.status.success(), "{}", String::from_utf8_lossy(&profile.stderr));
    let profile: Value = serde_json::from_slice(&profile.stdout).expect("json");
    let from_profile = profile["data"]["collections"][0]["schema"].clone();
    (timeless(schema["data"].clone()), timeless(from_profile))
}

#[test]
fn schema_of_a_document_file_is_the_one_its_full_profile_gives() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    let mut deep = json!(1);
    for _ in 0..30 {
        deep = json!({ "n": deep });
    }
    let mut lines: Vec<String> = (0..300)
        .map(|i| {
            json!({
                "id": format!("d-{i}"),
                "state": (["on", "off", "standby"][i % 3]),
                "eleven": format!("v{}", i % 11),
                "big": (if i % 2 == 0 { json!(9_007_199_254_740_993_u64 + i as u64) } else { json!(-5) }),
                "tiny": (1e-9 * i as f64),
                "mixed": ([json!(1), json!("a"), json!(null), json!(2.5), json!({"k": true})][i % 5].clone()),
                "name": (["Zoë", "日本", "\u{202e}x", "a\u{0}b"][i % 4]),
                "long": ("é".repeat(60 + i % 10)),
                "at": format!("2024-03-{:02}T10:00:00Z", 1 + i % 28),
                "tags": (if i % 4 == 0 { json!([]) } else { json!(["a", "b"]) }),
                "deep": (if i == 7 { deep.clone() } else { json!(null) }),
            })
            .to_string()
        })
        .collect();
    lines.insert(17, "{\"id\": \"broken\", ".into());
    std::fs::write(&path, lines.join("\n")).expect("write");
    let path = path.to_str().expect("utf-8");
    let (schema, profile) = both(path, &[]);
    assert_eq!(schema, profile);
    assert_eq!(
        schema["schema"]["properties"]["state"]["x-observed"]["values"],
        json!(["off", "on", "standby"])
    );
    assert!(schema["example"].is_object(), "{schema}");
    let (schema, profile) = both(path, &["--no-example"]);
    assert!(schema.get("example").is_none(), "{schema}");
    assert_eq!(schema["schema"], profile["schema"]);
}
