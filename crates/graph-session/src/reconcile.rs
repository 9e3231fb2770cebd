//! Bringing a session's state in line with the data it is opened on or reloaded to. Algorithm
//! results describe the data they were computed on: results of other data (their fingerprint
//! differs, or they have none to compare) are dropped from the elements and their runs marked
//! stale in the history, so nothing the model reads describes a graph that is gone. Selected ids
//! and the explicit ids of style layers that no longer exist are removed; a layer left with no id
//! stays (it is the person's or model's work) and matches nothing, as describe_styles shows.

use std::collections::HashSet;

use schemascope_docs::fingerprint::Fnv64;
use schemascope_sources::Source;

use crate::data::graph_collections;
use crate::error::GraphSessionError;
use crate::state::{Part, SessionState};

/// A hash of the loaded graph — every node and edge id, every edge's ends, every item's data —
/// stored with each algorithm run (FNV-1a: written to the session file and compared across runs).
pub fn data_fingerprint(base: &Source) -> Result<String, GraphSessionError> {
    let (nodes, edges) = graph_collections(base)?;
    let mut hash = Fnv64::default();
    for collection in [nodes, edges] {
        hash.write_str(collection.name());
        for item in collection.items() {
            hash.write_str(item.id);
            if let Some(ends) = item.ends {
                hash.write_str(ends.source);
                hash.write_str(ends.target);
            }
            hash.write_str(item.json);
        }
    }
    Ok(format!("{:016x}", hash.finish()))
}

/// What reconciling changed: the parts to save and one note per kind of change.
#[derive(Debug, Default)]
pub struct Reconciled {
    /// Parts of the state that changed.
    pub parts: Vec<Part>,
    /// What changed, in words (for the change event and the log).
    pub notes: Vec<String>,
}

/// Brings `state` in line with `base`, whose fingerprint is `fingerprint`; `why` says what
/// happened to the data (`data reloaded at …`), for the stale runs' reason.
pub fn reconcile(
    state: &mut SessionState,
    base: &Source,
    fingerprint: &str,
    why: &str,
) -> Result<Reconciled, GraphSessionError> {
    let mut out = Reconciled::default();
    let stale_keys: Vec<String> = state
        .results
        .iter()
        .filter(|(_, o)| o.data_fingerprint.as_deref() != Some(fingerprint))
        .map(|(k, _)| k.clone())
        .collect();
    for key in &stale_keys {
        state.results.remove(key);
        out.parts.push(Part::Results(key.clone()));
    }
    let mut marked = 0;
    for run in state
        .history
        .iter_mut()
        .filter(|r| !r.stale && r.data_fingerprint.as_deref() != Some(fingerprint))
    {
        run.stale = true;
        run.stale_reason = Some(match run.data_fingerprint {
            Some(_) => format!(
                "{why}; its results were computed on the earlier data and removed from the elements — run it again"
            ),
            None => format!(
                "{why}; the run records no data fingerprint, so its results cannot be checked and were removed — run it again"
            ),
        });
        marked += 1;
    }
    if marked > 0 {
        out.parts.push(Part::History);
        let names: Vec<String> = stale_keys.iter().map(|k| k.replacen('.', ":", 1)).collect();
        out.notes.push(format!(
            "{why}: results of {} removed from the elements, {marked} history run(s) marked stale",
            if names.is_empty() { "no current algorithm".to_string() } else { names.join(", ") }
        ));
    } else if !stale_keys.is_empty() {
        out.parts.push(Part::History);
    }

    let (nodes, edges) = graph_collections(base)?;
    let node_ids: HashSet<&str> = nodes.items().map(|i| i.id).collect();
    let edge_ids: HashSet<&str> = edges.items().map(|i| i.id).collect();
    let prune = |ids: &mut Vec<String>, known: &HashSet<&str>| -> Vec<String> {
        let (kept, gone): (Vec<String>, Vec<String>) =
            std::mem::take(ids).into_iter().partition(|id| known.contains(id.as_str()));
        *ids = kept;
        gone
    };
    let gone_nodes = prune(&mut state.selection.nodes, &node_ids);
    let gone_edges = prune(&mut state.selection.edges, &edge_ids);
    if !gone_nodes.is_empty() || !gone_edges.is_empty() {
        out.parts.push(Part::Selection);
        let listed: Vec<String> =
            gone_nodes.iter().chain(&gone_edges).take(10).map(|id| format!("`{id}`")).collect();
        let more = (gone_nodes.len() + gone_edges.len()).saturating_sub(listed.len());
        out.notes.push(format!(
            "{why}: {} selected node(s) and {} selected edge(s) no longer exist and were unselected: {}{}",
            gone_nodes.len(),
            gone_edges.len(),
            listed.join(", "),
            if more > 0 { format!(" (+{more} more)") } else { String::new() }
        ));
    }

    let mut layers_changed = false;
    for layer in &mut state.layers.layers {
        let mut gone = 0;
        let mut empty = false;
        for (rule, known) in [(layer.node.as_mut(), &node_ids), (layer.edge.as_mut(), &edge_ids)] {
            if let Some(ids) = rule.and_then(|r| r.ids.as_mut()) {
                gone += prune(ids, known).len();
                empty |= ids.is_empty();
            }
        }
        if gone > 0 {
            layers_changed = true;
            let left = if empty {
                "; it now matches no element (remove it with clear_styles)"
            } else {
                ""
            };
            out.notes.push(format!(
                "{why}: style layer `{}` lost {gone} element id(s) that no longer exist{left}",
                layer.name
            ));
        }
    }
    if layers_changed {
        out.parts.push(Part::Layers);
    }
    Ok(out)
}
