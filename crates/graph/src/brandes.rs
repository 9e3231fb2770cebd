//! Brandes' betweenness accumulation from one source, for unweighted graphs: a BFS that counts
//! shortest paths, then dependencies summed back from the farthest nodes.
//!
//! Predecessor lists are not stored: on the way back, `v` is a predecessor of `w` exactly when
//! `v -> w` is an edge and `dist[v] + 1 == dist[w]`, so scanning `w`'s in-neighbours finds them.
//! Every dependency term, and the order in which each node receives them, are networkx's, so the
//! sums are the same floating-point operations. Node indices are `u32` (half the cache footprint
//! of `usize`); [`Compact::new`] declines graphs too large for that.

use crate::csr::Csr;

const UNREACHED: u32 = u32::MAX;

/// Neighbour lists as `u32` node indices: node `v`'s are `targets[offsets[v]..offsets[v + 1]]`.
pub(crate) struct Compact {
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Compact {
    /// Copies `csr` with `u32` indices, or `None` if `n` nodes do not fit in a `u32`.
    pub(crate) fn new(csr: &Csr, n: usize) -> Option<Self> {
        // Every index is below `n`, so once `n` fits in a u32 the `as u32` casts below are exact.
        u32::try_from(n).ok().filter(|&n| n < UNREACHED)?;
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        for v in 0..n {
            targets.extend(csr.targets(v).iter().map(|&w| w as u32));
            offsets.push(targets.len());
        }
        Some(Compact { offsets, targets })
    }

    #[inline]
    fn of(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// Reusable buffers for one thread's searches; only the nodes the last search reached are reset.
pub(crate) struct Brandes {
    /// Nodes in BFS order, the first `reached` of them (also the queue: a head index walks along).
    order: Vec<u32>,
    reached: usize,
    dist: Vec<u32>,
    sigma: Vec<f64>,
    delta: Vec<f64>,
}

impl Brandes {
    pub(crate) fn new(n: usize) -> Self {
        Brandes {
            order: vec![0; n],
            reached: 0,
            dist: vec![UNREACHED; n],
            sigma: vec![0.0; n],
            delta: vec![0.0; n],
        }
    }

    /// Adds the dependencies of source `s` to `bc` (unnormalised), following `out` forward and
    /// `inn` (its reverse; the same lists if undirected) back.
    pub(crate) fn accumulate(&mut self, out: &Compact, inn: &Compact, s: usize, bc: &mut [f64]) {
        let Brandes { order, reached, dist, sigma, delta } = self;
        for &v in &order[..*reached] {
            let v = v as usize;
            (dist[v], sigma[v], delta[v]) = (UNREACHED, 0.0, 0.0);
        }
        // `s < n` and `n` fits in a u32 (checked by `Compact::new`).
        order[0] = s as u32;
        (dist[s], sigma[s]) = (0, 1.0);
        let (mut head, mut tail) = (0, 1);
        while head < tail {
            let v = order[head] as usize;
            head += 1;
            let (next, sigma_v) = (dist[v] + 1, sigma[v]);
            for &w in out.of(v) {
                let w = w as usize;
                if dist[w] == UNREACHED {
                    dist[w] = next;
                    order[tail] = w as u32;
                    tail += 1;
                }
                if dist[w] == next {
                    sigma[w] += sigma_v;
                }
            }
        }
        *reached = tail;
        // Back from the farthest; the source (position 0) has no predecessors and gets no credit.
        for &w in order[1..tail].iter().rev() {
            let w = w as usize;
            let before = dist[w] - 1;
            let coeff = (1.0 + delta[w]) / sigma[w];
            for &v in inn.of(w) {
                let v = v as usize;
                if dist[v] == before {
                    delta[v] += sigma[v] * coeff;
                }
            }
            bc[w] += delta[w];
        }
    }
}
