//! Streamed profiles of NDJSON document files: within the budget the same figures as loading the
//! file whole, wherever the blocks cut the lines; past it, estimates within their stated bounds
//! and the exact figures still exact, and the counters within the budget.

use std::collections::HashMap;
use std::io::Write;

use schemascope_core::{CollectionProfile, PropertyPath};
use schemascope_sources::stream::{StreamOptions, load_streamed};
use schemascope_sources::{NoProgress, Source, SourceSpec, load};
use serde_json::{Value, json};

/// A file no one shaped to pass: nulls and missing keys in every position, mixed types, unicode,
/// long strings and lines longer than a block, numbers tiny and huge, integers past 2^53, bad
/// and blank lines, a last line without its newline.
fn hostile_lines(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let line = match i % 97 {
            13 => "{\"id\": \"broken\", \"v\": ".to_string(),
            29 => String::new(),
            41 => "   ".to_string(),
            _ => {
                let mut doc = serde_json::Map::new();
                doc.insert("id".into(), json!(format!("d-{i:07}")));
                if i % 5 != 0 {
                    doc.insert("kind".into(), json!(["a", "b", "ünï", "Ä"][i % 4]));
                }
                doc.insert(
                    "n".into(),
                    match i % 11 {
                        0 => Value::Null,
                        1 => json!(1e-9),
                        2 => json!(1e15),
                        3 => json!(9_007_199_254_740_993u64 + i as u64),
                        4 => json!(-0.0),
                        _ => json!(((i as f64) * 0.754_877_666).fract() * 200.0 - 50.0),
                    },
                );
                if i % 3 == 0 {
                    doc.insert("mixed".into(), if i % 2 == 0 { json!("x") } else { json!(i) });
                }
                if i % 7 == 0 {
                    doc.insert(
                        "nested".into(),
                        json!({"tags": [format!("t{}", i % 13), "z"], "geo": {"lat": (i % 180) as f64 - 90.0}}),
                    );
                }
                if i % 331 == 0 {
                    doc.insert("long".into(), json!("é".repeat(3_000 + i % 1_000)));
                }
                if i % 1_009 == 0 {
                    doc.insert("huge".into(), json!("w".repeat(9_000)));
                }
                doc.insert("when".into(), json!(format!("2024-01-{:02}T00:00:00Z", 1 + i % 28)));
                Value::Object(doc).to_string()
            }
        };
        out.push_str(&line);
        if i + 1 < n {
            out.push('\n');
        }
    }
    out
}

fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    crate::common::temp_file("docs.ndjson", text)
}

fn spec(path: &std::path::Path) -> SourceSpec {
    path.to_str().expect("utf-8 path").parse().expect("spec")
}

/// `path` streamed in blocks of `block_bytes` within `budget`, without spilling (`--no-spill`):
/// past the budget, sketches (`spilling.rs` tests the spilled profiles).
fn streamed(path: &std::path::Path, block_bytes: usize, budget: usize) -> Source {
    let options = StreamOptions { block_bytes, budget, spill: None, ..StreamOptions::default() };
    load_streamed(&spec(path), path, options, &NoProgress).expect("streams").0
}

fn profile_json(source: &Source) -> Value {
    serde_json::to_value(source.collections[0].profile()).expect("json")
}

#[test]
fn within_the_budget_a_streamed_profile_is_the_loaded_one_wherever_blocks_cut() {
    let (_dir, path) = write(&hostile_lines(6_000));
    let whole = load(&spec(&path), &NoProgress).expect("loads");
    let expected = profile_json(&whole);
    // Blocks smaller than some lines, odd sizes, and one block for everything.
    for block in [1 << 10, 4_099, 65_536, 64 << 20] {
        let source = streamed(&path, block, 1 << 30);
        assert_eq!(profile_json(&source), expected, "block {block}");
        let collection = &source.collections[0];
        assert!(collection.profile().is_exact());
        assert_eq!(collection.item_count(), whole.collections[0].len() as u64);
        // Bad lines are reported as a whole load reports them: line, column and message.
        let said = |s: &Source| s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(said(&source), said(&whole), "block {block}");
        // The sample: real documents of the file, each once, in file order.
        let ids: Vec<&str> = collection.items().map(|i| i.id).collect();
        assert_eq!(ids.len(), collection.len());
        let all: std::collections::HashSet<&str> =
            whole.collections[0].items().map(|i| i.id).collect();
        assert!(ids.iter().all(|id| all.contains(id)), "sampled ids come from the file");
        for item in collection.items() {
            let value = item.value().expect("a sampled document parses");
            assert_eq!(value["id"].as_str(), Some(item.id));
        }
    }
}

