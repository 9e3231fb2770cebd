//! The tools on a live AimDB source served by the fake instance, in both AimX wires: every
//! discovery tool on its records, the schema merged over values produced during the window, type
//! names resolving to keys, live updates, and clear errors.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::*;
use serde_json::json;

use crate::common::ok;

fn records() -> Vec<FakeRecord> {
    vec![
        FakeRecord::new(
            "server::Temperature",
            "server::Temperature",
            vec![json!({"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123})],
        ),
        FakeRecord::new(
            "server::Config",
            "server::Config",
            vec![json!({"host": "0.0.0.0", "port": 8080, "debug_mode": false})],
        ),
        FakeRecord::new(
            "sensors.outdoor",
            "fixture::OutdoorReading",
            vec![json!({"celsius": 20, "sensor_id": "out-1"})],
        ),
    ]
}

fn serve(dir: &Path, protocol: Protocol, behaviour: Behaviour) -> (FakeAimdb, Services) {
    let fake = FakeAimdb::start(&dir.join("plant.sock"), protocol, behaviour, records())
        .expect("fake starts");
    let registry = Services::new();
    let spec: SourceSpec =
        format!("aimdb:unix://{}", fake.path().display()).parse().expect("valid spec");
    registry.sources.load(&[spec], &NoProgress).expect("loads");
    (fake, registry)
}

fn plant() -> Option<String> {
    Some("plant".into())
}

#[test]
fn every_discovery_tool_works_on_live_records_in_both_wires() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_fake, registry) = serve(dir.path(), protocol, Behaviour::Normal);
        let sources = ok(list_sources(&registry, Default::default()));
        assert_eq!(sources["sources"][0]["format"], "aimdb");
        assert_eq!(sources["sources"][0]["aimdb"]["protocol"], protocol.version());
        assert_eq!(sources["sources"][0]["aimdb"]["permissions"], json!(["read"]));
        let records = &sources["sources"][0]["collections"][0]["records"];
        assert_eq!(records.as_array().map(Vec::len), Some(3), "{protocol:?}");
        let schema = ok(describe_schema(
            &registry.sources,
            DescribeSchemaParams { source: plant(), ..Default::default() },
        ));
        assert_eq!(schema["collections"][0]["count"], 3);
        let sample = ok(sample_data(
            &registry.sources,
            SampleDataParams {
                source: plant(),
                record_name: Some("server::Config".into()),
                ..Default::default()
            },
        ));
        assert_eq!(sample["plant"][0]["value"]["port"], 8080, "{sample}");
        assert_eq!(sample["plant"][0]["metadata"]["name"], "server::Config");
        let property = ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: plant(),
                property: "celsius".into(),
                record_name: Some("server::Temperature".into()),
                ..Default::default()
            },
        ));
        assert_eq!(property["min"], 21.5, "{property}");
        let schema = ok(query_schema(
            &registry,
            QuerySchemaParams {
                source: plant(),
                record_name: Some("server::Config".into()),
                window_ms: Some(0),
                ..Default::default()
            },
        ));
        assert_eq!(schema["record_name"], "server::Config");
        assert_eq!(schema["schema"]["properties"]["port"]["type"], "integer");
        assert_eq!(schema["schema"]["required"], json!(["host", "port", "debug_mode"]));
        assert_eq!(schema["metadata"]["type_id"], "TypeId(0x5eed)");
        assert_eq!(schema["metadata"]["buffer_type"], "spmc_ring");
        assert_eq!(schema["metadata"]["buffer_capacity"], 100);
        assert_eq!(schema["metadata"]["producer_count"], 1);
        assert_eq!(schema["example"]["host"], "0.0.0.0");
        assert_eq!(
            schema["values_merged"], 1,
            "the current value equals the one seen at load: counted once"
        );
        assert_eq!(schema["sampling"]["protocol"], protocol.version());
        assert!(schema["inferred_at"].as_str().is_some_and(|t| t.ends_with('Z')));
        let invalid = ok(validate_value(
            &registry,
            ValidateValueParams {
                source: plant(),
                record_name: Some("server::Config".into()),
                value: json!({"host": "h", "port": "abc"}),
                window_ms: Some(0),
                ..Default::default()
            },
        ));
        assert_eq!(invalid["valid"], false);
        let paths: Vec<&str> = invalid["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["path"].as_str())
            .collect();
        assert_eq!(paths, ["/debug_mode", "/port"], "{invalid}");
    }
}

