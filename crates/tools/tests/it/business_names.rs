//! The semantic file in validation: a metric's name is expanded to its SQL (with the query's
//! aliases for its tables) and the query is valid when the expansion is, so that `ask` runs
//! what was meant; a metric whose tables are not in the query, and a business word, get a
//! suggestion instead.

use std::path::Path;
use std::time::Duration;

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{ReplayServer, Scripted};
use schemascope_tools::{AskParams, Services, ValidateQueryParams, ask, validate_query};
use serde_json::{Value, json};

use crate::common::{chinook_spec, ok, registry};

fn served() -> Services {
    let registry = registry(&[&chinook_spec()]);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docs/chinook");
    registry.docs.set_dir("chinook", docs);
    registry
}

fn validate(registry: &Services, sql: &str) -> Value {
    ok(validate_query(
        &registry.docs,
        ValidateQueryParams { source: Some("chinook".into()), query: json!(sql), question: None },
    ))
}

#[test]
fn a_metric_name_is_expanded_with_the_querys_aliases_and_the_query_is_valid() {
    let registry = served();
    let report = validate(
        &registry,
        "SELECT BillingCountry, average_basket FROM Invoice GROUP BY BillingCountry",
    );
    assert_eq!(report["valid"], true, "{report}");
    assert_eq!(
        report["rewritten_query"],
        "SELECT BillingCountry, (AVG(Invoice.Total)) AS average_basket FROM Invoice GROUP BY BillingCountry"
    );
    assert!(
        report["warnings"][0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the metric \"average basket\""),
        "{report}"
    );
    let report = validate(
        &registry,
        "SELECT t.Name, UnitsSold FROM Track t JOIN InvoiceLine il ON il.TrackId = t.TrackId GROUP BY t.TrackId ORDER BY UnitsSold DESC",
    );
    assert_eq!(report["valid"], true, "{report}");
    let rewritten = report["rewritten_query"].as_str().expect("rewritten");
    assert!(
        rewritten.starts_with("SELECT t.Name, (SUM(il.Quantity)) AS UnitsSold FROM"),
        "{rewritten}"
    );
    assert!(rewritten.contains("ORDER BY (SUM(il.Quantity)) DESC"), "{rewritten}");
    // SQLite would read the double-quoted name as a string: it is the metric.
    let report = validate(
        &registry,
        "SELECT BillingCountry, \"average basket\" AS b FROM Invoice i GROUP BY 1",
    );
    assert_eq!(
        report["rewritten_query"],
        "SELECT BillingCountry, (AVG(i.Total)) AS b FROM Invoice i GROUP BY 1"
    );
}

#[test]
fn a_metric_out_of_reach_and_a_business_word_get_suggestions() {
    let registry = served();
    let report =
        validate(&registry, "SELECT Country, average_basket FROM Customer GROUP BY Country");
    assert_eq!(report["valid"], false, "{report}");
    let error = &report["errors"][0];
    assert_eq!(error["suggestion"], "AVG(Invoice.Total)", "{report}");
    assert!(
        error["message"].as_str().unwrap_or_default().contains("is the metric \"average basket\"")
    );
    let report =
        validate(&registry, "SELECT Name, duration FROM Track ORDER BY duration DESC LIMIT 5");
    let error = &report["errors"][0];
    // The docs describe Milliseconds as the track's duration too: the validator's own
    // suggestion names it, bare in a query over Track alone.
    assert_eq!(error["suggestion"], "Milliseconds", "{report}");
    assert_eq!(error["fix_column"], json!({"table": "Track", "column": "Milliseconds"}));
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("duration is a business term for Track.Milliseconds")
    );
    // Without a semantic file, nothing is said of either.
    let bare = crate::common::registry(&[&chinook_spec()]);
    let report = validate(&bare, "SELECT BillingCountry, average_basket FROM Invoice GROUP BY 1");
    assert_eq!(report["valid"], false);
    assert!(!report.to_string().contains("metric"), "{report}");
}

#[test]
fn ask_runs_the_metric_the_model_named() {
    let registry = served();
    let server = ReplayServer::start(vec![
        Scripted::json(json!({"query": "SELECT BillingCountry, average_basket FROM Invoice GROUP BY BillingCountry ORDER BY average_basket DESC LIMIT 1", "reasoning": "metric"})),
        Scripted::Text("Chile.".into()),
    ])
    .expect("server");
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", server.url()),
        model: "replayed".into(),
        api_key: None,
        timeout: Duration::from_secs(3),
    }));
    let result = ask(
        &registry,
        AskParams {
            source: Some("chinook".into()),
            question: "Which billing country has the largest average basket?".into(),
            history: None,
        },
    );
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"][0][0], "Chile", "{}", result.data);
    // The metric and its SQL were in the prompt.
    let prompt = server.received()[0].body.to_string();
    assert!(prompt.contains("average basket") && prompt.contains("AVG(Invoice.Total)"), "{prompt}");
}

