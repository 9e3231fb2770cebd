//! The AimDB source against a real AimDB instance (the `aimdb-fixture` binary: published
//! `aimdb-core` 1.1, AimX v1): the records as a record set, query_schema with the seed's fields
//! and real metadata, the record whose key differs from its type name, the schema merged over
//! values produced while it samples (each validating against it), live updates, and errors.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemascope_sources::aimdb::{AimxClient, Protocol};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::*;
use serde_json::{Value, json};

const TEMPERATURE: &str = "aimdb_fixture::server::Temperature";
const CONFIG: &str = "aimdb_fixture::server::Config";
const OUTDOOR: &str = "sensors.outdoor";
const OUTDOOR_TYPE: &str = "aimdb_fixture::sensors::OutdoorReading";

/// A running fixture; dropping it stops the process.
struct Instance {
    child: Child,
    stdin: Mutex<ChildStdin>,
    stdout: Mutex<BufReader<ChildStdout>>,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Instance {
    fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("aimdb.sock");
        let mut child = Command::new(env!("CARGO_BIN_EXE_aimdb-fixture"))
            .arg(&socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the fixture starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("reads");
        assert_eq!(line.trim(), "ready", "the fixture did not come up");
        Self { child, stdin: Mutex::new(stdin), stdout: Mutex::new(stdout), socket, _dir: dir }
    }

    /// Produces `value` in record `key` through the instance's own API.
    fn produce(&self, key: &str, value: &Value) {
        let mut stdin = self.stdin.lock().expect("stdin");
        writeln!(stdin, "produce {key} {value}").expect("writes");
        stdin.flush().expect("flushes");
        let mut answer = String::new();
        self.stdout.lock().expect("stdout").read_line(&mut answer).expect("reads");
        assert_eq!(answer.trim(), "ok", "producing {value} in {key}");
    }

    fn registry(&self) -> Arc<Registry> {
        let registry = Registry::new();
        let spec: SourceSpec = format!("plant=aimdb:unix://{}", self.socket.display()).parse().expect("valid");
        registry.load(&[spec], &NoProgress).expect("loads the instance");
        registry
    }

    fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ok(result: ToolResult) -> Value {
    assert!(result.success, "tool failed: {}", result.message);
    result.data
}

fn plant() -> Option<String> {
    Some("plant".into())
}

#[test]
fn the_client_speaks_v1_with_the_published_server() {
    let instance = Instance::start();
    let mut client = AimxClient::connect(instance.socket(), Duration::from_secs(5)).expect("connects");
    assert_eq!(client.protocol(), Protocol::V1, "aimdb-core 1.1 serves protocol 1.0");
    assert_eq!(client.welcome()["writable_records"], json!([CONFIG]));
    let keys: Vec<String> = client.list_records().expect("lists").iter().filter_map(|m| m["record_key"].as_str().map(str::to_string)).collect();
    assert_eq!(keys, [TEMPERATURE, CONFIG, OUTDOOR]);
    assert_eq!(client.get(OUTDOOR).expect("gets"), Some(json!({"sensor_id": "out-1", "celsius": 20})));
    assert!(client.drain(OUTDOOR, None).expect("opens the cursor").is_empty());
    client.subscribe(OUTDOOR).expect("subscribes");
    instance.produce(OUTDOOR, &json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0}));
    let event = client.next_event(Instant::now() + Duration::from_secs(5)).expect("reads").expect("an event");
    assert_eq!((event.key.as_str(), event.seq, event.data), (OUTDOOR, 1, json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0})));
    assert_eq!(client.drain(OUTDOOR, None).expect("drains"), vec![json!({"sensor_id": "out-2", "celsius": 18.5, "humidity": 71.0})]);
}

