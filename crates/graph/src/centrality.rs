//! Betweenness (Brandes) and closeness centrality, normalised as networkx does.

use crate::brandes::{Brandes, Compact};
use crate::model::GraphData;
use crate::shortest::{Search, Walk};

/// Worker threads for the all-sources searches (each source's search is independent).
const THREADS: usize = 2;

/// Betweenness centrality of every node, as networkx's
/// `betweenness_centrality(G, normalized=True, weight=…, endpoints=False)`.
///
/// Brandes' algorithm (BFS, or Dijkstra when `weighted`), sources split over two threads; the BFS
/// case keeps no predecessor lists (see `brandes.rs`) and adds the same terms in the same order.
/// Normalised by `1/((n-1)(n-2))` for directed and undirected graphs alike (undirected pairs are
/// counted in both directions, so this matches networkx); with `n <= 2` values are unscaled
/// (all zero). Matches networkx within 1e-15 on the test graphs, weighted or not.
pub fn betweenness_centrality(g: &GraphData, weighted: bool) -> Vec<f64> {
    let n = g.node_count();
    let sources: Vec<usize> = (0..n).collect();
    let mut bc = dependencies(g, weighted, &sources, false);
    if n > 2 {
        let scale = 1.0 / ((n - 1) as f64 * (n - 2) as f64);
        bc.iter_mut().for_each(|b| *b *= scale);
    }
    bc
}

/// Betweenness estimated from `k` sources (pivots) drawn at random without replacement, as
/// networkx's `betweenness_centrality(G, k=…)`: each node's dependencies summed over the pivots
/// and scaled by `n/k`, with the standard error of each estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledBetweenness {
    /// The estimated (normalised) betweenness of each node.
    pub scores: Vec<f64>,
    /// Each estimate's standard error, from the spread of the pivots' dependencies (sampling
    /// without replacement, so 0 when `k = n`); `NaN` with a single pivot, which gives no
    /// spread to measure. A node whose betweenness comes from a few sources that were not drawn
    /// shows a small error though its estimate is far off: the error is calibrated over the
    /// nodes, not a bound for each.
    pub standard_errors: Vec<f64>,
    /// The pivots used, in drawing order.
    pub pivots: Vec<usize>,
}

/// [`betweenness_centrality`] from `k` pivots drawn with `seed` (`k` at least `n` is exact).
pub fn betweenness_centrality_sampled(
    g: &GraphData,
    weighted: bool,
    k: usize,
    seed: u64,
) -> SampledBetweenness {
    let n = g.node_count();
    let k = k.clamp(1.min(n), n);
    // A partial Fisher–Yates shuffle: the first k of a random permutation.
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    for i in 0..k {
        let j = rng.usize(i..n);
        order.swap(i, j);
    }
    order.truncate(k);
    let sums = dependencies(g, weighted, &order, true);
    let (sum, squares) = sums.split_at(n);
    let normalise = if n > 2 { 1.0 / ((n - 1) as f64 * (n - 2) as f64) } else { 1.0 };
    let kf = k as f64;
    let scores = sum.iter().map(|s| s * normalise * n as f64 / kf.max(1.0)).collect();
    let standard_errors = sum
        .iter()
        .zip(squares)
        .map(|(s, sq)| {
            if k == n {
                return 0.0;
            }
            if k < 2 {
                return f64::NAN;
            }
            let mean = s / kf;
            let variance = ((sq - kf * mean * mean) / (kf - 1.0)).max(0.0);
            // Sampling without replacement: the sample variance (k - 1 in the denominator) is
            // unbiased for the population's, and the mean's variance shrinks by 1 - k/n.
            let finite = 1.0 - kf / n as f64;
            normalise * n as f64 * (variance / kf * finite).sqrt()
        })
        .collect();
    SampledBetweenness { scores, standard_errors, pivots: order }
}

/// Brandes' dependencies summed over `sources` (unscaled), with their squares after them
/// (`2n` values) when `squares`.
fn dependencies(g: &GraphData, weighted: bool, sources: &[usize], squares: bool) -> Vec<f64> {
    let n = g.node_count();
    let width = if squares { 2 * n } else { n };
    // With squares, each source's dependencies go to a buffer of their own first.
    let spread = |one: &mut Vec<f64>, totals: &mut [f64], add: &mut dyn FnMut(&mut [f64])| {
        if !squares {
            return add(totals);
        }
        one.iter_mut().for_each(|x| *x = 0.0);
        add(one);
        let (sum, sq) = totals.split_at_mut(n);
        for ((t, q), d) in sum.iter_mut().zip(sq.iter_mut()).zip(one.iter()) {
            *t += d;
            *q += d * d;
        }
    };
    let compact = if weighted { None } else { Compact::new(g.out_adj(), n) };
    match &compact {
        Some(out) => {
            // Undirected: the predecessors' lists are the successors' lists.
            let reverse = if g.directed { Compact::new(g.in_adj(), n) } else { None };
            let inn = reverse.as_ref().unwrap_or(out);
            sum_over_sources(
                sources,
                width,
                || (Brandes::new(n), vec![0.0; if squares { n } else { 0 }]),
                |(brandes, one), s, bc| {
                    spread(one, bc, &mut |into| brandes.accumulate(out, inn, s, into));
                },
            )
        }
        // Weighted, or too many nodes for u32 indices: the general search with predecessor lists.
        None => {
            let walk = Walk { adj: g.out_adj(), weighted, count_paths: true };
            sum_over_sources(
                sources,
                width,
                || (Search::new(n), vec![0.0; n], vec![0.0; if squares { n } else { 0 }]),
                |(search, delta, one), s, bc| {
                    spread(one, bc, &mut |into| {
                        accumulate_with_preds(walk, search, delta, s, into)
                    });
                },
            )
        }
    }
}

