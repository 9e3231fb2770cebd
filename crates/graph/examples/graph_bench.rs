//! Times PageRank, exact betweenness and the force-directed layout on an edge-list file, for
//! bench/graph_bench.py (which compares the same graphs with rustworkx and networkx).
//!
//! `cargo run --release -p schemascope-graph --example graph_bench -- MODE --graph FILE
//! [--runs N] [--warmup W] [--values OUT] [--tol T] [--max-iter I] [--iterations K] [--three-d]
//! [--method M] [--seed S]`
//!
//! - `MODE` is `pagerank` (networkx's defaults unless `--tol` / `--max-iter`), `betweenness`
//!   (unweighted, normalised, two threads), `louvain` (`--method refined|networkx`, `--seed S`,
//!   default 42; reports the modularity) or `layout` (`force_directed`, `K` iterations per run,
//!   2D unless `--three-d`).
//! - The file is text: a first line `nodes edges directed(0|1)`, then one `source target [weight]`
//!   line per edge, nodes numbered `0..nodes` (weight 1 when absent).
//! - Only the algorithm call is timed (not reading the file nor `GraphData::build`), `W` untimed
//!   warm-up runs first (default 0); `--values OUT` writes the last run's per-node values as a JSON
//!   array (shortest round-trip decimals, so nothing is lost in the comparison).
//!
//! Prints one JSON object: the graph's size, load and build seconds, every run's seconds and their
//! median, plus PageRank's iteration count or the layout's iterations per second.

use std::error::Error;
use std::time::Instant;

use schemascope_graph::layout::{ForceOptions, force_directed};
use schemascope_graph::{
    GraphData, LouvainMethod, LouvainOptions, PageRankOptions, betweenness_centrality,
    louvain_communities, pagerank,
};
use serde_json::{Value, json};

/// Nodes, `(source, target, weight)` by node index, and whether the edges are directed.
struct EdgeList {
    nodes: usize,
    edges: Vec<(usize, usize, f64)>,
    directed: bool,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag =
        |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: usize| -> Result<usize, Box<dyn Error>> {
        Ok(flag(name)
            .map(|v| v.parse::<usize>())
            .transpose()
            .map_err(|e| format!("{name}: {e}"))?
            .unwrap_or(default))
    };
    let mode = args
        .first()
        .cloned()
        .ok_or("usage: graph_bench pagerank|betweenness|layout --graph FILE [--runs N] ...")?;
    let path = flag("--graph").ok_or("--graph FILE is required")?;
    let (runs, warmup, iterations) =
        (number("--runs", 5)?.max(1), number("--warmup", 0)?, number("--iterations", 20)?);
    let three_d = args.iter().any(|a| a == "--three-d");
    let defaults = PageRankOptions::default();
    let tol = flag("--tol")
        .map(|t| t.parse::<f64>())
        .transpose()
        .map_err(|e| format!("--tol: {e}"))?
        .unwrap_or(defaults.tol);
    let pagerank_options =
        PageRankOptions { tol, max_iter: number("--max-iter", defaults.max_iter)?, ..defaults };
    let louvain_options = LouvainOptions {
        seed: number("--seed", 42)? as u64,
        method: match flag("--method").as_deref() {
            None | Some("refined") => LouvainMethod::Refined,
            Some("networkx") => LouvainMethod::Networkx,
            Some(other) => return Err(format!("--method: `{other}` (refined or networkx)").into()),
        },
        ..LouvainOptions::default()
    };

    let start = Instant::now();
    let list =
        read_edge_list(&std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?)?;
    let load_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    // Node ids are the decimal indices, built once so the edges can borrow them.
    let ids: Vec<String> = (0..list.nodes).map(|i| i.to_string()).collect();
    let g = GraphData::build(
        ids.iter().map(String::as_str),
        list.edges.iter().map(|&(u, v, w)| (&ids[u], &ids[v], w)),
        list.directed,
    );
    let build_s = start.elapsed().as_secs_f64();

