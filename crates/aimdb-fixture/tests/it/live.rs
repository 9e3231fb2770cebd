//! The AimDB source against real AimDB instances: the `aimdb-fixture` binary (published
//! `aimdb-core` 1.1, AimX 1.0) always, and the same instance on `aimdb-core` 2.0 (AimX 3.0) when
//! `SCHEMASCOPE_AIMDB_V3_FIXTURE` names its binary (`scripts/test` builds it from
//! `crates/aimdb-fixture/v3`, whose crates declare Rust 1.98). Covered: the records as a record
//! set, query_schema with the seed's fields and real metadata, the record whose key differs from
//! its type name, the schema merged over values produced while it samples (each validating
//! against it), live updates, and errors.

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemascope_core::sync::joined;
use schemascope_sources::aimdb::AimxClient;
use schemascope_tools::*;
use serde_json::{Value, json};

use super::fixture::*;

#[test]
fn the_client_speaks_each_published_server_s_protocol() {
    for kind in kinds() {
        client_round_trip(kind);
    }
}

fn client_round_trip(kind: Kind) {
    let instance = Instance::start(kind);
    let mut client =
        AimxClient::connect(instance.socket(), Duration::from_secs(5)).expect("connects");
    assert_eq!(client.protocol(), kind.protocol());
    assert_eq!(client.welcome()["version"], kind.protocol().version());
    // The writable records, in no order the server promises (2.x keeps them in a hash set).
    let mut writable: Vec<&str> = client.welcome()["writable_records"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    writable.sort_unstable();
    assert_eq!(writable, [CONFIG, SETPOINT]);
    let keys: Vec<String> = client
        .list_records()
        .expect("lists")
        .iter()
        .filter_map(|m| m["record_key"].as_str().map(str::to_string))
        .collect();
    assert_eq!(keys, [TEMPERATURE, CONFIG, SETPOINT, OUTDOOR]);
    assert_eq!(
        client.get(CONFIG).expect("gets").map(|text| text.parse().expect("JSON")),
        Some(json!({"host": "0.0.0.0", "port": 8080, "debug_mode": false, "max_connections": 100}))
    );
    let current =
        kind.rings_have_current_value().then(|| json!({"sensor_id": "out-1", "celsius": 20}));
    let got = client.get(OUTDOOR).expect("gets").map(|text| text.parse().expect("JSON"));
    assert_eq!(got, current, "{kind:?}");
    assert!(client.drain(OUTDOOR, None).expect("opens the cursor").is_empty());
    client.subscribe(OUTDOOR).expect("subscribes");
    instance.produce(OUTDOOR, &json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0}));
    let event = client
        .next_event(Instant::now() + Duration::from_secs(5))
        .expect("reads")
        .unwrap_or_else(|| panic!("no event from {kind:?}"));
    assert_eq!(
        (event.key.as_str(), event.seq, event.data.parse().expect("JSON")),
        (OUTDOOR, 1, json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0}))
    );
    assert_eq!(
        client.drain(OUTDOOR, None).expect("drains"),
        vec![json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0})]
    );
}

#[test]
fn query_schema_keeps_the_seed_fields_with_the_instance_metadata() {
    for kind in kinds() {
        seed_fields(kind);
    }
}

