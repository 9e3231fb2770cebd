//! The graph session tools on the demo graph: every example of seed 003, styling by algorithm
//! results, persistence across restarts, and algorithms through the session against networkx.

mod common;

use std::sync::Arc;

use common::{demo, ok, registry};
use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

fn style(selector: &str, style: Value, layer: Option<&str>) -> StyleElementsParams {
    StyleElementsParams {
        source: infra(),
        selector: selector.into(),
        style: serde_json::from_value(style).expect("style"),
        layer_name: layer.map(str::to_string),
        ..Default::default()
    }
}

fn layer_names(registry: &Registry) -> Vec<String> {
    let data = ok(describe_styles(registry, DescribeStylesParams { source: infra(), ..Default::default() }));
    data["layers"].as_array().expect("layers").iter().map(|l| l["name"].as_str().expect("name").to_string()).collect()
}

#[test]
fn remove_the_red_highlighting() {
    let registry = demo();
    let styled = find_and_style_nodes(&registry, style("type == 'server'", json!({"color": "red"}), Some("highlight-servers")));
    assert!(styled.success, "{}", styled.message);
    assert_eq!(styled.affected_nodes.as_ref().map(Vec::len), Some(styled.data["matchedCount"].as_u64().unwrap() as usize));
    ok(find_and_style_edges(
        &registry,
        StyleElementsParams {
            source: infra(),
            selector: "latency > `100`".into(),
            style: serde_json::from_value(json!({"color": "gray", "width": 2})).unwrap(),
            ..Default::default()
        },
    ));
    // The LLM looks for the red layer, then removes it by name.
    let described = ok(describe_styles(&registry, DescribeStylesParams { source: infra(), ..Default::default() }));
    assert_eq!(described["layerCount"], 3);
    let red = described["layers"].as_array().unwrap().iter().find(|l| l["summary"].as_str().unwrap().contains("#ff0000")).expect("a red layer");
    assert_eq!(
        (red["name"].as_str(), red["source"].as_str(), red["nodeSelector"].as_str()),
        (Some("highlight-servers"), Some("ai"), Some("type == 'server'"))
    );
    let unknown = clear_styles(&registry, ClearStylesParams { source: infra(), layer_name: Some("red-highlight".into()) });
    assert!(!unknown.success);
    assert!(unknown.message.contains("highlight-servers"), "an unknown name lists the layers: {}", unknown.message);
    let cleared = ok(clear_styles(&registry, ClearStylesParams { source: infra(), layer_name: Some("highlight-servers".into()) }));
    assert_eq!(cleared["removed"], json!(["highlight-servers"]));
    let names = layer_names(&registry);
    assert_eq!(names.len(), 2);
    assert!(names[1].starts_with("ai-edge-style-"), "{names:?}");
    // Without a name every AI layer goes; the default stays.
    ok(clear_styles(&registry, ClearStylesParams { source: infra(), layer_name: None }));
    assert_eq!(layer_names(&registry), ["default"]);
}

