//! Times selectors on 100k parsed items (fast path vs the jmespath crate).
fn main() {
    let items: Vec<serde_json::Value> = (0..100_000)
        .map(|i| {
            let t = ["server", "cache", "db"][i % 3];
            let cpu = (i % 100) as f64 / 100.0;
            let active = i % 2 == 0;
            let latency = i % 500;
            serde_json::json!({"type": t, "cpu": cpu, "region": "eu", "active": active, "tags": ["a"], "metrics": {"latency": latency}})
        })
        .collect();
    for text in ["type == 'server'", "cpu > `0.5`", "metrics.latency > `140`"] {
        let s =
            schemascope_core::selector::Selector::parse(text).expect("the selectors above parse");
        let t = std::time::Instant::now();
        let n = items.iter().filter(|v| s.matches_value(v).expect("plain values evaluate")).count();
        println!(
            "{text}: fast={} {n} hits in {:.1} ms",
            s.is_fast(),
            t.elapsed().as_secs_f64() * 1000.0
        );
    }
}
