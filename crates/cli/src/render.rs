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
        View::Data => {
            println!("{}\n", result.message);
            println!("{}", pretty(&result.data));
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