#[test]
fn query_schema_keeps_the_seed_fields_with_the_instance_metadata() {
    let instance = Instance::start();
    let registry = instance.registry();
    let sources = ok(list_sources(&registry, Default::default()));
    let records = &sources["sources"][0]["collections"][0]["records"];
    assert_eq!(records, &json!([{"name": TEMPERATURE, "values": 1}, {"name": CONFIG, "values": 1}, {"name": OUTDOOR, "values": 1}]));
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams { source: plant(), record_name: Some(TEMPERATURE.into()), window_ms: Some(0), ..Default::default() },
    ));
    assert_eq!(data["record_name"], TEMPERATURE);
    assert_eq!(
        data["schema"]["properties"],
        json!({"celsius": {"type": "number", "minimum": 21.5, "maximum": 21.5}, "sensor_id": {"type": "string"}, "timestamp": {"type": "number", "minimum": 1730649600.123, "maximum": 1730649600.123}})
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
    assert!(metadata["created_at"].is_string() && metadata["last_update"].is_string(), "{metadata}");
    assert_eq!(data["example"], json!({"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123}));
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
    assert_eq!((config["metadata"]["buffer_type"].as_str(), config["metadata"]["writable"].as_bool()), (Some("single_latest"), Some(true)));
    assert!(config.get("example").is_none());
    assert_eq!(config["schema"]["properties"]["port"], json!({"type": "integer", "minimum": 8080, "maximum": 8080}));
}

#[test]
fn the_record_keyed_apart_from_its_type_is_found_by_either_and_its_schema_merges_varying_values() {
    let instance = Arc::new(Instance::start());
    let registry = instance.registry();
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
            samples: Some(5),
            window_ms: Some(10_000),
            ..Default::default()
        },
    ));
    producer.join().expect("producer");
    assert_eq!(data["record_name"], OUTDOOR);
    assert_eq!(data["type_name"], OUTDOOR_TYPE);
    assert_eq!(data["values_merged"], 5, "{data}");
    assert_eq!(data["sampling"]["produced_in_window"], 4);
    assert_eq!(data["sampling"]["protocol"], "1.0");
    let schema = &data["schema"];
    assert_eq!(schema["properties"]["celsius"], json!({"type": ["number", "null"], "minimum": -2.25, "maximum": 21.5}), "{schema}");
    assert_eq!(schema["properties"]["humidity"], json!({"type": "number", "minimum": 38.5, "maximum": 40.0}));
    assert_eq!(schema["properties"]["sensor_id"]["type"], "string");
    assert_eq!(schema["required"], json!(["sensor_id", "celsius"]), "humidity is optional");
    assert_eq!(data["example"], later[3]);
    let validator = jsonschema::draft202012::new(schema).expect("compiles");
    for value in std::iter::once(json!({"sensor_id": "out-1", "celsius": 20})).chain(later.iter().cloned()) {
        assert!(validator.is_valid(&value), "{value} does not validate against {schema}");
    }
    // And by its key, with the values now part of the source.
    let property = ok(describe_property(
        &registry,
        DescribePropertyParams { source: plant(), property: "celsius".into(), record_name: Some(OUTDOOR.into()), ..Default::default() },
    ));
    assert_eq!((property["totalCount"].as_u64(), property["nullCount"].as_u64()), (Some(5), Some(1)), "{property}");
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
    let instance = Instance::start();
    let registry = instance.registry();
    let mut changes = registry.subscribe();
    registry.watch_with(Duration::from_millis(50)).expect("follows the instance");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut announced = false;
    let mut produced = 0;
    while Instant::now() < deadline && !announced {
        produced += 1;
        instance.produce(TEMPERATURE, &json!({"celsius": 30.25, "sensor_id": format!("sensor-{produced:02}"), "timestamp": 1730649700.5}));
        std::thread::sleep(Duration::from_millis(200));
        while let Ok(name) = changes.try_recv() {
            announced |= name == "plant";
        }
    }
    assert!(announced, "a produced value was not announced");
    let values = registry.live_values("plant");
    assert!(values[TEMPERATURE].len() >= 2, "{values:?}");
    assert_eq!(values[TEMPERATURE].last().map(|v| v["celsius"].clone()), Some(json!(30.25)));
}

#[test]
fn missing_records_and_a_stopped_instance_are_clear_errors_without_hanging() {
    let mut instance = Instance::start();
    let registry = instance.registry();
    let missing = query_schema(&registry, QuerySchemaParams { source: plant(), record_name: Some("server::Humidity".into()), ..Default::default() });
    assert!(!missing.success);
    assert!(
        missing.message.contains(&format!("Available records:\n- {TEMPERATURE}\n- {CONFIG}\n- {OUTDOOR} (type {OUTDOOR_TYPE})")),
        "{}",
        missing.message
    );
    instance.child.kill().expect("kills");
    instance.child.wait().expect("waits");
    let started = Instant::now();
    let gone = query_schema(&registry, QuerySchemaParams { source: plant(), record_name: Some(TEMPERATURE.into()), ..Default::default() });
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(!gone.success);
    assert_eq!(gone.data["error"], "aimdb_connect_failed", "{}", gone.message);
    assert!(
        gone.message.contains(&format!("Cannot connect to AimDB at {}", instance.socket().display())) && gone.message.contains("Try:\n1."),
        "{}",
        gone.message
    );
}
