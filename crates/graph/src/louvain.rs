//! Louvain community detection and networkx's `modularity`.

use crate::model::GraphData;

/// Louvain settings; the defaults are networkx's `louvain_communities`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LouvainOptions {
    /// Seed for the node visiting order; the same seed gives the same communities.
    pub seed: u64,
    /// Modularity resolution (`gamma`), 1.0.
    pub resolution: f64,
    /// A level (networkx's method) or a cycle (refined) that improves modularity by no more
    /// than this ends the run, 1e-7.
    pub threshold: f64,
    /// Whether edge weights count.
    pub weighted: bool,
    /// Which Louvain: refined (the default) or networkx's.
    pub method: LouvainMethod,
}

/// The two Louvain variants: they share the gain, the seeded visiting order and the aggregation,
/// and differ in when local moves stop and whether they run again on the way back down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LouvainMethod {
    /// networkit's PLM with Leiden's split of communities before each aggregation, repeated
    /// from its own result while it gains (see `refined_louvain.rs`): a higher modularity than
    /// networkx's method and networkit's PLM on large sparse graphs, in a fraction of
    /// networkx's time. Not networkx's partitions.
    #[default]
    Refined,
    /// networkx's `louvain_communities`: local moves until no node moves, no refinement.
    Networkx,
}

impl Default for LouvainOptions {
    fn default() -> Self {
        LouvainOptions {
            seed: 0,
            resolution: 1.0,
            threshold: 1e-7,
            weighted: true,
            method: LouvainMethod::default(),
        }
    }
}

/// Community membership per node and the partition's modularity.
#[derive(Debug, Clone, PartialEq)]
pub struct Communities {
    /// Community of each node, numbered 0.. in order of each community's first node.
    pub community_id: Vec<usize>,
    /// Number of communities.
    pub community_count: usize,
    /// Modularity of the partition ([`modularity`]; directed for a directed graph).
    pub modularity: f64,
}

/// The weighted graph being coarsened: symmetric neighbour weights without self-loops (both arc
/// directions added together) and each node's weighted out- and in-degree, self-loops included.
/// An undirected graph's degree is split evenly into out and in, which turns networkx's directed
/// gain into its undirected one, so one code path serves both.
pub(crate) struct Level {
    pub(crate) adj: Vec<Vec<(usize, f64)>>,
    pub(crate) out_deg: Vec<f64>,
    pub(crate) in_deg: Vec<f64>,
}

/// Louvain communities by `opts.method`. [`LouvainMethod::Networkx`] is networkx's
/// `louvain_communities(G, weight, resolution, threshold, seed)` — the same method (local moves
/// in a seeded random order, gains from directed modularity for a directed graph, then
/// aggregation, until a level gains no more than `threshold`), but not the same random stream,
/// so the partition differs in detail; on the test graphs the modularity is within 0.02 of
/// networkx's and inside the range networkx reaches over seeds 0..19. [`LouvainMethod::Refined`]
/// is networkit's PLM with refinement and Leiden's split (`refined_louvain.rs`).
pub fn louvain_communities(g: &GraphData, opts: &LouvainOptions) -> Communities {
    let n = g.node_count();
    let mut level = Level { adj: vec![Vec::new(); n], out_deg: vec![0.0; n], in_deg: vec![0.0; n] };
    // Both arc directions of a pair, summed in edge order: a stable sort by pair keeps that
    // order among equal pairs (a map keyed by pair summed the same way, more slowly).
    let mut arcs: Vec<((usize, usize), f64)> = Vec::with_capacity(g.edges.len());
    for &(u, v, w) in &g.edges {
        let w = if opts.weighted { w } else { 1.0 };
        if g.directed {
            level.out_deg[u] += w;
            level.in_deg[v] += w;
        } else {
            // Half of each end's degree goes to out, half to in (a loop adds 2w to its node).
            for x in [u, v] {
                level.out_deg[x] += w / 2.0;
                level.in_deg[x] += w / 2.0;
            }
        }
        if u != v {
            arcs.push(((u.min(v), u.max(v)), w));
        }
    }
    arcs.sort_by_key(|&(pair, _)| pair);
    let mut degree = vec![0u32; n];
    for ((u, v), _) in arcs.iter().copied() {
        degree[u] += 1;
        degree[v] += 1;
    }
    for (list, &d) in level.adj.iter_mut().zip(&degree) {
        list.reserve_exact(d as usize);
    }
    for group in arcs.chunk_by(|a, b| a.0 == b.0) {
        let (u, v) = group[0].0;
        let w = group.iter().fold(0.0, |sum, &(_, w)| sum + w);
        level.adj[u].push((v, w));
        level.adj[v].push((u, w));
    }
    let m: f64 = level.out_deg.iter().sum();
    let mut membership: Vec<usize> = (0..n).collect();
    if m <= 0.0 {
        return finish(g, membership, opts);
    }
    let mut rng = fastrand::Rng::with_seed(opts.seed);
    if opts.method == LouvainMethod::Refined {
        let membership = crate::refined_louvain::refined_louvain(level, m, opts, &mut rng);
        return finish(g, membership, opts);
    }
    let mut current = modularity(g, &membership, opts.resolution, opts.weighted);
    let steps = crate::interrupt::steps();
    crate::interrupt::begin(&steps, 0, "levels aggregated");
    loop {
        if crate::interrupt::stopping() {
            break;
        }
        crate::interrupt::step(&steps);
        let (moved, partition) = one_level(&level, m, opts.resolution, &mut rng);
        if !moved {
            break;
        }
        let (partition, count) = renumber(&partition);
        let candidate: Vec<usize> = membership.iter().map(|&c| partition[c]).collect();
        let q = modularity(g, &candidate, opts.resolution, opts.weighted);
        if q - current <= opts.threshold {
            if q > current {
                membership = candidate;
            }
            break;
        }
        membership = candidate;
        current = q;
        level = aggregate(&level, &partition, count);
    }
    finish(g, membership, opts)
}

