//! The controlled graph (seed 001): start → get_schema → build_query → validate_query →
//! execute_query → summarize, with error_handler; the LLM writes the query and the answer, and
//! everything else — routing, validation, retries, budgets — is fixed code.
//!
//! Data access goes through [`DataAccess`] (the tools layer implements it over a source), so the
//! graph itself knows no database. Every node reports an [`Event`] on entry and exit (progress for
//! surfaces, a trace for the result) and runs in a `tracing` span carrying the execution id.

mod nodes;
pub mod prompts;
mod state;

use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use crate::llm::LlmBackend;
pub use state::{
    AskState, Attempt, ExecutionFailure, ExecutionOutcome, HistoryTurn, SchemaInfo, Status,
    ValidationOutcome,
};

/// What the graph needs from a data source.
pub trait DataAccess: Send + Sync {
    /// The schema context for a question (cached by the implementation; `cached` says so).
    fn schema(&self, source: &str, question: &str) -> Result<SchemaInfo, String>;
    /// Validates a query written to answer `question` (before anything runs).
    fn validate(
        &self,
        source: &str,
        question: &str,
        query: &Value,
    ) -> Result<ValidationOutcome, String>;
    /// Runs a validated query.
    fn execute(&self, source: &str, query: &Value) -> Result<ExecutionOutcome, ExecutionFailure>;
}

/// The graph's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// Initialises the run.
    Start,
    /// Fetches the (cached) schema context.
    GetSchema,
    /// The LLM writes a query.
    BuildQuery,
    /// Local validation, no LLM.
    ValidateQuery,
    /// Runs the query.
    ExecuteQuery,
    /// The LLM writes the answer.
    Summarize,
    /// Explains what failed, after the budgets are spent.
    ErrorHandler,
}

impl Node {
    /// The node's name, as traces and metrics show it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::GetSchema => "get_schema",
            Self::BuildQuery => "build_query",
            Self::ValidateQuery => "validate_query",
            Self::ExecuteQuery => "execute_query",
            Self::Summarize => "summarize",
            Self::ErrorHandler => "error_handler",
        }
    }
}

/// Entering or leaving a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The node starts.
    Enter,
    /// The node is done.
    Exit,
}

/// One step of the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The run.
    pub execution_id: String,
    /// The node.
    pub node: Node,
    /// Entry or exit.
    pub phase: Phase,
    /// What the pipeline is doing.
    pub current_thought: String,
    /// Milliseconds the node took (on exit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// State keys set when the node started.
    pub keys_in: Vec<&'static str>,
    /// State keys set when it ended (on exit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys_out: Vec<&'static str>,
    /// What failed in this node, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the graph goes next (on exit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Node>,
}

/// Attempt budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Queries that may fail validation before giving up (3).
    pub build: u32,
    /// Queries that may fail execution before giving up (3).
    pub execution: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Self { build: 3, execution: 3 }
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskOutcome {
    /// True when the question was answered from data.
    pub success: bool,
    /// The answer, or the error handler's explanation.
    pub answer: String,
    /// The query that ran, if any.
    pub query: Option<Value>,
    /// Its rows.
    pub result: Option<ExecutionOutcome>,
    /// Dimension values the answer shows (for follow-ups).
    pub shown_entities: Option<Value>,
    /// Every node's entry and exit.
    pub trace: Vec<Event>,
    /// The final state.
    pub state: AskState,
}

/// A question for the graph.
#[derive(Debug, Clone, Default)]
pub struct AskInput {
    /// The source to ask.
    pub source: String,
    /// The question.
    pub question: String,
    /// Earlier turns.
    pub history: Vec<HistoryTurn>,
}

/// The graph, wired to an LLM and a data source.
pub struct Graph<'a> {
    /// The model.
    pub llm: &'a dyn LlmBackend,
    /// The data.
    pub data: &'a dyn DataAccess,
    /// Attempt budgets.
    pub budgets: Budgets,
}

impl Graph<'_> {
    /// Runs one question to its end, reporting every event to `observe` as it happens.
    pub fn run(&self, input: AskInput, observe: &mut dyn FnMut(&Event)) -> AskOutcome {
        let mut state = AskState {
            execution_id: format!("{:016x}", fastrand::u64(..)),
            user_query: input.question,
            source: input.source,
            message_history: input.history,
            ..AskState::default()
        };
        let mut trace = Vec::new();
        let mut node = Some(Node::Start);
        // Every path ends within the budgets; this only guards against a routing bug.
        let mut steps = 0;
        while let Some(current) = node {
            steps += 1;
            if steps > 4 + 3 * (self.budgets.build + self.budgets.execution) as usize {
                state.build_error = Some("the graph did not finish within its step limit".into());
                node = Some(Node::ErrorHandler);
                if current == Node::ErrorHandler {
                    break;
                }
                continue;
            }
            let span = tracing::info_span!("node", execution_id = %state.execution_id, node = current.name());
            let _entered = span.enter();
            let keys_in = state.keys();
            state.current_thought = nodes::thought(current).to_string();
            let enter = Event {
                execution_id: state.execution_id.clone(),
                node: current,
                phase: Phase::Enter,
                current_thought: state.current_thought.clone(),
                duration_ms: None,
                keys_in: keys_in.clone(),
                keys_out: Vec::new(),
                error: None,
                next: None,
            };
            observe(&enter);
            trace.push(enter);
            let started = Instant::now();
            let error = nodes::run(self, current, &mut state);
            let next = nodes::route(self, current, &state);
            let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            let keys_out = state.keys();
            match &error {
                Some(e) => {
                    tracing::warn!(duration_ms, keys_in = ?keys_in, keys_out = ?keys_out, next = ?next.map(Node::name), error = %e, "node failed")
                }
                None => {
                    tracing::info!(duration_ms, keys_in = ?keys_in, keys_out = ?keys_out, next = ?next.map(Node::name), "node done")
                }
            }
            let exit = Event {
                execution_id: state.execution_id.clone(),
                node: current,
                phase: Phase::Exit,
                current_thought: state.current_thought.clone(),
                duration_ms: Some(duration_ms),
                keys_in,
                keys_out,
                error,
                next,
            };
            observe(&exit);
            trace.push(exit);
            node = next;
        }
        let success = state.final_answer.is_some()
            && state.raw_data.is_some()
            && state.error_summary.is_none();
        AskOutcome {
            success,
            answer: state.final_answer.clone().unwrap_or_default(),
            query: state.raw_data.as_ref().and(state.validated_query.clone()),
            result: state.raw_data.clone(),
            shown_entities: state.shown_entities.clone(),
            trace,
            state,
        }
    }
}
