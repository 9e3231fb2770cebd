//! Loading every format, and bad input: each a clear error (or warning) naming file, line and column.

use schemascope_core::CollectionKind;
use schemascope_core::property::{PropertyOptions, describe_property};
use schemascope_sources::{NoProgress, Source, SourceError, SourceSpec, load};

use crate::common::temp_file as write;

fn load_path(path: &std::path::Path) -> Result<Source, SourceError> {
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    load(&spec, &NoProgress)
}

fn load_text(name: &str, text: &str) -> Result<Source, SourceError> {
    let (_dir, path) = write(name, text);
    load_path(&path)
}

#[test]
fn graphty_and_networkx_shapes_give_identical_profiles() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/demo/");
    let graphty =
        load_path(&std::path::Path::new(root).join("infrastructure.json")).expect("graphty loads");
    let networkx = load_path(&std::path::Path::new(root).join("infrastructure.networkx.json"))
        .expect("networkx loads");
    for name in ["nodes", "edges"] {
        let a = graphty.collection(name).expect("collection");
        let b = networkx.collection(name).expect("collection");
        assert_eq!(a.len(), b.len());
        let ids_a: Vec<&str> = a.items().map(|i| i.id).collect();
        let ids_b: Vec<&str> = b.items().map(|i| i.id).collect();
        assert_eq!(ids_a, ids_b, "{name} ids");
        let (pa, pb) = (a.profile().properties(), b.profile().properties());
        assert_eq!(pa.len(), pb.len(), "{name}: property counts differ");
        for (x, y) in pa.iter().zip(pb.iter()) {
            let (vx, vy) =
                (serde_json::to_string(x).expect("json"), serde_json::to_string(y).expect("json"));
            assert!(vx == vy, "{name}: {} differs:\n{:.600}\n{:.600}", x.path, vx, vy);
        }
    }
    assert!(graphty.warnings.is_empty(), "{:?}", graphty.warnings);
}

#[test]
fn edges_without_ids_get_stable_ids_and_dangling_endpoints_are_reported() {
    let text = r#"{"nodes": [{"id": "a"}, {"id": "b"}],
        "edges": [{"source": "a", "target": "b"}, {"source": "a", "target": "b"}, {"id": "e9", "source": "a", "target": "zz"}]}"#;
    let source = load_text("g.json", text).expect("loads");
    let edges = source.collection("edges").expect("edges");
    let ids: Vec<&str> = edges.items().map(|i| i.id).collect();
    assert_eq!(ids, ["a->b", "a->b#2", "e9"]);
    assert_eq!(source.warnings.len(), 1);
    assert!(source.warnings[0].message.contains("target `zz`"), "{}", source.warnings[0]);
    assert_eq!(edges.len(), 3, "dangling edge kept");
    let again = load_text("g.json", text).expect("loads");
    let ids_again: Vec<&str> =
        again.collection("edges").expect("edges").items().map(|i| i.id).collect();
    assert_eq!(ids, ids_again);
}

#[test]
fn generated_edge_ids_step_around_taken_ones_in_file_order() {
    // `a->b` is an explicit id; `a->b->c` is generated twice, from different ends.
    let text = r#"{"nodes": [{"id": "a"}, {"id": "b"}, {"id": "b->c"}, {"id": "a->b"}, {"id": "c"}],
        "edges": [{"source": "a", "target": "b"}, {"id": "a->b", "source": "b", "target": "a"},
                  {"source": "a", "target": "b->c"}, {"source": "a->b", "target": "c"},
                  {"source": "a", "target": "b"}, {"source": "a", "target": "b->c"}]}"#;
    let source = load_text("g.json", text).expect("loads");
    let ids: Vec<&str> = source.collection("edges").expect("edges").items().map(|i| i.id).collect();
    assert_eq!(ids, ["a->b~2", "a->b", "a->b->c", "a->b->c~2", "a->b#2", "a->b->c#2"]);
}

#[test]
fn malformed_json_names_line_and_column() {
    let err = load_text("g.json", "{\"nodes\": [\n  {\"id\": \"a\",}\n]}").expect_err("malformed");
    let text = err.to_string();
    assert!(text.contains("g.json:2:"), "{text}");
}

/// A file in a format schemascope does not read says so and names what it reads, instead of a
/// JSON parser's complaint about the first byte; a JSON file broken further in keeps its
/// syntax error.
#[test]
fn files_of_other_formats_say_what_is_read() {
    for (name, text) in
        [("data.feather", "ARROW1"), ("config.yaml", "a: 1\n"), ("notes.txt", "hello\n")]
    {
        let err = load_text(name, text).expect_err(name).to_string();
        let extension = name.rsplit('.').next().unwrap_or_default();
        assert!(err.contains(&format!("`.{extension}` files are not read")), "{err}");
        assert!(err.contains("schemascope reads JSON") && err.contains("SQLite"), "{err}");
    }
    // A Parquet file that is not one says so, with the reader's reason.
    let (dir, path) = write("data.parquet", "");
    std::fs::write(&path, b"PAR1\xff\xfe\x00").expect("write");
    let err = load_path(&path).expect_err("binary").to_string();
    assert!(err.contains("not a Parquet file this reader can read"), "{err}");
    drop(dir);
    let err = load_text("data.bin", "hello world").expect_err("not JSON").to_string();
    assert!(
        err.contains("not JSON (expected value at line 1 column 1); schemascope reads"),
        "{err}"
    );
    let err = load_text("broken.json", "[1,\n 2,\n x]").expect_err("broken").to_string();
    assert!(err.contains("broken.json:3:") && !err.contains("schemascope reads"), "{err}");
}

