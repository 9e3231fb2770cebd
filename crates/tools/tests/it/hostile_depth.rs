//! Hostile depth and cost through the tools, as an MCP client or an LLM sends them: SQL and
//! selectors nested past any stack, JSON arguments nested as deep as the JSON parser allows,
//! selectors whose work grows exponentially, and calls cancelled while they run. Every call runs
//! on a thread with a tokio worker's 2 MiB stack and must return the envelope with a clear error
//! — a stack overflow would abort the whole server. The databases are checked unchanged after
//! (SQLite's file byte for byte, PostgreSQL's rows and catalog when `SCHEMASCOPE_TEST_POSTGRES`
//! is set).

use std::path::Path;
use std::time::Duration;

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{ReplayServer, Scripted};
use schemascope_core::cancel::{self, Cancel};
use schemascope_sources::sql::{Database, PostgresDatabase};
use schemascope_tools::graph_session::{
    FindElementsParams, StyleElementsParams, find_and_style_nodes, find_nodes,
};
use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, registry};

/// Runs `work` on a thread with a 2 MiB stack, as tokio's workers and blocking threads have.
fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn_scoped(scope, work)
            .expect("spawns")
            .join()
            .expect("no panic")
    })
}

/// SQL nested past the bounds, each with what its refusal says.
fn deep_sql() -> Vec<(String, &'static str)> {
    let n = 3_000;
    let terms = |term: &str, op: &str| vec![term; n].join(op);
    vec![
        (format!("SELECT {}", terms("1", "+")), "nest deeper than 128 levels"),
        (
            format!("SELECT \"Name\" FROM \"Genre\" WHERE {}", terms("\"GenreId\" = 1", " OR ")),
            "nest deeper than 128 levels",
        ),
        (format!("SELECT {}1", "NOT ".repeat(n)), "nest deeper than 128 levels"),
        (format!("SELECT {}1", "- ".repeat(n)), "nest deeper than 128 levels"),
        (
            format!("SELECT {} 1 {}", "CASE WHEN 1 = 1 THEN ".repeat(n), "END ".repeat(n)),
            "nest deeper than 128 levels",
        ),
        (terms("SELECT 1", " UNION ALL "), "nest deeper than 128 levels"),
        (
            format!("SELECT {}1{}", "(SELECT ".repeat(500), ")".repeat(500)),
            "parentheses nest 500 deep",
        ),
        (
            format!("SELECT {}1{}", "coalesce(".repeat(500), ")".repeat(500)),
            "parentheses nest 500 deep",
        ),
    ]
}

fn run_deep_sql(registry: &Services, source: &str) {
    for (sql, reason) in deep_sql() {
        let report = on_small_stack(|| {
            validate_query(
                &registry.docs,
                ValidateQueryParams {
                    source: Some(source.into()),
                    query: Value::from(sql.as_str()),
                    question: None,
                },
            )
        });
        assert!(report.success, "{}", report.message);
        assert_eq!(report.data["valid"], false, "{}…", &sql[..40]);
        let errors = report.data["errors"].to_string();
        assert!(errors.contains(reason), "{}…: {errors}", &sql[..40]);
        // execute_query reads the tree the same way; what it cannot parse is left to the
        // database, which refuses it or computes it on its own stack. Either way an envelope.
        let executed = on_small_stack(|| {
            execute_query(
                &registry.sources,
                ExecuteQueryParams {
                    source: Some(source.into()),
                    query: Value::from(sql.as_str()),
                    timeout_ms: Some(5_000),
                    ..Default::default()
                },
            )
        });
        assert!(!executed.message.is_empty());
    }
}

#[test]
fn deep_sql_is_refused_and_leaves_sqlite_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("chinook.sqlite");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite"),
        &path,
    )
    .expect("copy");
    let bytes = std::fs::read(&path).expect("read");
    let registry = registry(&[&format!("lite=sqlite:{}", path.display())]);
    run_deep_sql(&registry, "lite");
    drop(registry);
    assert!(std::fs::read(&path).expect("read") == bytes, "the database file changed");
}

/// Every user table's rows and the relations there are.
fn postgres_checksum(database: &dyn Database) -> Vec<String> {
    let one = |sql: &str| {
        format!("{:?}", database.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}")))
    };
    let mut facts =
        vec![one("SELECT n.nspname::text, c.relname::text, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' ORDER BY 1, 2")];
    for table in database.catalog().expect("catalog").tables {
        let quoted = schemascope_sources::sql::Dialect::Postgres.quote_table(&table.name);
        facts.push(one(&format!(
            "SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) FROM {quoted} t"
        )));
    }
    facts
}

#[test]
fn deep_sql_is_refused_and_leaves_postgres_unchanged() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let checker = PostgresDatabase::connect(&uri).expect("connect");
    let before = postgres_checksum(&checker);
    let registry = registry(&[&format!("pg={uri}")]);
    run_deep_sql(&registry, "pg");
    assert_eq!(postgres_checksum(&checker), before, "the database changed");
}

