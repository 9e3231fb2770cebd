//! The command line on a live AimDB instance (the fake one, speaking AimX 3.0): `schema` with
//! `--samples`/`--window-ms` finds a record by its type name, `validate` exits 2 on a bad value,
//! and a missing socket is a clear error with exit code 1.

use std::process::{Command, Output};

use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use serde_json::{Value, json};

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

#[test]
fn schema_and_validate_work_on_live_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = vec![
        FakeRecord::new(
            "server::Config",
            "server::Config",
            vec![json!({"host": "0.0.0.0", "port": 8080})],
        ),
        FakeRecord::new(
            "sensors.outdoor",
            "fixture::OutdoorReading",
            vec![json!({"celsius": 20, "sensor_id": "out-1"})],
        ),
    ];
    let fake =
        FakeAimdb::start(&dir.path().join("plant.sock"), Protocol::V3, Behaviour::Normal, records)
            .expect("fake starts");
    let spec = format!("aimdb:unix://{}", fake.path().display());
    let out = schemascope(&[
        "schema",
        &spec,
        "fixture::OutdoorReading",
        "--samples",
        "5",
        "--window-ms",
        "0",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let envelope: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(envelope["data"]["record_name"], "sensors.outdoor");
    assert_eq!(envelope["data"]["values_merged"], 1);
    assert_eq!(envelope["data"]["sampling"]["samples"], 5);
    assert_eq!(envelope["data"]["schema"]["properties"]["celsius"]["type"], "integer");

    // A bare socket path works as AimDB's own tools take it.
    let out = schemascope(&[
        "validate",
        &fake.path().display().to_string(),
        "server::Config",
        r#"{"host": "h", "port": "abc"}"#,
        "--window-ms",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("first at /port: Expected integer, got string")
    );

    // Several records and none named: the error lists them, whatever the value.
    let out = schemascope(&["schema", &spec, "--window-ms", "0", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let envelope: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(envelope["data"]["error"], "record_required");
    assert_eq!(envelope["data"]["records"], json!(["server::Config", "sensors.outdoor"]));

    let missing = dir.path().join("gone.sock");
    let out = schemascope(&["schema", &format!("aimdb:{}", missing.display()), "x"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("Cannot connect to AimDB at {}", missing.display()))
            && stderr.contains("Try:"),
        "{stderr}"
    );
}