#[test]
fn why_is_a_node_glowing() {
    let registry = demo();
    ok(find_and_style_nodes(&registry, style("type == 'database'", json!({"color": "blue"}), Some("databases"))));
    ok(find_and_style_nodes(&registry, style("cpu > `0.8`", json!({"glow": "#00ff00", "glow_strength": 2}), Some("critical-alerts"))));
    let hot = ok(find_nodes(&registry, FindElementsParams { source: infra(), selector: "type == 'database' && cpu > `0.8`".into(), limit: None }));
    let id = hot["ids"][0].as_str().expect("a busy database in the demo data").to_string();
    let computed = ok(describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some(id.clone()), ..Default::default() }));
    assert_eq!(computed["elementId"], id.as_str());
    assert_eq!(computed["elementType"], "node");
    assert_eq!(computed["computedStyle"]["effect"]["glow"], json!({"color": "#00ff00", "strength": 2.0}));
    assert_eq!(computed["computedStyle"]["texture"]["color"], "#0000ff");
    let contributions: Vec<(String, Vec<String>)> = computed["contributingLayers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), serde_json::from_value(c["contributed"].clone()).unwrap()))
        .collect();
    assert_eq!(contributions[1], ("databases".to_string(), vec!["texture.color".to_string()]));
    assert_eq!(contributions[2], ("critical-alerts".to_string(), vec!["effect.glow".to_string()]));
    // A node no layer matches gets only the default layer.
    let calm = ok(find_nodes(&registry, FindElementsParams { source: infra(), selector: "type == 'gateway' && cpu < `0.5`".into(), limit: None }));
    let calm_id = calm["ids"][0].as_str().unwrap().to_string();
    let plain = ok(describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some(calm_id), ..Default::default() }));
    assert_eq!(plain["contributingLayers"].as_array().unwrap().len(), 1);
    let missing = describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some("databse-012".into()), ..Default::default() });
    assert!(!missing.success && missing.message.contains("database-012"), "{}", missing.message);
}

#[test]
fn make_the_selected_nodes_bigger() {
    let registry = demo();
    let empty = describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: false });
    assert_eq!(empty.message, "Nothing is currently selected.");
    assert_eq!(empty.data["hasSelection"], false);
    let ids = vec!["server-001".to_string(), "server-007".to_string(), "e-0001".to_string()];
    let selected = select(&registry, SelectParams { source: infra(), ids: ids.clone(), ..Default::default() });
    assert!(selected.success, "{}", selected.message);
    let described = ok(describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: false }));
    assert_eq!(described["nodeIds"], json!(["server-001", "server-007"]));
    assert_eq!(described["edgeIds"], json!(["e-0001"]));
    let with_data = ok(describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: true }));
    assert_eq!(with_data["nodes"][0]["data"]["type"], "server");
    assert_eq!(with_data["edges"][0]["source"], "server-043");
    // The LLM styles the selected ids.
    let node_ids: Vec<String> = serde_json::from_value(described["nodeIds"].clone()).unwrap();
    let bigger = find_and_style_nodes(
        &registry,
        StyleElementsParams { ids: Some(node_ids.clone()), ..style("", json!({"size": 2}), Some("selected-bigger")) },
    );
    assert!(bigger.success, "{}", bigger.message);
    assert_eq!(bigger.affected_nodes, Some(node_ids));
    let computed =
        ok(describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some("server-007".into()), ..Default::default() }));
    assert_eq!(computed["computedStyle"]["shape"]["size"], 2.0);
    let other =
        ok(describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some("server-002".into()), ..Default::default() }));
    assert_eq!(other["computedStyle"]["shape"]["size"], 1, "a node outside the ids keeps the default size");
    // Selection modes and errors.
    ok(select(
        &registry,
        SelectParams {
            source: infra(),
            selector: Some("type == 'database'".into()),
            mode: schemascope_session::selection::SelectMode::Add,
            ..Default::default()
        },
    ));
    let after = ok(describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: false }));
    assert_eq!(after["nodeCount"], 22);
    let unknown = select(&registry, SelectParams { source: infra(), ids: vec!["server-0001".into()], ..Default::default() });
    assert!(!unknown.success && unknown.message.contains("server-001"), "{}", unknown.message);
    ok(select(&registry, SelectParams { source: infra(), mode: schemascope_session::selection::SelectMode::Clear, ..Default::default() }));
    assert_eq!(ok(describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: false }))["hasSelection"], false);
}

