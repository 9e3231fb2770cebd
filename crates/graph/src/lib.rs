//! Graph algorithms over a simple graph model, pure (no I/O) and checked against networkx 3.6.
//!
//! Build a [`GraphData`] from node ids and `(source, target, weight)` triples, then call the
//! algorithms; each returns per-node values (indexed like [`GraphData::node_ids`]) plus any
//! graph-level values. Every algorithm documents which networkx function it reproduces and how
//! closely; `tests/it/networkx.rs` checks them on Zachary's karate club, Les Misérables and a
//! random directed graph, against JSON written by `tests/data/make_expected.py`.
//!
//! ```
//! use schemascope_graph::{GraphData, pagerank, PageRankOptions};
//! let g = GraphData::build(["a", "b", "c"], [("a", "b", 1.0), ("b", "c", 1.0)], false);
//! let pr = pagerank(&g, &PageRankOptions::default());
//! assert!((pr.scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! ```
//!
//! Dependencies are deliberately few: the algorithms are written here (not with petgraph or
//! rustworkx-core) so that tie-breaking, self-loops and normalisation follow networkx exactly.

#![forbid(unsafe_code)]

mod brandes;
mod centrality;
mod clustering;
mod components;
mod csr;
mod degree;
pub mod interrupt;
pub mod layout;
mod louvain;
mod model;
mod pagerank;
mod paths;
mod refined_louvain;
mod shortest;

pub use centrality::{
    SampledBetweenness, betweenness_centrality, betweenness_centrality_sampled,
    closeness_centrality,
};
pub use clustering::{Clustering, clustering};
pub use components::{Components, connected_components, strongly_connected_components};
pub use degree::{Degrees, degrees};
pub use louvain::{Communities, LouvainMethod, LouvainOptions, louvain_communities, modularity};
pub use model::{Adjacent, BuildStats, GraphData};
pub use pagerank::{PageRank, PageRankOptions, pagerank};
pub use paths::{MinimumSpanningTree, ShortestPath, minimum_spanning_tree, shortest_path};

/// An error naming the input at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// A node id that is not in the graph.
    #[error("unknown node id `{0}`")]
    UnknownNode(String),
    /// Dijkstra needs non-negative weights; this edge (`from -> to`) has a negative or NaN one.
    #[error("edge `{from}` -> `{to}` has weight {weight}; shortest paths need weights >= 0")]
    NegativeWeight {
        /// Source node id.
        from: String,
        /// Target node id.
        to: String,
        /// The offending weight.
        weight: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_accepts_empty_and_single_node_graphs() {
        let no_edges: [(&str, &str, f64); 0] = [];
        for ids in [&[][..], &["a"][..]] {
            for directed in [false, true] {
                let g = GraphData::build(ids.iter().copied(), no_edges, directed);
                let n = ids.len();
                assert_eq!(degrees(&g).degree_pct, vec![0.0; n]);
                assert_eq!(pagerank(&g, &PageRankOptions::default()).scores, vec![1.0; n]);
                assert_eq!(betweenness_centrality(&g, true), vec![0.0; n]);
                assert_eq!(closeness_centrality(&g, false), vec![0.0; n]);
                assert_eq!(clustering(&g).average, 0.0);
                assert_eq!(connected_components(&g).component_count, n);
                let c = louvain_communities(&g, &LouvainOptions::default());
                assert_eq!((c.community_count, c.modularity), (n, 0.0));
                assert_eq!(minimum_spanning_tree(&g).total_weight, 0.0);
                if n == 1 {
                    assert_eq!(shortest_path(&g, "a", "a").unwrap().path, [0]);
                }
            }
        }
    }
}
