//! Printing tool results for people: the message, then the part of the data worth reading.
//! `--json` bypasses all of this and prints the envelope as the MCP tools return it.

use schemascope_tools::ToolResult;
use serde_json::Value;

/// Which command produced the result, to pick what to show.
#[derive(Debug, Clone, Copy)]
pub(crate) enum View {
    /// describe: the markdown summary.
    Describe,
    /// Anything else: the message and the pretty-printed data.
    Data,
    /// schema: the JSON Schema and the example.
    Schema,
    /// find: the ids and items.
    Find,
    /// context: the message, then the context text as an LLM gets it.
    Context,
    /// Just the message.
    Message,
    /// tools: one line per tool with its tokens, the total, what is not listed and why.
    Tools,
}

/// Prints a result for a person.
pub(crate) fn print(result: &ToolResult, view: View) {
    if !result.success {
        eprintln!("error: {}", result.message);
        return;
    }
    match view {
        View::Describe => {
            if let Some(markdown) = result.data.get("markdown").and_then(Value::as_str) {
                print!("{markdown}");
            }
        }
        View::Schema => {
            println!("{}\n", result.message);
            println!("{}", pretty(&result.data["schema"]));
            if let Some(example) = result.data.get("example").filter(|e| !e.is_null()) {
                println!("\nexample:\n{}", pretty(example));
            }
        }
        View::Find => {
            println!("{}", result.message);
            if let Some(ids) =
                result.data.get("ids").and_then(Value::as_array).filter(|i| !i.is_empty())
            {
                let ids: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
                println!("ids: {}", ids.join(", "));
            }
            if let Some(items) = result.data.get("items") {
                println!("{}", pretty(items));
            }
        }
        View::Context => {
            println!("{}\n", result.message);
            if let Some(text) = result.data.get("context").and_then(Value::as_str) {
                println!("{text}");
            }
        }
        View::Message => println!("{}", result.message),
        View::Tools => print!("{}", tool_lines(&result.data)),
        View::Data => {
            println!("{}\n", result.message);
            println!("{}", pretty(&result.data));
        }
    }
}

/// `schemascope tools` for a person: each listed tool and its tokens, the total, then the tools
/// not listed, grouped by why.
fn tool_lines(data: &Value) -> String {
    let per_tool = data["perTool"].as_array().cloned().unwrap_or_default();
    let width = per_tool.iter().filter_map(|t| t["name"].as_str()).map(str::len).max().unwrap_or(0);
    let mut text = String::new();
    for tool in &per_tool {
        let name = tool["name"].as_str().unwrap_or("");
        let tokens = tool["tokens"].as_u64().unwrap_or(0);
        text.push_str(&format!("  {name:width$}  {tokens:>5} tokens\n"));
    }
    text.push_str(&format!(
        "{} tools listed: {} tokens ({} bytes) of tool definitions, sent with every turn.\n",
        data["count"], data["tokens"], data["bytes"]
    ));
    if let Some(chosen) = data["chosen"].as_str() {
        text.push_str(&format!("Chosen with --tools: {chosen}\n"));
    }
    let why = data["why"].as_object().cloned().unwrap_or_default();
    let not_listed: Vec<&str> =
        data["notListed"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    // In the order of the tools (the table's), not of the reasons' names.
    let mut reasons: Vec<&str> = Vec::new();
    for reason in not_listed.iter().filter_map(|name| why.get(*name).and_then(Value::as_str)) {
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    if !reasons.is_empty() {
        text.push_str("Not listed:\n");
    }
    for reason in reasons {
        let names: Vec<&str> = not_listed
            .iter()
            .copied()
            .filter(|name| why.get(*name).and_then(Value::as_str) == Some(reason))
            .collect();
        text.push_str(&format!("  {reason}: {}\n", names.join(", ")));
    }
    text
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tool_list_reads_as_lines_with_the_reasons_tools_are_not_listed() {
        let data = json!({
            "perTool": [{"name": "list_sources", "tokens": 40}, {"name": "describe_schema", "tokens": 120}],
            "count": 2, "tokens": 161, "bytes": 700, "chosen": "list_sources,describe_schema",
            "notListed": ["find_items", "execute_query"],
            "why": {"find_items": "not chosen (--tools / tools = [...])", "execute_query": "no source served answers SQL"},
        });
        let text = tool_lines(&data);
        assert!(text.contains("  list_sources        40 tokens\n"), "{text}");
        assert!(text.contains("  describe_schema    120 tokens\n"), "{text}");
        assert!(text.contains("2 tools listed: 161 tokens (700 bytes)"), "{text}");
        assert!(text.contains("Chosen with --tools: list_sources,describe_schema"), "{text}");
        assert!(text.contains("  not chosen (--tools / tools = [...]): find_items\n"), "{text}");
        assert!(text.contains("  no source served answers SQL: execute_query\n"), "{text}");
        assert!(!text.contains('{'), "no JSON: {text}");
    }
}