/// Exact counts of every string value at `key` (top level), from the file itself.
fn exact_counts(text: &str, key: &str) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for line in text.lines() {
        if let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(line)
            && let Some(Value::String(s)) = doc.get(key)
        {
            *counts.entry(s.clone()).or_default() += 1;
        }
    }
    counts
}

fn property<'a>(
    profile: &'a CollectionProfile,
    path: &str,
) -> &'a schemascope_core::PropertyProfile {
    profile.property(&path.parse::<PropertyPath>().expect("path")).expect(path)
}

#[test]
fn past_the_budget_estimates_keep_their_stated_bounds_and_exact_figures_stay_exact() {
    // 200,000 documents: ids all distinct, `name` with a few heavy values among many rare ones.
    let mut text = String::new();
    for i in 0..200_000u64 {
        let name = if i % 4 == 0 { format!("heavy-{}", i % 40) } else { format!("rare-{}", i / 2) };
        let v = ((i as f64) * 0.618_033_988_7).fract() * 1e6 - 2e5;
        text.push_str(
            &json!({"id": format!("id-{i:08}"), "name": name, "v": v, "level": i % 9}).to_string(),
        );
        text.push('\n');
    }
    let (_dir, path) = write(&text);
    let whole = load(&spec(&path), &NoProgress).expect("loads");
    let exact = whole.collections[0].profile();
    let budget = 4 << 20;
    // Without spilling (`--no-spill`): past the budget, sketches.
    let options =
        StreamOptions { block_bytes: 64 << 10, budget, spill: None, ..StreamOptions::default() };
    let (source, stats) =
        load_streamed(&spec(&path), &path, options, &NoProgress).expect("streams");
    // The workers fit by block, each to what the others last reported, so together they pass the
    // budget by what a block adds and the fixed size of the sketches one switched to meanwhile
    // (a few hundred KiB each: much beside a budget of 4 MiB).
    assert!(stats.peak_needed <= budget * 3 / 2, "{stats:?}");
    let profile = source.collections[0].profile();
    assert!(!profile.is_exact());
    // The answer names what is estimated and why, beside each figure's stated error.
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    assert!(
        said.iter().any(|w| w.starts_with(
            "3 of 4 properties have estimated figures (id, name, v): their exact counters would have outgrown the memory budget of 4 MiB (spilling to temporary files was off)"
        )),
        "{said:?}"
    );

    // Distinct counts: within three standard errors of the truth.
    for key in ["id", "name"] {
        let got = property(profile, key);
        let approximate = got.approximate.expect("sketched");
        let truth = property(exact, key).distinct as f64;
        let error = (got.distinct as f64 - truth).abs() / truth;
        assert!(error <= 3.0 * approximate.distinct_relative_error.expect("hll"), "{key}: {error}");
        // Counts, lengths: exact.
        let (s, e) =
            (got.strings.as_ref().expect("s"), property(exact, key).strings.as_ref().expect("s"));
        assert_eq!((s.count, s.min_length, s.max_length), (e.count, e.min_length, e.max_length));
        assert!((s.avg_length - e.avg_length).abs() < 1e-9);
    }
    // Frequent values: every listed count is at most the truth and within the bound of it; every
    // value left out occurs at most `bound` times.
    let name = property(profile, "name");
    let bound = name.approximate.and_then(|a| a.count_undercount).expect("bound");
    let truth = exact_counts(&text, "name");
    let listed = &name.strings.as_ref().expect("strings").top;
    assert!(!listed.is_empty());
    for v in listed {
        let t = truth[v.value.as_str().expect("string")];
        assert!(v.count <= t && t <= v.count + bound, "{v:?} truth {t}");
    }
    let listed: std::collections::HashSet<&str> =
        listed.iter().filter_map(|v| v.value.as_str()).collect();
    for (value, t) in &truth {
        assert!(listed.contains(value.as_str()) || *t <= bound, "{value} ({t}) left out");
    }
    // Numbers: count, extremes and mean exact; median within the stated relative error.
    let (got, want) = (property(profile, "v"), property(exact, "v"));
    let alpha = got.approximate.and_then(|a| a.value_relative_error).expect("alpha");
    let (g, w) = (got.numbers.as_ref().expect("n"), want.numbers.as_ref().expect("n"));
    assert_eq!((g.count, g.min, g.max), (w.count, w.min, w.max));
    assert!((g.mean - w.mean).abs() <= 1e-9 * w.mean.abs().max(1.0));
    assert!((g.std_dev - w.std_dev).abs() <= 1e-9 * w.std_dev);
    // The median of an even count is the midpoint of two values, each within alpha.
    assert!(
        (g.median - w.median).abs() <= alpha * w.median.abs() * 1.01 + 1e-9,
        "{} vs {}",
        g.median,
        w.median
    );
    // A few-valued number stays exact, every figure equal.
    let level = property(profile, "level");
    assert!(level.approximate.is_none());
    assert_eq!(
        serde_json::to_value(level).expect("json"),
        serde_json::to_value(property(exact, "level")).expect("json")
    );
}

