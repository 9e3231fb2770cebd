//! Docs directories holding what docs should not be — a FIFO named `*.md`, a link to
//! `/dev/zero`, a link out of the directory, a directory named `*.md`, a huge sparse file — and
//! the trace file a FIFO: every call returns, skips each with a warning naming it, and reads
//! nothing outside the directory unless asked. `docs generate` writes through none of them.

#![cfg(unix)]

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use schemascope_tools::*;
use serde_json::Value;

use crate::common::{chinook_spec, ok, registry};

fn fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Runs `f` on another thread: a call that blocks fails the test instead of hanging it.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("the call blocked"))
}

fn search(registry: &Services, question: &str) -> Value {
    let registry = registry.clone();
    let question = question.to_string();
    within_a_minute(move || {
        ok(search_schema_docs(
            &registry.docs,
            SearchSchemaDocsParams { source: Some("chinook".into()), question, top_k: Some(5) },
        ))
    })
}

/// A docs directory with one good doc and one of each hostile kind, and a file outside it.
fn hostile_docs() -> (tempfile::TempDir, tempfile::TempDir) {
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        outside.path().join("secret.md"),
        "# Table: Genre\n\n## Purpose\n\nThe zebracorn ledger of private notes.\n",
    )
    .expect("write");
    let dir = tempfile::tempdir().expect("tempdir");
    let docs = dir.path();
    std::fs::write(
        docs.join("Album.md"),
        "# Table: Album\n\n## Purpose\n\nRecords grouped as releases, with their artist.\n",
    )
    .expect("write");
    fifo(&docs.join("Artist.md"));
    std::os::unix::fs::symlink("/dev/zero", docs.join("Track.md")).expect("symlink");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), docs.join("Genre.md"))
        .expect("symlink");
    std::fs::create_dir(docs.join("Invoice.md")).expect("dir");
    std::fs::File::create(docs.join("Customer.md"))
        .and_then(|f| f.set_len(1 << 40))
        .expect("sparse");
    std::os::unix::fs::symlink("Album.md", docs.join("Albums.md")).expect("a link inside");
    (dir, outside)
}

#[test]
fn hostile_docs_files_are_skipped_with_a_warning_and_links_out_are_not_followed() {
    let (dir, _outside) = hostile_docs();
    let registry = registry(&[&chinook_spec()]);
    registry.docs.set_dir("chinook", dir.path().to_path_buf());
    let found = search(&registry, "records grouped as releases");
    assert_eq!(found["chunks"][0]["table"], "Album", "the good doc is indexed: {found}");
    let warnings: Vec<String> = found["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap_or_default().to_string())
        .collect();
    let about = |name: &str| {
        warnings.iter().find(|w| w.starts_with(&format!("{name}:"))).cloned().unwrap_or_default()
    };
    assert!(
        about("Artist.md").contains("is a FIFO") && about("Artist.md").contains("skipped"),
        "{warnings:?}"
    );
    assert!(
        about("Track.md").contains("outside"),
        "a link to /dev/zero leads out of the directory: {warnings:?}"
    );
    assert!(
        about("Genre.md").contains("outside") && about("Genre.md").contains("secret.md"),
        "{warnings:?}"
    );
    assert!(about("Invoice.md").contains("is a directory"), "{warnings:?}");
    assert!(
        about("Customer.md").contains("1099511627776 bytes")
            && about("Customer.md").contains("limit for one docs file"),
        "{warnings:?}"
    );
    // A link inside the directory is read: its table is the one Album.md documents already.
    assert!(about("Albums.md").contains("already documented in Album.md"), "{warnings:?}");
    let secret = search(&registry, "zebracorn ledger");
    assert_eq!(
        secret["chunks"],
        serde_json::json!([]),
        "nothing from outside the directory: {secret}"
    );
    // Asked to follow links out, the outside doc is read; the device and the FIFO still are not.
    registry.docs.set_follow_links(true);
    let followed = search(&registry, "zebracorn ledger");
    assert_eq!(followed["chunks"][0]["table"], "Genre", "{followed}");
    let warnings = followed["warnings"].to_string();
    assert!(
        warnings.contains("Track.md")
            && warnings.contains("a character device")
            && warnings.contains("Artist.md"),
        "{warnings}"
    );
}

#[test]
fn docs_generate_writes_through_no_link_and_into_no_fifo() {
    let (dir, outside) = hostile_docs();
    // A directory in a doc's place cannot be replaced by a file: that is an error of its own.
    std::fs::remove_dir(dir.path().join("Invoice.md")).expect("rmdir");
    let registry = registry(&[&chinook_spec()]);
    let target = dir.path().to_path_buf();
    let generated = {
        let registry = registry.clone();
        let dir = target.display().to_string();
        within_a_minute(move || {
            ok(generate_schema_docs(
                &registry.docs,
                GenerateDocsParams { source: Some("chinook".into()), dir: Some(dir), force: false },
            ))
        })
    };
    let written: Vec<&str> = generated["written"]
        .as_array()
        .expect("written")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        written.contains(&"Artist.md")
            && written.contains(&"Genre.md")
            && written.contains(&"Track.md"),
        "{generated}"
    );
    assert!(
        generated["keptEdited"].to_string().contains("Customer.md"),
        "a huge file is someone's own: kept: {generated}"
    );
    for name in ["Artist.md", "Genre.md", "Track.md"] {
        let meta = std::fs::symlink_metadata(target.join(name)).expect("exists");
        assert!(meta.file_type().is_file(), "{name} is now a regular file");
    }
    let secret = std::fs::read_to_string(outside.path().join("secret.md")).expect("read");
    assert!(secret.contains("zebracorn"), "the file a link pointed at is untouched");
    // A FIFO left at the partial name is removed, never opened for writing.
    fifo(&target.join("Album.md.partial"));
    let again = {
        let registry = registry.clone();
        let dir = target.display().to_string();
        within_a_minute(move || {
            ok(generate_schema_docs(
                &registry.docs,
                GenerateDocsParams { source: Some("chinook".into()), dir: Some(dir), force: true },
            ))
        })
    };
    assert!(again["written"].to_string().contains("Album.md"), "{again}");
    assert!(!target.join("Album.md.partial").exists());
}