/// Northwind, built from its SQL script into `dir`, served with its docs (a semantic file and
/// verified examples, nothing else).
fn northwind(dir: &Path) -> Services {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let script = std::fs::read_to_string(root.join("northwind/create.sql")).expect("script");
    let path = dir.join("northwind.sqlite");
    rusqlite::Connection::open(&path).expect("create").execute_batch(&script).expect("load");
    let registry = crate::common::registry(&[&format!("nw={}", path.display())]);
    registry.docs.set_dir("nw", root.join("docs/northwind"));
    registry
}

#[test]
fn northwinds_business_words_find_their_tables_and_its_metric_shows_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = northwind(dir.path());
    let context = |question: &str| {
        ok(schemascope_tools::get_schema_context(
            &registry.docs,
            schemascope_tools::GetSchemaContextParams {
                source: Some("nw".into()),
                question: question.into(),
                max_tokens: None,
                top_k: None,
            },
        ))
    };
    let cases: [(&str, &[&str]); 5] = [
        ("Which carrier delivered the most parcels?", &["Shippers", "Orders"]),
        ("Which vendor provides the most items?", &["Suppliers"]),
        ("Who is the salesperson with the most deals?", &["Employees"]),
        ("which items are low on inventory", &["Products"]),
        ("average delivery charge by destination country", &["Orders"]),
    ];
    for (question, tables) in cases {
        let data = context(question);
        assert_eq!(data["warnings"], json!([]), "the docs are all used: {data}");
        assert_eq!(data["metadata"]["strategy"], "focused", "{question}: {}", data["metadata"]);
        let included = &data["metadata"]["tablesIncluded"];
        for table in tables {
            assert!(
                included.to_string().contains(&format!("\"{table}\"")),
                "{question}: {included}"
            );
        }
    }
    // Without the file, the business words match nothing: the full schema.
    let bare = crate::common::registry(&[&format!(
        "nw={}",
        dir.path().join("northwind.sqlite").display()
    )]);
    bare.docs.set_dir("nw", dir.path().join("no-docs"));
    let data = ok(schemascope_tools::get_schema_context(
        &bare.docs,
        schemascope_tools::GetSchemaContextParams {
            source: Some("nw".into()),
            question: cases[0].0.into(),
            max_tokens: None,
            top_k: None,
        },
    ));
    assert_eq!(data["metadata"]["reason"], "noMatches", "{}", data["metadata"]);
    let data = context("net revenue per product category");
    let text = data["context"].as_str().expect("context");
    assert!(text.contains("SUM(\"Order Details\".UnitPrice"), "the metric's SQL: {text}");
    assert!(text.contains("Q: What is the net revenue of each product category?"), "{text}");
    // The metric named in a query runs as its SQL, with the query's alias for its table.
    let report = ok(validate_query(
        &registry.docs,
        ValidateQueryParams {
            source: Some("nw".into()),
            query: json!(
                "SELECT p.ProductName, net_revenue FROM \"Order Details\" od JOIN Products p ON p.ProductID = od.ProductID GROUP BY p.ProductID ORDER BY net_revenue DESC LIMIT 3"
            ),
            question: None,
        },
    ));
    assert_eq!(report["valid"], true, "{report}");
    let rewritten = report["rewritten_query"].as_str().expect("rewritten");
    assert!(
        rewritten.contains("(SUM(od.UnitPrice * od.Quantity * (1 - od.Discount))) AS net_revenue"),
        "{rewritten}"
    );
}

#[test]
fn a_double_quoted_business_word_is_its_column_not_a_string() {
    let registry = served();
    let report = validate(&registry, "SELECT Name FROM Track t ORDER BY \"duration\" DESC LIMIT 5");
    assert_eq!(report["valid"], false, "SQLite would sort by a constant: {report}");
    let error = &report["errors"][0];
    assert_eq!(error["suggestion"], "t.Milliseconds", "the query's alias: {report}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("duration is a business term for Track.Milliseconds")
    );
}
