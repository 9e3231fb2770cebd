//! The live graph session's state, pure: style layers and computed styles (`style.rs`), colours
//! (`color.rs`), the ordered layers and their operations (`layers.rs`), the selection (`selection.rs`), the view and the layout (`view.rs`).

#![forbid(unsafe_code)]

pub mod color;
pub mod layers;
pub mod selection;
pub mod style;
pub mod view;

/// Why a session change was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
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