fn seed_fields(kind: Kind) {
    let instance = Instance::start(kind);
    let registry = instance.registry();
    let sources = ok(list_sources(&registry, Default::default()));
    let mut records = sources["sources"][0]["collections"][0]["records"].clone();
    // Each record says the bytes its values hold (the AimDB byte bounds); the rest is compared.
    for record in records.as_array_mut().into_iter().flatten() {
        let bytes = record.as_object_mut().and_then(|r| r.remove("bytes"));
        assert!(bytes.as_ref().is_some_and(Value::is_u64), "{record}: {bytes:?}");
    }
    let ring_values = usize::from(kind.rings_have_current_value());
    assert_eq!(
        &records,
        &json!([
            {"name": TEMPERATURE, "values": ring_values, "type": TEMPERATURE},
            {"name": CONFIG, "values": 1, "type": CONFIG},
            {"name": SETPOINT, "values": 1, "type": SETPOINT},
            {"name": OUTDOOR, "values": ring_values, "type": OUTDOOR_TYPE},
        ])
    );
    if !kind.rings_have_current_value() {
        // Only the single-latest config and setpoint have a current value to read at load; the rings' first
        // values come while query_schema samples.
        assert_eq!(
            sources["sources"][0]["warnings"].as_array().map(Vec::len),
            Some(2),
            "{sources}"
        );
        std::thread::scope(|scope| {
            let producer = scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                instance.produce(TEMPERATURE, &json!({"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123}));
            });
            let data = ok(query_schema(
                &registry,
                QuerySchemaParams {
                    source: plant(),
                    record_name: Some(TEMPERATURE.into()),
                    samples: Some(1),
                    window_ms: Some(5_000),
                    ..Default::default()
                },
            ));
            joined(producer.join());
            assert_eq!(
                (
                    data["sampling"]["current"].as_bool(),
                    data["sampling"]["produced_in_window"].as_u64()
                ),
                (Some(false), Some(1)),
                "{data}"
            );
        });
    }
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some(TEMPERATURE.into()),
            window_ms: Some(0),
            ..Default::default()
        },
    ));
    assert_eq!(data["record_name"], TEMPERATURE);
    assert_eq!(
        data["schema"]["properties"],
        json!({"celsius": {"type": "number", "x-observed": {"minimum": 21.5, "maximum": 21.5}}, "sensor_id": {"type": "string"}, "timestamp": {"type": "number", "x-observed": {"minimum": 1730649600.123, "maximum": 1730649600.123}}})
    );
    assert_eq!(data["schema"]["required"], json!(["celsius", "sensor_id", "timestamp"]));
    let metadata = &data["metadata"];
    assert!(metadata["type_id"].as_str().is_some_and(|t| t.starts_with("TypeId(0x")), "{metadata}");
    assert_eq!(metadata["buffer_type"], "spmc_ring");
    assert_eq!(metadata["buffer_capacity"], 100);
    assert_eq!(metadata["writable"], false);
    assert_eq!(metadata["producer_count"], 0);
    assert_eq!(metadata["consumer_count"], 0);
    assert_eq!(metadata["name"], TEMPERATURE);
    match kind {
        Kind::V1 => assert!(
            metadata["created_at"].is_string() && metadata["last_update"].is_string(),
            "{metadata}"
        ),
        // 2.x dropped the timestamps and added the key's leaf as `entity`.
        Kind::V3 => assert_eq!(
            (metadata.get("created_at"), metadata["entity"].as_str()),
            (None, Some(TEMPERATURE)),
            "{metadata}"
        ),
    }
    assert_eq!(
        data["example"],
        json!({"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123})
    );
    assert!(data["inferred_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert_eq!(data["values_merged"], 1);
    let config = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some(CONFIG.into()),
            include_example: Some(false),
            window_ms: Some(0),
            ..Default::default()
        },
    ));
    assert_eq!(
        (config["metadata"]["buffer_type"].as_str(), config["metadata"]["writable"].as_bool()),
        (Some("single_latest"), Some(true))
    );
    assert!(config.get("example").is_none());
    assert_eq!(
        config["schema"]["properties"]["port"],
        json!({"type": "integer", "x-observed": {"minimum": 8080, "maximum": 8080}})
    );
}

#[test]
fn the_record_keyed_apart_from_its_type_is_found_by_either_and_its_schema_merges_varying_values() {
    for kind in kinds() {
        merged_schema(kind);
    }
}

fn merged_schema(kind: Kind) {
    let instance = Arc::new(Instance::start(kind));
    let registry = instance.registry();
    let first =
        kind.rings_have_current_value().then(|| json!({"sensor_id": "out-1", "celsius": 20}));
    let expected = 4 + usize::from(first.is_some());
    let later = [
        json!({"sensor_id": "out-1", "celsius": 21.5, "humidity": 40.0}),
        json!({"sensor_id": "out-2", "celsius": null}),
        json!({"sensor_id": "out-1", "celsius": 19, "humidity": 38.5}),
        json!({"sensor_id": "out-3", "celsius": -2.25}),
    ];
    let producer = {
        let (instance, later) = (instance.clone(), later.clone());
        std::thread::spawn(move || {
            for value in &later {
                std::thread::sleep(Duration::from_millis(150));
                instance.produce(OUTDOOR, value);
            }
        })
    };
    // By its type name: AimDB's own query_schema failed here, as record.get takes the key.
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some(OUTDOOR_TYPE.into()),
            samples: Some(expected),
            window_ms: Some(10_000),
            ..Default::default()
        },
    ));
    joined(producer.join());
    assert_eq!(data["record_name"], OUTDOOR);
    assert_eq!(data["type_name"], OUTDOOR_TYPE);
    assert_eq!(data["values_merged"], expected, "{data}");
    assert_eq!(data["sampling"]["produced_in_window"], 4);
    assert_eq!(data["sampling"]["protocol"], kind.protocol().version());
    let schema = &data["schema"];
    assert_eq!(
        schema["properties"]["celsius"],
        json!({"type": ["number", "null"], "x-observed": {"minimum": -2.25, "maximum": 21.5}}),
        "{schema}"
    );
    assert_eq!(
        schema["properties"]["humidity"],
        json!({"type": "number", "x-observed": {"minimum": 38.5, "maximum": 40.0}})
    );
    assert_eq!(schema["properties"]["sensor_id"]["type"], "string");
    // 2.x sends values through a serde_json map without preserve_order: keys come sorted.
    let mut required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    required.sort_unstable();
    assert_eq!(required, ["celsius", "sensor_id"], "humidity is optional: {schema}");
    assert_eq!(data["example"], later[3]);
    let validator = jsonschema::draft202012::new(schema).expect("compiles");
    for value in first.into_iter().chain(later.iter().cloned()) {
        assert!(validator.is_valid(&value), "{value} does not validate against {schema}");
    }
    // And by its key, with the values now part of the source.
    let property = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: plant(),
            property: "celsius".into(),
            record_name: Some(OUTDOOR.into()),
            ..Default::default()
        },
    ));
    assert_eq!(
        (property["totalCount"].as_u64(), property["nullCount"].as_u64()),
        (Some(expected as u64), Some(1)),
        "{property}"
    );
    let verdict = ok(validate_value(
        &registry,
        ValidateValueParams {
            source: plant(),
            record_name: Some(OUTDOOR_TYPE.into()),
            value: json!({"sensor_id": 7, "celsius": 20}),
            window_ms: Some(0),
            ..Default::default()
        },
    ));
    assert_eq!(verdict["valid"], false);
    assert_eq!(verdict["errors"][0]["path"], "/sensor_id", "{verdict}");
}

