//! Connected components: weakly connected (direction ignored) and strongly connected.

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

/// Strongly connected components — networkx's `strongly_connected_components` (the same
/// partition; for an undirected graph the connected components). Iterative Tarjan, so a
/// 100k-node path does not overflow the stack; numbered 0.. in order of each component's first
/// node, as [`connected_components`].
pub fn strongly_connected_components(g: &GraphData) -> Components {
    const UNSEEN: usize = usize::MAX;
    let n = g.node_count();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut raw_id = vec![UNSEEN; n];
    let mut raw_count = 0;
    let mut next = 0;
    // (node, position in its successor list)
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        calls.push((root, 0));
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(v, at)) = calls.last() {
            if let Some(&w) = g.out_adj().targets(v).get(at) {
                if let Some(top) = calls.last_mut() {
                    top.1 += 1;
                }
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    raw_id[w] = raw_count;
                    if w == v {
                        break;
                    }
                }
                raw_count += 1;
            }
        }
    }
    // Renumber by first node, so ids do not depend on the search order.
    let mut renumber = vec![UNSEEN; raw_count];
    let mut count = 0;
    let component_id = raw_id
        .iter()
        .map(|&r| {
            if renumber[r] == UNSEEN {
                renumber[r] = count;
                count += 1;
            }
            renumber[r]
        })
        .collect();
    Components { component_id, component_count: count }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strong_components_follow_direction() {
        // a→b→c→a is one cycle; c→d→e, e→d: {d, e} a second; f alone.
        let edges = [
            ("a", "b", 1.0),
            ("b", "c", 1.0),
            ("c", "a", 1.0),
            ("c", "d", 1.0),
            ("d", "e", 1.0),
            ("e", "d", 1.0),
        ];
        let g = GraphData::build(["a", "b", "c", "d", "e", "f"], edges, true);
        let c = strongly_connected_components(&g);
        assert_eq!(c.component_id, [0, 0, 0, 1, 1, 2]);
        assert_eq!(c.component_count, 3);
        assert_eq!(connected_components(&g).component_count, 2);
        // A path: every node alone when directed, one component when not.
        let ids: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
        let path: Vec<(String, String, f64)> =
            (1..50_000).map(|i| ((i - 1).to_string(), i.to_string(), 1.0)).collect();
        assert_eq!(
            strongly_connected_components(&GraphData::build(ids.clone(), path.clone(), true))
                .component_count,
            50_000
        );
        assert_eq!(
            strongly_connected_components(&GraphData::build(ids, path, false)).component_count,
            1
        );
    }

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
