//! What a graph-session tool answers: a message, data, and the nodes and edges it matched or
//! changed. The host turns it into its envelope.

use serde_json::Value;

use crate::error::GraphSessionError;

/// Most ids listed as affected; `data` carries the full counts.
pub const MAX_AFFECTED: usize = 1_000;

/// A tool's answer, or why it failed.
pub type Outcome = Result<Answer, GraphSessionError>;

/// A graph-session tool's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// False when the tool could not do what was asked (nothing matched): `message` says why.
    pub success: bool,
    /// One or two sentences for the reader.
    pub message: String,
    /// The structured answer.
    pub data: Value,
    /// Ids of the nodes matched or changed (at most [`MAX_AFFECTED`]).
    pub affected_nodes: Option<Vec<String>>,
    /// Ids of the edges matched or changed (at most [`MAX_AFFECTED`]).
    pub affected_edges: Option<Vec<String>>,
}

impl Answer {
    /// A successful answer.
    pub fn ok(message: impl Into<String>, data: Value) -> Self {
        Self { success: true, message: message.into(), data, ..Self::default() }
    }

    /// An answer that did not do what was asked, with the reason in `message`.
    pub fn failed(message: impl Into<String>, data: Value) -> Self {
        Self { success: false, message: message.into(), data, ..Self::default() }
    }

    /// The same answer listing the affected nodes and edges (cut at [`MAX_AFFECTED`]).
    pub fn affecting(mut self, nodes: Option<Vec<String>>, edges: Option<Vec<String>>) -> Self {
        let cut = |mut ids: Vec<String>| {
            ids.truncate(MAX_AFFECTED);
            ids
        };
        self.affected_nodes = nodes.map(cut);
        self.affected_edges = edges.map(cut);
        self
    }
}
