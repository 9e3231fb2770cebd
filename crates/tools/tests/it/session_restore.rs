//! A session file written by hand — a camera at 1e308, "NaN" where numbers belong, hundreds of
//! layers, styles and layout options no tool accepts, repeated ids, runs of no algorithm, parts
//! that are not text or that schemascope never writes — is restored as the tools would have set
//! it: every value the tools and the web view's scene answer is a checked one, and what was
//! dropped is said, naming the part.

use schemascope_graph_session::layers::MAX_LAYERS;
use schemascope_graph_session::view::MAX_COORDINATE;
use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok};

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

/// Writes `parts` of the demo graph's session straight into the SQLite file, as any program could.
fn write_parts(file: &std::path::Path, parts: &[(&str, rusqlite::types::Value)]) {
    let db = rusqlite::Connection::open(file).expect("open the session file");
    for (part, value) in parts {
        db.execute(
            "INSERT INTO session_part (session, part, value, saved_at) VALUES ('infrastructure', ?1, ?2, '2026-01-01T00:00:00Z')
             ON CONFLICT (session, part) DO UPDATE SET value = excluded.value",
            rusqlite::params![part, value],
        )
        .expect("write a part");
    }
}

fn text(value: Value) -> rusqlite::types::Value {
    rusqlite::types::Value::Text(value.to_string())
}

/// A session file holding a valid session of the demo graph (so the session's name and the
/// file's table are right), then closed.
fn saved_session(file: &std::path::Path) {
    let registry = demo();
    registry.graphs.set_session_file(file).expect("session file");
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        StyleElementsParams {
            source: infra(),
            selector: "type == 'database'".into(),
            style: serde_json::from_value(json!({"color": "red"})).expect("style"),
            layer_name: Some("keep".into()),
            ..Default::default()
        },
    ));
}

fn query(registry: &Services) -> (Value, String) {
    let result =
        query_graph(&registry.graphs, QueryGraphParams { source: infra(), query: GraphQuery::All });
    assert!(result.success, "{}", result.message);
    (result.data, result.message)
}

fn warnings(data: &Value) -> Vec<String> {
    data["restoreWarnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn assert_camera_checked(camera: &Value) {
    for point in ["position", "target"] {
        for axis in ["x", "y", "z"] {
            let x = camera[point][axis].as_f64().unwrap_or(f64::NAN);
            assert!(x.is_finite() && x.abs() <= MAX_COORDINATE, "{point}.{axis}: {camera}");
        }
    }
}

#[test]
fn a_hand_written_session_file_is_served_only_as_the_tools_would_have_set_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    saved_session(&file);
    let saved_layers: Value = {
        let db = rusqlite::Connection::open(&file).expect("open");
        let layers: String = db
            .query_row(
                "SELECT value FROM session_part WHERE session = 'infrastructure' AND part = 'layers'",
                [],
                |r| r.get(0),
            )
            .expect("layers saved");
        serde_json::from_str(&layers).expect("json")
    };
    let keep = saved_layers["layers"][1].clone();
    assert_eq!(keep["name"], "keep");
    let variant = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut layer = keep.clone();
        layer["name"] = json!(name);
        edit(&mut layer);
        layer
    };
    let mut layers = vec![saved_layers["layers"][0].clone(), keep.clone()];
    layers.push(variant("huge-size", &|l| l["node"]["style"]["shape"] = json!({"size": 1e308})));
    layers.push(variant("unknown-style", &|l| l["node"]["style"]["texture"]["font"] = json!("x")));
    layers.push(variant("bad-colour", &|l| l["node"]["style"]["texture"]["color"] = json!("red")));
    layers.push(variant("bad-selector", &|l| l["node"]["selector"] = json!("type ==")));
    layers.push(variant(&"n".repeat(1 << 20), &|_| {}));
    layers.push(variant("default", &|_| {}));
    layers.push(variant("keep", &|_| {}));
    for i in 0..1_000 {
        layers.push(variant(&format!("many-{i}"), &|_| {}));
    }
    let run = json!({
        "algorithm": "schemascope:degree", "namespace": "schemascope", "type": "degree",
        "runAt": "2026-01-01T00:00:00Z", "durationMs": 1.0, "options": {},
        "addedProperties": {"nodes": [], "edges": []}, "graphResults": {"maxDegree": 3},
    });
    let mut forever = run.clone();
    forever["durationMs"] = json!(1e308);
    let mut teleport = run.clone();
    teleport["type"] = json!("teleport");
    teleport["algorithm"] = json!("schemascope:teleport");
    write_parts(
        &file,
        &[
            (
                "view",
                text(json!({
                    "dimension": "3d",
                    "camera": {"position": [1e308, 0.0, -1e308], "target": [0.0, 0.0, 0.0], "zoom": 1.0},
                    "viewport": [0, 5_000_000],
                })),
            ),
            ("layers", text(json!({"layers": layers}))),
            (
                "selection",
                text(json!({"nodes": ["server-001", "server-001", "no-such-node"], "edges": []})),
            ),
            (
                "layout",
                text(json!([
                    {"type": "spiral", "options": {"spacing": "NaN"}, "settled": true},
                    {"ids": ["server-001"], "positions": [[1e308, 0.0, 0.0]], "iterations": 0},
                ])),
            ),
            ("history", text(json!([run, forever, teleport]))),
            ("results:schemascope.teleport", text(json!({}))),
            ("notes-from-elsewhere", text(json!("x"))),
        ],
    );

    let registry = demo();
    registry.graphs.set_session_file(&file).expect("the file still opens");
    let (all, message) = query(&registry);
    let notes = warnings(&all);
    let said = |part: &str| notes.iter().any(|n| n.contains(&format!("saved `{part}`")));
    assert!(
        said("view") && said("layers") && said("selection") && said("layout") && said("history"),
        "{notes:#?}"
    );
    assert!(notes.iter().any(|n| n.contains("camera was dropped")), "{notes:#?}");
    assert!(notes.iter().any(|n| n.contains("none schemascope writes")), "{notes:#?}");
    assert!(message.contains("restoreWarnings"), "{message}");
    // The view: the camera frames the graph, the viewport no page could report is gone.
    assert_camera_checked(&all["view"]["camera"]);
    assert_eq!(all["view"]["camera"]["activePreset"], "fitToGraph");
    assert_eq!(all["view"]["viewport"], Value::Null);
    // The layout: the options set_layout refuses are gone with the part, the graph laid out again
    // as a new session lays it out.
    assert_eq!(
        (&all["layout"]["type"], &all["layout"]["options"]),
        (&json!("forceDirected"), &json!({}))
    );
    // The layers: the built-in default, `keep`, and the valid copies up to the bound.
    let styles = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    let names: Vec<&str> = styles["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert_eq!(names.len(), MAX_LAYERS);
    assert_eq!(&names[..3], ["default", "keep", "many-0"]);
    for bad in ["huge-size", "unknown-style", "bad-colour", "bad-selector"] {
        assert!(!names.contains(&bad), "{bad} restored");
    }
    assert!(names.iter().all(|n| n.len() < 1 << 10), "the 1 MiB name is gone");
    assert_eq!(names.iter().filter(|n| **n == "keep" || **n == "default").count(), 2);
    // The selection: each id once, and only ids of the graph.
    let selected = ok(describe_selection(
        &registry.graphs,
        DescribeSelectionParams { source: infra(), include_data: false },
    ));
    assert_eq!(selected["nodeIds"], json!(["server-001"]));
    // The history: the run a tool could have recorded, only.
    let history =
        ok(list_algorithms(&registry.graphs, ListAlgorithmsParams { source: infra() }))["history"]
            .clone();
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(history[0]["durationMs"], 1.0);
    // The web view's scene: the same checked camera, and the same warnings.
    let session = registry.graphs.session(Some("infrastructure")).expect("session");
    let scene = scene::scene(&session).expect("scene");
    let camera = &scene["camera"];
    for point in ["position", "target"] {
        let p = camera[point].as_array().expect("point");
        assert!(
            p.iter()
                .all(|x| x.as_f64().is_some_and(|x| x.is_finite() && x.abs() <= MAX_COORDINATE)),
            "{camera}"
        );
    }
    let scene_warnings = scene["warnings"].to_string();
    assert!(scene_warnings.contains("camera was dropped"), "{scene_warnings}");
    // The session goes on: tools change it as usual.
    ok(set_camera(
        &registry.graphs,
        SetCameraParams { source: infra(), position: Some([1.0, 2.0, 3.0]), ..Default::default() },
    ));
}

