//! CSV and Parquet files as sources: every figure compared with pandas/pyarrow's own on real
//! public tables (vega-datasets) and on Parquet files of every type pyarrow writes
//! (`tests/tables/`), and awkward CSV text — byte-order marks, CRLF, quoted newlines, ragged
//! rows, leading zeros, bad UTF-8, no header — read as the module docs state.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use schemascope_core::path::PropertyPath;
use schemascope_core::{Collection, PropertyProfile};
use schemascope_sources::{NoProgress, Source, SourceError, SourceSpec, load};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load_path(path: &Path) -> Result<Source, SourceError> {
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    load(&spec, &NoProgress)
}

fn python(args: &[&str]) -> Vec<u8> {
    let out =
        Command::new("python3").args(args).current_dir(repo()).output().expect("python3 runs");
    assert!(out.status.success(), "python3 {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The Parquet files `tests/tables/write_parquet.py` writes, once per test run.
fn parquet_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        python(&["tests/tables/write_parquet.py", dir.path().to_str().expect("utf-8")]);
        dir
    })
    .path()
}

fn reference(path: &Path) -> serde_json::Map<String, Value> {
    let out = python(&["tests/tables/reference.py", path.to_str().expect("utf-8")]);
    match serde_json::from_slice(&out).expect("reference JSON") {
        Value::Object(map) => map,
        other => panic!("reference is not an object: {other}"),
    }
}

fn property<'a>(collection: &'a Collection, name: &str) -> &'a PropertyProfile {
    let path = PropertyPath::root().child(name);
    collection.profile().property(&path).unwrap_or_else(|| panic!("no property {name}"))
}

fn close(ours: f64, theirs: f64, relative: f64) -> bool {
    ours == theirs || (ours - theirs).abs() <= relative * theirs.abs().max(ours.abs())
}

/// Every column's counts, distinct values, extremes and mean equal the reference's.
fn matches_reference(path: &Path) {
    let source = load_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let collection = &source.collections[0];
    let expected = reference(path);
    assert!(!expected.is_empty());
    for (name, want) in &expected {
        let p = property(collection, name);
        let at = format!("{}: {name}", path.display());
        assert_eq!(p.present - p.nulls, want["present"].as_u64().expect("present"), "{at} present");
        assert_eq!(p.nulls, want["nulls"].as_u64().expect("nulls"), "{at} nulls");
        if let Some(distinct) = want.get("distinct") {
            assert_eq!(p.distinct, distinct.as_u64().expect("distinct"), "{at} distinct");
        }
        if want.get("min").is_some() {
            let numbers = p.numbers.as_ref().unwrap_or_else(|| panic!("{at} has no numbers"));
            // A 32-bit float column's mean sums doubles of other digits than pyarrow's.
            let tolerance = if name.starts_with("f32") { 1e-6 } else { 1e-12 };
            for (figure, ours) in
                [("min", numbers.min), ("max", numbers.max), ("mean", numbers.mean)]
            {
                let theirs = want[figure].as_f64().expect("figure");
                assert!(close(ours, theirs, tolerance), "{at} {figure}: {ours} vs {theirs}");
            }
        }
    }
}

#[test]
fn real_csv_files_match_pandas() {
    for name in ["airports.csv", "seattle-weather.csv", "la-riots.csv"] {
        matches_reference(&repo().join("testdata/tables").join(name));
    }
}

#[test]
fn parquet_files_of_every_type_match_pyarrow() {
    for name in ["types.parquet", "int96.parquet", "seattle-weather.parquet", "zstd.parquet"] {
        matches_reference(&parquet_dir().join(name));
        mapped_reads_as_copied(&parquet_dir().join(name));
    }
}

