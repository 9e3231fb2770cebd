//! Compressed adjacency rows (CSR): one flat array per field instead of a `Vec` per node, so the
//! hot loops (BFS, PageRank) stream through contiguous node indices.

use crate::model::Adjacent;

/// Adjacency of every node: node `v`'s entries are at `offsets[v]..offsets[v + 1]` of the three
/// parallel arrays, in edge order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr {
    offsets: Vec<usize>,
    /// Node at the other end of each entry.
    targets: Vec<usize>,
    /// Weight of each entry's edge.
    weights: Vec<f64>,
    /// Index of each entry's edge in [`crate::GraphData::edges`].
    edges: Vec<usize>,
}

impl Csr {
    /// Groups `(node, entry)` pairs by node, keeping their order within each node: a counting
    /// sort, two passes over `arcs` (which is why it must be `Clone`).
    pub(crate) fn build(n: usize, arcs: impl Iterator<Item = (usize, Adjacent)> + Clone) -> Self {
        let mut offsets = vec![0; n + 1];
        for (v, _) in arcs.clone() {
            offsets[v + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let m = offsets[n];
        let (mut targets, mut weights, mut edges) = (vec![0; m], vec![0.0; m], vec![0; m]);
        let mut cursor = offsets.clone();
        for (v, a) in arcs {
            let i = cursor[v];
            cursor[v] += 1;
            (targets[i], weights[i], edges[i]) = (a.node, a.weight, a.edge);
        }
        Csr { offsets, targets, weights, edges }
    }

    /// Index range of node `v`'s entries in the parallel arrays.
    #[inline]
    pub(crate) fn range(&self, v: usize) -> std::ops::Range<usize> {
        self.offsets[v]..self.offsets[v + 1]
    }

    /// Nodes adjacent to `v`.
    #[inline]
    pub(crate) fn targets(&self, v: usize) -> &[usize] {
        &self.targets[self.range(v)]
    }

    /// Weights of `v`'s entries, aligned with [`Csr::targets`].
    #[inline]
    pub(crate) fn weights(&self, v: usize) -> &[f64] {
        &self.weights[self.range(v)]
    }

    /// Node `v`'s entries as [`Adjacent`] values.
    pub(crate) fn entries(&self, v: usize) -> impl ExactSizeIterator<Item = Adjacent> + Clone + '_ {
        self.range(v).map(|i| Adjacent {
            node: self.targets[i],
            weight: self.weights[i],
            edge: self.edges[i],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_input_order_within_each_node() {
        let arc = |v, node, edge| (v, Adjacent { node, weight: edge as f64, edge });
        let csr = Csr::build(3, [arc(2, 0, 0), arc(0, 1, 1), arc(2, 1, 2)].into_iter());
        assert_eq!(csr.targets(0), [1]);
        assert!(csr.targets(1).is_empty());
        assert_eq!(csr.targets(2), [0, 1]);
        assert_eq!(csr.weights(2), [0.0, 2.0]);
        assert_eq!(csr.entries(2).map(|a| a.edge).collect::<Vec<_>>(), [0, 2]);
    }
}