#[test]
fn switching_to_the_mode_it_is_already_in_changes_nothing() {
    let registry = demo();
    let view = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::View }));
    assert_eq!(view["mode"], "3D");
    assert_eq!(view["camera"]["activePreset"], "fitToGraph");
    let same = set_dimension(&registry, SetDimensionParams { source: infra(), dimension: schemascope_session::view::Dimension::ThreeD });
    assert!(same.success);
    assert_eq!(same.data["changed"], false);
    assert!(same.message.contains("already in 3D"), "{}", same.message);
    let flat = ok(set_dimension(&registry, SetDimensionParams { source: infra(), dimension: schemascope_session::view::Dimension::TwoD }));
    assert_eq!(flat["changed"], true);
    let view = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::View }));
    assert_eq!(view["mode"], "2D");
    let layout = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::Layout }));
    assert_eq!(layout["type"], "forceDirected");
    assert!(layout["availableLayouts"].as_array().unwrap().contains(&json!("circular")));
    let summary = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::Summary }));
    assert_eq!((summary["nodeCount"].as_u64(), summary["edgeCount"].as_u64()), (Some(160), Some(240)));
}

#[test]
fn color_nodes_by_importance() {
    let registry = demo();
    let before = ok(list_algorithms(&registry, ListAlgorithmsParams { source: infra() }));
    assert_eq!(before["history"], json!([]));
    assert_eq!(before["availableDataProperties"], json!({"nodes": [], "edges": []}));
    // Styling by a property that does not exist yet matches nothing: no layer, and a hint.
    let too_early = find_and_style_nodes(&registry, style("algorithmResults.schemascope.pagerank.rankPct > `50`", json!({"color": "red"}), None));
    assert!(!too_early.success);
    assert!(too_early.message.contains("no style layer was added"), "{}", too_early.message);
    assert_eq!(layer_names(&registry), ["default"]);
    let run = run_algorithm(&registry, RunAlgorithmParams { source: infra(), algorithm_type: "pagerank".into(), ..Default::default() });
    assert!(run.success, "{}", run.message);
    assert_eq!(run.affected_nodes.as_ref().map(Vec::len), Some(160));
    // describe_property and describe_schema see the new properties.
    let rank = ok(describe_property(
        &registry,
        DescribePropertyParams { source: infra(), property: "algorithmResults.schemascope.pagerank.rank".into(), ..Default::default() },
    ));
    assert_eq!(rank["dataType"], "number");
    assert_eq!(rank["presentCount"], 160);
    let sum: f64 = ok(find_nodes(
        &registry,
        FindElementsParams { source: infra(), selector: "algorithmResults.schemascope.pagerank.rank > `0`".into(), limit: Some(0) },
    ))["count"]
        .as_f64()
        .unwrap();
    assert_eq!(sum, 160.0);
    let schema = ok(describe_schema(&registry, DescribeSchemaParams { source: infra(), collection: Some("nodes".into()), ..Default::default() }));
    let paths: Vec<&str> = schema["collections"][0]["properties"].as_array().unwrap().iter().filter_map(|p| p["path"].as_str()).collect();
    assert!(paths.contains(&"algorithmResults.schemascope.pagerank.rankPct"), "{paths:?}");
    let important = ok(find_nodes(
        &registry,
        FindElementsParams { source: infra(), selector: "algorithmResults.schemascope.pagerank.rankPct > `50`".into(), limit: None },
    ));
    let count = important["count"].as_u64().unwrap();
    assert!(count > 0 && count < 160, "{count}");
    let styled = ok(find_and_style_nodes(
        &registry,
        style("algorithmResults.schemascope.pagerank.rankPct > `50`", json!({"color": "crimson", "size": 2}), Some("important")),
    ));
    assert_eq!(styled["matchedCount"].as_u64(), Some(count));
    let after = ok(list_algorithms(&registry, ListAlgorithmsParams { source: infra() }));
    assert_eq!(after["history"][0]["algorithm"], "schemascope:pagerank");
    assert_eq!(
        after["availableDataProperties"]["nodes"],
        json!(["algorithmResults.schemascope.pagerank.rank", "algorithmResults.schemascope.pagerank.rankPct"])
    );
    // Unknown algorithms and options are errors that list what exists.
    let wrong = run_algorithm(&registry, RunAlgorithmParams { source: infra(), algorithm_type: "pagerang".into(), ..Default::default() });
    assert!(!wrong.success && wrong.message.contains("Did you mean `pagerank`?"), "{}", wrong.message);
    let option = run_algorithm(
        &registry,
        RunAlgorithmParams { source: infra(), algorithm_type: "degree".into(), options: json!({"weight": "latency"}), ..Default::default() },
    );
    assert!(!option.success && option.message.contains("its options: directed"), "{}", option.message);
}

