//! Local clustering coefficient (unweighted), networkx's `clustering`.

use crate::model::GraphData;

/// Clustering coefficient per node, plus their mean (networkx `average_clustering`).
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// Coefficient of each node, in `[0, 1]`.
    pub coefficient: Vec<f64>,
    /// Mean over all nodes (0 for an empty graph).
    pub average: f64,
}

/// Unweighted clustering as networkx's `clustering(G)`; exact up to float rounding.
///
/// Undirected: triangles through `v` over `d(d-1)/2`, `d` its neighbours other than itself.
/// Directed (Fagiolo 2007, as networkx): directed triangles `T` over
/// `2·(d_tot(d_tot-1) - 2·d_bidirectional)`. Self-loops are ignored; 0 when there is no triangle.
pub fn clustering(g: &GraphData) -> Clustering {
    let n = g.node_count();
    let neighbours = |adj: &[usize], v: usize| -> Vec<usize> {
        let mut out: Vec<usize> = adj.iter().copied().filter(|&w| w != v).collect();
        out.sort_unstable();
        out.dedup();
        out
    };
    let succ: Vec<Vec<usize>> = (0..n).map(|v| neighbours(g.out_adj().targets(v), v)).collect();
    let pred: Vec<Vec<usize>> = if g.directed {
        (0..n).map(|v| neighbours(g.in_adj().targets(v), v)).collect()
    } else {
        Vec::new()
    };
    let mut in_succ = vec![0u32; n];
    let mut in_pred = vec![0u32; n];
    // A node's work is the degrees of its neighbours summed: a star's leaves each scan the
    // hub, n² in all, so the stop flag is looked at before each node (then nodes are skipped).
    let stop = crate::interrupt::current();
    let coefficient: Vec<f64> = (0..n)
        .map(|v| {
            if crate::interrupt::stop(&stop) {
                return 0.0;
            }
            succ[v].iter().for_each(|&w| in_succ[w] = 1);
            let c = if g.directed {
                pred[v].iter().for_each(|&w| in_pred[w] = 1);
                let marks = |x: usize| (in_pred[x] + in_succ[x]) as u64;
                let triangles: u64 = pred[v]
                    .iter()
                    .chain(&succ[v])
                    .map(|&j| pred[j].iter().chain(&succ[j]).map(|&x| marks(x)).sum::<u64>())
                    .sum();
                let total = (pred[v].len() + succ[v].len()) as f64;
                let bidirectional = pred[v].iter().filter(|&&w| in_succ[w] == 1).count() as f64;
                pred[v].iter().for_each(|&w| in_pred[w] = 0);
                if triangles == 0 {
                    0.0
                } else {
                    triangles as f64 / ((total * (total - 1.0) - 2.0 * bidirectional) * 2.0)
                }
            } else {
                let twice_triangles: u64 = succ[v]
                    .iter()
                    .map(|&w| succ[w].iter().map(|&x| in_succ[x] as u64).sum::<u64>())
                    .sum();
                let d = succ[v].len() as f64;
                if twice_triangles == 0 { 0.0 } else { twice_triangles as f64 / (d * (d - 1.0)) }
            };
            succ[v].iter().for_each(|&w| in_succ[w] = 0);
            c
        })
        .collect();
    let average = if n == 0 { 0.0 } else { coefficient.iter().sum::<f64>() / n as f64 };
    Clustering { coefficient, average }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_with_pendant_has_one_third_at_the_hub() {
        let g = GraphData::build(
            ["a", "b", "c", "d"],
            [("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0), ("a", "d", 1.0), ("a", "a", 1.0)],
            false,
        );
        let c = clustering(&g);
        assert_eq!(c.coefficient, [1.0 / 3.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn directed_cycle_triangle_scores_one_half() {
        // a->b->c->a: at a, T = 2, d_tot = 2, no reciprocal: 2 / (2·(2·1)) = 0.5 (networkx agrees).
        let g = GraphData::build(
            ["a", "b", "c"],
            [("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0)],
            true,
        );
        assert_eq!(clustering(&g).coefficient, [0.5, 0.5, 0.5]);
    }
}
