//! No tool can return an unbounded payload: every tool, called by name as every surface calls it
//! (`tool_table::call_tool`), on hostile-size data — a 1,000,000-row SQLite table, a 100,000-node
//! graph, a record holding a 10 MB string — answers within the byte cap, and when the cap cut
//! something the envelope's `truncated` says what and how much.

use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::tool_table::{call_tool, names};
use schemascope_tools::{Caller, Services};
use serde_json::{Value, json};

/// The cap for this test: small, so that many tools hit it.
const CAP: usize = 64 * 1024;

struct Data {
    registry: Services,
    _dir: tempfile::TempDir,
}

fn hostile_data() -> Data {
    let dir = tempfile::tempdir().expect("tempdir");
    // A million rows, made by SQLite itself (fast even in a debug build).
    let db = dir.path().join("big.sqlite");
    let connection = rusqlite::Connection::open(&db).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT);
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000)
             INSERT INTO big SELECT x, 'name ' || x, printf('%.200c', 'n') FROM n;",
        )
        .expect("fill");
    drop(connection);
    // A graph of 100,000 nodes in a chain.
    let nodes: Vec<Value> =
        (0..100_000).map(|i| json!({"id": format!("n{i}"), "data": {"type": if i % 2 == 0 { "even" } else { "odd" }, "i": i}})).collect();
    let edges: Vec<Value> = (1..100_000)
        .map(|i| json!({"source": format!("n{}", i - 1), "target": format!("n{i}"), "data": {}}))
        .collect();
    let graph = dir.path().join("graph.json");
    std::fs::write(&graph, json!({"nodes": nodes, "edges": edges}).to_string())
        .expect("write graph");
    // A record whose value holds a 10 MB string.
    let records = dir.path().join("records.json");
    std::fs::write(
        &records,
        json!({"blob": {"name": "blob", "text": "x".repeat(10 * 1024 * 1024)}, "small": {"a": 1}})
            .to_string(),
    )
    .expect("write records");
    let registry = Services::new();
    let specs: Vec<SourceSpec> = [
        format!("big=sqlite:{}", db.display()),
        format!("g={}", graph.display()),
        format!("r={}", records.display()),
    ]
    .iter()
    .map(|s| s.parse().expect("spec"))
    .collect();
    registry.sources.load(&specs, &NoProgress).expect("load");
    registry.set_max_result_bytes(CAP);
    Data { registry, _dir: dir }
}

/// Arguments that ask each tool for as much as it will give.
fn greedy_arguments(tool: &str) -> Vec<Value> {
    match tool {
        "list_sources" => vec![json!({})],
        "describe_schema" => vec![
            json!({"source": "big"}),
            json!({"source": "g", "format": "markdown"}),
            json!({"source": "r"}),
        ],
        "sample_data" => vec![
            json!({"source": "big", "count": 1000}),
            json!({"source": "r", "count": 100}),
            json!({"source": "g", "count": 1000}),
        ],
        "describe_property" => {
            vec![
                json!({"source": "big", "collection": "big", "property": "name", "limit": 100000}),
                json!({"source": "r", "property": "text"}),
            ]
        }
        "query_schema" => vec![
            json!({"source": "r", "record_name": "blob"}),
            json!({"source": "g", "collection": "nodes"}),
        ],
        "validate_value" => vec![
            json!({"source": "r", "record_name": "blob", "value": {"name": 1, "text": "y".repeat(200_000)}}),
        ],
        // Not AimDB sources here: refused small (their answers cut long values: set_record_live).
        "set_record" => vec![
            json!({"source": "r", "record_name": "blob", "value": {"text": "y".repeat(200_000)}}),
        ],
        "discover_instances" => vec![json!({})],
        "find_items" => {
            vec![
                json!({"source": "g", "collection": "nodes", "selector": "i >= `0`", "limit": 100000}),
                json!({"source": "r", "selector": "text"}),
            ]
        }
        "search_schema_docs" => {
            vec![json!({"source": "big", "question": "names and notes", "top_k": 1000})]
        }
        "get_schema_context" => {
            vec![json!({"source": "big", "question": "every name", "max_tokens": 1000000})]
        }
        "execute_query" => vec![
            json!({"source": "big", "query": "SELECT * FROM big", "max_rows": 10000, "max_bytes": 1000000}),
        ],
        "validate_query" => vec![
            json!({"source": "big", "query": format!("SELECT {} FROM big", vec!["nope"; 5000].join(", "))}),
        ],
        "ask" => vec![json!({"source": "big", "question": "how many rows?"})],
        "record_example" => vec![
            json!({"source": "big", "question": "q".repeat(20_000), "sql": "SELECT 1"}),
            json!({"source": "big", "question": "every name", "sql": format!("SELECT {} FROM big", vec!["nope"; 5000].join(", "))}),
        ],
        "query_graph" => {
            vec![json!({"source": "g", "query": "all"}), json!({"source": "g", "query": "summary"})]
        }
        "find_nodes" => vec![json!({"source": "g", "selector": "i >= `0`"})],
        "find_edges" => vec![json!({"source": "g", "selector": ""})],
        "find_and_style_nodes" => vec![
            json!({"source": "g", "selector": "type == 'even'", "style": {"color": "red"}, "layer_name": "evens"}),
        ],
        "find_and_style_edges" => {
            vec![json!({"source": "g", "selector": "", "style": {"color": "blue"}})]
        }
        "clear_styles" => vec![json!({"source": "g", "layer_name": "evens"})],
        "describe_styles" => vec![
            json!({"source": "g", "verbose": true}),
            json!({"source": "g", "compute_for": "n7"}),
        ],
        "select" => vec![json!({"source": "g", "selector": "i >= `0`", "mode": "replace"})],
        "describe_selection" => vec![json!({"source": "g", "include_data": true})],
        "set_layout" => vec![json!({"source": "g", "type": "grid"})],
        "set_dimension" => vec![json!({"source": "g", "dimension": "2d"})],
        "set_camera" => vec![json!({"source": "g", "preset": "fitToGraph"})],
        "zoom_to_nodes" => vec![
            json!({"source": "g", "ids": (0..100_000).map(|i| format!("n{i}")).collect::<Vec<_>>()}),
        ],
        "list_algorithms" => vec![json!({"source": "g"})],
        "run_algorithm" => vec![json!({"source": "g", "type": "degree"})],
        "report_viewport" => vec![json!({"source": "g", "width": 800, "height": 600})],
        other => panic!("no greedy arguments for the tool `{other}`: add them here"),
    }
}