#[test]
fn nothing_matching_is_never_a_silent_success_and_bad_selectors_name_the_position() {
    let registry = demo();
    let none = find_and_style_edges(
        &registry,
        StyleElementsParams {
            source: infra(),
            selector: "latency > `100000`".into(),
            style: serde_json::from_value(json!({"color": "red"})).unwrap(),
            ..Default::default()
        },
    );
    assert!(!none.success);
    assert_eq!(none.data["matchedCount"], 0);
    assert_eq!(layer_names(&registry), ["default"]);
    let typo = find_nodes(&registry, FindElementsParams { source: infra(), selector: "tpye == 'server'".into(), limit: None });
    assert!(typo.success);
    assert!(typo.message.contains("Did you mean `type`?"), "{}", typo.message);
    let broken = find_and_style_nodes(&registry, style("type == 'server", json!({"color": "red"}), None));
    assert!(!broken.success);
    assert_eq!(broken.data["error"], "invalid_selector");
    assert!(broken.data["column"].as_u64().is_some());
    let bad_colour = find_and_style_nodes(&registry, style("type == 'server'", json!({"color": "reddish"}), None));
    assert!(!bad_colour.success && bad_colour.message.contains("reddish"), "{}", bad_colour.message);
}

#[test]
fn layout_camera_and_zoom() {
    let registry = demo();
    let circular = ok(set_layout(
        &registry,
        SetLayoutParams { source: infra(), layout_type: schemascope_session::view::LayoutType::Circular, options: json!({"radius": 100}) },
    ));
    assert_eq!(circular["settled"], true);
    let layout = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::Layout }));
    assert_eq!((layout["type"].as_str(), layout["options"]["radius"].as_i64()), (Some("circular"), Some(100)));
    let bad = set_layout(
        &registry,
        SetLayoutParams { source: infra(), layout_type: schemascope_session::view::LayoutType::Grid, options: json!({"radius": 3}) },
    );
    assert!(!bad.success && bad.message.contains("spacing"), "{}", bad.message);
    assert_eq!(
        ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::CurrentLayout }))["currentLayout"],
        "circular",
        "a refused layout changes nothing"
    );
    let side = ok(set_camera(
        &registry,
        SetCameraParams { source: infra(), preset: Some(schemascope_session::view::CameraPreset::SideView), ..Default::default() },
    ));
    assert_eq!(side["activePreset"], "sideView");
    assert!(side["position"]["x"].as_f64().unwrap() > 100.0, "{side}");
    let zoomed = zoom_to_nodes(&registry, ZoomToNodesParams { source: infra(), ids: vec!["database-012".into()], selector: None });
    assert!(zoomed.success);
    assert!(zoomed.data["distance"].as_f64().unwrap() < side["distance"].as_f64().unwrap());
    let view = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::View }));
    assert_eq!(view["camera"]["activePreset"], Value::Null);
    let fixed =
        set_layout(&registry, SetLayoutParams { source: infra(), layout_type: schemascope_session::view::LayoutType::Fixed, options: json!({}) });
    assert!(!fixed.success && fixed.message.contains("no node has numeric `x`"), "{}", fixed.message);
}

