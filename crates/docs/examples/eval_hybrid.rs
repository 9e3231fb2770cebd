//! Sweeps the hybrid (BM25 + embeddings) retrieval settings on one question set, the model
//! loaded and every text encoded once: `cargo run --release -p schemascope-docs --example
//! eval_hybrid -- MODEL_DIR TABLES QUESTIONS [tune|heldout] [evidence]`, the settings to try as
//! a JSON list of retrieval configurations in `EVAL_GRID` (default: BM25 alone, then the
//! defaults with the model).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use schemascope_docs::eval::{
    EvalOptions, Setting, Split, evaluate, spider_databases, spider_questions,
};
use schemascope_docs::{Encoder, RetrievalConfig};
use schemascope_embed::Embedder;

/// The model, each text encoded once across the sweep.
struct Remembering {
    model: Embedder,
    seen: Mutex<HashMap<String, Vec<f32>>>,
}

impl std::fmt::Debug for Remembering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Remembering")
    }
}

impl Encoder for Remembering {
    fn encode(&self, text: &str) -> Vec<f32> {
        if let Some(v) = schemascope_core::sync::lock(&self.seen).get(text) {
            return v.clone();
        }
        let v = self.model.embed(text);
        schemascope_core::sync::lock(&self.seen).insert(text.to_string(), v.clone());
        v
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, tables, questions, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: eval_hybrid MODEL_DIR TABLES QUESTIONS [tune|heldout] [evidence]".into()
        );
    };
    let encoder: Arc<dyn Encoder> = Arc::new(Remembering {
        model: Embedder::load(std::path::Path::new(model))?,
        seen: Mutex::default(),
    });
    let databases = spider_databases(&std::fs::read_to_string(tables)?)?;
    let mut questions = spider_questions(&std::fs::read_to_string(questions)?)?;
    let split = match rest.first().map(String::as_str) {
        Some("tune") => Some(Split::Tune),
        Some("heldout") => Some(Split::Heldout),
        _ => None,
    };
    if let Some(split) = split {
        questions.retain(|q| Split::of(&q.question) == split);
    }
    if rest.iter().any(|a| a == "evidence") {
        for q in &mut questions {
            if let Some(e) = q.evidence.as_deref().filter(|e| !e.is_empty()) {
                q.question = format!("{} {e}", q.question);
            }
        }
    }
    let grid: Vec<(bool, RetrievalConfig)> = match std::env::var("EVAL_GRID") {
        Ok(json) => serde_json::from_str::<Vec<RetrievalConfig>>(&json)?
            .into_iter()
            .map(|c| (true, c))
            .collect(),
        Err(_) => vec![(false, RetrievalConfig::default()), (true, RetrievalConfig::default())],
    };
    if std::env::var("EVAL_TIMING").is_ok() {
        timing(&databases, &questions, model)?;
        return Ok(());
    }
    for (semantic, config) in grid {
        let options = EvalOptions {
            k: 5,
            config: config.clone(),
            encoder: semantic.then(|| encoder.clone()),
        };
        let start = Instant::now();
        let r = evaluate(&databases, &questions, Setting::Pooled, &options);
        println!(
            "semantic={semantic} weight={} floor={}: recall@5 {:.3} mrr {:.3} context recall {:.3} reduction {:.1}% ({} questions, {:.1} s) {:?}",
            config.semantic_weight,
            config.semantic_floor,
            r.recall_at_k,
            r.mrr,
            r.context_recall,
            r.reduction * 100.0,
            r.questions,
            start.elapsed().as_secs_f64(),
            r.strategies
        );
        if std::env::var("EVAL_MISSES").is_ok() {
            misses(&databases, &questions, &options);
        }
    }
    Ok(())
}

/// Prints each question whose gold tables are not all in the top 5, with what was ranked.
fn misses(
    databases: &[schemascope_docs::eval::SpiderDatabase],
    questions: &[schemascope_docs::eval::SpiderQuestion],
    options: &EvalOptions,
) {
    use schemascope_docs::eval::{gold_tables, index_from_generated_docs, pooled_catalog};
    let mut index =
        index_from_generated_docs(pooled_catalog(databases), "spider", options.config.clone());
    if let Some(encoder) = &options.encoder {
        index = index.with_encoder(encoder.clone()).expect("not cancelled");
    }
    if let Ok(table) = std::env::var("EVAL_SHOW") {
        for c in index.chunks().iter().filter(|c| c.table == table) {
            println!("[{:?}] {}", c.kind, c.content);
        }
    }
    for q in questions {
        let Ok(gold) = gold_tables(&q.query) else { continue };
        let gold: Vec<String> =
            gold.iter().map(|t| format!("{}.{t}", q.db_id.to_ascii_lowercase())).collect();
        let ranked: Vec<String> = index
            .search(&q.question, 5)
            .iter()
            .map(|c| format!("{}({:.2})", c.chunk.table, c.relevance))
            .collect();
        let missed: Vec<&String> = gold
            .iter()
            .filter(|g| {
                !ranked.iter().any(|r| {
                    r.to_ascii_lowercase().starts_with(&format!("{}(", g.to_ascii_lowercase()))
                })
            })
            .collect();
        if !missed.is_empty() {
            println!("- {}\n  missed {:?}\n  ranked {:?}", q.question, missed, ranked);
        }
    }
}

/// Index build and per-question latency, words alone and with the model (encoded afresh: no
/// remembered vectors), on the pooled schema.
fn timing(
    databases: &[schemascope_docs::eval::SpiderDatabase],
    questions: &[schemascope_docs::eval::SpiderQuestion],
    model: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    use schemascope_docs::eval::{index_from_generated_docs, pooled_catalog};
    #[derive(Debug)]
    struct Plain(Embedder);
    impl Encoder for Plain {
        fn encode(&self, text: &str) -> Vec<f32> {
            self.0.embed(text)
        }
    }
    let start = Instant::now();
    let words =
        index_from_generated_docs(pooled_catalog(databases), "spider", RetrievalConfig::default());
    let words_build = start.elapsed();
    let encoder: Arc<dyn Encoder> = Arc::new(Plain(Embedder::load(std::path::Path::new(model))?));
    let start = Instant::now();
    let semantic = words.clone().with_encoder(encoder).map_err(|e| e.to_string())?;
    let encode = start.elapsed();
    let latency = |index: &schemascope_docs::SchemaIndex| {
        let mut times: Vec<f64> = questions
            .iter()
            .map(|q| {
                let start = Instant::now();
                std::hint::black_box(index.retrieve(&q.question, None));
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], times[times.len() * 95 / 100])
    };
    let (words_median, words_p95) = latency(&words);
    let (semantic_median, semantic_p95) = latency(&semantic);
    println!(
        "{} tables, {} chunks: index build {:.2} s words alone, + {:.2} s encoding ({:.1} ms per chunk on {} cores)",
        words.catalog().tables.len(),
        words.chunks().len(),
        words_build.as_secs_f64(),
        encode.as_secs_f64(),
        encode.as_secs_f64() * 1000.0 / words.chunks().len() as f64,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    println!(
        "per question ({} questions): words alone median {words_median:.3} ms, p95 {words_p95:.3} ms; with the model median {semantic_median:.2} ms, p95 {semantic_p95:.2} ms",
        questions.len()
    );
    Ok(())
}