#[test]
fn empty_and_all_bad_files_answer_as_a_whole_load_does() {
    let (_dir, empty) = write("");
    let source = streamed(&empty, 1 << 10, 1 << 20);
    assert_eq!(source.collections[0].item_count(), 0);
    let (_dir, bad) = write("{\"a\":\n[1,\nnot json\n");
    let error = load_streamed(&spec(&bad), &bad, StreamOptions::default(), &NoProgress)
        .expect_err("no item loaded");
    let whole = load(&spec(&bad), &NoProgress).expect_err("no item loaded");
    assert_eq!(error.to_string(), whole.to_string());
}

#[test]
fn a_line_past_the_line_limit_is_skipped_with_its_line_number_and_the_rest_profiled() {
    let long = format!("{{\"id\": \"big\", \"text\": \"{}\"}}", "x".repeat(50_000));
    let text = format!("{{\"id\": \"a\"}}\n{long}\n{{\"id\": \"b\"}}\n{long}");
    let (_dir, path) = write(&text);
    for block in [1 << 10, 1 << 20] {
        let options = StreamOptions {
            block_bytes: block,
            max_line_bytes: 10_000,
            ..StreamOptions::default()
        };
        let (source, _) =
            load_streamed(&spec(&path), &path, options, &NoProgress).expect("streams");
        assert_eq!(source.collections[0].item_count(), 2, "block {block}");
        let lines: Vec<Option<usize>> = source.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![Some(2), Some(4)], "block {block}");
        assert!(source.warnings[0].to_string().contains("longer than 10000 bytes"));
    }
}

#[test]
fn a_byte_order_mark_and_bad_first_lines_still_stream_as_a_whole_load_reads_them() {
    let body = "{\"a\": 1}\n{\"a\": [1,]}\n{\"a\": \"x\\u0001\"}\n{\"a\": 2.5}\n";
    for (name, text) in [
        ("bom.ndjson", format!("\u{feff}{body}")),
        ("bad-first.ndjson", format!("not json\n[1, 2\n{body}")),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        std::fs::write(&path, &text).expect("write");
        let whole = load(&spec(&path), &NoProgress).expect("loads");
        let source = streamed(&path, 1 << 10, 1 << 20);
        assert_eq!(profile_json(&source), profile_json(&whole), "{name}");
        let said = |s: &Source| s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(said(&source), said(&whole), "{name}");
        assert!(schemascope_sources::stream::is_document_lines(&path, None), "{name} streams");
    }
}

/// Appends a line to the file after the first block: the file changes while it is read.
struct Rewrites(std::path::PathBuf, std::sync::atomic::AtomicBool);

impl schemascope_sources::Progress for Rewrites {
    fn advance(&self, _bytes: u64) {
        if !self.1.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let mut f = std::fs::OpenOptions::new().append(true).open(&self.0).expect("open");
            f.write_all(b"{\"late\": true}\n").expect("append");
        }
    }
}