#[test]
fn the_session_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    {
        let registry = demo();
        registry.set_session_file(&file).expect("session file");
        ok(find_and_style_nodes(&registry, style("type == 'database'", json!({"color": "red"}), Some("db-red"))));
        ok(select(&registry, SelectParams { source: infra(), ids: vec!["server-001".into()], ..Default::default() }));
        ok(set_dimension(&registry, SetDimensionParams { source: infra(), dimension: schemascope_session::view::Dimension::TwoD }));
        ok(run_algorithm(&registry, RunAlgorithmParams { source: infra(), algorithm_type: "degree".into(), ..Default::default() }));
        ok(set_layout(&registry, SetLayoutParams { source: infra(), layout_type: schemascope_session::view::LayoutType::Grid, options: json!({}) }));
    }
    let registry = demo();
    registry.set_session_file(&file).expect("session file");
    assert_eq!(layer_names(&registry), ["default", "db-red"]);
    assert_eq!(ok(describe_selection(&registry, DescribeSelectionParams { source: infra(), include_data: false }))["nodeIds"], json!(["server-001"]));
    let summary = ok(query_graph(&registry, QueryGraphParams { source: infra(), query: GraphQuery::Summary }));
    assert_eq!((summary["mode"].as_str(), summary["currentLayout"].as_str()), (Some("2D"), Some("grid")));
    // Algorithm results are back in the data.
    let degree = ok(describe_property(
        &registry,
        DescribePropertyParams { source: infra(), property: "algorithmResults.schemascope.degree.degree".into(), ..Default::default() },
    ));
    assert_eq!(degree["presentCount"], 160);
    assert_eq!(ok(list_algorithms(&registry, ListAlgorithmsParams { source: infra() }))["history"][0]["type"], "degree");
}

#[test]
fn a_reloaded_graph_keeps_its_algorithm_results_and_relayouts_new_nodes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.json");
    std::fs::write(&path, r#"{"nodes":[{"id":"a","data":{}},{"id":"b","data":{}}],"edges":[{"source":"a","target":"b","data":{}}]}"#).unwrap();
    let registry = registry(&[&format!("g={}", path.display())]);
    ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() }));
    let events = registry.graph_session(None).expect("session").subscribe();
    std::fs::write(
        &path,
        r#"{"nodes":[{"id":"a","data":{}},{"id":"b","data":{}},{"id":"c","data":{"new":true}}],"edges":[{"source":"a","target":"b","data":{}}]}"#,
    )
    .unwrap();
    registry.reload("g").expect("reload");
    let old =
        ok(find_nodes(&registry, FindElementsParams { selector: "algorithmResults.schemascope.degree.degree == `1`".into(), ..Default::default() }));
    assert_eq!(old["ids"], json!(["a", "b"]));
    let new = ok(find_nodes(&registry, FindElementsParams { selector: "new".into(), ..Default::default() }));
    assert_eq!(new["ids"], json!(["c"]));
    let session = registry.graph_session(None).expect("session");
    assert_eq!(session.state().positions.ids, ["a", "b", "c"], "the new node was laid out");
    let mut events = events;
    let event = events.try_recv().expect("a change event");
    assert!(event.changed.contains(&"data"), "{event:?}");
}

/// Loads a networkx fixture (crates/graph/tests/data) as a graph source.
fn fixture_registry(name: &str) -> (Arc<Registry>, Value, tempfile::TempDir) {
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/../graph/tests/data/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
    let nodes: Vec<Value> = fixture["nodes"].as_array().unwrap().iter().map(|id| json!({"id": id, "data": {}})).collect();
    let edges: Vec<Value> =
        fixture["edges"].as_array().unwrap().iter().map(|e| json!({"source": e[0], "target": e[1], "data": {"weight": e[2]}})).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.json"));
    std::fs::write(&path, json!({"nodes": nodes, "edges": edges}).to_string()).unwrap();
    (registry(&[&format!("{name}={}", path.display())]), fixture, dir)
}

