//! Live refresh: a changed file reloads its source, invalidates cached answers, and notifies
//! subscribers; a file caught broken keeps the previous data.

use std::time::Duration;

use schemascope_tools::*;

use crate::common;

fn count(registry: &Services) -> u64 {
    let data = common::ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("docs".into()), ..Default::default() },
    ));
    data["collections"][0]["count"].as_u64().expect("count")
}

#[test]
fn changed_files_reload_and_notify_and_broken_ones_keep_old_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    std::fs::write(&path, "{\"a\": 1}\n{\"a\": 2}\n").expect("write");
    let registry = common::registry(&[&format!("docs={}", path.display())]);
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(200)).expect("watch");
    assert_eq!(count(&registry), 2);

    std::fs::write(&path, "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3, \"b\": true}\n").expect("rewrite");
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let changed = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), changes.recv()).await });
    assert_eq!(changed.expect("notified in time").expect("a name"), "docs");
    assert_eq!(count(&registry), 3, "the cached answer was invalidated");

    // A file gone (say, caught mid-replace) keeps the previous data and records why. (Removed,
    // not emptied first: an empty file is valid, zero-document NDJSON, and the watcher could
    // load it between the two steps. Files cut mid-write are `file_faults.rs`.)
    std::fs::remove_file(&path).expect("remove");
    let result = registry.sources.reload("docs");
    assert!(result.is_err());
    assert_eq!(count(&registry), 3);
    assert!(
        registry.sources.reload_error("docs").expect("recorded").contains("previous data kept")
    );
}

/// The debounce of the counting tests.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// Long enough for any reload a change (or our own reading) could still cause: several debounce
/// periods past the longest a burst may be held (5 periods), plus slack for a loaded machine.
const QUIET: Duration = Duration::from_millis(150 * 12 + 1500);

/// Reloads reported so far, without waiting.
fn drain(changes: &mut tokio::sync::broadcast::Receiver<String>) -> Vec<String> {
    let mut names = Vec::new();
    while let Ok(name) = changes.try_recv() {
        names.push(name);
    }
    names
}

/// Waits (within a generous bound) for the first reload, then through a quiet period, and
/// returns every reload reported: one change must give exactly one.
fn reloads_after(changes: &mut tokio::sync::broadcast::Receiver<String>) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let mut names = drain(changes);
    while names.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        names = drain(changes);
    }
    std::thread::sleep(QUIET);
    names.extend(drain(changes));
    names
}

/// A served NDJSON file in its own directory, watched, with its subscription.
fn served(
    lines: usize,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    schemascope_tools::Services,
    tokio::sync::broadcast::Receiver<String>,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    std::fs::write(&path, ndjson(lines)).expect("write");
    let registry = common::registry(&[&format!("docs={}", path.display())]);
    let changes = registry.sources.subscribe();
    registry.watch_with(DEBOUNCE).expect("watch");
    (dir, path, registry, changes)
}

fn ndjson(lines: usize) -> String {
    (0..lines).map(|i| format!("{{\"a\": {i}, \"name\": \"é{i}\"}}\n")).collect()
}

fn set_mtime(path: &std::path::Path, seconds_ahead: u64) {
    let file = std::fs::File::options().write(true).open(path).expect("open");
    file.set_modified(std::time::SystemTime::now() + Duration::from_secs(seconds_ahead))
        .expect("set mtime");
}

#[test]
fn one_rewrite_reloads_once_and_then_the_server_is_idle() {
    let (_dir, path, registry, mut changes) = served(3);
    std::fs::write(&path, ndjson(5)).expect("rewrite");
    assert_eq!(
        reloads_after(&mut changes),
        vec!["docs".to_string()],
        "one change, one reload, then idle"
    );
    assert_eq!(count(&registry), 5);
    // Reading the file (as a reload, a backup or an editor does) opens and closes it: no reload.
    for _ in 0..5 {
        std::fs::read(&path).expect("read");
    }
    std::thread::sleep(QUIET);
    assert_eq!(drain(&mut changes), Vec::<String>::new(), "reading the file is no change");
    // And the watcher is still alive: the next change reloads once more.
    std::fs::write(&path, ndjson(2)).expect("rewrite");
    assert_eq!(reloads_after(&mut changes), vec!["docs".to_string()]);
    assert_eq!(count(&registry), 2);
}

