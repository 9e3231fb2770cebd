//! The graph session tools on the demo graph: every example of seed 003, styling by algorithm
//! results, persistence across restarts, and algorithms through the session against networkx.

use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{self, demo, ok, registry};

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

fn layer_names(registry: &Services) -> Vec<String> {
    let data = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    data["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn remove_the_red_highlighting() {
    let registry = demo();
    let styled = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'server'", json!({"color": "red"}), Some("highlight-servers")),
    );
    assert!(styled.success, "{}", styled.message);
    assert_eq!(
        styled.beside["affectedNodes"].as_array().map(Vec::len),
        Some(styled.data["matchedCount"].as_u64().unwrap() as usize)
    );
    ok(find_and_style_edges(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            source: infra(),
            selector: "latency > `100`".into(),
            style: serde_json::from_value(json!({"color": "gray", "width": 2})).unwrap(),
            ..Default::default()
        },
    ));
    // The LLM looks for the red layer, then removes it by name.
    let described = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    assert_eq!(described["layerCount"], 3);
    let red = described["layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["summary"].as_str().unwrap().contains("#ff0000"))
        .expect("a red layer");
    assert_eq!(
        (red["name"].as_str(), red["source"].as_str(), red["nodeSelector"].as_str()),
        (Some("highlight-servers"), Some("ai"), Some("type == 'server'"))
    );
    let unknown = clear_styles(
        &registry.graphs,
        ClearStylesParams {
            source: infra(),
            layer_name: Some("red-highlight".into()),
            ..Default::default()
        },
    );
    assert!(!unknown.success);
    assert!(
        unknown.message.contains("highlight-servers"),
        "an unknown name lists the layers: {}",
        unknown.message
    );
    let cleared = ok(clear_styles(
        &registry.graphs,
        ClearStylesParams {
            source: infra(),
            layer_name: Some("highlight-servers".into()),
            ..Default::default()
        },
    ));
    assert_eq!(cleared["removed"], json!(["highlight-servers"]));
    let names = layer_names(&registry);
    assert_eq!(names.len(), 2);
    assert!(names[1].starts_with("ai-edge-style-"), "{names:?}");
    // Without a name every AI layer goes; the default stays.
    ok(clear_styles(
        &registry.graphs,
        ClearStylesParams { source: infra(), layer_name: None, ..Default::default() },
    ));
    assert_eq!(layer_names(&registry), ["default"]);
}

#[test]
fn why_is_a_node_glowing() {
    let registry = demo();
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'database'", json!({"color": "blue"}), Some("databases")),
    ));
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style(
            "cpu > `0.8`",
            json!({"glow": "#00ff00", "glow_strength": 2}),
            Some("critical-alerts"),
        ),
    ));
    let hot = ok(find_nodes(
        &registry.graphs,
        FindElementsParams {
            source: infra(),
            selector: "type == 'database' && cpu > `0.8`".into(),
            limit: None,
        },
    ));
    let id = hot["ids"][0].as_str().expect("a busy database in the demo data").to_string();
    let computed = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams {
            source: infra(),
            compute_for: Some(id.clone()),
            ..Default::default()
        },
    ));
    assert_eq!(computed["elementId"], id.as_str());
    assert_eq!(computed["elementType"], "node");
    assert_eq!(
        computed["computedStyle"]["effect"]["glow"],
        json!({"color": "#00ff00", "strength": 2.0})
    );
    assert_eq!(computed["computedStyle"]["texture"]["color"], "#0000ff");
    let contributions: Vec<(String, Vec<String>)> = computed["contributingLayers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                serde_json::from_value(c["contributed"].clone()).unwrap(),
            )
        })
        .collect();
    assert_eq!(contributions[1], ("databases".to_string(), vec!["texture.color".to_string()]));
    assert_eq!(contributions[2], ("critical-alerts".to_string(), vec!["effect.glow".to_string()]));
    // A node no layer matches gets only the default layer.
    let calm = ok(find_nodes(
        &registry.graphs,
        FindElementsParams {
            source: infra(),
            selector: "type == 'gateway' && cpu < `0.5`".into(),
            limit: None,
        },
    ));
    let calm_id = calm["ids"][0].as_str().unwrap().to_string();
    let plain = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), compute_for: Some(calm_id), ..Default::default() },
    ));
    assert_eq!(plain["contributingLayers"].as_array().unwrap().len(), 1);
    let missing = describe_styles(
        &registry.graphs,
        DescribeStylesParams {
            source: infra(),
            compute_for: Some("databse-012".into()),
            ..Default::default()
        },
    );
    assert!(!missing.success && missing.message.contains("database-012"), "{}", missing.message);
}

#[test]
fn make_the_selected_nodes_bigger() {
    let registry = demo();
    let empty = describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: false },
    );
    assert_eq!(empty.message, "Nothing is currently selected.");
    assert_eq!(empty.data["hasSelection"], false);
    let ids = vec!["server-001".to_string(), "server-007".to_string(), "e-0001".to_string()];
    let selected = select(
        &registry.graphs,
        SelectParams { source: infra(), ids: ids.clone(), ..Default::default() },
    );
    assert!(selected.success, "{}", selected.message);
    let described = ok(describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: false },
    ));
    assert_eq!(described["nodeIds"], json!(["server-001", "server-007"]));
    assert_eq!(described["edgeIds"], json!(["e-0001"]));
    let with_data = ok(describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: true },
    ));
    assert_eq!(with_data["nodes"][0]["data"]["type"], "server");
    assert_eq!(with_data["edges"][0]["source"], "server-043");
    // The LLM styles the selected ids.
    let node_ids: Vec<String> = serde_json::from_value(described["nodeIds"].clone()).unwrap();
    let bigger = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            ids: Some(node_ids.clone()),
            ..style("", json!({"size": 2}), Some("selected-bigger"))
        },
    );
    assert!(bigger.success, "{}", bigger.message);
    assert_eq!(bigger.beside["affectedNodes"], serde_json::json!(node_ids));
    let computed = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams {
            source: infra(),
            compute_for: Some("server-007".into()),
            ..Default::default()
        },
    ));
    assert_eq!(computed["computedStyle"]["shape"]["size"], 2.0);
    let other = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams {
            source: infra(),
            compute_for: Some("server-002".into()),
            ..Default::default()
        },
    ));
    assert_eq!(
        other["computedStyle"]["shape"]["size"], 1,
        "a node outside the ids keeps the default size"
    );
    // Selection modes and errors.
    ok(select(
        &registry.graphs,
        SelectParams {
            source: infra(),
            selector: Some("type == 'database'".into()),
            mode: schemascope_graph_session::selection::SelectMode::Add,
            ..Default::default()
        },
    ));
    let after = ok(describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: false },
    ));
    assert_eq!(after["nodeCount"], 22);
    let unknown = select(
        &registry.graphs,
        SelectParams { source: infra(), ids: vec!["server-0001".into()], ..Default::default() },
    );
    assert!(!unknown.success && unknown.message.contains("server-001"), "{}", unknown.message);
    ok(select(
        &registry.graphs,
        SelectParams {
            source: infra(),
            mode: schemascope_graph_session::selection::SelectMode::Clear,
            ..Default::default()
        },
    ));
    assert_eq!(
        ok(describe_selection(
            &registry.graphs,
            DescribeSelectionParams { source: infra(), include_data: false }
        ))["hasSelection"],
        false
    );
}