#[test]
fn an_llm_answering_deep_sql_gets_the_reason_and_ask_ends_with_an_answer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("chinook.sqlite");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite"),
        &path,
    )
    .expect("copy");
    let registry = registry(&[&format!("chinook={}", path.display())]);
    let deep = format!("SELECT {} AS n FROM Genre", vec!["GenreId"; 3_000].join(" + "));
    let answer = |sql: &str| Scripted::json(json!({"query": sql, "reasoning": "scripted"}));
    let server = ReplayServer::start(vec![
        answer(&deep),
        answer("SELECT COUNT(*) AS n FROM Genre"),
        Scripted::Text("There are 25 genres.".into()),
    ])
    .expect("server");
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", server.url()),
        model: "replayed".into(),
        api_key: Some("k".into()),
        timeout: Duration::from_secs(3),
    }));
    let result = on_small_stack(|| {
        ask(
            &registry,
            AskParams {
                source: Some("chinook".into()),
                question: "How many genres?".into(),
                history: None,
            },
        )
    });
    assert!(result.success, "{}", result.message);
    assert_eq!(result.data["rows"], json!([[25]]));
    let retry = server.received()[1].body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(retry.contains("nest deeper than 128 levels"), "{retry}");
}

/// Selectors nested past the bounds.
fn deep_selectors() -> Vec<String> {
    vec![
        format!("{}type", "!".repeat(2_500)),
        format!("{}type{}", "[".repeat(800), "]".repeat(800)),
        format!("{}type{}", "(".repeat(3_000), ")".repeat(3_000)),
        format!("type{}", " || type".repeat(1_000)),
        format!("a{}", ".a".repeat(3_000)),
        format!("{}type{}", "not_null(".repeat(500), ")".repeat(500)),
    ]
}

#[test]
fn deep_selectors_are_refused_by_every_tool_that_takes_one() {
    let registry = demo();
    for selector in deep_selectors() {
        let found = on_small_stack(|| {
            find_items(
                &registry.sources,
                FindItemsParams {
                    source: Some("infrastructure".into()),
                    selector: selector.clone(),
                    collection: None,
                    limit: None,
                },
            )
        });
        assert!(!found.success && found.data["error"] == "invalid_selector", "{}", found.message);
        assert!(found.message.contains("nests deeper than 128 levels"), "{}", found.message);
        let nodes = on_small_stack(|| {
            find_nodes(
                &registry.graphs,
                FindElementsParams { selector: selector.clone(), ..Default::default() },
            )
        });
        assert!(!nodes.success && nodes.message.contains("nests deeper"), "{}", nodes.message);
        let styled = on_small_stack(|| {
            find_and_style_nodes(
                &registry.graphs,
                Caller::Ai,
                StyleElementsParams { selector: selector.clone(), ..Default::default() },
            )
        });
        assert!(!styled.success && styled.message.contains("nests deeper"), "{}", styled.message);
        let validated = on_small_stack(|| {
            validate_query(
                &registry.docs,
                ValidateQueryParams {
                    source: Some("infrastructure".into()),
                    query: json!({"selector": selector, "collection": "nodes"}),
                    question: None,
                },
            )
        });
        assert_eq!(validated.data["valid"], false, "{}", validated.message);
        assert!(
            validated.data["errors"].to_string().contains("nests deeper"),
            "{}",
            validated.data
        );
    }
}

/// The selector (170 bytes, 77 s of CPU) and variants.
fn exponential_selectors() -> Vec<String> {
    vec![
        format!("length({}) > `5`", "[@,@,@,@,@,@,@,@,@,@][]".repeat(7)),
        format!(
            "length({}[@,@,@,@,@,@,@,@,@,@]{}) > `5`",
            "map(&".repeat(7),
            ", [@,@,@,@,@,@,@,@,@,@])".repeat(7)
        ),
        format!("({0}) == ({0})", "[@, @] | ".repeat(40) + "@"),
    ]
}

#[test]
fn exponential_selectors_stop_with_the_bound_they_reached() {
    let registry = demo();
    for selector in exponential_selectors() {
        let found = on_small_stack(|| {
            find_items(
                &registry.sources,
                FindItemsParams {
                    source: Some("infrastructure".into()),
                    selector: selector.clone(),
                    collection: None,
                    limit: None,
                },
            )
        });
        assert!(
            !found.success && found.data["error"] == "selector_too_costly",
            "{}",
            found.message
        );
        assert!(
            found.message.contains("more than 10000000 steps on one item"),
            "{}",
            found.message
        );
        let nodes = on_small_stack(|| {
            find_nodes(
                &registry.graphs,
                FindElementsParams { selector: selector.clone(), ..Default::default() },
            )
        });
        assert!(!nodes.success && nodes.message.contains("10000000 steps"), "{}", nodes.message);
        let styled = on_small_stack(|| {
            find_and_style_nodes(
                &registry.graphs,
                Caller::Ai,
                StyleElementsParams { selector: selector.clone(), ..Default::default() },
            )
        });
        assert!(!styled.success && styled.message.contains("10000000 steps"), "{}", styled.message);
    }
    // No layer was added by the refused styles.
    let styles =
        schemascope_tools::graph_session::describe_styles(&registry.graphs, Default::default());
    assert!(!styles.data.to_string().contains("[@,@"), "{}", styles.data);
}

