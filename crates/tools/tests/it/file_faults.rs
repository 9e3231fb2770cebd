//! Source files truncated or replaced while the watcher is live and while they are read: a
//! graph file caught half-written keeps the last good data and records a clear error naming the
//! file and position; an NDJSON file cut mid-line loads its whole lines with a warning; an
//! atomic replace is picked up; a writer rewriting the file over and over while reloads and
//! tool calls run never makes a tool fail or panic; a FIFO or a link to /dev/zero in the file's
//! place is refused without blocking reload or watcher; and the next good write is always served.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use schemascope_tools::*;

use crate::common;

/// A graphty graph of `n` nodes in a ring.
fn graph(n: usize) -> String {
    let nodes: Vec<String> = (0..n)
        .map(|i| format!("{{\"id\": \"n{i}\", \"group\": \"g{}\", \"weight\": {i}}}", i % 7))
        .collect();
    let edges: Vec<String> = (0..n)
        .map(|i| format!("{{\"source\": \"n{i}\", \"target\": \"n{}\"}}", (i + 1) % n))
        .collect();
    format!("{{\"nodes\": [\n{}\n], \"edges\": [\n{}\n]}}\n", nodes.join(",\n"), edges.join(",\n"))
}

fn nodes(registry: &Services) -> u64 {
    let data = common::ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: Some("g".into()),
            collection: Some("nodes".into()),
            ..Default::default()
        },
    ));
    data["collections"][0]["count"].as_u64().expect("count")
}

/// Waits for the watcher to reload source `name` (or fails after a generous bound).
fn reloaded(changes: &mut tokio::sync::broadcast::Receiver<String>, name: &str) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let got = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), changes.recv()).await });
    assert_eq!(got.expect("reloaded in time").expect("a name"), name);
}

/// Writes `text` in place (truncate, then chunks with pauses): what a naive writer does.
fn write_slowly(path: &Path, text: &str, chunks: usize, pause: Duration) {
    let mut file = std::fs::File::create(path).expect("create");
    for chunk in text.as_bytes().chunks(text.len().div_ceil(chunks)) {
        file.write_all(chunk).expect("write");
        file.flush().expect("flush");
        std::thread::sleep(pause);
    }
}

