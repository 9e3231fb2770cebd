//! Graph files: graphty's `{nodes: [{id, data}], edges: [{id?, source, target, data}]}` and
//! networkx node-link `{nodes: [{id, ...}], links|edges: [{source, target, ...}]}`.
//!
//! Node ids must be unique (an error otherwise, naming both places). Edges without an id get a
//! stable one, `source->target` (with `#2`, `#3`… for parallel edges), so ids survive reloads of
//! an unchanged file. Edges whose endpoints are not nodes are kept and reported as warnings.
//!
//! Whether the edges have a direction is kept too ([`GraphDirection`]): the file's top-level
//! `directed` flag (networkx writes it), else networkx's reading of a node-link file without it
//! (`links`: undirected), else directed, as graphty reads every edge (from `source` to `target`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use schemascope_core::{Collection, CollectionKind, EdgeEnds, OwnedItem};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{LoadWarning, SourceError, position};
use crate::graph_check::{
    check, data_not_object, missing, not_object, not_scalar, offset_of, repeated,
};

/// The raw top level of a graph file.
#[derive(serde::Deserialize)]
struct RawGraph<'a> {
    #[serde(borrow)]
    nodes: Vec<&'a RawValue>,
    #[serde(borrow, default)]
    edges: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    links: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    directed: Option<Value>,
}

/// Whether a graph's edges have a direction, and what decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GraphDirection {
    /// True when an edge goes from its `source` to its `target`.
    pub directed: bool,
    /// What decided it.
    pub basis: DirectionBasis,
}

/// What decided a graph's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DirectionBasis {
    /// The file's top-level `directed` flag.
    FileFlag,
    /// No flag in a networkx node-link file (`links`): undirected, as networkx's
    /// `node_link_graph` reads it.
    NodeLinkDefault,
    /// No flag, edges under `edges`: directed, as graphty reads `source` → `target`.
    EdgeEnds,
}

impl GraphDirection {
    /// A phrase for messages: `directed (the file's "directed" flag)`.
    pub fn describe(&self) -> String {
        let basis = match self.basis {
            DirectionBasis::FileFlag => "the file's `directed` flag",
            DirectionBasis::NodeLinkDefault => {
                "a node-link file without a `directed` flag, read as networkx does"
            }
            DirectionBasis::EdgeEnds => {
                "no `directed` flag; each edge goes from its source to its target, as graphty reads it"
            }
        };
        format!("{} ({basis})", if self.directed { "directed" } else { "undirected" })
    }
}

fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Parses one node or edge; one nested past the parser's limit is kept, cut at
/// [`schemascope_core::capped::MAX_PARSE_DEPTH`] levels and named in a warning, instead of
/// failing the whole file.
fn capped(
    json: &str,
    what: &str,
    index: usize,
    warnings: &mut Vec<LoadWarning>,
) -> Result<Value, serde_json::Error> {
    let (value, cut) = schemascope_core::capped::parse_capped(json)?;
    if cut > 0 {
        warnings.push(LoadWarning::new(format!(
            "{what} #{index} is nested deeper than {} levels; below that it is kept as the text `{}`",
            schemascope_core::capped::MAX_PARSE_DEPTH,
            schemascope_core::capped::DEPTH_MARKER
        )));
    }
    Ok(value)
}

