//! A graph session whose file's disk fills up: the change that cannot be saved fails with a clear
//! error and is not applied, the previous state stays whole in memory and in the file, and
//! changes save again once there is room. The disk is a real one: a small tmpfs mounted for the
//! test (it needs root, as in CI; elsewhere the test says so and does nothing).

use std::path::{Path, PathBuf};
use std::process::Command;

use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok};

/// A small tmpfs, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status();
        match mounted {
            Ok(status) if status.success() => Some(Self { dir }),
            other => {
                eprintln!(
                    "note: cannot mount a tmpfs ({other:?}; it needs root): the disk-full test did not run"
                );
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the disk with a file, returning its path.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        // dd stops with "No space left on device" once the disk is full, which is the point.
        let _ = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", filler.display()))
            .args(["bs=64k", "status=none"])
            .status();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).status();
    }
}

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

fn layer(selector: &str, name: &str) -> StyleElementsParams {
    StyleElementsParams {
        source: infra(),
        selector: selector.into(),
        style: serde_json::from_value(json!({"color": "red"})).expect("style"),
        layer_name: Some(name.into()),
        ..Default::default()
    }
}

fn layer_names(registry: &Services) -> Vec<String> {
    let data = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    data["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["name"].as_str().expect("name").to_string())
        .collect()
}

fn selection(registry: &Services) -> Value {
    ok(describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: false },
    ))["nodeIds"]
        .clone()
}

#[test]
fn a_full_disk_refuses_the_change_clearly_and_keeps_the_previous_state() {
    let Some(disk) = SmallDisk::mount("2m") else { return };
    let file = disk.path().join("sessions.sqlite");
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("session file");
    ok(find_and_style_nodes(&registry.graphs, Caller::Ai, layer("type == 'database'", "db-red")));
    ok(select(
        &registry.graphs,
        SelectParams { source: infra(), ids: vec!["server-001".into()], ..Default::default() },
    ));
    let filler = disk.fill();

    // Running an algorithm writes a result per node: far more than the few bytes left.
    let refused = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: "pagerank".into(),
            ..Default::default()
        },
    );
    assert!(!refused.success, "saved on a full disk: {}", refused.message);
    assert_eq!(
        refused.data["error"], "storage_error",
        "a full disk is a storage error, not the caller's: {}",
        refused.data
    );
    for words in
        ["not saved", "previous state is kept", "sessions.sqlite", "full", "free some space"]
    {
        assert!(refused.message.contains(words), "`{words}` missing from: {}", refused.message);
    }
    // Nothing of the refused change is visible, and the rest is as it was.
    let history =
        ok(list_algorithms(&registry.graphs, ListAlgorithmsParams { source: infra() }))["history"]
            .clone();
    assert_eq!(history, json!([]));
    assert_eq!(layer_names(&registry), ["default", "db-red"]);
    assert_eq!(selection(&registry), json!(["server-001"]));

    // A restart on the same file sees the last saved state.
    let restarted = demo();
    restarted.graphs.set_session_file(&file).expect("the file still opens");
    assert_eq!(layer_names(&restarted), ["default", "db-red"]);
    assert_eq!(selection(&restarted), json!(["server-001"]));
    drop(restarted);

    // With room again, changes save.
    std::fs::remove_file(filler).expect("free the disk");
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: "pagerank".into(),
            ..Default::default()
        },
    ));
    ok(find_and_style_nodes(&registry.graphs, Caller::Ai, layer("type == 'server'", "servers")));
    let after = demo();
    after.graphs.set_session_file(&file).expect("reopen");
    assert_eq!(layer_names(&after), ["default", "db-red", "servers"]);
    assert_eq!(
        ok(list_algorithms(&after.graphs, ListAlgorithmsParams { source: infra() }))["history"][0]
            ["type"],
        "pagerank"
    );
}

#[test]
fn a_session_opened_on_a_full_disk_answers_reads_and_refuses_changes() {
    let Some(disk) = SmallDisk::mount("256k") else { return };
    let file = disk.path().join("sessions.sqlite");
    let services = demo();
    services.graphs.set_session_file(&file).expect("an empty disk takes the session file");
    let _filler = disk.fill();
    // Opening writes the initial layout; it cannot, yet nothing read depends on it.
    let summary =
        query_graph(&services.graphs, QueryGraphParams { source: infra(), ..Default::default() });
    assert!(summary.success, "a read failed on a full disk: {}", summary.message);
    let found = find_nodes(
        &services.graphs,
        FindElementsParams {
            source: infra(),
            selector: "type == 'database'".into(),
            ..Default::default()
        },
    );
    assert!(found.success, "{}", found.message);
    let refused =
        find_and_style_nodes(&services.graphs, Caller::Ai, layer("type == 'database'", "db"));
    assert!(!refused.success, "a change was acknowledged on a full disk");
    assert_eq!(refused.data["error"], "storage_error", "{}", refused.data);
}
