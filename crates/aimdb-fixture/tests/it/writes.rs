//! set_record against the real AimDB servers (1.x and 2.x): refused unless the operator enabled
//! writes, refused for a record the instance does not mark writable, refused before sending for
//! a value of the wrong type or with a field missing (the record left as it was), a dry run
//! that sends nothing, a write read back with what changed, a value the instance itself refuses,
//! the write log with who asked, a subscription that sees the write, and instances named by
//! socket path inside allowed directories (and only there), found by discover_instances.

use std::time::{Duration, Instant};

use schemascope_sources::aimdb::discover::AllowedDirs;
use schemascope_tools::tool_table::{call_tool, listed};
use schemascope_tools::*;
use serde_json::{Value, json};

use super::fixture::*;

const INITIAL_SETPOINT: &str =
    r#"{"celsius": 21.0, "sensor_id": "sensor-01", "timestamp": 1730649600.0}"#;

fn initial_setpoint() -> Value {
    serde_json::from_str(INITIAL_SETPOINT).expect("JSON")
}

fn set(registry: &Services, record: &str, value: Value, dry_run: bool) -> ToolResult {
    set_record(
        registry,
        SetRecordParams {
            source: plant(),
            record_name: record.into(),
            value,
            dry_run: Some(dry_run),
        },
    )
}

#[test]
fn set_record_writes_only_what_is_allowed_and_checked() {
    for kind in kinds() {
        guarded_writes(kind);
    }
}

