//! Degrees (total, in, out) and their percentages of the maximum.

use crate::model::GraphData;

/// Unweighted degrees per node, with each as a percentage of the graph's maximum.
///
/// `*_pct` is `value / max(value over all nodes) × 100` (0 when the maximum is 0), so the
/// best-connected node is 100 — a scale for sizing nodes in a view, not a percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct Degrees {
    /// Edges at the node (networkx `G.degree`): in + out if directed; a self-loop counts twice.
    pub degree: Vec<usize>,
    /// Incoming edges (equal to `degree` if undirected).
    pub in_degree: Vec<usize>,
    /// Outgoing edges (equal to `degree` if undirected).
    pub out_degree: Vec<usize>,
    /// `degree` as a percentage of the maximum degree.
    pub degree_pct: Vec<f64>,
    /// `in_degree` as a percentage of the maximum in-degree.
    pub in_degree_pct: Vec<f64>,
    /// `out_degree` as a percentage of the maximum out-degree.
    pub out_degree_pct: Vec<f64>,
}

/// Degrees of every node, exactly as networkx's `degree`, `in_degree`, `out_degree`.
pub fn degrees(g: &GraphData) -> Degrees {
    let n = g.node_count();
    let mut in_degree = vec![0; n];
    let mut out_degree = vec![0; n];
    for &(u, v, _) in &g.edges {
        out_degree[u] += 1;
        in_degree[v] += 1;
    }
    let (degree, in_degree, out_degree) = if g.directed {
        let degree = in_degree.iter().zip(&out_degree).map(|(a, b)| a + b).collect();
        (degree, in_degree, out_degree)
    } else {
        let degree: Vec<usize> = in_degree.iter().zip(&out_degree).map(|(a, b)| a + b).collect();
        (degree.clone(), degree.clone(), degree)
    };
    Degrees {
        degree_pct: pct(&degree),
        in_degree_pct: pct(&in_degree),
        out_degree_pct: pct(&out_degree),
        degree,
        in_degree,
        out_degree,
    }
}

fn pct(values: &[usize]) -> Vec<f64> {
    let max = values.iter().copied().max().unwrap_or(0);
    values.iter().map(|&v| if max == 0 { 0.0 } else { v as f64 * 100.0 / max as f64 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undirected_self_loop_counts_twice_and_pct_is_relative_to_max() {
        let g = GraphData::build(["a", "b", "c"], [("a", "b", 1.0), ("a", "a", 1.0)], false);
        let d = degrees(&g);
        assert_eq!(d.degree, [3, 1, 0]);
        assert_eq!(d.in_degree, d.degree);
        assert_eq!(d.degree_pct, [100.0, 100.0 / 3.0, 0.0]);
    }

    #[test]
    fn directed_degrees_split_in_and_out() {
        let g = GraphData::build(["a", "b"], [("a", "b", 1.0)], true);
        let d = degrees(&g);
        assert_eq!((d.degree, d.in_degree, d.out_degree), (vec![1, 1], vec![0, 1], vec![1, 0]));
        assert_eq!(d.in_degree_pct, [0.0, 100.0]);
    }
}