#[test]
fn a_file_changed_while_it_is_streamed_is_an_error_not_figures_of_no_version_of_it() {
    let (_dir, path) = write(&hostile_lines(3_000));
    let options = StreamOptions { block_bytes: 4_096, ..StreamOptions::default() };
    let progress = Rewrites(path.clone(), Default::default());
    let error = load_streamed(&spec(&path), &path, options, &progress).expect_err("changed");
    assert!(error.to_string().contains("changed while it was being read"), "{error}");
}

#[test]
fn arrays_and_mixed_properties_past_the_budget_name_their_estimates() {
    use schemascope_core::property::{PropertyOptions, describe_property};
    let mut text = String::new();
    for i in 0..120_000u64 {
        let m = if i % 2 == 0 { json!(format!("s{i}")) } else { json!(i as f64 * 1.5) };
        text.push_str(&json!({"a": [i, i * 7 + 1], "m": m}).to_string());
        text.push('\n');
    }
    let (_dir, path) = write(&text);
    let source = streamed(&path, 64 << 10, 1 << 20);
    let profile = source.collections[0].profile();
    for name in ["a", "m"] {
        let path: PropertyPath = name.parse().expect("path");
        let answer = describe_property(profile, "docs", &path, PropertyOptions::default());
        assert_eq!(answer.data["exact"], false, "{name}: {}", answer.data);
        let approximate = answer.data["approximate"].as_object().expect("approximate");
        assert!(!approximate.is_empty(), "{name}");
        assert!(answer.message.contains("estimates ("), "{}", answer.message);
    }
    let a =
        describe_property(profile, "docs", &"a".parse().expect("p"), PropertyOptions::default());
    assert!(a.data["approximate"]["uniqueValues"].is_string(), "{}", a.data);
    // The mean a sketched number shows (`avg`) is a running sum, and says so, as stdDev does.
    let m =
        describe_property(profile, "docs", &"m".parse().expect("p"), PropertyOptions::default());
    let number = &m.data["number"];
    assert!(number["avg"].is_number(), "{}", m.data);
    for figure in ["avg", "stdDev"] {
        assert!(m.data["approximate"][figure].is_string(), "{figure}: {}", m.data);
    }
    assert!(m.message.contains("`avg`"), "{}", m.message);
}

#[test]
fn repeated_ids_are_reported_as_a_whole_load_counts_them() {
    let text: String = (0..500).map(|i| format!("{{\"id\": {}}}\n", i % 200)).collect();
    let (_dir, path) = write(&text);
    let source = streamed(&path, 1 << 10, 1 << 20);
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|w| w.starts_with("300 document(s) repeat an earlier id")), "{said:?}");
}

#[test]
fn estimated_distinct_ids_report_repeats_only_past_their_error() {
    let lines = |n: u64, modulo: u64| -> String {
        (0..n).map(|i| format!("{{\"id\": \"doc-{:08}\", \"v\": {i}}}\n", i % modulo)).collect()
    };
    // Unique ids whose distinct count is estimated (a little low or high): no repeats to report.
    let (_dir, path) = write(&lines(200_000, u64::MAX));
    let source = streamed(&path, 64 << 10, 1 << 20);
    let id = source.collections[0].profile().property(&"id".parse().expect("p")).cloned();
    let id = id.expect("id");
    assert!(id.approximate.and_then(|a| a.distinct_relative_error).is_some(), "id estimated");
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    assert!(!said.iter().any(|w| w.contains("repeat an earlier id (")), "{said:?}");
    // Nor claimed absent: the estimate cannot tell a few repeats.
    assert!(
        said.iter().any(|w| w.starts_with("whether documents repeat an earlier id is not known")),
        "{said:?}"
    );
    // Half the documents repeat an id: reported, as an estimate with its bound.
    let (_dir2, path) = write(&lines(200_000, 100_000));
    let source = streamed(&path, 64 << 10, 1 << 20);
    let said: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    let warning = said.iter().find(|w| w.contains("repeat an earlier id")).expect("{said:?}");
    let repeats: u64 =
        warning["about ".len()..].split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
    assert!(warning.starts_with("about ") && warning.contains("(±"), "{warning}");
    assert!((96_000..=104_000).contains(&repeats), "{warning}");
}

