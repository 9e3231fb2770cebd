//! Streamed profiles that spill: with a budget far too small for the exact counters, a streamed
//! profile writes them to temporary files and is the profile of the file loaded whole, figure
//! for figure; the files are gone after success, after a failed load, and never linger in the
//! directory; past the files' cap the properties left are estimated and the output says so.

use std::path::Path;

use schemascope_core::property::{PropertyOptions, describe_property};
use schemascope_sources::scratch::SpillOptions;
use schemascope_sources::stream::{StreamOptions, load_streamed};
use schemascope_sources::{NoProgress, Source, SourceSpec, load};
use serde_json::{Value, json};

/// Hostile documents: all-distinct and all-equal numbers, extremes, integers past 2^53,
/// unicode and over-long strings, nulls, types mixed per path, nested arrays, ascending ids.
fn hostile(n: u64) -> String {
    let mut rng = fastrand::Rng::with_seed(2028);
    let mut out = String::new();
    for i in 0..n {
        let extreme = match i % 9 {
            0 => json!(f64::MAX),
            1 => json!(-f64::MAX),
            2 => json!(5e-324),
            3 => json!(0.0),
            _ => json!((rng.f64() - 0.5) * 10f64.powi(rng.i32(-20..20))),
        };
        let mixed = match i % 6 {
            0 => json!(i),
            1 => json!(format!("m{}", i % 9)),
            2 => json!(true),
            3 => Value::Null,
            4 => json!([i % 3, [format!("in{}", i % 5)]]),
            _ => json!({"deep": {"x": i as f64 / 3.0}}),
        };
        let doc = json!({
            "id": format!("doc-{i:09}"),
            "distinct": (i as f64) * 0.754_877_666 - 1e4,
            "equal": "same",
            "extreme": extreme,
            "wide": (1u64 << 60) + rng.u64(..1 << 20),
            "text": if i % 50 == 0 { "ü".repeat(300) + &i.to_string() } else { format!("日本-{}", i % 3_000) },
            "maybe": if i % 4 == 0 { Value::Null } else { json!(rng.u32(..100_000)) },
            "mixed": mixed,
            "at": format!("2025-03-{:02}T{:02}:{:02}:{:02}Z", 1 + i % 28, i % 24, i % 60, i % 59),
            "arrays": [[i % 4, rng.f64()], [], [format!("a{}", i % 11)]],
        });
        out.push_str(&doc.to_string());
        out.push('\n');
    }
    out
}

fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    crate::common::temp_file("docs.ndjson", text)
}

fn spec(text: &str) -> SourceSpec {
    text.parse().expect("spec")
}

/// Open files of this process in `dir` (an unnamed temporary file shows as `dir/#… (deleted)`).
fn open_in(dir: &Path) -> usize {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

/// Streams `path` with a budget of `budget` bytes, spilling into `dir` up to `cap` bytes.
fn spilled(
    spec: &SourceSpec,
    path: &Path,
    budget: usize,
    dir: &Path,
    cap: u64,
) -> Result<(Source, schemascope_sources::stream::StreamStats), schemascope_sources::SourceError> {
    let options = StreamOptions {
        block_bytes: 64 << 10,
        budget,
        spill: Some(SpillOptions { dir: Some(dir.to_path_buf()), cap }),
        ..StreamOptions::default()
    };
    load_streamed(spec, path, options, &NoProgress)
}

fn profile_json(source: &Source) -> Value {
    serde_json::to_value(source.collections[0].profile()).expect("json")
}

/// Every property described, histograms included (with the automatic and two asked bin counts).
fn described(source: &Source) -> Vec<Value> {
    let profile = source.collections[0].profile();
    let mut out = Vec::new();
    for p in profile.properties() {
        for bins in [None, Some(3), Some(17)] {
            let options = PropertyOptions { limit: 20, bins };
            let answer = describe_property(profile, "docs", &p.path, options);
            out.push(json!([answer.message, answer.data]));
        }
    }
    out
}

#[test]
fn a_spilled_streamed_profile_is_the_whole_load_and_leaves_no_file() {
    let text = hostile(30_000);
    let (_data, path) = write(&text);
    let spec = spec(path.to_str().expect("utf-8"));
    let whole = load(&spec, &NoProgress).expect("loads");
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, stats) = spilled(&spec, &path, 64 << 10, scratch.path(), u64::MAX).expect("ok");
    assert!(stats.spilled > 100_000, "{stats:?}");
    assert!(source.collections[0].profile().is_exact());
    assert_eq!(profile_json(&source), profile_json(&whole));
    assert_eq!(described(&source), described(&whole));
    // No estimate to announce: the same warnings as the whole load.
    let said = |s: &Source| s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(said(&source), said(&whole));
    assert_eq!(open_in(scratch.path()), 0);
    assert_eq!(std::fs::read_dir(scratch.path()).expect("dir").count(), 0);
}