#[test]
fn switching_to_the_mode_it_is_already_in_changes_nothing() {
    let registry = demo();
    let view = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::View },
    ));
    assert_eq!(view["mode"], "3D");
    assert_eq!(view["camera"]["activePreset"], "fitToGraph");
    let same = set_dimension(
        &registry.graphs,
        SetDimensionParams {
            source: infra(),
            dimension: schemascope_graph_session::view::Dimension::ThreeD,
        },
    );
    assert!(same.success);
    assert_eq!(same.data["changed"], false);
    assert!(same.message.contains("already in 3D"), "{}", same.message);
    let flat = ok(set_dimension(
        &registry.graphs,
        SetDimensionParams {
            source: infra(),
            dimension: schemascope_graph_session::view::Dimension::TwoD,
        },
    ));
    assert_eq!(flat["changed"], true);
    let view = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::View },
    ));
    assert_eq!(view["mode"], "2D");
    let layout = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::Layout },
    ));
    assert_eq!(layout["type"], "forceDirected");
    assert!(layout["availableLayouts"].as_array().unwrap().contains(&json!("circular")));
    let summary = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::Summary },
    ));
    assert_eq!(
        (summary["nodeCount"].as_u64(), summary["edgeCount"].as_u64()),
        (Some(160), Some(240))
    );
}

#[test]
fn color_nodes_by_importance() {
    let registry = demo();
    let before = ok(list_algorithms(&registry.graphs, ListAlgorithmsParams { source: infra() }));
    assert_eq!(before["history"], json!([]));
    assert_eq!(before["availableDataProperties"], json!({"nodes": [], "edges": []}));
    // Styling by a property that does not exist yet matches nothing: no layer, and a hint.
    let too_early = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style(
            "algorithmResults.schemascope.pagerank.rankPct > `50`",
            json!({"color": "red"}),
            None,
        ),
    );
    assert!(!too_early.success);
    assert!(too_early.message.contains("no style layer was added"), "{}", too_early.message);
    assert_eq!(layer_names(&registry), ["default"]);
    let run = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: "pagerank".into(),
            ..Default::default()
        },
    );
    assert!(run.success, "{}", run.message);
    assert_eq!(run.beside["affectedNodes"].as_array().map(Vec::len), Some(160));
    // describe_property and describe_schema see the new properties.
    let rank = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: infra(),
            property: "algorithmResults.schemascope.pagerank.rank".into(),
            ..Default::default()
        },
    ));
    assert_eq!(rank["dataType"], "number");
    assert_eq!(rank["presentCount"], 160);
    let sum: f64 = ok(find_nodes(
        &registry.graphs,
        FindElementsParams {
            source: infra(),
            selector: "algorithmResults.schemascope.pagerank.rank > `0`".into(),
            limit: Some(0),
        },
    ))["count"]
        .as_f64()
        .unwrap();
    assert_eq!(sum, 160.0);
    let schema = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: infra(),
            collection: Some("nodes".into()),
            ..Default::default()
        },
    ));
    let paths: Vec<&str> = schema["collections"][0]["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["path"].as_str())
        .collect();
    assert!(paths.contains(&"algorithmResults.schemascope.pagerank.rankPct"), "{paths:?}");
    let important = ok(find_nodes(
        &registry.graphs,
        FindElementsParams {
            source: infra(),
            selector: "algorithmResults.schemascope.pagerank.rankPct > `50`".into(),
            limit: None,
        },
    ));
    let count = important["count"].as_u64().unwrap();
    assert!(count > 0 && count < 160, "{count}");
    let styled = ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style(
            "algorithmResults.schemascope.pagerank.rankPct > `50`",
            json!({"color": "crimson", "size": 2}),
            Some("important"),
        ),
    ));
    assert_eq!(styled["matchedCount"].as_u64(), Some(count));
    let after = ok(list_algorithms(&registry.graphs, ListAlgorithmsParams { source: infra() }));
    assert_eq!(after["history"][0]["algorithm"], "schemascope:pagerank");
    assert_eq!(
        after["availableDataProperties"]["nodes"],
        json!([
            "algorithmResults.schemascope.pagerank.rank",
            "algorithmResults.schemascope.pagerank.rankPct"
        ])
    );
    // Unknown algorithms and options are errors that list what exists.
    let wrong = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: "pagerang".into(),
            ..Default::default()
        },
    );
    assert!(
        !wrong.success && wrong.message.contains("Did you mean `pagerank`?"),
        "{}",
        wrong.message
    );
    let option = run_algorithm(
        &registry.graphs,
        RunAlgorithmParams {
            source: infra(),
            algorithm_type: "degree".into(),
            options: json!({"weight": "latency"}),
            ..Default::default()
        },
    );
    assert!(
        !option.success && option.message.contains("its options: directed"),
        "{}",
        option.message
    );
}

#[test]
fn nothing_matching_is_never_a_silent_success_and_bad_selectors_name_the_position() {
    let registry = demo();
    let none = find_and_style_edges(
        &registry.graphs,
        Caller::Ai,
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
    let typo = find_nodes(
        &registry.graphs,
        FindElementsParams { source: infra(), selector: "tpye == 'server'".into(), limit: None },
    );
    assert!(typo.success);
    assert!(typo.message.contains("Did you mean `type`?"), "{}", typo.message);
    let broken = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'server", json!({"color": "red"}), None),
    );
    assert!(!broken.success);
    assert_eq!(broken.data["error"], "invalid_selector");
    assert!(broken.data["column"].as_u64().is_some());
    let bad_colour = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'server'", json!({"color": "reddish"}), None),
    );
    assert!(
        !bad_colour.success && bad_colour.message.contains("reddish"),
        "{}",
        bad_colour.message
    );
}