#[test]
fn deep_json_arguments_get_answers_on_a_small_stack() {
    let registry = demo();
    // 240 levels, built in code: deeper than serde_json reads from text (128), so deeper than
    // any request can carry.
    let deep = (0..120).fold(json!("bottom"), |inner, _| json!({"a": [inner]}));
    let validated = on_small_stack(|| {
        validate_value(
            &registry,
            ValidateValueParams {
                source: Some("sensors".into()),
                record_name: Some("server::Temperature".into()),
                value: deep.clone(),
                ..Default::default()
            },
        )
    });
    assert!(validated.success, "{}", validated.message);
    assert_eq!(validated.data["valid"], false, "{}", validated.data);
    let structured = json!({"fields": [{"fieldCaption": "Genre.Name"}], "filters": [{"field": {"fieldCaption": "Genre.Name"}, "filterType": "SET", "values": [deep]}]});
    let chinook = registry_with_chinook();
    let report = on_small_stack(|| {
        validate_query(
            &chinook.docs,
            ValidateQueryParams {
                source: Some("chinook".into()),
                query: structured.clone(),
                question: None,
            },
        )
    });
    assert!(!report.message.is_empty());
    let executed = on_small_stack(|| {
        execute_query(
            &chinook.sources,
            ExecuteQueryParams {
                source: Some("chinook".into()),
                query: structured,
                ..Default::default()
            },
        )
    });
    assert!(!executed.message.is_empty());
    // Through the by-name dispatch of `POST /v1/tools/{name}`.
    let called = on_small_stack(|| {
        tool_table::call_tool(
            &registry,
            Caller::User,
            "validate_value",
            json!({"source": "sensors", "record_name": "server::Temperature", "value": deep}),
        )
    });
    assert!(called.success, "{}", called.message);
}

fn registry_with_chinook() -> schemascope_tools::Services {
    registry(&[&format!(
        "chinook={}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
            .display()
    )])
}

#[test]
fn a_cancelled_call_returns_at_once_and_says_why() {
    let registry = demo();
    let token = Cancel::new();
    token.cancel_because("the request took longer than 60 s");
    let found = cancel::with(&token, || {
        find_items(
            &registry.sources,
            FindItemsParams {
                source: Some("infrastructure".into()),
                selector: "length(to_string(@)) > `1`".into(),
                collection: None,
                limit: None,
            },
        )
    });
    assert!(!found.success && found.data["error"] == "cancelled", "{}", found.message);
    assert!(
        found.message.contains("the request took longer than 60 s")
            && found.message.contains("0 of"),
        "{}",
        found.message
    );
}

#[test]
fn a_cancelled_algorithm_run_or_layout_is_cut_short_and_saves_nothing() {
    let registry = demo();
    let token = Cancel::new();
    token.cancel_because("the request took longer than 60 s");
    let call = |name: &str, arguments: Value| {
        cancel::with(&token, || tool_table::call_tool(&registry, Caller::Ai, name, arguments))
    };
    for algorithm in ["betweenness", "closeness", "pagerank", "louvain"] {
        let run = call("run_algorithm", json!({"type": algorithm}));
        assert!(!run.success && run.data["error"] == "cancelled", "{algorithm}: {}", run.message);
        assert!(
            run.message.contains("was cut short after")
                && run.message.contains("nothing was saved")
                && run.message.contains("60 s"),
            "{}",
            run.message
        );
    }
    let laid_out =
        call("set_layout", json!({"type": "forceDirected", "options": {"iterations": 10000}}));
    assert!(!laid_out.success && laid_out.data["error"] == "cancelled", "{}", laid_out.message);
    // Nothing was written: no algorithm result is on the nodes, and the same runs succeed when
    // not cancelled.
    let found = find_nodes(
        &registry.graphs,
        FindElementsParams { selector: "algorithmResults".into(), ..Default::default() },
    );
    assert!(found.success && found.data["count"] == 0, "{}", found.data);
    let run =
        tool_table::call_tool(&registry, Caller::Ai, "run_algorithm", json!({"type": "pagerank"}));
    assert!(run.success, "{}", run.message);
}

#[test]
fn a_table_profile_cancelled_before_its_statements_is_made_on_the_next_call() {
    let registry = registry_with_chinook();
    let token = Cancel::new();
    token.cancel_because("the client cancelled the request");
    let params = || DescribePropertyParams {
        source: Some("chinook".into()),
        collection: Some("Genre".into()),
        property: "Name".into(),
        ..Default::default()
    };
    let cancelled = cancel::with(&token, || describe_property(&registry, params()));
    assert!(
        json!(cancelled).to_string().contains("the client cancelled the request"),
        "{}",
        json!(cancelled)
    );
    // Not kept as the table's profile: the next call computes it.
    let described = describe_property(&registry, params());
    assert!(described.success, "{}", described.message);
    assert_eq!(described.data["distinctStrings"], 25, "{}", described.data);
}
