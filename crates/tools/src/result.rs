//! The envelope every tool returns, `{success, message, data}`, and the errors tools report.

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

/// A tool's answer: the same shape on every surface (MCP text and structured content, CLI `--json`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolResult {
    /// False when the tool could not do what was asked (the message says why).
    pub success: bool,
    /// One or two sentences for the reader.
    pub message: String,
    /// The structured answer (or error details: kind and suggestions).
    pub data: Value,
}

impl ToolResult {
    /// A successful answer.
    pub fn ok(message: impl Into<String>, data: Value) -> Self {
        Self { success: true, message: message.into(), data }
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
    /// A parameter is wrong.
    #[error("{0}")]
    InvalidParams(String),
    /// The core refused (bad selector, bad path, …).
    #[error(transparent)]
    Core(#[from] schemascope_core::CoreError),
    /// A source failed to load.
    #[error(transparent)]
    Source(#[from] schemascope_sources::SourceError),
}

impl ToolError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownSource(_) => "unknown_source",
            Self::UnknownCollection(_) => "unknown_collection",
            Self::UnknownRecord(_) => "unknown_record",
            Self::InvalidParams(_) => "invalid_params",
            Self::Core(schemascope_core::CoreError::InvalidSelector { .. }) => "invalid_selector",
            Self::Core(schemascope_core::CoreError::InvalidPath { .. }) => "invalid_path",
            Self::Core(_) => "core_error",
            Self::Source(_) => "source_error",
        }
    }
}

impl From<ToolError> for ToolResult {
    fn from(error: ToolError) -> Self {
        let mut data = serde_json::json!({ "error": error.kind() });
        if let ToolError::Core(schemascope_core::CoreError::InvalidSelector { offset, line, column, .. }) = &error {
            data["offset"] = (*offset).into();
            data["line"] = (*line).into();
            data["column"] = (*column).into();
        }
        if let ToolError::Source(source) = &error {
            // Whether a corrected query could succeed (syntax) or not (timeout, auth, resource).
            data["class"] = serde_json::json!(source.class());
        }
        Self { success: false, message: error.to_string(), data }
    }
}

/// Turns a tool's outcome into the envelope.
pub fn envelope(outcome: Result<ToolResult, ToolError>) -> ToolResult {
    outcome.unwrap_or_else(ToolResult::from)
}
