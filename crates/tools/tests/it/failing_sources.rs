//! Sources that fail to load when serving starts (missing file, unreadable file, PostgreSQL
//! down, AimDB socket dead): the others are served, the failures are listed with their error and
//! retried, tools on them say why and when the next try is, and a source that comes back is
//! served and announced. One-shot loading still fails.

use std::time::{Duration, Instant};

use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common;

fn specs(texts: &[String]) -> Vec<SourceSpec> {
    texts.iter().map(|t| t.parse().expect("valid spec")).collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn listed(registry: &Services) -> Value {
    common::ok(list_sources(registry, Default::default()))
}

#[test]
fn a_missing_file_is_listed_with_its_error_and_served_once_it_appears() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.ndjson");
    std::fs::write(&good, "{\"a\": 1}\n").expect("write");
    let missing = dir.path().join("später.ndjson");
    let registry = Services::new();
    registry.sources.set_retry_first(Duration::from_secs(3600));
    let failed = registry
        .sources
        .load_serving(
            &specs(&[format!("good={}", good.display()), format!("late={}", missing.display())]),
            &NoProgress,
        )
        .expect("serving starts");
    assert_eq!(failed.len(), 1);
    assert_eq!(registry.sources.names(), vec!["good".to_string()]);

    let data = listed(&registry);
    assert_eq!(data["sources"].as_array().map(Vec::len), Some(1));
    let entry = &data["failed"][0];
    assert_eq!(entry["name"], "late");
    assert_eq!(entry["status"], "failed");
    assert_eq!(entry["attempts"], 1);
    assert!(entry["error"].as_str().is_some_and(|e| e.contains("später.ndjson")), "{entry}");
    assert!(entry["nextRetryInSeconds"].as_f64().is_some_and(|s| s > 3000.0), "{entry}");

    // A tool on it names the failure and the next retry.
    let result = describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("late".into()), ..Default::default() },
    );
    assert!(!result.success);
    assert_eq!(result.data["error"], "source_unavailable");
    assert!(
        result.message.contains("später.ndjson") && result.message.contains("next retry in"),
        "{}",
        result.message
    );
    // The healthy source answers.
    common::ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("good".into()), ..Default::default() },
    ));

    // The file appears: the watcher loads it (the retry is an hour away) and subscribers hear it.
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(100)).expect("watch");
    std::fs::write(&missing, "{\"b\": 1}\n{\"b\": 2}\n").expect("write");
    wait_until("the late source is served", || {
        registry.sources.names().contains(&"late".to_string())
    });
    assert_eq!(changes.try_recv().ok().as_deref(), Some("late"));
    let data = listed(&registry);
    assert_eq!(data["failed"], json!([]));
    let described = common::ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("late".into()), ..Default::default() },
    ));
    assert_eq!(described["collections"][0]["count"], 2);
}

#[test]
fn with_no_healthy_source_serving_starts_and_every_call_names_the_failures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Services::new();
    let texts = vec![
        format!("a={}", dir.path().join("nope/a.json").display()),
        // Nothing listens on port 1: refused at once.
        "db=postgres://nobody:secret@127.0.0.1:1/none".to_string(),
    ];
    let failed =
        registry.sources.load_serving(&specs(&texts), &NoProgress).expect("serving starts");
    assert_eq!(failed.len(), 2);
    assert!(registry.sources.names().is_empty());
    let result = describe_schema(&registry.sources, DescribeSchemaParams::default());
    assert!(!result.success);
    assert_eq!(result.data["error"], "source_unavailable");
    assert!(
        result.message.contains("`a`") && result.message.contains("`db`"),
        "{}",
        result.message
    );
    let data = listed(&registry);
    let listed_uris: Vec<String> = data["failed"]
        .as_array()
        .expect("failed")
        .iter()
        .map(|f| f["uri"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        listed_uris.iter().all(|u| !u.contains("secret")),
        "the password is never shown: {listed_uris:?}"
    );
    // One-shot loading is unchanged: the first failure is the error.
    assert!(Services::new().sources.load(&specs(&texts), &NoProgress).is_err());
}

