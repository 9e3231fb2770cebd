//! The schemas `schemascope schema` infers, judged by an independent validator: Python's
//! `jsonschema` Draft202012Validator (`tests/e2e/jsonschema_check.py`). Every observed value and
//! every plausible next value (the next timestamp, a new sensor id, a reading past the old
//! maximum) must validate; values of the wrong type or missing a member every value had must not;
//! and `schemascope validate` must agree with Python on each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

fn envelope(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The readings of one sensor record: nulls, missing members, tiny and huge numbers, unicode,
/// strings that look like numbers, arrays of varying length and an integer past 2^53.
fn readings() -> Vec<Value> {
    (0..30_i64)
        .map(|i| {
            let celsius = [21.5, -0.0, 1e-9, 1e15, 18.25, 26.0][(i % 6) as usize];
            let state = [json!("on"), json!("off"), Value::Null][(i % 3) as usize].clone();
            let label = ["Zoë", "\u{202e}rtl", "12", "ＡＢＣ", "", "x\u{0}y"][(i % 6) as usize];
            let mut v = json!({
                "ts": 1_730_649_600 + i,
                "celsius": celsius,
                "sensor_id": format!("sensor-{:02}", i % 3),
                "state": state,
                "at": format!("2024-03-{:02}T10:{:02}:00Z", i % 28 + 1, i % 60),
                "label": label,
                "tags": (0..(i % 4)).map(|t| format!("t{t}")).collect::<Vec<_>>(),
                "counter": if i == 7 { json!(9_007_199_254_740_993_u64) } else { json!(i * 1000) },
                "position": {"lat": 52.5 + i as f64 / 100.0, "lon": 13.4},
            });
            if i % 5 == 0 {
                v["note"] = json!(null);
            } else if i % 5 == 1 {
                v["note"] = json!("checked");
            }
            if i % 10 == 3 {
                v["position"]["alt_m"] = json!(49);
            }
            v
        })
        .collect()
}

fn plausible_next_readings() -> Vec<Value> {
    vec![
        json!({"ts": 1_730_649_630, "celsius": 99.75, "sensor_id": "sensor-99", "state": "standby", "at": "2031-01-01T00:00:00Z",
               "label": "new", "tags": ["t0", "t1", "t2", "t3", "t4", "t5"], "counter": 18_446_744_073_709_551_615_u64, "position": {"lat": -90.0, "lon": 180.0}}),
        json!({"ts": 0, "celsius": -273.15, "sensor_id": "", "state": null, "at": "2024-03-01", "label": "x".repeat(5000),
               "tags": [], "counter": -1, "position": {"lat": 0.5, "lon": 0.5, "alt_m": 10_000}, "note": "ok"}),
        json!({"ts": 9_007_199_254_740_993_u64, "celsius": 1e300, "sensor_id": "Ünïcödé", "state": "ON", "at": "not a date",
               "label": "\u{202e}", "tags": ["t0"], "counter": 0, "position": {"lat": 1, "lon": 2}, "brand_new": {"x": 1}}),
    ]
}

fn wrong_readings() -> Vec<Value> {
    let mut wrong_type = readings()[0].clone();
    wrong_type["celsius"] = json!("hot");
    let mut missing = readings()[1].clone();
    missing.as_object_mut().expect("object").remove("sensor_id");
    let mut null_where_never = readings()[2].clone();
    null_where_never["ts"] = Value::Null;
    let mut float_timestamp = readings()[3].clone();
    float_timestamp["ts"] = json!(1_730_649_600.5);
    vec![
        wrong_type,
        missing,
        null_where_never,
        float_timestamp,
        json!({"zzz": "anything"}),
        json!([]),
        json!("text"),
    ]
}

/// Runs the Python checker over `cases` and returns its verdicts by case name.
fn python_verdicts(cases: &[Value]) -> Vec<Value> {
    let has = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has,
        "Python jsonschema is missing: `python3 -m pip install -r tests/e2e/requirements.txt` (scripts/test does this)"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("cases.json");
    std::fs::write(&input, json!({"cases": cases}).to_string()).expect("write cases");
    let out = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/e2e/jsonschema_check.py")
        .arg(&input)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let verdicts: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("verdict line"))
        .collect();
    assert_eq!(verdicts.len(), cases.len());
    verdicts
}

