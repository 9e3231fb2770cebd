//! The controlled graph end to end: real Chinook (SQLite), a local server replaying scripted LLM
//! answers over HTTP, and every route — first-try success, a retry after a validation error, a
//! retry after an execution error, spent budgets, invalid JSON, LLM failures, follow-ups.

use std::path::Path;
use std::time::Duration;

use schemascope_agent::graph::{
    AskInput, Budgets, DataAccess, ExecutionFailure, ExecutionOutcome, Graph, HistoryTurn, Node,
    Phase, SchemaInfo, ValidationOutcome,
};
use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{RawServer, ReplayServer, Scripted};
use schemascope_sources::sql::{Database, SqliteDatabase};
use serde_json::{Value, json};

/// Chinook through the real SQLite source; validation asks SQLite to prepare the statement
/// (unless `lenient`), so a wrong name is caught before execution.
struct Chinook {
    db: SqliteDatabase,
    lenient: bool,
}

impl Chinook {
    fn open(lenient: bool) -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
        Self { db: SqliteDatabase::open(&path).expect("chinook"), lenient }
    }
}

impl DataAccess for Chinook {
    fn schema(&self, _source: &str, _question: &str) -> Result<SchemaInfo, String> {
        let catalog = self.db.catalog().map_err(|e| e.to_string())?;
        let text = catalog
            .tables
            .iter()
            .map(|t| {
                format!(
                    "{}({})",
                    t.name,
                    t.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        Ok(SchemaInfo {
            text,
            dialect: "sqlite".into(),
            metadata_stats: json!({}),
            tables: catalog.table_names().iter().map(|s| s.to_string()).collect(),
            strategy: "full".into(),
            cached: false,
        })
    }

    fn validate(
        &self,
        _source: &str,
        _question: &str,
        query: &Value,
    ) -> Result<ValidationOutcome, String> {
        let sql = query.as_str().ok_or("not SQL")?;
        if self.lenient {
            return Ok(ValidationOutcome {
                valid: true,
                errors: vec![],
                warnings: vec![],
                rewritten_query: None,
            });
        }
        // Compiled by SQLite, never run (the database layer runs queries only, so no EXPLAIN).
        match self.db.query(&format!("SELECT 1 FROM ({sql}) LIMIT 0"), &[]) {
            Ok(_) => Ok(ValidationOutcome {
                valid: true,
                errors: vec![],
                warnings: vec![],
                rewritten_query: None,
            }),
            Err(e) => Ok(ValidationOutcome {
                valid: false,
                errors: vec![
                    json!({"kind": "unknown_column", "message": e.to_string(), "location": null, "suggestion": "Total"}),
                ],
                warnings: vec![],
                rewritten_query: None,
            }),
        }
    }

    fn execute(&self, _source: &str, query: &Value) -> Result<ExecutionOutcome, ExecutionFailure> {
        let sql = query.as_str().unwrap_or_default();
        let result = self.db.run(sql, &[], Some(100), 5_000).map_err(|e| ExecutionFailure {
            class: format!("{:?}", e.class()).to_lowercase(),
            message: e.to_string(),
        })?;
        Ok(ExecutionOutcome {
            columns: result.columns,
            rows: result
                .rows
                .iter()
                .map(|r| Value::Array(r.iter().map(|v| v.to_json()).collect()))
                .collect(),
            truncated: result.more,
            warnings: result.warnings,
        })
    }
}

fn query(sql: &str) -> Scripted {
    Scripted::json(json!({"query": sql, "reasoning": "test"}))
}

fn ask(
    script: Vec<Scripted>,
    data: &Chinook,
    question: &str,
    history: Vec<HistoryTurn>,
) -> (schemascope_agent::graph::AskOutcome, Vec<Value>) {
    let server = ReplayServer::start(script).expect("server");
    let config = LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", server.url()),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(2),
    };
    let llm = config.backend();
    let graph = Graph { llm: &*llm, data, budgets: Budgets::default() };
    let mut live = Vec::new();
    let outcome = graph
        .run(AskInput { source: "chinook".into(), question: question.into(), history }, &mut |e| {
            live.push(e.clone())
        });
    assert_eq!(live, outcome.trace, "every event is reported as it happens");
    let bodies = server.received().into_iter().map(|r| r.body).collect();
    (outcome, bodies)
}

fn path(outcome: &schemascope_agent::graph::AskOutcome) -> Vec<Node> {
    outcome.trace.iter().filter(|e| e.phase == Phase::Exit).map(|e| e.node).collect()
}

fn user_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn first_try_success_answers_with_rows_entities_and_a_trace() {
    let data = Chinook::open(false);
    let script = vec![
        query("SELECT BillingCountry, COUNT(*) AS invoices FROM Invoice GROUP BY 1 ORDER BY 2 DESC LIMIT 2"),
        Scripted::Text(
            "USA has the most invoices (91), then Canada (56).\n---CONTEXT---\n{\"shown_entities\": {\"BillingCountry\": [\"USA\", \"Canada\"]}}"
                .into(),
        ),
    ];
    let (outcome, bodies) = ask(script, &data, "Which countries have the most invoices?", vec![]);
    assert!(outcome.success, "{}", outcome.answer);
    assert_eq!(
        path(&outcome),
        [
            Node::Start,
            Node::GetSchema,
            Node::BuildQuery,
            Node::ValidateQuery,
            Node::ExecuteQuery,
            Node::Summarize
        ]
    );
    assert_eq!(
        outcome.result.as_ref().map(|r| r.rows.clone()),
        Some(vec![json!(["USA", 91]), json!(["Canada", 56])])
    );
    assert_eq!(outcome.answer, "USA has the most invoices (91), then Canada (56).");
    assert_eq!(outcome.shown_entities, Some(json!({"BillingCountry": ["USA", "Canada"]})));
    assert_eq!(outcome.state.llm_calls, 2);
    assert!(outcome.state.usage.input_tokens >= 200);
    assert!(
        bodies[0]["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("Invoice(InvoiceId"),
        "the schema is in the prompt"
    );
    let exits: Vec<_> = outcome.trace.iter().filter(|e| e.phase == Phase::Exit).collect();
    assert!(
        exits
            .iter()
            .all(|e| e.duration_ms.is_some() && e.execution_id == outcome.state.execution_id)
    );
    assert!(exits[2].keys_out.contains(&"query_draft"));
}

#[test]
fn a_validation_error_is_fixed_on_retry_with_the_error_in_the_prompt() {
    let data = Chinook::open(false);
    let script = vec![
        query("SELECT SUM(Saless) FROM Invoice"),
        query("SELECT SUM(Total) FROM Invoice"),
        Scripted::Text("Total sales are 2328.60.".into()),
    ];
    let (outcome, bodies) = ask(script, &data, "What are total sales?", vec![]);
    assert!(outcome.success, "{}", outcome.answer);
    assert_eq!(
        path(&outcome),
        [
            Node::Start,
            Node::GetSchema,
            Node::BuildQuery,
            Node::ValidateQuery,
            Node::BuildQuery,
            Node::ValidateQuery,
            Node::ExecuteQuery,
            Node::Summarize
        ]
    );
    let retry = user_message(&bodies[1]);
    assert!(retry.contains("Previous query: SELECT SUM(Saless) FROM Invoice"), "{retry}");
    assert!(
        retry.contains("no such column: Saless") && retry.contains("suggestion: Total"),
        "{retry}"
    );
    assert_eq!(outcome.state.attempts.len(), 2);
    assert_eq!(outcome.result.map(|r| r.rows), Some(vec![json!([2328.6])]));
}

#[test]
fn an_execution_error_is_retried_and_spent_budgets_reach_the_error_handler() {
    let data = Chinook::open(true);
    let script = vec![
        query("SELECT Nme FROM Genre"),
        query("SELECT Name FROM Genre LIMIT 1"),
        Scripted::Text("Rock.".into()),
    ];
    let (outcome, _) = ask(script, &data, "Name one genre", vec![]);
    assert!(outcome.success, "{}", outcome.answer);
    assert_eq!(
        path(&outcome)[4..],
        [
            Node::ExecuteQuery,
            Node::BuildQuery,
            Node::ValidateQuery,
            Node::ExecuteQuery,
            Node::Summarize
        ]
    );

    let strict = Chinook::open(false);
    let wrong = vec![
        query("SELECT Saless FROM Invoice"),
        query("SELECT Sales FROM Invoice"),
        query("SELECT Revenue FROM Invoice"),
    ];
    let (outcome, bodies) = ask(wrong, &strict, "What are total sales?", vec![]);
    assert!(!outcome.success);
    assert_eq!(bodies.len(), 3, "the build budget is 3");
    assert_eq!(path(&outcome).last(), Some(&Node::ErrorHandler));
    for needle in [
        "I tried 3 time(s)",
        "Attempt 1 (validation failed)",
        "Saless",
        "Attempt 3",
        "Revenue",
        "The most relevant tables are: Album, Artist",
        "rephrase",
    ] {
        assert!(outcome.answer.contains(needle), "`{needle}` missing from:\n{}", outcome.answer);
    }
    assert!(outcome.state.error_summary.is_some());
}

#[test]
fn invalid_json_is_reasked_and_llm_failures_end_with_a_clear_error() {
    let data = Chinook::open(false);
    let script = vec![
        Scripted::Text("SELECT COUNT(*) FROM Genre".into()),
        query("SELECT COUNT(*) FROM Genre"),
        Scripted::Text("25 genres.".into()),
    ];
    let (outcome, bodies) = ask(script, &data, "How many genres?", vec![]);
    assert!(outcome.success, "{}", outcome.answer);
    assert_eq!(bodies.len(), 3, "one re-ask, then the summary");
    assert_eq!(outcome.result.map(|r| r.rows), Some(vec![json!([25])]));

    let (outcome, _) = ask(
        vec![Scripted::Status(500, "model overloaded".into())],
        &data,
        "How many genres?",
        vec![],
    );
    assert!(!outcome.success);
    assert!(
        outcome.answer.contains("HTTP 500") && outcome.answer.contains("model overloaded"),
        "{}",
        outcome.answer
    );
    assert_eq!(
        path(&outcome),
        [Node::Start, Node::GetSchema, Node::BuildQuery, Node::ErrorHandler]
    );

    let (outcome, _) =
        ask(vec![Scripted::Hang(Duration::from_secs(4))], &data, "How many genres?", vec![]);
    assert!(outcome.answer.contains("no answer within 2 s"), "{}", outcome.answer);
}

#[test]
fn a_follow_up_sees_the_previous_query_and_shown_entities() {
    let data = Chinook::open(false);
    let history = vec![HistoryTurn {
        question: "Revenue per country in 2021?".into(),
        answer: "USA 103.95, Canada 69.3.".into(),
        query: Some(json!(
            "SELECT BillingCountry, SUM(Total) FROM Invoice WHERE InvoiceDate LIKE '2021%' GROUP BY 1"
        )),
        shown_entities: Some(json!({"BillingCountry": ["USA", "Canada"]})),
    }];
    let script = vec![
        query(
            "SELECT BillingCountry, SUM(Total) FROM Invoice WHERE InvoiceDate LIKE '2024%' AND BillingCountry IN ('USA', 'Canada') GROUP BY 1",
        ),
        Scripted::Text("In 2024: …".into()),
    ];
    let (outcome, bodies) = ask(script, &data, "and in 2024?", history);
    assert!(outcome.success, "{}", outcome.answer);
    let prompt = user_message(&bodies[0]);
    assert!(
        prompt.contains("Revenue per country in 2021?")
            && prompt.contains("\"USA\",\"Canada\"")
            && prompt.contains("Question: and in 2024?"),
        "{prompt}"
    );
}

#[test]
fn an_llm_endpoint_that_answers_garbage_or_nothing_ends_in_the_error_handler() {
    let data = Chinook::open(false);
    let cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\nConnection: close\r\n\r\n{\"choices\": [{\"mess".to_vec();
    // One connection cut off mid-answer, one answered with bytes that are not HTTP, then silence.
    let server = RawServer::start(vec![cut, b"\x00\x01garbage\r\n\r\n".to_vec()]).expect("server");
    let config = LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", server.url()),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(1),
    };
    let llm = config.backend();
    let graph = Graph { llm: &*llm, data: &data, budgets: Budgets::default() };
    for expected in ["cut off", "not an HTTP answer", "no answer within 1 s"] {
        let outcome = graph.run(
            AskInput {
                source: "chinook".into(),
                question: "How many genres?".into(),
                history: vec![],
            },
            &mut |_| {},
        );
        assert!(!outcome.success, "{}", outcome.answer);
        assert!(
            outcome.answer.contains(expected) && outcome.answer.contains(server.url()),
            "expected {expected:?}: {}",
            outcome.answer
        );
        assert_eq!(
            path(&outcome),
            [Node::Start, Node::GetSchema, Node::BuildQuery, Node::ErrorHandler],
            "{}",
            outcome.answer
        );
    }
}