#[test]
fn layout_camera_and_zoom() {
    let registry = demo();
    let circular = ok(set_layout(
        &registry.graphs,
        SetLayoutParams {
            source: infra(),
            layout_type: schemascope_graph_session::view::LayoutType::Circular,
            options: json!({"radius": 100}),
        },
    ));
    assert_eq!(circular["settled"], true);
    let layout = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::Layout },
    ));
    assert_eq!(
        (layout["type"].as_str(), layout["options"]["radius"].as_i64()),
        (Some("circular"), Some(100))
    );
    let bad = set_layout(
        &registry.graphs,
        SetLayoutParams {
            source: infra(),
            layout_type: schemascope_graph_session::view::LayoutType::Grid,
            options: json!({"radius": 3}),
        },
    );
    assert!(!bad.success && bad.message.contains("spacing"), "{}", bad.message);
    assert_eq!(
        ok(query_graph(
            &registry.graphs,
            QueryGraphParams { source: infra(), query: GraphQuery::CurrentLayout }
        ))["currentLayout"],
        "circular",
        "a refused layout changes nothing"
    );
    let side = ok(set_camera(
        &registry.graphs,
        SetCameraParams {
            source: infra(),
            preset: Some(schemascope_graph_session::view::CameraPreset::SideView),
            ..Default::default()
        },
    ));
    assert_eq!(side["activePreset"], "sideView");
    assert!(side["position"]["x"].as_f64().unwrap() > 100.0, "{side}");
    let zoomed = zoom_to_nodes(
        &registry.graphs,
        ZoomToNodesParams { source: infra(), ids: vec!["database-012".into()], selector: None },
    );
    assert!(zoomed.success);
    assert!(zoomed.data["distance"].as_f64().unwrap() < side["distance"].as_f64().unwrap());
    let view = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::View },
    ));
    assert_eq!(view["camera"]["activePreset"], Value::Null);
    let fixed = set_layout(
        &registry.graphs,
        SetLayoutParams {
            source: infra(),
            layout_type: schemascope_graph_session::view::LayoutType::Fixed,
            options: json!({}),
        },
    );
    assert!(
        !fixed.success && fixed.message.contains("no node has numeric `x`"),
        "{}",
        fixed.message
    );
}

#[test]
fn the_session_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    {
        let registry = demo();
        registry.graphs.set_session_file(&file).expect("session file");
        ok(find_and_style_nodes(
            &registry.graphs,
            Caller::Ai,
            style("type == 'database'", json!({"color": "red"}), Some("db-red")),
        ));
        ok(select(
            &registry.graphs,
            SelectParams { source: infra(), ids: vec!["server-001".into()], ..Default::default() },
        ));
        ok(set_dimension(
            &registry.graphs,
            SetDimensionParams {
                source: infra(),
                dimension: schemascope_graph_session::view::Dimension::TwoD,
            },
        ));
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                source: infra(),
                algorithm_type: "degree".into(),
                ..Default::default()
            },
        ));
        ok(set_layout(
            &registry.graphs,
            SetLayoutParams {
                source: infra(),
                layout_type: schemascope_graph_session::view::LayoutType::Grid,
                options: json!({}),
            },
        ));
    }
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("session file");
    assert_eq!(layer_names(&registry), ["default", "db-red"]);
    assert_eq!(
        ok(describe_selection(
            &registry.graphs,
            DescribeSelectionParams { source: infra(), include_data: false }
        ))["nodeIds"],
        json!(["server-001"])
    );
    let summary = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { source: infra(), query: GraphQuery::Summary },
    ));
    assert_eq!(
        (summary["mode"].as_str(), summary["currentLayout"].as_str()),
        (Some("2D"), Some("grid"))
    );
    // Algorithm results are back in the data.
    let degree = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: infra(),
            property: "algorithmResults.schemascope.degree.degree".into(),
            ..Default::default()
        },
    ));
    assert_eq!(degree["presentCount"], 160);
    assert_eq!(
        ok(list_algorithms(&registry.graphs, ListAlgorithmsParams { source: infra() }))["history"]
            [0]["type"],
        "degree"
    );
}

#[test]
fn an_unchanged_reload_keeps_algorithm_results_and_relayouts_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.json");
    let text = r#"{"nodes":[{"id":"a","data":{}},{"id":"b","data":{}}],"edges":[{"source":"a","target":"b","data":{}}]}"#;
    std::fs::write(&path, text).unwrap();
    let registry = registry(&[&format!("g={}", path.display())]);
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    std::fs::write(&path, text).unwrap();
    registry.sources.reload("g").expect("reload");
    let kept = ok(find_nodes(
        &registry.graphs,
        FindElementsParams {
            selector: "algorithmResults.schemascope.degree.degree == `1`".into(),
            ..Default::default()
        },
    ));
    assert_eq!(kept["ids"], json!(["a", "b"]));
    let history =
        ok(list_algorithms(&registry.graphs, ListAlgorithmsParams::default()))["history"].clone();
    assert_eq!(history[0]["stale"], Value::Null, "the same data: the run is current");
}

/// Waits for the watcher's reload of `name`.
fn reloaded(changes: &mut tokio::sync::broadcast::Receiver<String>, name: &str) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
    let got = runtime.block_on(async {
        tokio::time::timeout(std::time::Duration::from_secs(20), changes.recv()).await
    });
    assert_eq!(got.expect("reloaded in time").expect("a name"), name);
}

