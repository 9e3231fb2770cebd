//! The fast graph loader against the reference path, on networkx's graphs and generated ones in
//! both file shapes: the same items (ids, text, ends), the same profiles and the same warnings —
//! or the fast loader gives up and the reference path loads the file.

use std::collections::HashMap;
use std::path::Path;

use schemascope_core::Collection;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::error::{LoadWarning, SourceError};
use crate::graph_fast::load_in_tasks;

/// Everything a tool can read of a collection: name, kind, each item's id, text and ends, and
/// the profile.
type Seen = (String, String, Vec<(String, String, Option<(String, String)>)>, String);

fn seen(collection: &Collection) -> Seen {
    let items = collection
        .items()
        .map(|i| {
            let ends = i.ends.map(|e| (e.source.to_string(), e.target.to_string()));
            (i.id.to_string(), i.json.to_string(), ends)
        })
        .collect();
    let profile = serde_json::to_string(collection.profile()).expect("profile serialises");
    (collection.name().into(), collection.kind().to_string(), items, profile)
}

/// Fails naming the first difference (whole collections are too long to read in a message).
fn same(fast: &Seen, reference: &Seen, text: &str) {
    let file: String = text.chars().take(200).collect();
    assert_eq!((&fast.0, &fast.1), (&reference.0, &reference.1), "{file}");
    assert_eq!(fast.2.len(), reference.2.len(), "{} of {file}", fast.0);
    for (k, (a, b)) in fast.2.iter().zip(&reference.2).enumerate() {
        assert_eq!(a, b, "{} #{k} of {file}", fast.0);
    }
    if fast.3 != reference.3 {
        let at = fast.3.chars().zip(reference.3.chars()).take_while(|(a, b)| a == b).count();
        let around =
            |p: &str| -> String { p.chars().skip(at.saturating_sub(300)).take(500).collect() };
        panic!(
            "{} profiles differ at character {at} of {file}:\nfast:      {}\nreference: {}",
            fast.0,
            around(&fast.3),
            around(&reference.3)
        );
    }
}

fn warnings_text(warnings: &[LoadWarning]) -> Vec<String> {
    warnings.iter().map(|w| format!("{w:?}")).collect()
}

/// The elements of a graph file as the loader reads them.
fn elements(text: &str) -> (Vec<&RawValue>, Vec<&RawValue>) {
    let top: HashMap<String, &RawValue> = serde_json::from_str(text).expect("an object");
    let list = |key: &str| -> Vec<&RawValue> {
        top.get(key)
            .map(|raw| serde_json::from_str(raw.get()).expect("an array"))
            .unwrap_or_default()
    };
    let mut edges = list("edges");
    edges.extend(list("links"));
    (list("nodes"), edges)
}

/// Loads `text` both ways with `task_elements` per task; true when the fast loader took it.
fn compare(text: &str, task_elements: usize) -> bool {
    let (nodes, edges) = elements(text);
    let shape_error = |offset: usize, message: String| SourceError::Shape {
        path: Path::new("g.json").to_path_buf(),
        line: offset,
        column: 0,
        message,
    };
    let mut reference_warnings = Vec::new();
    let reference =
        crate::graph::load_parsed(text, &nodes, &edges, &shape_error, &mut reference_warnings);
    let Some(fast) = load_in_tasks(text, &nodes, &edges, 10, task_elements) else {
        return false;
    };
    let reference = reference.expect("the reference path loads what the fast one does");
    same(&seen(&fast.nodes), &seen(&reference[0]), text);
    same(&seen(&fast.edges), &seen(&reference[1]), text);
    assert_eq!(warnings_text(&fast.warnings), warnings_text(&reference_warnings));
    true
}

/// A small deterministic generator (xorshift), so the cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value of the kinds real attributes have, including the ones writing back must get right.
fn attribute(rng: &mut Rng, depth: usize) -> Value {
    let scalars = [
        json!(0.1),
        json!(1.5),
        json!(1e20),
        json!(-0.0),
        json!(1.2345678901234567e-5),
        json!(123456789012345678u64),
        json!(-17),
        json!("plain"),
        json!("tab\there \"quoted\" é \u{1F600}"),
        json!("line\nbreak"),
        json!(null),
        json!(true),
        json!(""),
    ];
    match rng.below(if depth > 2 { 10 } else { 16 }) {
        13 => Value::Array((0..rng.below(4)).map(|_| attribute(rng, depth + 1)).collect()),
        14 | 15 => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                map.insert(format!("k{}", rng.below(6)), attribute(rng, depth + 1));
            }
            Value::Object(map)
        }
        k => scalars[k as usize % scalars.len()].clone(),
    }
}