#[test]
fn subscribed_records_refresh_the_source_and_announce_it() {
    for kind in kinds() {
        live_updates(kind);
    }
}

fn live_updates(kind: Kind) {
    let instance = Instance::start(kind);
    let registry = instance.registry();
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(50)).expect("follows the instance");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut announced = 0;
    let mut produced = 0;
    let arrived = |registry: &Services| {
        registry.live.live_values("plant")[TEMPERATURE].iter().any(|v| v["celsius"] == json!(30.25))
    };
    // The feed subscribes in the background: produce until a value comes through it.
    while Instant::now() < deadline && !arrived(&registry) {
        produced += 1;
        instance.produce(TEMPERATURE, &json!({"celsius": 30.25, "sensor_id": format!("sensor-{produced:02}"), "timestamp": 1730649700.5}));
        std::thread::sleep(Duration::from_millis(200));
        while let Ok(name) = changes.try_recv() {
            announced += usize::from(name == "plant");
        }
    }
    assert!(arrived(&registry), "no produced value reached the source ({kind:?})");
    assert!(announced >= 1, "the change was not announced");
    let values = registry.live.live_values("plant");
    assert_eq!(values[TEMPERATURE].last().map(|v| v["celsius"].clone()), Some(json!(30.25)));
    // A single-latest record's subscription may open with its current value (2.x does): it is
    // the value already known, not a new one.
    assert_eq!(values[CONFIG].len(), 1, "{values:?}");
}

#[test]
fn missing_records_and_a_stopped_instance_are_clear_errors_without_hanging() {
    for kind in kinds() {
        clear_errors(kind);
    }
}

fn clear_errors(kind: Kind) {
    let mut instance = Instance::start(kind);
    let registry = instance.registry();
    let missing = query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some("server::Humidity".into()),
            ..Default::default()
        },
    );
    assert!(!missing.success);
    assert!(
        missing.message.contains(&format!(
            "Available records:\n- {TEMPERATURE}\n- {CONFIG}\n- {SETPOINT}\n- {OUTDOOR} (type {OUTDOOR_TYPE})"
        )),
        "{}",
        missing.message
    );
    // No record named on an instance of several: each has its own schema, so the call must say which.
    for collection in [None, Some("plant".to_string())] {
        let unnamed = validate_value(
            &registry,
            ValidateValueParams {
                source: plant(),
                collection: collection.clone(),
                value: json!({"zzz": "anything"}),
                window_ms: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(
            (unnamed.success, unnamed.data["error"].as_str()),
            (false, Some("record_required")),
            "{collection:?}: {}",
            unnamed.message
        );
        assert_eq!(
            unnamed.data["records"],
            json!([TEMPERATURE, CONFIG, SETPOINT, OUTDOOR]),
            "{}",
            unnamed.message
        );
        let schema = query_schema(
            &registry,
            QuerySchemaParams {
                source: plant(),
                collection,
                window_ms: Some(0),
                ..Default::default()
            },
        );
        assert_eq!(schema.data["error"], "record_required", "{}", schema.message);
    }
    instance.kill();
    let started = Instant::now();
    let gone = query_schema(
        &registry,
        QuerySchemaParams {
            source: plant(),
            record_name: Some(CONFIG.into()),
            ..Default::default()
        },
    );
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(!gone.success);
    assert_eq!(gone.data["error"], "aimdb_connect_failed", "{}", gone.message);
    assert!(
        gone.message
            .contains(&format!("Cannot connect to AimDB at {}", instance.socket().display()))
            && gone.message.contains("Try:\n1."),
        "{}",
        gone.message
    );
}
