//! Benchmark: the `ask` pipeline's own overhead per question on Chinook — everything but the
//! LLM's time: the schema context from cache, retrieval, validation, execution of a simple query,
//! state routing and the trace — p50/p99 over 1,000 questions.
//!
//! The LLM is an in-process backend that answers at once with a prepared query and summary, so
//! the time measured is the pipeline's, not a model's or a network's.
//!
//! `cargo run --release -p schemascope-tools --example ask_overhead [-- --questions 1000]`

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use schemascope_agent::graph::{AskInput, Budgets, Graph};
use schemascope_agent::llm::{ChatRequest, ChatResponse, LlmBackend, LlmError, Usage};
use schemascope_sources::NoProgress;
use schemascope_tools::Services;

/// Answers instantly: the next prepared query for a build request, a fixed sentence otherwise.
#[derive(Debug)]
struct Instant_ {
    queries: Vec<String>,
    next: AtomicUsize,
}

impl LlmBackend for Instant_ {
    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let text = if request.json {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.queries.len();
            serde_json::json!({"query": self.queries[i], "reasoning": "prepared"}).to_string()
        } else {
            "Here is the answer.".to_string()
        };
        Ok(ChatResponse { text, usage: Usage::default(), model: "instant".into() })
    }

    fn describe(&self) -> String {
        "in-process instant backend".into()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args
        .iter()
        .position(|a| a == "--questions")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let db =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let services = Services::new();
    services.sources.load(&[format!("chinook={}", db.display()).parse()?], &NoProgress)?;
    // Questions and the simple queries that answer them, over every table: a count, a small
    // aggregate (412 invoices by country), a lookup by key.
    let tables = [
        "Album",
        "Artist",
        "Customer",
        "Employee",
        "Genre",
        "Invoice",
        "InvoiceLine",
        "MediaType",
        "Playlist",
        "PlaylistTrack",
        "Track",
    ];
    let mut questions = Vec::new();
    let mut queries = Vec::new();
    for i in 0..count {
        let table = tables[i % tables.len()];
        questions.push(format!("How many rows does the {table} table have (question {i})?"));
        queries.push(match i % 3 {
            0 => format!("SELECT COUNT(*) FROM {table}"),
            1 => "SELECT BillingCountry, SUM(Total) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC LIMIT 5".to_string(),
            _ => format!("SELECT * FROM Track WHERE TrackId = {}", 1 + i % 3000),
        });
    }
    let llm = Instant_ { queries, next: AtomicUsize::new(0) };
    let data = schemascope_tools::bench_data_access(&services, "chinook")?;
    let graph = Graph { llm: &llm, data: &*data, budgets: Budgets::default() };
    // Warm-up: the schema index, the profiles, the statement cache.
    for q in questions.iter().take(20) {
        graph.run(
            AskInput { source: "chinook".into(), question: q.clone(), history: vec![] },
            &mut |_| {},
        );
    }
    llm.next.store(0, Ordering::Relaxed);
    let mut micros = Vec::with_capacity(count);
    let mut failed = 0;
    for q in &questions {
        let started = Instant::now();
        let outcome = graph.run(
            AskInput { source: "chinook".into(), question: q.clone(), history: vec![] },
            &mut |_| {},
        );
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        failed += usize::from(!outcome.success);
    }
    micros.sort_by(f64::total_cmp);
    let at = |p: f64| micros[((micros.len() - 1) as f64 * p).round() as usize];
    println!(
        "ask overhead per question on Chinook ({count} questions, {failed} failed): p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
    Ok(())
}