/// A generated graph: `nodes` nodes with attributes (some keys first seen late), `edges` edges
/// with parallel ones, self-loops, a few explicit ids and a few ends that name no node.
fn generated(seed: u64, nodes: usize, edges: usize, graphty: bool, explicit_ids: bool) -> Value {
    let mut rng = Rng(seed);
    // Integer ids for even seeds, string ids for odd ones.
    let node_id = |k: u64| -> Value {
        if seed.is_multiple_of(2) { json!(k) } else { json!(format!("n{k}")) }
    };
    let node_values: Vec<Value> = (0..nodes)
        .map(|k| {
            let mut data = serde_json::Map::new();
            for a in 0..rng.below(4) {
                // Keys met for the first time late in the file.
                let key = if k > nodes / 2 && a == 0 {
                    format!("late{}", k % 3)
                } else {
                    format!("a{}", rng.below(5))
                };
                data.insert(key, attribute(&mut rng, 0));
            }
            let id = node_id(k as u64);
            if graphty {
                if rng.below(5) == 0 { json!({"id": id}) } else { json!({"id": id, "data": data}) }
            } else {
                let mut node = serde_json::Map::new();
                node.insert("id".into(), id);
                node.extend(data);
                Value::Object(node)
            }
        })
        .collect();
    let edge_values: Vec<Value> = (0..edges)
        .map(|e| {
            let end = |rng: &mut Rng| -> Value {
                match rng.below(40) {
                    0 => json!(format!("ghost{}", rng.below(3))),
                    _ => node_id(rng.below(nodes.max(1) as u64 / 2 + 1)),
                }
            };
            let (source, target) = (end(&mut rng), end(&mut rng));
            let mut edge = serde_json::Map::new();
            edge.insert("source".into(), source);
            if explicit_ids && rng.below(3) == 0 {
                edge.insert("id".into(), json!(format!("e{e}")));
            }
            edge.insert("target".into(), target);
            let mut data = serde_json::Map::new();
            if rng.below(2) == 0 {
                data.insert("weight".into(), attribute(&mut rng, 1));
            }
            if graphty {
                edge.insert("data".into(), Value::Object(data));
            } else {
                edge.extend(data);
            }
            Value::Object(edge)
        })
        .collect();
    json!({"directed": true, "nodes": node_values, "edges": edge_values})
}

#[test]
fn generated_graphs_load_the_same_both_ways() {
    let mut taken = 0;
    for seed in 1..=24u64 {
        for graphty in [false, true] {
            let graph = generated(
                seed * 7919,
                60 + seed as usize * 5,
                150,
                graphty,
                seed.is_multiple_of(3),
            );
            for text in [graph.to_string(), serde_json::to_string_pretty(&graph).expect("text")] {
                for task_elements in [1, 7, 1 << 20] {
                    taken += usize::from(compare(&text, task_elements));
                }
            }
        }
    }
    // Every generated shape is one the fast loader takes.
    assert_eq!(taken, 24 * 2 * 2 * 3);
}

#[test]
fn networkx_graphs_load_the_same_both_ways() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../graph/tests/data");
    for name in ["karate", "les_miserables", "directed_random"] {
        let text = std::fs::read_to_string(data.join(format!("{name}.json"))).expect("fixture");
        let fixture: Value = serde_json::from_str(&text).expect("fixture");
        let ids = fixture["nodes"].as_array().expect("nodes").clone();
        let edges = fixture["edges"].as_array().expect("edges").clone();
        // As networkx's node_link_data writes it, and as graphty's shape.
        let link = json!({
            "directed": fixture["directed"],
            "nodes": ids.iter().enumerate().map(|(k, id)| json!({"id": id, "rank": k})).collect::<Vec<_>>(),
            "links": edges.iter().map(|e| json!({"source": e[0], "target": e[1], "weight": e[2]})).collect::<Vec<_>>(),
        });
        let graphty = json!({
            "nodes": ids.iter().map(|id| json!({"id": id, "data": {}})).collect::<Vec<_>>(),
            "edges": edges.iter().map(|e| json!({"source": e[0], "target": e[1], "data": {"weight": e[2]}})).collect::<Vec<_>>(),
        });
        for graph in [link, graphty] {
            for task_elements in [3, 1 << 20] {
                assert!(compare(&graph.to_string(), task_elements), "{name}");
            }
        }
    }
}