#[test]
fn a_touch_or_a_rewrite_with_the_same_bytes_reloads_nothing() {
    let (_dir, path, registry, mut changes) = served(4);
    let generation = registry.sources.generation();
    set_mtime(&path, 30);
    std::fs::write(&path, ndjson(4)).expect("same bytes");
    std::thread::sleep(QUIET);
    assert_eq!(
        drain(&mut changes),
        Vec::<String>::new(),
        "unchanged content is no reload and no notification"
    );
    assert_eq!(registry.sources.generation(), generation);
    // A real change after the touches still reloads, once.
    std::fs::write(&path, ndjson(6)).expect("rewrite");
    assert_eq!(reloads_after(&mut changes), vec!["docs".to_string()]);
    assert_eq!(count(&registry), 6);
}

#[test]
fn an_editor_replacing_the_file_by_rename_reloads_once_and_follows_the_new_file() {
    let (dir, path, registry, mut changes) = served(3);
    for lines in [7, 8] {
        let temporary = dir.path().join(".docs.ndjson.swp");
        std::fs::write(&temporary, ndjson(lines)).expect("write the copy");
        std::fs::rename(&temporary, &path).expect("rename over");
        assert_eq!(
            reloads_after(&mut changes),
            vec!["docs".to_string()],
            "after replacing with {lines} lines"
        );
        assert_eq!(count(&registry), lines as u64);
    }
}

#[test]
fn truncate_then_write_reloads_once_with_the_whole_file() {
    use std::io::Write;
    let (_dir, path, registry, mut changes) = served(3);
    let mut file =
        std::fs::File::options().write(true).truncate(true).open(&path).expect("truncate");
    for line in ndjson(9).lines() {
        writeln!(file, "{line}").expect("write a line");
    }
    drop(file);
    assert_eq!(reloads_after(&mut changes), vec!["docs".to_string()]);
    assert_eq!(count(&registry), 9);
}

#[test]
fn other_files_changing_in_the_directory_reload_nothing() {
    let (dir, path, registry, mut changes) = served(3);
    // Session databases, their journals and other data written beside the served file.
    for round in 0..20 {
        std::fs::write(dir.path().join("sessions.sqlite"), format!("round {round}"))
            .expect("write");
        std::fs::write(dir.path().join("sessions.sqlite-wal"), vec![b'x'; round * 100])
            .expect("write");
        std::fs::write(dir.path().join("docs.ndjson.bak"), ndjson(round)).expect("write");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(dir.path().join("sessions.sqlite-wal"));
    std::thread::sleep(QUIET);
    assert_eq!(
        drain(&mut changes),
        Vec::<String>::new(),
        "files beside the source are not the source"
    );
    std::fs::write(&path, ndjson(4)).expect("rewrite");
    assert_eq!(reloads_after(&mut changes), vec!["docs".to_string()]);
    assert_eq!(count(&registry), 4);
}

/// Rows of table `t` as `describe_schema` counts them on source `db`.
fn table_rows(registry: &Services) -> u64 {
    let data = common::ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("db".into()), ..Default::default() },
    ));
    data["collections"][0]["count"].as_u64().expect("count")
}

/// A commit to a SQLite file in WAL mode writes the log, not the database file: it reloads the
/// source as a write to the file does.
#[test]
fn a_commit_in_wal_mode_reloads_the_sqlite_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("app.sqlite");
    // The application's connection stays open, as an application's does (closing the last one
    // would copy the log into the file).
    let app = rusqlite::Connection::open(&path).expect("create");
    app.pragma_update(None, "journal_mode", "wal").expect("wal");
    app.execute_batch(
        "CREATE TABLE t (n INTEGER);
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 10)
         INSERT INTO t SELECT i FROM k;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .expect("fill");
    let registry = common::registry(&[&format!("db={}", path.display())]);
    let mut changes = registry.sources.subscribe();
    registry.watch_with(DEBOUNCE).expect("watch");
    assert_eq!(table_rows(&registry), 10);
    app.execute_batch("DELETE FROM t WHERE n > 4").expect("delete");
    assert!(reloads_after(&mut changes).contains(&"db".to_string()));
    assert_eq!(table_rows(&registry), 4);
}

/// A reload that fails (the file caught broken) is tried again with backoff: once the file is
/// whole again it is served, with no further change to the file to set it off.
#[test]
fn a_failed_reload_is_tried_again_until_it_succeeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    std::fs::write(&path, ndjson(3)).expect("write");
    let registry = common::registry(&[&format!("docs={}", path.display())]);
    registry.sources.set_retry_first(Duration::from_millis(50));
    assert_eq!(count(&registry), 3);
    std::fs::remove_file(&path).expect("remove");
    assert!(registry.sources.reload("docs").is_err());
    assert!(registry.sources.reload_error("docs").is_some());
    std::fs::write(&path, ndjson(7)).expect("back");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while registry.sources.reload_error("docs").is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(registry.sources.reload_error("docs"), None, "retried until it succeeded");
    assert_eq!(count(&registry), 7);
}
