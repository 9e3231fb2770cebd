//! The prompts of the two LLM nodes: build_query (with the previous attempt's query and its
//! structured errors on a retry, and earlier turns for follow-ups) and summarize (the answer,
//! then `---CONTEXT---` and the shown entities as JSON).

use serde_json::Value;

use super::state::AskState;

/// Rows shown to the summarizer.
pub const SUMMARY_ROWS: usize = 50;

/// The system prompt of build_query.
pub fn build_system(state: &AskState) -> String {
    let (schema, dialect, stats) = match &state.schema {
        Some(s) => (s.text.as_str(), s.dialect.as_str(), s.metadata_stats.to_string()),
        None => ("(no schema)", "sql", "{}".to_string()),
    };
    if dialect == "jmespath" {
        return format!(
            "You write one JMESPath selector that picks the items answering the user's question about the data below. \
The selector is evaluated on each item's data (the root is the data: write `type == 'server'`, not `data.type`); \
string values take 'single quotes', numbers backticks (cpu > `0.5`). Use only the property names and values shown.\n\n{schema}\n\n\
Reply with only a JSON object: {{\"query\": {{\"selector\": \"<JMESPath>\", \"collection\": \"<collection, e.g. nodes>\"}}, \"reasoning\": \"<one sentence>\"}}"
        );
    }
    format!(
        "You write one read-only SQL query ({dialect}) that answers the user's question about the database below. \
Use only the tables and columns listed, with their exact names; use the exact values shown in the statistics \
for filters. Add LIMIT when the result could be large.\n\n{schema}\n\n## Statistics\n{stats}\n\n\
Reply with only a JSON object: {{\"query\": \"<SQL>\", \"reasoning\": \"<one or two sentences>\"}}"
    )
}

/// The user message of build_query: the question, earlier turns, and on a retry what failed.
pub fn build_user(state: &AskState) -> String {
    let mut text = String::new();
    if !state.message_history.is_empty() {
        text.push_str("Earlier in this conversation:\n");
        for turn in &state.message_history {
            text.push_str(&format!("- Question: {}\n", turn.question));
            if let Some(query) = &turn.query {
                text.push_str(&format!("  Query: {}\n", query_text(query)));
            }
            if !turn.answer.is_empty() {
                text.push_str(&format!("  Answer: {}\n", turn.answer));
            }
            if let Some(entities) = &turn.shown_entities {
                text.push_str(&format!("  Shown: {entities}\n"));
            }
        }
        text.push_str("The new question may refer to these.\n\n");
    }
    text.push_str(&format!("Question: {}", state.user_query));
    if let Some(last) = state.attempts.last() {
        text.push_str(&format!(
            "\n\nYour previous attempt (attempt {}) failed at {}.",
            last.number, last.outcome
        ));
        if let Some(query) = &last.query {
            text.push_str(&format!("\nPrevious query: {}", query_text(query)));
        }
        text.push_str("\nErrors:");
        for error in &last.errors {
            text.push_str(&format!("\n- {error}"));
        }
        text.push_str("\nFix these issues in your next query.");
    }
    text
}

/// A query as text for prompts: SQL as is, a structured query as JSON.
pub fn query_text(query: &Value) -> String {
    match query {
        Value::String(sql) => sql.clone(),
        other => other.to_string(),
    }
}

/// One validation issue as a line for the retry prompt.
pub fn issue_line(issue: &Value) -> String {
    let text = |key: &str| issue.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let mut line = format!("[{}] {}", text("kind"), text("message"));
    if let Some(location) = issue.get("location").filter(|l| !l.is_null()) {
        line.push_str(&format!(
            " (at {})",
            location.as_str().map_or_else(|| location.to_string(), str::to_string)
        ));
    }
    let suggestion = text("suggestion");
    if !suggestion.is_empty() {
        line.push_str(&format!(" — suggestion: {suggestion}"));
    }
    line
}