#[test]
fn lines_refused_deep_inside_leave_no_trace_in_a_streamed_profile() {
    // Each bad line is JSON in form but refused by the parser past its first members: numbers out
    // of range and lone surrogate escapes, in values, arrays, nested objects and keys.
    let bad = [
        r#"{"id": 3, "a": "LEAK", "n": 1e999}"#,
        r#"{"id": 4, "a": "LEAK2", "s": "\ud800"}"#,
        r#"{"id": 5, "a": "LEAK3", "o": {"q": 1, "r": [-1e400]}}"#,
        r#"{"id": 6, "a": "LEAK4", "t": "\ud83d", "u": 1}"#,
        r#"{"id": 7, "a": "LEAK5", "\udc00": 1}"#,
        r#"{"id": 2, "a": "LEAK6", "n": [1, 2, 1e999]}"#,
    ];
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!("{{\"id\": {}, \"a\": \"{}\", \"n\": {i}}}\n", 100 + i, i % 3));
        text.push_str(bad[i % bad.len()]);
        text.push('\n');
    }
    let (_dir, path) = write(&text);
    let whole = load(&spec(&path), &NoProgress).expect("loads");
    for block in [1 << 10, 1 << 20] {
        let source = streamed(&path, block, 1 << 30);
        assert_eq!(profile_json(&source), profile_json(&whole), "block {block}");
        let said = |s: &Source| s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(said(&source), said(&whole), "block {block}");
        let profile = source.collections[0].profile();
        let a = profile.property(&"a".parse().expect("p")).expect("a");
        assert_eq!((a.present, a.types.string, a.distinct), (40, 40, 3), "block {block}");
        for absent in ["s", "o", "o.q", "t", "u"] {
            assert!(profile.property(&absent.parse().expect("p")).is_none(), "{absent}");
        }
    }
}

/// Rewrites the file's first bytes in place after the first block, the same size, and sets its
/// modification time back: only the change time tells.
struct RewritesQuietly(std::path::PathBuf, std::sync::atomic::AtomicBool);

impl schemascope_sources::Progress for RewritesQuietly {
    fn advance(&self, _bytes: u64) {
        use std::os::unix::fs::FileExt;
        if !self.1.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let f = std::fs::OpenOptions::new().write(true).open(&self.0).expect("open");
            let modified = f.metadata().and_then(|m| m.modified()).expect("mtime");
            f.write_at(b"{\"id\": \"zzzzzz\"", 0).expect("write");
            f.set_modified(modified).expect("set mtime");
        }
    }
}

#[test]
fn a_file_rewritten_in_place_with_its_time_set_back_is_still_an_error() {
    let (_dir, path) = write(&hostile_lines(3_000));
    let options = StreamOptions { block_bytes: 4_096, ..StreamOptions::default() };
    let progress = RewritesQuietly(path.clone(), Default::default());
    let error = load_streamed(&spec(&path), &path, options, &progress).expect_err("changed");
    assert!(error.to_string().contains("changed while it was being read"), "{error}");
}

/// A file whose distinct values all come in its second half: the worker reading the first half
/// needs next to nothing, so the other may hold more than its half of the budget. Cut in fixed
/// halves, the second worker sketched properties that fitted the budget with room to spare.
#[test]
fn values_arriving_late_may_use_the_budget_the_early_part_left() {
    // Late values drawn at random from 20,000 (as a day's sensor or user ids come).
    let mut rng = fastrand::Rng::with_seed(30);
    let lines: Vec<String> = (0..120_000)
        .map(|i| {
            let doc: serde_json::Map<String, Value> = (0..6)
                .map(|k| {
                    let value = if i >= 60_000 {
                        format!("v{k}-{}", rng.usize(..20_000))
                    } else {
                        format!("x{}", i % 5)
                    };
                    (format!("p{k}"), json!(value))
                })
                .collect();
            Value::Object(doc).to_string() + "\n"
        })
        .collect();
    let (_dir, path) = write(&lines.concat());
    // What one reader of the whole file needs at the end, twice: the late worker's logs of
    // occurrences need more than that before they are found repeating, but less than this. In
    // fixed halves it had this need alone.
    let mut whole = schemascope_core::ProfileBuilder::new();
    for line in &lines {
        whole.add_json(line.trim_end()).expect("valid");
    }
    let budget = whole.needed_bytes() * 2;
    let source = streamed(&path, 256 << 10, budget);
    let profile = source.collections[0].profile();
    assert!(profile.is_exact(), "{:?}", source.warnings);
    // `{"p0":"…","p1":"…","p2":"…","p3":"…"`: p3's value is the 16th piece between quotes.
    let distinct: std::collections::HashSet<&str> =
        lines.iter().filter_map(|l| l.split('"').nth(15)).collect();
    assert_eq!(property(profile, "p3").distinct, distinct.len() as u64);
}

