//! What the tools tell a model when a name is not where it asked, a limit was hit or data is
//! stale: algorithm results found and suggested, the collection that has a property, the path
//! limit, values cut for depth, a failed reload; and the figures an algorithm run reports.

use schemascope_core::figure;
use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok, registry};

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

fn property(registry: &Services, collection: Option<&str>, path: &str) -> ToolResult {
    describe_property(
        registry,
        DescribePropertyParams {
            source: infra(),
            property: path.into(),
            collection: collection.map(str::to_string),
            ..Default::default()
        },
    )
}

fn run(registry: &Services, algorithm: &str) -> ToolResult {
    run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: algorithm.into(),
            ..Default::default()
        },
    )
}

#[test]
fn algorithm_runs_report_figures_without_float_noise() {
    let registry = demo();
    let ran = run(&registry, "pagerank");
    assert!(ran.success, "{}", ran.message);
    let ms = ran.data["durationMs"].as_f64().expect("durationMs");
    // To the microsecond: at most 3 decimals, and the message shows the same figure.
    assert_eq!((ms * 1000.0).round() / 1000.0, ms);
    assert!(ms.to_string().split('.').nth(1).is_none_or(|d| d.len() <= 3), "{ms}");
    assert!(ran.message.contains(&format!(" in {} ms;", figure::text(ms))), "{}", ran.message);
    // Percentages to 6 significant digits, scores to 15: the minimum was 7.935876572570651.
    let pct = ok(property(&registry, None, "algorithmResults.schemascope.pagerank.rankPct"));
    let min = pct["min"].as_f64().expect("min");
    assert_eq!(min, 7.93588);
    assert_eq!(pct["max"].as_f64(), Some(100.0));
    let rank = ok(property(&registry, None, "algorithmResults.schemascope.pagerank.rank"));
    let min = rank["min"].as_f64().expect("min");
    assert_eq!(min, figure::stat(min));
    assert_eq!(min, 0.002_634_309_263_332_73);
}

#[test]
fn describe_property_finds_algorithm_results_and_suggests_them_first() {
    let registry = demo();
    ok(run(&registry, "betweenness"));
    let score = "algorithmResults.schemascope.betweenness.score";
    assert_eq!(ok(property(&registry, None, score))["presentCount"], 160);
    let near = ok(property(&registry, None, "algorithmResults.schemascope.betweeness.score"));
    let suggested: Vec<&str> = near["didYouMean"]
        .as_array()
        .expect("suggestions")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(suggested.first(), Some(&score));
    // Only result paths, no `cpu`, `name` or `type` after them.
    assert!(suggested.iter().all(|s| s.starts_with("algorithmResults.")), "{suggested:?}");
    // A result of an algorithm that has not run says which algorithm writes it.
    let closeness = property(&registry, None, "algorithmResults.schemascope.closeness.score");
    assert!(
        closeness
            .message
            .contains("is written by run_algorithm `schemascope:closeness`, which has not run"),
        "{}",
        closeness.message
    );
}

#[test]
fn restored_algorithm_results_are_found_before_any_graph_tool_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    {
        let registry = demo();
        registry.graphs.set_session_file(&file).expect("session file");
        ok(run(&registry, "betweenness"));
    }
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("session file");
    // No graph tool has opened the session: the restored results are served all the same.
    let score = ok(property(&registry, None, "algorithmResults.schemascope.betweenness.score"));
    assert_eq!(score["exists"], true);
    assert_eq!(score["presentCount"], 160);
}

#[test]
fn a_property_of_another_collection_is_named_with_where_it_is() {
    let registry = demo();
    let latency = property(&registry, Some("nodes"), "latency");
    assert!(latency.success);
    assert_eq!(latency.data["exists"], false);
    assert_eq!(
        latency.data["elsewhere"],
        json!([{"collection": "edges", "path": "latency", "exact": true}])
    );
    assert!(
        latency.message.contains("'latency' is a property of the edges (collection `edges`)"),
        "{}",
        latency.message
    );
    let cpu = property(&registry, Some("edges"), "cpu");
    assert_eq!(
        cpu.data["elsewhere"],
        json!([{"collection": "nodes", "path": "cpu", "exact": true}])
    );
    // A near miss found only elsewhere is offered there, marked as not exact.
    let near = property(&registry, Some("nodes"), "latncy");
    assert_eq!(
        near.data["elsewhere"],
        json!([{"collection": "edges", "path": "latency", "exact": false}])
    );
    // A property the source has nowhere gets no such hint.
    assert!(property(&registry, Some("nodes"), "colour").data.get("elsewhere").is_none());
}

