//! Who calls a tool: an LLM over MCP, or a person (or their app) through the web view and
//! `POST /v1/tools/{name}`. Surfaces state it; tools record it (a style layer's source).

use crate::style::LayerSource;

/// Who calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// An LLM, through MCP.
    Ai,
    /// A person or their app: the web view, the HTTP tool API.
    User,
}

impl Caller {
    /// The source recorded on a style layer this caller adds.
    pub fn layer_source(self) -> LayerSource {
        match self {
            Self::Ai => LayerSource::Ai,
            Self::User => LayerSource::User,
        }
    }
}
