//! Database tables profiled in the background: a call that does not wait for them answers with
//! what is known, and each profile finished is announced on the sources' change broadcast (so a
//! `schema://` resource read while it was pending is read again).

use std::time::{Duration, Instant};

use schemascope_core::ProfileState;
use schemascope_tools::DescribeSchemaParams;

use crate::common;

#[test]
fn a_call_that_does_not_wait_answers_at_once_and_each_finished_profile_is_announced() {
    let services = common::registry(&[&common::chinook_spec()]);
    let mut changes = services.sources.subscribe();
    // Not waiting at all: the answer shows the catalog of the tables not profiled yet.
    services.sources.set_profile_patience(Some(Duration::ZERO));
    let answer = schemascope_tools::describe_schema(
        &services.sources,
        DescribeSchemaParams { source: Some("chinook".into()), ..Default::default() },
    );
    assert!(answer.success, "{}", answer.message);
    let source = services.sources.get(Some("chinook")).expect("served");
    let deadline = Instant::now() + Duration::from_secs(60);
    while source.collections.iter().any(|c| c.profile_state() != ProfileState::Ready) {
        assert!(Instant::now() < deadline, "the background profiles finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut announced = 0;
    while let Ok(name) = changes.try_recv() {
        assert_eq!(name, "chinook");
        announced += 1;
    }
    // Every one of Chinook's 11 tables was profiled in the background and announced (after the
    // profiles are ready, each announcement is sent: wait for the last ones).
    let deadline = Instant::now() + Duration::from_secs(10);
    while announced < source.collections.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        while changes.try_recv().is_ok() {
            announced += 1;
        }
    }
    assert_eq!(announced, source.collections.len());
    // Now ready, the same call answers with whole profiles.
    let answer = schemascope_tools::describe_schema(
        &services.sources,
        DescribeSchemaParams { source: Some("chinook".into()), ..Default::default() },
    );
    assert!(!answer.message.contains("Profiles not ready"), "{}", answer.message);
    assert!(
        answer.data["collections"]
            .as_array()
            .is_some_and(|c| c.iter().all(|t| t.get("profile").is_none()))
    );
}
