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

fn offset_of(text: &str, raw: &RawValue) -> usize {
    (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
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

    let mut parsed_nodes = Vec::with_capacity(raw.nodes.len());
    for (index, raw_node) in raw.nodes.iter().enumerate() {
        let offset = offset_of(text, raw_node);
        let value = capped(raw_node.get(), "node", index, warnings)
            .map_err(|e| shape_error(offset, e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(shape_error(
                offset,
                format!("node #{index} is not an object: each node needs at least an `id`"),
            ));
        };
        parsed_nodes.push((offset, map));
    }
    // graphty nodes carry only `id` and `data`; anything else means node-link attributes.
    let graphty = parsed_nodes.iter().all(|(_, m)| m.keys().all(|k| k == "id" || k == "data"));

    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut nodes = Vec::with_capacity(parsed_nodes.len());
    for (index, (offset, mut map)) in parsed_nodes.into_iter().enumerate() {
        let id = match map.shift_remove("id") {
            Some(v) => id_text(&v).ok_or_else(|| {
                shape_error(
                    offset,
                    format!("node #{index} has an `id` that is neither a string nor a number: {v}"),
                )
            })?,
            None => return Err(shape_error(offset, format!("node #{index} has no `id`"))),
        };
        if let Some(first) = seen.insert(id.clone(), offset) {
            let (line, _) = position(text, first);
            return Err(shape_error(
                offset,
                format!("duplicate node id `{id}` (first defined at line {line})"),
            ));
        }
        let data = if graphty {
            data_member(&mut map, offset, &shape_error, "node", index)?
        } else {
            Value::Object(map)
        };
        nodes.push(OwnedItem::new(id, data));
    }

    let mut edges = Vec::with_capacity(edges_raw.len());
    let mut edge_ids: HashSet<String> = HashSet::new();
    let mut parallel: HashMap<(String, String), usize> = HashMap::new();
    let mut dangling = Vec::new();
    let mut pending_generated = Vec::new();
    for (index, raw_edge) in edges_raw.iter().enumerate() {
        let offset = offset_of(text, raw_edge);
        let value = capped(raw_edge.get(), "edge", index, warnings)
            .map_err(|e| shape_error(offset, e.to_string()))?;
        let Value::Object(mut map) = value else {
            return Err(shape_error(
                offset,
                format!("edge #{index} is not an object: each edge needs `source` and `target`"),
            ));
        };
        let mut end = |name: &str| -> Result<String, SourceError> {
            match map.shift_remove(name) {
                Some(v) => {
                    id_text(&v).ok_or_else(|| shape_error(offset, format!("edge #{index} has a `{name}` that is neither a string nor a number: {v}")))
                }
                None => Err(shape_error(offset, format!("edge #{index} has no `{name}`"))),
            }
        };
        let source = end("source")?;
        let target = end("target")?;
        for (side, id) in [("source", &source), ("target", &target)] {
            if !seen.contains_key(id) {
                let (line, _) = position(text, offset);
                dangling.push(format!("edge #{index} (line {line}) {side} `{id}`"));
            }
        }
        let explicit = match map.shift_remove("id") {
            Some(v) => Some(id_text(&v).ok_or_else(|| {
                shape_error(
                    offset,
                    format!("edge #{index} has an `id` that is neither a string nor a number: {v}"),
                )
            })?),
            None => None,
        };
        let data = if graphty {
            data_member(&mut map, offset, &shape_error, "edge", index)?
        } else {
            Value::Object(map)
        };
        let occurrence = parallel.entry((source.clone(), target.clone())).or_insert(0);
        *occurrence += 1;
        let occurrence = *occurrence;
        match explicit {
            Some(id) => {
                if !edge_ids.insert(id.clone()) {
                    return Err(shape_error(offset, format!("duplicate edge id `{id}`")));
                }
                edges.push((Some(id), source, target, data, occurrence));
            }
            None => {
                pending_generated.push(edges.len());
                edges.push((None, source, target, data, occurrence));
            }
        }
    }
    // Generated ids come last so they can avoid every explicit id.
    for index in pending_generated {
        let (_, source, target, _, occurrence) = &edges[index];
        let base = if *occurrence == 1 {
            format!("{source}->{target}")
        } else {
            format!("{source}->{target}#{occurrence}")
        };
        let mut id = base.clone();
        let mut n = 1;
        while edge_ids.contains(&id) {
            n += 1;
            id = format!("{base}~{n}");
        }
        edge_ids.insert(id.clone());
        edges[index].0 = Some(id);
    }
    if !dangling.is_empty() {
        let shown: Vec<&str> = dangling.iter().take(10).map(String::as_str).collect();
        let more = if dangling.len() > 10 {
            format!(" (+{} more)", dangling.len() - 10)
        } else {
            String::new()
        };
        warnings.push(LoadWarning::new(format!(
            "{} edge endpoint(s) name no node; the edges are kept: {}{more}",
            dangling.len(),
            shown.join("; ")
        )));
    }
    let edge_items = edges.into_iter().map(|(id, source, target, data, _)| OwnedItem {
        id: id.unwrap_or_default(),
        value: data,
        ends: Some(EdgeEnds { source: source.into(), target: target.into() }),
        metadata: None,
    });
    Ok((
        vec![
            Collection::from_values("nodes", CollectionKind::Nodes, nodes),
            Collection::from_values("edges", CollectionKind::Edges, edge_items),
        ],
        direction,
    ))
}

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
        Some(other) => Err(shape_error(
            offset,
            format!("{what} #{index} has `data` that is not an object: {other}"),
        )),
    }
}