#[test]
fn a_failed_source_is_retried_with_backoff_until_it_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sub/later.json");
    let registry = Services::new();
    registry.sources.set_retry_first(Duration::from_millis(100));
    // No watch: its directory does not exist yet, so only the retries can find it.
    registry
        .sources
        .load_serving(&specs(&[format!("later={}", path.display())]), &NoProgress)
        .expect("serving starts");
    wait_until("a few retries", || {
        registry.sources.failed_source("later").is_some_and(|f| f.attempts >= 3)
    });
    let failed = registry.sources.failed_source("later").expect("still failing");
    assert!(failed.retry_in() <= 60.0);
    std::fs::create_dir_all(dir.path().join("sub")).expect("mkdir");
    std::fs::write(
        &path,
        r#"{"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"}]}"#,
    )
    .expect("write");
    wait_until("the source loads", || registry.sources.names() == vec!["later".to_string()]);
    assert!(registry.sources.failed_source("later").is_none());
}

fn records() -> Vec<FakeRecord> {
    vec![FakeRecord::new(
        "server::Config",
        "server::Config",
        vec![json!({"host": "0.0.0.0", "port": 8080})],
    )]
}

#[test]
fn a_dead_aimdb_socket_is_retried_followed_when_it_comes_back_and_old_data_says_its_age() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("plant.sock");
    let good = dir.path().join("good.ndjson");
    std::fs::write(&good, "{\"a\": 1}\n").expect("write");
    let registry: Services = Services::new();
    registry.sources.set_retry_first(Duration::from_millis(100));
    let texts = vec![
        format!("plant=aimdb:unix://{}", socket.display()),
        format!("good={}", good.display()),
    ];
    let failed =
        registry.sources.load_serving(&specs(&texts), &NoProgress).expect("serving starts");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].kind, "aimdb_connect_failed");
    registry.watch_with(Duration::from_millis(50)).expect("watch");

    let fake =
        FakeAimdb::start(&socket, Protocol::V3, Behaviour::Normal, records()).expect("fake starts");
    wait_until("the instance is served", || {
        registry.sources.names().contains(&"plant".to_string())
    });
    // It is followed: a new value arrives.
    wait_until("values flow", || {
        fake.push("server::Config", json!({"host": "0.0.0.0", "port": 9090}));
        std::thread::sleep(Duration::from_millis(100));
        registry.live.live_values("plant")["server::Config"].iter().any(|v| v["port"] == 9090)
    });
    let fresh = common::ok(list_sources(&registry, Default::default()));
    let plant = fresh["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|s| s["name"] == "plant")
        .cloned()
        .expect("plant");
    assert_eq!(plant["live"], json!({"connected": true, "state": "following"}));
    let answer =
        tool_table::call_tool(&registry, Caller::Ai, "describe_schema", json!({"source": "plant"}));
    assert!(answer.success && answer.data.get("dataAgeSeconds").is_none(), "{}", answer.message);

    // The instance goes away: the data is kept, and answers say how old it is.
    drop(fake);
    wait_until("the loss is noticed", || registry.live.live_lost_since("plant").is_some());
    std::thread::sleep(Duration::from_millis(1100));
    let answer =
        tool_table::call_tool(&registry, Caller::Ai, "describe_schema", json!({"source": "plant"}));
    assert!(answer.success, "{}", answer.message);
    let age = answer.data["dataAgeSeconds"].as_f64().expect("an age");
    assert!(age >= 1.0, "{age}");
    assert!(answer.data["dataAsOf"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(answer.message.contains("data as of"), "{}", answer.message);
    // Other sources' answers are not marked.
    let other =
        tool_table::call_tool(&registry, Caller::Ai, "describe_schema", json!({"source": "good"}));
    assert!(other.success && other.data.get("dataAgeSeconds").is_none());
    let listed = common::ok(list_sources(&registry, Default::default()));
    let plant = listed["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|s| s["name"] == "plant")
        .cloned()
        .expect("plant");
    assert_eq!(plant["live"]["connected"], false);
    assert_eq!(plant["live"]["state"], "lost");
}