#[test]
fn non_object_nodes_and_duplicate_ids_are_errors_with_positions() {
    let err = load_text("g.json", "{\"nodes\": [{\"id\": \"a\"},\n 42]}").expect_err("non-object");
    assert!(err.to_string().contains(":2:2: node #1 is not an object"), "{err}");
    let err = load_text("g.json", "{\"nodes\": [{\"id\": \"a\"},\n{\"id\": \"a\"}]}")
        .expect_err("duplicate");
    assert!(
        err.to_string()
            .contains(":2:1: duplicate node id `a` (node #1; node #0 had it first, at line 1)"),
        "{err}"
    );
    let err = load_text("g.json", "{\"nodes\": [{\"data\": {}}]}").expect_err("no id");
    assert!(err.to_string().contains("has no `id`"), "{err}");
    // Every error a file can fail on is found before anything is built, each named as before.
    let failing = |text: &str, expected: &str| {
        let err = load_text("g.json", text).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    };
    let long = format!("{{\"nodes\": [{{\"id\": [\"{}\"]}}]}}", "x".repeat(10_000));
    failing(&long, "node #0 has an `id` that is neither a string nor a number: [\"xxx");
    assert!(load_text("g.json", &long).expect_err("long").to_string().len() < 400, "quoted short");
    failing(r#"{"nodes": [{"id": 1, "data": 7}]}"#, "node #0 has `data` that is not an object: 7");
    failing(r#"{"nodes": [{"id": 1}], "edges": [{"source": 1}]}"#, "edge #0 has no `target`");
    failing(
        r#"{"nodes": [{"id": 1}], "edges": [{"source": 1, "target": {}}]}"#,
        "edge #0 has a `target` that is neither a string nor a number: {}",
    );
    failing(r#"{"nodes": [{"id": 1}], "edges": [7]}"#, "edge #0 is not an object");
    failing(
        r#"{"nodes": [{"id": 1}], "edges": [{"source": 1, "target": 1, "data": []}]}"#,
        "edge #0 has `data` that is not an object: []",
    );
    failing(
        "{\"nodes\": [{\"id\": 1}], \"edges\": [\n{\"id\": \"e\", \"source\": 1, \"target\": 1},\n{\"id\": \"e\", \"source\": 1, \"target\": 1}]}",
        ":3:1: duplicate edge id `e` (edge #1; edge #0 had it first, at line 2)",
    );
    // Numbers are ids as written back (`1.50` is `1.5`), so `1.5` repeats it.
    failing(r#"{"nodes": [{"id": 1.50}, {"id": 1.5}]}"#, "duplicate node id `1.5`");
    // Node-link nodes (members beside `id`) keep `data` as an attribute, whatever it is.
    let source = load_text("g.json", r#"{"nodes": [{"id": 1, "data": 7, "x": 1}], "links": []}"#)
        .expect("node-link");
    assert_eq!(source.collection("nodes").expect("nodes").len(), 1);
}

#[test]
fn ndjson_bad_lines_become_warnings_and_do_not_skew_counts() {
    let text = "{\"id\": 1, \"v\": 10}\n{\"id\": 2, \"v\": 20, \"extra\": tru}\n\n{\"id\": 3, \"v\": 30}\n";
    let source = load_text("docs.ndjson", text).expect("loads");
    assert_eq!(source.warnings.len(), 1);
    assert_eq!(source.warnings[0].line, Some(2));
    assert!(source.warnings[0].column.is_some());
    let docs = &source.collections[0];
    assert_eq!(docs.len(), 2);
    let profile = docs.profile();
    let v = profile.property(&"v".parse().expect("path")).expect("v");
    assert_eq!(v.present, 2, "the bad line's `v` must not be counted");
    assert!(profile.property(&"extra".parse().expect("path")).is_none());
}

#[test]
fn nan_like_numbers_are_syntax_errors_and_huge_numbers_too() {
    let err = load_text("d.json", "[{\"x\": NaN}]").expect_err("NaN is not JSON");
    assert!(err.to_string().contains("d.json:1:"), "{err}");
    let err = load_text("d.json", "[{\"x\": 1e400}]").expect_err("out of range");
    assert!(err.to_string().contains("out of range"), "{err}");
    let source = load_text("d.ndjson", "{\"x\": Infinity}\n{\"x\": 1}\n").expect("line-level");
    assert_eq!(source.warnings.len(), 1);
}

#[test]
fn a_ten_megabyte_string_is_profiled_and_shown_truncated() {
    let big = "x".repeat(10 << 20);
    let text = format!(
        "[{{\"id\": \"big\", \"blob\": \"{big}\"}}, {{\"id\": \"small\", \"blob\": \"y\"}}]"
    );
    let source = load_text("big.json", &text).expect("loads");
    let docs = &source.collections[0];
    let answer = describe_property(
        docs.profile(),
        "big",
        &"blob".parse().expect("path"),
        PropertyOptions::default(),
    );
    let shown = serde_json::to_string(&answer.data).expect("json");
    assert!(shown.len() < 10_000, "description is {} bytes", shown.len());
    assert_eq!(answer.data["maxLength"], 10 << 20);
}

#[test]
fn a_record_object_with_a_deeply_nested_record_loads_with_the_depth_limit_on_that_record() {
    // `{"shallow": {...}, "deep": {"a": {"a": … 200 levels}}, "shallow": …}`: the parser's
    // recursion limit (128) used to refuse the whole file.
    let deep = format!("{}1{}", "{\"a\": ".repeat(200), "}".repeat(200));
    let text = format!(
        "{{\"rec::Shallow\": {{\"x\": 1}}, \"rec::Deep\": {deep}, \"rec::Last\": 7, \"rec::Shallow\": {{\"x\": 2}}}}"
    );
    let source = load_text("records.json", &text).expect("loads");
    let records = &source.collections[0];
    assert_eq!(records.kind(), CollectionKind::Records);
    // A repeated key keeps its first place and its last value, as before.
    let keys: Vec<&str> = records.items().map(|i| i.id).collect();
    assert_eq!(keys, ["rec::Shallow", "rec::Deep", "rec::Last"]);
    let shallow = records.record_profile("rec::Shallow").expect("shallow");
    let x = shallow.property(&"x".parse().expect("path")).expect("x");
    assert_eq!(x.numbers.as_ref().map(|n| (n.min, n.max)), Some((2.0, 2.0)));
    // The deep record is profiled down to the depth limit, where one value is counted, not read.
    let deep = records.record_profile("rec::Deep").expect("deep");
    let walked = deep.root.walk();
    assert_eq!(walked.iter().map(|n| n.profile.depth_limited).sum::<u64>(), 1);
    assert_eq!(walked.len(), 65, "the value and 64 levels of `a`");
    // Showing it cuts it at the display depth limit with a marker, not an error.
    let item = records.items().find(|i| i.id == "rec::Deep").expect("item");
    let shown = records.parse_item(&item).expect("parsed with a depth cap").to_string();
    assert!(
        shown.contains(schemascope_core::capped::DEPTH_MARKER),
        "{}",
        &shown[shown.len().saturating_sub(200)..]
    );
}

#[test]
fn thousand_deep_nesting_is_cut_at_the_depth_limit_without_panicking() {
    // Inside a JSON array, nesting past the profiler's depth limit is counted, not descended.
    let deep = format!("[{}{}]", "[".repeat(1000), "]".repeat(1000));
    let source = load_text("deep.json", &deep).expect("loads with a depth limit");
    let nodes = source.collections[0].profile().root.walk();
    let limited: u64 = nodes.iter().map(|n| n.profile.depth_limited).sum();
    assert_eq!((limited, nodes.len()), (1, 65), "one value cut at the depth limit");
    let line = format!("{}1{}\n{{\"ok\": 1}}\n", "{\"a\":".repeat(1000), "}".repeat(1000));
    let source = load_text("deep.ndjson", &line).expect("loads with a depth limit");
    let docs = &source.collections[0];
    assert_eq!(docs.len(), 2);
    let limited: u64 = docs.profile().root.walk().iter().map(|n| n.profile.depth_limited).sum();
    assert_eq!(limited, 1);
    // Tools that show the item get it cut at a depth, marked, not an error for the collection.
    let item = docs.item(0).expect("item");
    let shown = docs.parse_item(&item).expect("parsed with a depth cap").to_string();
    assert!(
        shown.contains(schemascope_core::capped::DEPTH_MARKER),
        "{}",
        &shown[shown.len().saturating_sub(200)..]
    );
    assert_eq!(shown.matches("{\"a\":").count(), schemascope_core::capped::MAX_PARSE_DEPTH);
}

#[test]
fn records_from_object_and_ndjson_group_values_by_key() {
    let source = load_text(
        "r.json",
        r#"{"server::Config": {"port": 80}, "server::Status": {"state": "up"}}"#,
    )
    .expect("loads");
    let records = &source.collections[0];
    assert_eq!(records.kind(), CollectionKind::Records);
    assert_eq!(records.record_profiles().len(), 2);
    let lines = "{\"key\": \"t\", \"value\": {\"c\": 1}, \"metadata\": {\"writable\": true}}\n{\"key\": \"t\", \"value\": {\"c\": 2.5}}\n{\"key\": \"u\", \"value\": 3}\n";
    let source = load_text("r.ndjson", lines).expect("loads");
    let records = &source.collections[0];
    assert_eq!(records.kind(), CollectionKind::Records);
    let t = records.record_profile("t").expect("t");
    assert_eq!(t.item_count, 2);
    assert!(records.item(0).expect("item").metadata().is_some());
}

/// A record line, or a record object, that gives a member twice keeps its last value, as JSON
/// parsers read it; the file is still read as records.
#[test]
fn repeated_members_of_records_keep_their_last_value() {
    let lines = "{\"key\": \"b\", \"value\": {\"x\": 3}, \"value\": {\"y\": 4}}\n{\"key\": \"a\", \"key\": \"b\", \"value\": {\"y\": 5}}\n";
    let source = load_text("r.ndjson", lines).expect("loads");
    assert!(source.warnings.is_empty(), "{:?}", source.warnings);
    let records = &source.collections[0];
    assert_eq!(records.kind(), CollectionKind::Records);
    let b = records.record_profile("b").expect("b");
    assert_eq!(b.item_count, 2);
    let paths: Vec<String> = b.properties().iter().map(|p| p.path.to_string()).collect();
    assert_eq!(paths, ["y"]);
    assert!(records.record_profile("a").is_none());
    let source =
        load_text("r.json", r#"{"r": {"x": 1}, "s": {"z": 0}, "r": {"y": 2}}"#).expect("loads");
    let r = source.collections[0].record_profile("r").expect("r");
    let paths: Vec<String> = r.properties().iter().map(|p| p.path.to_string()).collect();
    assert_eq!(paths, ["y"]);
}

#[test]
fn empty_collections_and_empty_files() {
    let source = load_text("e.ndjson", "").expect("an empty NDJSON file is an empty collection");
    assert_eq!(source.collections[0].len(), 0);
    assert!(source.collections[0].profile().properties().is_empty());
    let err = load_text("e.json", "  ").expect_err("empty JSON");
    assert!(err.to_string().contains("empty"), "{err}");
    let source = load_text("g.json", "{\"nodes\": [], \"edges\": []}").expect("empty graph");
    assert_eq!(source.collections.len(), 2);
}

#[test]
fn unreadable_files_and_wrong_shapes_are_named() {
    let err = load_path(std::path::Path::new("/nonexistent/x.json")).expect_err("missing");
    assert!(err.to_string().contains("/nonexistent/x.json"), "{err}");
    let (_dir, path) = write("x.json", "[1, 2]");
    let spec: SourceSpec = format!("graph:{}", path.display()).parse().expect("spec");
    let err = load(&spec, &NoProgress).expect_err("not a graph");
    assert!(err.to_string().contains("nodes"), "{err}");
    let err = load_text("s.json", "42").expect_err("scalar");
    assert!(err.to_string().contains("single scalar"), "{err}");
}

#[test]
fn document_ids_come_from_the_id_member_and_duplicates_are_kept_apart() {
    let source =
        load_text("d.json", r#"[{"id": "a"}, {"id": "a"}, {"name": "no id"}]"#).expect("loads");
    let ids: Vec<&str> = source.collections[0].items().map(|i| i.id).collect();
    assert_eq!(ids, ["a", "a~2", "#2"]);
    assert_eq!(source.warnings.len(), 1);
}

#[test]
fn large_ndjson_keeps_ids_positions_and_counts_across_slices_and_bad_lines() {
    // Two slices or more; ids written plainly, escaped, as numbers, or missing; a bad line in
    // the second half, whose slice is profiled again without it.
    let mut text = String::new();
    for i in 0..60_000 {
        let line = match i % 4 {
            0 => format!("{{\"id\": \"d{i}\", \"v\": {i}}}"),
            1 => format!("{{\"id\": \"e\\u00e9{i}\", \"v\": {i}}}"),
            2 => format!("{{\"id\": {i}, \"v\": {i}}}"),
            _ => format!("{{\"v\": {i}}}"),
        };
        text.push_str(&line);
        text.push_str(" \n");
        if i == 45_001 {
            text.push_str("{\"id\": \"bad\", \"v\": tru}\n");
        }
    }
    assert!(text.len() > 1 << 20, "big enough for the parallel path");
    let source = load_text("ids.ndjson", &text).expect("loads");
    assert_eq!(source.warnings.len(), 1);
    assert_eq!(source.warnings[0].line, Some(45_003));
    let docs = &source.collections[0];
    assert_eq!(docs.len(), 60_000);
    let id = |i: usize| docs.item(i).expect("item").id.to_string();
    assert_eq!([id(0), id(1), id(2), id(3)], ["d0", "eé1", "2", "#3"]);
    assert_eq!(
        [id(45_000), id(45_001), id(45_002), id(59_999)],
        ["d45000", "eé45001", "45002", "#59999"]
    );
    assert_eq!(docs.item(45_002).expect("item").json, "{\"id\": 45002, \"v\": 45002}");
    let v = docs.profile().property(&"v".parse().expect("path")).expect("v");
    assert_eq!((v.present, v.numbers.as_ref().expect("numbers").max), (60_000, 59_999.0));
}

#[test]
fn large_ndjson_is_scanned_in_parallel_with_exact_counts() {
    let mut text = String::new();
    for i in 0..60_000 {
        text.push_str(&format!(
            "{{\"id\": \"r{i}\", \"n\": {i}, \"kind\": \"k{}\", \"tags\": [\"a\", \"b\"]}}\n",
            i % 7
        ));
    }
    assert!(text.len() > 1 << 20, "big enough for the parallel path");
    let source = load_text("big.ndjson", &text).expect("loads");
    let docs = &source.collections[0];
    assert_eq!(docs.len(), 60_000);
    let n = docs.profile().property(&"n".parse().expect("path")).expect("n");
    let numbers = n.numbers.as_ref().expect("numbers");
    assert_eq!((numbers.min, numbers.max, numbers.distinct), (0.0, 59_999.0, 60_000));
    assert_eq!(docs.profile().property(&"kind".parse().expect("path")).expect("kind").distinct, 7);
    assert_eq!(docs.item(59_999).expect("last").id, "r59999");
}

/// The profile of a loaded source's first collection, as JSON.
fn profile_json(source: &schemascope_sources::Source) -> serde_json::Value {
    serde_json::to_value(source.collections[0].profile()).expect("serializable")
}

#[test]
fn a_line_that_is_not_utf8_is_skipped_and_other_invalid_utf8_is_refused_at_its_line() {
    // Lines of JSON: the line is skipped with a warning at its first bad byte; the others load
    // as they would without it, CRLF and a last line without a newline included.
    let (_dir, bad) = write("bad.ndjson", "");
    std::fs::write(&bad, b"{\"a\": 1}\r\n{\"a\": \"\xff\"}\r\n{\"a\": 3, \"b\": \"\xc3\xa9\"}")
        .expect("write");
    let source = load_path(&bad).expect("loads the valid lines");
    let (_dir, clean) = write("clean.ndjson", "{\"a\": 1}\r\n\r\n{\"a\": 3, \"b\": \"é\"}");
    assert_eq!(profile_json(&source), profile_json(&load_path(&clean).expect("loads")));
    assert_eq!(source.collections[0].len(), 2);
    let warnings: Vec<String> = source.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, ["line 2, column 8: skipped: the line is not valid UTF-8 (byte 0xFF)"]);

    // Its first line broken, a file named `.json` is still lines of JSON.
    let (_dir, first) = write("first.json", "");
    std::fs::write(&first, b"{\"a\": \"\xe2\x82\"}\n{\"a\": 2}\n{\"a\": 5}\n").expect("write");
    let source = load_path(&first).expect("loads the valid lines");
    assert_eq!(source.collections[0].len(), 2);
    assert_eq!(
        source.warnings[0].to_string(),
        "line 1, column 8: skipped: the line is not valid UTF-8 (byte 0xE2)"
    );

    // Anything else is refused at the byte's line: a JSON array (a line of it is not an item),
    // or documents over several lines.
    for (name, bytes) in [
        ("array.json", &b"[\n{\"a\": 1},\n{\"a\": \"\xff\"}\n]\n"[..]),
        ("pretty.json", &b"{\n  \"a\": 1\n}\n{\n  \"a\": \"\xff\"\n}\n"[..]),
        ("graph.json", &b"{\"nodes\": [\n{\"id\": \"\xff\"}\n], \"edges\": []}\n"[..]),
    ] {
        let (_dir, path) = write(name, "");
        std::fs::write(&path, bytes).expect("write");
        let err = load_path(&path).expect_err("not UTF-8").to_string();
        let line = bytes.split(|&b| b == b'\n').position(|l| std::str::from_utf8(l).is_err());
        let at = format!("{name}:{}:", line.expect("a bad line") + 1);
        assert!(err.contains("not valid UTF-8") && err.contains(&at), "{name}: {err}");
    }

    // Large enough to be read and checked in parallel slices; the bad byte is in the last one.
    let line = b"{\"a\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n";
    let lines = (40 << 20) / line.len();
    let mut bytes = Vec::with_capacity((lines + 1) * line.len());
    for _ in 0..lines {
        bytes.extend_from_slice(line);
    }
    bytes.extend_from_slice(b"{\"a\": \"\xc3\"}\n");
    let (_dir, big) = write("big.ndjson", "");
    std::fs::write(&big, &bytes).expect("write");
    let source = load_path(&big).expect("loads the valid lines");
    assert_eq!(source.collections[0].len(), lines);
    assert_eq!(source.warnings.len(), 1);
    assert_eq!(source.warnings[0].line, Some(lines + 1));

    // The same lines as one JSON array, with a bad byte in its first item, are refused at it.
    let mut joined = b"[".to_vec();
    for i in 0..lines {
        if i > 0 {
            joined.push(b',');
        }
        joined.extend_from_slice(&line[..line.len() - 1]);
    }
    joined.push(b']');
    joined[10] = 0xff;
    let (_dir, array) = write("big.json", "");
    std::fs::write(&array, &joined).expect("write");
    let err = load_path(&array).expect_err("not UTF-8").to_string();
    assert!(err.contains("big.json:1:") && err.contains("not valid UTF-8"), "{err}");
}

/// A file past the size where one-shot commands map it: a few huge documents (cheap to profile)
/// behind a byte-order mark.
fn large_documents() -> String {
    let long = "x".repeat(17 << 20);
    format!(
        "\u{feff}{{\"id\":\"a\",\"note\":\"{long}\"}}\n{{\"id\":\"b\",\"note\":\"{long}y\"}}\n{{\"id\":\"c\",\"n\":1}}\n"
    )
}

#[test]
fn a_mapped_file_loads_exactly_as_a_copied_one() {
    use schemascope_sources::{ReadMode, load_with};
    let (_dir, path) = write("big.ndjson", large_documents());
    assert!(
        std::fs::metadata(&path).expect("metadata").len() > 32 << 20,
        "large enough to be mapped"
    );
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    let copied = load_with(&spec, &NoProgress, ReadMode::COPY, None).expect("copied");
    // SAFETY: the test's own temporary file, which nothing changes while it is loaded.
    let mapped = load_with(&spec, &NoProgress, unsafe { ReadMode::map() }, None).expect("mapped");
    let (a, b) = (&copied.collections[0], &mapped.collections[0]);
    let items = |c: &schemascope_core::Collection| {
        c.items()
            .map(|i| (i.id.to_string(), i.json.len(), i.json.chars().take(20).collect::<String>()))
            .collect::<Vec<_>>()
    };
    assert_eq!(items(a), items(b));
    assert_eq!(
        items(b)[0],
        ("a".to_string(), (17 << 20) + 20, "{\"id\":\"a\",\"note\":\"xx".to_string())
    );
    assert_eq!(items(b)[2], ("c".to_string(), 16, "{\"id\":\"c\",\"n\":1}".to_string()));
    let profile =
        |c: &schemascope_core::Collection| serde_json::to_value(c.profile()).expect("serializable");
    assert_eq!(profile(a), profile(b));
}

#[test]
fn a_mapped_file_with_a_line_that_is_not_utf8_loads_as_a_copied_one() {
    use schemascope_sources::{ReadMode, load_with};
    let mut bytes = large_documents().into_bytes();
    let at = bytes.len() - 5;
    bytes[at] = 0xff;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.ndjson");
    std::fs::write(&path, &bytes).expect("write");
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    // SAFETY: the test's own temporary file, which nothing changes while it is loaded.
    let loaded = [ReadMode::COPY, unsafe { ReadMode::map() }]
        .map(|mode| load_with(&spec, &NoProgress, mode, None).expect("loads the valid lines"));
    for source in &loaded {
        let ids: Vec<String> = source.collections[0].items().map(|i| i.id.to_string()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(
            source.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["line 3, column 13: skipped: the line is not valid UTF-8 (byte 0xFF)"]
        );
    }
    assert_eq!(profile_json(&loaded[0]), profile_json(&loaded[1]));

    // The same documents as one JSON array are refused, mapped or copied, at the bad byte.
    let array = dir.path().join("bad.json");
    let text = String::from_utf8_lossy(&bytes).replace('\u{fffd}', "\u{1}");
    let joined = format!("[{}]", text.trim_start_matches('\u{feff}').trim_end().replace('\n', ","));
    let mut bytes = joined.into_bytes();
    let at = bytes.iter().position(|&b| b == 1).expect("the marked byte");
    bytes[at] = 0xff;
    std::fs::write(&array, &bytes).expect("write");
    let spec: SourceSpec = array.to_str().expect("utf-8 path").parse().expect("spec");
    // SAFETY: as above.
    for mode in [ReadMode::COPY, unsafe { ReadMode::map() }] {
        let err = load_with(&spec, &NoProgress, mode, None).expect_err("not UTF-8").to_string();
        assert!(err.contains("not valid UTF-8") && err.contains(":1:"), "{mode:?}: {err}");
    }
}

#[test]
fn ndjson_whose_first_line_is_broken_is_lines_whatever_its_name() {
    // The first line is a warning; the file is lines, named `.json` or not at all.
    for (name, text) in [
        ("cut.json", "{\"a\": tru}\n{\"a\": 1}\n{\"a\": 2}\n"),
        ("header.json", "id,a\n{\"a\": 1}\n{\"a\": 2}\n"),
        ("data", "\n\n{\"a\": 1, \"a\": }\n{\"a\": 1}\n\n{\"a\": 2}"),
        ("many.json", "x\n{\"a\": 1}\n{\"a\": 2}\ny\n{\"a\": 3}\n{\"a\": 4}\n[5]\n"),
    ] {
        let source = load_text(name, text).expect("loads as lines");
        let docs = &source.collections[0];
        assert!(docs.len() >= 2, "{name}: {}", docs.len());
        let first = text.lines().position(|l| !l.trim().is_empty()).expect("a line") + 1;
        assert_eq!(source.warnings[0].line, Some(first), "{name}: {:?}", source.warnings);
    }
    // A document broken on its first line, or whose next lines are mostly not JSON alone, is
    // an error at the break.
    for (name, text) in [
        ("pretty.json", "{\"a\": 1,,\n  \"b\": {\"c\": 2}\n}\n"),
        ("few.json", "x\n{\"a\": 1}\ny\nz\n"),
        ("scalars.json", "x\n1\n2\n"),
    ] {
        let error = load_text(name, text).expect_err("not lines").to_string();
        assert!(error.contains(&format!("{name}:1:")), "{name}: {error}");
    }
}

#[test]
fn lines_of_arrays_are_lines_whatever_the_name_and_an_array_over_lines_is_one_array() {
    let source = load_text("arrays.json", "[{\"a\": 1}]\n[{\"a\": 2}, 3]\n").expect("lines");
    let docs: Vec<&str> = source.collections[0].items().map(|i| i.json).collect();
    assert_eq!(docs, ["[{\"a\": 1}]", "[{\"a\": 2}, 3]"]);
    for text in
        ["[{\"a\": 1},\n{\"a\": 2}]\n", "[\n{\"a\": 1}\n]\n", "[{\"a\": 1}, {\"a\": 2}]\n\n"]
    {
        let source = load_text("array.json", text).expect("an array");
        assert_eq!(source.collections[0].len(), 2 - usize::from(text.starts_with("[\n")), "{text}");
    }
}

/// Loads `bytes` written as `name`, whole and as a streamed profile would: the two agree.
fn load_bytes(name: &str, bytes: &[u8]) -> Result<Source, SourceError> {
    use schemascope_sources::{ReadMode, load_with};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    let spec: SourceSpec = path.to_str().expect("utf-8 path").parse().expect("spec");
    let whole = load_with(&spec, &NoProgress, ReadMode::COPY, None);
    let streamed = load_with(&spec, &NoProgress, ReadMode::COPY.streamed(), None);
    let said = |r: &Result<Source, SourceError>| match r {
        Ok(s) => format!(
            "{:?} {:?}",
            s.warnings,
            s.collections.iter().map(|c| c.item_count()).collect::<Vec<_>>()
        ),
        Err(e) => e.to_string(),
    };
    assert_eq!(said(&whole), said(&streamed), "{name}");
    whole
}

#[test]
fn lines_that_are_not_utf8_are_bad_lines_wherever_they_are() {
    // Tester helper-60's findings. A broken first line opening an array, before NDJSON.
    let body: String = (0..20).map(|i| format!("{{\"id\": {i}}}\n")).collect();
    for first in ["[{\"id\":0,\"na", "[", "[1,2,"] {
        for name in ["cut.json", "cut"] {
            let source = load_bytes(name, format!("{first}\n{body}").as_bytes()).expect("lines");
            assert_eq!(source.collections[0].len(), 20, "{first} {name}");
            assert_eq!(source.warnings[0].line, Some(1), "{first} {name}");
        }
    }
    // Every line not UTF-8: nothing loaded, every line named as it is.
    let err = load_bytes("all.ndjson", b"{\"a\":\"\xff\"}\n{\"a\":\"\xfe\"}\n").expect_err("none");
    assert!(err.to_string().contains("all.ndjson:1:7: no item loaded: all 2 non-empty lines are invalid (line 1, column 7: skipped: the line is not valid UTF-8 (byte 0xFF); line 2, column 7: skipped: the line is not valid UTF-8 (byte 0xFE))"), "{err}");
    let err = load_bytes("mixed.ndjson", b"{\"a\":\"\xff\"}\nnope\nnope2\n").expect_err("none");
    assert!(
        err.to_string().contains("mixed.ndjson:1:7: no item loaded: all 3 non-empty lines"),
        "{err}"
    );
    // A graph over several lines with a bad byte on its first line is refused at the byte.
    let graph = b"{\"nodes\":[{\"id\":\"a\",\"label\":\"x\xff\"}],\n\"edges\":[]}\n";
    let err = load_bytes("graph.json", graph).expect_err("not UTF-8").to_string();
    assert!(err.contains("graph.json:1:31: the file is not valid UTF-8 text"), "{err}");
    // A bad line inside a document over several lines does not make a document of the rest.
    let jq = b"{\"a\":1,\"n\":\"q\",\"b\":0}\n{\n  \"a\": 1,\n  \"n\": \"x\xff\",\n  \"b\": 2\n}\n{\"a\":3,\"n\":\"y\",\"b\":4}\n";
    let source = load_bytes("docs.json", jq).expect("lines");
    let docs: Vec<&str> = source.collections[0].items().map(|i| i.json).collect();
    assert_eq!(docs, ["{\"a\":1,\"n\":\"q\",\"b\":0}", "{\"a\":3,\"n\":\"y\",\"b\":4}"]);
    let lines: Vec<Option<usize>> = source.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [2, 3, 4, 5, 6].map(Some));
    assert!(source.warnings[2].message.contains("not valid UTF-8"), "{:?}", source.warnings);
    // Columns count bytes from after a byte-order mark, skipped line or refused file.
    let source =
        load_bytes("bom.ndjson", b"\xef\xbb\xbf{\"id\":1,\"name\":\"\xff\"}\n{\"id\":2}\n")
            .expect("lines");
    assert_eq!(source.warnings[0].column, Some(17));
    let err = load_bytes("bom.json", b"\xef\xbb\xbf[{\"a\":\"\xff\"}]\n").expect_err("not UTF-8");
    assert!(err.to_string().contains("bom.json:1:8:"), "{err}");
    let err = load_bytes("wide.json", b"[{\"\xc3\xa9\":\"\xff\"}]\n").expect_err("not UTF-8");
    assert!(err.to_string().contains("wide.json:1:9:"), "{err}");
    // Tester helper-61: no line inside a value over several lines becomes a document, whatever
    // the file's name; a file not UTF-8 is then refused at its byte.
    let pretty = b"{\n  \"a\": 1,\n  \"n\": \"x\xff\",\n  \"b\": [\n    1,\n    2\n  ]\n}\n{\n  \"a\": 2\n}\n";
    let one_line_first = b"{\"a\":1}\n{\n  \"items\": [\n    {\"id\": 1},\n    {\"id\": 2}\n  ],\n  \"n\": \"\xff\"\n}\n{\"a\":3}\n";
    let array_then_bad = b"[\n{\"id\":24,\"key\":null}\n]\xff\n";
    for (bytes, line) in [(&pretty[..], 3), (&one_line_first[..], 7), (&array_then_bad[..], 3)] {
        for name in ["docs.ndjson", "docs.jsonl", "docs.json", "docs"] {
            let err = load_bytes(name, bytes).expect_err("not UTF-8").to_string();
            assert!(
                err.contains(&format!("{name}:{line}:")) && err.contains("not valid UTF-8"),
                "{name}: {err}"
            );
        }
    }
    // A broken value over several lines, without bytes that are not UTF-8, is refused at it.
    let broken = b"{\"a\":1}\n{\n  \"items\": [\n    {\"id\": 1},\n    {\"id\": 2}\n  ],,\n}\n";
    let err = load_bytes("broken.ndjson", broken).expect_err("broken").to_string();
    assert!(
        err.contains("broken.ndjson:6:5: JSON documents follow one another over several lines"),
        "{err}"
    );
    // Documents over several lines past the head a streamed profile decides from: read whole.
    let mut late = String::new();
    for i in 0..3_000 {
        late.push_str(&format!("{{\"id\": {i}, \"pad\": \"abcdefghijklmnop\"}}\n"));
    }
    for i in 0..3 {
        late.push_str(&format!(
            "{{\n  \"id\": {},\n  \"arr\": [\n    0,\n    1\n  ]\n}}\n",
            100_000 + i
        ));
    }
    assert!(late.len() > 96 << 10, "past the first step of the head");
    let source = load_bytes("late.ndjson", late.as_bytes()).expect("a sequence");
    let docs = &source.collections[0];
    assert_eq!((docs.len(), source.warnings.len()), (3_003, 0));
    let id = docs.profile().property(&"id".parse().expect("path")).expect("id");
    assert_eq!(id.numbers.as_ref().map(|n| n.max), Some(100_002.0));
    // Tester helper-62: a pretty value cut off, at the end or in the middle of a log, is
    // refused at the cut; a log with a line cut short and a stray closer far later is lines.
    let cut_end = b"{\"id\":0}\n{\n  \"id\": 2,\n  \"items\": [\n    {\"sku\": \"c\"},\n    {\"sku\": \"d\"}\n";
    let mut cut_mid =
        b"{\"id\":0}\n{\n  \"id\": 2,\n  \"items\": [\n    {\"sku\": \"INNER\"}\n".to_vec();
    let mut log = Vec::new();
    for i in 0..2_000 {
        let line = match i {
            100 => "{\"ts\":100,\"level\":\"info\",\"tags\":[".to_string(),
            1_500 => "}".to_string(),
            _ => format!("{{\"ts\":{i},\"level\":\"info\"}}"),
        };
        cut_mid.extend_from_slice(format!("{{\"ts\":{i}}}\n").as_bytes());
        log.extend_from_slice(line.as_bytes());
        log.push(b'\n');
    }
    for (name, bytes) in [("cut_end.ndjson", &cut_end[..]), ("cut_mid.ndjson", &cut_mid[..])] {
        let err = load_bytes(name, bytes).expect_err("a value cut off").to_string();
        assert!(
            err.contains("JSON documents follow one another over several lines"),
            "{name}: {err}"
        );
    }
    let source = load_bytes("log.ndjson", &log).expect("lines");
    assert_eq!(source.collections[0].len(), 1_998);
    assert_eq!(
        source.warnings.iter().map(|w| w.line).collect::<Vec<_>>(),
        [Some(101), Some(1_501)]
    );
    // Two lines, the first not UTF-8: lines, as when it is not JSON.
    let source = load_bytes("two.json", b"{\"n\":\"\xff\"}\n{\"id\":2}\n").expect("lines");
    assert_eq!(source.collections[0].len(), 1);
    assert_eq!(
        source.warnings[0].to_string(),
        "line 1, column 7: skipped: the line is not valid UTF-8 (byte 0xFF)"
    );
}

#[test]
fn a_line_file_where_no_line_loads_is_an_error_naming_the_first_bad_lines() {
    // Every non-empty line invalid, in every line format: documents, records and forced formats.
    let cases = [
        ("bad.ndjson", "not json\n{\"a\": tru}\n\n[1,\n{\"b\": \"é\u{202e}\"\n"),
        ("bad.jsonl", "{\"a\": 1\n"),
        ("values.ndjson", "nope\n\n\n"),
    ];
    for (name, text) in cases {
        let error = load_text(name, text).expect_err("nothing loaded is an error");
        let message = error.to_string();
        assert!(message.contains("no item loaded"), "{name}: {message}");
        assert!(message.contains(":1:"), "{name}: the first bad line is named: {message}");
    }
    let error =
        load_text("bad.ndjson", "not json\n{\"a\": tru}\n\n[1,\n{\"b\": 1\n").expect_err("all bad");
    let message = error.to_string();
    assert!(message.contains("all 4 non-empty lines are invalid"), "{message}");
    assert!(
        message.contains("line 1,") && message.contains("line 2,") && message.contains("line 4,"),
        "{message}"
    );
    assert!(message.contains("and 1 more"), "{message}");
    // Blank lines only, or no lines, are an empty file, not bad lines.
    assert_eq!(load_text("blank.ndjson", "\n  \n\n").expect("blank").collections[0].len(), 0);
    // One good line among bad ones loads, with the bad ones as warnings.
    let source = load_text("some.ndjson", "x\n{\"a\": null}\ny\n").expect("one good line");
    assert_eq!(source.collections[0].len(), 1);
    let lines: Vec<Option<usize>> = source.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, vec![Some(1), Some(3)]);
}

#[test]
fn pretty_printed_documents_one_after_another_are_the_documents_of_their_array() {
    let docs = [
        serde_json::json!({"id": "a", "n": 1, "tags": ["x", "y"], "deep": {"s": "ü"}}),
        serde_json::json!({"id": "b", "n": 2.5, "tags": [], "deep": {"s": null}}),
        serde_json::json!({"id": "c", "n": null, "extra": true}),
    ];
    let pretty: Vec<String> =
        docs.iter().map(|d| serde_json::to_string_pretty(d).expect("json")).collect();
    let (_dir, array) = write("docs.json", serde_json::to_string(&docs).expect("json"));
    let expected = load_path(&array).expect("the array loads");
    let profile = |s: &Source| serde_json::to_value(s.collections[0].profile()).expect("json");
    let ids = |s: &Source| s.collections[0].items().map(|i| i.id.to_string()).collect::<Vec<_>>();
    // As `jq` writes them; with blank lines and no final newline; named as NDJSON.
    let compact = serde_json::to_string(&docs[0]).expect("json");
    let cases = [
        ("jq.json", pretty.join("\n") + "\n"),
        // The first on one line, the others over several (tester helper-59).
        ("first_one_line.json", format!("{compact}\n{}\n{}\n", pretty[1], pretty[2])),
        ("first_one_line.ndjson", format!("{compact}\n{}\n{}\n", pretty[1], pretty[2])),
        ("gaps.json", format!("\n\n{}\n\n\n{}  {}", pretty[0], pretty[1], pretty[2])),
        ("named.ndjson", pretty.join("\n")),
    ];
    for (name, text) in cases {
        let (_dir, path) = write(name, &text);
        let source = load_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(source.warnings.is_empty(), "{name}: {:?}", source.warnings);
        assert_eq!(source.collections[0].kind(), CollectionKind::Documents, "{name}");
        assert_eq!(profile(&source), profile(&expected), "{name}");
        assert_eq!(ids(&source), ["a", "b", "c"], "{name}");
    }
}

#[test]
fn one_document_per_line_stays_ndjson_and_a_broken_sequence_is_bad_lines() {
    // One-line documents after a multi-line first one are a sequence too: JSON values follow
    // one another.
    let (_dir, mixed) = write("mixed.json", "{\n  \"a\": 1\n}\n{\"a\": 2}\n{\"a\": 3}\n");
    let source = load_path(&mixed).expect("loads");
    assert_eq!(source.collections[0].item_count(), 3);
    // NDJSON with a bad line keeps its good lines, with a warning.
    let (_dir, lines) = write("lines.json", "{\"a\": 1}\n{\"a\": \n{\"a\": 3}\n");
    let source = load_path(&lines).expect("loads");
    assert_eq!(source.collections[0].item_count(), 2);
    assert_eq!(source.warnings.len(), 1, "{:?}", source.warnings);
    // Pretty-printed documents of which one is broken: an error where it is.
    for name in ["broken.json", "broken.ndjson"] {
        let (_dir, broken) = write(name, "{\n  \"a\": 1\n}\n{\n  \"a\": \n}\n");
        let error = load_path(&broken).expect_err("nothing loads").to_string();
        assert!(error.contains(&format!("{name}:6:1: JSON documents follow one another over several lines, and this one is not valid JSON: expected value")), "{error}");
    }
}

#[test]
fn a_file_of_many_bad_lines_lists_the_first_thousand_and_counts_the_rest() {
    // Read whole and streamed alike (`load_bytes` requires it): 1,500 bad lines among good ones,
    // one of them not UTF-8, past the thousandth.
    let mut bytes = Vec::new();
    for i in 0..3_000 {
        match i % 2 {
            0 => bytes.extend_from_slice(format!("{{\"id\": {i}}}\n").as_bytes()),
            _ if i == 2_501 => bytes.extend_from_slice(b"{\"id\": \"\xff\"}\n"),
            _ => bytes.extend_from_slice(format!("oops {i}\n").as_bytes()),
        }
    }
    let source = load_bytes("many.ndjson", &bytes).expect("loads");
    assert_eq!(source.collections[0].item_count(), 1_500);
    let placed: Vec<usize> = source.warnings.iter().filter_map(|w| w.line).collect();
    assert_eq!(placed, (0..1_000).map(|k| 2 * k + 2).collect::<Vec<_>>());
    let notes: Vec<String> =
        source.warnings.iter().filter(|w| w.line.is_none()).map(ToString::to_string).collect();
    assert_eq!(notes, ["1500 lines were skipped in all; only the first 1000 are listed"]);
    // At the limit, every line is listed and there is no note.
    let limit: String = (0..2_000)
        .map(|i| if i % 2 == 0 { format!("{{\"id\": {i}}}\n") } else { format!("oops {i}\n") })
        .collect();
    let source = load_bytes("limit.ndjson", limit.as_bytes()).expect("loads");
    assert_eq!(source.warnings.len(), 1_000);
    assert!(source.warnings.iter().all(|w| w.line.is_some()));
}

#[test]
fn many_lines_not_utf8_or_all_bad_are_counted_in_full_and_listed_in_part() {
    // 1,200 lines with a stray byte among good ones: the first thousand say so, the note counts
    // them all.
    let mut bytes = Vec::new();
    for i in 0..2_400 {
        match i % 2 {
            0 => bytes.extend_from_slice(format!("{{\"id\": {i}}}\n").as_bytes()),
            _ => bytes.extend_from_slice(b"{\"id\": \"\xfe\"}\n"),
        }
    }
    let source = load_bytes("stray.ndjson", &bytes).expect("loads");
    assert_eq!(source.collections[0].item_count(), 1_200);
    let listed: Vec<_> = source.warnings.iter().filter(|w| w.line.is_some()).collect();
    assert_eq!(listed.len(), 1_000);
    assert_eq!(
        listed[999].to_string(),
        "line 2000, column 9: skipped: the line is not valid UTF-8 (byte 0xFE)"
    );
    assert_eq!(
        source.warnings.last().map(ToString::to_string).as_deref(),
        Some("1200 lines were skipped in all; only the first 1000 are listed")
    );
    // Every one of 2,500 lines bad: the error counts them all, names the first three.
    let bad: String = (0..2_500).map(|i| format!("oops {i}\n")).collect();
    let err = load_bytes("bad.ndjson", bad.as_bytes()).expect_err("nothing loaded").to_string();
    assert!(
        err.contains("no item loaded: all 2500 non-empty lines are invalid (line 1, column 1: skipped: expected value; line 2, column 1: skipped: expected value; line 3, column 1: skipped: expected value; and 2497 more)"),
        "{err}"
    );
}

#[test]
fn lines_cut_short_stay_skipped_lines_however_many() {
    // Tester helper-63's files: NDJSON with lines cut short (a log's truncated writes), as many
    // as the good lines or more, before or after them. Each is one skipped line.
    let cases: [(&str, String, u64); 4] = [
        ("bad.ndjson", "{\"a\":1}\n{bad\n{bad\n{\"a\":2}\n".into(), 2),
        (
            "log.ndjson",
            "{\"a\":1}\n{\"b\":\"x\n{\"a\":2}\n{\"b\":\"y\n{\"a\":3}\n{\"b\":\"z\n".into(),
            3,
        ),
        (
            "first.ndjson",
            (0..150)
                .map(|i| format!("{{\"a\":{i},\"b\n"))
                .chain((0..100).map(|i| format!("{{\"a\":{i}}}\n")))
                .collect(),
            100,
        ),
        (
            "cut.jsonl",
            (0..1_000)
                .map(|i| format!("{{\"a\": [{i}, {{\"b\": \"c{i}\n"))
                .chain((0..999).map(|i| format!("{{\"a\":{i}}}\n")))
                .collect(),
            999,
        ),
    ];
    for (name, text, items) in cases {
        let source = load_bytes(name, text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(source.collections[0].item_count(), items, "{name}");
    }
    // A pretty-printed value is still one value, not lines: two documents, not its inner ones.
    let pretty = "{\"a\":1}\n{\n  \"b\": [\n    {\"c\": 1},\n    {\"c\": 2}\n  ]\n}\n";
    let source = load_bytes("pretty.ndjson", pretty.as_bytes()).expect("a sequence");
    assert_eq!(source.collections[0].item_count(), 2);
    assert!(source.warnings.is_empty(), "{:?}", source.warnings);
}

#[test]
fn a_cut_line_ending_in_a_bracket_among_cut_lines_and_text_lines_keeps_a_log_lines() {
    // Tester helper-64's files: a truncated write may end right after `[`; other cut lines and
    // text lines among the documents are no sign of a pretty-printed value.
    let g = |i: usize| format!("{{\"a\": {i}}}");
    let cut = "{\"a\":1,\"b\":\"x";
    let lines = [g(0), "{\"a\":[".into(), g(1), cut.into(), cut.into(), g(2)];
    let source = load_bytes("x.ndjson", (lines.join("\n") + "\n").as_bytes()).expect("lines");
    assert_eq!(source.collections[0].item_count(), 3);
    let mut text = String::from("Config dump {\n");
    for i in 0..10 {
        text.push_str(&format!("{}\nplain text line {i}\n", g(i)));
    }
    let source = load_bytes("log.ndjson", text.as_bytes()).expect("lines");
    assert_eq!(source.collections[0].item_count(), 10);
}

#[test]
fn an_element_after_a_comma_inside_an_unclosed_value_is_not_a_document() {
    // Tester helper-64: a pretty-printed array never closed, in the middle of NDJSON: its last
    // element `{"a": 200}` must not be read as a document.
    let g: Vec<String> = (0..20).map(|i| format!("{{\"a\": {i}}}")).collect();
    let mut lines = g.clone();
    lines.extend(["[".to_string(), "{\"a\": 100},".into(), "{\"a\": 200}".into()]);
    lines.extend(g);
    let err = load_bytes("v.ndjson", (lines.join("\n") + "\n").as_bytes()).expect_err("refused");
    assert!(err.to_string().contains("v.ndjson:"), "{err}");
}

#[test]
fn a_log_line_cut_after_a_bracket_then_a_line_ending_in_a_comma_keeps_the_log_lines() {
    // Tester helper-65: a truncated write ending in `[` with content before it, then a
    // document with a trailing comma, among documents.
    let g: Vec<String> = (0..10).map(|i| format!("{{\"id\":{i}}}")).collect();
    for cut in ["{\"id\":5,\"tags\":[", "{\"id\":5,\"sub\":{"] {
        let mut lines = g[..5].to_vec();
        lines.extend([cut.to_string(), "{\"id\":6},".into()]);
        lines.extend(g[5..].iter().cloned());
        let source = load_bytes("log.ndjson", (lines.join("\n") + "\n").as_bytes()).expect("lines");
        assert_eq!(source.collections[0].item_count(), 10, "{cut}");
    }
}