#[test]
fn what_the_fast_loader_gives_up_on_is_left_to_the_reference_path() {
    let declined = [
        // A float id, an escaped id, a repeated key.
        json!({"nodes": [{"id": 1.5}], "edges": []}).to_string(),
        r#"{"nodes": [{"id": "\u0061"}], "edges": []}"#.to_string(),
        r#"{"nodes": [{"id": 1, "a": 1, "a": 2}], "edges": []}"#.to_string(),
        // A repeated node id and a repeated edge id (errors the reference path reports).
        json!({"nodes": [{"id": 1}, {"id": 1}], "edges": []}).to_string(),
        json!({"nodes": [{"id": 1}], "edges": [{"source": 1, "target": 1, "id": "e"}, {"source": 1, "target": 1, "id": "e"}]}).to_string(),
        // Generated ids that collide: `a->b` → `c` and `a` → `b->c`.
        json!({"nodes": [{"id": "a->b"}, {"id": "c"}, {"id": "a"}, {"id": "b->c"}],
               "edges": [{"source": "a->b", "target": "c"}, {"source": "a", "target": "b->c"}]}).to_string(),
        // An explicit id equal to a generated one.
        json!({"nodes": [{"id": "a"}, {"id": "b"}],
               "edges": [{"source": "a", "target": "b", "id": "a->b#2"}, {"source": "a", "target": "b"}, {"source": "a", "target": "b"}]}).to_string(),
        // An edge without a target, graphty data that is not an object.
        json!({"nodes": [{"id": 1}], "edges": [{"source": 1}]}).to_string(),
        json!({"nodes": [{"id": 1, "data": {}}], "edges": [{"source": 1, "target": 1, "data": 3}]}).to_string(),
    ];
    for text in declined {
        assert!(!compare(&text, 1 << 20), "{text}");
    }
    // Names with `->` or `#` that do not collide are checked and taken.
    let hashes = json!({"nodes": [{"id": "a#1"}, {"id": "b->"}],
        "edges": [{"source": "a#1", "target": "b->"}, {"source": "a#1", "target": "b->"}, {"source": "b->", "target": "a#1", "id": "x"}]});
    assert!(compare(&hashes.to_string(), 1 << 20));
}

/// Tester round: nodes with no attribute (networkx's `node_link_data` of les_miserables) made the
/// file graphty's, and every edge's `weight` was dropped. An edge attribute of its own makes the
/// file node-link's, both ways.
#[test]
fn bare_nodes_keep_their_edges_attributes() {
    let text = json!({
        "nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
        "links": [{"source": "a", "target": "b", "w": 1}, {"source": "b", "target": "c"}]
    })
    .to_string();
    for task_elements in [1, 1000] {
        assert!(compare(&text, task_elements), "the fast loader reads it");
        let (nodes, edges) = elements(&text);
        let fast = load_in_tasks(&text, &nodes, &edges, 10, task_elements).expect("fast");
        let first = fast.edges.items().next().expect("an edge").json.to_string();
        assert_eq!(first, r#"{"w":1}"#);
    }
    // graphty's own shape still reads `data`.
    let graphty = json!({
        "nodes": [{"id": "a", "data": {"k": 1}}, {"id": "b"}],
        "edges": [{"source": "a", "target": "b", "data": {"w": 2}}]
    })
    .to_string();
    assert!(compare(&graphty, 1000));
    let (nodes, edges) = elements(&graphty);
    let fast = load_in_tasks(&graphty, &nodes, &edges, 10, 1000).expect("fast");
    assert_eq!(fast.edges.items().next().expect("an edge").json.to_string(), r#"{"w":2}"#);
    assert_eq!(fast.nodes.items().next().expect("a node").json.to_string(), r#"{"k":1}"#);
}
