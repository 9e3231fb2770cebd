//! validate_query and ask on real Chinook (SQLite, and PostgreSQL when `SCHEMASCOPE_TEST_POSTGRES`
//! is set), with a local server replaying scripted LLM answers over the real wire formats.

use std::time::Duration;

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{ReplayServer, Scripted};
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{chinook_spec, ok, registry};

fn with_llm(registry: &Services, server: &ReplayServer, provider: Provider) {
    let base_url = match provider {
        Provider::OpenAi => format!("{}/v1", server.url()),
        Provider::Anthropic => server.url().to_string(),
    };
    registry.asking.set_llm(Some(LlmConfig {
        provider,
        base_url,
        model: "replayed".into(),
        api_key: Some("k".into()),
        timeout: Duration::from_secs(3),
    }));
}

fn query(sql: &str) -> Scripted {
    Scripted::json(json!({"query": sql, "reasoning": "scripted"}))
}

fn ask_source(registry: &Services, source: &str, question: &str) -> ToolResult {
    ask(
        registry,
        AskParams { source: Some(source.into()), question: question.into(), history: None },
    )
}

fn last_user_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn validate_query_reports_kinds_locations_and_suggestions() {
    let registry = registry(&[&chinook_spec()]);
    let check = |query: Value| {
        ok(validate_query(
            &registry.docs,
            ValidateQueryParams { source: Some("chinook".into()), query, question: None },
        ))
    };
    let valid =
        check(json!("SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY BillingCountry"));
    assert_eq!(valid["valid"], true);
    let value = check(json!("SELECT COUNT(*) FROM Invoice WHERE BillingCountry = 'Brasil'"));
    assert_eq!(
        (
            value["valid"].clone(),
            value["errors"][0]["kind"].clone(),
            value["errors"][0]["suggestion"].clone()
        ),
        (json!(false), json!("filter_value"), json!("Brazil"))
    );
    let column = check(json!("SELECT SUM(Saless) FROM Invoice"));
    assert_eq!(column["errors"][0]["kind"], "unknown_column");
    assert_eq!(column["errors"][0]["location"], json!({"line": 1, "column": 12}));
    let write = check(json!("DELETE FROM Genre"));
    assert_eq!(write["valid"], false);
}

