//! A table whose profile is not ready — being computed, or stopped part way — is shown as far as
//! it is known (the catalog, the row count or its estimate, the columns finished), never with a
//! stand-in's zeros.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use schemascope_core::markdown::schema_markdown;
use schemascope_core::summary::summarize_collection;
use schemascope_core::{
    CollectionProfile, ColumnInfo, DeferredProfile, ProfileBuilder, ProfileFailure,
    ProfileProgress, ProfileState, TableInfo, TableKind,
};
use serde_json::{Value, json};

fn column(name: &str, declared_type: &str, comment: Option<&str>) -> ColumnInfo {
    ColumnInfo {
        name: name.into(),
        declared_type: declared_type.into(),
        nullable: true,
        comment: comment.map(str::to_string),
        base_type: None,
    }
}

fn table(row_count: Option<u64>, estimated: bool) -> TableInfo {
    TableInfo {
        name: "readings".into(),
        kind: TableKind::Table,
        columns: vec![column("a", "integer", None), column("b", "text", Some("who wrote it"))],
        primary_key: vec!["a".into()],
        foreign_keys: Vec::new(),
        row_count,
        row_count_estimated: estimated,
        comment: None,
    }
}

/// The profile of column `a` alone over three rows (1, 2, 5): what a scan finished first.
fn column_a() -> CollectionProfile {
    let mut builder = ProfileBuilder::new();
    for a in [1, 2, 5] {
        builder.add_value(&json!({"a": a}));
    }
    builder.finish(3)
}

/// Finishes column `a`, then stops for a cause that would repeat.
#[derive(Debug)]
struct StopsAfterFirstColumn;

impl DeferredProfile for StopsAfterFirstColumn {
    fn compute(
        &self,
        _table: &TableInfo,
        progress: &ProfileProgress,
    ) -> Result<CollectionProfile, ProfileFailure> {
        progress.finished(column_a());
        progress.step("the distinct values of `b`");
        Err(ProfileFailure {
            message: "canceling statement due to statement timeout".into(),
            transient: false,
        })
    }
}

/// Fails before finishing anything.
#[derive(Debug)]
struct FailsAtOnce;

impl DeferredProfile for FailsAtOnce {
    fn compute(
        &self,
        _table: &TableInfo,
        _progress: &ProfileProgress,
    ) -> Result<CollectionProfile, ProfileFailure> {
        Err(ProfileFailure {
            message: "permission denied for table readings".into(),
            transient: false,
        })
    }
}

fn summary_json(collection: &schemascope_core::Collection) -> Value {
    serde_json::to_value(summarize_collection(collection)).unwrap()
}