#[test]
fn a_file_changed_under_the_watcher_leaves_no_result_selection_or_layer_id_of_the_old_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.json");
    let sessions = dir.path().join("sessions.sqlite");
    std::fs::write(
        &path,
        r#"{"nodes":[{"id":"a","data":{}},{"id":"b","data":{}},{"id":"ç","data":{"x":null}}],
            "edges":[{"source":"a","target":"b","data":{}},{"id":"e2","source":"b","target":"ç","data":{}}]}"#,
    )
    .unwrap();
    let registry = registry(&[&format!("g={}", path.display())]);
    registry.graphs.set_session_file(&sessions).expect("session file");
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() },
    ));
    ok(select(
        &registry.graphs,
        SelectParams { ids: vec!["ç".into(), "a".into(), "e2".into()], ..Default::default() },
    ));
    let by_ids = StyleElementsParams {
        ids: Some(vec!["ç".into(), "b".into()]),
        layer_name: Some("picked".into()),
        ..style("", json!({"size": 2}), None)
    };
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::User,
        StyleElementsParams { source: None, ..by_ids },
    ));
    let gone = StyleElementsParams {
        ids: Some(vec!["ç".into()]),
        layer_name: Some("only-c".into()),
        ..style("", json!({"color": "red"}), None)
    };
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams { source: None, ..gone },
    ));
    let mut events = registry.graphs.session(None).expect("session").subscribe();
    let mut changes = registry.sources.subscribe();
    registry.watch_with(std::time::Duration::from_millis(100)).expect("watch");
    // ç and e2 are gone; a new edge b->a: every degree changes.
    std::fs::write(
        &path,
        r#"{"nodes":[{"id":"a","data":{}},{"id":"b","data":{}}],"edges":[{"source":"a","target":"b"},{"source":"b","target":"a"}]}"#,
    )
    .unwrap();
    reloaded(&mut changes, "g");

    let found = find_nodes(
        &registry.graphs,
        FindElementsParams { selector: "algorithmResults".into(), ..Default::default() },
    );
    assert_eq!(
        found.data["count"], 0,
        "no element keeps results of the old data: {}",
        found.message
    );
    let listed = ok(list_algorithms(&registry.graphs, ListAlgorithmsParams::default()));
    assert_eq!(listed["availableDataProperties"], json!({"nodes": [], "edges": []}));
    for run in listed["history"].as_array().unwrap() {
        assert_eq!(run["stale"], true, "{run}");
        assert!(run["staleReason"].as_str().unwrap().starts_with("data reloaded at "), "{run}");
    }
    let summary = ok(query_graph(
        &registry.graphs,
        QueryGraphParams { query: GraphQuery::Summary, ..Default::default() },
    ));
    assert_eq!(
        (summary["algorithmsRun"].clone(), summary["staleAlgorithmRuns"].clone()),
        (json!([]), json!(2))
    );
    let selection = ok(describe_selection(&registry.graphs, DescribeSelectionParams::default()));
    assert_eq!(
        (selection["nodeIds"].clone(), selection["edgeIds"].clone()),
        (json!(["a"]), json!([]))
    );
    let layers =
        ok(describe_styles(&registry.graphs, DescribeStylesParams::default()))["layers"].clone();
    assert_eq!(
        (layers[1]["name"].as_str(), layers[1]["nodeIds"].as_u64()),
        (Some("picked"), Some(1))
    );
    assert_eq!(
        (layers[2]["name"].as_str(), layers[2]["nodeIds"].as_u64()),
        (Some("only-c"), Some(0))
    );
    let event = std::iter::from_fn(|| events.try_recv().ok())
        .find(|e| e.changed.contains(&"data"))
        .expect("a data event");
    assert!(
        event.changed.contains(&"selection") && event.changed.contains(&"algorithms"),
        "{event:?}"
    );
    assert!(
        event
            .notes
            .iter()
            .any(|n| n.contains("1 selected node(s) and 1 selected edge(s) no longer exist")
                && n.contains("`ç`")),
        "{event:?}"
    );
    assert!(
        event.notes.iter().any(|n| n.contains("`only-c`") && n.contains("matches no element")),
        "{event:?}"
    );
    // Rerunning on the new data is current again, and everything was saved: a restart agrees.
    let rerun = ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    assert_eq!(rerun["directed"], true);
    drop(registry);
    let again = common::registry(&[&format!("g={}", path.display())]);
    again.graphs.set_session_file(&sessions).expect("session file");
    let history =
        ok(list_algorithms(&again.graphs, ListAlgorithmsParams::default()))["history"].clone();
    assert_eq!(
        history.as_array().map(|h| h.iter().map(|r| r["stale"] == true).collect::<Vec<_>>()),
        Some(vec![true, true, false])
    );
    let degrees = ok(find_nodes(
        &again.graphs,
        FindElementsParams {
            selector: "algorithmResults.schemascope.degree.inDegree == `1`".into(),
            ..Default::default()
        },
    ));
    assert_eq!(degrees["ids"], json!(["a", "b"]));
    assert_eq!(
        ok(describe_selection(&again.graphs, DescribeSelectionParams::default()))["nodeIds"],
        json!(["a"])
    );
}

#[test]
fn a_file_changed_while_the_server_was_down_does_not_bring_old_results_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("g.json");
    let sessions = dir.path().join("sessions.sqlite");
    std::fs::write(
        &path,
        r#"{"nodes":[{"id":"a"},{"id":"b"}],"links":[{"source":"a","target":"b"}]}"#,
    )
    .unwrap();
    {
        let registry = registry(&[&format!("g={}", path.display())]);
        registry.graphs.set_session_file(&sessions).expect("session file");
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
        ));
        ok(select(&registry.graphs, SelectParams { ids: vec!["b".into()], ..Default::default() }));
    }
    std::fs::write(
        &path,
        r#"{"nodes":[{"id":"a"},{"id":"c"}],"links":[{"source":"a","target":"c"}]}"#,
    )
    .unwrap();
    let registry = registry(&[&format!("g={}", path.display())]);
    registry.graphs.set_session_file(&sessions).expect("session file");
    let found = find_nodes(
        &registry.graphs,
        FindElementsParams { selector: "algorithmResults".into(), ..Default::default() },
    );
    assert_eq!(found.data["count"], 0, "{}", found.message);
    let run = ok(list_algorithms(&registry.graphs, ListAlgorithmsParams::default()))["history"][0]
        .clone();
    assert_eq!(run["stale"], true);
    assert!(
        run["staleReason"].as_str().unwrap().contains("differs from when the session was saved"),
        "{run}"
    );
    assert_eq!(
        ok(describe_selection(&registry.graphs, DescribeSelectionParams::default()))["hasSelection"],
        false
    );
}

/// Loads a networkx fixture (crates/graph/tests/data) as a graph source.
fn fixture_registry(name: &str) -> (Services, Value, tempfile::TempDir) {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../graph/tests/data/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let nodes: Vec<Value> = fixture["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| json!({"id": id, "data": {}}))
        .collect();
    let edges: Vec<Value> = fixture["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!({"source": e[0], "target": e[1], "data": {"weight": e[2]}}))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.json"));
    // The fixture says whether networkx built it directed; the file says so as networkx writes it.
    std::fs::write(
        &path,
        json!({"directed": fixture["directed"], "nodes": nodes, "edges": edges}).to_string(),
    )
    .unwrap();
    (registry(&[&format!("{name}={}", path.display())]), fixture, dir)
}

fn node_values(registry: &Services, algorithm: &str, name: &str) -> Vec<f64> {
    let session = registry.graphs.session(None).unwrap();
    let data = session.data();
    let nodes = data.collection(schemascope_graph_session::style::ElementKind::Node);
    nodes
        .items()
        .map(|item| {
            item.value().unwrap()["algorithmResults"]["schemascope"][algorithm][name]
                .as_f64()
                .unwrap_or(f64::NAN)
        })
        .collect()
}

