//! Why a graph-session call failed.

use schemascope_core::CoreError;
use schemascope_sources::SourceError;
use thiserror::Error;

/// Why a session change to the layers was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LayerError {
    /// A style parameter is wrong.
    #[error("invalid style: {0}")]
    InvalidStyle(String),
    /// No layer of that name.
    #[error("{0}")]
    UnknownLayer(String),
    /// The session already holds its most layers and none may give way to the new one.
    #[error("{0}")]
    TooManyLayers(String),
}

/// Why a graph-session tool or change failed. Messages name the input at fault.
#[derive(Debug, Error)]
pub enum GraphSessionError {
    /// A parameter is wrong (or names something the graph does not have).
    #[error("{0}")]
    InvalidParams(String),
    /// The session file could not be read or written (a full disk, no permission); the change
    /// was not applied.
    #[error("{0}")]
    Storage(String),
    /// No graph source of that name, or several and none named.
    #[error("{0}")]
    UnknownSource(String),
    /// The source is served but failed to load (it is retried).
    #[error("{0}")]
    SourceUnavailable(String),
    /// The core refused (a bad selector) or the work was cancelled.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The source could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
}

impl From<LayerError> for GraphSessionError {
    fn from(error: LayerError) -> Self {
        Self::InvalidParams(error.to_string())
    }
}
