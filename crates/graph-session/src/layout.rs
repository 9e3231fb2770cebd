//! Computing node positions for a session's layout (type + options) on its graph.

use crate::style::ElementKind;
use crate::view::{Dimension, LayoutType, MAX_COORDINATE};
use schemascope_core::ceilings::Ceiling;
use schemascope_graph::GraphData;
use schemascope_graph::layout::{self, ForceOptions, Positions};
use serde_json::{Map, Value, json};

use crate::data::SessionData;
use crate::error::GraphSessionError;
use crate::state::NodePositions;

/// Above this many nodes the default layout is a spiral: force-directed costs n² per iteration.
pub const FORCE_DEFAULT_MAX_NODES: usize = 5_000;

/// Every layout type's name, for messages and query_graph.
pub const LAYOUT_NAMES: &[&str] =
    &["forceDirected", "circular", "random", "spiral", "shell", "grid", "fixed"];

/// The options each layout accepts.
fn accepted(layout_type: LayoutType) -> &'static [&'static str] {
    match layout_type {
        LayoutType::ForceDirected => &["iterations", "seed", "tolerance"],
        LayoutType::Circular => &["radius"],
        LayoutType::Random => &["seed", "size"],
        LayoutType::Spiral | LayoutType::Grid => &["spacing"],
        LayoutType::Shell => &["shells", "spacing"],
        LayoutType::Fixed => &["x", "y", "z"],
    }
}

/// The largest radius, spacing or size a layout takes.
const MAX_EXTENT: f64 = 1e9;

/// The most iterations a saved layout may say it ran (its `iterations` option's bound).
pub const MAX_SAVED_ITERATIONS: usize = MAX_EXTENT as usize;

fn number(options: &Map<String, Value>, key: &str, default: f64) -> Result<f64, GraphSessionError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(default),
        // Bounded: a radius or spacing near f64::MAX puts positions, and the camera framing
        // them, at infinity (NaN once subtracted).
        Some(v) => v
            .as_f64()
            .filter(|f| f.is_finite() && (0.0..=MAX_EXTENT).contains(f))
            .ok_or_else(|| {
                GraphSessionError::InvalidParams(format!(
                    "layout option `{key}` must be a number from 0 to {MAX_EXTENT:e}, not {v}"
                ))
            }),
    }
}

/// `options` checked for `layout_type` as set_layout takes them: an object (or nothing) of the
/// layout's own options, each of its type and within its range. The same check applies to the
/// options read back from a session file.
pub fn check_options(
    layout_type: LayoutType,
    options: &Value,
) -> Result<Map<String, Value>, GraphSessionError> {
    let options = match options {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        other => {
            return Err(GraphSessionError::InvalidParams(format!(
                "layout `options` must be an object, not {other}"
            )));
        }
    };
    let allowed = accepted(layout_type);
    if let Some(unknown) = options.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(GraphSessionError::InvalidParams(format!(
            "this layout takes no option `{unknown}`; its options: {}",
            allowed.join(", ")
        )));
    }
    for key in options.keys() {
        match key.as_str() {
            "shells" => {
                shells(&options)?;
            }
            "x" | "y" | "z" => {
                property_path(&options, key)?;
            }
            numeric => {
                number(&options, numeric, 0.0)?;
            }
        }
    }
    Ok(options)
}

/// The `shells` option: node counts per shell.
fn shells(options: &Map<String, Value>) -> Result<Vec<usize>, GraphSessionError> {
    match options.get("shells") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(sizes)) => sizes
            .iter()
            .map(|s| {
                s.as_u64().and_then(|s| usize::try_from(s).ok()).ok_or_else(|| {
                    GraphSessionError::InvalidParams(format!(
                        "layout option `shells` lists node counts; `{s}` is not one"
                    ))
                })
            })
            .collect(),
        Some(other) => Err(GraphSessionError::InvalidParams(format!(
            "layout option `shells` must be a list of node counts, not {other}"
        ))),
    }
}

/// The `x`, `y` or `z` option of the fixed layout: a property path (default the key itself).
fn property_path(
    options: &Map<String, Value>,
    key: &str,
) -> Result<Vec<String>, GraphSessionError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(vec![key.to_string()]),
        Some(Value::String(p)) => Ok(p.split('.').map(str::to_string).collect()),
        Some(other) => Err(GraphSessionError::InvalidParams(format!(
            "layout option `{key}` is a property path, not {other}"
        ))),
    }
}

/// The layout type the session starts with for a graph of `nodes` nodes.
pub fn default_type(nodes: usize) -> LayoutType {
    if nodes <= FORCE_DEFAULT_MAX_NODES { LayoutType::ForceDirected } else { LayoutType::Spiral }
}

