//! Styles mapped to data (seed 003's example 5) on les_miserables as networkx writes it: "colour
//! nodes by their importance" is two calls, "colour by community" one more, and what is drawn,
//! described and explained agrees with networkx's figures.

use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok, registry};

/// les_miserables as `networkx.node_link_data` writes it: nodes of an `id` only, weighted
/// `links`, no `directed` flag; with networkx's weighted PageRank and Louvain figures.
fn les_miserables() -> (Services, Value, tempfile::TempDir) {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../graph/tests/data/les_miserables.json"
        ))
        .expect("fixture"),
    )
    .expect("json");
    let nodes: Vec<Value> =
        fixture["nodes"].as_array().expect("nodes").iter().map(|id| json!({"id": id})).collect();
    let links: Vec<Value> = fixture["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| json!({"weight": e[2], "source": e[0], "target": e[1]}))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("lesmis.json");
    std::fs::write(
        &path,
        json!({"multigraph": false, "graph": {}, "nodes": nodes, "links": links}).to_string(),
    )
    .expect("write");
    (registry(&[&format!("lesmis={}", path.display())]), fixture, dir)
}

fn color_by(selector: &str, style: Value) -> StyleElementsParams {
    StyleElementsParams {
        selector: selector.into(),
        style: serde_json::from_value(style).expect("style"),
        ..Default::default()
    }
}

fn computed(registry: &Services, id: &str) -> Value {
    ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { compute_for: Some(id.into()), ..Default::default() },
    ))
}

/// Every node's drawn colour and size, by id.
fn drawn(registry: &Services) -> Vec<(String, Value)> {
    let session = registry.graphs.session(None).expect("session");
    let scene = scene::scene(&session).expect("scene");
    scene["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            let style = &scene["nodeStyles"][n["s"].as_u64().expect("style index") as usize];
            (n["id"].as_str().expect("id").to_string(), style.clone())
        })
        .collect()
}