/// A file read from a mapping, as one-shot commands read it, has the profile and rows of one
/// read from copies.
fn mapped_reads_as_copied(path: &Path) {
    use schemascope_sources::{ReadMode, load_with};
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    let copied = load_with(&spec, &NoProgress, ReadMode::COPY, None).expect("copied");
    // SAFETY: the test's own files, which nothing changes while they are loaded.
    let mapped = load_with(&spec, &NoProgress, unsafe { ReadMode::map() }, None).expect("mapped");
    let (a, b) = (&copied.collections[0], &mapped.collections[0]);
    let profile = |c: &Collection| serde_json::to_value(c.profile()).expect("serializable");
    assert_eq!(profile(a), profile(b), "{}", path.display());
    let rows = |c: &Collection| c.items().map(|i| i.json.to_string()).collect::<Vec<_>>();
    assert_eq!(rows(a), rows(b), "{}", path.display());
}

/// pyarrow's dictionary pages (read as keys where a row group has no plain page) profile as
/// the same rows written without them, and as pyarrow counts them.
#[test]
fn parquet_dictionary_pages_profile_as_plain_pages() {
    let keys = load_path(&parquet_dir().join("dictionary-pages.parquet")).expect("keys");
    let plain = load_path(&parquet_dir().join("plain-pages.parquet")).expect("plain");
    let profile = |s: &Source| serde_json::to_value(s.collections[0].profile()).expect("JSON");
    assert_eq!(profile(&keys), profile(&plain));
    matches_reference(&parquet_dir().join("dictionary-pages.parquet"));
}