// One test, so the data is made once (a few seconds in a debug build).
#[test]
fn no_tool_returns_an_unbounded_payload() {
    let data = hostile_data();
    every_tool_answers_within_the_cap(&data);
    a_million_row_query_keeps_its_first_rows_and_says_how_many_it_dropped(&data);
    a_ten_megabyte_string_never_reaches_the_answer_whole(&data);
}

fn every_tool_answers_within_the_cap(data: &Data) {
    let mut cut = Vec::new();
    for tool in names() {
        for arguments in greedy_arguments(tool) {
            let result = call_tool(&data.registry, Caller::User, tool, arguments.clone());
            let size = serde_json::to_string(&result).expect("serializes").len();
            assert!(size <= CAP, "{tool} {arguments:.200}: {size} bytes, over the {CAP}-byte cap");
            if let Some(truncated) = &result.truncated {
                assert!(
                    truncated.original_bytes > CAP && !truncated.cuts.is_empty(),
                    "{tool}: {truncated:?}"
                );
                assert!(result.message.contains("`truncated`"), "{tool}: {}", result.message);
                // Every tool but list_sources takes arguments that ask for less.
                let advice = if tool == "list_sources" {
                    "takes no arguments"
                } else {
                    "narrow the request"
                };
                assert!(result.message.contains(advice), "{tool}: {}", result.message);
                cut.push(tool);
            }
        }
    }
    // The ones that produce the most were cut, not refused; the graph tools bound themselves
    // (counts and first items), so the cap is their backstop.
    for tool in ["execute_query", "validate_query"] {
        assert!(cut.contains(&tool), "{tool} was expected to be cut; cut: {cut:?}");
    }
}

fn a_million_row_query_keeps_its_first_rows_and_says_how_many_it_dropped(data: &Data) {
    let result = call_tool(
        &data.registry,
        Caller::User,
        "execute_query",
        json!({"source": "big", "query": "SELECT id, name FROM big ORDER BY id", "max_rows": 10000}),
    );
    assert!(result.success, "{}", result.message);
    let rows = result.data["rows"].as_array().expect("rows");
    let truncated = result.truncated.as_ref().expect("cut to the cap");
    let rows_cut =
        truncated.cuts.iter().find(|c| c.path == "data.rows").expect("the rows were cut");
    assert_eq!((rows_cut.kept, rows_cut.total, rows_cut.unit), (rows.len(), 10_000, "elements"));
    assert_eq!(rows[0], json!([1, "name 1"]), "{}", rows[0]);
    assert!(rows.len() >= 1_000, "only {} rows kept", rows.len());
}