fn write_records(dir: &Path, name: &str, records: &[(&str, Vec<Value>)]) -> String {
    let path = dir.join(name);
    let lines: Vec<String> = records
        .iter()
        .flat_map(|(key, values)| {
            values.iter().map(move |v| json!({"key": key, "value": v}).to_string())
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").expect("write records");
    path.display().to_string()
}

fn schema_of(source: &str, target: &str) -> Value {
    let out = schemascope(&["schema", source, target, "--json", "--no-example"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    envelope(&out)["data"]["schema"].clone()
}

/// `schemascope validate`'s `valid` (null when the call failed).
fn cli_valid(source: &str, target: &str, value: &Value) -> Value {
    let out = schemascope(&["validate", source, target, &value.to_string(), "--json"]);
    envelope(&out)["data"]["valid"].clone()
}

#[test]
fn python_jsonschema_accepts_every_observed_and_plausible_new_value_and_agrees_with_validate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mixed = vec![
        json!(1),
        json!("x"),
        Value::Null,
        json!([1, "a", null, {"k": null}]),
        json!({"k": 2.5}),
        json!(true),
        json!(-0.0),
    ];
    let config = vec![json!({"port": 8080, "host": "h", "debug": false, "origins": []}); 3];
    let source = write_records(
        dir.path(),
        "plant.ndjson",
        &[
            ("sensor::Reading", readings()),
            ("server::Config", config.clone()),
            ("weird", mixed.clone()),
        ],
    );
    let reading = schema_of(&source, "sensor::Reading");
    let props = &reading["properties"];
    assert_eq!(
        reading["required"],
        json!([
            "ts",
            "celsius",
            "sensor_id",
            "state",
            "at",
            "label",
            "tags",
            "counter",
            "position"
        ])
    );
    assert_eq!(props["state"]["type"], json!(["string", "null"]));
    assert_eq!(props["note"]["type"], json!(["string", "null"]));
    assert_eq!(props["ts"]["type"], "integer");
    assert_eq!(
        props["ts"]["x-observed"],
        json!({"minimum": 1_730_649_600, "maximum": 1_730_649_629})
    );
    assert_eq!(
        props["sensor_id"]["x-observed"]["values"],
        json!(["sensor-00", "sensor-01", "sensor-02"])
    );
    assert_eq!(props["at"]["format"], "date-time");
    assert_eq!(props["position"]["required"], json!(["lat", "lon"]));

    let cases = vec![
        json!({"name": "reading", "schema": reading, "valid": readings().into_iter().chain(plausible_next_readings()).collect::<Vec<_>>(), "invalid": wrong_readings()}),
        json!({"name": "config", "schema": schema_of(&source, "server::Config"), "valid": config.iter().cloned().chain([json!({"port": 1, "host": "other", "debug": true, "origins": ["https://x"], "extra": null})]).collect::<Vec<_>>(),
               "invalid": [json!({"port": "abc", "host": "h", "debug": false, "origins": []}), json!({"zzz": "anything"})]}),
        json!({"name": "weird", "schema": schema_of(&source, "weird"), "valid": mixed.iter().cloned().chain([json!(1e300), json!("new"), json!({"k": -1}), json!([])]).collect::<Vec<_>>(), "invalid": []}),
    ];
    for verdict in python_verdicts(&cases) {
        assert_eq!(verdict["schema_ok"], true, "{verdict}");
        assert_eq!(verdict["rejected_valid"], json!([]), "{verdict}");
        assert_eq!(verdict["accepted_invalid"], json!([]), "{verdict}");
    }

    // validate_value agrees with Python: plausible values valid (with warnings), wrong ones not.
    for value in plausible_next_readings() {
        assert_eq!(cli_valid(&source, "sensor::Reading", &value), true, "{value}");
    }
    for value in wrong_readings() {
        assert_eq!(cli_valid(&source, "sensor::Reading", &value), false, "{value}");
    }
    let out = schemascope(&[
        "validate",
        &source,
        "sensor::Reading",
        &plausible_next_readings()[0].to_string(),
        "--json",
    ]);
    let warnings = envelope(&out)["data"]["warnings"].clone();
    for keyword in ["maximum", "enum"] {
        assert!(
            warnings
                .as_array()
                .expect("warnings")
                .iter()
                .any(|w| w["keyword"] == keyword && w["severity"] == "warning"),
            "{keyword}: {warnings}"
        );
    }
}

#[test]
fn a_record_set_of_several_records_needs_the_record_on_every_cli_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = write_records(
        dir.path(),
        "several.ndjson",
        &[("a::Temp", vec![json!({"celsius": 20.5})]), ("b::Config", vec![json!({"port": 80})])],
    );
    let out = schemascope(&["schema", &source, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let failed = envelope(&out);
    assert_eq!(failed["data"]["error"], "record_required", "{failed}");
    assert_eq!(failed["data"]["records"], json!(["a::Temp", "b::Config"]));
    assert!(
        failed["message"].as_str().expect("message").contains("- a::Temp\n- b::Config"),
        "{failed}"
    );
    let collection = dir.path().join("several.ndjson");
    let set = collection.file_stem().and_then(|s| s.to_str()).expect("stem");
    let out = schemascope(&["validate", &source, set, r#"{"zzz": "anything"}"#, "--json"]);
    assert_eq!(
        envelope(&out)["data"]["error"],
        "record_required",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(1));
    // Named, each record has its own schema.
    assert_eq!(cli_valid(&source, "a::Temp", &json!({"zzz": "anything"})), false);
    assert_eq!(cli_valid(&source, "b::Config", &json!({"port": 8080})), true);
    assert_eq!(cli_valid(&source, "b::Config", &json!({"celsius": 20.5})), false);

    // One record: it is the schema.
    let single = write_records(
        dir.path(),
        "single.ndjson",
        &[("only", vec![json!({"celsius": 20.5}), json!({"celsius": 21})])],
    );
    let out = schemascope(&["schema", &single, "--json"]);
    let data = envelope(&out)["data"].clone();
    assert_eq!(data["record_name"], "only", "{data}");
    assert_eq!(data["schema"]["required"], json!(["celsius"]));
    assert_eq!(cli_valid(&single, "single", &json!({"zzz": "anything"})), false);

    // A JSON object file is a record set too (one record per member).
    let object = dir.path().join("object.json");
    std::fs::write(
        &object,
        r#"{"server::Temperature": {"celsius": 21.5}, "server::Config": {"port": 80}}"#,
    )
    .expect("write");
    let out = schemascope(&["schema", &object.display().to_string(), "--json"]);
    assert_eq!(envelope(&out)["data"]["error"], "record_required");

    // The demo record set.
    let out =
        schemascope(&["validate", "demo:sensors", "sensors", r#"{"zzz": "anything"}"#, "--json"]);
    assert_eq!(
        envelope(&out)["data"]["error"],
        "record_required",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn graph_node_and_document_schemas_accept_every_item_in_python() {
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path().join("docs.ndjson");
    let items = [
        json!({"id": 1, "title": "a", "score": 0.5}),
        json!({"id": 2, "title": null}),
        json!({"id": 3, "title": "c", "score": 1e15, "tags": ["x"]}),
    ];
    std::fs::write(&docs, items.iter().map(Value::to_string).collect::<Vec<_>>().join("\n"))
        .expect("write");
    let docs_schema = schema_of(&docs.display().to_string(), "docs");
    let nodes_schema = schema_of("demo:infrastructure", "nodes");
    let graph: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("testdata/demo/infrastructure.json"))
            .expect("demo graph"),
    )
    .expect("json");
    let nodes: Vec<Value> =
        graph["nodes"].as_array().expect("nodes").iter().map(|n| n["data"].clone()).collect();
    assert!(!nodes.is_empty());
    let cases = vec![
        json!({"name": "docs", "schema": docs_schema, "valid": items.iter().cloned().chain([json!({"id": 4, "title": "new", "score": -1})]).collect::<Vec<_>>(), "invalid": [json!({"title": "no id"})]}),
        json!({"name": "nodes", "schema": nodes_schema, "valid": nodes, "invalid": []}),
    ];
    for verdict in python_verdicts(&cases) {
        assert_eq!(verdict["schema_ok"], true, "{verdict}");
        assert_eq!(verdict["rejected_valid"], json!([]), "{verdict}");
        assert_eq!(verdict["accepted_invalid"], json!([]), "{verdict}");
    }
}

/// A PostgreSQL table of many types with NULLs: every row `execute` returns validates against
/// the schema `schema` infers for the table (an independent tester found json, domains, oid and
/// arrays typed one way in the schema and returned another way by queries).
#[test]
fn python_jsonschema_accepts_every_row_postgresql_returns_against_the_table_schema() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let schema = format!("schemascope_cli_schema_{}", std::process::id());
    let psql = |sql: &str| {
        let out = Command::new("psql")
            .args([uri.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    };
    psql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; CREATE DOMAIN {schema}.qty AS int4; \
         CREATE TABLE {schema}.t (id int PRIMARY KEY, q {schema}.qty, o oid, c char(3), ip inet, j json, jb jsonb, ia int[], ta text[], \
           n numeric, f float8, ts timestamptz, b bool, u uuid, by bytea); \
         INSERT INTO {schema}.t VALUES \
           (1, 5, 7, 'a', '::1', '{{\"k\": 1, \"l\": [1, 2]}}', '{{\"x\": 12345678901234567.89}}', '{{1,NULL}}', '{{\"a,b\",NULL}}', 1.5, 'NaN', '2024-01-01 00:00:00+00', true, gen_random_uuid(), '\\x00'), \
           (2, NULL, NULL, NULL, NULL, 'null', '3', '{{}}', NULL, 12345678901234567.89, 1e-300, NULL, NULL, NULL, NULL), \
           (3, -1, 0, 'abc', '10.0.0.0/8', '\"s\"', NULL, NULL, '{{}}', NULL, NULL, 'infinity', false, NULL, '\\x')"
    ));
    let target = format!("{schema}.t");
    let table_schema = schema_of(&uri, &target);
    let out =
        schemascope(&["execute", &uri, &format!("SELECT * FROM {schema}.t ORDER BY id"), "--json"]);
    let data = envelope(&out)["data"].clone();
    let columns: Vec<String> = data["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c.as_str().expect("name").to_string())
        .collect();
    let rows: Vec<Value> = data["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            Value::Object(
                columns.iter().cloned().zip(row.as_array().expect("row").iter().cloned()).collect(),
            )
        })
        .collect();
    psql(&format!("DROP SCHEMA {schema} CASCADE"));
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["ia"], json!([1, null]), "arrays are JSON arrays");
    let cases = vec![
        json!({"name": "pg", "schema": table_schema, "valid": rows, "invalid": [json!({"id": "one"})]}),
    ];
    for verdict in python_verdicts(&cases) {
        assert_eq!(verdict["schema_ok"], true, "{verdict}");
        assert_eq!(verdict["rejected_valid"], json!([]), "{verdict}\nschema: {table_schema}");
        assert_eq!(verdict["accepted_invalid"], json!([]), "{verdict}");
    }
}
