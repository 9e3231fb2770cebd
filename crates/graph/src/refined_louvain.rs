//! Refined Louvain: networkit's PLM (`PLM(refine=True)`) with Leiden's split, on one thread.
//!
//! A cycle moves nodes between communities (the local moves), splits each community into
//! subcommunities that each gain modularity by holding together (Leiden's refinement, greedy),
//! aggregates one node per subcommunity — starting in its community, so a subcommunity can still
//! move on to another — and solves the coarser level the same way; on the way back each level
//! starts from the coarser result and moves its nodes again (PLM's refinement). Cycles repeat
//! from the last partition while one gains more than the threshold, at most [`MAX_CYCLES`].
//! Local moves revisit only the nodes next to one that moved, within a bounded number of visits.
//! Gains are networkx's (directed modularity for a directed graph), the visiting orders seeded,
//! and every sum runs in a fixed order: the same seed gives the same communities.
//!
//! On a random graph of 100k nodes and 500k edges this reaches a modularity of 0.30–0.305 where
//! networkx's method reaches 0.244 and networkit's PLM 0.296–0.299 (bench/graph_e2e_bench.py).

use crate::louvain::{
    CommunityWeights, Level, LouvainOptions, aggregate, level_modularity, renumber,
};

/// Visits per node of one run of local moves, at most: networkit's PLM sweeps every node at
/// most 32 times (`maxIter`); revisiting only the neighbours of moved nodes seldom needs more
/// than a few visits per node.
const MAX_SWEEPS: usize = 32;

/// Cycles at most: each one after the first starts from the last partition and gains less (on
/// the bench graph 0.004, 0.002, 0.001 after a first cycle at 0.297).
pub(crate) const MAX_CYCLES: usize = 4;

/// The community of each node of `level` (numbered below the node count), by refined Louvain;
/// `m` is the total edge weight.
pub(crate) fn refined_louvain(
    level: Level,
    m: f64,
    opts: &LouvainOptions,
    rng: &mut fastrand::Rng,
) -> Vec<usize> {
    let n = level.adj.len();
    let mut community: Vec<usize> = (0..n).collect();
    // The modularity of the start, every node alone: negative, not 0 — from 0, a graph whose best
    // split is one community (modularity 0: a triangle, an edge) kept every node alone.
    let mut q = level_modularity(&level, m, opts.resolution, &community);
    let steps = crate::interrupt::steps();
    crate::interrupt::begin(&steps, 0, "cycles of moving, refining and aggregating");
    for _ in 0..MAX_CYCLES {
        if crate::interrupt::stopping() {
            break;
        }
        crate::interrupt::step(&steps);
        let next = one_cycle(&level, m, opts, rng, community.clone());
        let q_next = level_modularity(&level, m, opts.resolution, &next);
        if q_next <= q + opts.threshold {
            if q_next > q {
                community = next;
            }
            break;
        }
        community = next;
        q = q_next;
    }
    community
}

/// One cycle from partition `start` of `level`'s nodes: down through the coarser levels, then
/// back up, refining each level's partition.
fn one_cycle(
    level: &Level,
    m: f64,
    opts: &LouvainOptions,
    rng: &mut fastrand::Rng,
    start: Vec<usize>,
) -> Vec<usize> {
    let mut coarser: Vec<Level> = Vec::new();
    let mut partitions: Vec<Vec<usize>> = Vec::new();
    let mut community = start;
    loop {
        let current = coarser.last().unwrap_or(level);
        let n = current.adj.len();
        local_moves(current, m, opts.resolution, &mut community, rng);
        if crate::interrupt::stopping() {
            break;
        }
        // Every level is smaller than the last, so this ends.
        let (labels, groups) = renumber(&community);
        if groups == n {
            break;
        }
        let (mut partition, mut count) =
            renumber(&split_communities(current, m, opts.resolution, &community, rng));
        if count == n {
            // No subcommunity formed: the communities themselves become the coarser nodes.
            (partition, count) = (labels.clone(), groups);
        }
        let coarse = aggregate(current, &partition, count);
        // Each coarse node starts in the community its members are in (labels below `count`).
        let mut start = vec![0usize; count];
        for (v, &p) in partition.iter().enumerate() {
            start[p] = labels[v];
        }
        community = start;
        coarser.push(coarse);
        partitions.push(partition);
    }
    while let Some(partition) = partitions.pop() {
        coarser.pop();
        let finer = coarser.last().unwrap_or(level);
        community = partition.iter().map(|&p| community[p]).collect();
        if !crate::interrupt::stopping() {
            local_moves(finer, m, opts.resolution, &mut community, rng);
        }
    }
    community
}