#[test]
fn algorithms_through_the_session_match_networkx() {
    for name in ["karate", "les_miserables", "directed_random"] {
        let (registry, expected, _dir) = fixture_registry(name);
        let close = |got: &[f64], want: &Value, what: &str| {
            let want: Vec<f64> = serde_json::from_value(want.clone()).unwrap();
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() < 1e-6, "{name} {what} node {i}: {g} vs networkx {w}");
            }
        };
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
        ));
        close(&node_values(&registry, "degree", "degree"), &expected["degree"], "degree");
        // networkx has in/out degrees only for a directed graph; undirected, both are the degree.
        let (ins, outs) = if expected["directed"] == true {
            ("in_degree", "out_degree")
        } else {
            ("degree", "degree")
        };
        close(&node_values(&registry, "degree", "inDegree"), &expected[ins], "inDegree");
        close(&node_values(&registry, "degree", "outDegree"), &expected[outs], "outDegree");
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "pagerank".into(),
                options: json!({"weight": "weight"}),
                ..Default::default()
            },
        ));
        close(&node_values(&registry, "pagerank", "rank"), &expected["pagerank"], "pagerank");
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "betweenness".into(), ..Default::default() },
        ));
        close(
            &node_values(&registry, "betweenness", "score"),
            &expected["betweenness"],
            "betweenness",
        );
        ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "closeness".into(), ..Default::default() },
        ));
        close(&node_values(&registry, "closeness", "score"), &expected["closeness"], "closeness");
        let components = ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "components".into(), ..Default::default() },
        ));
        assert_eq!(
            components["graphResults"]["componentCount"].as_u64(),
            Some(expected["components"].as_array().unwrap().len() as u64)
        );
        let range: Vec<f64> =
            serde_json::from_value(expected["louvain_modularity_range"].clone()).unwrap();
        // The default is refined Louvain, at least as modular as networkx's worst seed;
        // `method: networkx` is networkx's method, within its range.
        for (options, method, low) in [
            (json!({"weight": "weight"}), "refined", range[0] - 1e-9),
            (json!({"weight": "weight", "method": "networkx"}), "networkx", range[0] - 0.02),
        ] {
            let louvain = ok(run_algorithm(
                &registry.graphs,
                RunAlgorithmParams {
                    algorithm_type: "louvain".into(),
                    options,
                    ..Default::default()
                },
            ));
            assert_eq!(louvain["graphResults"]["method"], method, "{name}");
            let modularity = louvain["graphResults"]["modularity"].as_f64().unwrap();
            assert!(
                modularity >= low && modularity <= range[1] + 0.02,
                "{name} {method} modularity {modularity} vs networkx {range:?}"
            );
        }
        let unknown = run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "louvain".into(),
                options: json!({"method": "leiden"}),
                ..Default::default()
            },
        );
        assert!(
            !unknown.success && unknown.message.contains("\"refined\" or \"networkx\""),
            "{}",
            unknown.message
        );
        let path = ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "shortestPath".into(),
                options: json!({"source": expected["path_source"], "target": expected["path_target"], "weight": "weight"}),
                ..Default::default()
            },
        ));
        assert_eq!(path["graphResults"]["path"], expected["path"], "{name} shortest path");
        // networkx defines no spanning tree of a directed graph.
        if expected["mst_weight"].is_null() {
            continue;
        }
        let mst = ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "minimumSpanningTree".into(),
                options: json!({"weight": "weight"}),
                ..Default::default()
            },
        ));
        assert_eq!(
            mst["graphResults"]["totalWeight"].as_f64(),
            expected["mst_weight"].as_f64(),
            "{name} MST weight"
        );
        let on_tree = ok(find_edges(
            &registry.graphs,
            FindElementsParams {
                selector: "algorithmResults.schemascope.minimumSpanningTree.inMST".into(),
                ..Default::default()
            },
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
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'database'", json!({"color": "blue", "shape": "box"}), Some("databases")),
    ));
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("cpu > `0.8`", json!({"glow": "#00ff00", "size": 1.5}), Some("busy")),
    ));
    ok(find_and_style_edges(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            source: infra(),
            selector: "latency > `100`".into(),
            style: serde_json::from_value(json!({"color": "red", "width": 3, "arrow": "normal"}))
                .unwrap(),
            ..Default::default()
        },
    ));
    let session = registry.graphs.session(infra().as_deref()).expect("session");
    let scene = scene::scene(&session).expect("scene");
    let nodes = scene["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 160);
    for node in nodes {
        let id = node["id"].as_str().unwrap();
        let drawn = &scene["nodeStyles"][node["s"].as_u64().unwrap() as usize];
        let computed = ok(describe_styles(
            &registry.graphs,
            DescribeStylesParams {
                source: infra(),
                compute_for: Some(id.into()),
                ..Default::default()
            },
        ))["computedStyle"]
            .clone();
        assert_eq!(drawn["color"], computed["texture"]["color"], "{id}");
        assert_eq!(drawn["shape"], computed["shape"]["type"], "{id}");
        assert_eq!(drawn["size"].as_f64(), computed["shape"]["size"].as_f64(), "{id}");
        assert_eq!(
            drawn["glow"],
            computed.pointer("/effect/glow").cloned().unwrap_or(Value::Null),
            "{id}"
        );
    }
    let red_edges = scene["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| scene["edgeStyles"][e["s"].as_u64().unwrap() as usize]["color"] == "#ff0000")
        .count();
    let slow = ok(find_edges(
        &registry.graphs,
        FindElementsParams { source: infra(), selector: "latency > `100`".into(), limit: Some(0) },
    ))["count"]
        .as_u64()
        .unwrap();
    assert_eq!(red_edges as u64, slow);
    assert_eq!(scene["edges"].as_array().unwrap().len(), 240);
}

/// A graph whose items a model did not shape: nulls, missing properties, mixed types, case
/// variants, and one node nested 200 levels deep.
fn odd_graph() -> (Services, tempfile::TempDir) {
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

fn find(registry: &Services, selector: &str) -> ToolResult {
    find_nodes(
        &registry.graphs,
        FindElementsParams { selector: selector.into(), limit: Some(10), ..Default::default() },
    )
}

#[test]
fn selectors_on_odd_items_match_the_rest_and_count_the_unevaluated() {
    let (registry, _dir) = odd_graph();
    // The tools' own example: `tags` null or missing on some nodes, one node too deep to read.
    let found = find(&registry, "contains(tags, 'critical')");
    assert!(found.success, "{}", found.message);
    assert_eq!(found.data["ids"], json!(["web-1", "deep"]));
    assert_eq!(found.data["unevaluated"]["count"], 2, "{}", found.data);
    assert!(
        found.message.contains("2 nodes were not evaluated and do not match (e.g. `web-2`"),
        "{}",
        found.message
    );
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
        assert_eq!(
            (found.data["ids"].clone(), found.data["unevaluated"]["count"].as_u64()),
            (ids, Some(skipped)),
            "{selector}"
        );
    }
    // Styling works too, and the scene renders with the deep node in it.
    let styled = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
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
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    let sampled = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            collection: Some("nodes".into()),
            count: Some(4),
            seed: Some(1),
            ..Default::default()
        },
    ));
    assert_eq!(sampled["nodes"].as_array().map(Vec::len), Some(4), "{sampled}");
    assert!(sampled.to_string().contains("depth limit"), "the deep node is shown cut: {sampled}");
    let items = ok(find_items(
        &registry.sources,
        FindItemsParams { selector: "length(name) == `3`".into(), ..Default::default() },
    ));
    assert_eq!(items["ids"], json!(["web-1"]));
    assert_eq!(items["unevaluated"]["count"], 3);
    assert_eq!(items["unevaluated"]["exampleId"], "web-2");
    let sources = ok(list_sources(&registry, ListSourcesParams::default()));
    assert!(
        sources.to_string().contains("node #3 is nested deeper than 100 levels"),
        "the load warns: {sources}"
    );
}

