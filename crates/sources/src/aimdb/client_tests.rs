//! The client against the fake instance, in both wires: handshake and version choice, every
//! method, subscriptions interleaved with replies, and each failure ending in a clear error.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use super::fake::{Behaviour, FakeAimdb, FakeRecord};
use super::{AimxClient, AimxError, Protocol, ValueText};

fn socket(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("aimdb.sock")
}

fn records() -> Vec<FakeRecord> {
    vec![
        FakeRecord::new(
            "server::Temperature",
            "fixture::Temperature",
            vec![json!({"celsius": 21.5, "sensor_id": "s1"})],
        ),
        FakeRecord::new("sensors.outdoor", "fixture::OutdoorReading", vec![]),
    ]
}

fn start(protocol: Protocol, behaviour: Behaviour) -> (tempfile::TempDir, FakeAimdb) {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake =
        FakeAimdb::start(&socket(&dir), protocol, behaviour, records()).expect("fake starts");
    (dir, fake)
}

const SHORT: Duration = Duration::from_millis(400);

#[test]
fn speaks_both_wires_and_picks_the_version_from_the_handshake() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let (_dir, fake) = start(protocol, Behaviour::Normal);
        let mut client = AimxClient::connect(fake.path(), SHORT).expect("connects");
        assert_eq!(client.protocol(), protocol);
        assert_eq!(client.welcome()["version"], protocol.version());
        let list = client.list_records().expect("lists");
        let keys: Vec<&str> = list.iter().filter_map(|m| m["record_key"].as_str()).collect();
        assert_eq!(keys, ["server::Temperature", "sensors.outdoor"], "{protocol:?}");
        assert_eq!(
            client.get("server::Temperature").expect("gets").expect("has a value"),
            json!({"celsius": 21.5, "sensor_id": "s1"})
        );
        assert_eq!(client.get("sensors.outdoor").expect("no value is not an error"), None);
        // The first drain opens the cursor; later ones return what was produced since.
        assert_eq!(
            client.drain("sensors.outdoor", None).expect("drains"),
            Vec::<serde_json::Value>::new()
        );
        client.subscribe("sensors.outdoor").expect("subscribes");
        // Let the fake register the subscription before values are pushed.
        assert_eq!(client.list_records().expect("lists").len(), 2);
        fake.push("sensors.outdoor", json!({"celsius": 9}));
        fake.push("sensors.outdoor", json!({"celsius": 9.5, "wind": null}));
        let first = client.next_event(Instant::now() + SHORT).expect("reads").expect("an event");
        assert_eq!(
            (first.key.as_str(), first.seq, first.data),
            ("sensors.outdoor", 1, ValueText::from(&json!({"celsius": 9})))
        );
        // A request while events are queued still gets its own reply; the event is kept.
        assert_eq!(
            client.drain("sensors.outdoor", None).expect("drains"),
            vec![json!({"celsius": 9}), json!({"celsius": 9.5, "wind": null})]
        );
        let second = client.next_event(Instant::now() + SHORT).expect("reads").expect("an event");
        assert_eq!(
            (second.seq, second.data),
            (2, ValueText::from(&json!({"celsius": 9.5, "wind": null})))
        );
        assert_eq!(
            client.next_event(Instant::now() + Duration::from_millis(50)).expect("reads"),
            None
        );
    }
}

#[test]
fn a_v3_subscription_to_a_missing_record_fails_clearly() {
    let (_dir, fake) = start(Protocol::V3, Behaviour::Normal);
    let mut client = AimxClient::connect(fake.path(), SHORT).expect("connects");
    // 3.0 acknowledges nothing, but the barrier request after `sub` brings the refusal back.
    let error = client.subscribe("nope").expect_err("refused");
    assert!(
        error.to_string().contains("subscribe to `nope`")
            && error.to_string().contains("not_found"),
        "{error}"
    );
}

#[test]
fn a_server_that_closes_mid_request_is_reported_not_waited_for() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let (_dir, fake) = start(protocol, Behaviour::CloseOn("record.get".into()));
        let mut client =
            AimxClient::connect(fake.path(), Duration::from_secs(5)).expect("connects");
        let started = Instant::now();
        let error = client.get("server::Temperature").expect_err("closed");
        assert!(
            matches!(&error, AimxError::Closed { during, .. } if during == "record.get"),
            "{error:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "waited {:?}", started.elapsed());
        assert!(error.to_string().contains("closed the connection during record.get"), "{error}");
    }
}

#[test]
fn a_silent_server_times_out() {
    let (_dir, fake) = start(Protocol::V3, Behaviour::Silent);
    let started = Instant::now();
    let error =
        AimxClient::connect(fake.path(), Duration::from_millis(200)).expect_err("times out");
    assert!(matches!(&error, AimxError::Timeout { timeout_ms: 200, .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(error.to_string().contains("did not answer the handshake within 200 ms"), "{error}");
}

#[test]
fn foreign_protocol_versions_are_refused_by_name() {
    let (_dir, fake) = start(Protocol::V3, Behaviour::Version("4.1".into()));
    let error = AimxClient::connect(fake.path(), SHORT).expect_err("4.x is not spoken");
    assert!(matches!(error, AimxError::UnsupportedVersion { .. }), "{error:?}");
    assert!(error.to_string().contains("\"4.1\""), "{error}");
    let (_dir, fake) = start(Protocol::V1, Behaviour::Version("1.0".into()));
    let error = AimxClient::connect(fake.path(), SHORT).expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("unsupported_version: Server supports version 1.0, client requested 1.0"),
        "{error}"
    );
}

#[test]
fn connection_failures_name_the_socket_and_what_to_try() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.sock");
    let error = AimxClient::connect(&missing, SHORT).expect_err("no socket");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("Cannot connect to AimDB at {}", missing.display())),
        "{text}"
    );
    assert!(text.contains("No socket exists at") && text.contains("Try:\n1."), "{text}");
    // A stale socket: bound once, nobody listening now.
    let stale = socket(&dir);
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("binds"));
    let error = AimxClient::connect(&stale, SHORT).expect_err("nobody listens");
    assert!(error.to_string().contains("nothing listens on it"), "{error}");
    let file = dir.path().join("plain.sock");
    std::fs::write(&file, b"{}").expect("writes");
    let error = AimxClient::connect(&file, SHORT).expect_err("not a socket");
    assert!(error.to_string().contains("is not a Unix socket"), "{error}");
}

#[test]
fn a_line_over_the_bound_is_refused_and_read_past_then_the_next_request_is_answered() {
    for protocol in [Protocol::V1, Protocol::V3] {
        let (_dir, fake) = start(protocol, Behaviour::Normal);
        let mut client =
            AimxClient::connect(fake.path(), Duration::from_secs(5)).expect("connects");
        let bound = super::limits().record_bytes + 64 * 1024;
        fake.set_behaviour(Behaviour::HugeGet(usize::try_from(bound).expect("fits") + 1_000_000));
        let error = client.get("server::Temperature").expect_err("too long");
        assert_eq!(error.kind(), "aimdb_line_too_long", "{protocol:?}");
        assert!(error.to_string().contains(&format!("longer than {bound} bytes")), "{error}");
        fake.set_behaviour(Behaviour::Normal);
        assert_eq!(
            client.get("server::Temperature").expect("answered").expect("has a value"),
            json!({"celsius": 21.5, "sensor_id": "s1"}),
            "{protocol:?}"
        );
        assert!(
            client.bytes_read() > bound,
            "the long line was read past: {}",
            client.bytes_read()
        );
    }
}
