//! Connected components (weakly connected for directed graphs).

use crate::model::GraphData;

/// Component membership per node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Components {
    /// Component of each node, numbered 0.. in order of each component's first node.
    pub component_id: Vec<usize>,
    /// Number of components (isolated nodes are components of one).
    pub component_count: usize,
}

/// Connected components, ignoring edge direction — networkx's `connected_components` for
/// undirected graphs and `weakly_connected_components` for directed ones (same partition, exact).
pub fn connected_components(g: &GraphData) -> Components {
    let n = g.node_count();
    let mut component_id = vec![usize::MAX; n];
    let mut count = 0;
    let mut stack = Vec::new();
    for start in 0..n {
        if component_id[start] != usize::MAX {
            continue;
        }
        component_id[start] = count;
        stack.push(start);
        while let Some(v) = stack.pop() {
            for &w in g.out_adj().targets(v).iter().chain(g.in_adj().targets(v)) {
                if component_id[w] == usize::MAX {
                    component_id[w] = count;
                    stack.push(w);
                }
            }
        }
        count += 1;
    }
    Components { component_id, component_count: count }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_edges_join_weak_components_and_isolated_nodes_count() {
        let g = GraphData::build(["a", "b", "c", "d"], [("b", "a", 1.0), ("d", "c", 1.0)], true);
        let c = connected_components(&g);
        assert_eq!(c.component_id, [0, 0, 1, 1]);
        assert_eq!(c.component_count, 2);
        let g = GraphData::build(["a", "b", "c"], [("a", "c", 1.0)], false);
        assert_eq!(connected_components(&g).component_id, [0, 1, 0]);
    }
}