#[test]
fn unparsable_and_non_text_parts_fall_back_to_their_defaults_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    saved_session(&file);
    write_parts(
        &file,
        &[
            // JSON has no NaN or infinity: as strings they do not parse as numbers.
            (
                "view",
                text(
                    json!({"dimension": "2d", "camera": {"position": ["NaN", "inf", 0], "target": [0, 0, 0], "zoom": 1}}),
                ),
            ),
            ("layout", text(json!([{"type": "teleport", "options": {}, "settled": true}, {}]))),
            ("history", rusqlite::types::Value::Blob(vec![0xff; 64])),
            ("selection", rusqlite::types::Value::Integer(7)),
        ],
    );
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("the file still opens");
    let (all, _) = query(&registry);
    let notes = warnings(&all).join("\n");
    for expected in [
        "saved `view` ignored",
        "saved `layout` ignored",
        "saved `history` ignored: it is blob, not text",
        // SQLite keeps an integer written to the TEXT column as text: "7" is no selection.
        "saved `selection` ignored",
    ] {
        assert!(notes.contains(expected), "{expected}: {notes}");
    }
    assert_camera_checked(&all["view"]["camera"]);
    assert_eq!(all["view"]["camera"]["activePreset"], "fitToGraph");
    assert!(all["layout"]["type"].as_str().is_some_and(|t| t != "teleport"));
    assert_eq!(all["selectedNodeCount"], 0);
    // The layer written by the tool is kept.
    let styles = ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ));
    assert_eq!(styles["layerCount"], 2);
}

#[test]
fn the_tools_refuse_the_styles_and_names_a_restore_would_drop() {
    let registry = demo();
    let refused = |style: Value, name: Option<String>| {
        let result = find_and_style_nodes(
            &registry.graphs,
            Caller::Ai,
            StyleElementsParams {
                source: infra(),
                selector: String::new(),
                style: serde_json::from_value(style).expect("style"),
                layer_name: name,
                ..Default::default()
            },
        );
        assert!(!result.success, "accepted: {}", result.message);
        result.message
    };
    assert!(refused(json!({"width": 1e308}), None).contains("width must be between"));
    assert!(refused(json!({"glow": true, "glow_strength": 1e300}), None).contains("glow_strength"));
    assert!(
        refused(json!({"outline": "red", "outline_width": -1}), None).contains("outline_width")
    );
    assert!(refused(json!({"shape": "x".repeat(1000)}), None).contains("shape must be a name"));
    assert!(refused(json!({"color": "red"}), Some("n".repeat(201))).contains("at most 200 bytes"));
}