fn node_values(registry: &Registry, algorithm: &str, name: &str) -> Vec<f64> {
    let session = registry.graph_session(None).unwrap();
    let data = session.data();
    let nodes = data.collection(schemascope_session::style::ElementKind::Node);
    nodes.items().map(|item| item.value().unwrap()["algorithmResults"]["schemascope"][algorithm][name].as_f64().unwrap_or(f64::NAN)).collect()
}

#[test]
fn algorithms_through_the_session_match_networkx() {
    for name in ["karate", "les_miserables"] {
        let (registry, expected, _dir) = fixture_registry(name);
        let close = |got: &[f64], want: &Value, what: &str| {
            let want: Vec<f64> = serde_json::from_value(want.clone()).unwrap();
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() < 1e-6, "{name} {what} node {i}: {g} vs networkx {w}");
            }
        };
        ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() }));
        close(&node_values(&registry, "degree", "degree"), &expected["degree"], "degree");
        ok(run_algorithm(
            &registry,
            RunAlgorithmParams { algorithm_type: "pagerank".into(), options: json!({"weight": "weight"}), ..Default::default() },
        ));
        close(&node_values(&registry, "pagerank", "rank"), &expected["pagerank"], "pagerank");
        ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "betweenness".into(), ..Default::default() }));
        close(&node_values(&registry, "betweenness", "score"), &expected["betweenness"], "betweenness");
        ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "closeness".into(), ..Default::default() }));
        close(&node_values(&registry, "closeness", "score"), &expected["closeness"], "closeness");
        let components = ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "components".into(), ..Default::default() }));
        assert_eq!(components["graphResults"]["componentCount"].as_u64(), Some(expected["components"].as_array().unwrap().len() as u64));
        let louvain = ok(run_algorithm(
            &registry,
            RunAlgorithmParams { algorithm_type: "louvain".into(), options: json!({"weight": "weight"}), ..Default::default() },
        ));
        let modularity = louvain["graphResults"]["modularity"].as_f64().unwrap();
        let range: Vec<f64> = serde_json::from_value(expected["louvain_modularity_range"].clone()).unwrap();
        assert!(modularity >= range[0] - 0.02 && modularity <= range[1] + 0.02, "{name} modularity {modularity} vs networkx {range:?}");
        let path = ok(run_algorithm(
            &registry,
            RunAlgorithmParams {
                algorithm_type: "shortestPath".into(),
                options: json!({"source": expected["path_source"], "target": expected["path_target"], "weight": "weight"}),
                ..Default::default()
            },
        ));
        assert_eq!(path["graphResults"]["path"], expected["path"], "{name} shortest path");
        let mst = ok(run_algorithm(
            &registry,
            RunAlgorithmParams { algorithm_type: "minimumSpanningTree".into(), options: json!({"weight": "weight"}), ..Default::default() },
        ));
        assert_eq!(mst["graphResults"]["totalWeight"].as_f64(), expected["mst_weight"].as_f64(), "{name} MST weight");
        let on_tree = ok(find_edges(
            &registry,
            FindElementsParams { selector: "algorithmResults.schemascope.minimumSpanningTree.inMST".into(), ..Default::default() },
        ));
        let nodes = expected["nodes"].as_array().unwrap().len() as u64;
        assert_eq!(
            on_tree["count"].as_u64(),
            Some(nodes - expected["components"].as_array().unwrap().len() as u64),
            "{name}: a spanning forest has n - components edges"
        );
    }
}