#[test]
fn colour_nodes_by_their_importance_is_two_calls() {
    let (registry, fixture, _dir) = les_miserables();
    // The edges' weights are loaded though the nodes carry only ids.
    let schema = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { collection: Some("edges".into()), ..Default::default() },
    ));
    let weight = &schema["collections"][0]["properties"][0];
    assert_eq!(
        (weight["path"].as_str(), weight["presentCount"].as_u64()),
        (Some("weight"), Some(254))
    );
    // Run without a weight, the answer says the edges' weight was left out.
    let unweighted = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() },
    );
    assert!(unweighted.success, "{}", unweighted.message);
    assert!(
        unweighted.message.contains("Unweighted: the edges' `weight` was not used"),
        "{}",
        unweighted.message
    );
    assert_eq!(unweighted.data["graphResults"]["weight"], Value::Null);
    assert_eq!(unweighted.data["graphResults"]["unusedWeight"], "weight");
    let weighted = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            algorithm_type: "pagerank".into(),
            options: json!({"weight": "weight"}),
            ..Default::default()
        },
    );
    assert!(weighted.message.contains("Weighted by `weight`"), "{}", weighted.message);
    assert_eq!(weighted.data["graphResults"]["weight"], "weight");

    // The second call: one layer coloured by the results, named by the algorithm.
    let styled = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        color_by(
            "",
            json!({"color_by": "pagerank", "size_by": {"property": "pagerank", "range": [1, 4]}}),
        ),
    );
    assert!(styled.success, "{}", styled.message);
    let ranks: Vec<f64> = serde_json::from_value(fixture["pagerank"].clone()).expect("ranks");
    let names: Vec<String> = serde_json::from_value(fixture["nodes"].clone()).expect("names");
    let (min, max) =
        ranks.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    let legend = &styled.data["mappings"][0];
    assert_eq!(legend["property"], "algorithmResults.schemascope.pagerank.rank");
    let domain: Vec<f64> = serde_json::from_value(legend["domain"].clone()).expect("domain");
    assert!(
        (domain[0] - min).abs() < 1e-9 && (domain[1] - max).abs() < 1e-9,
        "{domain:?} vs networkx {min}–{max}"
    );
    assert_eq!(legend["scale"], "log", "PageRank is skewed: {}", styled.message);
    assert!(styled.message.contains("log scale (chosen:"), "{}", styled.message);
    assert_eq!(
        (legend["stops"][0]["color"].as_str(), legend["stops"][4]["color"].as_str()),
        (Some("#440154"), Some("#fde725"))
    );
    assert_eq!(legend["withValue"], 77);
    // The most important character is drawn in the gradient's top colour at the largest size,
    // and its computed style says which value gave them.
    let top =
        names[ranks.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).expect("top").0].clone();
    let bottom = names
        [ranks.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).expect("bottom").0]
        .clone();
    let explained = computed(&registry, &top);
    assert_eq!(explained["computedStyle"]["texture"]["color"], "#fde725");
    assert_eq!(explained["computedStyle"]["shape"]["size"], json!(4.0));
    let mapped = &explained["contributingLayers"][1]["mapped"][0];
    assert!((mapped["value"].as_f64().expect("value") - max).abs() < 1e-9, "{mapped}");
    assert_eq!(
        (mapped["result"].as_str(), mapped["position"].as_f64()),
        (Some("#fde725"), Some(1.0))
    );
    assert_eq!(computed(&registry, &bottom)["computedStyle"]["texture"]["color"], "#440154");
    // What the page draws is what each node's computed style says, node by node.
    let drawn = drawn(&registry);
    assert_eq!(drawn.len(), 77);
    for (id, style) in &drawn {
        let c = computed(&registry, id);
        assert_eq!(style["color"], c["computedStyle"]["texture"]["color"], "{id}");
        assert_eq!(style["size"].as_f64(), c["computedStyle"]["shape"]["size"].as_f64(), "{id}");
    }
    let colours: std::collections::HashSet<String> =
        drawn.iter().map(|(_, s)| s["color"].to_string()).collect();
    assert!(colours.len() > 20, "a gradient, not a few colours: {}", colours.len());
    // describe_styles reports the mapping and its legend beside the layer.
    let described = ok(describe_styles(&registry.graphs, DescribeStylesParams::default()));
    assert_eq!(described["layers"][1]["mappings"][0]["scale"], "log");
    assert!(
        described["layers"][1]["summary"]
            .as_str()
            .expect("summary")
            .contains("Node color by `algorithmResults.schemascope.pagerank.rank`")
    );
    // Edges take mappings too: their width by their weight.
    let widths = find_and_style_edges(
        &registry.graphs,
        Caller::Ai,
        color_by(
            "",
            json!({"size_by": {"property": "weight", "scale": "linear", "range": [1, 8]}}),
        ),
    );
    assert!(widths.success, "{}", widths.message);
    assert_eq!(widths.data["mappings"][0]["stops"][2]["width"], json!(8.0));
    let session = registry.graphs.session(None).expect("session");
    let scene = scene::scene(&session).expect("scene");
    let weight_of: std::collections::HashMap<(String, String), f64> = fixture["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                (
                    e[0].as_str().unwrap_or_default().to_string(),
                    e[1].as_str().unwrap_or_default().to_string(),
                ),
                e[2].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect();
    let (lo, hi) =
        weight_of.values().fold((f64::MAX, f64::MIN), |(a, b), w| (a.min(*w), b.max(*w)));
    for edge in scene["edges"].as_array().expect("edges") {
        let a = scene["nodes"][edge["a"].as_u64().expect("a") as usize]["id"]
            .as_str()
            .expect("id")
            .to_string();
        let b = scene["nodes"][edge["b"].as_u64().expect("b") as usize]["id"]
            .as_str()
            .expect("id")
            .to_string();
        let weight = weight_of
            .get(&(a.clone(), b.clone()))
            .or_else(|| weight_of.get(&(b, a)))
            .expect("an edge of the file");
        let want = ((1.0 + (weight - lo) / (hi - lo) * 7.0) * 1000.0).round() / 1000.0;
        let drawn = scene["edgeStyles"][edge["s"].as_u64().expect("s") as usize]["width"].as_f64();
        assert_eq!(drawn, Some(want), "edge of weight {weight}");
    }
    // Run again unweighted, the layer follows the new results: its domain is theirs.
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() },
    ));
    let rank = ok(describe_property(
        &registry,
        DescribePropertyParams {
            property: "algorithmResults.schemascope.pagerank.rank".into(),
            ..Default::default()
        },
    ));
    let described = ok(describe_styles(&registry.graphs, DescribeStylesParams::default()));
    let now = &described["layers"][1]["mappings"][0]["domain"];
    assert_eq!((now[0].as_f64(), now[1].as_f64()), (rank["min"].as_f64(), rank["max"].as_f64()));
    assert_ne!(now[1].as_f64(), Some(max), "the unweighted maximum differs from the weighted one");
}