fn a_ten_megabyte_string_never_reaches_the_answer_whole(data: &Data) {
    for (tool, arguments) in [
        ("query_schema", json!({"source": "r", "record_name": "blob"})),
        ("sample_data", json!({"source": "r", "count": 2})),
        ("find_items", json!({"source": "r", "selector": "text"})),
        ("describe_property", json!({"source": "r", "property": "text"})),
    ] {
        let result = call_tool(&data.registry, Caller::User, tool, arguments);
        assert!(result.success, "{tool}: {}", result.message);
        let text = serde_json::to_string(&result).expect("serializes");
        assert!(text.len() <= CAP, "{tool}: {} bytes", text.len());
        // Shortened by the tool's own display limits (marked), or by the cap (recorded).
        let longest = longest_string(&result.data);
        assert!(longest < 100_000, "{tool}: a {longest}-byte string in the answer");
        let marked = text.contains("truncated") || text.contains('…');
        assert!(marked, "{tool} does not say the value was shortened: {:.400}", text);
    }
}

fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(map) => map.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// A cut answer says how to see the rest in a way the tool allows: a list of too many sources
/// is narrowed to one with `source`, which lists it whole; a tool that takes no arguments only
/// shows more under a larger cap.
#[test]
fn a_cut_answer_advises_only_what_its_tool_can_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let specs: Vec<SourceSpec> = (0..200)
        .map(|i| {
            let path = dir.path().join(format!("s{i}.ndjson"));
            std::fs::write(&path, format!("{{\"n\":{i},\"name\":\"source number {i}\"}}\n"))
                .expect("write");
            format!("s{i}={}", path.display()).parse().expect("spec")
        })
        .collect();
    let registry = Services::new();
    registry.sources.load(&specs, &NoProgress).expect("load");
    registry.set_max_result_bytes(4 * 1024);
    let listed = call_tool(&registry, Caller::User, "list_sources", json!({}));
    assert!(listed.truncated.is_some(), "200 sources fit in 4 KiB: {}", listed.message);
    assert!(listed.message.contains("narrow the request"), "{}", listed.message);
    let one = call_tool(&registry, Caller::User, "list_sources", json!({"source": "s199"}));
    assert!(one.success && one.truncated.is_none(), "{}", one.message);
    assert_eq!(one.data["sources"][0]["name"], "s199");
    assert_eq!(one.data["sources"].as_array().map(Vec::len), Some(1));
    let unknown = call_tool(&registry, Caller::User, "list_sources", json!({"source": "s1999"}));
    assert!(
        !unknown.success && unknown.message.contains("Unknown source `s1999`"),
        "{}",
        unknown.message
    );
    let takes_none = schemascope_tools::tool_table::see_the_rest("list_sources");
    assert_eq!(takes_none, schemascope_tools::cap::SeeTheRest::NarrowTheRequest);
}

/// Listing every source shows each one's first warnings at lines and its notes, and counts the
/// rest; listing one source shows every warning it holds.
#[test]
fn every_source_shows_its_first_warnings_and_one_source_all_of_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut specs: Vec<SourceSpec> = Vec::new();
    for i in 0..6 {
        let path = dir.path().join(format!("b{i}.ndjson"));
        let text: String = (0..1_500).map(|k| format!("{{\"a\": {k}}}\noops {k}\n")).collect();
        std::fs::write(&path, text).expect("write");
        specs.push(format!("b{i}={}", path.display()).parse().expect("spec"));
    }
    let small = dir.path().join("small.ndjson");
    std::fs::write(&small, "{\"a\": 1}\nnope\n").expect("write");
    specs.push(format!("small={}", small.display()).parse().expect("spec"));
    let registry = Services::new();
    registry.sources.load(&specs, &NoProgress).expect("load");
    let listed = call_tool(&registry, Caller::User, "list_sources", json!({}));
    assert!(listed.truncated.is_none(), "{}", listed.message);
    assert!(listed.message.contains("`warningsNotShown`"), "{}", listed.message);
    let sources = listed.data["sources"].as_array().cloned().unwrap_or_default();
    assert_eq!(sources.len(), 7);
    for source in &sources {
        let warnings = source["warnings"].as_array().cloned().unwrap_or_default();
        if source["name"] == "small" {
            assert_eq!(warnings.len(), 1);
            assert!(source.get("warningsNotShown").is_none());
            continue;
        }
        let placed = warnings.iter().filter(|w| w.get("line").is_some()).count();
        assert_eq!(placed, 20, "{source}");
        assert_eq!(source["warningsNotShown"], 980);
        assert_eq!(
            warnings.first().and_then(|w| w["message"].as_str()),
            Some("1500 lines were skipped in all; only the first 1000 are listed")
        );
    }
    let one = call_tool(&registry, Caller::User, "list_sources", json!({"source": "b3"}));
    let warnings = one.data["sources"][0]["warnings"].as_array().cloned().unwrap_or_default();
    assert_eq!(warnings.len(), 1_001);
    assert!(one.data["sources"][0].get("warningsNotShown").is_none());
}