#[test]
fn the_scene_draws_what_describe_styles_computes() {
    let registry = demo();
    ok(find_and_style_nodes(&registry, style("type == 'database'", json!({"color": "blue", "shape": "box"}), Some("databases"))));
    ok(find_and_style_nodes(&registry, style("cpu > `0.8`", json!({"glow": "#00ff00", "size": 1.5}), Some("busy"))));
    ok(find_and_style_edges(
        &registry,
        StyleElementsParams {
            source: infra(),
            selector: "latency > `100`".into(),
            style: serde_json::from_value(json!({"color": "red", "width": 3, "arrow": "normal"})).unwrap(),
            ..Default::default()
        },
    ));
    let session = registry.graph_session(infra().as_deref()).expect("session");
    let scene = scene::scene(&session).expect("scene");
    let nodes = scene["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 160);
    for node in nodes {
        let id = node["id"].as_str().unwrap();
        let drawn = &scene["nodeStyles"][node["s"].as_u64().unwrap() as usize];
        let computed = ok(describe_styles(&registry, DescribeStylesParams { source: infra(), compute_for: Some(id.into()), ..Default::default() }))["computedStyle"].clone();
        assert_eq!(drawn["color"], computed["texture"]["color"], "{id}");
        assert_eq!(drawn["shape"], computed["shape"]["type"], "{id}");
        assert_eq!(drawn["size"].as_f64(), computed["shape"]["size"].as_f64(), "{id}");
        assert_eq!(drawn["glow"], computed.pointer("/effect/glow").cloned().unwrap_or(Value::Null), "{id}");
    }
    let red_edges =
        scene["edges"].as_array().unwrap().iter().filter(|e| scene["edgeStyles"][e["s"].as_u64().unwrap() as usize]["color"] == "#ff0000").count();
    let slow = ok(find_edges(&registry, FindElementsParams { source: infra(), selector: "latency > `100`".into(), limit: Some(0) }))["count"]
        .as_u64()
        .unwrap();
    assert_eq!(red_edges as u64, slow);
    assert_eq!(scene["edges"].as_array().unwrap().len(), 240);
}

/// A graph whose items a model did not shape: nulls, missing properties, mixed types, case
/// variants, and one node nested 200 levels deep.
fn odd_graph() -> (Arc<Registry>, tempfile::TempDir) {
    let deep = (0..200).fold(json!("bottom"), |inner, _| json!({"a": [inner]}));
    let nodes = json!([
        {"id": "web-1", "data": {"type": "server", "tags": ["critical", "web"], "name": "web", "cpu": 0.9}},
        {"id": "web-2", "data": {"type": "Server", "tags": null, "name": null, "cpu": "high"}},
        {"id": "db-1", "data": {"type": "database", "name": 5}},
        {"id": "deep", "data": {"type": "server", "tags": ["critical"], "nest": deep}},
    ]);
    let edges = json!([
        {"source": "web-1", "target": "db-1", "data": {"latency": 120}},
        {"source": "web-2", "target": "db-1", "data": {"latency": null}},
        {"source": "deep", "target": "web-1", "data": {}},
    ]);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("odd.json");
    std::fs::write(&path, json!({"nodes": nodes, "edges": edges}).to_string()).expect("write");
    (registry(&[&format!("odd={}", path.display())]), dir)
}

fn find(registry: &Registry, selector: &str) -> ToolResult {
    find_nodes(registry, FindElementsParams { selector: selector.into(), limit: Some(10), ..Default::default() })
}

#[test]
fn selectors_on_odd_items_match_the_rest_and_count_the_unevaluated() {
    let (registry, _dir) = odd_graph();
    // The tools' own example: `tags` null or missing on some nodes, one node too deep to read.
    let found = find(&registry, "contains(tags, 'critical')");
    assert!(found.success, "{}", found.message);
    assert_eq!(found.data["ids"], json!(["web-1", "deep"]));
    assert_eq!(found.data["unevaluated"]["count"], 2, "{}", found.data);
    assert!(found.message.contains("2 nodes were not evaluated and do not match (e.g. `web-2`"), "{}", found.message);
    // Fast-path selectors (read from columns) and the rest (through the jmespath crate); the
    // deep node was cut at load, with a warning, and is evaluated like the others.
    for (selector, ids, skipped) in [
        ("starts_with(name, 'w')", json!(["web-1"]), 3),
        ("length(tags) > `0`", json!(["web-1", "deep"]), 2),
        ("cpu > `0.5`", json!(["web-1"]), 0),
        ("type == 'server' || type == 'database'", json!(["web-1", "db-1", "deep"]), 0),
    ] {
        let found = find(&registry, selector);
        assert!(found.success, "{selector}: {}", found.message);
        assert_eq!((found.data["ids"].clone(), found.data["unevaluated"]["count"].as_u64()), (ids, Some(skipped)), "{selector}");
    }
    // Styling works too, and the scene renders with the deep node in it.
    let styled = find_and_style_nodes(
        &registry,
        StyleElementsParams {
            selector: "contains(tags, 'critical')".into(),
            style: serde_json::from_value(json!({"color": "red"})).unwrap(),
            ..Default::default()
        },
    );
    assert!(styled.success, "{}", styled.message);
    assert_eq!(styled.data["matchedCount"], 2);
    assert_eq!(styled.data["unevaluated"]["count"], 2);
    // One deep node does not stop an algorithm, sampling or find_items on the rest.
    ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() }));
    let sampled =
        ok(sample_data(&registry, SampleDataParams { collection: Some("nodes".into()), count: Some(4), seed: Some(1), ..Default::default() }));
    assert_eq!(sampled["nodes"].as_array().map(Vec::len), Some(4), "{sampled}");
    assert!(sampled.to_string().contains("depth limit"), "the deep node is shown cut: {sampled}");
    let items = ok(find_items(&registry, FindItemsParams { selector: "length(name) == `3`".into(), ..Default::default() }));
    assert_eq!(items["ids"], json!(["web-1"]));
    assert_eq!(items["unevaluated"]["count"], 3);
    assert_eq!(items["unevaluated"]["exampleId"], "web-2");
    let sources = ok(list_sources(&registry, ListSourcesParams::default()));
    assert!(sources.to_string().contains("node #3 is nested deeper than 100 levels"), "the load warns: {sources}");
}

