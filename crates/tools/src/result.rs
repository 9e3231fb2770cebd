//! The envelope every tool returns, `{success, message, data}`, and the errors tools report.

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

/// A tool's answer: the same shape on every surface (MCP text and structured content, CLI `--json`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// False when the tool could not do what was asked (the message says why).
    pub success: bool,
    /// One or two sentences for the reader.
    pub message: String,
    /// The structured answer (or error details: kind and suggestions).
    pub data: Value,
    /// Members a tool adds beside `data` at the top level of its answer, each small by
    /// construction (graph tools: the ids they matched or changed, `affectedNodes` and
    /// `affectedEdges`, see `graph_session::tools`).
    #[serde(flatten)]
    pub beside: serde_json::Map<String, Value>,
    /// What the byte cap cut from this result, when it cut anything (see [`ToolResult::capped`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<crate::cap::Truncation>,
}

impl ToolResult {
    /// The envelope as a JSON value, moving `data` rather than copying it (answers can be large
    /// and the MCP server converts every one).
    pub fn into_value(self) -> Value {
        let mut envelope = serde_json::Map::with_capacity(6);
        envelope.insert("success".into(), Value::Bool(self.success));
        envelope.insert("message".into(), Value::String(self.message));
        envelope.insert("data".into(), self.data);
        envelope.extend(self.beside);
        if let Some(truncated) = self.truncated {
            envelope
                .insert("truncated".into(), serde_json::to_value(truncated).unwrap_or(Value::Null));
        }
        Value::Object(envelope)
    }

    /// This result within the byte cap `max_bytes` ([`Self::capped`]) with its JSON text.
    pub fn written(self, max_bytes: usize) -> Written {
        self.written_as(max_bytes, crate::cap::SeeTheRest::NarrowTheRequest)
    }

    /// [`Self::written`], a cut answer saying how to see the rest with `see_the_rest`.
    pub fn written_as(self, max_bytes: usize, see_the_rest: crate::cap::SeeTheRest) -> Written {
        let (result, text) = self.capped_with_text(max_bytes, see_the_rest);
        Written::new(result, text)
    }

    /// A successful answer.
    pub fn ok(message: impl Into<String>, data: Value) -> Self {
        Self { success: true, message: message.into(), data, ..Self::default() }
    }

    /// An answer that did not do what was asked, with the reason in `message`.
    pub fn failed(message: impl Into<String>, data: Value) -> Self {
        Self { success: false, message: message.into(), data, ..Self::default() }
    }
}

/// A tool's answer with its JSON text, written once ([`crate::tool_table::call_tool_written`]):
/// the cap measured this text, MCP sends it as the text content and as the structured content,
/// and list_sources keeps it between calls while nothing it shows has changed.
#[derive(Debug, Clone)]
pub struct Written {
    /// False when the tool could not do what was asked (the envelope's `success`).
    pub success: bool,
    /// The envelope as JSON text: `serde_json::to_string(&envelope)`, byte for byte.
    pub text: std::sync::Arc<str>,
    envelope: std::sync::Arc<Value>,
}

impl Written {
    /// `result` with its JSON text `text` (which must be `result`'s serialisation).
    pub(crate) fn new(result: ToolResult, text: String) -> Self {
        Self {
            success: result.success,
            text: text.into(),
            envelope: std::sync::Arc::new(result.into_value()),
        }
    }

    /// The envelope as a JSON value (moved out when this answer is not shared, else copied).
    pub fn into_envelope(self) -> Value {
        std::sync::Arc::try_unwrap(self.envelope).unwrap_or_else(|shared| (*shared).clone())
    }
}

