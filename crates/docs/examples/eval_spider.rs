//! Runs the Spider retrieval evaluation on the files in testdata/spider (or given paths) and
//! prints both settings as JSON: `cargo run --release -p schemascope-docs --example eval_spider
//! [-- TABLES QUESTIONS [K]]`.

use std::time::Instant;

use schemascope_docs::RetrievalConfig;
use schemascope_docs::eval::{EvalOptions, Setting, evaluate, spider_databases, spider_questions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spider");
    let tables = args.first().cloned().unwrap_or_else(|| format!("{root}/tables.json"));
    let questions = args.get(1).cloned().unwrap_or_else(|| format!("{root}/dev_open.json"));
    let k = args.get(2).map(|k| k.parse()).transpose()?.unwrap_or(5);
    let databases = spider_databases(&std::fs::read_to_string(tables)?)?;
    let questions = spider_questions(&std::fs::read_to_string(questions)?)?;
    // EVAL_CONFIG='{"max_chunks_per_table": 1}' tries other settings without rebuilding.
    let config = match std::env::var("EVAL_CONFIG") {
        Ok(json) => serde_json::from_str(&json)?,
        Err(_) => RetrievalConfig::default(),
    };
    // Per database, Spider's schemas are below the table threshold, so the hybrid strategy shows
    // them whole; the second per-database run forces retrieval to show what it would cut.
    let forced = RetrievalConfig { table_threshold: 0, ..config.clone() };
    let runs = [
        (Setting::PerDatabase, config.clone()),
        (Setting::PerDatabase, forced),
        (Setting::Pooled, config),
    ];
    for (setting, config) in runs {
        let options = EvalOptions { k, config, encoder: None };
        let start = Instant::now();
        let report = evaluate(&databases, &questions, setting, &options);
        eprintln!("{setting:?}: {:.1} s", start.elapsed().as_secs_f64());
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}
