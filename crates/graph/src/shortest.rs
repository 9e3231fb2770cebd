//! Single-source shortest paths (BFS or Dijkstra) with path counts and predecessors, shared by
//! betweenness, closeness and shortest_path.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::csr::Csr;

/// Which edges to follow from a node, and whether to use weights.
#[derive(Clone, Copy)]
pub(crate) struct Walk<'a> {
    pub adj: &'a Csr,
    pub weighted: bool,
    /// Whether to count shortest paths and keep predecessors (betweenness, paths) or only
    /// distances (closeness).
    pub count_paths: bool,
}

/// Reusable buffers for one single-source search.
pub(crate) struct Search {
    /// Nodes in order of non-decreasing distance (the Brandes stack).
    pub order: Vec<usize>,
    /// Distance from the source (`INFINITY` if unreached).
    pub dist: Vec<f64>,
    /// Number of shortest paths from the source.
    pub sigma: Vec<f64>,
    /// Predecessors on shortest paths.
    pub preds: Vec<Vec<usize>>,
}

#[derive(PartialEq)]
struct Entry(f64, usize, usize);
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Min-heap on distance, then on insertion counter (networkx's heap ordering).
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl Search {
    pub(crate) fn new(n: usize) -> Self {
        Search {
            order: Vec::new(),
            dist: vec![f64::INFINITY; n],
            sigma: vec![0.0; n],
            preds: vec![Vec::new(); n],
        }
    }

    /// Runs the search from `source`, resetting only what the previous run touched.
    pub(crate) fn run(&mut self, walk: Walk<'_>, source: usize) {
        self.order.clear();
        for v in 0..self.dist.len() {
            if self.dist[v].is_finite() {
                self.dist[v] = f64::INFINITY;
                self.sigma[v] = 0.0;
                self.preds[v].clear();
            }
        }
        self.dist[source] = 0.0;
        self.sigma[source] = 1.0;
        if walk.weighted { self.dijkstra(walk, source) } else { self.bfs(walk, source) }
    }

    fn bfs(&mut self, walk: Walk<'_>, source: usize) {
        let mut queue = VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            self.order.push(v);
            let dv = self.dist[v];
            for &w in walk.adj.targets(v) {
                if self.dist[w].is_infinite() {
                    self.dist[w] = dv + 1.0;
                    queue.push_back(w);
                }
                if walk.count_paths && self.dist[w] == dv + 1.0 {
                    self.sigma[w] += self.sigma[v];
                    self.preds[w].push(v);
                }
            }
        }
    }

    fn dijkstra(&mut self, walk: Walk<'_>, source: usize) {
        let n = self.dist.len();
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::from([Entry(0.0, 0, source)]);
        let mut counter = 1;
        while let Some(Entry(d, _, v)) = heap.pop() {
            if done[v] {
                continue;
            }
            done[v] = true;
            self.order.push(v);
            for (&w, &weight) in walk.adj.targets(v).iter().zip(walk.adj.weights(v)) {
                if done[w] {
                    continue;
                }
                let vw = d + weight;
                if vw < self.dist[w] {
                    self.dist[w] = vw;
                    if walk.count_paths {
                        self.sigma[w] = self.sigma[v];
                        self.preds[w].clear();
                        self.preds[w].push(v);
                    }
                    heap.push(Entry(vw, counter, w));
                    counter += 1;
                } else if walk.count_paths && vw == self.dist[w] {
                    self.sigma[w] += self.sigma[v];
                    self.preds[w].push(v);
                }
            }
        }
    }
}