/// A documents file of `lines` written to a temporary directory, served as source `docs`.
fn served_docs(
    lines: impl Iterator<Item = String>,
) -> (tempfile::TempDir, std::path::PathBuf, schemascope_tools::Services) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("docs.ndjson");
    std::fs::write(&path, lines.collect::<Vec<_>>().join("\n")).expect("write");
    let registry = registry(&[&format!("docs={}", path.display())]);
    (dir, path, registry)
}

#[test]
fn the_path_limit_is_reported_by_describe_schema_and_describe_property() {
    let (_dir, _path, registry) =
        served_docs((0..12_000).map(|i| json!({"id": i, format!("k{i}"): 1}).to_string()));
    let params = || DescribeSchemaParams {
        source: Some("docs".into()),
        format: Some(SchemaFormat::Markdown),
        ..Default::default()
    };
    let described = describe_schema(&registry.sources, params());
    assert!(
        described.message.contains(
            "10000 properties profiled, and 2001 more not profiled: past the 10,000-path limit"
        ),
        "{}",
        described.message
    );
    let markdown = described.data["markdown"].as_str().expect("markdown");
    assert!(
        markdown.contains("- +2001 more properties not profiled: past the 10,000-path limit"),
        "{}",
        &markdown[markdown.len() - 300..]
    );
    assert_eq!(described.data["propertiesNotProfiled"], 2001);
    let past = describe_property(
        &registry,
        DescribePropertyParams {
            source: Some("docs".into()),
            property: "k11000".into(),
            ..Default::default()
        },
    );
    assert!(past.message.contains("not profiled: past the 10,000-path limit"), "{}", past.message);
    assert_eq!(past.data["profiled"], false);
    assert!(past.data.get("elsewhere").is_none());
}

#[test]
fn samples_say_when_a_value_is_cut_for_depth() {
    let deep = (0..30).fold(json!(1), |inner, _| json!({ "a": inner }));
    let (_dir, _path, registry) =
        served_docs([json!({"id": "deep", "v": deep}).to_string()].into_iter());
    let sampled = sample_data(
        &registry.sources,
        SampleDataParams { source: Some("docs".into()), ..Default::default() },
    );
    assert!(
        sampled.message.contains(
            "1 value nested more than 20 levels deep is shown as a `[depth limit: …]` marker"
        ),
        "{}",
        sampled.message
    );
    assert_eq!(sampled.data["sampling"]["docs"]["depthLimited"], 1);
}

#[test]
fn markdown_after_a_failed_reload_says_it_shows_the_previous_data() {
    let (_dir, path, registry) = served_docs([json!({"a": 1}).to_string()].into_iter());
    let markdown = |registry: &Services| {
        let params = DescribeSchemaParams {
            source: Some("docs".into()),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        };
        ok(describe_schema(&registry.sources, params))
    };
    assert!(!markdown(&registry)["markdown"].as_str().expect("markdown").contains("Previous data"));
    std::fs::remove_file(&path).expect("remove");
    assert!(registry.sources.reload("docs").is_err());
    let stale = markdown(&registry);
    let text = stale["markdown"].as_str().expect("markdown");
    assert!(text.contains("> **Previous data:** reload failed, previous data kept:"), "{text}");
    assert!(text.contains("This describes the data as last loaded"), "{text}");
    assert!(
        stale["reloadError"].as_str().is_some_and(|e| e.contains("previous data kept")),
        "{stale}"
    );
    let resource = schema_markdown(&registry.sources, "docs", None).expect("resource");
    assert!(resource.contains("**Previous data:**"), "{resource}");
}

#[test]
fn messages_fence_selectors_past_their_backticks() {
    let registry = demo();
    let none = find_nodes(
        &registry.graphs,
        FindElementsParams { source: infra(), selector: "cpu > `5`".into(), limit: None },
    );
    assert!(none.message.starts_with("No nodes match `` cpu > `5` ``."), "{}", none.message);
    let found = find_items(
        &registry.sources,
        FindItemsParams {
            source: infra(),
            selector: "cpu > `0.9`".into(),
            collection: Some("nodes".into()),
            ..Default::default()
        },
    );
    assert!(found.message.contains(" nodes match `` cpu > `0.9` ``."), "{}", found.message);
}
