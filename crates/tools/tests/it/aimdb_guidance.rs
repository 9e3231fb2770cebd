//! The aimdb_guidance section's timestamps, read from every value held: one unit when they all
//! agree, each unit with its count when one odd write disagrees, nothing claimed for numbers
//! that are no date.

use schemascope_sources::SourceSpec;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_sources::aimdb::{DEFAULT_TIMEOUT, Protocol, Snapshot, ValueText};
use schemascope_tools::aimdb_guidance::section;
use serde_json::json;

#[test]
fn timestamps_are_read_from_every_value_held() {
    let dir = tempfile::tempdir().expect("temp dir");
    let records = vec![
        FakeRecord::new(
            "setpoint",
            "server::Setpoint",
            vec![json!({"celsius": 21.0, "timestamp": 1730649600.0})],
        ),
        FakeRecord::new(
            "log",
            "server::Log",
            vec![json!({"created_at": 1730649600123_u64, "count": 5})],
        ),
        FakeRecord::new("odd", "server::Odd", vec![json!({"updated_time": 42})]),
    ];
    let fake =
        FakeAimdb::start(&dir.path().join("a.sock"), Protocol::V1, Behaviour::Normal, records)
            .expect("starts");
    let spec: SourceSpec = format!("plant=aimdb:{}", fake.path().display()).parse().expect("valid");
    let mut snapshot = Snapshot::fetch(fake.path(), DEFAULT_TIMEOUT).expect("reads");
    snapshot
        .push("setpoint", ValueText::from(&json!({"celsius": 22.0, "timestamp": 1730650000.5})));
    let agreed = section(Some(&snapshot.clone().to_source(&spec)));
    assert!(
        agreed.contains(
            "`setpoint` `timestamp`: 2 value(s), all seconds since 1970 (latest 2024-11-03)"
        ),
        "{agreed}"
    );
    assert!(
        agreed.contains("`log` `created_at`: 1 value(s), all milliseconds since 1970"),
        "{agreed}"
    );
    assert!(agreed.contains("`odd` `updated_time`: 1 value(s), none a date"), "{agreed}");
    assert!(!agreed.contains("`count`:") && !agreed.contains("`celsius`:"), "{agreed}");

    // One write in milliseconds does not make the data's unit milliseconds.
    snapshot.push(
        "setpoint",
        ValueText::from(&json!({"celsius": 22.0, "timestamp": 1730650000000_u64})),
    );
    let mixed = section(Some(&snapshot.to_source(&spec)));
    assert!(
        mixed.contains("`setpoint` `timestamp`: mixed, 1 in milliseconds, 2 in seconds: ask"),
        "{mixed}"
    );
    // Without a source, the advice says how to get the units.
    assert!(section(None).contains("Name an AimDB `source`"));
}