#[test]
fn a_zero_match_says_why_when_the_data_tells() {
    let (registry, _dir) = odd_graph();
    let hints = |selector: &str| {
        let found = find(&registry, selector);
        assert!(found.success, "{selector}: {}", found.message);
        assert_eq!(found.data["count"], 0, "{selector}");
        let hints: Vec<String> = found.data["hints"].as_array().expect("hints").iter().map(|h| h.as_str().unwrap().to_string()).collect();
        for hint in &hints {
            assert!(found.message.contains(hint.as_str()), "the message carries every hint: {}", found.message);
        }
        hints.join("\n")
    };
    let h = hints("type == \"server\"");
    assert!(h.contains("double quotes") && h.contains("write `type == 'server'`"), "{h}");
    let h = hints("type == 'SERVER'");
    assert!(h.contains("'server'") && h.contains("'Server'"), "{h}");
    let h = hints("latency > `100`");
    assert!(h.contains("No node has a property `latency`") && h.contains("edges (collection `edges`)"), "{h}");
    assert!(!h.contains("tags"), "no far-fetched suggestion: {h}");
    let h = hints("pagerank > `0.1`");
    assert!(h.contains("run_algorithm `schemascope:pagerank`") && h.contains("algorithmResults.schemascope.pagerank.rank"), "{h}");
    ok(run_algorithm(&registry, RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() }));
    let h = hints("degree > `100`");
    assert!(h.contains("has run") && h.contains("`algorithmResults.schemascope.degree.degree`"), "{h}");
    let styled = find_and_style_edges(
        &registry,
        StyleElementsParams {
            selector: "type == 'server'".into(),
            style: serde_json::from_value(json!({"color": "red"})).unwrap(),
            ..Default::default()
        },
    );
    assert!(!styled.success);
    assert!(styled.message.contains("No edge has a property `type`") && styled.message.contains("nodes (collection `nodes`)"), "{}", styled.message);
    assert_eq!(hints("type == 'router'"), "", "nothing knowable, nothing said");
}
