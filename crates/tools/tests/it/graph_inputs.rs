//! What a graph file holds that an algorithm or a style cannot use as given is refused or said,
//! never used silently: a multigraph's repeated edges, a weight that is text or negative, a
//! domain a scale cannot take. And the legend names every mark a layer makes.

use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{ok, registry};

/// A node-link file as networkx writes it, served alone.
fn served(nodes: &[&str], links: Value) -> (Services, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.json");
    // Every node has a group; only the first a score.
    let nodes: Vec<Value> = nodes
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let mut node = json!({"id": id, "group": format!("g{}", i % 2)});
            if i == 0 {
                node["score"] = json!(3);
            }
            node
        })
        .collect();
    std::fs::write(
        &path,
        json!({"directed": true, "multigraph": true, "graph": {}, "nodes": nodes, "links": links})
            .to_string(),
    )
    .expect("write");
    (registry(&[&format!("g={}", path.display())]), dir)
}

fn run(registry: &Services, algorithm: &str, options: Value) -> ToolResult {
    run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: algorithm.into(), options, ..Default::default() },
    )
}

fn edge_column(registry: &Services, path: &str) -> Vec<Value> {
    let data = ok(find_edges(
        &registry.graphs,
        FindElementsParams { selector: "".into(), limit: Some(50), ..Default::default() },
    ));
    let pointer = format!("/data/{}", path.replace('.', "/"));
    data["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|e| e.pointer(&pointer).cloned().unwrap_or(Value::Null))
        .collect()
}

#[test]
fn a_multigraphs_repeated_edges_are_one_edge_and_the_answer_says_so() {
    // networkx.MultiDiGraph: a->b twice (weights 1 then 5), b->c.
    let (registry, _dir) = served(
        &["a", "b", "c"],
        json!([{"source": "a", "target": "b", "key": 0, "weight": 1}, {"source": "a", "target": "b", "key": 1, "weight": 5}, {"source": "b", "target": "c", "key": 0, "weight": 2}]),
    );
    let path =
        run(&registry, "shortestPath", json!({"source": "a", "target": "c", "weight": "weight"}));
    assert!(path.success, "{}", path.message);
    assert!(
        path.message.contains("1 edge(s) repeat the ends of an earlier edge"),
        "{}",
        path.message
    );
    assert_eq!(path.data["graphResults"]["parallelEdges"], 1);
    // The last a->b (weight 5) is the edge used, and the only one marked.
    assert_eq!(path.data["graphResults"]["pathLength"], json!(7.0), "{}", path.data);
    assert_eq!(
        edge_column(&registry, "algorithmResults.schemascope.shortestPath.isInPath"),
        [json!(false), json!(true), json!(true)]
    );
    let tree = run(&registry, "minimumSpanningTree", json!({"weight": "weight"}));
    assert!(tree.success, "{}", tree.message);
    let marked = edge_column(&registry, "algorithmResults.schemascope.minimumSpanningTree.inMST");
    assert_eq!(
        marked.iter().filter(|m| **m == json!(true)).count(),
        2,
        "a tree of 3 nodes has 2 edges: {marked:?}"
    );
}

#[test]
fn a_weight_that_is_text_or_negative_is_refused_and_a_misspelt_one_gets_a_suggestion() {
    let (registry, _dir) = served(
        &["a", "b", "c"],
        json!([{"source": "a", "target": "b", "kind": "x", "w": -1, "weight": 1}, {"source": "b", "target": "c", "kind": "y", "w": 2.5, "weight": 2}]),
    );
    let text = run(&registry, "pagerank", json!({"weight": "kind"}));
    assert!(!text.success);
    assert!(
        text.message.contains("2 of the 2 edges") && text.message.contains("not a number"),
        "{}",
        text.message
    );
    for algorithm in ["closeness", "betweenness", "pagerank", "louvain"] {
        let negative = run(&registry, algorithm, json!({"weight": "w"}));
        assert!(!negative.success, "{algorithm}");
        assert!(
            negative.message.contains("weights of 0 or more") && negative.message.contains("-1"),
            "{}",
            negative.message
        );
    }
    // A spanning tree takes negative weights.
    assert!(run(&registry, "minimumSpanningTree", json!({"weight": "w"})).success);
    let typo = run(&registry, "pagerank", json!({"weight": "wieght"}));
    assert!(typo.message.contains("Did you mean `weight`?"), "{}", typo.message);
}

#[test]
fn a_mapping_refuses_what_it_would_silently_ignore() {
    let (registry, _dir) = served(
        &["a", "b", "c"],
        json!([{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]),
    );
    ok(run(&registry, "pagerank", json!({})));
    let style = |style: Value| {
        find_and_style_nodes(
            &registry.graphs,
            Caller::Ai,
            StyleElementsParams {
                selector: "*".into(),
                style: serde_json::from_value(style).expect("style"),
                ..Default::default()
            },
        )
    };
    // A fixed colour beside the mapping is what the nodes without a value take, and the answer
    // says so (not that they keep lower layers' style).
    let fallback = style(json!({"color_by": "score", "color": "red"}));
    assert!(fallback.success, "{}", fallback.message);
    assert!(
        fallback
            .message
            .contains("2 node(s) have no value there and take this layer's color #ff0000"),
        "{}",
        fallback.message
    );
    let misspelt = style(json!({"color_by": "pagernk"}));
    assert!(misspelt.message.contains("Did you mean `pagerank`?"), "{}", misspelt.message);
    let huge = style(
        json!({"color_by": {"property": "pagerank", "scale": "log", "domain": [-1e300, 1e300]}}),
    );
    assert!(!huge.success && huge.message.len() < 400, "numbers are shown short: {}", huge.message);
    for (given, says) in [
        (
            json!({"color_by": {"property": "pagerank", "scale": "quantile", "domain": [0, 1]}}),
            "takes no domain",
        ),
        (json!({"color_by": {"property": "group", "domain": [0, 1]}}), "which take no domain"),
    ] {
        let refused = style(given.clone());
        assert!(!refused.success, "{given}");
        assert!(refused.message.contains(says), "{given}: {}", refused.message);
    }
}

#[test]
fn the_legend_names_every_mark_a_layer_makes() {
    let (registry, _dir) = served(&["a", "b"], json!([{"source": "a", "target": "b"}]));
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::User,
        StyleElementsParams {
            selector: "*".into(),
            style: serde_json::from_value(
                json!({"outline": "red", "glow": "yellow", "shape": "box"}),
            )
            .expect("style"),
            layer_name: Some("ringed".into()),
            ..Default::default()
        },
    ));
    let session = registry.graphs.session(None).expect("session");
    let scene = scene::scene(&session).expect("scene");
    let entry = scene["legend"]
        .as_array()
        .expect("legend")
        .iter()
        .find(|e| e["layer"] == "ringed")
        .cloned()
        .expect("ringed");
    assert_eq!(
        entry["look"],
        json!(["shape box", "glow #ffff00", "outline #ff0000 (width 1.0)"]),
        "{entry}"
    );
}
