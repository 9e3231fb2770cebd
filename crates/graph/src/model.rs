//! The graph model: node ids, weighted edges, and adjacency in both directions.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::csr::Csr;

/// One adjacency-list entry: the node at the other end, the edge weight and the edge's index in
/// [`GraphData::edges`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adjacent {
    /// Index of the neighbouring node.
    pub node: usize,
    /// Weight of the edge.
    pub weight: f64,
    /// Index of the edge in [`GraphData::edges`].
    pub edge: usize,
}

/// What [`GraphData::build`] dropped or merged, so callers can warn rather than fail.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Node ids given more than once (the first occurrence is kept).
    pub duplicate_nodes: usize,
    /// Edges skipped because an endpoint id is not a node.
    pub unknown_endpoints: usize,
    /// Edges repeating an existing edge (same endpoints; either order if undirected): like
    /// networkx's `Graph`, the later weight replaces the earlier.
    pub duplicate_edges: usize,
}

/// A simple graph (no parallel edges; self-loops allowed), directed or not, with `f64` weights.
///
/// Nodes are indexed by their position in `node_ids`; every per-node result uses that order.
#[derive(Debug, Clone, Default)]
pub struct GraphData {
    /// Node ids, in input order without duplicates.
    pub node_ids: Vec<String>,
    /// Edges as `(source index, target index, weight)`, in input order.
    pub edges: Vec<(usize, usize, f64)>,
    /// Whether edges have a direction.
    pub directed: bool,
    /// What the build dropped or merged.
    pub stats: BuildStats,
    index: HashMap<String, usize>,
    out_adj: Csr,
    /// Predecessors; empty when undirected, where they equal the successors.
    in_adj: Csr,
}

impl GraphData {
    /// Builds a graph from node ids and `(source id, target id, weight)` triples.
    ///
    /// Edges with an unknown endpoint are skipped and counted in [`BuildStats`]; so are repeated
    /// node ids and repeated edges (the later weight wins, as in networkx).
    pub fn build<I, S, E, A, B>(node_ids: I, edges: E, directed: bool) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
        E: IntoIterator<Item = (A, B, f64)>,
        A: AsRef<str>,
        B: AsRef<str>,
    {
        let mut g = GraphData { directed, ..Default::default() };
        for id in node_ids {
            let id = id.into();
            match g.index.entry(id) {
                Entry::Occupied(_) => g.stats.duplicate_nodes += 1,
                Entry::Vacant(v) => {
                    g.node_ids.push(v.key().clone());
                    v.insert(g.node_ids.len() - 1);
                }
            }
        }
        let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
        for (a, b, w) in edges {
            let (Some(&u), Some(&v)) = (g.index.get(a.as_ref()), g.index.get(b.as_ref())) else {
                g.stats.unknown_endpoints += 1;
                continue;
            };
            let key = if directed || u <= v { (u, v) } else { (v, u) };
            match seen.entry(key) {
                Entry::Occupied(e) => {
                    g.stats.duplicate_edges += 1;
                    g.edges[*e.get()].2 = w;
                }
                Entry::Vacant(e) => {
                    e.insert(g.edges.len());
                    g.edges.push((u, v, w));
                }
            }
        }
        let n = g.node_ids.len();
        g.out_adj = Csr::build(n, arcs(&g.edges, directed, false));
        if directed {
            g.in_adj = Csr::build(n, arcs(&g.edges, directed, true));
        }
        g
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.node_ids.len()
    }

    /// Index of a node id, if it is in the graph.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Successors of a node (all neighbours if undirected; a self-loop appears once), in edge order.
    pub fn out_neighbors(
        &self,
        node: usize,
    ) -> impl ExactSizeIterator<Item = Adjacent> + Clone + '_ {
        self.out_adj.entries(node)
    }

    /// Predecessors of a node (all neighbours if undirected; a self-loop appears once), in edge order.
    pub fn in_neighbors(
        &self,
        node: usize,
    ) -> impl ExactSizeIterator<Item = Adjacent> + Clone + '_ {
        self.in_adj().entries(node)
    }

    pub(crate) fn out_adj(&self) -> &Csr {
        &self.out_adj
    }

    pub(crate) fn in_adj(&self) -> &Csr {
        if self.directed { &self.in_adj } else { &self.out_adj }
    }
}

/// Every edge as adjacency entries keyed by the node they belong to, in edge order: `u -> v` for
/// each edge `(u, v)` (`v <- u` if `reverse`), and the opposite entry too when undirected.
fn arcs(
    edges: &[(usize, usize, f64)],
    directed: bool,
    reverse: bool,
) -> impl Iterator<Item = (usize, Adjacent)> + Clone + '_ {
    edges.iter().enumerate().flat_map(move |(edge, &(u, v, weight))| {
        let (from, to) = if reverse { (v, u) } else { (u, v) };
        let back = (!directed && u != v).then_some((to, Adjacent { node: from, weight, edge }));
        std::iter::once((from, Adjacent { node: to, weight, edge })).chain(back)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_skips_unknown_endpoints_and_merges_repeats() {
        let g = GraphData::build(
            ["a", "b", "a", "c"],
            [("a", "b", 1.0), ("b", "a", 2.0), ("a", "x", 1.0), ("c", "c", 3.0)],
            false,
        );
        assert_eq!(g.node_ids, ["a", "b", "c"]);
        assert_eq!(g.edges, [(0, 1, 2.0), (2, 2, 3.0)]);
        assert_eq!(
            g.stats,
            BuildStats { duplicate_nodes: 1, unknown_endpoints: 1, duplicate_edges: 1 }
        );
        assert_eq!(g.out_neighbors(0).len(), 1);
        assert_eq!(g.out_neighbors(2).len(), 1, "a self-loop is one adjacency entry");
    }

    #[test]
    fn directed_build_keeps_both_directions_apart() {
        let g = GraphData::build(["a", "b"], [("a", "b", 1.0), ("b", "a", 2.0)], true);
        assert_eq!(g.edges.len(), 2);
        assert_eq!(g.in_neighbors(0).next().map(|a| a.node), Some(1));
    }
}