/// Why a tool call failed. Messages name the input at fault and list what exists.
#[derive(Debug, Error)]
pub enum ToolError {
    /// No source of that name (or several sources and none named).
    #[error("{0}")]
    UnknownSource(String),
    /// No collection of that name.
    #[error("{0}")]
    UnknownCollection(String),
    /// No record of that name.
    #[error("{0}")]
    UnknownRecord(String),
    /// A record set holds several records, each with its own schema, and none was named.
    #[error("{message}")]
    RecordRequired {
        /// What to do, with the records listed.
        message: String,
        /// The record keys there are (at most 50, `MAX_LISTED`).
        records: Vec<String>,
    },
    /// A parameter is wrong.
    #[error("{0}")]
    InvalidParams(String),
    /// The record exists but has no value to work from.
    #[error("{0}")]
    NoValues(String),
    /// The core refused (bad selector, bad path, …).
    #[error(transparent)]
    Core(#[from] schemascope_core::CoreError),
    /// Saving state failed (the graph session file: a full disk, no permission); the change was
    /// not applied.
    #[error("{0}")]
    Storage(String),
    /// The source is being served but failed to load (it is retried; the message says when).
    #[error("{0}")]
    SourceUnavailable(String),
    /// A database table's profile, which the call needs whole, is still being computed in the
    /// background past the server's patience; the message says how far it is.
    #[error("{0}")]
    ProfilePending(String),
    /// A database table's profile, which the call needs whole, failed for a cause that would
    /// only repeat (the table cannot be read here, a statement timed out); the message says why.
    #[error("{0}")]
    ProfileFailed(String),
    /// A source failed to load.
    #[error(transparent)]
    Source(#[from] schemascope_sources::SourceError),
    /// The operator has not enabled writes for the source.
    #[error("{0}")]
    WritesNotAllowed(String),
    /// The record is not writable (the instance says so).
    #[error("{0}")]
    NotWritable(String),
    /// A write did not happen, or its outcome is unknown.
    #[error(transparent)]
    Write(#[from] schemascope_sources::aimdb::WriteError),
}

impl From<schemascope_sources::aimdb::AimxError> for ToolError {
    fn from(error: schemascope_sources::aimdb::AimxError) -> Self {
        Self::Source(error.into())
    }
}

impl From<schemascope_core::ceilings::PastCeiling> for ToolError {
    fn from(error: schemascope_core::ceilings::PastCeiling) -> Self {
        Self::Core(error.into())
    }
}

impl ToolError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownSource(_) => "unknown_source",
            Self::UnknownCollection(_) => "unknown_collection",
            Self::UnknownRecord(_) => "unknown_record",
            Self::RecordRequired { .. } => "record_required",
            Self::InvalidParams(_) => "invalid_params",
            Self::NoValues(_) => "no_values",
            Self::SourceUnavailable(_) => "source_unavailable",
            Self::ProfilePending(_) => "profile_pending",
            Self::ProfileFailed(_) => "profile_failed",
            Self::Storage(_) => "storage_error",
            Self::Core(schemascope_core::CoreError::InvalidSelector { .. }) => "invalid_selector",
            Self::Core(schemascope_core::CoreError::InvalidPath { .. }) => "invalid_path",
            Self::Core(schemascope_core::CoreError::SelectorTooCostly { .. }) => {
                "selector_too_costly"
            }
            Self::Core(schemascope_core::CoreError::Cancelled { .. }) => "cancelled",
            Self::Core(schemascope_core::CoreError::PastCeiling(_)) => "past_ceiling",
            Self::Core(_) => "core_error",
            Self::Source(schemascope_sources::SourceError::Aimdb(error)) => error.kind(),
            Self::Source(schemascope_sources::SourceError::Cancelled(_)) => "cancelled",
            Self::Source(_) => "source_error",
            Self::WritesNotAllowed(_) => "writes_not_allowed",
            Self::NotWritable(_) => "not_writable",
            Self::Write(error) => error.kind(),
        }
    }
}

impl From<ToolError> for ToolResult {
    fn from(error: ToolError) -> Self {
        let mut data = serde_json::json!({ "error": error.kind() });
        if let ToolError::Core(schemascope_core::CoreError::InvalidSelector {
            offset,
            line,
            column,
            ..
        }) = &error
        {
            data["offset"] = (*offset).into();
            data["line"] = (*line).into();
            data["column"] = (*column).into();
        }
        if let ToolError::Core(schemascope_core::CoreError::PastCeiling(past)) = &error {
            data["parameter"] = past.name.into();
            data["ceiling"] = past.ceiling.into();
        }
        if let ToolError::RecordRequired { records, .. } = &error {
            data["records"] = serde_json::json!(records);
        }
        if let ToolError::Source(source) = &error {
            // Whether a corrected query could succeed (syntax) or not (timeout, auth, resource).
            data["class"] = serde_json::json!(source.class());
        }
        Self::failed(error.to_string(), data)
    }
}

/// Turns a tool's outcome into the envelope.
pub fn envelope(outcome: Result<ToolResult, ToolError>) -> ToolResult {
    outcome.unwrap_or_else(ToolResult::from)
}

#[cfg(test)]
mod envelope_tests {
    use super::*;

    #[test]
    fn into_value_is_the_serialized_envelope() {
        let mut result = ToolResult::ok("done", serde_json::json!({"rows": [[1, "a"]]}));
        result.beside.insert("affectedNodes".into(), serde_json::json!(["n1"]));
        result.truncated =
            Some(crate::cap::Truncation { max_bytes: 10, original_bytes: 20, cuts: Vec::new() });
        let serialized = serde_json::to_value(&result).expect("serializes");
        assert_eq!(result.into_value(), serialized);
        let failed = ToolResult::failed("no", serde_json::json!({"error": "x"}));
        assert_eq!(serde_json::to_value(&failed).expect("serializes"), failed.into_value());
    }
}
