//! The graph session's bound on style layers, through the tools an LLM and a person call: an
//! LLM styling in a loop keeps the newest layers, never a person's or a named one, and the
//! bound holds across a restart from the session file.

use schemascope_graph_session::layers::MAX_LAYERS;
use schemascope_tools::graph_session::*;
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, ok};

fn infra() -> Option<String> {
    Some("infrastructure".into())
}

fn style(selector: &str, layer: Option<&str>) -> StyleElementsParams {
    StyleElementsParams {
        source: infra(),
        selector: selector.into(),
        style: serde_json::from_value(json!({"color": "red"})).expect("style"),
        layer_name: layer.map(str::to_string),
        ..Default::default()
    }
}

fn described(registry: &Services) -> Value {
    ok(describe_styles(
        &registry.graphs,
        DescribeStylesParams { source: infra(), ..Default::default() },
    ))
}

fn names(described: &Value) -> Vec<String> {
    described["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn an_llm_styling_in_a_loop_keeps_the_newest_layers_and_never_a_persons_or_a_named_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sessions.sqlite");
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("session file");
    let person = ok(find_and_style_nodes(
        &registry.graphs,
        Caller::User,
        style("type == 'server'", None),
    ))["layerName"]
        .as_str()
        .expect("name")
        .to_string();
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'database'", Some("databases")),
    ));
    // Selectors differ per call (`cpu > i/1000`), as a model's would; every one matches nodes.
    let mut ai: Vec<String> = Vec::new();
    let mut removed = Vec::new();
    for i in 0..(MAX_LAYERS + 40) {
        let result = find_and_style_nodes(
            &registry.graphs,
            Caller::Ai,
            style(&format!("cpu > `{}`", i as f64 / 100_000.0), None),
        );
        assert!(result.success, "call {i}: {}", result.message);
        ai.push(result.data["layerName"].as_str().expect("name").to_string());
        match result.data["removedLayer"].as_str() {
            Some(old) => {
                assert!(
                    result.message.contains(&format!("at most {MAX_LAYERS} style layers"))
                        && result.message.contains(old),
                    "{}",
                    result.message
                );
                removed.push(old.to_string());
            }
            None => assert!(result.data["removedLayer"].is_null()),
        }
    }
    // default + the person's + `databases` take three places; the rest go to the newest AI layers.
    let kept = MAX_LAYERS - 3;
    assert_eq!(
        removed,
        ai[..ai.len() - kept],
        "the oldest unnamed AI layers gave way, oldest first"
    );
    let now = described(&registry);
    assert_eq!(
        (now["layerCount"].as_u64(), now["maxLayers"].as_u64()),
        (Some(MAX_LAYERS as u64), Some(MAX_LAYERS as u64))
    );
    let mut expected = vec!["default".to_string(), person.clone(), "databases".to_string()];
    expected.extend(ai[ai.len() - kept..].iter().cloned());
    assert_eq!(names(&now), expected);

    // A named layer at the bound is refused, saying what to do; nothing changes.
    let named = find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'server'", Some("servers")),
    );
    assert!(!named.success);
    assert!(
        named.message.contains("256 style layers")
            && named.message.contains("`servers` cannot be added")
            && named.message.contains("clear_styles"),
        "{}",
        named.message
    );
    // A person's unnamed layer replaces the person's own oldest unnamed layer, never an AI's.
    let second =
        ok(find_and_style_nodes(&registry.graphs, Caller::User, style("type == 'server'", None)));
    assert_eq!(
        second["removedLayer"].as_str(),
        Some(person.as_str()),
        "a person's unnamed layer replaces their own oldest"
    );
    let third = find_and_style_edges(&registry.graphs, Caller::User, style("", None));
    assert!(third.success, "{}", third.message);
    assert_eq!(third.data["removedLayer"].as_str(), second["layerName"].as_str());
    assert_eq!(described(&registry)["layerCount"].as_u64(), Some(MAX_LAYERS as u64));

    // The bound holds after a restart from the session file, and clearing makes room.
    let before = names(&described(&registry));
    drop(registry);
    let registry = demo();
    registry.graphs.set_session_file(&file).expect("session file");
    assert_eq!(names(&described(&registry)), before);
    let again = ok(find_and_style_nodes(&registry.graphs, Caller::Ai, style("cpu > `0.5`", None)));
    assert_eq!(before[1], "databases");
    assert_eq!(
        again["removedLayer"].as_str(),
        Some(before[2].as_str()),
        "restored layers keep their unnamed mark"
    );
    // Clearing the AI layers (`databases` among them) makes room for a named one.
    ok(clear_styles(&registry.graphs, ClearStylesParams { source: infra(), ..Default::default() }));
    ok(find_and_style_nodes(
        &registry.graphs,
        Caller::Ai,
        style("type == 'server'", Some("servers")),
    ));
    let last_person = before.last().cloned().unwrap_or_default();
    assert_eq!(
        names(&described(&registry)),
        ["default".to_string(), last_person, "servers".to_string()]
    );
}
