//! A server lists only the tools its sources can use, and the list stays small: every LLM pays
//! for it on every turn.

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_tools::tool_table::{listed, tool_list};
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

#[test]
fn records_only_lists_the_seven_data_tools() {
    assert_eq!(names(&["demo:sensors"]), FOR_ANY_SOURCE);
}

#[test]
fn a_graph_adds_the_graph_tools_and_a_database_the_sql_tools_but_not_ask_without_an_llm() {
    let graph = names(&["demo:infrastructure"]);
    assert!(
        graph.contains(&"find_and_style_nodes") && graph.contains(&"run_algorithm"),
        "{graph:?}"
    );
    assert!(!graph.contains(&"execute_query"), "{graph:?}");
    let chinook =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    let sql = names(&[&format!("chinook={}", chinook.display())]);
    for tool in ["search_schema_docs", "get_schema_context", "execute_query", "validate_query"] {
        assert!(sql.contains(&tool), "{tool} missing from {sql:?}");
    }
    assert!(!sql.contains(&"ask") && !sql.contains(&"query_graph"), "{sql:?}");

    let registry = common::registry(&[&format!("chinook={}", chinook.display())]);
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(1),
    }));
    assert!(listed(&registry).iter().any(|spec| spec.name == "ask"));
}

#[test]
fn the_records_only_list_is_small() {
    let answer = tool_list(&common::registry(&["demo:sensors"]), false);
    let tokens = answer.data["tokens"].as_u64().unwrap_or(u64::MAX);
    // 27 tools with identical output schemas were about 18,000 tokens; 7 without are about 3,000.
    assert!(tokens < 4_000, "{}", answer.message);
    assert_eq!(answer.data["count"], 7);
}
