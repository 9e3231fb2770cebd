//! Node positions: circular, grid, spiral, shell, seeded random, and force-directed
//! (Fruchterman–Reingold, 2D or 3D) with settling reported. Positions are `[x, y, z]`; 2D
//! layouts keep `z = 0`.

use crate::GraphData;

/// A layout's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Positions {
    /// One position per node, in node order.
    pub positions: Vec<[f64; 3]>,
    /// True when the layout stopped moving (always true for the static layouts).
    pub settled: bool,
    /// Iterations run (force-directed), else 0.
    pub iterations: usize,
}

fn fixed(positions: Vec<[f64; 3]>) -> Positions {
    Positions { positions, settled: true, iterations: 0 }
}

/// Nodes evenly spaced on a circle of radius `radius`.
pub fn circular(g: &GraphData, radius: f64) -> Positions {
    let n = g.node_count().max(1) as f64;
    fixed(
        (0..g.node_count())
            .map(|i| {
                let angle = std::f64::consts::TAU * i as f64 / n;
                [radius * angle.cos(), radius * angle.sin(), 0.0]
            })
            .collect(),
    )
}

/// Nodes on a square grid with `spacing` between neighbours, row by row.
pub fn grid(g: &GraphData, spacing: f64) -> Positions {
    let columns = (g.node_count() as f64).sqrt().ceil().max(1.0) as usize;
    fixed(
        (0..g.node_count())
            .map(|i| [(i % columns) as f64 * spacing, (i / columns) as f64 * spacing, 0.0])
            .collect(),
    )
}

/// Nodes along an Archimedean spiral, `spacing` apart.
pub fn spiral(g: &GraphData, spacing: f64) -> Positions {
    fixed(
        (0..g.node_count())
            .map(|i| {
                let t = (i as f64).sqrt() * 2.0;
                [spacing * t * t.cos(), spacing * t * t.sin(), 0.0]
            })
            .collect(),
    )
}

/// Nodes on concentric circles, `per_shell[k]` nodes on shell `k` (the rest on the last shell).
pub fn shell(g: &GraphData, per_shell: &[usize], spacing: f64) -> Positions {
    let n = g.node_count();
    let mut positions = Vec::with_capacity(n);
    let mut start = 0;
    let mut shell = 0;
    while start < n {
        let size =
            per_shell.get(shell).copied().filter(|s| *s > 0).unwrap_or(n - start).min(n - start);
        let radius = if shell == 0 && size == 1 { 0.0 } else { spacing * (shell + 1) as f64 };
        for j in 0..size {
            let angle = std::f64::consts::TAU * j as f64 / size as f64;
            positions.push([radius * angle.cos(), radius * angle.sin(), 0.0]);
        }
        start += size;
        shell += 1;
    }
    fixed(positions)
}

/// Seeded random positions in a cube (or square) of side `size`.
pub fn random(g: &GraphData, size: f64, seed: u64, three_d: bool) -> Positions {
    let mut rng = fastrand::Rng::with_seed(seed);
    fixed(
        (0..g.node_count())
            .map(|_| {
                [rng.f64() * size, rng.f64() * size, if three_d { rng.f64() * size } else { 0.0 }]
            })
            .collect(),
    )
}

/// Options of the force-directed layout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForceOptions {
    /// Most iterations.
    pub max_iterations: usize,
    /// 3D (else 2D).
    pub three_d: bool,
    /// Seed of the starting positions.
    pub seed: u64,
    /// Settled when no node moves more than this (in layout units) in an iteration.
    pub tolerance: f64,
}

impl Default for ForceOptions {
    fn default() -> Self {
        Self { max_iterations: 500, three_d: false, seed: 1, tolerance: 1e-3 }
    }
}