#[test]
fn colour_by_community_is_one_call_with_a_legend_entry_per_community() {
    let (registry, _fixture, _dir) = les_miserables();
    let louvain = ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            algorithm_type: "louvain".into(),
            options: json!({"weight": "weight", "seed": 7}),
            ..Default::default()
        },
    ));
    let communities = louvain["graphResults"]["communityCount"].as_u64().expect("count");
    let styled = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        color_by("", json!({"color_by": "louvain"})),
    );
    assert!(styled.success, "{}", styled.message);
    let legend = &styled.data["mappings"][0];
    assert_eq!(legend["scale"], "categorical", "{}", styled.message);
    let entries = legend["entries"].as_array().expect("entries");
    let others = legend["other"]["values"].as_u64().unwrap_or(0);
    assert_eq!(entries.len() as u64 + others, communities);
    let counted: u64 = entries.iter().map(|e| e["count"].as_u64().expect("count")).sum::<u64>()
        + legend["other"]["count"].as_u64().unwrap_or(0);
    assert_eq!(counted, 77);
    // Most frequent first, and each node drawn in its community's colour.
    let counts: Vec<u64> = entries.iter().map(|e| e["count"].as_u64().expect("count")).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    let colour_of: std::collections::HashMap<String, String> = entries
        .iter()
        .map(|e| (e["value"].to_string(), e["color"].as_str().expect("colour").to_string()))
        .collect();
    let session = registry.graphs.session(None).expect("session");
    let data = session.data();
    let nodes = data.collection(schemascope_graph_session::style::ElementKind::Node);
    let community: std::collections::HashMap<String, String> = nodes
        .items()
        .map(|item| {
            let value = item.value().expect("value");
            (
                item.id.to_string(),
                value["algorithmResults"]["schemascope"]["louvain"]["communityId"].to_string(),
            )
        })
        .collect();
    for (id, style) in drawn(&registry) {
        let want = colour_of.get(&community[&id]).map_or("#7f7f7f", String::as_str);
        assert_eq!(style["color"], want, "{id}");
    }
    // The scene's legend lists the layers in order, with the mapping's entries.
    let scene = scene::scene(&session).expect("scene");
    let layers: Vec<&str> = scene["legend"]
        .as_array()
        .expect("legend")
        .iter()
        .map(|e| e["layer"].as_str().expect("layer"))
        .collect();
    assert_eq!(layers, ["default", "default", styled.data["layerName"].as_str().expect("name")]);
    assert_eq!(scene["legend"][2]["mappings"][0]["entries"], legend["entries"]);
}

#[test]
fn a_mapped_layer_survives_a_restart() {
    let (registry, _fixture, dir) = les_miserables();
    let file = dir.path().join("sessions.sqlite");
    registry.graphs.set_session_file(&file).expect("session file");
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    // A run that could take a weight records which it used; the restart keeps it.
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() },
    ));
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            style: serde_json::from_value(json!({"color_by": {"property": "degree", "scale": "linear", "palette": "magma"}, "color": "red"})).expect("style"),
            layer_name: Some("by-degree".into()),
            ..Default::default()
        },
    ));
    let before = drawn(&registry);
    drop(registry);
    let registry =
        crate::common::registry(&[&format!("lesmis={}", dir.path().join("lesmis.json").display())]);
    registry.graphs.set_session_file(&file).expect("session file");
    let described = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { layer_name: Some("by-degree".into()), ..Default::default() },
    ));
    assert_eq!(described["layers"][0]["mappings"][0]["palette"], "magma");
    assert_eq!(drawn(&registry), before, "drawn the same after the restart");
    let session = registry.graphs.session(None).expect("session");
    assert!(session.restore_notes().is_empty(), "{:?}", session.restore_notes());
    let history =
        ok(list_algorithms(&registry.graphs, ListAlgorithmsParams::default()))["history"].clone();
    assert_eq!(history.as_array().map(Vec::len), Some(2));
    assert_eq!(history[1]["graphResults"]["unusedWeight"], "weight");
}

#[test]
fn bad_mappings_are_refused_with_what_to_do() {
    let registry = demo();
    let refused = |style: Value| {
        let result = find_and_style_nodes(
            &registry.graphs,
            Caller::Ai,
            StyleElementsParams {
                source: Some("infrastructure".into()),
                style: serde_json::from_value(style).expect("style"),
                ..Default::default()
            },
        );
        assert!(!result.success, "{}", result.message);
        result.message
    };
    let unknown = refused(json!({"color_by": "cpux"}));
    assert!(
        unknown.contains("no property `cpux`") && unknown.contains("Did you mean `cpu`?"),
        "{unknown}"
    );
    let text = refused(json!({"color_by": {"property": "type", "scale": "linear"}}));
    assert!(text.contains("holds no numbers") && text.contains("categorical"), "{text}");
    let size = refused(json!({"size_by": "type"}));
    assert!(size.contains("a size needs numbers"), "{size}");
    let early = refused(json!({"color_by": "pagerank"}));
    assert!(early.contains("run_algorithm `pagerank` first"), "{early}");
    let palette = refused(json!({"color_by": {"property": "cpu", "palette": "rainbow"}}));
    assert!(palette.contains("viridis"), "{palette}");
    assert_eq!(
        ok(describe_styles(
            &registry.graphs,
            DescribeStylesParams { source: Some("infrastructure".into()), ..Default::default() }
        ))["layerCount"],
        1,
        "nothing was added"
    );
    // Text gets categories when no scale is asked.
    let types = ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            source: Some("infrastructure".into()),
            style: serde_json::from_value(json!({"color_by": "type"})).expect("style"),
            ..Default::default()
        },
    ));
    assert_eq!(types["mappings"][0]["scale"], "categorical");
}
