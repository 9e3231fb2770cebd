//! BM25 throughput and retrieval overhead, on a corpus every engine shares: the first 2,000 chunks
//! of the generated docs of all Spider databases pooled (876 tables), queried with 1,000 Spider
//! questions (the 493 open dev questions, cycled), all tokenized by schemascope.
//!
//! `cargo run --release -p schemascope-docs --example bm25_bench -- [--dump DIR] [--rounds N]`
//! prints JSON; `--dump DIR` also writes the tokens (`bm25_corpus.json`) and schemascope's Okapi
//! scores of the first 100 queries (`bm25_okapi_scores.json`) for bench/bm25_bench.py.

use std::time::Instant;

use schemascope_docs::eval::{
    index_from_generated_docs, pooled_catalog, spider_databases, spider_questions,
};
use schemascope_docs::tokenize::tokenize;
use schemascope_docs::{Bm25Index, Bm25Params, Hit, RetrievalConfig, Scoring, Scratch};
use serde_json::json;

const DOCS: usize = 2_000;
const QUERIES: usize = 1_000;
const TOP: usize = 10;
const CHECKED_QUERIES: usize = 100;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag =
        |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let rounds: usize = flag("--rounds").map(|r| r.parse()).transpose()?.unwrap_or(100);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spider");
    let databases = spider_databases(&std::fs::read_to_string(format!("{root}/tables.json"))?)?;
    let questions = spider_questions(&std::fs::read_to_string(format!("{root}/dev_open.json"))?)?;

    let pooled =
        index_from_generated_docs(pooled_catalog(&databases), "spider", RetrievalConfig::default());
    let corpus: Vec<Vec<String>> =
        pooled.chunks().iter().take(DOCS).map(|c| c.index_terms()).collect();
    let queries: Vec<Vec<String>> =
        questions.iter().cycle().take(QUERIES).map(|q| tokenize(&q.question)).collect();

    let mut results = serde_json::Map::new();
    for (name, scoring) in
        [("schemascope_default", Scoring::Standard), ("schemascope_okapi", Scoring::OKAPI)]
    {
        let start = Instant::now();
        let index = Bm25Index::build(&corpus, Bm25Params { scoring, ..Bm25Params::default() });
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let qps = throughput(&index, &queries, rounds);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let qps_all_cores = throughput_threads(&index, &queries, rounds, threads);
        results
            .insert(name.into(), json!({"build_ms": build_ms, "queries_per_s": qps, "queries_per_s_all_cores": qps_all_cores, "threads": threads}));
        if scoring == Scoring::OKAPI
            && let Some(dir) = flag("--dump")
        {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(
                format!("{dir}/bm25_corpus.json"),
                serde_json::to_string(&json!({"docs": corpus, "queries": queries}))?,
            )?;
            let scores: Vec<Vec<f64>> =
                queries.iter().take(CHECKED_QUERIES).map(|q| index.scores(q)).collect();
            std::fs::write(
                format!("{dir}/bm25_okapi_scores.json"),
                serde_json::to_string(&scores)?,
            )?;
        }
    }

    // Retrieval overhead per question on the pooled schema: tokenizing, BM25 over every chunk,
    // per-table cap, threshold, FK expansion; and the focused context on top.
    let mut retrieve_us = Vec::new();
    let mut context_us = Vec::new();
    for _ in 0..5 {
        for q in &questions {
            let start = Instant::now();
            let r = pooled.retrieve(&q.question, None);
            retrieve_us.push(start.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(&r);
            let start = Instant::now();
            let context = pooled.render(&r, None);
            context_us.push(start.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(&context);
        }
    }
    results.insert(
        "pooled_retrieval".into(),
        json!({
            "tables": pooled.catalog().tables.len(),
            "chunks": pooled.chunks().len(),
            "retrieve_us": percentiles(&mut retrieve_us),
            "render_context_us": percentiles(&mut context_us),
        }),
    );
    results.insert(
        "corpus".into(),
        json!({"docs": corpus.len(), "queries": queries.len(), "top_k": TOP, "rounds": rounds}),
    );
    println!("{}", serde_json::to_string_pretty(&results)?);
    Ok(())
}

/// Single queries per second, top-10, one query at a time on one thread.
fn throughput(index: &Bm25Index, queries: &[Vec<String>], rounds: usize) -> f64 {
    let mut scratch = Scratch::new();
    let mut out: Vec<Hit> = Vec::with_capacity(TOP);
    // Warm-up: grow the scratch, fault the postings in.
    for q in queries {
        index.top_k(q, TOP, &mut scratch, &mut out);
    }
    let start = Instant::now();
    let mut checksum = 0usize;
    for _ in 0..rounds {
        for q in queries {
            index.top_k(q, TOP, &mut scratch, &mut out);
            checksum += out.len();
        }
    }
    std::hint::black_box(checksum);
    (rounds * queries.len()) as f64 / start.elapsed().as_secs_f64()
}

/// Single queries per second with every core answering queries at once (one scratch per thread,
/// the index shared), as a server answering concurrent calls does.
fn throughput_threads(
    index: &Bm25Index,
    queries: &[Vec<String>],
    rounds: usize,
    threads: usize,
) -> f64 {
    let per_thread = rounds.div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut scratch = Scratch::new();
                    let mut out: Vec<Hit> = Vec::with_capacity(TOP);
                    let mut checksum = 0usize;
                    for _ in 0..per_thread {
                        for q in queries {
                            index.top_k(q, TOP, &mut scratch, &mut out);
                            checksum += out.len();
                        }
                    }
                    std::hint::black_box(checksum);
                })
            })
            .collect();
        // Joined here so a worker's panic reaches the caller with its own message.
        for worker in workers {
            schemascope_core::sync::joined(worker.join());
        }
    });
    (per_thread * threads * queries.len()) as f64 / start.elapsed().as_secs_f64()
}

fn percentiles(values: &mut [f64]) -> serde_json::Value {
    values.sort_by(f64::total_cmp);
    let at = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    json!({"median": at(0.5), "p99": at(0.99), "max": at(1.0)})
}