/// Splits each community into subcommunities (Leiden's refinement, greedy): every node still
/// alone, in a seeded random order, joins the neighbouring subcommunity of its own community that
/// gains the most, if one gains. Returns each node's subcommunity.
fn split_communities(
    level: &Level,
    m: f64,
    resolution: f64,
    community: &[usize],
    rng: &mut fastrand::Rng,
) -> Vec<usize> {
    let n = level.adj.len();
    let mut sub: Vec<usize> = (0..n).collect();
    let mut alone = vec![true; n];
    let mut tot_out = level.out_deg.clone();
    let mut tot_in = level.in_deg.clone();
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut weights = CommunityWeights::new(n);
    for &v in &order {
        if !alone[v] {
            continue;
        }
        for &(w, wt) in &level.adj[v] {
            if community[w] == community[v] {
                weights.add(sub[w], wt);
            }
        }
        let (out_v, in_v) = (level.out_deg[v], level.in_deg[v]);
        let own = sub[v];
        tot_out[own] -= out_v;
        tot_in[own] -= in_v;
        let (mut best, mut best_gain) = (own, 0.0);
        for &c in weights.candidates() {
            let g =
                weights.to(c) / m - resolution * (out_v * tot_in[c] + in_v * tot_out[c]) / (m * m);
            if c != own && g > best_gain {
                best = c;
                best_gain = g;
            }
        }
        weights.clear();
        tot_out[best] += out_v;
        tot_in[best] += in_v;
        if best != own {
            sub[v] = best;
            alone[best] = false;
            alone[v] = false;
        }
    }
    sub
}