/// Runs `add(scratch, source, totals)` for every one of `sources`, interleaved over [`THREADS`]
/// threads (a fixed split, so the sums, and the results, are the same on every run); `totals`
/// are `width` values.
fn sum_over_sources<S>(
    sources: &[usize],
    width: usize,
    scratch: impl Fn() -> S + Sync,
    add: impl Fn(&mut S, usize, &mut [f64]) + Sync,
) -> Vec<f64> {
    let n = width;
    let stop = crate::interrupt::current();
    let steps = crate::interrupt::steps();
    crate::interrupt::begin(&steps, sources.len(), "sources searched");
    let partials: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (scratch, add, stop, steps) = (&scratch, &add, &stop, &steps);
                scope.spawn(move || {
                    let mut totals = vec![0.0; n];
                    let mut state = scratch();
                    for &s in sources.iter().skip(t).step_by(THREADS) {
                        if crate::interrupt::stop(stop) {
                            break;
                        }
                        add(&mut state, s, &mut totals);
                        crate::interrupt::step(steps);
                    }
                    totals
                })
            })
            .collect();
        // A worker's panic is resumed with its own payload (the workspace's policy, stated in
        // schemascope_core::sync, which this crate does not depend on).
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut totals = vec![0.0; n];
    for part in partials {
        for (b, p) in totals.iter_mut().zip(part) {
            *b += p;
        }
    }
    totals
}

/// Brandes' accumulation from source `s` over a Dijkstra (or BFS) search with stored predecessors:
/// with float distances, ties are decided during the search, as networkx does.
fn accumulate_with_preds(
    walk: Walk<'_>,
    search: &mut Search,
    delta: &mut [f64],
    s: usize,
    bc: &mut [f64],
) {
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
    let stop = crate::interrupt::current();
    let steps = crate::interrupt::steps();
    crate::interrupt::begin(&steps, n, "nodes measured");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (stop, steps) = (&stop, &steps);
                scope.spawn(move || {
                    let mut search = Search::new(n);
                    (t * half..((t + 1) * half).min(n))
                        .map(|u| {
                            if crate::interrupt::stop(stop) {
                                return 0.0;
                            }
                            search.run(walk, u);
                            crate::interrupt::step(steps);
                            let total: f64 = search.order.iter().map(|&v| search.dist[v]).sum();
                            let reached = search.order.len() as f64;
                            if total > 0.0 && n > 1 {
                                (reached - 1.0) / total * ((reached - 1.0) / (n as f64 - 1.0))
                            } else {
                                0.0
                            }
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        // A worker's panic is resumed with its own payload, as above.
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
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
        let g = GraphData::build(
            ["a", "b", "c", "d"],
            [("a", "b", 10.0), ("a", "c", 1.0), ("c", "d", 1.0), ("d", "b", 1.0)],
            false,
        );
        let bc = betweenness_centrality(&g, true);
        assert_eq!(bc[0], bc[1]);
        assert!(bc[2] > 0.0 && bc[3] > 0.0);
    }

    #[test]
    fn bfs_brandes_equals_the_search_with_predecessor_lists_bit_for_bit() {
        let mut rng = fastrand::Rng::with_seed(3);
        for directed in [false, true] {
            let ids: Vec<String> = (0..60).map(|i| i.to_string()).collect();
            let edges: Vec<(String, String, f64)> = (0..150)
                .map(|_| (rng.usize(..60).to_string(), rng.usize(..60).to_string(), 1.0))
                .collect();
            let g = GraphData::build(ids, edges, directed);
            let n = g.node_count();
            let walk = Walk { adj: g.out_adj(), weighted: false, count_paths: true };
            let sources: Vec<usize> = (0..n).collect();
            let mut with_preds = sum_over_sources(
                &sources,
                n,
                || (Search::new(n), vec![0.0; n]),
                |(search, delta), s, bc| accumulate_with_preds(walk, search, delta, s, bc),
            );
            let scale = 1.0 / ((n - 1) as f64 * (n - 2) as f64);
            with_preds.iter_mut().for_each(|b| *b *= scale);
            assert_eq!(betweenness_centrality(&g, false), with_preds, "directed: {directed}");
        }
    }

    #[test]
    fn closeness_uses_incoming_distances_and_wf_scaling() {
        let c = closeness_centrality(&path3(false), false);
        assert_eq!(c, [2.0 / 3.0, 1.0, 2.0 / 3.0]);
        // Directed a->b->c: c is reached by a (2) and b (1): (2/3)·(2/2); b by a: (1/1)·(1/2).
        assert_eq!(closeness_centrality(&path3(true), false), [0.0, 0.5, 2.0 / 3.0]);
    }
}
