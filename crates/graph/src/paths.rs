//! Shortest path between two nodes (Dijkstra) and minimum spanning tree (Kruskal).

use crate::GraphError;
use crate::model::GraphData;
use crate::shortest::{Search, Walk};

/// Distances from a source and one shortest path to a target.
#[derive(Debug, Clone, PartialEq)]
pub struct ShortestPath {
    /// Weighted distance from the source to each node; `None` if unreachable.
    pub distance: Vec<Option<f64>>,
    /// Node indices from source to target; empty if the target is unreachable.
    pub path: Vec<usize>,
    /// Whether each node lies on `path`.
    pub is_in_path: Vec<bool>,
    /// Distance from source to target, if reachable.
    pub total: Option<f64>,
}

/// Dijkstra from `source` over edge weights (following direction if the graph is directed), as
/// networkx's `single_source_dijkstra_path_length` and `dijkstra_path`.
///
/// Distances are exact. Among equally short paths the first found is kept, visiting neighbours in
/// edge order — networkx's rule, so the path is networkx's on the test graphs. Errors on an
/// unknown id or on a negative (or NaN) weight.
pub fn shortest_path(
    g: &GraphData,
    source: &str,
    target: &str,
) -> Result<ShortestPath, GraphError> {
    let index = |id: &str| g.index_of(id).ok_or_else(|| GraphError::UnknownNode(id.to_owned()));
    let (s, t) = (index(source)?, index(target)?);
    if let Some(&(u, v, weight)) = g.edges.iter().find(|e| e.2 < 0.0 || e.2.is_nan()) {
        return Err(GraphError::NegativeWeight {
            from: g.node_ids[u].clone(),
            to: g.node_ids[v].clone(),
            weight,
        });
    }
    let n = g.node_count();
    let mut search = Search::new(n);
    search.run(Walk { adj: g.out_adj(), weighted: true, count_paths: true }, s);
    let distance: Vec<Option<f64>> =
        search.dist.iter().map(|&d| d.is_finite().then_some(d)).collect();
    let mut path = Vec::new();
    if distance[t].is_some() {
        let mut v = t;
        path.push(v);
        while v != s {
            v = search.preds[v][0];
            path.push(v);
        }
        path.reverse();
    }
    let mut is_in_path = vec![false; n];
    path.iter().for_each(|&v| is_in_path[v] = true);
    Ok(ShortestPath { total: distance[t], distance, path, is_in_path })
}

/// Edges of a minimum spanning forest.
#[derive(Debug, Clone, PartialEq)]
pub struct MinimumSpanningTree {
    /// Whether each edge (indexed like [`GraphData::edges`]) is in the forest.
    pub in_mst: Vec<bool>,
    /// Sum of the chosen edges' weights.
    pub total_weight: f64,
}

/// Minimum spanning forest by Kruskal (edges by weight, ties in input order, self-loops never
/// chosen), as networkx's `minimum_spanning_tree(G, algorithm="kruskal")`: one tree per
/// component, total weight equal to networkx's. Direction is ignored.
pub fn minimum_spanning_tree(g: &GraphData) -> MinimumSpanningTree {
    let mut order: Vec<usize> = (0..g.edges.len()).collect();
    order.sort_by(|&a, &b| g.edges[a].2.total_cmp(&g.edges[b].2));
    let mut parent: Vec<usize> = (0..g.node_count()).collect();
    fn find(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    let mut in_mst = vec![false; g.edges.len()];
    let mut total_weight = 0.0;
    for e in order {
        let (u, v, w) = g.edges[e];
        let (ru, rv) = (find(&mut parent, u), find(&mut parent, v));
        if ru != rv {
            parent[ru] = rv;
            in_mst[e] = true;
            total_weight += w;
        }
    }
    MinimumSpanningTree { in_mst, total_weight }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> GraphData {
        GraphData::build(
            ["a", "b", "c", "d", "e"],
            [("a", "b", 1.0), ("b", "d", 5.0), ("a", "c", 2.0), ("c", "d", 1.0)],
            false,
        )
    }

    #[test]
    fn shortest_path_takes_the_lighter_branch_and_marks_it() {
        let p = shortest_path(&diamond(), "a", "d").unwrap();
        assert_eq!(p.path, [0, 2, 3]);
        assert_eq!(p.total, Some(3.0));
        assert_eq!(p.distance, [Some(0.0), Some(1.0), Some(2.0), Some(3.0), None]);
        assert_eq!(p.is_in_path, [true, false, true, true, false]);
        let unreachable = shortest_path(&diamond(), "a", "e").unwrap();
        assert!(unreachable.path.is_empty() && unreachable.total.is_none());
    }

    #[test]
    fn shortest_path_rejects_unknown_ids_and_negative_weights() {
        assert_eq!(shortest_path(&diamond(), "a", "zz"), Err(GraphError::UnknownNode("zz".into())));
        let g = GraphData::build(["a", "b"], [("a", "b", -1.0)], true);
        assert!(matches!(shortest_path(&g, "a", "b"), Err(GraphError::NegativeWeight { .. })));
    }

    #[test]
    fn kruskal_drops_the_heaviest_cycle_edge() {
        let t = minimum_spanning_tree(&diamond());
        assert_eq!(t.in_mst, [true, false, true, true]);
        assert_eq!(t.total_weight, 4.0);
    }
}