fn guarded_writes(kind: Kind) {
    let instance = Instance::start(kind);
    let asked = json!({"celsius": 22.2, "sensor_id": "sensor-01", "timestamp": 1730700000.5});

    // Not enabled by the operator: not listed, and refused with how to enable it.
    let read_only = instance.registry();
    assert!(!listed(&read_only).iter().any(|spec| spec.name == "set_record"));
    let refused = set(&read_only, SETPOINT, asked.clone(), false);
    assert_eq!(refused.data["error"], "writes_not_allowed", "{}", refused.message);
    assert!(refused.message.contains("allow_writes = true"), "{}", refused.message);
    assert_eq!(instance.current(SETPOINT), Some(initial_setpoint()));

    let registry = instance.writable_registry();
    let listed_tools: Vec<&str> = listed(&registry).iter().map(|spec| spec.name).collect();
    assert!(listed_tools.contains(&"set_record"), "{listed_tools:?}");

    // A wrong type: refused before anything is sent, naming the field, expected and actual.
    let wrong = set(
        &registry,
        SETPOINT,
        json!({"celsius": "22.2", "sensor_id": "sensor-01", "timestamp": 1730700000.5}),
        false,
    );
    assert!(!wrong.success);
    assert_eq!(wrong.data["error"], "invalid_value");
    assert_eq!(wrong.data["sent"], false);
    let error = &wrong.data["errors"][0];
    assert_eq!(
        (error["field"].as_str(), error["expected"].as_str(), error["actual"].as_str()),
        (Some("celsius"), Some("number"), Some("string")),
        "{error}"
    );
    assert!(wrong.message.starts_with("Nothing was sent"), "{}", wrong.message);
    assert!(wrong.message.contains("field `celsius`"), "{}", wrong.message);
    // A required field missing: refused too.
    let partial = set(&registry, SETPOINT, json!({"celsius": 22.2}), false);
    assert_eq!(partial.data["error"], "invalid_value");
    let missing: Vec<&str> = partial.data["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["keyword"] == "required")
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(missing, ["sensor_id", "timestamp"], "{}", partial.data);
    assert_eq!(instance.current(SETPOINT), Some(initial_setpoint()));

    // A dry run shows what would be sent and what would change, and sends nothing.
    let dry = set(&registry, SETPOINT, asked.clone(), true);
    assert!(dry.success, "{}", dry.message);
    assert_eq!(
        dry.data["would_send"],
        json!({"method": "record.set", "params": {"name": SETPOINT, "value": asked}})
    );
    let paths: Vec<&str> = dry.data["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert_eq!(paths, ["/celsius", "/timestamp"]);
    assert!(dry.message.starts_with("Dry run, nothing was sent"), "{}", dry.message);
    assert_eq!(instance.current(SETPOINT), Some(initial_setpoint()));

    // The write, read back; the instance holds the new value.
    let log = tempfile::NamedTempFile::new().expect("log file");
    registry.writes.set_file(Some(log.path().to_path_buf())).expect("log opens");
    let done = requester::with("MCP session test-1 (client scripted 1.0)".into(), || {
        set(&registry, SETPOINT, asked.clone(), false)
    });
    assert!(done.success, "{}", done.message);
    assert_eq!(done.data["value"], asked);
    assert_eq!(done.data["previous"], initial_setpoint());
    assert_eq!(done.data["read_back_matches"], true);
    assert_eq!(done.data["changes"][0], json!({"path": "/celsius", "from": 21.0, "to": 22.2}));
    assert_eq!(done.data["protocol"], kind.protocol().version());
    assert_eq!(instance.current(SETPOINT), Some(asked.clone()));
    let logged: Vec<Value> = std::fs::read_to_string(log.path())
        .expect("reads the log")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["who"], "MCP session test-1 (client scripted 1.0)");
    assert_eq!(
        (logged[0]["record"].as_str(), logged[0]["outcome"].as_str()),
        (Some(SETPOINT), Some("written"))
    );
    assert_eq!(logged[0]["changes"], done.data["changes"]);

    // A record the instance does not mark writable: refused, listing those it does.
    let reading = set(&registry, TEMPERATURE, asked.clone(), false);
    assert_eq!(reading.data["error"], "not_writable", "{}", reading.message);
    assert!(
        reading.message.contains(CONFIG) && reading.message.contains(SETPOINT),
        "{}",
        reading.message
    );
    let outdoor = set(&registry, OUTDOOR_TYPE, json!({"sensor_id": "out-1", "celsius": 20}), false);
    assert_eq!(outdoor.data["error"], "not_writable", "{}", outdoor.message);

    // Past what its Rust type holds (u16): our check only warns (beyond the observed range), the
    // instance refuses it, and the record keeps its value.
    let config = instance.current(CONFIG).expect("config has a value");
    let mut too_big = config.clone();
    too_big["port"] = json!(70_000);
    let overflow = set(&registry, CONFIG, too_big, false);
    assert_eq!(overflow.data["error"], "write_refused", "{}", overflow.message);
    assert_eq!(instance.current(CONFIG), Some(config.clone()));
    // An integer written as a float: JSON Schema's integer, but the instance's u16 refuses it,
    // so it is refused before sending, by validate_value too.
    let mut float_port = config.clone();
    float_port["port"] = json!(80.0);
    let floated = set(&registry, CONFIG, float_port.clone(), true);
    assert_eq!(floated.data["error"], "invalid_value", "{}", floated.message);
    assert!(floated.message.contains("(80)"), "{}", floated.message);
    let verdict = ok(validate_value(
        &registry,
        ValidateValueParams {
            source: plant(),
            record_name: Some(CONFIG.into()),
            value: float_port,
            window_ms: Some(0),
            ..Default::default()
        },
    ));
    assert_eq!(verdict["valid"], false, "{verdict}");
    let mut moved = config.clone();
    moved["port"] = json!(9090);
    let ported = set(&registry, CONFIG, moved.clone(), false);
    assert!(ported.success, "{}", ported.message);
    assert!(ported.message.contains("/port 8080 → 9090"), "{}", ported.message);
    assert!(
        ported.message.contains("warning"),
        "9090 is beyond the observed 8080: {}",
        ported.message
    );
    assert_eq!(instance.current(CONFIG), Some(moved));
    let outcomes: Vec<String> = std::fs::read_to_string(log.path())
        .expect("reads the log")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON")["outcome"].to_string())
        .collect();
    assert_eq!(outcomes, ["\"written\"", "\"write_refused\"", "\"written\""]);
}

#[test]
fn a_followed_source_sees_the_write_like_any_other_value() {
    for kind in kinds() {
        followed(kind);
    }
}

fn followed(kind: Kind) {
    let instance = Instance::start(kind);
    let registry = instance.writable_registry();
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(50)).expect("follows the instance");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut celsius = 22.0;
    let arrived = |celsius: f64| {
        registry.live.live_values("plant")[SETPOINT].iter().any(|v| v["celsius"] == json!(celsius))
    };
    // The feed subscribes in the background: write until a write comes through it.
    while Instant::now() < deadline && !arrived(celsius) {
        celsius += 0.5;
        let value =
            json!({"celsius": celsius, "sensor_id": "sensor-01", "timestamp": 1730700000.0});
        let done = set(&registry, SETPOINT, value, false);
        assert!(done.success, "{}", done.message);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(arrived(celsius), "the write did not reach the followed source ({kind:?})");
    let mut announced = false;
    while let Ok(name) = changes.try_recv() {
        announced |= name == "plant";
    }
    assert!(announced, "the change was not announced");
}

#[test]
fn instances_are_named_by_socket_path_inside_allowed_directories_only() {
    for kind in kinds() {
        by_socket_path(kind);
    }
}

fn by_socket_path(kind: Kind) {
    let instance = Instance::start(kind);
    let dir = instance.socket().parent().expect("the socket's directory").to_path_buf();
    let socket = instance.socket().display().to_string();
    let registry = Services::new();
    let schema_at = |registry: &Services, source: &str| {
        query_schema(
            registry,
            QuerySchemaParams {
                source: Some(source.into()),
                record_name: Some(SETPOINT.into()),
                window_ms: Some(0),
                ..Default::default()
            },
        )
    };
    // No directory allowed: refused, saying how to allow one.
    let refused = schema_at(&registry, &socket);
    assert_eq!(refused.data["error"], "unknown_source", "{}", refused.message);
    assert!(refused.message.contains("--aimdb-dir"), "{}", refused.message);

    // Another directory allowed: still refused, even through a link placed inside it.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    std::os::unix::fs::symlink(instance.socket(), elsewhere.path().join("link.sock"))
        .expect("links");
    registry
        .sources
        .set_aimdb_dirs(AllowedDirs::new(&[(elsewhere.path().to_path_buf(), true)]).expect("dir"));
    let outside = schemascope_tools::tool_table::call_tool(
        &registry,
        Caller::Ai,
        "query_schema",
        json!({"source": elsewhere.path().join("link.sock"), "record_name": SETPOINT, "window_ms": 0}),
    );
    assert!(
        outside.message.contains("is not inside the directories allowed"),
        "{}",
        outside.message
    );

    // Its directory allowed, read-only: read by path, found by discovery, not written.
    registry.sources.set_aimdb_dirs(AllowedDirs::new(&[(dir.clone(), false)]).expect("dir"));
    let names: Vec<&str> = listed(&registry).iter().map(|spec| spec.name).collect();
    assert!(names.contains(&"discover_instances") && !names.contains(&"set_record"), "{names:?}");
    let schema = ok(schema_at(&registry, &format!("aimdb:unix://{socket}")));
    assert_eq!(schema["example"], initial_setpoint());
    let found = ok(call_tool(&registry, Caller::Ai, "discover_instances", json!({})));
    let instances = found["instances"].as_array().expect("instances");
    assert_eq!(instances.len(), 1, "{found}");
    assert_eq!(instances[0]["protocol"], kind.protocol().version());
    assert_eq!(instances[0]["writes_allowed"], false);
    let writable: Vec<&str> = instances[0]["records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["writable"] == true)
        .filter_map(|r| r["key"].as_str())
        .collect();
    assert_eq!(writable, [CONFIG, SETPOINT]);
    let value = json!({"celsius": 19.5, "sensor_id": "sensor-01", "timestamp": 1730700000.0});
    let params = |source: &str| SetRecordParams {
        source: Some(source.into()),
        record_name: SETPOINT.into(),
        value: value.clone(),
        dry_run: None,
    };
    let not_enabled = set_record(&registry, params(&socket));
    assert_eq!(not_enabled.data["error"], "writes_not_allowed", "{}", not_enabled.message);

    // A write directory: set by path.
    registry.sources.set_aimdb_dirs(AllowedDirs::new(&[(dir, true)]).expect("dir"));
    let done = set_record(&registry, params(&socket));
    assert!(done.success, "{}", done.message);
    assert_eq!(instance.current(SETPOINT), Some(value));
}