fn one_level(
    level: &Level,
    m: f64,
    resolution: f64,
    rng: &mut fastrand::Rng,
) -> (bool, Vec<usize>) {
    let n = level.adj.len();
    let mut community: Vec<usize> = (0..n).collect();
    let mut tot_out = level.out_deg.clone();
    let mut tot_in = level.in_deg.clone();
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut weights = CommunityWeights::new(n);
    let mut any_move = false;
    loop {
        if crate::interrupt::stopping() {
            break;
        }
        let mut moves = 0;
        for &v in &order {
            for &(w, wt) in &level.adj[v] {
                weights.add(community[w], wt);
            }
            let (out_v, in_v) = (level.out_deg[v], level.in_deg[v]);
            let old = community[v];
            tot_out[old] -= out_v;
            tot_in[old] -= in_v;
            // Modularity gained by joining community c, given `to_c` weight between v and c.
            let gain = |c: usize, to_c: f64| {
                to_c / m - resolution * (out_v * tot_in[c] + in_v * tot_out[c]) / (m * m)
            };
            let mut best = old;
            let mut best_gain = gain(old, weights.to(old));
            weights.sort();
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
                moves += 1;
            }
        }
        if moves == 0 {
            break;
        }
        any_move = true;
    }
    (any_move, community)
}

/// The weight from one node (or community) to each community its neighbours are in, summed in
/// neighbour order, and those communities in the order first met: dense arrays reset after each
/// use (a map per node cost most of a run on 100k nodes).
pub(crate) struct CommunityWeights {
    weight_to: Vec<f64>,
    linked: Vec<bool>,
    candidates: Vec<usize>,
}

impl CommunityWeights {
    /// Room for communities labelled below `count`.
    pub(crate) fn new(count: usize) -> Self {
        Self { weight_to: vec![0.0; count], linked: vec![false; count], candidates: Vec::new() }
    }

    /// Adds `weight` towards community `c`.
    #[inline]
    pub(crate) fn add(&mut self, c: usize, weight: f64) {
        if !self.linked[c] {
            self.linked[c] = true;
            self.candidates.push(c);
        }
        self.weight_to[c] += weight;
    }

    /// The weight towards `c`: 0 when no neighbour is in it.
    #[inline]
    pub(crate) fn to(&self, c: usize) -> f64 {
        if self.linked[c] { self.weight_to[c] } else { 0.0 }
    }

    /// The communities met, in the order first met (or sorted, after [`Self::sort`]).
    pub(crate) fn candidates(&self) -> &[usize] {
        &self.candidates
    }

    /// Orders the communities met by label.
    pub(crate) fn sort(&mut self) {
        self.candidates.sort_unstable();
    }

    /// Forgets every weight, for the next node.
    pub(crate) fn clear(&mut self) {
        for &c in &self.candidates {
            self.weight_to[c] = 0.0;
            self.linked[c] = false;
        }
        self.candidates.clear();
    }
}

/// Labels renumbered 0.. in order of first appearance, and how many there are.
pub(crate) fn renumber(labels: &[usize]) -> (Vec<usize>, usize) {
    let mut map = vec![usize::MAX; labels.iter().max().map_or(0, |&l| l + 1)];
    let mut count = 0;
    let out = labels
        .iter()
        .map(|&l| {
            if map[l] == usize::MAX {
                map[l] = count;
                count += 1;
            }
            map[l]
        })
        .collect();
    (out, count)
}

