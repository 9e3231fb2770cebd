//! list_sources answered again from its last answer while nothing it shows has changed, and
//! searches that reuse their index answered at once: the same bytes as an answer made anew,
//! and every change — a profile finished, a reload, a reload that failed — in the next answer.

use std::sync::Arc;

use schemascope_core::ProfileState;
use schemascope_tools::tool_table::{answer_at_once, call_tool, call_tool_written};
use schemascope_tools::{Caller, Services, Written};
use serde_json::{Value, json};

use crate::common::{chinook_spec, registry};

/// list_sources as MCP calls it: written once, or given again.
fn listed(services: &Services) -> Written {
    call_tool_written(services, Caller::Ai, "list_sources", Value::Null, &mut |_| {})
}

/// list_sources made anew, as the other surfaces call it, as JSON text.
fn made_anew(services: &Services) -> String {
    let result = call_tool(services, Caller::User, "list_sources", json!({}));
    serde_json::to_string(&result.into_value()).expect("serialises")
}

#[test]
fn list_sources_is_given_again_byte_for_byte_until_a_profile_finishes() {
    let services = registry(&[&chinook_spec()]);
    let source = services.sources.get(Some("chinook")).expect("served");
    assert!(source.collections.iter().all(|c| c.profile_state() == ProfileState::NotStarted));
    assert!(answer_at_once(&services, Caller::Ai, "list_sources", &Value::Null).is_none());
    let first = listed(&services);
    assert!(first.success);
    assert_eq!(*first.text, made_anew(&services));
    let again = listed(&services);
    assert!(Arc::ptr_eq(&first.text, &again.text), "given again, not made anew");
    let at_once = answer_at_once(&services, Caller::Ai, "list_sources", &json!({}))
        .expect("answered at once");
    assert!(Arc::ptr_eq(&first.text, &at_once.text));
    // Arguments list_sources refuses are never answered from the kept answer.
    let refused =
        call_tool_written(&services, Caller::Ai, "list_sources", json!({"x": 1}), &mut |_| {});
    assert!(!refused.success, "{}", refused.text);

    // One table's profile computed: that table is listed differently.
    let invoice = source.collections.iter().find(|c| c.name() == "Invoice").expect("Invoice");
    invoice.profile();
    let after = listed(&services);
    assert!(!Arc::ptr_eq(&first.text, &after.text));
    assert_ne!(first.text, after.text);
    assert_eq!(*after.text, made_anew(&services));
    assert!(Arc::ptr_eq(&after.text, &listed(&services).text), "kept again");
}

#[test]
fn a_reload_and_a_failed_reload_are_in_the_next_list_sources() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plants.json");
    std::fs::write(&file, r#"[{"name": "fern", "height": 30}]"#).expect("write");
    let services = registry(&[&format!("plants={}", file.display())]);
    let first = listed(&services);
    assert_eq!(*first.text, made_anew(&services));
    assert!(Arc::ptr_eq(&first.text, &listed(&services).text));

    std::fs::write(&file, r#"[{"name": "fern", "height": 30}, {"name": "oak", "age": 80}]"#)
        .expect("write");
    services.sources.reload("plants").expect("reloads");
    let reloaded = listed(&services);
    assert_ne!(first.text, reloaded.text);
    assert_eq!(*reloaded.text, made_anew(&services));

    std::fs::write(&file, "[{\"name\": ").expect("write");
    assert!(services.sources.reload("plants").is_err());
    let failed = listed(&services);
    assert!(failed.text.contains("reload failed"), "{}", failed.text);
    assert_eq!(*failed.text, made_anew(&services));
}

#[test]
fn a_search_that_reuses_its_index_is_answered_at_once_with_the_same_chunks() {
    let services = registry(&[&chinook_spec()]);
    let arguments = json!({"question": "invoice totals per country", "top_k": 3});
    assert!(
        answer_at_once(&services, Caller::Ai, "search_schema_docs", &arguments).is_none(),
        "the index is not built yet"
    );
    let built = call_tool(&services, Caller::Ai, "search_schema_docs", arguments.clone());
    assert!(built.success, "{}", built.message);
    let at_once = answer_at_once(&services, Caller::Ai, "search_schema_docs", &arguments)
        .expect("answered at once");
    let at_once: Value = serde_json::from_str(&at_once.text).expect("JSON");
    assert_eq!(at_once["data"]["chunks"], built.data["chunks"]);
    assert_eq!(at_once["message"], json!(built.message));
}
