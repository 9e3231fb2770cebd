//! What each node does to the state, and the routing functions that pick the next node.

use serde_json::{Value, json};

use super::prompts::{
    SUMMARIZE_SYSTEM, build_system, build_user, issue_line, parse_summary, query_text,
    summarize_user,
};
use super::state::{Attempt, Status};
use super::{AskState, Graph, Node};
use crate::llm::{ChatMessage, ChatRequest, LlmError, complete_json};

/// Tokens the model may use for a query.
const BUILD_MAX_TOKENS: u32 = 1_500;
/// Tokens the model may use for an answer.
const SUMMARY_MAX_TOKENS: u32 = 1_000;

/// What each node tells the person waiting.
pub(super) fn thought(node: Node) -> &'static str {
    match node {
        Node::Start => "Starting query analysis...",
        Node::GetSchema => "Fetching the schema...",
        Node::BuildQuery => "Building the query...",
        Node::ValidateQuery => "Validating the query...",
        Node::ExecuteQuery => "Executing the query...",
        Node::Summarize => "Generating the response...",
        Node::ErrorHandler => "Explaining what went wrong...",
    }
}

/// Runs `node` on `state`; returns what failed, if anything.
pub(super) fn run(graph: &Graph<'_>, node: Node, state: &mut AskState) -> Option<String> {
    match node {
        Node::Start => None,
        Node::GetSchema => match graph.data.schema(&state.source, &state.user_query) {
            Ok(schema) => {
                state.schema = Some(schema);
                None
            }
            Err(e) => {
                state.schema_error = Some(e.clone());
                Some(e)
            }
        },
        Node::BuildQuery => build_query(graph, state),
        Node::ValidateQuery => validate_query(graph, state),
        Node::ExecuteQuery => execute_query(graph, state),
        Node::Summarize => summarize(graph, state),
        Node::ErrorHandler => {
            error_handler(state);
            None
        }
    }
}

fn llm_failure(error: &LlmError) -> String {
    format!("the language model failed: {error}")
}

fn build_query(graph: &Graph<'_>, state: &mut AskState) -> Option<String> {
    state.build_attempts += 1;
    state.query_draft = None;
    state.reasoning = None;
    let request = ChatRequest {
        system: build_system(state),
        messages: vec![ChatMessage::user(build_user(state))],
        max_tokens: BUILD_MAX_TOKENS,
        temperature: 0.0,
        json: true,
    };
    state.llm_calls += 1;
    match complete_json(graph.llm, &request) {
        Ok(answer) => {
            state.usage += answer.usage;
            if answer.reasked {
                state.llm_calls += 1;
            }
            state.reasoning =
                answer.value.get("reasoning").and_then(Value::as_str).map(str::to_string);
            match answer
                .value
                .get("query")
                .filter(|q| matches!(q, Value::String(s) if !s.trim().is_empty()) || q.is_object())
            {
                Some(query) => {
                    state.query_draft = Some(query.clone());
                    None
                }
                None => {
                    // A JSON answer without a query is a failed attempt the model can fix.
                    let error = "the answer had no `query` (expected {\"query\": \"<SQL>\", \"reasoning\": \"…\"})".to_string();
                    state.validation_failures += 1;
                    state.validation_status = Some(Status::Failed);
                    state.attempts.push(Attempt {
                        number: state.build_attempts,
                        query: None,
                        reasoning: state.reasoning.clone(),
                        outcome: "build".into(),
                        errors: vec![error.clone()],
                    });
                    Some(error)
                }
            }
        }
        Err(e) => {
            let error = llm_failure(&e);
            state.build_error = Some(error.clone());
            state.attempts.push(Attempt {
                number: state.build_attempts,
                query: None,
                reasoning: None,
                outcome: "build".into(),
                errors: vec![error.clone()],
            });
            Some(error)
        }
    }
}

fn validate_query(graph: &Graph<'_>, state: &mut AskState) -> Option<String> {
    let query = state.query_draft.clone()?;
    match graph.data.validate(&state.source, &state.user_query, &query) {
        Ok(outcome) => {
            state.validation_errors = outcome.errors.clone();
            state.validation_warnings = outcome.warnings.clone();
            if outcome.valid {
                state.validation_status = Some(Status::Ok);
                state.validated_query = Some(outcome.rewritten_query.unwrap_or(query));
                None
            } else {
                state.validation_status = Some(Status::Failed);
                state.validation_failures += 1;
                let errors: Vec<String> = outcome.errors.iter().map(issue_line).collect();
                state.attempts.push(Attempt {
                    number: state.build_attempts,
                    query: Some(query),
                    reasoning: state.reasoning.clone(),
                    outcome: "validation".into(),
                    errors: errors.clone(),
                });
                Some(errors.join("; "))
            }
        }
        Err(e) => {
            state.validation_status = Some(Status::Failed);
            state.validation_failures += 1;
            state.attempts.push(Attempt {
                number: state.build_attempts,
                query: Some(query),
                reasoning: state.reasoning.clone(),
                outcome: "validation".into(),
                errors: vec![e.clone()],
            });
            Some(e)
        }
    }
}

