//! Every number a caller sends has a server-side ceiling: for every tool in the table and every
//! numeric parameter its input schema declares (and the numbers inside `options` that cost
//! work), a value past the ceiling is refused before any work, naming the ceiling and the flag
//! that sets it. A new numeric parameter fails this test until it is given a ceiling or listed
//! below with the reason it needs none.

use schemascope_core::ceilings::{CEILINGS, Ceiling};
use schemascope_tools::Caller;
use schemascope_tools::tool_table::{call_tool, tool_list};
use serde_json::{Value, json};

use crate::common::{chinook_spec, registry};

/// Numbers that are not amounts of work or output, with why.
const NOT_AMOUNTS: &[(&str, &str, &str)] = &[
    ("sample_data", "seed", "an identifier of a draw, not an amount"),
    ("report_viewport", "width", "a pixel size stored as state (u32), costs nothing"),
    ("report_viewport", "height", "a pixel size stored as state (u32), costs nothing"),
    ("set_camera", "position", "coordinates, checked finite within ±1e12"),
    ("set_camera", "target", "coordinates, checked finite within ±1e12"),
];

/// Arguments each tool answers with when nothing is past a ceiling.
fn base_arguments(tool: &str) -> Value {
    match tool {
        "describe_schema" | "sample_data" | "find_nodes" | "find_edges" => json!({"source": "g"}),
        "describe_property" => json!({"source": "g", "property": "cpu"}),
        "find_items" => json!({"source": "g", "selector": "type == 'server'"}),
        "query_schema" => json!({"source": "r", "record_name": "server::Temperature"}),
        "validate_value" => {
            json!({"source": "r", "record_name": "server::Temperature", "value": {"celsius": 20.5}})
        }
        "search_schema_docs" | "get_schema_context" => {
            json!({"source": "chinook", "question": "invoice totals"})
        }
        "execute_query" => json!({"source": "chinook", "query": "SELECT 1"}),
        other => panic!("no base arguments for `{other}`: add them here"),
    }
}

/// The numeric parameters a tool's input schema declares (nullable or not).
fn numeric_parameters(schema: &Value) -> Vec<String> {
    let is_number = |t: &Value| matches!(t.as_str(), Some("integer" | "number"));
    let mut names = Vec::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let numeric = match &property["type"] {
            Value::Array(types) => types.iter().any(is_number),
            t => is_number(t) || (t == "array" && is_number(&property["items"]["type"])),
        };
        if numeric {
            names.push(name.clone());
        }
    }
    names
}

fn served() -> schemascope_tools::Services {
    registry(&["g=demo:infrastructure", "r=demo:sensors", &chinook_spec()])
}

fn assert_refused_past_ceiling(result: &schemascope_tools::ToolResult, name: &str, what: &str) {
    assert!(!result.success, "{what} ran: {}", result.message);
    assert_eq!(result.data["error"], "past_ceiling", "{what}: {}", result.message);
    assert_eq!(result.data["parameter"], name, "{what}");
    let ceiling = CEILINGS.iter().find(|c| c.name == name).expect("a ceiling of that name");
    assert_eq!(result.data["ceiling"], json!(ceiling.ceiling.get()), "{what}");
    for part in [format!("ceiling of {}", ceiling.ceiling.get()), format!("--ceiling {name}=N")] {
        assert!(result.message.contains(&part), "{what}: `{part}` not in {}", result.message);
    }
}

#[test]
fn every_numeric_parameter_of_every_tool_is_refused_past_its_ceiling() {
    let services = served();
    let listed = tool_list(&services, true);
    let definitions = listed.data["definitions"].as_array().expect("definitions").clone();
    let mut checked = Vec::new();
    for definition in &definitions {
        let tool = definition["name"].as_str().expect("name");
        for parameter in numeric_parameters(&definition["inputSchema"]) {
            if NOT_AMOUNTS.iter().any(|(t, p, _)| *t == tool && *p == parameter) {
                continue;
            }
            let ceiling = CEILINGS.iter().find(|c| c.name == parameter).unwrap_or_else(|| {
                panic!("`{tool}.{parameter}` is a number with no ceiling: add one to core's CEILINGS or to NOT_AMOUNTS with the reason")
            });
            let mut arguments = base_arguments(tool);
            // Just past, far past, and past what any integer type holds.
            for asked in
                [json!(ceiling.ceiling.get() + 1), json!(1_000_000_000_000u64), json!(1e300)]
            {
                arguments[&parameter] = asked.clone();
                let result = call_tool(&services, Caller::Ai, tool, arguments.clone());
                let what = format!("{tool}.{parameter} = {asked}");
                assert_refused_past_ceiling(&result, &parameter, &what);
            }
            // At the ceiling itself the call is not refused for that number.
            arguments[&parameter] = json!(ceiling.ceiling.get());
            let result = call_tool(&services, Caller::Ai, tool, arguments);
            assert_ne!(result.data["error"], "past_ceiling", "{tool}.{parameter} at the ceiling");
            checked.push(format!("{tool}.{parameter}"));
        }
    }
    // The table still declares the parameters this test was written for.
    for expected in [
        "execute_query.max_rows",
        "execute_query.max_bytes",
        "execute_query.timeout_ms",
        "sample_data.count",
        "describe_property.bins",
        "query_schema.samples",
        "validate_value.window_ms",
        "get_schema_context.top_k",
        "describe_schema.max_tokens",
        "find_nodes.limit",
    ] {
        assert!(checked.iter().any(|c| c == expected), "{expected} not checked: {checked:?}");
    }
}

#[test]
fn layout_iterations_past_the_ceiling_are_refused_before_any_work() {
    let services = served();
    for asked in [json!(Ceiling::Iterations.get() + 1), json!(1e9), json!(1e308)] {
        let result = call_tool(
            &services,
            Caller::Ai,
            "set_layout",
            json!({"source": "g", "type": "forceDirected", "options": {"iterations": asked, "tolerance": 0}}),
        );
        assert_refused_past_ceiling(&result, "iterations", &format!("iterations {asked}"));
    }
    let result = call_tool(
        &services,
        Caller::Ai,
        "set_layout",
        json!({"source": "g", "type": "forceDirected", "options": {"iterations": 50}}),
    );
    assert!(result.success, "{}", result.message);
}
