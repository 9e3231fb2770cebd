//! A streamed profile's memory does not grow with the file: peak RSS of `schemascope profile`
//! on a generated file four times larger stays about the same, under the budget asked for —
//! exact, its counters spilled to temporary files, or with `--no-spill` estimated, and the
//! estimates say so. Peak RSS is read by Python's `resource` module for that one child.

use std::io::Write;
use std::process::Command;

/// Writes `n` short documents whose ids and numbers are all distinct: exact counters for them
/// would grow with every line.
fn write_docs(path: &std::path::Path, n: usize) {
    let file = std::fs::File::create(path).expect("create");
    let mut w = std::io::BufWriter::new(file);
    for i in 0..n {
        let v = ((i as f64) * 0.618_033_988_7).fract();
        writeln!(
            w,
            r#"{{"id":"x-{i:09}","v":{v:.9},"k":"{}","n":{}}}"#,
            ["a", "b", "c"][i % 3],
            i % 10
        )
        .expect("write");
    }
    w.flush().expect("flush");
}

/// Peak RSS in KiB of `schemascope ARGS`, and its stdout.
fn peak_rss_kib(args: &[&str]) -> (u64, serde_json::Value) {
    let script = "import resource, subprocess, sys\n\
        out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n\
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
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let rss = String::from_utf8_lossy(&out.stderr).trim().parse().expect("ru_maxrss");
    (rss, serde_json::from_slice(&out.stdout).expect("profile JSON"))
}

#[test]
fn peak_memory_of_a_streamed_profile_does_not_grow_with_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("small.ndjson");
    let large = dir.path().join("large.ndjson");
    write_docs(&small, 400_000); // about 25 MB
    write_docs(&large, 1_600_000); // about 100 MB
    let budget = ["--memory-budget", "8MiB", "--no-spill", "profile"];
    let (small_rss, _) = peak_rss_kib(&[&budget[..], &[small.to_str().expect("path")]].concat());
    let (large_rss, report) =
        peak_rss_kib(&[&budget[..], &[large.to_str().expect("path")]].concat());
    let file_kib = std::fs::metadata(&large).expect("size").len() / 1024;
    // Streamed, the larger file costs at most a few MiB more than the smaller one; held whole
    // (`sample` loads every document), it costs at least half of itself more than streamed.
    assert!(large_rss < small_rss + 24 * 1024, "{large_rss} KiB vs {small_rss} KiB");
    let whole = Command::new("python3")
        .args(["-c", "import resource, subprocess, sys\nsubprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"])
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .args(["sample", large.to_str().expect("path"), "--count", "1"])
        .output()
        .expect("python3 runs");
    let whole_rss: u64 = String::from_utf8_lossy(&whole.stdout).trim().parse().expect("ru_maxrss");
    assert!(
        large_rss + file_kib / 2 < whole_rss,
        "streamed {large_rss} KiB, held whole {whole_rss} KiB, file {file_kib} KiB"
    );
    // The answer says which figures are estimates; the few-valued ones stay exact.
    let collection = &report["data"]["collections"][0];
    assert_eq!(collection["summary"]["count"], 1_600_000);
    assert_eq!(collection["summary"]["exact"], false);
    let property = |name: &str| {
        collection["properties"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["property"] == name))
            .cloned()
            .expect(name)
    };
    assert_eq!(property("id")["exact"], false);
    assert!(property("id")["approximate"]["uniqueCount"].as_str().is_some());
    assert_eq!(property("k")["exact"], true);
    assert_eq!(property("n")["exact"], true);
    assert_eq!(property("n")["median"], 4.5);
}

#[test]
fn a_spilled_streamed_profile_stays_exact_and_its_memory_does_not_grow_with_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scratch = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("small.ndjson");
    let large = dir.path().join("large.ndjson");
    write_docs(&small, 400_000);
    write_docs(&large, 1_600_000);
    let spill_dir = scratch.path().to_str().expect("path");
    let args = ["--memory-budget", "8MiB", "--spill-dir", spill_dir, "profile"];
    let (small_rss, _) = peak_rss_kib(&[&args[..], &[small.to_str().expect("path")]].concat());
    let (large_rss, report) = peak_rss_kib(&[&args[..], &[large.to_str().expect("path")]].concat());
    assert!(large_rss < small_rss + 24 * 1024, "{large_rss} KiB vs {small_rss} KiB");
    let collection = &report["data"]["collections"][0];
    assert_eq!(collection["summary"]["count"], 1_600_000);
    assert_eq!(collection["summary"]["exact"], true);
    let id = collection["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["property"] == "id"))
        .cloned()
        .expect("id");
    assert_eq!(id["exact"], true);
    assert_eq!(id["uniqueCount"], 1_600_000);
    // The temporary files are gone with the process.
    assert_eq!(std::fs::read_dir(scratch.path()).expect("dir").count(), 0);
}