/// Fruchterman–Reingold: neighbours attract, every pair repels, and a temperature that cools
/// linearly bounds each step; settled when the largest step falls under the tolerance.
pub fn force_directed(g: &GraphData, options: &ForceOptions) -> Positions {
    let n = g.node_count();
    let dims = if options.three_d { 3 } else { 2 };
    let mut pos = random(g, 1.0, options.seed, options.three_d).positions;
    if n < 2 {
        return Positions { positions: pos, settled: true, iterations: 0 };
    }
    let k = (1.0 / n as f64).powf(1.0 / dims as f64);
    let mut temperature = 0.1;
    let cooling = temperature / (options.max_iterations as f64 + 1.0);
    let mut displacement = vec![[0.0f64; 3]; n];
    let stop = crate::interrupt::current();
    let steps = crate::interrupt::steps();
    crate::interrupt::begin(&steps, options.max_iterations, "layout iterations");
    for iteration in 1..=options.max_iterations {
        crate::interrupt::step(&steps);
        displacement.iter_mut().for_each(|d| *d = [0.0; 3]);
        for i in 0..n {
            // One iteration of a 100k-node graph is 5·10⁹ pairs: the flag is looked at before
            // each node's row of pairs (at most n − 1 of them), not only between iterations.
            if crate::interrupt::stop(&stop) {
                return Positions { positions: pos, settled: false, iterations: iteration - 1 };
            }
            for j in (i + 1)..n {
                let mut delta = [0.0; 3];
                for d in 0..dims {
                    delta[d] = pos[i][d] - pos[j][d];
                }
                let distance = delta.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
                let force = k * k / distance;
                for d in 0..dims {
                    let push = delta[d] / distance * force;
                    displacement[i][d] += push;
                    displacement[j][d] -= push;
                }
            }
        }
        for &(a, b, _) in &g.edges {
            if a == b {
                continue;
            }
            let mut delta = [0.0; 3];
            for d in 0..dims {
                delta[d] = pos[a][d] - pos[b][d];
            }
            let distance = delta.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
            let force = distance * distance / k;
            for d in 0..dims {
                let pull = delta[d] / distance * force;
                displacement[a][d] -= pull;
                displacement[b][d] += pull;
            }
        }
        let mut largest: f64 = 0.0;
        for (p, disp) in pos.iter_mut().zip(&displacement) {
            let length = disp.iter().map(|x| x * x).sum::<f64>().sqrt();
            if length > 0.0 {
                let step = length.min(temperature);
                for d in 0..dims {
                    p[d] += disp[d] / length * step;
                }
                largest = largest.max(step);
            }
        }
        temperature = (temperature - cooling).max(0.0);
        if largest < options.tolerance {
            return Positions { positions: pos, settled: true, iterations: iteration };
        }
    }
    Positions { positions: pos, settled: false, iterations: options.max_iterations }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: usize) -> GraphData {
        let ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let edges: Vec<(String, String, f64)> =
            (1..n).map(|i| ((i - 1).to_string(), i.to_string(), 1.0)).collect();
        GraphData::build(
            ids.iter().map(String::as_str),
            edges.iter().map(|(a, b, w)| (a.as_str(), b.as_str(), *w)),
            false,
        )
    }

    fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
        (0..3).map(|d| (a[d] - b[d]).powi(2)).sum::<f64>().sqrt()
    }

    #[test]
    fn static_layouts_place_every_node_where_expected() {
        let g = path(9);
        let c = circular(&g, 10.0);
        assert!(c.positions.iter().all(|p| (distance(*p, [0.0; 3]) - 10.0).abs() < 1e-9));
        assert_eq!(grid(&g, 2.0).positions[4], [2.0, 2.0, 0.0], "the centre of a 3×3 grid");
        let s = shell(&g, &[1, 8], 5.0);
        assert_eq!(s.positions[0], [0.0, 0.0, 0.0]);
        assert!(s.positions[1..].iter().all(|p| (distance(*p, [0.0; 3]) - 10.0).abs() < 1e-9));
        assert_eq!(random(&g, 1.0, 7, true), random(&g, 1.0, 7, true), "seeded");
        assert_ne!(random(&g, 1.0, 7, true), random(&g, 1.0, 8, true));
        assert_eq!(spiral(&g, 1.0).positions.len(), 9);
    }

    #[test]
    fn force_layout_settles_with_neighbours_closer_than_strangers() {
        let g = path(12);
        let layout =
            force_directed(&g, &ForceOptions { max_iterations: 2_000, ..ForceOptions::default() });
        assert!(layout.settled, "settled after {} iterations", layout.iterations);
        let p = &layout.positions;
        let neighbours: f64 = (1..12).map(|i| distance(p[i - 1], p[i])).sum::<f64>() / 11.0;
        assert!(
            neighbours < distance(p[0], p[11]) / 3.0,
            "a path stretches out: ends {} apart, neighbours {neighbours}",
            distance(p[0], p[11])
        );
        assert!(p.iter().all(|q| q[2] == 0.0), "2D stays flat");
        let three = force_directed(&g, &ForceOptions { three_d: true, ..ForceOptions::default() });
        assert!(three.positions.iter().any(|q| q[2] != 0.0));
    }
}
