//! Computed styles for every element, and the scene the web view draws: node positions, edges,
//! and each element's render style. Elements matched by the same set of layers share one computed
//! style, so the cost is one selector pass per layer plus one merge per distinct layer set.

use std::collections::HashMap;

use schemascope_session::layers::StyleLayers;
use schemascope_session::style::{ComputedStyle, ElementKind, compute};
use serde_json::{Value, json};

use crate::graph_session::data::{Matches, SessionData};
use crate::graph_session::session::GraphSession;
use crate::result::ToolError;

/// The computed style of every element of `kind`: an index per element into a list of distinct
/// styles.
#[derive(Debug, Clone)]
pub struct StyleTable {
    /// Per element (item order), its index in `styles`.
    pub style_of: Vec<u32>,
    /// The distinct computed styles.
    pub styles: Vec<ComputedStyle>,
}

/// Computes every element's style. A layer whose selector fails is skipped (and named in the
/// returned warnings) rather than blanking the whole view.
pub fn style_table(data: &SessionData, layers: &StyleLayers, kind: ElementKind) -> (StyleTable, Vec<String>) {
    let n = data.collection(kind).len();
    let mut warnings = Vec::new();
    let mut applying: Vec<(usize, Matches)> = Vec::new();
    for (i, layer) in layers.layers.iter().enumerate() {
        let Some(rule) = layer.rule(kind) else { continue };
        match data.rule_matches(kind, rule) {
            Ok(m) => applying.push((i, m)),
            Err(e) => warnings.push(format!("layer `{}` skipped: {e}", layer.name)),
        }
    }
    let words = applying.len().div_ceil(64).max(1);
    let mut masks = vec![0u64; n * words];
    for (bit, (_, matches)) in applying.iter().enumerate() {
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        for (e, &hit) in matches.iter().enumerate() {
            if hit {
                masks[e * words + word] |= mask;
            }
        }
    }
    let mut distinct: HashMap<&[u64], u32> = HashMap::new();
    let mut styles = Vec::new();
    let mut style_of = Vec::with_capacity(n);
    for e in 0..n {
        let key = &masks[e * words..(e + 1) * words];
        let index = *distinct.entry(key).or_insert_with(|| {
            let matching: Vec<usize> = applying.iter().enumerate().filter(|(bit, _)| key[bit / 64] & (1 << (bit % 64)) != 0).map(|(_, (i, _))| *i).collect();
            styles.push(compute(&layers.layers, kind, &matching));
            (styles.len() - 1) as u32
        });
        style_of.push(index);
    }
    (StyleTable { style_of, styles }, warnings)
}

/// The flat style the page draws a node with.
fn render_node(style: &Value) -> Value {
    json!({
        "color": style.pointer("/texture/color").cloned().unwrap_or(json!("#ffffff")),
        "opacity": style.pointer("/texture/opacity").cloned().unwrap_or(json!(1.0)),
        "size": style.pointer("/shape/size").cloned().unwrap_or(json!(1.0)),
        "shape": style.pointer("/shape/type").cloned().unwrap_or(json!("sphere")),
        "glow": style.pointer("/effect/glow").cloned(),
        "outline": style.pointer("/effect/outline").cloned(),
        "hidden": style.get("enabled").and_then(Value::as_bool).is_some_and(|e| !e),
    })
}

/// The flat style the page draws an edge with.
fn render_edge(style: &Value) -> Value {
    json!({
        "color": style.pointer("/line/color").cloned().unwrap_or(json!("#888888")),
        "opacity": style.pointer("/line/opacity").cloned().unwrap_or(json!(1.0)),
        "width": style.pointer("/line/width").cloned().unwrap_or(json!(0.5)),
        "arrow": style.pointer("/arrowHead/type").cloned(),
        "hidden": style.get("enabled").and_then(Value::as_bool).is_some_and(|e| !e),
    })
}

/// The scene: everything the page needs to draw the session, at one version.
pub fn scene(session: &GraphSession) -> Result<Value, ToolError> {
    // Read the version first: a change after this point sends an event, so the page refetches.
    let version = session.version();
    let state = session.state();
    let data = session.data();
    let (node_styles, mut warnings) = style_table(&data, &state.layers, ElementKind::Node);
    let (edge_styles, edge_warnings) = style_table(&data, &state.layers, ElementKind::Edge);
    warnings.extend(edge_warnings);
    let positions = state.positions.by_id();
    let nodes_collection = data.collection(ElementKind::Node);
    let mut node_index: HashMap<&str, usize> = HashMap::new();
    let nodes: Vec<Value> = nodes_collection
        .items()
        .map(|item| {
            node_index.entry(item.id).or_insert(item.index);
            let p = positions.get(item.id).copied().unwrap_or([0.0; 3]);
            json!({"id": item.id, "p": [round(p[0]), round(p[1]), round(p[2])], "s": node_styles.style_of.get(item.index).copied().unwrap_or(0)})
        })
        .collect();
    let edges: Vec<Value> = data
        .collection(ElementKind::Edge)
        .items()
        .filter_map(|item| {
            let ends = item.ends?;
            let (a, b) = (node_index.get(&*ends.source)?, node_index.get(&*ends.target)?);
            Some(json!({"id": item.id, "a": a, "b": b, "s": edge_styles.style_of.get(item.index).copied().unwrap_or(0)}))
        })
        .collect();
    Ok(json!({
        "source": session.name(),
        "version": version,
        "dimension": state.view.dimension,
        "camera": state.view.camera,
        "layout": {"type": state.layout.layout_type, "settled": state.layout.settled},
        "selection": state.selection,
        "nodes": nodes,
        "edges": edges,
        "nodeStyles": node_styles.styles.iter().map(|s| render_node(&s.computed_style)).collect::<Vec<_>>(),
        "edgeStyles": edge_styles.styles.iter().map(|s| render_edge(&s.computed_style)).collect::<Vec<_>>(),
        "warnings": warnings,
    }))
}

/// Three decimals are plenty on screen and keep the scene small.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