#[test]
fn parquet_and_csv_of_the_same_rows_profile_alike() {
    let csv = load_path(&repo().join("testdata/tables/seattle-weather.csv")).expect("csv");
    let parquet = load_path(&parquet_dir().join("seattle-weather.parquet")).expect("parquet");
    let (a, b) = (&csv.collections[0], &parquet.collections[0]);
    assert_eq!(a.len(), 1461);
    assert_eq!(b.len(), 1461);
    for name in ["precipitation", "temp_max", "temp_min", "wind", "weather"] {
        let (x, y) = (property(a, name), property(b, name));
        assert_eq!(x.distinct, y.distinct, "{name}");
        assert_eq!(x.present, y.present, "{name}");
        assert_eq!(
            x.numbers.as_ref().map(|n| (n.min, n.max, n.median)),
            y.numbers.as_ref().map(|n| (n.min, n.max, n.median)),
            "{name}"
        );
    }
    // Items are the rows, numbered as a person counts them.
    let first = a.items().next().expect("a row");
    assert_eq!(first.id, "#1");
    assert!(first.json.contains(r#""date":"2012/01/01""#), "{}", first.json);
    let last = b.items().last().expect("a row");
    assert_eq!(last.id, "#1461");
}

#[test]
fn parquet_values_read_as_documented() {
    let source = load_path(&parquet_dir().join("types.parquet")).expect("types");
    let c = &source.collections[0];
    let types = |name: &str| property(c, name).types;
    // NaN and the infinities are text; the rest of the floats numbers.
    assert!(types("f32").string > 0 && types("f32").number > 0);
    // Dates, times, timestamps and durations are text of their format.
    let ts = property(c, "ts_us_zone").strings.as_ref().expect("text");
    assert!(ts.min.as_deref().is_some_and(|m| m.ends_with("+00:00")), "{:?}", ts.min);
    let row = |n: usize| -> Value {
        serde_json::from_str(c.items().nth(n).expect("row").json).expect("json")
    };
    let second = row(1);
    assert_eq!(second["ts_s"], "2020-03-01T00:59:59", "{second}");
    assert_eq!(second["ts_ns"], "2000-01-01T00:00:00", "{second}");
    assert_eq!(row(2)["ts_ns"], "2000-01-01T00:00:00.000000001");
    // A null struct's fields are missing, not null: `point` is null in every fifth row.
    let field = |p: &str| c.profile().property(&p.parse().expect("path")).expect("field").clone();
    let (point, x) = (property(c, "point"), field("point.label"));
    assert_eq!(x.present, point.present - point.nulls);
    assert_eq!(second["ts_us_zone"], "2020-02-29T18:29:58.124455+00:00", "{second}");
    assert_eq!(second["wait"], "-PT0.35S", "{second}");
    assert_eq!(second["u64"], 17_397_194_066_663_749_697u64, "{second}");
    assert_eq!(second["kind"], "green", "{second}");
    // Nested values: elements and fields are properties of their own.
    for path in ["tags", "point", "attrs"] {
        assert!(property(c, path).present > 0, "{path}");
    }
    let x =
        c.profile().property(&"point.inner.depth".parse().expect("path")).expect("nested field");
    assert!(x.numbers.is_some());
    let int96 = load_path(&parquet_dir().join("int96.parquet")).expect("int96");
    let row: Value =
        serde_json::from_str(int96.collections[0].items().nth(1).expect("row").json).expect("json");
    assert_eq!(row["at"], "2001-09-09T01:46:41.000001", "{row}");
}

/// Files the `parquet` crate panics on or recurses through are this file's error, not the
/// process's end.
#[test]
fn corrupt_and_deep_parquet_files_are_refused_with_a_reason() {
    let corrupt =
        load_path(&parquet_dir().join("arrow-schema-corrupt.parquet")).expect_err("corrupt");
    assert!(corrupt.to_string().contains("not a Parquet file this reader can read"), "{corrupt}");
    let deep = load_path(&parquet_dir().join("deep.parquet")).expect_err("deep");
    assert!(deep.to_string().contains("nested 400 levels deep; at most 64"), "{deep}");
}

use crate::common::temp_file as write;

fn rows(source: &Source) -> Vec<Value> {
    source.collections[0].items().map(|i| serde_json::from_str(i.json).expect("row json")).collect()
}

#[test]
fn awkward_csv_text_reads_as_stated() {
    let text = "\u{feff}id,zip,note,score\r\n1,02134,\"two\r\nlines, \"\"quoted\"\"\",1.5\r\n2,90210,,\r\n3,00501,plain,2\r\n";
    let (_dir, path) = write("awkward.csv", text.as_bytes());
    let source = load_path(&path).expect("loads");
    let rows = rows(&source);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["id"], 1);
    // Leading zeros keep a column text.
    assert_eq!(rows[0]["zip"], "02134");
    assert_eq!(rows[0]["note"], "two\r\nlines, \"quoted\"");
    assert_eq!(rows[1]["note"], Value::Null);
    assert_eq!(rows[2]["score"], 2.0);
    // 19-digit integers within i64 stay exact integers (snowflake ids).
    let (_d, ids) =
        write("ids.csv", b"id\n1500000000000000072\n1500000000000000073\n9223372036854775807\n");
    let ids = load_path(&ids).expect("ids");
    let id = property(&ids.collections[0], "id");
    assert_eq!(id.distinct, 3);
    let first: Value =
        serde_json::from_str(ids.collections[0].items().next().expect("row").json).expect("json");
    assert_eq!(first["id"], 1_500_000_000_000_000_072u64);
    let warning = &source.warnings[0].message;
    assert!(
        warning.contains("delimiter `,`")
            && warning.contains("zip: text")
            && warning.contains("score: number"),
        "{warning}"
    );
}

#[test]
fn csv_integers_past_i64_within_u64_stay_exact_as_in_json() {
    // (A one-column CSV cannot hold a null: its empty field is a blank line, skipped.)
    let values = ["18446744073709551615", "18446744073709551614", "-9223372036854775808", "7"];
    let csv: String = std::iter::once("n").chain(values).map(|v| format!("{v}\n")).collect();
    let ndjson: String = values.iter().map(|v| format!("{{\"n\": {v}}}\n")).collect();
    let (_a, csv) = write("wide.csv", csv.as_bytes());
    let (_b, ndjson) = write("wide.ndjson", ndjson.as_bytes());
    let (csv, ndjson) = (load_path(&csv).expect("csv"), load_path(&ndjson).expect("ndjson"));
    let (x, y) = (property(&csv.collections[0], "n"), property(&ndjson.collections[0], "n"));
    assert_eq!((x.distinct, x.present, x.nulls), (4, 4, 0));
    assert_eq!((x.distinct, x.present, x.nulls), (y.distinct, y.present, y.nulls));
    let (a, b) = (x.numbers.as_ref().expect("numbers"), y.numbers.as_ref().expect("numbers"));
    assert_eq!(a.integer_count, 4);
    assert_eq!((a.exact_range, a.exact_median), (b.exact_range, b.exact_median));
    assert_eq!((a.mean, a.std_dev), (b.mean, b.std_dev));
    // The mean past 2^53 from the exact sum, as every format holds it.
    assert_eq!(a.mean_value(), b.mean_value());
    let (_m, mean) =
        write("mean.csv", b"x\n18014398509481985\n18014398509481986\n18014398509481987\n");
    let mean = load_path(&mean).expect("mean");
    let x = property(&mean.collections[0], "x").numbers.as_ref().expect("numbers");
    assert_eq!(x.mean_value(), 18014398509481986u64);
    let first = rows(&csv)[0].clone();
    assert_eq!(first["n"], u64::MAX);
    assert!(
        csv.warnings[0].message.contains("n: integer (DECIMAL(20,0)"),
        "{}",
        csv.warnings[0].message
    );
    // Past u64's magnitude, integers are text: as doubles, 2^64 + 1 and 2^64 + 2 would be one
    // value.
    let (_c, past) = write("past.csv", b"n\n18446744073709551617\n18446744073709551618\n1\n");
    let past = load_path(&past).expect("past");
    let n = property(&past.collections[0], "n");
    assert_eq!((n.types.string, n.numbers.is_none()), (3, true));
    assert_eq!(n.strings.as_ref().map(|s| s.distinct), Some(3));
}

#[test]
fn a_skipped_row_types_nothing() {
    for (text, kind) in [
        ("a,b\n1,2\n3,4\nzzz,5,6\n", "a: integer"),
        ("a,b\n1,2\n18446744073709551616,5,6\n", "a: integer"),
    ] {
        let (_dir, path) = write("skipped.csv", text.as_bytes());
        let source = load_path(&path).expect("loads");
        let warning = &source.warnings[0].message;
        assert!(warning.contains(kind), "{text:?}: {warning}");
        let all: Vec<&str> = source.warnings.iter().map(|w| w.message.as_str()).collect();
        assert!(all.iter().any(|w| w.contains("skipped: 3 fields")), "{all:?}");
        assert_eq!(
            property(&source.collections[0], "a").types.integer,
            2 - u64::from(text.contains("1844"))
        );
    }
}

#[test]
fn delimiters_and_headers_are_found() {
    let (_d, semi) = write("semi.csv", b"a;b;c\n1;x;2.5\n2;y;3\n");
    assert_eq!(rows(&load_path(&semi).expect("semi"))[1]["c"], 3.0);
    let (_d, tsv) = write("t.tsv", b"name\tcount\nfoo, bar\t3\n");
    assert_eq!(rows(&load_path(&tsv).expect("tsv"))[0]["name"], "foo, bar");
    // Numbers only: no header.
    let (_d, bare) = write("bare.csv", b"1,2\n3,4\n");
    let bare = load_path(&bare).expect("bare");
    assert_eq!(
        rows(&bare),
        vec![
            serde_json::json!({"column_1": 1, "column_2": 2}),
            serde_json::json!({"column_1": 3, "column_2": 4})
        ]
    );
    // Empty and repeated header names.
    let (_d, names) = write("names.csv", b"a,,a\n1,2,3\n");
    assert_eq!(
        rows(&load_path(&names).expect("names"))[0],
        serde_json::json!({"a": 1, "column_2": 2, "a_2": 3})
    );
}

#[test]
fn ragged_rows_and_bad_bytes_are_reported_with_their_line() {
    let (_d, path) = write("ragged.csv", b"a,b,c\n1,2,3\n4,5\n6,7,8,9\nx,\xff\xfe,z\n");
    let source = load_path(&path).expect("loads");
    let rows = rows(&source);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[1]["c"], Value::Null);
    assert_eq!(rows[2]["b"], "\u{fffd}\u{fffd}");
    let at = |line: usize| {
        source.warnings.iter().find(|w| w.line == Some(line)).map(|w| w.message.clone())
    };
    assert!(
        at(3).is_some_and(|m| m.contains("2 fields where the header has 3")),
        "{:?}",
        source.warnings
    );
    assert!(at(4).is_some_and(|m| m.contains("skipped")), "{:?}", source.warnings);
    let bad = source.warnings.iter().find(|w| w.line == Some(5)).expect("bad bytes reported");
    assert_eq!(bad.column, Some(2));
    // CRLF line breaks count as one line each: the short row is on line 3.
    let (_d, crlf) = write("crlf.csv", b"a,b,c\r\n1,2,3\r\n4,5\r\n");
    let crlf = load_path(&crlf).expect("loads");
    assert!(
        crlf.warnings.iter().any(|w| w.line == Some(3) && w.message.contains("2 fields")),
        "{:?}",
        crlf.warnings
    );
    // A header name that is not UTF-8 is reported too.
    let (_d, header) = write("header.csv", b"n\xe9m,b\nx,1\n");
    let header = load_path(&header).expect("loads");
    assert!(
        header
            .warnings
            .iter()
            .any(|w| w.line == Some(1) && w.column == Some(1) && w.message.contains("not UTF-8")),
        "{:?}",
        header.warnings
    );
    // A header alone: no rows, and its columns are still properties (with no value).
    let (_d, header_only) = write("header-only.csv", b"name,count\n");
    let header_only = load_path(&header_only).expect("loads");
    let c = &header_only.collections[0];
    assert_eq!(c.len(), 0);
    assert_eq!(property(c, "count").present, 0);
    let (_d, empty) = write("empty.csv", b"");
    assert!(load_path(&empty).expect_err("empty").to_string().contains("no rows"));
}

