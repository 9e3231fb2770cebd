//! The live graph session's state, pure: style layers and computed styles (`style.rs`), colours
//! (`color.rs`). Selection, view, layout and persistence build on these.

pub mod color;
pub mod style;

/// Why a session change was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// A style parameter is wrong.
    #[error("invalid style: {0}")]
    InvalidStyle(String),
}