/// The system prompt of summarize.
pub const SUMMARIZE_SYSTEM: &str = "You answer the user's question from the query result below, in a few clear sentences \
(with a short list or table when it helps). Only use the data shown. After your answer, write a line \
`---CONTEXT---` and then a JSON object {\"shown_entities\": {\"<column>\": [values you mentioned]}} listing the \
dimension values your answer shows.";

/// The user message of summarize: the question, the query and the rows.
pub fn summarize_user(state: &AskState) -> String {
    let query = state.validated_query.as_ref().map(query_text).unwrap_or_default();
    let (columns, rows, truncated) = match &state.raw_data {
        Some(data) => (
            data.columns.join(" | "),
            data.rows.iter().take(SUMMARY_ROWS).map(Value::to_string).collect::<Vec<_>>(),
            data.truncated,
        ),
        None => (String::new(), Vec::new(), false),
    };
    let total = state.raw_data.as_ref().map_or(0, |d| d.rows.len());
    let more = if total > SUMMARY_ROWS || truncated {
        format!("\n(showing {} of {total}{} rows)", rows.len(), if truncated { "+" } else { "" })
    } else {
        String::new()
    };
    // The summary must not present rows the database calls incomplete as the whole answer.
    let warned = match state.raw_data.as_ref().map(|d| d.warnings.as_slice()) {
        Some(warnings) if !warnings.is_empty() => format!(
            "\nThe database warned (say so in the answer: the rows may be incomplete or converted): {}",
            warnings.join("; ")
        ),
        _ => String::new(),
    };
    format!(
        "Question: {}\nQuery: {query}\n\nColumns: {columns}\nRows:\n{}{more}{warned}",
        state.user_query,
        rows.join("\n")
    )
}

/// The answer text and the shown entities of a summarize answer.
pub fn parse_summary(text: &str) -> (String, Option<Value>) {
    match text.split_once("---CONTEXT---") {
        Some((answer, context)) => {
            let entities = crate::llm::extract_json(context)
                .ok()
                .and_then(|v| v.get("shown_entities").cloned());
            (answer.trim().to_string(), entities)
        }
        None => (text.trim().to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ExecutionOutcome;

    #[test]
    fn summaries_split_the_answer_from_the_context() {
        let (answer, entities) = parse_summary(
            "USA leads with 91 invoices.\n---CONTEXT---\n{\"shown_entities\": {\"BillingCountry\": [\"USA\"]}}",
        );
        assert_eq!(answer, "USA leads with 91 invoices.");
        assert_eq!(entities, Some(serde_json::json!({"BillingCountry": ["USA"]})));
        assert_eq!(parse_summary("Just text."), ("Just text.".to_string(), None));
    }

    #[test]
    fn the_databases_warnings_reach_the_summary() {
        let mut state = AskState { user_query: "deepest level?".into(), ..AskState::default() };
        state.raw_data = Some(ExecutionOutcome {
            columns: vec!["n".into()],
            rows: vec![serde_json::json!([1001])],
            truncated: false,
            warnings: vec!["Warning 1931: The query result may be incomplete".into()],
        });
        let prompt = summarize_user(&state);
        assert!(prompt.ends_with("The database warned (say so in the answer: the rows may be incomplete or converted): Warning 1931: The query result may be incomplete"), "{prompt}");
        if let Some(data) = state.raw_data.as_mut() {
            data.warnings.clear();
        }
        assert!(!summarize_user(&state).contains("warned"));
    }

    #[test]
    fn issues_become_retry_lines_with_their_suggestions() {
        let issue = serde_json::json!({"kind": "unknown_column", "message": "no column `Saless` in Invoice", "location": "line 1, column 8", "suggestion": "Total"});
        assert_eq!(
            issue_line(&issue),
            "[unknown_column] no column `Saless` in Invoice (at line 1, column 8) — suggestion: Total"
        );
    }
}
