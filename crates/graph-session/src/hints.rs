//! What only the graph session knows about a property no element has: that it is an algorithm
//! result, which algorithm writes it, where, and whether that algorithm has run. Shared by the
//! selectors' empty-match hints and describe_property.

use crate::style::ElementKind;
use schemascope_core::PropertyPath;
use schemascope_sources::Source;

use crate::algorithms::{self, ALGORITHMS, NAMESPACE};
use crate::data::{RESULTS_ROOT, graph_collections};
use crate::state::AlgorithmRun;

/// Which algorithm writes `name` (an algorithm's type, one of its result names, or its full
/// result path), and where, for a property the elements of `kind` do not have; `history` (the
/// session's runs) tells a run whose results were removed from one that never ran. `None` when
/// no algorithm writes it or `source` is not a graph.
pub fn algorithm_hint(
    source: &Source,
    kind: ElementKind,
    name: &str,
    history: &[AlgorithmRun],
) -> Option<String> {
    let last = name.rsplit('.').next().unwrap_or(name);
    // An algorithm named in the path wins (`…closeness.score`: several algorithms write `score`),
    // then one that writes the last name.
    let named = ALGORITHMS
        .iter()
        .find(|a| name.split('.').any(|s| s.eq_ignore_ascii_case(a.algorithm_type)));
    let info = named.or_else(|| {
        ALGORITHMS.iter().find(|a| {
            a.node_properties.iter().chain(a.edge_properties).any(|p| p.eq_ignore_ascii_case(last))
        })
    })?;
    let ran = has_results(source, info.algorithm_type)?;
    let (here, there, there_noun) = match kind {
        ElementKind::Node => (info.node_properties, info.edge_properties, "edges"),
        ElementKind::Edge => (info.edge_properties, info.node_properties, "nodes"),
    };
    let paths = |names: &[&str]| {
        names
            .iter()
            .map(|p| format!("`{}`", algorithms::property_path(info.algorithm_type, p)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let run = format!("run_algorithm `{NAMESPACE}:{}`", info.algorithm_type);
    Some(match (here.is_empty(), ran) {
        (false, true) => format!(
            "`{name}` is an algorithm result: {run} has run and wrote {} here; use that path.",
            paths(here)
        ),
        (false, false) => {
            match history.iter().rev().find(|r| r.algorithm_type == info.algorithm_type && r.stale)
            {
                Some(stale) => format!(
                    "`{name}` is written by {run}, which ran at {} but its results were removed from the elements ({}): run it again, then use {}.",
                    stale.run_at,
                    stale.stale_reason.as_deref().unwrap_or("the data changed since"),
                    paths(here)
                ),
                None => format!(
                    "`{name}` is written by {run}, which has not run: run it first, then use {}.",
                    paths(here)
                ),
            }
        }
        (true, _) if !there.is_empty() => format!(
            "`{name}` comes from {run}, which writes only on the {there_noun} ({}).",
            paths(there)
        ),
        (true, _) => format!(
            "{run} writes graph-level values only (see list_algorithms), not `{name}` on elements."
        ),
    })
}

/// Whether the graph's elements hold results of `algorithm_type` (written by run_algorithm);
/// `None` when `source` is not a graph.
fn has_results(source: &Source, algorithm_type: &str) -> Option<bool> {
    let (nodes, edges) = graph_collections(source).ok()?;
    let path = PropertyPath::root().child(RESULTS_ROOT).child(NAMESPACE).child(algorithm_type);
    Some([nodes, edges].iter().any(|c| c.profile().property(&path).is_some()))
}
