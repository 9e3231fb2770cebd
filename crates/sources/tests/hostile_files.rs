//! Sources given as files that are not what they seem: a FIFO, `/dev/zero` and a link to it, a
//! directory, a huge sparse file, a SQLite "database" that is a FIFO. Each is a clear error at
//! once, never a hang or a read without end; the size limit is the one `--max-file-bytes` sets.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use schemascope_sources::file::{DEFAULT_MAX_SOURCE_BYTES, max_source_bytes, set_max_source_bytes};
use schemascope_sources::{FileError, NoProgress, SourceError, SourceSpec, load};

#[allow(unsafe_code)] // mkfifo, to test that a FIFO is refused
fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Loads `spec` on another thread: a load that blocks fails the test instead of hanging it.
fn load_within_a_minute(spec: &str) -> Result<schemascope_sources::Source, SourceError> {
    let spec: SourceSpec = spec.parse().expect("a valid spec");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(load(&spec, &NoProgress));
    });
    receiver.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("loading blocked"))
}

fn not_regular(result: Result<schemascope_sources::Source, SourceError>, kind: &str) -> String {
    let error = result.err().map(|e| e.to_string()).unwrap_or_else(|| panic!("{kind} loaded"));
    assert!(error.contains(kind) && error.contains("not a regular file"), "{error}");
    error
}

#[test]
fn fifos_devices_and_directories_given_as_sources_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pipe = dir.path().join("graph.json");
    fifo(&pipe);
    let lines = dir.path().join("records.ndjson");
    fifo(&lines);
    let zero = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let folder = dir.path().join("folder.json");
    std::fs::create_dir(&folder).expect("dir");
    for (spec, kind) in [
        (pipe.display().to_string(), "a FIFO"),
        (format!("graph:{}", pipe.display()), "a FIFO"),
        (format!("records={}", lines.display()), "a FIFO"),
        ("/dev/zero".to_string(), "a character device"),
        ("documents:/dev/zero".to_string(), "a character device"),
        (zero.display().to_string(), "a character device"),
        ("/dev/urandom".to_string(), "a character device"),
    ] {
        let error = not_regular(load_within_a_minute(&spec), kind);
        assert!(error.contains("only regular files are read"), "{spec}: {error}");
    }
    // A directory is a folder source: one with no data file is refused as such.
    let empty = load_within_a_minute(&folder.display().to_string())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(empty.contains("holds no data file"), "{empty}");
    // A folder serves its regular data files only: the FIFOs and the link to a device beside
    // them are passed over, never opened.
    std::fs::write(dir.path().join("rows.csv"), "a,b\n1,x\n").expect("write");
    let source = load_within_a_minute(&dir.path().display().to_string()).expect("folder loads");
    assert_eq!(source.collection_names(), ["rows"]);
}

#[test]
fn a_sqlite_source_that_is_a_fifo_or_a_device_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pipe = dir.path().join("shop.sqlite");
    fifo(&pipe);
    not_regular(load_within_a_minute(&pipe.display().to_string()), "a FIFO");
    not_regular(load_within_a_minute("sqlite:/dev/zero"), "a character device");
    let missing = load_within_a_minute(&dir.path().join("none.db").display().to_string())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(missing.contains("no such file"), "{missing}");
}

/// Held by the tests that read or change the process-wide size limit: one of them lowers it
/// for a moment, which another expecting the default must not see.
static SIZE_LIMIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_huge_sparse_file_is_refused_by_its_size_before_it_is_read() {
    let _limit = SIZE_LIMIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().expect("tempdir");
    let sparse = dir.path().join("huge.ndjson");
    std::fs::File::create(&sparse).and_then(|f| f.set_len(1 << 40)).expect("sparse file");
    let error = load_within_a_minute(&sparse.display().to_string()).expect_err("refused");
    assert!(
        matches!(&error, SourceError::File(FileError::TooLarge { size, .. }) if *size == 1 << 40),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("1099511627776 bytes")
            && text.contains(&DEFAULT_MAX_SOURCE_BYTES.to_string())
            && text.contains("--max-file-bytes"),
        "{text}"
    );
}

#[test]
fn the_source_size_limit_is_configurable_and_links_to_regular_files_still_load() {
    let _limit = SIZE_LIMIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("small.json");
    std::fs::write(&small, r#"[{"a": 1}, {"a": 2}]"#).expect("write");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&small, &link).expect("symlink");
    let larger = dir.path().join("larger.json");
    std::fs::write(&larger, format!(r#"[{{"a": "{}"}}]"#, "x".repeat(100))).expect("write");
    assert_eq!(max_source_bytes(), DEFAULT_MAX_SOURCE_BYTES);
    set_max_source_bytes(64);
    let loaded = load_within_a_minute(&link.display().to_string());
    let refused = load_within_a_minute(&larger.display().to_string());
    set_max_source_bytes(DEFAULT_MAX_SOURCE_BYTES);
    assert_eq!(
        loaded.expect("a link to a regular file within the limit loads").collections[0].len(),
        2
    );
    let error = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("is 111 bytes, over the 64-byte limit for a source file (raise it with --max-file-bytes)"), "{error}");

    // A streamed file (no size limit) whose lines turn out to hold a pretty-printed value is
    // read whole: past the limit, the error says why it had to be.
    let lines = dir.path().join("lines.ndjson");
    // The pretty value lies past the first 64 KiB the file is recognised from.
    let mut text = "{\"a\": 1, \"pad\": \"abcdefghijklmnopqrstuvwxyz\"}\n".repeat(2_000);
    text.push_str("{\n  \"b\": [\n    {\"c\": 1},\n    {\"c\": 2}\n  ]\n}\n");
    std::fs::write(&lines, text).expect("write");
    let spec: schemascope_sources::SourceSpec = lines.display().to_string().parse().expect("spec");
    set_max_source_bytes(1 << 10);
    let streamed = schemascope_sources::load_with(
        &spec,
        &schemascope_sources::NoProgress,
        schemascope_sources::ReadMode::COPY.streamed(),
        None,
    );
    set_max_source_bytes(DEFAULT_MAX_SOURCE_BYTES);
    let error = streamed.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        error.contains("pretty-printed over several lines: it is not NDJSON, so it is read whole"),
        "{error}"
    );
}