#[test]
fn a_graph_file_cut_or_replaced_under_a_live_watcher_keeps_the_last_good_data_and_recovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.json");
    std::fs::write(&path, graph(3_000)).expect("write");
    let registry = common::registry(&[&format!("g={}", path.display())]);
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(100)).expect("watch");
    assert_eq!(nodes(&registry), 3_000);

    // Truncated mid-write: the reload fails with the file and position, the old data stays.
    let next = graph(4_000);
    std::fs::write(&path, &next[..next.len() / 2]).expect("truncate");
    let error = registry.sources.reload("g").expect_err("a half-written graph does not load");
    let message = error.to_string();
    assert!(
        message.contains("graph.json") && message.contains(':'),
        "names the file and position: {message}"
    );
    assert_eq!(nodes(&registry), 3_000, "the last good data is served");
    assert!(registry.sources.reload_error("g").is_some_and(|e| e.contains("previous data kept")));

    // The write completes: the watcher reloads it and the error is gone.
    std::fs::write(&path, &next).expect("complete");
    while nodes(&registry) != 4_000 {
        reloaded(&mut changes, "g");
    }
    assert_eq!(registry.sources.reload_error("g"), None);

    // Replaced atomically (written beside, renamed over): picked up like any change.
    let beside = dir.path().join(".graph.json.tmp");
    std::fs::write(&beside, graph(5_000)).expect("write beside");
    std::fs::rename(&beside, &path).expect("rename");
    while nodes(&registry) != 5_000 {
        reloaded(&mut changes, "g");
    }

    // Rewritten in place again and again, in pieces, while the watcher reloads and tools and
    // explicit reloads run: every tool call answers with one of the versions written, every
    // failed reload names the file, and nothing panics.
    let sizes = [1_000usize, 6_000, 2_000, 7_000];
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, done) = (path.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            for round in 0..12 {
                write_slowly(
                    &path,
                    &graph(sizes[round % sizes.len()]),
                    4,
                    Duration::from_millis(15),
                );
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let mut served = std::collections::BTreeSet::new();
    let mut failed_reloads = 0;
    while !done.load(Ordering::SeqCst) {
        if let Err(e) = registry.sources.reload("g") {
            failed_reloads += 1;
            assert!(e.to_string().contains("graph.json"), "{e}");
        }
        let count = nodes(&registry);
        assert!(
            count == 5_000 || sizes.contains(&(count as usize)),
            "served a graph that was never written whole: {count} nodes"
        );
        served.insert(count);
    }
    writer.join().expect("writer");
    eprintln!("served node counts {served:?}; {failed_reloads} reload(s) met a partial file");

    // The next good write is served.
    std::fs::write(&path, graph(8_000)).expect("final write");
    registry.sources.reload("g").expect("a whole file loads");
    assert_eq!(nodes(&registry), 8_000);
    assert_eq!(registry.sources.reload_error("g"), None);
}

#[test]
fn an_ndjson_file_cut_mid_line_loads_its_whole_lines_with_a_warning_then_recovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    let line =
        |i: usize| format!("{{\"id\": {i}, \"name\": \"item {i}\", \"tags\": [\"a\", \"b\"]}}\n");
    let full: String = (0..10_000).map(line).collect();
    std::fs::write(&path, &full).expect("write");
    let registry = common::registry(&[&format!("docs={}", path.display())]);
    let count = |registry: &Services| {
        let data = common::ok(describe_schema(
            &registry.sources,
            DescribeSchemaParams { source: Some("docs".into()), ..Default::default() },
        ));
        (data["collections"][0]["count"].as_u64().expect("count"), data["warnings"].clone())
    };
    assert_eq!(count(&registry).0, 10_000);

    // Cut in the middle of line 5,001 (a writer caught mid-append, or a truncated copy).
    let cut = (0..5_000).map(|i| line(i).len()).sum::<usize>() + 10;
    std::fs::write(&path, &full[..cut]).expect("truncate");
    registry.sources.reload("docs").expect("whole lines load");
    let (n, warnings) = count(&registry);
    assert_eq!(n, 5_000, "the whole lines are served");
    assert!(
        warnings.to_string().contains("5001"),
        "the cut line is reported with its number: {warnings}"
    );

    std::fs::write(&path, &full).expect("rewrite");
    registry.sources.reload("docs").expect("reload");
    assert_eq!(count(&registry), (10_000, serde_json::json!([])));
}

/// Reloads `name` on another thread: a reload that blocks fails the test instead of hanging it.
#[cfg(unix)]
fn reload_within_a_minute(registry: &Services, name: &'static str) -> Result<(), String> {
    let registry = registry.clone();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(registry.sources.reload(name).map(|_| ()).map_err(|e| e.to_string()));
    });
    receiver.recv_timeout(Duration::from_secs(60)).expect("the reload blocked")
}

#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_fifo_or_a_link_to_dev_zero_under_the_watcher_keeps_the_data_and_never_blocks()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.json");
    std::fs::write(&path, graph(100)).expect("write");
    let registry = common::registry(&[&format!("g={}", path.display())]);
    let mut changes = registry.sources.subscribe();
    registry.watch_with(Duration::from_millis(100)).expect("watch");
    assert_eq!(nodes(&registry), 100);

    std::fs::remove_file(&path).expect("remove");
    let made = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
    assert!(made.success());
    let error = reload_within_a_minute(&registry, "g").expect_err("a FIFO does not load");
    assert!(
        error.contains("graph.json is a FIFO") && error.contains("only regular files are read"),
        "{error}"
    );
    assert_eq!(nodes(&registry), 100, "the last good data is served");

    std::fs::remove_file(&path).expect("remove");
    std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
    let error = reload_within_a_minute(&registry, "g").expect_err("/dev/zero does not load");
    assert!(error.contains("a character device"), "{error}");
    assert_eq!(nodes(&registry), 100);

    // The watcher was never stuck on them: the next good file is picked up by it.
    std::fs::remove_file(&path).expect("remove");
    std::fs::write(&path, graph(200)).expect("write");
    while nodes(&registry) != 200 {
        reloaded(&mut changes, "g");
    }
    assert_eq!(registry.sources.reload_error("g"), None);
}