#[test]
fn a_zero_match_says_why_when_the_data_tells() {
    let (registry, _dir) = odd_graph();
    let hints = |selector: &str| {
        let found = find(&registry, selector);
        assert!(found.success, "{selector}: {}", found.message);
        assert_eq!(found.data["count"], 0, "{selector}");
        let hints: Vec<String> = found.data["hints"]
            .as_array()
            .expect("hints")
            .iter()
            .map(|h| h.as_str().unwrap().to_string())
            .collect();
        for hint in &hints {
            assert!(
                found.message.contains(hint.as_str()),
                "the message carries every hint: {}",
                found.message
            );
        }
        hints.join("\n")
    };
    let h = hints("type == \"server\"");
    assert!(h.contains("double quotes") && h.contains("write `type == 'server'`"), "{h}");
    let h = hints("type == 'SERVER'");
    assert!(h.contains("'server'") && h.contains("'Server'"), "{h}");
    let h = hints("latency > `100`");
    assert!(
        h.contains("No node has a property `latency`") && h.contains("edges (collection `edges`)"),
        "{h}"
    );
    assert!(!h.contains("tags"), "no far-fetched suggestion: {h}");
    let h = hints("pagerank > `0.1`");
    assert!(
        h.contains("run_algorithm `schemascope:pagerank`")
            && h.contains("algorithmResults.schemascope.pagerank.rank"),
        "{h}"
    );
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: "degree".into(), ..Default::default() },
    ));
    let h = hints("degree > `100`");
    assert!(
        h.contains("has run") && h.contains("`algorithmResults.schemascope.degree.degree`"),
        "{h}"
    );
    let styled = find_and_style_edges(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            selector: "type == 'server'".into(),
            style: serde_json::from_value(json!({"color": "red"})).unwrap(),
            ..Default::default()
        },
    );
    assert!(!styled.success);
    assert!(
        styled.message.contains("No edge has a property `type`")
            && styled.message.contains("nodes (collection `nodes`)"),
        "{}",
        styled.message
    );
    assert_eq!(hints("type == 'router'"), "", "nothing knowable, nothing said");
}

/// a→b, a→c, b→c, c→a, d→c; expected values from networkx 3.6.1 (`DiGraph`, and
/// `to_undirected()` for the undirected reading).
const SMALL_EDGES: &str = r#"[{"source":"a","target":"b"},{"source":"a","target":"c"},{"source":"b","target":"c"},{"source":"c","target":"a"},{"source":"d","target":"c"}]"#;

fn small_graph(dir: &tempfile::TempDir, name: &str, top: &str) -> Services {
    let path = dir.path().join(format!("{name}.json"));
    std::fs::write(
        &path,
        format!(r#"{{{top}"nodes":[{{"id":"a"}},{{"id":"b"}},{{"id":"c"}},{{"id":"d"}}]}}"#),
    )
    .unwrap();
    registry(&[&format!("{name}={}", path.display())])
}

fn run(registry: &Services, algorithm: &str, options: Value) -> Value {
    ok(run_algorithm(
        &registry.graphs,
        RunAlgorithmParams { algorithm_type: algorithm.into(), options, ..Default::default() },
    ))
}

fn column(registry: &Services, algorithm: &str, name: &str) -> Vec<Value> {
    let session = registry.graphs.session(None).unwrap();
    let nodes =
        session.data().collection(schemascope_graph_session::style::ElementKind::Node).clone();
    nodes
        .items()
        .map(|item| {
            item.value().unwrap()["algorithmResults"]["schemascope"][algorithm][name].clone()
        })
        .collect()
}

fn assert_close(got: Vec<Value>, want: &[f64], what: &str) {
    let got: Vec<f64> = got.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{what}: {got:?} vs networkx {want:?}");
    }
}