/// Moves nodes to the neighbouring community with the best modularity gain (staying unless one
/// gains strictly more), first every node in a seeded random order, then only the nodes next to
/// one that moved (a queue; networkit's PLM sweeps every node again instead, which costs more
/// and finds the same kind of local optimum), until no node can gain or [`MAX_SWEEPS`] times the
/// node count of visits were made. `community` holds the starting partition (labels below the
/// node count) and receives the result; returns the modularity gained.
fn local_moves(
    level: &Level,
    m: f64,
    resolution: f64,
    community: &mut [usize],
    rng: &mut fastrand::Rng,
) -> f64 {
    let n = level.adj.len();
    let mut tot_out = vec![0.0f64; n];
    let mut tot_in = vec![0.0f64; n];
    for (v, &c) in community.iter().enumerate() {
        tot_out[c] += level.out_deg[v];
        tot_in[c] += level.in_deg[v];
    }
    let mut queue: std::collections::VecDeque<usize> = (0..n).collect();
    rng.shuffle(queue.make_contiguous());
    let mut queued = vec![true; n];
    // Candidates are tried in the order their first neighbour comes.
    let mut weights = CommunityWeights::new(n);
    let mut gained = 0.0;
    let mut visits = 0usize;
    let budget = MAX_SWEEPS.saturating_mul(n);
    while let Some(v) = queue.pop_front() {
        queued[v] = false;
        visits += 1;
        if visits > budget || (visits.is_multiple_of(n) && crate::interrupt::stopping()) {
            break;
        }
        for &(w, wt) in &level.adj[v] {
            weights.add(community[w], wt);
        }
        let (out_v, in_v) = (level.out_deg[v], level.in_deg[v]);
        let old = community[v];
        tot_out[old] -= out_v;
        tot_in[old] -= in_v;
        let gain = |c: usize, to_c: f64| {
            to_c / m - resolution * (out_v * tot_in[c] + in_v * tot_out[c]) / (m * m)
        };
        let stay = gain(old, weights.to(old));
        let (mut best, mut best_gain) = (old, stay);
        for &c in weights.candidates() {
            let g = gain(c, weights.to(c));
            if g > best_gain {
                best = c;
                best_gain = g;
            }
        }
        weights.clear();
        tot_out[best] += out_v;
        tot_in[best] += in_v;
        if best != old {
            community[v] = best;
            gained += best_gain - stay;
            // Only the neighbours outside the community joined can now gain by moving.
            for &(w, _) in &level.adj[v] {
                if !queued[w] && community[w] != best {
                    queued[w] = true;
                    queue.push_back(w);
                }
            }
        }
    }
    gained
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GraphData, LouvainMethod, louvain_communities, modularity};

    /// `k` cliques of `size` nodes, clique `i` joined to clique `i + 1` by one edge, in a ring.
    fn ring_of_cliques(k: usize, size: usize) -> GraphData {
        let ids: Vec<String> = (0..k * size).map(|i| format!("n{i}")).collect();
        let mut edges = Vec::new();
        for c in 0..k {
            for a in 0..size {
                for b in a + 1..size {
                    edges.push((c * size + a, c * size + b));
                }
            }
            edges.push((c * size, ((c + 1) % k) * size + 1));
        }
        GraphData::build(
            ids.iter().map(String::as_str),
            edges.iter().map(|&(a, b)| (ids[a].as_str(), ids[b].as_str(), 1.0)),
            false,
        )
    }

    #[test]
    fn refined_louvain_finds_each_clique_of_a_ring() {
        let g = ring_of_cliques(8, 5);
        let opts = LouvainOptions { seed: 7, ..LouvainOptions::default() };
        assert_eq!(opts.method, LouvainMethod::Refined);
        let c = louvain_communities(&g, &opts);
        let expected: Vec<usize> = (0..40).map(|v| v / 5).collect();
        assert_eq!(c.community_id, expected);
        // Each clique: L = 10 of m = 88, degree 22 of 176: 8·(10/88 − (1/8)²) = 10/11 − 1/8.
        assert!((c.modularity - (10.0 / 11.0 - 0.125)).abs() < 1e-12);
        assert!((modularity(&g, &c.community_id, 1.0, true) - c.modularity).abs() < 1e-12);
    }

    /// Graphs whose best split is one community (modularity 0): an edge, a path of three, a
    /// triangle, a star, a complete graph. Every node left alone scores below 0 (an edge: −0.5).
    #[test]
    fn a_graph_best_left_whole_is_one_community() {
        let graphs: [(usize, Vec<(usize, usize)>); 5] = [
            (2, vec![(0, 1)]),
            (3, vec![(0, 1), (1, 2)]),
            (3, vec![(0, 1), (1, 2), (0, 2)]),
            (4, vec![(0, 1), (0, 2), (0, 3)]),
            (5, (0..5).flat_map(|a| (a + 1..5).map(move |b| (a, b))).collect()),
        ];
        for (n, edges) in graphs {
            let ids: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
            let g = GraphData::build(
                ids.iter().map(String::as_str),
                edges.iter().map(|&(a, b)| (ids[a].as_str(), ids[b].as_str(), 1.0)),
                false,
            );
            let c = louvain_communities(&g, &LouvainOptions::default());
            assert_eq!(c.community_count, 1, "{n} nodes, {edges:?}: {:?}", c.community_id);
            assert!(c.modularity.abs() < 1e-12, "{}", c.modularity);
        }
    }

    #[test]
    fn local_moves_refine_a_given_partition() {
        // Two triangles a-b-c and d-e-f joined by c-d, with c started on the wrong side: one
        // move puts it back, from Q = 6/49 (a,b and c,d,e,f: 3/49 each) to the triangles' 5/14.
        let adj = vec![
            vec![(1, 1.0), (2, 1.0)],
            vec![(0, 1.0), (2, 1.0)],
            vec![(0, 1.0), (1, 1.0), (3, 1.0)],
            vec![(2, 1.0), (4, 1.0), (5, 1.0)],
            vec![(3, 1.0), (5, 1.0)],
            vec![(3, 1.0), (4, 1.0)],
        ];
        let deg: Vec<f64> = adj.iter().map(|a| a.len() as f64 / 2.0).collect();
        let level = Level { adj, out_deg: deg.clone(), in_deg: deg };
        let mut community = vec![0, 0, 3, 3, 3, 3];
        let gained =
            local_moves(&level, 7.0, 1.0, &mut community, &mut fastrand::Rng::with_seed(1));
        assert_eq!(community, [0, 0, 0, 3, 3, 3]);
        assert!((gained - (5.0 / 14.0 - 6.0 / 49.0)).abs() < 1e-12, "{gained}");
    }
}