fn execute_query(graph: &Graph<'_>, state: &mut AskState) -> Option<String> {
    let query = state.validated_query.clone()?;
    match graph.data.execute(&state.source, &query) {
        Ok(data) => {
            state.execution_status = Some(Status::Ok);
            state.raw_data = Some(data);
            state.attempts.push(Attempt {
                number: state.build_attempts,
                query: Some(query),
                reasoning: state.reasoning.clone(),
                outcome: "ok".into(),
                errors: Vec::new(),
            });
            None
        }
        Err(failure) => {
            state.execution_status = Some(Status::Failed);
            state.execution_failures += 1;
            let error = format!("[{}] {}", failure.class, failure.message);
            state.attempts.push(Attempt {
                number: state.build_attempts,
                query: Some(query),
                reasoning: state.reasoning.clone(),
                outcome: "execution".into(),
                errors: vec![error.clone()],
            });
            state.execution_errors.push(failure);
            Some(error)
        }
    }
}

fn summarize(graph: &Graph<'_>, state: &mut AskState) -> Option<String> {
    let request = ChatRequest {
        system: SUMMARIZE_SYSTEM.into(),
        messages: vec![ChatMessage::user(summarize_user(state))],
        max_tokens: SUMMARY_MAX_TOKENS,
        temperature: 0.0,
        json: false,
    };
    state.llm_calls += 1;
    match graph.llm.complete(&request) {
        Ok(answer) => {
            state.usage += answer.usage;
            let (text, entities) = parse_summary(&answer.text);
            state.final_answer = Some(text);
            state.shown_entities = entities;
            None
        }
        Err(e) => {
            // The rows are the answer; say so plainly rather than lose them.
            let rows = state.raw_data.as_ref().map_or(0, |d| d.rows.len());
            state.final_answer = Some(format!(
                "The query returned {rows} row(s) (shown below); the language model could not write a summary: {e}"
            ));
            Some(llm_failure(&e))
        }
    }
}

fn error_handler(state: &mut AskState) {
    let mut text = match (&state.schema_error, &state.build_error) {
        (Some(e), _) => format!("I could not read the schema of `{}`: {e}", state.source),
        // The model could not be reached on the first try: there are no attempts to list.
        (None, Some(e)) if state.attempts.len() <= 1 => {
            format!("I could not build a query for your question: {e}")
        }
        _ => {
            let mut text = format!(
                "I tried {} time(s) to build a query for your question but encountered errors:",
                state.attempts.len()
            );
            for attempt in &state.attempts {
                text.push_str(&format!(
                    "\n\nAttempt {} ({} failed): {}",
                    attempt.number,
                    attempt.outcome,
                    attempt.errors.join("; ")
                ));
                if let Some(query) = &attempt.query {
                    text.push_str(&format!("\n  query: {}", query_text(query)));
                }
            }
            text
        }
    };
    if let Some(schema) = &state.schema {
        let noun = if schema.dialect == "jmespath" { "collections" } else { "tables" };
        text.push_str(&format!("\n\nThe most relevant {noun} are: {}.", schema.tables.join(", ")));
    }
    let last_class = state.execution_errors.last().map(|f| f.class.clone());
    let advice = match last_class.as_deref() {
        Some("timeout") => {
            "The query took too long: ask for a narrower result (a shorter period, fewer groups)."
        }
        Some("auth") => {
            "The database refused the credentials: check the source's user and password."
        }
        Some("resource") => "The database is unavailable right now: try again later.",
        _ => "Could you rephrase your question or say which fields you mean?",
    };
    text.push_str(&format!("\n\n{advice}"));
    state.error_summary = Some(json!({
        "attempts": state.attempts,
        "schemaError": state.schema_error,
        "buildError": state.build_error,
        "lastExecutionError": state.execution_errors.last(),
        "tables": state.schema.as_ref().map(|s| s.tables.clone()),
    }));
    state.final_answer = Some(text);
}

/// The routing functions: where to go after `node` (`None` ends the run).
pub(super) fn route(graph: &Graph<'_>, node: Node, state: &AskState) -> Option<Node> {
    match node {
        Node::Start => Some(Node::GetSchema),
        Node::GetSchema if state.schema_error.is_some() => Some(Node::ErrorHandler),
        Node::GetSchema => Some(Node::BuildQuery),
        Node::BuildQuery if state.build_error.is_some() => Some(Node::ErrorHandler),
        Node::BuildQuery if state.query_draft.is_none() => retry_build(graph, state),
        Node::BuildQuery => Some(Node::ValidateQuery),
        Node::ValidateQuery if state.validation_status == Some(Status::Ok) => {
            Some(Node::ExecuteQuery)
        }
        Node::ValidateQuery => retry_build(graph, state),
        Node::ExecuteQuery if state.execution_status == Some(Status::Ok) => Some(Node::Summarize),
        Node::ExecuteQuery => {
            let retryable = state.execution_errors.last().is_some_and(|f| f.retryable());
            if retryable && state.execution_failures < graph.budgets.execution {
                Some(Node::BuildQuery)
            } else {
                Some(Node::ErrorHandler)
            }
        }
        Node::Summarize | Node::ErrorHandler => None,
    }
}

fn retry_build(graph: &Graph<'_>, state: &AskState) -> Option<Node> {
    if state.validation_failures < graph.budgets.build {
        Some(Node::BuildQuery)
    } else {
        Some(Node::ErrorHandler)
    }
}
