//! A file of one id repeated costs a small multiple of itself, not the structures of every
//! element: a graph file fails at its first repeated node or edge id, found before anything is
//! built, and the error names the id and where it was seen; a document file of one id repeated
//! keeps every document under a suffixed id in steps linear in the count; a record object of one
//! key repeated keeps its last value. Peak RSS of `schemascope describe FILE` is read by Python's
//! `resource` module for that one child, less the peak of the same command on a tiny file.

use std::io::Write;
use std::process::Command;

/// Peak RSS in KiB of `schemascope ARGS`, its exit success and its output.
fn peak_rss_kib(args: &[&str]) -> (u64, bool, String) {
    let script = "import resource, subprocess, sys\n\
        out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n\
        sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
        sys.stdout.buffer.write(out.stdout)\n\
        sys.exit(out.returncode)";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .args(args)
        .output()
        .expect("python3 runs");
    let rss = String::from_utf8_lossy(&out.stderr).trim().parse().expect("ru_maxrss");
    (rss, out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Writes `head`, `n` times `element(i)` separated by `sep`, then `tail`; returns the size in KiB.
fn write(
    path: &std::path::Path,
    head: &str,
    n: usize,
    sep: &str,
    element: impl Fn(usize) -> String,
    tail: &str,
) -> u64 {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    w.write_all(head.as_bytes()).expect("write");
    for i in 0..n {
        if i > 0 {
            w.write_all(sep.as_bytes()).expect("write");
        }
        w.write_all(element(i).as_bytes()).expect("write");
    }
    w.write_all(tail.as_bytes()).expect("write");
    w.flush().expect("flush");
    std::fs::metadata(path).expect("size").len() / 1024
}

/// The most a failing or repeated-id file may cost, as a multiple of its size, above the
/// command's own footprint: the text (1×), one pointer and one id hash per element (a
/// `{"id":"a"}` element is 11 bytes, its pointer 16 and hash slot up to 32). Measured: 1.0× for
/// the issue's file, 3.3× for distinct ids whose last repeats the first (27× before).
const MAX_MULTIPLE: u64 = 5;

#[test]
fn one_repeated_id_costs_a_small_multiple_of_the_file_and_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tiny = dir.path().join("tiny.json");
    std::fs::write(&tiny, r#"{"nodes":[{"id":"a"}],"edges":[]}"#).expect("write");
    let (base, ok, _) = peak_rss_kib(&["describe", tiny.to_str().expect("path")]);
    assert!(ok);

    // The issue's file: about 37 MB of one node id.
    let repeated = dir.path().join("repeated.json");
    let kib = write(
        &repeated,
        "{\"nodes\":[\n",
        3_400_000,
        ",\n",
        |_| r#"{"id":"a"}"#.into(),
        "],\"edges\":[]}",
    );
    let (rss, ok, out) = peak_rss_kib(&["describe", repeated.to_str().expect("path")]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("duplicate node id `a` (node #1; node #0 had it first, at line 2)")
            && out.contains("repeated.json:3:1"),
        "{out}"
    );
    eprintln!("one repeated node id: {rss} KiB peak for {kib} KiB (base {base} KiB)");
    assert!(rss < base + MAX_MULTIPLE * kib, "{rss} KiB for {kib} KiB (base {base} KiB)");

    // Distinct ids until the last, which repeats the first: every id is seen before the error.
    let late = dir.path().join("late.json");
    let n = 2_000_000;
    let kib = write(
        &late,
        "{\"nodes\":[\n",
        n,
        ",\n",
        |i| format!(r#"{{"id":"n{}"}}"#, if i == n - 1 { 0 } else { i }),
        "],\"edges\":[]}",
    );
    let (rss, ok, out) = peak_rss_kib(&["describe", late.to_str().expect("path")]);
    let expected = format!("duplicate node id `n0` (node #{}; node #0 had it first", n - 1);
    assert!(!ok && out.contains(&expected), "{out}");
    eprintln!("a repeat at the end: {rss} KiB peak for {kib} KiB (base {base} KiB)");
    assert!(rss < base + MAX_MULTIPLE * kib, "{rss} KiB for {kib} KiB (base {base} KiB)");

    // Edge ids: the same, with the place of the first.
    let edges = dir.path().join("edges.json");
    let kib = write(
        &edges,
        "{\"nodes\":[{\"id\":\"a\"}],\"edges\":[\n",
        1_000_000,
        ",\n",
        |_| r#"{"id":"e","source":"a","target":"a"}"#.into(),
        "]}",
    );
    let (rss, ok, out) = peak_rss_kib(&["describe", edges.to_str().expect("path")]);
    let expected = "duplicate edge id `e` (edge #1; edge #0 had it first, at line 2)";
    assert!(!ok && out.contains(expected), "{out}");
    assert!(rss < base + MAX_MULTIPLE * kib, "{rss} KiB for {kib} KiB (base {base} KiB)");
}

#[test]
fn documents_and_records_of_one_repeated_id_stay_linear_and_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tiny = dir.path().join("tiny.ndjson");
    std::fs::write(&tiny, "{\"id\":\"a\"}\n").expect("write");
    let (base, ok, _) = peak_rss_kib(&["describe", tiny.to_str().expect("path")]);
    assert!(ok);
    // Every document kept, under `a~2`, `a~3`…: before, each repeat tried every earlier suffix
    // (n²/2 steps: hours for this file).
    let docs = dir.path().join("docs.ndjson");
    let n = 400_000;
    let kib = write(&docs, "", n, "\n", |_| r#"{"id":"a"}"#.into(), "\n");
    // `sample` holds every document (`describe` streams them, ids unsettled).
    let (rss, ok, out) = peak_rss_kib(&["sample", docs.to_str().expect("path"), "--count", "1"]);
    let warned = format!("{} document(s) repeat an earlier id (first: `a`)", n - 1);
    assert!(ok && out.contains(&warned) && out.contains(&format!("\"of\": {n}")), "{out}");
    eprintln!("documents of one id: {rss} KiB peak for {kib} KiB (base {base} KiB)");
    // Each document keeps an owned id (`a~123456`) and its place in the set of ids taken.
    assert!(rss < base + 8 * kib, "{rss} KiB for {kib} KiB (base {base} KiB)");
    // A record object of one key: its last value, held once.
    let records = dir.path().join("records.json");
    let kib = write(&records, "{", 3_000_000, ",", |i| format!(r#""k":{i}"#), "}");
    let (rss, ok, out) = peak_rss_kib(&["describe", records.to_str().expect("path")]);
    assert!(ok, "{out}");
    eprintln!("records of one key: {rss} KiB peak for {kib} KiB (base {base} KiB)");
    assert!(rss < base + MAX_MULTIPLE * kib, "{rss} KiB for {kib} KiB (base {base} KiB)");
}