#[test]
fn query_schema_merges_values_produced_within_the_window_and_all_of_them_validate() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (fake, registry) = serve(dir.path(), protocol, Behaviour::Normal);
        let fake = Arc::new(fake);
        let later = [
            json!({"celsius": 21.5, "sensor_id": "out-1", "humidity": 40}),
            json!({"celsius": null, "sensor_id": "out-2"}),
            json!({"celsius": 19, "sensor_id": "out-1", "humidity": 38.5}),
        ];
        let producer = {
            let (fake, later) = (fake.clone(), later.clone());
            std::thread::spawn(move || {
                for value in later {
                    std::thread::sleep(Duration::from_millis(150));
                    fake.push("sensors.outdoor", value);
                }
            })
        };
        // By its Rust type name: the record's key differs.
        let schema = ok(query_schema(
            &registry,
            QuerySchemaParams {
                source: plant(),
                record_name: Some("fixture::OutdoorReading".into()),
                samples: Some(4),
                window_ms: Some(5_000),
                ..Default::default()
            },
        ));
        producer.join().expect("producer");
        assert_eq!(schema["record_name"], "sensors.outdoor");
        assert_eq!(schema["type_name"], "fixture::OutdoorReading");
        assert_eq!(schema["values_merged"], 4, "{schema}");
        assert_eq!(schema["sampling"]["produced_in_window"], 3);
        let properties = &schema["schema"]["properties"];
        assert_eq!(properties["celsius"]["type"], json!(["number", "null"]), "{schema}");
        assert_eq!(properties["celsius"]["x-observed"], json!({"minimum": 19.0, "maximum": 21.5}));
        assert!(
            properties["celsius"].get("minimum").is_none(),
            "observations are annotations: {schema}"
        );
        assert_eq!(properties["humidity"]["type"], "number");
        assert_eq!(
            schema["schema"]["required"],
            json!(["celsius", "sensor_id"]),
            "humidity is optional"
        );
        assert_eq!(schema["example"], later[2]);
        let validator = jsonschema::draft202012::new(&schema["schema"]).expect("compiles");
        for value in std::iter::once(json!({"celsius": 20, "sensor_id": "out-1"}))
            .chain(later.iter().cloned())
        {
            assert!(validator.is_valid(&value), "{value} against {}", schema["schema"]);
        }
        assert!(!validator.is_valid(&json!({"celsius": "warm", "sensor_id": "out-1"})));
        // The sampled values joined the source: describe_property sees all four.
        let values = registry.live.live_values("plant");
        assert_eq!(values["sensors.outdoor"].len(), 4, "{protocol:?}");
    }
}

#[test]
fn subscribed_records_refresh_the_source_and_tell_subscribers() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (fake, registry) = serve(dir.path(), protocol, Behaviour::Normal);
        let mut changes = registry.sources.subscribe();
        registry.watch_with(Duration::from_millis(50)).expect("follows");
        // Give the feed time to subscribe before producing.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut told = false;
        while Instant::now() < deadline && !told {
            fake.push(
                "server::Temperature",
                json!({"celsius": 30.25, "sensor_id": "sensor-02", "timestamp": 1730649700.5}),
            );
            std::thread::sleep(Duration::from_millis(100));
            while let Ok(name) = changes.try_recv() {
                told |= name == "plant";
            }
        }
        assert!(told, "no change was announced ({protocol:?})");
        let property = ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: plant(),
                property: "sensor_id".into(),
                record_name: Some("server::Temperature".into()),
                ..Default::default()
            },
        ));
        assert_eq!(property["distinctStrings"], 2, "{property}");
        assert_eq!(property["values"][1]["value"], "sensor-02");
    }
}

