//! set_record against an instance that misbehaves (the fake, in both wires): one that accepts a
//! write and keeps the old value is caught by the read-back; one that closes mid-write leaves
//! the outcome unknown, said and logged; a reply line past the bound is refused before anything
//! is sent; a value past the per-value bound is never sent.

use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_sources::aimdb::{Protocol, limits};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::*;
use serde_json::{Value, json};

fn served(fake: &FakeAimdb) -> Services {
    let services = Services::new();
    let mut spec: SourceSpec =
        format!("plant=aimdb:unix://{}", fake.path().display()).parse().expect("valid");
    spec.limits.allow_writes = true;
    services.sources.load(&[spec], &NoProgress).expect("loads");
    services
}

fn set(services: &Services, value: Value) -> ToolResult {
    set_record(
        services,
        SetRecordParams { source: None, record_name: "config".into(), value, dry_run: None },
    )
}

#[test]
fn a_misbehaving_instance_is_reported_not_trusted() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let dir = tempfile::tempdir().expect("temp dir");
        let records = vec![
            FakeRecord::new("config", "server::Config", vec![json!({"port": 8080})]).writable(),
        ];
        let fake =
            FakeAimdb::start(&dir.path().join("a.sock"), protocol, Behaviour::Normal, records)
                .expect("starts");
        let services = served(&fake);
        let log = dir.path().join("writes.ndjson");
        services.writes.set_file(Some(log.clone())).expect("log opens");

        fake.set_behaviour(Behaviour::IgnoreSets);
        let ignored = set(&services, json!({"port": 9090}));
        assert!(!ignored.success, "{protocol:?}: {}", ignored.message);
        assert_eq!(ignored.data["error"], "not_held");
        assert_eq!(ignored.data["value"], json!({"port": 8080}));

        fake.set_behaviour(Behaviour::CloseOn("record.set".into()));
        let cut = set(&services, json!({"port": 9091}));
        assert_eq!(cut.data["error"], "write_outcome_unknown", "{}", cut.message);
        assert!(cut.message.contains("Read the record to see whether it took"), "{}", cut.message);

        // 64 MiB where the value is read: refused past the line bound, before the write.
        fake.set_behaviour(Behaviour::HugeGet(64 << 20));
        let huge = set(&services, json!({"port": 9092}));
        assert!(!huge.success);
        assert!(huge.message.contains("longer than"), "{}", huge.message);

        fake.set_behaviour(Behaviour::Normal);
        let bound = usize::try_from(limits().max_value_bytes).expect("fits");
        let blob = json!({"port": 1, "blob": "x".repeat(bound)});
        let big = set(&services, blob.clone());
        assert_eq!(big.data["error"], "value_too_large", "{}", big.message);
        // A dry run promises no more than the write would do.
        let dry = set_record(
            &services,
            SetRecordParams {
                source: None,
                record_name: "config".into(),
                value: blob,
                dry_run: Some(true),
            },
        );
        assert_eq!(dry.data["error"], "value_too_large", "{}", dry.message);
        assert!(big.message.len() < 1_000, "the refusal does not echo the value");

        let outcomes: Vec<String> = std::fs::read_to_string(&log)
            .expect("log")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("JSON")["outcome"].to_string())
            .collect();
        assert_eq!(outcomes, ["\"not_held\"", "\"write_outcome_unknown\""], "{protocol:?}");
        let done = set(&services, json!({"port": 9093}));
        assert!(done.success, "{}", done.message);
    }
}

/// An instance restarted with other records: set_record goes by what the instance says now, not
/// by the records the source was loaded with.
#[test]
fn writes_follow_the_records_of_a_restarted_instance() {
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("a.sock");
    let first =
        vec![FakeRecord::new("config", "server::Config", vec![json!({"port": 8080})]).writable()];
    let fake = FakeAimdb::start(&socket, Protocol::V3, Behaviour::Normal, first).expect("starts");
    let services = served(&fake);
    drop(fake);
    let second = vec![
        FakeRecord::new("config", "server::Config", vec![json!({"port": 8080})]),
        FakeRecord::new("new.rec", "server::New", vec![json!({"on": true})]).writable(),
    ];
    let _fake =
        FakeAimdb::start(&socket, Protocol::V3, Behaviour::Normal, second).expect("restarts");
    let refused = set(&services, json!({"port": 9090}));
    assert_eq!(refused.data["error"], "not_writable", "{}", refused.message);
    let done = set_record(
        &services,
        SetRecordParams {
            source: None,
            record_name: "new.rec".into(),
            value: json!({"on": false}),
            dry_run: None,
        },
    );
    assert!(done.success, "{}", done.message);
}
