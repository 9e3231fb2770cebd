//! Louvain community detection and networkx's `modularity`.

use std::collections::HashMap;

use crate::model::GraphData;

/// Louvain settings; the defaults are networkx's `louvain_communities`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LouvainOptions {
    /// Seed for the node visiting order; the same seed gives the same communities.
    pub seed: u64,
    /// Modularity resolution (`gamma`), 1.0.
    pub resolution: f64,
    /// A level that improves modularity by no more than this ends the run, 1e-7.
    pub threshold: f64,
    /// Whether edge weights count.
    pub weighted: bool,
}

impl Default for LouvainOptions {
    fn default() -> Self {
        LouvainOptions { seed: 0, resolution: 1.0, threshold: 1e-7, weighted: true }
    }
}

/// Community membership per node and the partition's modularity.
#[derive(Debug, Clone, PartialEq)]
pub struct Communities {
    /// Community of each node, numbered 0.. in order of each community's first node.
    pub community_id: Vec<usize>,
    /// Number of communities.
    pub community_count: usize,
    /// Modularity of the partition (of the undirected view for a directed graph).
    pub modularity: f64,
}

/// Undirected weighted graph being coarsened: neighbour lists without self-loops, loop weights
/// apart, and weighted degrees (a loop counts twice, as in networkx).
struct Level {
    adj: Vec<Vec<(usize, f64)>>,
    loops: Vec<f64>,
}

impl Level {
    fn degree(&self, v: usize) -> f64 {
        self.adj[v].iter().map(|&(_, w)| w).sum::<f64>() + 2.0 * self.loops[v]
    }
}

/// Louvain communities, as networkx's `louvain_communities(G, weight, resolution, threshold,
/// seed)` — the same method (local moves in a seeded random order, then aggregation, until a
/// level gains no more than `threshold`), but not the same random stream, so the partition
/// differs in detail; modularity is within 0.02 of networkx's on the test graphs.
///
/// A directed graph is treated as undirected (weights of `u→v` and `v→u` add up).
pub fn louvain_communities(g: &GraphData, opts: &LouvainOptions) -> Communities {
    let n = g.node_count();
    let mut level = Level { adj: vec![Vec::new(); n], loops: vec![0.0; n] };
    {
        let mut merged: HashMap<(usize, usize), f64> = HashMap::new();
        for &(u, v, w) in &g.edges {
            let w = if opts.weighted { w } else { 1.0 };
            *merged.entry((u.min(v), u.max(v))).or_default() += w;
        }
        let mut keys: Vec<_> = merged.into_iter().collect();
        keys.sort_unstable_by_key(|&(k, _)| k);
        for ((u, v), w) in keys {
            if u == v {
                level.loops[u] += w;
            } else {
                level.adj[u].push((v, w));
                level.adj[v].push((u, w));
            }
        }
    }
    let m: f64 = (0..n).map(|v| level.degree(v)).sum::<f64>() / 2.0;
    let mut membership: Vec<usize> = (0..n).collect();
    if m <= 0.0 {
        return finish(g, membership, opts);
    }
    let mut rng = fastrand::Rng::with_seed(opts.seed);
    let mut current = modularity_of(&membership, g, opts);
    loop {
        let (moved, partition) = one_level(&level, m, opts.resolution, &mut rng);
        if !moved {
            break;
        }
        let (partition, count) = renumber(&partition);
        let candidate: Vec<usize> = membership.iter().map(|&c| partition[c]).collect();
        let q = modularity_of(&candidate, g, opts);
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

fn one_level(level: &Level, m: f64, resolution: f64, rng: &mut fastrand::Rng) -> (bool, Vec<usize>) {
    let n = level.adj.len();
    let degree: Vec<f64> = (0..n).map(|v| level.degree(v)).collect();
    let mut community: Vec<usize> = (0..n).collect();
    let mut total = degree.clone();
    let mut order: Vec<usize> = (0..n).collect();
    rng.shuffle(&mut order);
    let mut links: HashMap<usize, f64> = HashMap::new();
    let mut any_move = false;
    loop {
        let mut moves = 0;
        for &v in &order {
            links.clear();
            for &(w, wt) in &level.adj[v] {
                *links.entry(community[w]).or_default() += wt;
            }
            let old = community[v];
            total[old] -= degree[v];
            let gain = |c: usize, to_c: f64| to_c / m - resolution * total[c] * degree[v] / (2.0 * m * m);
            let mut best = old;
            let mut best_gain = gain(old, links.get(&old).copied().unwrap_or(0.0));
            let mut candidates: Vec<(usize, f64)> = links.iter().map(|(&c, &w)| (c, w)).collect();
            candidates.sort_unstable_by_key(|&(c, _)| c);
            for (c, to_c) in candidates {
                let g = gain(c, to_c);
                if g > best_gain {
                    best = c;
                    best_gain = g;
                }
            }
            total[best] += degree[v];
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

fn renumber(labels: &[usize]) -> (Vec<usize>, usize) {
    let mut map: HashMap<usize, usize> = HashMap::new();
    let out = labels
        .iter()
        .map(|&l| {
            let next = map.len();
            *map.entry(l).or_insert(next)
        })
        .collect();
    (out, map.len())
}

fn aggregate(level: &Level, partition: &[usize], count: usize) -> Level {
    let mut next = Level { adj: vec![Vec::new(); count], loops: vec![0.0; count] };
    let mut weights: Vec<HashMap<usize, f64>> = vec![HashMap::new(); count];
    for (v, neighbours) in level.adj.iter().enumerate() {
        let cv = partition[v];
        next.loops[cv] += level.loops[v];
        for &(w, wt) in neighbours {
            let cw = partition[w];
            if cv == cw {
                next.loops[cv] += wt / 2.0; // each internal edge is listed from both ends
            } else {
                *weights[cv].entry(cw).or_default() += wt;
            }
        }
    }
    for (c, map) in weights.into_iter().enumerate() {
        let mut list: Vec<_> = map.into_iter().collect();
        list.sort_unstable_by_key(|&(d, _)| d);
        next.adj[c] = list;
    }
    next
}

fn finish(g: &GraphData, membership: Vec<usize>, opts: &LouvainOptions) -> Communities {
    let (community_id, community_count) = renumber(&membership);
    let modularity = modularity_of(&community_id, g, opts);
    Communities { community_id, community_count, modularity }
}

fn modularity_of(community: &[usize], g: &GraphData, opts: &LouvainOptions) -> f64 {
    modularity_over(&g.edges, false, community, opts.resolution, opts.weighted)
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

fn modularity_over(edges: &[(usize, usize, f64)], directed: bool, community: &[usize], resolution: f64, weighted: bool) -> f64 {
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
            [("a", "b", 1.0), ("b", "c", 1.0), ("c", "a", 1.0), ("d", "e", 1.0), ("e", "f", 1.0), ("f", "d", 1.0), ("c", "d", 1.0)],
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