/// Parses a graph file's text into its `nodes` and `edges` collections and its direction.
pub(crate) fn load_graph(
    path: &Path,
    text: &str,
    warnings: &mut Vec<LoadWarning>,
) -> Result<(Vec<Collection>, GraphDirection), SourceError> {
    let shape_error = |offset: usize, message: String| {
        let (line, column) = position(text, offset);
        SourceError::Shape { path: path.to_path_buf(), line, column, message }
    };
    let raw: RawGraph<'_> = serde_json::from_str(text).map_err(|e| {
        let message = if e.is_data() {
            format!("{e}; a graph file needs a `nodes` array (and `edges` or `links`)")
        } else {
            e.to_string()
        };
        SourceError::Syntax {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    let direction = match (&raw.directed, &raw.links) {
        (Some(Value::Bool(directed)), _) => {
            GraphDirection { directed: *directed, basis: DirectionBasis::FileFlag }
        }
        (flag, links) => {
            if let Some(flag) = flag.as_ref().filter(|f| !f.is_null()) {
                warnings.push(LoadWarning::new(format!(
                    "the top-level `directed` is not true or false ({flag}); it was ignored"
                )));
            }
            match links {
                Some(_) => {
                    GraphDirection { directed: false, basis: DirectionBasis::NodeLinkDefault }
                }
                None => GraphDirection { directed: true, basis: DirectionBasis::EdgeEnds },
            }
        }
    };
    let edges_raw = match (raw.edges, raw.links) {
        (Some(e), None) | (None, Some(e)) => e,
        (None, None) => Vec::new(),
        (Some(mut e), Some(l)) => {
            warnings.push(LoadWarning::new(
                "the file has both `edges` and `links`; both were loaded as edges",
            ));
            e.extend(l);
            e
        }
    };

    if let Some(fast) = crate::graph_fast::load(text, &raw.nodes, &edges_raw, DANGLING_NAMED) {
        warnings.extend(fast.warnings);
        return Ok((vec![fast.nodes, fast.edges], direction));
    }
    load_parsed(text, &raw.nodes, &edges_raw, &shape_error, warnings).map(|c| (c, direction))
}

/// The reference path: every node and edge parsed into a value, checked, and written back.
pub(crate) fn load_parsed(
    text: &str,
    raw_nodes: &[&RawValue],
    edges_raw: &[&RawValue],
    shape_error: &dyn Fn(usize, String) -> SourceError,
    warnings: &mut Vec<LoadWarning>,
) -> Result<Vec<Collection>, SourceError> {
    // Every error found before anything is built (graph_check.rs): a file that fails costs
    // its text and a few words per element, not the parsed graph.
    let graphty = check(text, raw_nodes, edges_raw, shape_error)?;

    let mut parsed_nodes = Vec::with_capacity(raw_nodes.len());
    for (index, raw_node) in raw_nodes.iter().enumerate() {
        let offset = offset_of(text, raw_node);
        let value = capped(raw_node.get(), "node", index, warnings)
            .map_err(|e| shape_error(offset, e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(shape_error(offset, not_object("node", index)));
        };
        parsed_nodes.push((offset, map));
    }

    let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
    let mut nodes = Vec::with_capacity(parsed_nodes.len());
    for (index, (offset, mut map)) in parsed_nodes.into_iter().enumerate() {
        let id = match map.shift_remove("id") {
            Some(v) => id_text(&v).ok_or_else(|| {
                shape_error(offset, not_scalar("node", index, "id", &v.to_string()))
            })?,
            None => return Err(shape_error(offset, missing("node", index, "id"))),
        };
        if let Some((earlier, first)) = seen.insert(id.clone(), (index, offset)) {
            let (line, _) = position(text, first);
            return Err(shape_error(offset, repeated("node", &id, index, earlier, line)));
        }
        let data = if graphty {
            data_member(&mut map, offset, shape_error, "node", index)?
        } else {
            Value::Object(map)
        };
        nodes.push(OwnedItem::new(id, data));
    }

    let mut edges = Vec::with_capacity(edges_raw.len());
    let mut edge_index: HashMap<String, usize> = HashMap::new();
    let mut dangling = Vec::new();
    let mut dangling_count = 0usize;
    let mut pending_generated = Vec::new();
    for (index, raw_edge) in edges_raw.iter().enumerate() {
        let offset = offset_of(text, raw_edge);
        let value = capped(raw_edge.get(), "edge", index, warnings)
            .map_err(|e| shape_error(offset, e.to_string()))?;
        let Value::Object(mut map) = value else {
            return Err(shape_error(offset, not_object("edge", index)));
        };
        let mut end = |name: &str| -> Result<String, SourceError> {
            match map.shift_remove(name) {
                Some(v) => id_text(&v).ok_or_else(|| {
                    shape_error(offset, not_scalar("edge", index, name, &v.to_string()))
                }),
                None => Err(shape_error(offset, missing("edge", index, name))),
            }
        };
        let source = end("source")?;
        let target = end("target")?;
        for (side, id) in [("source", &source), ("target", &target)] {
            if !seen.contains_key(id) {
                // Only the first few are named, so only theirs are worth a line number (each
                // costs a pass over the text before it).
                if dangling.len() < DANGLING_NAMED {
                    let (line, _) = position(text, offset);
                    dangling.push(format!("edge #{index} (line {line}) {side} `{id}`"));
                }
                dangling_count += 1;
            }
        }
        let explicit = match map.shift_remove("id") {
            Some(v) => Some(id_text(&v).ok_or_else(|| {
                shape_error(offset, not_scalar("edge", index, "id", &v.to_string()))
            })?),
            None => None,
        };
        let data = if graphty {
            data_member(&mut map, offset, shape_error, "edge", index)?
        } else {
            Value::Object(map)
        };
        match explicit {
            Some(id) => {
                if let Some(&earlier) = edge_index.get(&id) {
                    let first = edges_raw.get(earlier).map_or(0, |raw| offset_of(text, raw));
                    let (line, _) = position(text, first);
                    return Err(shape_error(offset, repeated("edge", &id, index, earlier, line)));
                }
                edge_index.insert(id.clone(), index);
                edges.push((Some(id), source, target, data));
            }
            None => {
                pending_generated.push(edges.len());
                edges.push((None, source, target, data));
            }
        }
    }
    generate_edge_ids(&mut edges, &pending_generated);
    if dangling_count > 0 {
        warnings.push(dangling_warning(dangling_count, &dangling));
    }
    let edge_items = edges.into_iter().map(|(id, source, target, data)| OwnedItem {
        id: id.unwrap_or_default(),
        value: data,
        ends: Some(EdgeEnds { source: source.into(), target: target.into() }),
        metadata: None,
    });
    Ok(vec![
        Collection::from_values("nodes", CollectionKind::Nodes, nodes),
        Collection::from_values("edges", CollectionKind::Edges, edge_items),
    ])
}

/// The warning about `count` edge ends that name no node, the first few `named`.
pub(crate) fn dangling_warning(count: usize, named: &[String]) -> LoadWarning {
    let more = if count > named.len() {
        format!(" (+{} more)", count - named.len())
    } else {
        String::new()
    };
    LoadWarning::new(format!(
        "{count} edge endpoint(s) name no node; the edges are kept: {}{more}",
        named.join("; ")
    ))
}

/// An edge as read: its id (`None` until generated), source, target and data.
type ReadEdge = (Option<String>, String, String, Value);

/// Gives the edges at `pending` (in file order) the id `source->target`, `#k` added for the
/// k-th edge between the same ends (counting every edge), and `~n` added when the id is taken
/// by an explicit id or an earlier generated one. Generated ids come last so they can avoid
/// every explicit id.
fn generate_edge_ids(edges: &mut [ReadEdge], pending: &[usize]) {
    if pending.is_empty() {
        return;
    }
    let occurrences: Vec<usize> = {
        let mut parallel: HashMap<(&str, &str), usize> = HashMap::with_capacity(edges.len());
        edges
            .iter()
            .map(|(_, source, target, _)| {
                let seen = parallel.entry((source.as_str(), target.as_str())).or_insert(0);
                *seen += 1;
                *seen
            })
            .collect()
    };
    let mut generated: Vec<String> = pending
        .iter()
        .map(|&index| {
            let (_, source, target, _) = &edges[index];
            match occurrences[index] {
                1 => format!("{source}->{target}"),
                k => format!("{source}->{target}#{k}"),
            }
        })
        .collect();
    // Ids all distinct take no suffix, so the ids as generated stand; only a file where some
    // collide is walked id by id.
    let collide = {
        let mut ids: HashSet<&str> = HashSet::with_capacity(edges.len());
        let explicit = edges.iter().filter_map(|(id, ..)| id.as_deref());
        !explicit.chain(generated.iter().map(String::as_str)).all(|id| ids.insert(id))
    };
    if collide {
        let mut taken: HashSet<String> = edges.iter().filter_map(|(id, ..)| id.clone()).collect();
        for base in &mut generated {
            let mut id = base.clone();
            let mut n = 1;
            while taken.contains(&id) {
                n += 1;
                id = format!("{base}~{n}");
            }
            taken.insert(id.clone());
            *base = id;
        }
    }
    for (&index, id) in pending.iter().zip(generated) {
        edges[index].0 = Some(id);
    }
}

/// How many dangling edge ends a warning names (all are counted).
const DANGLING_NAMED: usize = 10;

fn data_member(
    map: &mut Map<String, Value>,
    offset: usize,
    shape_error: &dyn Fn(usize, String) -> SourceError,
    what: &str,
    index: usize,
) -> Result<Value, SourceError> {
    match map.shift_remove("data") {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(data)) => Ok(Value::Object(data)),
        Some(other) => Err(shape_error(offset, data_not_object(what, index, &other.to_string()))),
    }
}