#[test]
fn algorithms_follow_the_files_direction_and_say_which_was_used() {
    let dir = tempfile::tempdir().unwrap();
    // graphty-style edges (no flag): each edge goes from source to target.
    for (name, top, basis) in [
        ("graphty", format!(r#""edges":{SMALL_EDGES},"#), "edgeEnds"),
        (
            "flagged",
            format!(r#""directed":true,"multigraph":false,"graph":{{}},"links":{SMALL_EDGES},"#),
            "fileFlag",
        ),
    ] {
        let registry = small_graph(&dir, name, &top);
        let degree = run(&registry, "degree", Value::Null);
        assert_eq!(
            (degree["directed"].clone(), degree["graphResults"]["directedBasis"].clone()),
            (json!(true), json!(basis)),
            "{name}"
        );
        assert_close(column(&registry, "degree", "inDegree"), &[1.0, 1.0, 3.0, 0.0], name);
        assert_close(column(&registry, "degree", "outDegree"), &[2.0, 1.0, 1.0, 1.0], name);
        assert_close(column(&registry, "degree", "degree"), &[3.0, 2.0, 4.0, 1.0], name);
        let rank = ok(run_algorithm(
            &registry.graphs,
            RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() },
        ));
        assert!(rank.to_string().contains("\"directed\":true"));
        assert_close(
            column(&registry, "pagerank", "rank"),
            &[0.372526246091333, 0.19582365458881654, 0.39415009931985023, 0.0375],
            name,
        );
        run(&registry, "betweenness", Value::Null);
        assert_close(column(&registry, "betweenness", "score"), &[1.0 / 3.0, 0.0, 0.5, 0.0], name);
        run(&registry, "closeness", Value::Null);
        assert_close(column(&registry, "closeness", "score"), &[0.6, 0.5, 1.0, 0.0], name);
        run(&registry, "clustering", Value::Null);
        assert_close(column(&registry, "clustering", "coefficient"), &[0.5, 1.0, 0.2, 0.0], name);
        let components = run(&registry, "components", Value::Null);
        assert_eq!(
            (
                components["graphResults"]["componentCount"].clone(),
                components["graphResults"]["strongComponentCount"].clone()
            ),
            (json!(1), json!(2))
        );
        assert_close(
            column(&registry, "components", "strongComponentId"),
            &[0.0, 0.0, 0.0, 1.0],
            name,
        );
        // d is unreachable from a when edges have a direction.
        let path = run(&registry, "shortestPath", json!({"source": "a", "target": "d"}));
        assert_eq!(
            (path["graphResults"]["path"].clone(), path["graphResults"]["pathLength"].clone()),
            (json!([]), Value::Null),
            "{name}"
        );
        // No path is said as such: not reachable, no hops (0 would read as a path of one node).
        assert_eq!(
            (path["graphResults"]["reachable"].clone(), path["graphResults"]["hops"].clone()),
            (json!(false), Value::Null),
            "{name}"
        );
        let said = run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "shortestPath".into(),
                options: json!({"source": "a", "target": "d"}),
                ..Default::default()
            },
        );
        assert!(said.message.contains("There is no path from `a` to `d`"), "{}", said.message);
        assert!(
            said.message.contains("nodes by `") && said.message.contains("and edges by `"),
            "{}",
            said.message
        );
        let back = run(&registry, "shortestPath", json!({"source": "b", "target": "a"}));
        assert_eq!(back["graphResults"]["path"], json!(["b", "c", "a"]));
        let mst = run(&registry, "minimumSpanningTree", Value::Null);
        assert_eq!(
            (mst["directed"].clone(), mst["graphResults"]["directedBasis"].clone()),
            (json!(false), json!("ignoredByAlgorithm"))
        );
        // The option still wins, and says so.
        let undirected = run(&registry, "degree", json!({"directed": false}));
        assert_eq!(undirected["graphResults"]["directedBasis"], "option");
        assert_eq!(column(&registry, "degree", "inDegree"), column(&registry, "degree", "degree"));
    }
    // networkx node-link, undirected by its flag, or by networkx's default without one.
    for (name, top, basis) in [
        ("undirected", format!(r#""directed":false,"links":{SMALL_EDGES},"#), "fileFlag"),
        ("nodelink", format!(r#""links":{SMALL_EDGES},"#), "nodeLinkDefault"),
    ] {
        let registry = small_graph(&dir, name, &top);
        let rank = run(&registry, "pagerank", Value::Null);
        assert_eq!(
            (rank["directed"].clone(), rank["graphResults"]["directedBasis"].clone()),
            (json!(false), json!(basis)),
            "{name}"
        );
        assert!(
            run_algorithm(
                &registry.graphs,
                RunAlgorithmParams { algorithm_type: "pagerank".into(), ..Default::default() }
            )
            .message
            .contains("undirected")
        );
        assert_close(
            column(&registry, "pagerank", "rank"),
            &[0.2459279727012903, 0.2459279727012903, 0.3667352990529791, 0.14140875554444032],
            name,
        );
        run(&registry, "clustering", Value::Null);
        assert_close(
            column(&registry, "clustering", "coefficient"),
            &[1.0, 1.0, 1.0 / 3.0, 0.0],
            name,
        );
        let components = run(&registry, "components", Value::Null);
        assert_eq!(
            components["graphResults"]["strongComponentCount"],
            Value::Null,
            "undirected: one partition"
        );
        let path = run(&registry, "shortestPath", json!({"source": "a", "target": "d"}));
        assert_eq!(path["graphResults"]["path"], json!(["a", "c", "d"]));
    }
    // A flag that is not a boolean is reported, not guessed from.
    let path = dir.path().join("odd.json");
    std::fs::write(&path, format!(r#"{{"directed":"yes","edges":{SMALL_EDGES},"nodes":[{{"id":"a"}},{{"id":"b"}},{{"id":"c"}},{{"id":"d"}}]}}"#))
        .unwrap();
    let source = schemascope_sources::load(
        &format!("odd={}", path.display()).parse().unwrap(),
        &schemascope_sources::NoProgress,
    )
    .unwrap();
    assert!(
        source.warnings.iter().any(|w| w.to_string().contains("`directed`")),
        "{:?}",
        source.warnings
    );
}

#[test]
fn a_persons_layers_survive_clearing_the_ai_layers() {
    use schemascope_tools::tool_table::call_tool;
    let registry = demo();
    let style = json!({"source": "infrastructure", "selector": "type == 'database'", "style": {"color": "blue"}});
    let mine = ok(call_tool(&registry, Caller::User, "find_and_style_nodes", style.clone()));
    let ai = ok(call_tool(&registry, Caller::Ai, "find_and_style_nodes", style));
    assert!(mine["layerName"].as_str().unwrap().starts_with("user-node-style-"), "{mine}");
    assert!(ai["layerName"].as_str().unwrap().starts_with("ai-node-style-"), "{ai}");
    let described = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    let sources: Vec<&str> = described["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["system", "user", "ai"]);
    assert_eq!(
        (described["userLayerCount"].clone(), described["aiLayerCount"].clone()),
        (json!(1), json!(1))
    );
    let cleared =
        call_tool(&registry, Caller::User, "clear_styles", json!({"source": "infrastructure"}));
    assert_eq!(cleared.data["removed"], json!([ai["layerName"]]));
    assert!(cleared.message.contains("1 user layer(s) were kept"), "{}", cleared.message);
    assert_eq!(layer_names(&registry).len(), 2, "the person's layer stays");
    let bad = call_tool(
        &registry,
        Caller::Ai,
        "clear_styles",
        json!({"source": "infrastructure", "layers": "everything"}),
    );
    assert!(!bad.success);
    let all = ok(call_tool(
        &registry,
        Caller::Ai,
        "clear_styles",
        json!({"source": "infrastructure", "layers": "all"}),
    ));
    assert_eq!(all["removed"], json!([mine["layerName"]]));
    assert_eq!(layer_names(&registry), ["default"]);
}

#[test]
fn saved_layers_from_before_sources_were_told_apart_stay_ai() {
    // A layers row as sessions saved it before callers were told apart: every added layer was "ai".
    let row = r##"{"layers":[{"name":"default","source":"system","node":null,"edge":null,"created_ms":0},{"name":"mine","source":"ai","node":{"selector":"","style":{"texture":{"color":"#ff0000"}}},"edge":null,"created_ms":5}]}"##;
    let parts = std::collections::BTreeMap::from([("layers".to_string(), row.to_string())]);
    let decoded = schemascope_tools::graph_session::state::SessionState::decode(&parts);
    assert!(decoded.notes.is_empty(), "{:?}", decoded.notes);
    assert_eq!(
        decoded.state.layers.layers[1].source,
        schemascope_graph_session::style::LayerSource::Ai
    );
}

#[test]
fn with_several_graphs_each_schema_heading_names_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.json");
    let two = dir.path().join("two.json");
    std::fs::write(&one, r#"{"nodes":[{"id":"a"}],"edges":[]}"#).unwrap();
    std::fs::write(&two, r#"{"nodes":[{"id":"b"}],"edges":[]}"#).unwrap();
    let registry =
        registry(&[&format!("one={}", one.display()), &format!("two={}", two.display())]);
    let prompt = system_prompt(&registry.sources, SystemPromptParams::default()).expect("prompt");
    assert!(
        prompt.contains("## Graph Data Schema: `one`")
            && prompt.contains("## Graph Data Schema: `two`"),
        "{prompt}"
    );
}

#[test]
fn a_graph_rewritten_as_records_is_no_longer_answered_from_its_old_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.json");
    std::fs::write(
        &path,
        json!({"nodes": [{"id": "a", "data": {"type": "server"}}, {"id": "b", "data": {}}], "edges": [{"source": "a", "target": "b"}]})
            .to_string(),
    )
    .unwrap();
    let services = registry(&[&format!("g={}", path.display())]);
    let g = || Some("g".to_string());
    ok(find_nodes(
        &services.graphs,
        FindElementsParams {
            source: g(),
            selector: "type == 'server'".into(),
            ..Default::default()
        },
    ));
    std::fs::write(
        &path,
        json!([{"id": 1, "reading": 2.5}, {"id": 2, "reading": 3.0}]).to_string(),
    )
    .unwrap();
    services.sources.reload("g").expect("reloads as records");
    let found = find_nodes(
        &services.graphs,
        FindElementsParams {
            source: g(),
            selector: "type == 'server'".into(),
            ..Default::default()
        },
    );
    assert!(!found.success, "answered from the old graph: {}", found.message);
    let queried =
        query_graph(&services.graphs, QueryGraphParams { source: g(), ..Default::default() });
    assert!(!queried.success, "answered from the old graph: {}", queried.message);
}

#[test]
fn camera_coordinates_past_any_layout_are_refused() {
    let services = demo();
    let result = set_camera(
        &services.graphs,
        SetCameraParams {
            source: infra(),
            position: Some([1e308, 0.0, 0.0]),
            ..Default::default()
        },
    );
    assert!(!result.success);
    assert_eq!(result.data["error"], "invalid_params");
    let zoom = ok(zoom_to_nodes(
        &services.graphs,
        ZoomToNodesParams { source: infra(), ids: vec!["server-001".into()], ..Default::default() },
    ));
    assert!(zoom["position"]["x"].is_number(), "{zoom}");
}

#[test]
fn betweenness_sampled_from_k_sources_states_its_error_and_from_every_source_is_exact() {
    let (registry, expected, dir) = fixture_registry("les_miserables");
    let sessions = dir.path().join("sessions.sqlite");
    registry.graphs.set_session_file(&sessions).expect("session file");
    let betweenness = |options: Value| {
        run_algorithm(
            &registry.graphs,
            RunAlgorithmParams {
                algorithm_type: "betweenness".into(),
                options,
                ..Default::default()
            },
        )
    };
    let every = betweenness(json!({"k": 77}));
    assert!(every.success, "{}", every.message);
    assert_eq!(every.data["graphResults"]["sampled"], false);
    let exact: Vec<f64> = serde_json::from_value(expected["betweenness"].clone()).unwrap();
    for (got, want) in node_values(&registry, "betweenness", "score").iter().zip(&exact) {
        assert!((got - want).abs() < 1e-9, "{got} vs networkx {want}");
    }
    let sampled = betweenness(json!({"k": 30, "seed": 3}));
    assert!(sampled.success, "{}", sampled.message);
    let results = &sampled.data["graphResults"];
    assert_eq!((results["sampled"].as_bool(), results["pivots"].as_u64()), (Some(true), Some(30)));
    let max_error = results["standardErrorMax"].as_f64().expect("stated error");
    assert!(max_error > 0.0, "{results}");
    assert!(
        sampled.message.contains("Estimated from 30 sampled source nodes (seed 3)"),
        "{}",
        sampled.message
    );
    // The same seed draws the same sources.
    let scores = node_values(&registry, "betweenness", "score");
    ok(betweenness(json!({"k": 30, "seed": 3})));
    assert_eq!(node_values(&registry, "betweenness", "score"), scores);
    for bad in [json!({"k": 0}), json!({"k": 2.5}), json!({"k": "many"})] {
        let refused = betweenness(bad.clone());
        assert!(!refused.success && refused.message.contains("`k`"), "{bad}: {}", refused.message);
    }
    // The sampled run's figures survive a restart with the history.
    drop(registry);
    let again = common::registry(&[&format!(
        "les_miserables={}",
        dir.path().join("les_miserables.json").display()
    )]);
    again.graphs.set_session_file(&sessions).expect("session file");
    let session = again.graphs.session(None).expect("session");
    assert!(session.restore_notes().is_empty(), "{:?}", session.restore_notes());
    let history =
        ok(list_algorithms(&again.graphs, ListAlgorithmsParams::default()))["history"].clone();
    assert_eq!(history.as_array().map(Vec::len), Some(3));
    assert_eq!(history[1]["graphResults"]["pivots"], 30);
}

/// `read_scene`, the scene a view inside a chat client reads through its host: at once without a
/// version; given the version drawn, it waits for the next change (made here from another
/// thread) and answers `unchanged` when none comes in time; a wait out of bounds is refused.
#[test]
fn read_scene_waits_for_the_next_change() {
    let registry = demo();
    let read = |since_version: Option<u64>, wait_seconds: Option<f64>| {
        read_scene(
            &registry.graphs,
            ReadSceneParams { source: infra(), since_version, wait_seconds },
        )
    };
    let scene = ok(read(None, None));
    assert_eq!(scene["nodes"].as_array().map(Vec::len), Some(160));
    let drawn = scene["version"].as_u64().expect("version");

    let quiet = ok(read(Some(drawn), Some(0.2)));
    assert_eq!(quiet, json!({"unchanged": true, "version": drawn}));

    let changed = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| read(Some(drawn), Some(20.0)));
        std::thread::sleep(std::time::Duration::from_millis(300));
        ok(find_and_style_nodes(
            &registry.graphs,
            Caller::User,
            style("type == 'database'", json!({"color": "red"}), Some("while-waiting")),
        ));
        waiting.join().expect("the waiting read")
    });
    let changed = ok(changed);
    assert!(changed["version"].as_u64().expect("version") > drawn);
    assert!(
        changed["legend"].to_string().contains("while-waiting"),
        "the scene after the change draws the new layer"
    );

    for bad in [-1.0, 25.5, f64::NAN] {
        let refused = read(Some(drawn), Some(bad));
        assert!(!refused.success, "wait_seconds {bad} is refused");
        assert!(refused.message.contains("wait_seconds"), "{}", refused.message);
    }
}
