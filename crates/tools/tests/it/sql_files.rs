//! SQL over files, folders, document sets and graphs through the tool table (the path every
//! surface calls): execute_query, validate_query with did-you-mean, get_schema_context, the tools
//! a server lists, and a graph's algorithm results as columns — "top 5 nodes by PageRank",
//! "count of servers per region" and "best mpg by origin" in one call each.

use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{demo, registry};

fn data(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tables")
        .join(name)
        .display()
        .to_string()
}

fn call(services: &Services, tool: &str, arguments: Value) -> ToolResult {
    tool_table::call_tool(services, Caller::Ai, tool, arguments)
}

fn rows(services: &Services, source: &str, sql: &str) -> Value {
    let result = call(services, "execute_query", json!({"source": source, "query": sql}));
    assert!(result.success, "{sql}: {} {}", result.message, result.data);
    result.data["rows"].clone()
}

#[test]
fn a_csv_file_answers_sql_and_its_validation_names_the_right_column() {
    let services = registry(&[&format!("weather={}", data("seattle-weather.csv"))]);
    assert_eq!(
        rows(
            &services,
            "weather",
            "SELECT weather, COUNT(*) AS n FROM weather GROUP BY weather ORDER BY n DESC LIMIT 2"
        ),
        json!([["sun", 714], ["fog", 411]])
    );
    let report = call(
        &services,
        "validate_query",
        json!({"source": "weather", "query": "SELECT MAX(windd) FROM weather WHERE weather = 'rainy'"}),
    );
    assert_eq!(report.data["valid"], false, "{}", report.data);
    let text = report.data.to_string();
    assert!(text.contains("wind"), "{text}");
    let context = call(
        &services,
        "get_schema_context",
        json!({"source": "weather", "question": "windiest day"}),
    );
    assert!(context.success, "{}", context.message);
    let text = context.data.to_string();
    for needed in ["weather", "precipitation", "DOUBLE", "VARCHAR"] {
        assert!(text.contains(needed), "{needed} missing from {text}");
    }
    // A selector still runs on the rows held as items.
    let selected =
        call(&services, "execute_query", json!({"source": "weather", "query": "wind > `9`"}));
    assert!(selected.success, "{}", selected.message);
    assert_eq!(selected.data["rowCount"], 1);
}

#[test]
fn best_mpg_by_origin_is_one_call_on_a_json_document_set() {
    let services = registry(&[&format!("cars={}", data("cars.json"))]);
    let best = rows(
        &services,
        "cars",
        r#"SELECT "Origin", MAX("Miles_per_Gallon") AS mpg FROM cars GROUP BY "Origin" ORDER BY mpg DESC"#,
    );
    assert_eq!(best, json!([["Japan", 46.6], ["Europe", 44.3], ["USA", 39.0]]));
}

#[test]
fn a_graph_answers_sql_over_its_nodes_edges_and_algorithm_results() {
    let services = demo();
    let per_region = rows(
        &services,
        "infrastructure",
        "SELECT region, COUNT(*) AS n FROM nodes WHERE type = 'server' GROUP BY region ORDER BY region",
    );
    let counted: Vec<(String, u64)> = per_region
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| (r[0].as_str().unwrap_or("").to_string(), r[1].as_u64().unwrap_or(0)))
        .collect();
    // Independent count: the same servers found by a selector.
    let servers = call(
        &services,
        "find_items",
        json!({"source": "infrastructure", "collection": "nodes", "selector": "type == 'server'", "limit": 0}),
    );
    let total: u64 = counted.iter().map(|(_, n)| n).sum();
    assert_eq!(Value::from(total), servers.data["count"], "{}", servers.data);
    assert!(counted.len() > 1, "{counted:?}");
    let edges =
        rows(&services, "infrastructure", "SELECT COUNT(*), COUNT(DISTINCT source) FROM edges");
    assert_eq!(edges[0][0], 240);
    let run =
        call(&services, "run_algorithm", json!({"source": "infrastructure", "type": "pagerank"}));
    assert!(run.success, "{}", run.message);
    let top = rows(
        &services,
        "infrastructure",
        r#"SELECT id, "algorithmResults.schemascope.pagerank.rank" AS rank FROM nodes ORDER BY rank DESC, id LIMIT 5"#,
    );
    assert_eq!(top.as_array().map(Vec::len), Some(5));
    let ranks: Vec<f64> =
        top.as_array().expect("rows").iter().filter_map(|r| r[1].as_f64()).collect();
    assert!(ranks.windows(2).all(|w| w[0] >= w[1]), "{ranks:?}");
    // The highest rank is the one describe_property reports as the maximum.
    let rank = call(
        &services,
        "describe_property",
        json!({"source": "infrastructure", "property": "algorithmResults.schemascope.pagerank.rank"}),
    );
    assert_eq!(rank.data["max"].as_f64(), Some(ranks[0]), "{}", rank.data);
}

#[test]
fn a_folder_is_one_database_whose_files_join() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("orders.csv"),
        "id,customer,amount\n1,ann,10.5\n2,bob,3\n3,ann,1.5\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("customers.json"),
        r#"[{"name": "ann", "country": "NO"}, {"name": "bob", "country": "SE"}]"#,
    )
    .expect("write");
    std::fs::write(dir.path().join("notes.txt"), "not data").expect("write");
    let services = registry(&[&format!("shop={}", dir.path().display())]);
    assert_eq!(
        rows(
            &services,
            "shop",
            "SELECT c.country, SUM(o.amount) AS total FROM orders o JOIN customers c ON o.customer = c.name GROUP BY c.country ORDER BY c.country",
        ),
        json!([["NO", 12.0], ["SE", 3.0]])
    );
    let listed = call(&services, "list_sources", json!({}));
    let text = listed.data.to_string();
    assert!(text.contains("orders") && text.contains("customers"), "{text}");
    assert!(!text.contains("notes"), "{text}");
    // A glob takes only what it matches.
    let services = registry(&[&format!("only={}/*.csv", dir.path().display())]);
    let refused = call(
        &services,
        "execute_query",
        json!({"source": "only", "query": "SELECT * FROM customers"}),
    );
    assert!(!refused.success);
    assert!(refused.message.contains("not a table this source serves"), "{}", refused.message);
}

#[test]
fn servers_over_files_and_graphs_list_the_sql_tools() {
    let listed = |services: &Services| -> Vec<String> {
        tool_table::listed(services).iter().map(|spec| spec.name.to_string()).collect()
    };
    let csv = registry(&[&format!("weather={}", data("seattle-weather.csv"))]);
    let names = listed(&csv);
    for tool in ["execute_query", "validate_query", "get_schema_context", "search_schema_docs"] {
        assert!(names.iter().any(|n| n == tool), "{tool} not listed: {names:?}");
    }
    let graph = demo();
    let names = listed(&graph);
    for tool in ["execute_query", "run_algorithm", "find_nodes"] {
        assert!(names.iter().any(|n| n == tool), "{tool} not listed: {names:?}");
    }
}
