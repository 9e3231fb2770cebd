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

/// Profiles a two-column table once the test lets it, reporting column `a` done first.
#[derive(Debug)]
struct Gated {
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl schemascope_core::DeferredProfile for Gated {
    fn compute(
        &self,
        _table: &schemascope_core::TableInfo,
        progress: &schemascope_core::ProfileProgress,
    ) -> Result<schemascope_core::CollectionProfile, schemascope_core::deferred::ProfileFailure>
    {
        let mut first = schemascope_core::ProfileBuilder::new();
        first.add_value(&serde_json::json!({"a": 1}));
        progress.finished(first.finish(1));
        progress.step("the distinct values of `b`");
        let _ = self.release.lock().map(|r| r.recv());
        let mut builder = schemascope_core::ProfileBuilder::new();
        builder.add_value(&serde_json::json!({"a": 1, "b": "x"}));
        Ok(builder.finish(1))
    }
}

#[test]
fn a_call_needing_a_whole_table_profile_says_how_far_it_is_instead_of_waiting_for_it() {
    use schemascope_core::{ColumnInfo, TableInfo, TableKind};
    let column = |name: &str, declared: &str| ColumnInfo {
        name: name.into(),
        declared_type: declared.into(),
        nullable: true,
        comment: None,
        base_type: None,
    };
    let table = TableInfo {
        name: "readings".into(),
        kind: TableKind::Table,
        columns: vec![column("a", "integer"), column("b", "text")],
        primary_key: Vec::new(),
        foreign_keys: Vec::new(),
        row_count: Some(1),
        row_count_estimated: true,
        comment: None,
    };
    let (release, gate) = std::sync::mpsc::channel();
    let collection = std::sync::Arc::new(schemascope_core::Collection::from_table(
        table,
        Box::new(Gated { release: std::sync::Mutex::new(gate) }),
    ));
    let services = schemascope_tools::Services::new();
    let spec: schemascope_sources::SourceSpec = "slow=demo:infrastructure".parse().expect("spec");
    services.sources.insert(schemascope_sources::Source {
        spec,
        format: schemascope_sources::Format::Sqlite,
        collections: vec![collection.clone()],
        warnings: Vec::new(),
        path: None,
        bytes: 0,
        database: None,
        aimdb: None,
        direction: None,
    });
    services.sources.set_profile_patience(Some(Duration::from_millis(50)));
    let params = || schemascope_tools::QuerySchemaParams {
        source: Some("slow".into()),
        collection: Some("readings".into()),
        ..Default::default()
    };
    let pending = schemascope_tools::query_schema(&services, params());
    assert!(!pending.success);
    assert_eq!(pending.data["error"], "profile_pending", "{}", pending.message);
    assert!(pending.message.contains("1 of 2 columns done"), "{}", pending.message);
    assert!(pending.message.contains("the distinct values of `b`"), "{}", pending.message);
    let stratified = schemascope_tools::sample_data(
        &services.sources,
        schemascope_tools::SampleDataParams {
            source: Some("slow".into()),
            collection: Some("readings".into()),
            stratify_by: Some("b".into()),
            ..Default::default()
        },
    );
    assert_eq!(stratified.data["error"], "profile_pending", "{}", stratified.message);

    release.send(()).expect("release");
    let deadline = Instant::now() + Duration::from_secs(30);
    while collection.profile_state() != ProfileState::Ready {
        assert!(Instant::now() < deadline, "the profile finishes");
        std::thread::sleep(Duration::from_millis(10));
    }
    let answered = schemascope_tools::query_schema(&services, params());
    assert!(answered.success, "{}", answered.message);
    assert_eq!(answered.data["schema"]["properties"]["b"]["type"], "string", "{}", answered.data);
}

/// describe_property on a table not profiled yet answers from its column alone and has the
/// table's profile computed in the background, so the next calls on that table read it instead
/// of scanning the column again.
#[test]
fn describing_a_column_of_a_table_not_profiled_yet_profiles_the_table_in_the_background() {
    let services = common::registry(&[&common::chinook_spec()]);
    services.sources.set_profile_patience(Some(Duration::ZERO));
    let answer = schemascope_tools::describe_property(
        &services,
        schemascope_tools::DescribePropertyParams {
            source: Some("chinook".into()),
            collection: Some("Track".into()),
            property: "Milliseconds".into(),
            ..Default::default()
        },
    );
    assert!(answer.success, "{}", answer.message);
    assert_eq!(answer.data["numberCount"], 3503, "{}", answer.data);
    let source = services.sources.get(Some("chinook")).expect("served");
    let track = source.collection("Track").expect("Track");
    let deadline = Instant::now() + Duration::from_secs(60);
    while track.profile_state() != ProfileState::Ready {
        assert!(Instant::now() < deadline, "the table's profile is computed without another call");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Only the table asked about: the others wait for a call that needs them.
    let album = source.collection("Album").expect("Album");
    assert_eq!(album.profile_state(), ProfileState::NotStarted);
}