/// Positions for `layout_type` with `options`; returns them and the options as applied.
pub fn compute(
    data: &SessionData,
    layout_type: LayoutType,
    options: &Value,
    dimension: Dimension,
) -> Result<(NodePositions, bool, Value), GraphSessionError> {
    let options = check_options(layout_type, options)?;
    let g = data.graph();
    let n = g.node_count();
    let three_d = dimension == Dimension::ThreeD;
    // Layout units: spacing ~10 between neighbours, so the page's default zoom suits any layout.
    let result: Positions = match layout_type {
        LayoutType::ForceDirected => {
            // Within the operator's ceiling, which a lower setting lowers the default to.
            let default_iterations =
                (if n <= 1_000 { 500 } else { (500_000_000 / (n * n).max(1)).clamp(20, 500) })
                    .min(usize::try_from(Ceiling::Iterations.get()).unwrap_or(usize::MAX));
            let force = ForceOptions {
                max_iterations: number(&options, "iterations", default_iterations as f64)? as usize,
                three_d,
                seed: number(&options, "seed", 1.0)? as u64,
                tolerance: number(&options, "tolerance", ForceOptions::default().tolerance)?,
            };
            let mut p = super::algorithms::interruptible("force-directed layout", || {
                layout::force_directed(&g, &force)
            })?;
            // Fruchterman–Reingold works in a unit box; scale it so neighbours are ~10 apart.
            let scale = 10.0 * (n.max(1) as f64).powf(if three_d { 1.0 / 3.0 } else { 0.5 });
            p.positions.iter_mut().for_each(|q| q.iter_mut().for_each(|x| *x *= scale));
            p
        }
        LayoutType::Circular => layout::circular(
            &g,
            number(&options, "radius", (n as f64 * 10.0 / std::f64::consts::TAU).max(10.0))?,
        ),
        LayoutType::Random => layout::random(
            &g,
            number(&options, "size", 10.0 * (n.max(1) as f64).sqrt())?,
            number(&options, "seed", 1.0)? as u64,
            three_d,
        ),
        LayoutType::Spiral => layout::spiral(&g, number(&options, "spacing", 5.0)?),
        LayoutType::Grid => layout::grid(&g, number(&options, "spacing", 10.0)?),
        LayoutType::Shell => {
            layout::shell(&g, &shells(&options)?, number(&options, "spacing", 20.0)?)
        }
        LayoutType::Fixed => fixed(data, &g, &options)?,
    };
    let applied = if options.is_empty() { json!({}) } else { Value::Object(options) };
    Ok((
        NodePositions {
            ids: g.node_ids.clone(),
            positions: result.positions,
            iterations: result.iterations,
        },
        result.settled,
        applied,
    ))
}

/// Positions read from the nodes' data at the `x`, `y`, `z` paths (default `x`, `y`, `z`).
fn fixed(
    data: &SessionData,
    g: &GraphData,
    options: &Map<String, Value>,
) -> Result<Positions, GraphSessionError> {
    let paths =
        [property_path(options, "x")?, property_path(options, "y")?, property_path(options, "z")?];
    let nodes = data.collection(ElementKind::Node);
    let index = data.id_index(ElementKind::Node);
    let mut missing = 0usize;
    let positions = g
        .node_ids
        .iter()
        .map(|id| {
            let value = index
                .get(id)
                .and_then(|&i| nodes.item(i))
                .and_then(|item| item.value().ok())
                .unwrap_or(Value::Null);
            let mut p = [0.0; 3];
            for (d, path) in paths.iter().enumerate() {
                let v = path.iter().try_fold(&value, |v, key| v.get(key)).and_then(Value::as_f64);
                match v {
                    // Within the camera's bound: a coordinate near f64::MAX frames the graph at
                    // infinity (see `view::MAX_COORDINATE`).
                    Some(v) if v.is_finite() && v.abs() <= MAX_COORDINATE => p[d] = v,
                    // z is optional: 2D data has none.
                    _ if d == 2 => {}
                    _ => missing += 1,
                }
            }
            p
        })
        .collect();
    if missing > 0 && missing == 2 * g.node_count() {
        return Err(GraphSessionError::InvalidParams(format!(
            "no node has numeric `{}` and `{}` properties; give the paths, e.g. options {{\"x\": \"pos.x\", \"y\": \"pos.y\"}}",
            paths[0].join("."),
            paths[1].join(".")
        )));
    }
    Ok(Positions { positions, settled: true, iterations: 0 })
}
