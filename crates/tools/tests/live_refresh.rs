//! Live refresh: a changed file reloads its source, invalidates cached answers, and notifies
//! subscribers; a file caught broken keeps the previous data.

mod common;

use std::time::Duration;

use schemascope_tools::*;

fn count(registry: &Registry) -> u64 {
    let data = common::ok(describe_schema(registry, DescribeSchemaParams { source: Some("docs".into()), ..Default::default() }));
    data["collections"][0]["count"].as_u64().expect("count")
}

#[test]
fn changed_files_reload_and_notify_and_broken_ones_keep_old_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    std::fs::write(&path, "{\"a\": 1}\n{\"a\": 2}\n").expect("write");
    let registry = common::registry(&[&format!("docs={}", path.display())]);
    let mut changes = registry.subscribe();
    registry.watch_with(Duration::from_millis(200)).expect("watch");
    assert_eq!(count(&registry), 2);

    std::fs::write(&path, "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3, \"b\": true}\n").expect("rewrite");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let changed = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), changes.recv()).await });
    assert_eq!(changed.expect("notified in time").expect("a name"), "docs");
    assert_eq!(count(&registry), 3, "the cached answer was invalidated");

    // A file gone (say, caught mid-replace) keeps the previous data and records why. (Removed,
    // not emptied first: an empty file is valid, zero-document NDJSON, and the watcher could
    // load it between the two steps. Files cut mid-write are `file_faults.rs`.)
    std::fs::remove_file(&path).expect("remove");
    let result = registry.reload("docs");
    assert!(result.is_err());
    assert_eq!(count(&registry), 3);
    assert!(registry.reload_error("docs").expect("recorded").contains("previous data kept"));
}
