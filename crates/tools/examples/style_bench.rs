//! Benchmark: the computed style of every node of a 100k-node graph under 20 style layers
//! (the web view's scene): cold (nothing cached: the selectors' property columns read from the
//! items' text, every selector evaluated, styles merged), 19 new selectors over properties
//! already read (an LLM restyling everything), every selector's matches cached (a redraw), and
//! after one more layer (one new selector, what a find_and_style call redraws).
//!
//! `cargo run --release -p schemascope-tools --example style_bench -- [--nodes 100000] [--runs 7]`

use std::time::Instant;

use schemascope_graph_session::style::{ElementKind, LayerSource};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::graph_session::data::SessionData;
use schemascope_tools::graph_session::scene::style_table;
use schemascope_tools::graph_session::{StyleElementsParams, find_and_style_nodes};
use schemascope_tools::{Caller, Services};
use serde_json::json;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let n = arg("--nodes", 100_000);
    let runs = arg("--runs", 7);
    let types = [
        "server", "database", "cache", "gateway", "queue", "worker", "storage", "proxy", "client",
        "monitor",
    ];
    let regions = ["us-east", "us-west", "eu-west", "eu-central", "ap-south"];
    let mut rng = fastrand::Rng::with_seed(7);
    let nodes: Vec<_> = (0..n)
        .map(|i| {
            json!({"id": format!("n{i}"), "data": {
                "type": types[rng.usize(..types.len())], "region": regions[rng.usize(..regions.len())],
                "cpu": (rng.f64() * 100.0).round() / 100.0, "memory": rng.u32(256..65536), "active": rng.bool(),
                "tags": if rng.bool() { vec!["critical"] } else { vec![] },
                "metrics": {"latency": rng.u32(1..500)},
            }})
        })
        .collect();
    let edges: Vec<_> = (1..n).map(|i| json!({"source": format!("n{}", rng.usize(..i)), "target": format!("n{i}"), "data": {}})).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("graph.json");
    std::fs::write(&path, json!({"nodes": nodes, "edges": edges}).to_string()).expect("write");
    let services = Services::new();
    let spec: SourceSpec = format!("g={}", path.display()).parse().expect("spec");
    services.sources.load(&[spec], &NoProgress).expect("load");
    let session = services.graphs.session(None).expect("session");
    let selectors: Vec<String> = (0..19)
        .map(|i| match i % 6 {
            0 => format!("type == '{}'", types[i % types.len()]),
            1 => format!("cpu > `{}`", 0.5 + (i as f64) / 50.0),
            2 => format!("region == '{}' && active", regions[i % regions.len()]),
            3 => "contains(tags, 'critical')".to_string(),
            4 => format!("metrics.latency > `{}`", 100 + i * 10),
            _ => format!("memory < `{}` || type == 'cache'", 1024 * (i + 1)),
        })
        .collect();
    let colours =
        ["red", "orange", "gold", "green", "teal", "blue", "purple", "pink", "gray", "black"];
    for (i, selector) in selectors.iter().enumerate() {
        let style = json!({"color": colours[i % colours.len()], "size": 1.0 + (i % 4) as f64 * 0.5, "glow": i % 3 == 0});
        let params = StyleElementsParams {
            selector: selector.clone(),
            style: serde_json::from_value(style).expect("style"),
            layer_name: Some(format!("layer-{i}")),
            ..Default::default()
        };
        let result = find_and_style_nodes(&services.graphs, Caller::Ai, params);
        assert!(result.success, "{}", result.message);
    }
    let state = session.state();
    assert_eq!(state.layers.layers.len(), 20, "default + 19 layers");
    let base = session.data().base.clone();
    // The same layers with other constants: new selectors over the same properties.
    let restyled = |run: usize| {
        let mut layers = state.layers.clone();
        for layer in &mut layers.layers {
            if let Some(rule) = layer.node.as_mut().filter(|r| !r.selector.is_empty()) {
                rule.selector = format!("({}) && memory != `{}`", rule.selector, run + 1);
            }
        }
        layers
    };

    if std::env::var_os("STYLE_BENCH_PER_SELECTOR").is_some() {
        let data = SessionData::new(base.clone(), &state.results).expect("data");
        data.matches(ElementKind::Node, "type == 'server'").expect("parse once");
        for selector in &selectors {
            let started = Instant::now();
            data.matches(ElementKind::Node, selector).expect("matches");
            eprintln!("{:>8.1} ms  {selector}", started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let mut cold = Vec::new();
    let mut new_selectors = Vec::new();
    let mut warm = Vec::new();
    let mut new_layer = Vec::new();
    let mut distinct = 0;
    for run in 0..runs {
        let data = SessionData::new(base.clone(), &state.results).expect("data");
        let started = Instant::now();
        let (table, warnings) = style_table(&data, &state.layers, ElementKind::Node);
        cold.push(started.elapsed().as_secs_f64() * 1000.0);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(table.style_of.len(), n);
        distinct = table.styles.len();
        // Every selector new, over properties already read.
        let layers = restyled(run);
        let started = Instant::now();
        let (table, _) = style_table(&data, &layers, ElementKind::Node);
        new_selectors.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(table.style_of.len(), n);
        // Every selector cached: the merge alone (a restyle that changed no selector).
        let started = Instant::now();
        style_table(&data, &state.layers, ElementKind::Node);
        warm.push(started.elapsed().as_secs_f64() * 1000.0);
        // One more layer with a selector not seen yet: what a find_and_style call redraws.
        let mut layers = state.layers.clone();
        let style =
            serde_json::from_value(json!({"color": "white", "outline": "black"})).expect("style");
        layers
            .add(
                Some("one-more"),
                LayerSource::Ai,
                ElementKind::Node,
                &format!("cpu > `{}` && active", run as f64 / 10.0),
                None,
                &style,
                0,
            )
            .expect("layer");
        let started = Instant::now();
        style_table(&data, &layers, ElementKind::Node);
        new_layer.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let out = json!({
        "nodes": n, "layers": state.layers.layers.len(), "distinctStyles": distinct, "runs": runs,
        "coldMs": median(cold), "newSelectorsMs": median(new_selectors), "cachedMergeMs": median(warm), "oneNewLayerMs": median(new_layer),
    });
    println!("{out}");
}