#[test]
fn unknown_records_list_what_exists() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_fake, registry) = serve(dir.path(), Protocol::V3, Behaviour::Normal);
    let result = query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some("server::Humidity".into()),
            ..Default::default()
        },
    );
    assert!(!result.success);
    assert_eq!(result.data["error"], "unknown_record");
    assert!(
        result.message.starts_with("Record 'server::Humidity' not found in AimDB source `plant`."),
        "{}",
        result.message
    );
    assert!(
        result.message.contains("Available records:\n- server::Temperature\n- server::Config\n- sensors.outdoor (type fixture::OutdoorReading)"),
        "{}",
        result.message
    );
}

#[test]
fn a_server_closing_mid_request_and_a_missing_socket_are_clear_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_fake, registry) =
        serve(dir.path(), Protocol::V1, Behaviour::CloseOn("record.drain".into()));
    let started = Instant::now();
    let result = query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some("server::Config".into()),
            ..Default::default()
        },
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(!result.success);
    assert_eq!(result.data["error"], "aimdb_connection_closed");
    assert!(
        result.message.contains("closed the connection during record.drain"),
        "{}",
        result.message
    );

    let registry = Services::new();
    let missing = dir.path().join("gone.sock");
    let spec: SourceSpec = format!("aimdb:{}", missing.display()).parse().expect("valid");
    let error = registry.sources.load(&[spec], &NoProgress).expect_err("no instance");
    let text = error.to_string();
    assert!(
        text.contains(&format!("Cannot connect to AimDB at {}", missing.display()))
            && text.contains("Try:"),
        "{text}"
    );
    assert_eq!(ToolResult::from(error).data["error"], "aimdb_connect_failed");
}

#[test]
fn the_feed_reports_a_vanished_instance_and_follows_it_again_when_it_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (fake, registry) = serve(dir.path(), Protocol::V3, Behaviour::Normal);
    registry.watch_with(Duration::from_millis(50)).expect("follows");
    let path = fake.path().to_path_buf();
    drop(fake);
    let deadline = Instant::now() + Duration::from_secs(10);
    while registry.sources.reload_error("plant").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let error = registry.sources.reload_error("plant").expect("the interruption is reported");
    assert!(error.starts_with("live updates interrupted, reconnecting:"), "{error}");
    // The instance comes back (a restart): the feed reconnects and values flow again.
    let fake =
        FakeAimdb::start(&path, Protocol::V1, Behaviour::Normal, records()).expect("restarts");
    let deadline = Instant::now() + Duration::from_secs(15);
    let arrived = |registry: &Services| {
        registry.live.live_values("plant")["server::Config"].iter().any(|v| v["port"] == 9090)
    };
    while !arrived(&registry) && Instant::now() < deadline {
        fake.push("server::Config", json!({"host": "0.0.0.0", "port": 9090, "debug_mode": true}));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(arrived(&registry), "values did not flow after the restart");
    assert_eq!(registry.sources.reload_error("plant"), None);
}

#[test]
fn more_records_than_one_connection_may_subscribe_to_are_all_followed() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 2.x refuses a 33rd subscription on one connection.
    let many: Vec<FakeRecord> = (0..40)
        .map(|i| {
            FakeRecord::new(&format!("sensors.s{i:02}"), "fixture::Reading", vec![json!({"v": i})])
        })
        .collect();
    let fake =
        FakeAimdb::start(&dir.path().join("plant.sock"), Protocol::V3, Behaviour::Normal, many)
            .expect("fake starts");
    let registry = Services::new();
    let spec: SourceSpec =
        format!("plant=aimdb:unix://{}", fake.path().display()).parse().expect("valid spec");
    registry.sources.load(&[spec], &NoProgress).expect("loads");
    registry.watch_with(Duration::from_millis(50)).expect("follows");
    let deadline = Instant::now() + Duration::from_secs(10);
    let arrived =
        |registry: &Services| registry.live.live_values("plant")["sensors.s39"].len() >= 2;
    while !arrived(&registry) && Instant::now() < deadline {
        fake.push("sensors.s39", json!({"v": 390}));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        arrived(&registry),
        "the 40th record is not followed: {:?}",
        registry.sources.reload_error("plant")
    );
    assert_eq!(registry.sources.reload_error("plant"), None);
}
