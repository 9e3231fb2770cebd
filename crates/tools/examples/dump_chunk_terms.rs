//! Writes the BM25 terms of a served SQL source's doc chunks, and of questions, as the server's
//! search_schema_docs index them, so that bench/mcp_cpu_bench.py can give bm25s the same tokens.
//!
//! `cargo run --release -p schemascope-tools --example dump_chunk_terms -- DB OUT QUESTIONS`,
//! where QUESTIONS is a JSON array of objects with a `question` field (Spider's dev file);
//! OUT gets `{"chunks": [[term, ...], ...], "questions": [[term, ...], ...]}`.

use schemascope_docs::tokenize::tokenize;
use schemascope_sources::NoProgress;
use schemascope_tools::Services;
use schemascope_tools::schema_docs::schema_index;
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, out, questions] = args.as_slice() else {
        return Err("usage: dump_chunk_terms DB OUT QUESTIONS".into());
    };
    let services = Services::new();
    services.sources.load(&[format!("bench={db}").parse()?], &NoProgress)?;
    let source = services.sources.get(Some("bench"))?;
    let index = schema_index(&services.docs, &source)?;
    let asked: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(questions)?)?;
    let terms: Vec<Vec<String>> = asked
        .iter()
        .filter_map(|q| q.get("question").and_then(Value::as_str))
        .map(tokenize)
        .collect();
    let dump = json!({"chunks": index.index_terms(), "questions": terms});
    std::fs::write(out, serde_json::to_string(&dump)?)?;
    eprintln!("{} chunks, {} questions written to {out}", index.chunks().len(), terms.len());
    Ok(())
}