#[test]
fn ask_answers_first_try_and_records_metrics() {
    let registry = registry(&[&chinook_spec()]);
    let server = ReplayServer::start(vec![
        query("SELECT BillingCountry, COUNT(*) AS invoices FROM Invoice GROUP BY BillingCountry ORDER BY invoices DESC LIMIT 2"),
        Scripted::Text("USA (91) and Canada (56).\n---CONTEXT---\n{\"shown_entities\": {\"BillingCountry\": [\"USA\", \"Canada\"]}}".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::Anthropic);
    let result = ask_source(&registry, "chinook", "Which countries have the most invoices?");
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"], json!([["USA", 91], ["Canada", 56]]));
    assert_eq!(result.data["shown_entities"], json!({"BillingCountry": ["USA", "Canada"]}));
    assert_eq!(result.data["answer"], "USA (91) and Canada (56).");
    let system = server.received()[0].body["system"].as_str().unwrap_or_default().to_string();
    assert!(
        system.contains("## Invoice") && system.contains("BillingCountry"),
        "the focused schema is in the prompt:\n{system}"
    );
    let metrics = registry.asking.metrics().render();
    assert!(metrics.contains("schemascope_asks_total{result=\"first_try\"} 1"), "{metrics}");
    assert!(
        metrics.contains("schemascope_ask_node_duration_seconds_count{node=\"execute_query\"} 1"),
        "{metrics}"
    );
}

#[test]
fn ask_retries_a_misspelt_column_and_a_wrong_filter_value_with_the_validators_suggestions() {
    let registry = registry(&[&chinook_spec()]);
    let server = ReplayServer::start(vec![
        query("SELECT SUM(Saless) FROM Invoice WHERE BillingCountry = 'Brasil'"),
        query("SELECT SUM(Total) FROM Invoice WHERE BillingCountry = 'Brasil'"),
        query("SELECT SUM(Total) FROM Invoice WHERE BillingCountry = 'Brazil'"),
        Scripted::Text("Brazil's invoices total 190.10.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask_source(&registry, "chinook", "Total sales in Brasil?");
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"], json!([[190.1]]));
    assert_eq!(result.data["attempts"].as_array().map(Vec::len), Some(3));
    let second = last_user_message(&server.received()[1].body);
    assert!(second.contains("Saless") && second.contains("unknown_column"), "{second}");
    let third = last_user_message(&server.received()[2].body);
    assert!(third.contains("filter_value") && third.contains("suggestion: Brazil"), "{third}");
    let metrics = registry.asking.metrics().render();
    assert!(metrics.contains("schemascope_asks_total{result=\"retried\"} 1"), "{metrics}");
    assert!(
        metrics.contains("schemascope_ask_node_retries_total{node=\"build_query\"} 2"),
        "{metrics}"
    );
}

#[test]
fn ask_with_a_failing_llm_explains_what_is_missing() {
    let registry = registry(&[&chinook_spec()]);
    let server = ReplayServer::start(vec![]).expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let exhausted = ask_source(&registry, "chinook", "How many genres?");
    assert!(!exhausted.success && exhausted.message.contains("HTTP 500"), "{}", exhausted.message);
}

#[test]
fn ask_works_on_postgres() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let registry = registry(&[&format!("pg={uri}")]);
    let server = ReplayServer::start(vec![
        query("SELECT \"BillingCountry\", COUNT(*) AS invoices FROM \"Invoice\" GROUP BY \"BillingCountry\" ORDER BY invoices DESC LIMIT 2"),
        Scripted::Text("USA and Canada.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask_source(&registry, "pg", "Which countries have the most invoices?");
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"], json!([["USA", 91], ["Canada", 56]]));
}

#[test]
fn ask_retries_on_clickhouse_with_the_validators_suggestions() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") else {
        eprintln!(
            "SCHEMASCOPE_TEST_CLICKHOUSE is not set: run through scripts/test to test against ClickHouse"
        );
        return;
    };
    let registry = registry(&[&format!("ch={uri}")]);
    let server = ReplayServer::start(vec![
        // A misspelt column and a wrong stored value, then a table function: each sent back
        // with the validator's reason before the right query runs (three attempts in all).
        query("SELECT SUM(Saless) FROM Invoice WHERE BillingCountry = 'Brasil'"),
        query("SELECT * FROM url('http://127.0.0.1:9/', 'CSV', 'a String')"),
        query("SELECT BillingCountry, count() AS invoices FROM Invoice GROUP BY BillingCountry ORDER BY invoices DESC, BillingCountry LIMIT 2"),
        Scripted::Text("USA and Canada.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask_source(&registry, "ch", "Which countries have the most invoices?");
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"], json!([["USA", 91], ["Canada", 56]]));
    let second = last_user_message(&server.received()[1].body);
    assert!(second.contains("Saless") && second.contains("unknown_column"), "{second}");
    assert!(second.contains("suggestion: Brazil"), "{second}");
    let third = last_user_message(&server.received()[2].body);
    assert!(third.contains("table function url"), "{third}");
    let system = server.received()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.to_lowercase().contains("clickhouse"),
        "the dialect is in the prompt:\n{system}"
    );
}

#[test]
fn ask_retries_on_mariadb_with_the_validators_suggestions_and_fixes() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let registry = registry(&[&format!("my={uri}")]);
    let server = ReplayServer::start(vec![
        // A misspelt column and a wrong stored value, then a PostgreSQL function: each sent
        // back with the validator's reason and fix before the right query runs.
        query("SELECT SUM(Saless) FROM Invoice WHERE BillingCountry = 'Brasil'"),
        query("SELECT date_trunc('year', InvoiceDate) AS y, SUM(Total) FROM Invoice GROUP BY 1"),
        query("SELECT DATE_FORMAT(InvoiceDate, '%Y') AS y, SUM(Total) AS total FROM Invoice WHERE BillingCountry = 'Brazil' GROUP BY y ORDER BY y LIMIT 2"),
        Scripted::Text("About 35 a year.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask_source(&registry, "my", "How much did Brazil spend per year?");
    assert!(result.success, "{}", result.message);
    // As SQLite computes them on the same data.
    assert_eq!(result.data["rows"], json!([["2021", 37.62], ["2022", 41.6]]));
    let second = last_user_message(&server.received()[1].body);
    assert!(second.contains("Saless") && second.contains("suggestion: Brazil"), "{second}");
    let third = last_user_message(&server.received()[2].body);
    assert!(third.contains("DATE_FORMAT(InvoiceDate, '%Y-01-01')"), "{third}");
    let system = server.received()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(system.contains("mariadb"), "the dialect is in the prompt:\n{system}");
}

#[test]
fn validate_query_on_clickhouse_names_fixes_and_the_engine_finds_the_rest() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") else {
        eprintln!(
            "SCHEMASCOPE_TEST_CLICKHOUSE is not set: run through scripts/test to test against ClickHouse"
        );
        return;
    };
    let registry = registry(&[&format!("ch={uri}")]);
    let check = |sql: &str| {
        ok(validate_query(
            &registry.docs,
            ValidateQueryParams { source: Some("ch".into()), query: json!(sql), question: None },
        ))
    };
    // Gold-style SQL over Chinook validates, the engine's compile step included.
    for sql in [
        "SELECT BillingCountry, SUM(Total) FROM Invoice GROUP BY BillingCountry",
        "SELECT t.Name, a.Title FROM Track t JOIN Album a ON t.AlbumId = a.AlbumId WHERE t.Milliseconds > 300000 ORDER BY t.Name LIMIT 5",
        "SELECT c.Country, count(DISTINCT c.CustomerId) AS n FROM Customer c JOIN Invoice i ON i.CustomerId = c.CustomerId GROUP BY c.Country HAVING n > 2",
        "SELECT e.FirstName, e.LastName FROM Employee e WHERE e.ReportsTo IS NULL",
        "SELECT Name FROM Genre WHERE GenreId IN (SELECT GenreId FROM Track WHERE Composer LIKE '%Mercury%')",
        "SELECT toYear(InvoiceDate) AS y, round(sum(Total), 2) FROM Invoice GROUP BY y ORDER BY y",
    ] {
        let report = check(sql);
        assert_eq!(report["valid"], true, "{sql}: {report}");
    }
    let value = check("SELECT COUNT(*) FROM Invoice WHERE BillingCountry = 'Brasil'");
    assert_eq!(
        (value["errors"][0]["kind"].clone(), value["errors"][0]["suggestion"].clone()),
        (json!("filter_value"), json!("Brazil"))
    );
    let column = check("SELECT SUM(Saless) FROM Invoice");
    assert_eq!(column["errors"][0]["kind"], "unknown_column");
    // ClickHouse names are case-sensitive: the validator says which name is meant.
    let case = check("SELECT name FROM Genre");
    assert_eq!(case["valid"], false, "{case}");
    assert!(case.to_string().contains("Name"), "{case}");
    // What only the engine knows (a function of the wrong arity) is found by compiling.
    let engine = check("SELECT toYear(InvoiceDate, 1, 2, 3) FROM Invoice");
    assert_eq!(engine["valid"], false, "{engine}");
    assert!(engine.to_string().contains("ClickHouse rejects"), "{engine}");
}

#[test]
fn structured_queries_validate_and_execute_with_identical_rows_on_sqlite_and_postgres() {
    let structured = json!({
        "fields": [
            {"fieldCaption": "Genre.Name"},
            {"fieldCaption": "Track.TrackId", "function": "COUNT", "fieldAlias": "tracks", "sortDirection": "DESC", "sortPriority": 1}
        ],
        "filters": [{"field": {"fieldCaption": "Genre.Name"}, "filterType": "SET", "values": ["Rock", "Jazz", "Metal", "Blues"]}],
        "options": {"rowLimit": 3}
    });
    let mut sources = vec![("chinook".to_string(), chinook_spec())];
    if let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") {
        sources.push(("pg".to_string(), format!("pg={uri}")));
    }
    let specs: Vec<&str> = sources.iter().map(|(_, spec)| spec.as_str()).collect();
    let registry = registry(&specs);
    let mut answers = Vec::new();
    for (name, _) in &sources {
        let report = ok(validate_query(
            &registry.docs,
            ValidateQueryParams {
                source: Some(name.clone()),
                query: structured.clone(),
                question: None,
            },
        ));
        assert_eq!(report["valid"], true, "{report}");
        let rows = ok(execute_query(
            &registry.sources,
            ExecuteQueryParams {
                source: Some(name.clone()),
                query: structured.clone(),
                ..Default::default()
            },
        ));
        answers.push(rows["rows"].clone());
    }
    assert_eq!(answers[0], json!([["Rock", 1297], ["Metal", 374], ["Jazz", 130]]));
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    let misspelt = ok(validate_query(
        &registry.docs,
        ValidateQueryParams {
            source: Some("chinook".into()),
            query: json!({"fields": [{"fieldCaption": "Genre.Nme"}]}),
            question: None,
        },
    ));
    assert_eq!(misspelt["valid"], false);
    assert_eq!(misspelt["errors"][0]["location"], "fields[0].fieldCaption");
}

#[test]
fn on_graphs_selectors_are_validated_against_the_data_and_ask_writes_sql_over_the_nodes() {
    let registry = registry(&["demo:infrastructure"]);
    let check = |query: Value| {
        ok(validate_query(
            &registry.docs,
            ValidateQueryParams { source: None, query, question: None },
        ))
    };
    assert_eq!(check(json!("type == 'server' && cpu > `0.8`"))["valid"], true);
    let typo = check(json!("typ == 'server'"));
    assert_eq!(
        (typo["errors"][0]["kind"].clone(), typo["errors"][0]["suggestion"].clone()),
        (json!("unknown_field"), json!("type"))
    );
    let syntax = check(json!("type =="));
    assert_eq!(syntax["errors"][0]["kind"], "syntax");
    assert_eq!(syntax["errors"][0]["location"]["line"], 1);
    let edges = check(json!({"selector": "latency > `100`", "collection": "edges"}));
    assert_eq!(edges["valid"], true);
    let found = ok(execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: None,
            query: json!("type == 'database'"),
            max_rows: Some(5),
            ..Default::default()
        },
    ));
    assert_eq!((found["rowCount"].as_u64(), &found["truncated"]), (Some(5), &json!(true)));

    let server = ReplayServer::start(vec![
        Scripted::json(json!({"query": "SELECT id FROM nodes WHERE typ = 'database'", "reasoning": "databases"})),
        Scripted::json(json!({"query": "SELECT id FROM nodes WHERE type = 'database'", "reasoning": "databases"})),
        Scripted::Text("There are 20 database nodes.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask(
        &registry,
        AskParams { source: None, question: "Which nodes are databases?".into(), history: None },
    );
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"].as_array().map(Vec::len), Some(20));
    let system = server.received()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The graph's tables are the SQL schema the model writes for, in DataFusion's dialect.
    assert!(system.contains("datafusion") && system.contains("nodes"), "{system}");
    let retry = last_user_message(&server.received()[1].body);
    assert!(retry.contains("typ") && retry.contains("type"), "{retry}");
}

#[test]
fn the_readmes_question_on_postgres_returns_numeric_totals_as_sqlite_computes_them() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let registry = registry(&[&format!("pg={uri}"), &chinook_spec()]);
    // numeric(10,2) totals and their numeric SUM: the decode failed, classed as unavailable.
    let pg_sql = "SELECT c.\"CustomerId\", c.\"FirstName\", c.\"LastName\", SUM(i.\"Total\") AS spent FROM \"Customer\" c \
                  JOIN \"Invoice\" i ON i.\"CustomerId\" = c.\"CustomerId\" GROUP BY c.\"CustomerId\" ORDER BY spent DESC, c.\"CustomerId\" LIMIT 5";
    let server = ReplayServer::start(vec![
        query(pg_sql),
        Scripted::Text("Helena Holý spent the most.".into()),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let result = ask_source(&registry, "pg", "Which 5 customers spent the most?");
    assert!(result.success, "{}", result.message);
    // SQLite sums the same data; its rows, rounded to cents, are the expected ones.
    let lite = execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: Some("chinook".into()),
            query: json!(
                "SELECT c.CustomerId, c.FirstName, c.LastName, ROUND(SUM(i.Total), 2) AS spent FROM Customer c JOIN Invoice i ON i.CustomerId = c.CustomerId GROUP BY c.CustomerId ORDER BY spent DESC, c.CustomerId LIMIT 5"
            ),
            ..Default::default()
        },
    );
    assert!(lite.success, "{}", lite.message);
    assert_eq!(result.data["rows"], lite.data["rows"]);
    let first = &result.data["rows"][0];
    assert!(first[3].is_number(), "an exact numeric total is a JSON number: {first}");
}

#[test]
fn a_question_or_history_too_long_to_send_is_refused_before_the_model_is_asked() {
    let registry = registry(&[&chinook_spec()]);
    // No LLM is reachable: the refusal must come first, from the size alone.
    let long = ask_source(&registry, "chinook", &"how many tracks ".repeat(1_000));
    assert!(!long.success);
    assert_eq!(long.data["error"], "invalid_params", "{}", long.message);
    assert!(long.message.contains("`question`"), "{}", long.message);
    let turn = json!({"question": "q", "answer": "a".repeat(100_000)});
    let history = serde_json::from_value(json!([turn])).expect("a history");
    let heavy = ask(
        &registry,
        AskParams {
            source: Some("chinook".into()),
            question: "and now?".into(),
            history: Some(history),
        },
    );
    assert!(heavy.message.contains("`history`"), "{}", heavy.message);
}

#[test]
fn an_answer_bigger_than_the_cap_keeps_its_query_and_rows() {
    let registry = registry(&[&chinook_spec()]);
    let server = ReplayServer::start(vec![
        query("SELECT Name FROM Genre LIMIT 3"),
        Scripted::Text(format!(
            "{}\n---CONTEXT---\n{{\"shown_entities\": {{}}}}",
            "Rock. ".repeat(400_000)
        )),
    ])
    .expect("server");
    with_llm(&registry, &server, Provider::OpenAi);
    let answered = tool_table::call_tool(
        &registry,
        Caller::Ai,
        "ask",
        json!({"source": "chinook", "question": "Which genres are there?"}),
    );
    assert!(answered.success, "{}", answered.message);
    let size = serde_json::to_string(&answered).map_or(usize::MAX, |s| s.len());
    assert!(size <= registry.max_result_bytes(), "{size} bytes");
    assert_eq!(answered.data["query"], "SELECT Name FROM Genre LIMIT 3", "{}", answered.data);
    assert!(answered.truncated.is_some());
}