/// One node per community: weights between communities add up, internal ones drop out of the
/// neighbour lists (they stay in the degrees, which simply add up). Each community's members are
/// visited in node order and their neighbours in list order, so every sum adds up in the same
/// order as a map filled node by node would, with dense arrays instead of a map per community.
pub(crate) fn aggregate(level: &Level, partition: &[usize], count: usize) -> Level {
    let mut next = Level {
        adj: Vec::with_capacity(count),
        out_deg: vec![0.0; count],
        in_deg: vec![0.0; count],
    };
    // Members of each community in node order: a counting sort of the nodes by community.
    let mut first = vec![0usize; count + 1];
    for &c in partition {
        first[c + 1] += 1;
    }
    let mut running = 0;
    for slot in first.iter_mut() {
        running += *slot;
        *slot = running;
    }
    let mut fill = first.clone();
    let mut members = vec![0usize; partition.len()];
    for (v, &c) in partition.iter().enumerate() {
        members[fill[c]] = v;
        fill[c] += 1;
    }
    let mut weights = CommunityWeights::new(count);
    for (c, bounds) in first.windows(2).enumerate() {
        for &v in &members[bounds[0]..bounds[1]] {
            next.out_deg[c] += level.out_deg[v];
            next.in_deg[c] += level.in_deg[v];
            for &(w, wt) in &level.adj[v] {
                let d = partition[w];
                if d != c {
                    weights.add(d, wt);
                }
            }
        }
        weights.sort();
        next.adj.push(weights.candidates().iter().map(|&d| (d, weights.to(d))).collect());
        weights.clear();
    }
    next
}

/// Modularity of a partition of `level`'s nodes (`m` its total weight), from its neighbour
/// lists and degrees: [`modularity`] on the graph it was built from, less the self-loops' share
/// (which no partition changes), up to rounding — for comparing partitions.
pub(crate) fn level_modularity(level: &Level, m: f64, resolution: f64, community: &[usize]) -> f64 {
    let n = level.adj.len();
    let mut inside = vec![0.0f64; n];
    let mut out_c = vec![0.0f64; n];
    let mut in_c = vec![0.0f64; n];
    for (v, &c) in community.iter().enumerate() {
        out_c[c] += level.out_deg[v];
        in_c[c] += level.in_deg[v];
        for &(w, wt) in &level.adj[v] {
            if community[w] == c {
                inside[c] += wt;
            }
        }
    }
    (0..n).map(|c| inside[c] / (2.0 * m) - resolution * out_c[c] * in_c[c] / (m * m)).sum()
}

fn finish(g: &GraphData, membership: Vec<usize>, opts: &LouvainOptions) -> Communities {
    let (community_id, community_count) = renumber(&membership);
    let modularity = modularity(g, &community_id, opts.resolution, opts.weighted);
    Communities { community_id, community_count, modularity }
}

/// Modularity of a partition (community id per node), as networkx's
/// `community.modularity(G, communities, weight, resolution)`.
///
/// Undirected: `Σ_c L_c/m − γ·(d_c/2m)²`, with `L_c` the weight inside `c` and `d_c` its total
/// degree (a self-loop counts once in `L_c`, twice in the degree). Directed:
/// `Σ_c L_c/m − γ·out_c·in_c/m²`. Returns 0 for a graph with no edge weight.
pub fn modularity(g: &GraphData, community: &[usize], resolution: f64, weighted: bool) -> f64 {
    modularity_over(&g.edges, g.directed, community, resolution, weighted)
}

fn modularity_over(
    edges: &[(usize, usize, f64)],
    directed: bool,
    community: &[usize],
    resolution: f64,
    weighted: bool,
) -> f64 {
    let count = community.iter().copied().max().map_or(0, |c| c + 1);
    let mut inside = vec![0.0; count];
    let mut out_deg = vec![0.0; count];
    let mut in_deg = vec![0.0; count];
    let mut m = 0.0;
    for &(u, v, w) in edges {
        let w = if weighted { w } else { 1.0 };
        m += w;
        out_deg[community[u]] += w;
        in_deg[community[v]] += w;
        if community[u] == community[v] {
            inside[community[u]] += w;
        }
    }
    if m == 0.0 {
        return 0.0;
    }
    (0..count)
        .map(|c| {
            let expected = if directed {
                out_deg[c] * in_deg[c] / (m * m)
            } else {
                let d = out_deg[c] + in_deg[c];
                d * d / (4.0 * m * m)
            };
            inside[c] / m - resolution * expected
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_triangles() -> GraphData {
        GraphData::build(
            ["a", "b", "c", "d", "e", "f"],
            [
                ("a", "b", 1.0),
                ("b", "c", 1.0),
                ("c", "a", 1.0),
                ("d", "e", 1.0),
                ("e", "f", 1.0),
                ("f", "d", 1.0),
                ("c", "d", 1.0),
            ],
            false,
        )
    }

    #[test]
    fn louvain_splits_two_triangles_joined_by_a_bridge() {
        let c = louvain_communities(&two_triangles(), &LouvainOptions::default());
        assert_eq!(c.community_id, [0, 0, 0, 1, 1, 1]);
        // Each side: L = 3 of m = 7, degree 7 of 14: 2·(3/7 − 1/4) = 5/14.
        assert!((c.modularity - 5.0 / 14.0).abs() < 1e-12);
    }

    #[test]
    fn modularity_of_one_community_is_zero() {
        assert!(modularity(&two_triangles(), &[0; 6], 1.0, true).abs() < 1e-12);
    }
}