#[test]
fn a_profile_stopped_part_way_shows_the_columns_finished_and_the_catalog() {
    let collection = schemascope_core::Collection::from_table(
        table(Some(10_000_000), true),
        Box::new(StopsAfterFirstColumn),
    );
    // The stand-in only names the columns; it is not the profile.
    let _ = collection.profile();
    assert!(collection.profile_ready().is_none());
    assert_eq!(collection.profile_state(), ProfileState::Failed);
    let summary = summary_json(&collection);
    // The scan counted the rows: the count is exact, not the catalog's estimate.
    assert_eq!(summary["count"], 3);
    assert!(summary.get("countIsEstimate").is_none(), "{summary}");
    let properties = summary["properties"].as_array().unwrap();
    assert_eq!(properties.len(), 1, "{summary}");
    assert_eq!(properties[0]["path"], "a");
    assert_eq!(properties[0]["totalCount"], 3);
    assert_eq!(properties[0]["range"], json!({"min": 1, "max": 5}));
    assert_eq!(properties[0]["column"]["declaredType"], "integer");
    assert_eq!(
        summary["unprofiledColumns"],
        json!([{"path": "b", "column": {"declaredType": "text", "nullable": true, "comment": "who wrote it"}}])
    );
    assert_eq!(summary["profile"]["state"], "failed");
    assert_eq!(summary["profile"]["columnsDone"], 1);
    assert_eq!(summary["profile"]["columns"], 2);
    assert!(summary["profile"]["error"].as_str().unwrap().contains("statement timeout"));
    // The failure is kept: a second use does not scan again.
    let _ = collection.profile();
    assert_eq!(collection.profile_state(), ProfileState::Failed);

    let markdown = schema_markdown("bench", &[&collection], None).markdown;
    assert!(markdown.contains("**Table `readings`** (3 rows)"), "{markdown}");
    assert!(
        markdown.contains(
            "profile stopped: canceling statement due to statement timeout: 1 of 2 columns profiled"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("- `b` `text` (not profiled yet) — who wrote it"), "{markdown}");
    assert!(markdown.contains("- `a` `integer`, primary key"), "{markdown}");
}

#[test]
fn a_profile_that_finished_nothing_shows_the_estimate_as_an_estimate() {
    let collection = schemascope_core::Collection::from_table(
        table(Some(10_000_000), true),
        Box::new(FailsAtOnce),
    );
    let _ = collection.profile();
    let summary = summary_json(&collection);
    assert_eq!(summary["count"], 10_000_000);
    assert_eq!(summary["countIsEstimate"], true);
    assert_eq!(summary["properties"], json!([]));
    assert_eq!(summary["unprofiledColumns"].as_array().unwrap().len(), 2);
    assert_eq!(summary["profile"]["columnsDone"], 0);
    let markdown = schema_markdown("bench", &[&collection], None).markdown;
    assert!(markdown.contains("(≈10000000 rows)"), "{markdown}");
    assert!(markdown.contains("the row count is the database's estimate"), "{markdown}");
    assert!(!markdown.contains("(0 rows)"), "{markdown}");
    assert!(!markdown.contains("no properties"), "{markdown}");
}

/// Finishes column `a`, then waits for the test to let it finish.
#[derive(Debug)]
struct Gated {
    release: Mutex<mpsc::Receiver<()>>,
    reached: Mutex<mpsc::Sender<()>>,
}

impl DeferredProfile for Gated {
    fn compute(
        &self,
        _table: &TableInfo,
        progress: &ProfileProgress,
    ) -> Result<CollectionProfile, ProfileFailure> {
        progress.finished(column_a());
        progress.step("the distinct values of `b`");
        let _ = self.reached.lock().unwrap().send(());
        let _ = self.release.lock().unwrap().recv();
        let mut builder = ProfileBuilder::new();
        for (a, b) in [(1, "x"), (2, "y"), (5, "x")] {
            builder.add_value(&json!({"a": a, "b": b}));
        }
        Ok(builder.finish(3))
    }
}

#[test]
fn a_profile_being_computed_is_shown_as_far_as_it_is_known_and_then_whole() {
    let (release, gate) = mpsc::channel();
    let (reached, at_gate) = mpsc::channel();
    let collection = Arc::new(schemascope_core::Collection::from_table(
        table(None, false),
        Box::new(Gated { release: Mutex::new(gate), reached: Mutex::new(reached) }),
    ));
    assert_eq!(collection.profile_state(), ProfileState::NotStarted);
    let computing = {
        let collection = Arc::clone(&collection);
        std::thread::spawn(move || collection.profile().item_count)
    };
    at_gate.recv().unwrap();
    assert_eq!(collection.profile_state(), ProfileState::Computing);
    let summary = summary_json(&collection);
    assert_eq!(summary["profile"]["state"], "computing");
    assert_eq!(summary["profile"]["computing"], "the distinct values of `b`");
    assert_eq!(summary["properties"].as_array().unwrap().len(), 1);
    assert_eq!(summary["count"], 3);
    release.send(()).unwrap();
    assert_eq!(computing.join().unwrap(), 3);
    let summary = summary_json(&collection);
    assert!(summary.get("profile").is_none(), "{summary}");
    assert!(summary.get("unprofiledColumns").is_none(), "{summary}");
    assert_eq!(summary["properties"].as_array().unwrap().len(), 2);
}
