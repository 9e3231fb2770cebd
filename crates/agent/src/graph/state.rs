//! The typed state of one question's run through the graph (the seed's `VizQLGraphState`,
//! with separate build and execution budgets) and what the surfaces get back.

use serde::Serialize;
use serde_json::Value;

use crate::llm::Usage;

/// A previous turn of the conversation, so a follow-up ("and in 2024?") can build on it. Tools
/// take it as is (`ask`'s `history`), hence the JSON Schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct HistoryTurn {
    /// The question asked.
    #[schemars(description = "")]
    pub question: String,
    /// The answer given.
    #[serde(default)]
    #[schemars(description = "")]
    pub answer: String,
    /// The query that answered it.
    #[serde(default)]
    #[schemars(description = "")]
    pub query: Option<Value>,
    /// Dimension values the answer showed, by field (`{"BillingCountry": ["USA", …]}`).
    #[serde(default)]
    pub shown_entities: Option<Value>,
}

/// The schema the query is built against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaInfo {
    /// The formatted schema context (full, or focused on the question).
    pub text: String,
    /// The SQL dialect (`sqlite`, `postgresql`).
    pub dialect: String,
    /// Per-field statistics: cardinality and samples (seed 001 `metadata_stats`).
    pub metadata_stats: Value,
    /// Tables the context includes.
    pub tables: Vec<String>,
    /// `full` or `focused`.
    pub strategy: String,
    /// True when it came from the cache.
    pub cached: bool,
}

/// The local validation's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValidationOutcome {
    /// True when the query may run.
    pub valid: bool,
    /// Structured errors (`{kind, message, location, suggestion}`).
    pub errors: Vec<Value>,
    /// Structured warnings.
    pub warnings: Vec<Value>,
    /// The query to run instead (a limit added), if any.
    pub rewritten_query: Option<Value>,
}

/// Rows a query returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionOutcome {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows as arrays.
    pub rows: Vec<Value>,
    /// True when rows were cut by a cap.
    pub truncated: bool,
    /// What the database warned about the result (it may be incomplete: a recursion stopped at
    /// its limit), in its words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why a query could not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionFailure {
    /// `syntax`, `refused`, `timeout`, `auth` or `resource`.
    pub class: String,
    /// What the database said.
    pub message: String,
}

impl ExecutionFailure {
    /// True when a corrected query could succeed (the seed retries only these).
    pub fn retryable(&self) -> bool {
        matches!(self.class.as_str(), "syntax" | "refused")
    }
}

/// Where the pipeline stands after a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not run yet.
    Pending,
    /// Passed.
    Ok,
    /// Failed.
    Failed,
}

/// One attempt at a query and what happened to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    /// 1-based.
    pub number: u32,
    /// The query the model wrote (absent when the model's answer had none).
    pub query: Option<Value>,
    /// The model's reasoning.
    pub reasoning: Option<String>,
    /// `build`, `validation`, `execution`, or `ok`.
    pub outcome: String,
    /// What failed.
    pub errors: Vec<String>,
}

/// The state of one run. Fields are filled as nodes run; `keys` lists which are set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AskState {
    /// Identifies the run in traces and metrics.
    pub execution_id: String,
    /// The question.
    pub user_query: String,
    /// The source asked.
    pub source: String,
    /// Earlier turns.
    pub message_history: Vec<HistoryTurn>,
    /// The schema context.
    pub schema: Option<SchemaInfo>,
    /// The model's latest query.
    pub query_draft: Option<Value>,
    /// The model's latest reasoning.
    pub reasoning: Option<String>,
    /// The query that passed validation (possibly rewritten).
    pub validated_query: Option<Value>,
    /// Errors of the latest validation.
    pub validation_errors: Vec<Value>,
    /// Warnings of the latest validation.
    pub validation_warnings: Vec<Value>,
    /// Outcome of the latest validation.
    pub validation_status: Option<Status>,
    /// Rows of the successful execution.
    pub raw_data: Option<ExecutionOutcome>,
    /// Errors of the latest execution.
    pub execution_errors: Vec<ExecutionFailure>,
    /// Outcome of the latest execution.
    pub execution_status: Option<Status>,
    /// The answer.
    pub final_answer: Option<String>,
    /// Dimension values the answer shows.
    pub shown_entities: Option<Value>,
    /// Queries built so far.
    pub build_attempts: u32,
    /// Validation failures so far (against the build budget).
    pub validation_failures: u32,
    /// Execution failures so far (against the execution budget).
    pub execution_failures: u32,
    /// What the pipeline is doing, for progress displays.
    pub current_thought: String,
    /// Why the schema could not be had.
    pub schema_error: Option<String>,
    /// Why the model could not give a query (LLM unreachable, no JSON twice).
    pub build_error: Option<String>,
    /// The error handler's structured summary.
    pub error_summary: Option<Value>,
    /// Every attempt.
    pub attempts: Vec<Attempt>,
    /// Tokens used by every LLM call.
    pub usage: Usage,
    /// LLM calls made.
    pub llm_calls: u32,
}

impl AskState {
    /// The names of the fields that hold something, for traces (state keys in and out).
    pub fn keys(&self) -> Vec<&'static str> {
        let mut keys = vec!["execution_id", "user_query", "source"];
        let mut add = |set: bool, name: &'static str| {
            if set {
                keys.push(name);
            }
        };
        add(!self.message_history.is_empty(), "message_history");
        add(self.schema.is_some(), "schema");
        add(self.query_draft.is_some(), "query_draft");
        add(self.reasoning.is_some(), "reasoning");
        add(self.validated_query.is_some(), "validated_query");
        add(!self.validation_errors.is_empty(), "validation_errors");
        add(self.validation_status.is_some(), "validation_status");
        add(self.raw_data.is_some(), "raw_data");
        add(!self.execution_errors.is_empty(), "execution_errors");
        add(self.execution_status.is_some(), "execution_status");
        add(self.final_answer.is_some(), "final_answer");
        add(self.shown_entities.is_some(), "shown_entities");
        add(self.schema_error.is_some(), "schema_error");
        add(self.build_error.is_some(), "build_error");
        add(self.error_summary.is_some(), "error_summary");
        keys
    }
}
