//! Prints pooled-setting misses (question, gold tables, ranked chunks) to tune retrieval.
//! `EVAL_TABLES` and `EVAL_QUESTIONS` name other Spider-format files (BIRD's); `EVAL_EVIDENCE=1`
//! appends each question's evidence.

use schemascope_docs::RetrievalConfig;
use schemascope_docs::eval::{
    gold_tables, index_from_generated_docs, pooled_catalog, spider_databases, spider_questions,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spider");
    let tables = std::env::var("EVAL_TABLES").unwrap_or(format!("{root}/tables.json"));
    let questions = std::env::var("EVAL_QUESTIONS").unwrap_or(format!("{root}/dev_open.json"));
    let databases = spider_databases(&std::fs::read_to_string(tables)?)?;
    let mut questions = spider_questions(&std::fs::read_to_string(questions)?)?;
    if std::env::var("EVAL_EVIDENCE").is_ok_and(|v| v == "1") {
        for q in &mut questions {
            if let Some(evidence) = &q.evidence {
                q.question = format!("{} {evidence}", q.question);
            }
        }
    }
    let index =
        index_from_generated_docs(pooled_catalog(&databases), "spider", RetrievalConfig::default());
    if let Some(q) = std::env::args().nth(2) {
        let terms = schemascope_docs::tokenize::tokenize(&q);
        println!("terms {terms:?}");
        let cfg = RetrievalConfig {
            relevance_threshold: 0.0,
            max_chunks_per_table: 100,
            ..RetrievalConfig::default()
        };
        let index = index_from_generated_docs(pooled_catalog(&databases), "spider", cfg);
        for c in index.search(&q, 15) {
            println!(
                "   {:.2} {} {:?} {:?} {:?}",
                c.score, c.chunk.table, c.chunk.kind, c.chunk.column, c.chunk.keywords
            );
        }
        return Ok(());
    }
    let limit: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(30);
    let mut shown = 0;
    for q in questions.iter() {
        let Ok(gold) = gold_tables(&q.query) else { continue };
        let gold: Vec<String> =
            gold.iter().map(|t| format!("{}.{t}", q.db_id.to_ascii_lowercase())).collect();
        let hits = index.search(&q.question, 5);
        let ranked: Vec<String> = hits.iter().map(|c| c.chunk.table.to_ascii_lowercase()).collect();
        if gold.iter().all(|g| ranked.contains(g)) {
            continue;
        }
        shown += 1;
        if shown > limit {
            break;
        }
        println!(
            "Q: {}\n   terms {:?}\n   gold {:?}",
            q.question,
            schemascope_docs::tokenize::tokenize(&q.question),
            gold
        );
        for c in &hits {
            println!(
                "   {:.2} {:.2} {} {:?} {:?}",
                c.score, c.relevance, c.chunk.table, c.chunk.kind, c.chunk.column
            );
        }
    }
    Ok(())
}