#[test]
fn the_demo_sensors_spilled_line_by_line_are_their_whole_load() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo/sensors.ndjson");
    let spec = spec(&format!("documents:{}", path.display()));
    let whole = load(&spec, &NoProgress).expect("loads");
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = spilled(&spec, &path, 1, scratch.path(), u64::MAX).expect("streams");
    assert_eq!(profile_json(&source), profile_json(&whole));
    assert_eq!(described(&source), described(&whole));
    assert_eq!(open_in(scratch.path()), 0);
}

/// Progress that appends a line to the file being read once half of it is read.
struct Rewriter<'a> {
    path: &'a Path,
    half: u64,
    done: std::sync::atomic::AtomicU64,
}

impl schemascope_sources::Progress for Rewriter<'_> {
    fn advance(&self, bytes: u64) {
        use std::io::Write;
        let before = self.done.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        if before < self.half && before + bytes >= self.half {
            let mut file = std::fs::OpenOptions::new().append(true).open(self.path).expect("open");
            file.write_all(b"{\"id\": \"late\"}\n").expect("append");
        }
    }
}

#[test]
fn a_failed_load_leaves_no_file() {
    // The file grows while it is read: the load fails after spilling.
    let data = tempfile::tempdir().expect("tempdir");
    let path = data.path().join("growing.ndjson");
    std::fs::write(&path, hostile(20_000)).expect("write");
    let scratch = tempfile::tempdir().expect("tempdir");
    let spec = spec(path.to_str().expect("utf-8"));
    let options = StreamOptions {
        block_bytes: 64 << 10,
        budget: 64 << 10,
        spill: Some(SpillOptions { dir: Some(scratch.path().to_path_buf()), cap: u64::MAX }),
        ..StreamOptions::default()
    };
    let half = std::fs::metadata(&path).expect("metadata").len() / 2;
    let rewriter = Rewriter { path: &path, half, done: 0.into() };
    let error = load_streamed(&spec, &path, options, &rewriter).expect_err("changed");
    assert!(error.to_string().contains("changed while it was being read"), "{error}");
    assert_eq!(open_in(scratch.path()), 0);
    assert_eq!(std::fs::read_dir(scratch.path()).expect("dir").count(), 0);
}

#[test]
fn past_the_cap_the_properties_left_are_estimated_and_the_output_says_why() {
    let text = hostile(30_000);
    let (_data, path) = write(&text);
    let spec = spec(path.to_str().expect("utf-8"));
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, stats) = spilled(&spec, &path, 64 << 10, scratch.path(), 50_000).expect("ok");
    assert!(stats.spilled <= 50_000, "{stats:?}");
    assert!(!source.collections[0].profile().is_exact());
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    let place = scratch.path().display().to_string();
    assert!(
        said.iter().any(|w| w.contains(&format!(
            "could not be spilled to temporary files in {place} (the temporary files reached their cap of 49 KiB)"
        ))),
        "{said:?}"
    );
    assert_eq!(open_in(scratch.path()), 0);
}

#[test]
fn a_spill_directory_that_cannot_be_written_falls_back_to_estimates() {
    let text = hostile(20_000);
    let (_data, path) = write(&text);
    let spec = spec(path.to_str().expect("utf-8"));
    let missing = tempfile::tempdir().expect("tempdir").path().join("gone");
    let (source, _) = spilled(&spec, &path, 64 << 10, &missing, u64::MAX).expect("loads");
    let profile = source.collections[0].profile();
    assert!(!profile.is_exact());
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|w| w.contains("could not be spilled")), "{said:?}");
    // As without spilling, strings of a few thousand values stay exact: a sketch of them would
    // need about as much memory.
    let text = profile.property(&"text".parse().expect("path")).expect("text");
    assert!(text.approximate.is_none(), "{:?}", text.approximate);
}

/// Past the budget with spilling on, what stays in memory is counters too small to spill
/// (thousands of small properties), and the warning says that, not that something could not be
/// sketched (nothing is sketched while spilling works); every figure stays exact.
#[test]
fn past_the_budget_with_spilling_the_warning_names_what_stays_in_memory() {
    let text: String = (0..6_000).map(|i| format!("{{\"k{}\": {}}}\n", i % 2_000, i % 3)).collect();
    let (_data, path) = write(&text);
    let spec = spec(path.to_str().expect("utf-8"));
    let scratch = tempfile::tempdir().expect("tempdir");
    let (source, _) = spilled(&spec, &path, 32 << 10, scratch.path(), u64::MAX).expect("ok");
    assert!(source.collections[0].profile().is_exact());
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    let over = said.iter().find(|w| w.contains("more than the memory budget of 32 KiB"));
    let over = over.unwrap_or_else(|| panic!("no over-budget warning: {said:?}"));
    assert!(over.contains("counters too small to be worth spilling"), "{over}");
    assert!(!over.contains("sketched"), "{over}");
}
