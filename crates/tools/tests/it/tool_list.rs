//! A server lists only the tools its sources can use, and the list stays small: every LLM pays
//! for it on every turn.

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_tools::tool_table::{call_tool, listed, tool_list};
use schemascope_tools::toolsets::ChosenTools;
use schemascope_tools::{Caller, Services};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

use crate::common;

fn names(specs: &[&str]) -> Vec<&'static str> {
    listed(&common::registry(specs)).into_iter().map(|spec| spec.name).collect()
}

const FOR_ANY_SOURCE: [&str; 7] = [
    "list_sources",
    "describe_schema",
    "sample_data",
    "describe_property",
    "query_schema",
    "validate_value",
    "find_items",
];

/// What a source whose collections answer SQL adds (`ask` too once an LLM is configured).
const FOR_SQL: [&str; 4] =
    ["search_schema_docs", "get_schema_context", "execute_query", "validate_query"];

#[test]
fn records_list_the_seven_data_tools_and_the_sql_tools() {
    assert_eq!(names(&["demo:sensors"]), [&FOR_ANY_SOURCE[..], &FOR_SQL[..]].concat());
}

#[test]
fn a_graph_adds_the_graph_tools_and_a_database_the_sql_tools_but_not_ask_without_an_llm() {
    let graph = names(&["demo:infrastructure"]);
    assert!(
        graph.contains(&"find_and_style_nodes") && graph.contains(&"run_algorithm"),
        "{graph:?}"
    );
    // Its nodes and edges are tables: the SQL tools are listed beside the graph tools.
    assert!(graph.contains(&"execute_query") && !graph.contains(&"ask"), "{graph:?}");
    let chinook =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let sql = names(&[&format!("chinook={}", chinook.display())]);
    for tool in ["search_schema_docs", "get_schema_context", "execute_query", "validate_query"] {
        assert!(sql.contains(&tool), "{tool} missing from {sql:?}");
    }
    assert!(!sql.contains(&"ask") && !sql.contains(&"query_graph"), "{sql:?}");

    let registry = common::registry(&[&format!("chinook={}", chinook.display())]);
    with_llm(&registry);
    assert!(listed(&registry).iter().any(|spec| spec.name == "ask"));
}

#[test]
fn the_records_only_list_is_small() {
    let answer = tool_list(&common::registry(&["demo:sensors"]), false);
    let tokens = answer.data["tokens"].as_u64().unwrap_or(u64::MAX);
    // 27 tools with identical output schemas were about 18,000 tokens; 7 without were about
    // 3,100, and are about 1,100 since each thing is said once (11 with the SQL tools).
    assert!(tokens < 2_500, "{}", answer.message);
    assert_eq!(answer.data["count"], 11);
}

/// Configures an LLM (never reached: listing `ask` needs only its configuration).
fn with_llm(registry: &Services) {
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(1),
    }));
}

/// The tokens `schemascope tools` reports for a server over `registry`, with the count.
fn tokens(registry: &Services) -> (u64, u64, String) {
    let answer = tool_list(registry, false);
    let tokens = answer.data["tokens"].as_u64().unwrap_or(u64::MAX);
    (tokens, answer.data["count"].as_u64().unwrap_or(0), answer.message)
}

#[test]
fn every_default_server_lists_its_tools_in_under_4000_tokens() {
    let graph = "demo:infrastructure";
    let sqlite = common::chinook_spec();
    for (kind, specs, llm, count) in [
        ("demo graph", vec![graph], false, 26),
        ("SQLite", vec![sqlite.as_str()], false, 11),
        ("graph + SQLite", vec![graph, sqlite.as_str()], false, 26),
        ("graph + SQLite + LLM", vec![graph, sqlite.as_str(), "demo:sensors"], true, 27),
    ] {
        let registry = common::registry(&specs);
        if llm {
            with_llm(&registry);
        }
        let (tokens, listed, message) = tokens(&registry);
        assert_eq!(listed, count, "{kind}: {message}");
        // Was 8,687 (graph), 4,751 (SQLite), 10,295 and 10,804 (all 27).
        assert!(tokens < 4_000, "{kind}: {message}");
    }
}

#[test]
fn a_choice_of_tools_lists_only_those_and_refuses_the_others() {
    let registry = common::registry(&["demo:infrastructure", &common::chinook_spec()]);
    registry.choose_tools(Some(ChosenTools::parse_list("discovery,execute_query").expect("valid")));
    let names: Vec<&str> = listed(&registry).into_iter().map(|spec| spec.name).collect();
    assert_eq!(names, [&FOR_ANY_SOURCE[..], &["execute_query"]].concat());

    let answer = tool_list(&registry, false);
    assert_eq!(answer.data["chosen"], "discovery,execute_query");
    assert_eq!(answer.data["why"]["validate_query"], "not chosen (--tools / tools = [...])");
    assert_eq!(
        answer.data["why"]["ask"],
        "needs a database and an LLM (--llm-model or SCHEMASCOPE_LLM_MODEL)"
    );
    assert!(answer.message.contains("Not listed, not chosen"), "{}", answer.message);
    let per_tool = answer.data["perTool"].as_array().cloned().unwrap_or_default();
    assert_eq!(per_tool.len(), names.len());
    assert!(per_tool.iter().all(|t| t["tokens"].as_u64().is_some_and(|n| n > 10)), "{per_tool:?}");

    let refused = call_tool(&registry, Caller::Ai, "validate_query", json!({"query": "SELECT 1"}));
    assert!(!refused.success);
    assert_eq!(refused.data["error"], "tool_not_chosen");
    assert!(refused.message.contains("`--tools discovery,execute_query`"), "{}", refused.message);
    assert!(
        refused.message.contains("execute_query") && !refused.message.contains("validate_query,"),
        "{}",
        refused.message
    );
    // A person's call through HTTP takes the same path.
    let refused = call_tool(&registry, Caller::User, "find_nodes", json!({}));
    assert_eq!(refused.data["error"], "tool_not_chosen");
    let answered = call_tool(
        &registry,
        Caller::Ai,
        "execute_query",
        json!({"source": "chinook", "query": "SELECT 1"}),
    );
    assert!(answered.success, "{}", answered.message);

    let instructions = schemascope_tools::instructions(&registry);
    assert!(
        !instructions.contains("run_algorithm") && !instructions.contains("validate_query"),
        "{instructions}"
    );
    assert!(
        instructions.contains("execute_query") && instructions.contains("operator chose"),
        "{instructions}"
    );

    registry.choose_tools(None);
    assert!(listed(&registry).iter().any(|spec| spec.name == "validate_query"));
}