#[test]
fn a_csv_read_in_parts_numbers_its_rows_in_order() {
    // About 20 MB: read in several parts by both cores; a quoted newline in every 1,000th row.
    let mut text = String::from("n,label,value\n");
    for n in 1..=400_000u64 {
        let label =
            if n % 1_000 == 0 { "\"multi\nline\"".to_string() } else { format!("l{}", n % 97) };
        text.push_str(&format!("{n},{label},{}.{}\n", n % 1_013, n % 7));
    }
    let (_d, path) = write("big.csv", text.as_bytes());
    let source = load_path(&path).expect("loads");
    let c = &source.collections[0];
    assert_eq!(c.sample_of(), Some(400_000));
    for item in c.items() {
        let row: Value = serde_json::from_str(item.json).expect("json");
        assert_eq!(item.id, format!("#{}", row["n"]), "{}", item.json);
    }
    let n = property(c, "n");
    assert_eq!((n.present, n.distinct), (400_000, 400_000));
    let numbers = n.numbers.as_ref().expect("numbers");
    assert_eq!((numbers.min, numbers.max, numbers.mean), (1.0, 400_000.0, 200_000.5));
    matches_reference(&path);
    // Within a budget of 1 MiB the counters spill, and every figure stays the same.
    let mut spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
    spec.limits.memory_budget = Some(1 << 20);
    let small = load(&spec, &NoProgress).expect("loads within 1 MiB");
    let profile = |s: &Source| serde_json::to_value(s.collections[0].profile()).expect("json");
    assert_eq!(profile(&small), profile(&source));
    assert!(small.collections[0].profile().properties().iter().all(|p| p.approximate.is_none()));
}