/// Lines of every kind a file of JSON lines, a JSON file or neither may start with.
const LINE_KINDS: &[&[u8]] = &[
    b"{\"a\": 1}",
    b"{\"a\": \"x\", \"b\": [1, 2]}",
    b"[1, 2]",
    b"[{\"a\": 3}]",
    b"\"s\"",
    b"5",
    b"null",
    b"{\"a\": tru}",
    b"nope",
    b"",
    b"   ",
    b"{",
    b"}",
    b"  \"a\": 1,",
    b"  \"a\": 1",
    b"    2",
    b"    {\"id\": 2}",
    b"  \"b\": [",
    b"  ],",
    b"]\xff",
    b"}, {",
    b"[",
    b"]",
    b"{\"a\": 1},",
    b"{\"key\": \"k\", \"value\": 1}",
    b"{\"a\": 1} {\"a\": 2}",
    b"{\"a\": \"\xff\"}",
    b"\xc3(",
    b"id,name",
];

/// A small deterministic generator (xorshift), so failures reproduce.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What loading gave, to compare: the error, or the items, the profile and the warnings.
fn outcome(path: &std::path::Path, mode: schemascope_sources::ReadMode) -> String {
    match schemascope_sources::load_with(&spec(path), &NoProgress, mode, None) {
        Err(e) => format!("error: {e}"),
        Ok(source) => {
            // Warnings without a place (repeated ids) are worded apart: a streamed file keeps
            // no ids.
            let warnings: Vec<String> = source
                .warnings
                .iter()
                .filter(|w| w.line.is_some())
                .map(ToString::to_string)
                .collect();
            let items: Vec<u64> = source.collections.iter().map(|c| c.item_count()).collect();
            let profiles: Vec<Value> = source
                .collections
                .iter()
                .map(|c| serde_json::to_value(c.profile()).expect("json"))
                .collect();
            format!("{:?} {items:?} {warnings:?} {}", source.format, json!(profiles))
        }
    }
}

#[test]
fn a_streamed_profile_reads_every_small_file_as_its_whole_load_does() {
    // Streaming decides from a file's head whether it is JSON lines; the whole load decides
    // from all of it. Whatever a file starts with, the two must agree.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut draw = Draw(0x9e37_79b9_7f4a_7c15);
    for case in 0..3_000 {
        let name = ["docs.json", "docs.ndjson", "docs"][draw.below(3)];
        let newline: &[u8] = if draw.below(4) == 0 { b"\r\n" } else { b"\n" };
        let mut bytes = Vec::new();
        if draw.below(8) == 0 {
            bytes.extend_from_slice("\u{feff}".as_bytes());
        }
        let lines = 1 + draw.below(7);
        for i in 0..lines {
            bytes.extend_from_slice(LINE_KINDS[draw.below(LINE_KINDS.len())]);
            if i + 1 < lines || draw.below(2) == 0 {
                bytes.extend_from_slice(newline);
            }
        }
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).expect("write");
        let whole = outcome(&path, schemascope_sources::ReadMode::COPY);
        let streamed = outcome(&path, schemascope_sources::ReadMode::COPY.streamed());
        assert_eq!(streamed, whole, "case {case}, {name}: {:?}", String::from_utf8_lossy(&bytes));
    }
}