    let mut extra = serde_json::Map::new();
    let mut values: Vec<f64> = Vec::new();
    let mut times = Vec::with_capacity(runs);
    for run in 0..warmup + runs {
        let start = Instant::now();
        match mode.as_str() {
            "pagerank" => {
                let pr = pagerank(&g, &pagerank_options);
                extra.insert("pagerank_iterations".into(), json!(pr.iterations));
                extra.insert("converged".into(), json!(pr.converged));
                values = pr.scores;
            }
            "betweenness" => values = betweenness_centrality(&g, false),
            "louvain" => {
                let c = louvain_communities(&g, &louvain_options);
                extra.insert("modularity".into(), json!(c.modularity));
                extra.insert("community_count".into(), json!(c.community_count));
                values = c.community_id.iter().map(|&c| c as f64).collect();
            }
            "layout" => {
                // Tolerance 0 never settles, so every run does exactly `iterations` iterations.
                let options =
                    ForceOptions { max_iterations: iterations, three_d, seed: 1, tolerance: 0.0 };
                let layout = force_directed(&g, &options);
                extra.insert("layout_iterations".into(), json!(layout.iterations));
                std::hint::black_box(layout);
            }
            other => {
                return Err(format!(
                    "unknown mode `{other}` (pagerank, betweenness, louvain or layout)"
                )
                .into());
            }
        }
        if run >= warmup {
            times.push(start.elapsed().as_secs_f64());
        }
    }
    let median_s = median(&times);
    if mode == "layout" {
        extra.insert("dimensions".into(), json!(if three_d { 3 } else { 2 }));
        extra.insert("iterations_per_s".into(), json!(iterations as f64 / median_s));
    }
    if let Some(out) = flag("--values") {
        std::fs::write(&out, serde_json::to_string(&values)?).map_err(|e| format!("{out}: {e}"))?;
        extra.insert("values".into(), json!(out));
    }
    let mut report = json!({
        "mode": mode,
        "nodes": g.node_count(),
        "edges": g.edges.len(),
        "directed": g.directed,
        "load_s": load_s,
        "build_s": build_s,
        "runs_s": times,
        "median_s": median_s,
    });
    if let Value::Object(map) = &mut report {
        map.extend(extra);
    }
    println!("{report}");
    Ok(())
}

/// Parses the edge-list text described in the module docs, naming the line at fault.
fn read_edge_list(text: &str) -> Result<EdgeList, Box<dyn Error>> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("empty edge list")?;
    let head: Vec<&str> = header.split_whitespace().collect();
    let [nodes, count, directed] = head[..] else {
        return Err(format!("line 1: expected `nodes edges directed`, got `{header}`").into());
    };
    let nodes: usize = nodes.parse().map_err(|e| format!("line 1: nodes: {e}"))?;
    let count: usize = count.parse().map_err(|e| format!("line 1: edges: {e}"))?;
    let mut edges = Vec::with_capacity(count);
    for (i, line) in lines {
        let mut fields = line.split_whitespace();
        let mut node = || -> Result<usize, Box<dyn Error>> {
            let v: usize = fields.next().ok_or("missing endpoint")?.parse()?;
            if v < nodes {
                Ok(v)
            } else {
                Err(format!("node {v} out of range (nodes: {nodes})").into())
            }
        };
        let (u, v) = (
            node().map_err(|e| format!("line {}: {e}", i + 1))?,
            node().map_err(|e| format!("line {}: {e}", i + 1))?,
        );
        let w = fields
            .next()
            .map(str::parse::<f64>)
            .transpose()
            .map_err(|e| format!("line {}: weight: {e}", i + 1))?
            .unwrap_or(1.0);
        edges.push((u, v, w));
    }
    if edges.len() != count {
        return Err(format!("header says {count} edges, the file has {}", edges.len()).into());
    }
    Ok(EdgeList { nodes, edges, directed: directed == "1" })
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 }
}
