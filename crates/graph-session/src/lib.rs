//! The live graph session: what a person in the web view and an LLM share over one served graph.
//!
//! - The state, pure: style layers and computed styles (`style.rs`, `color.rs`, `layers.rs`),
//!   the selection (`selection.rs`), the view and layout (`view.rs`), all of it with the runs
//!   and results of algorithms (`state.rs`).
//! - The session over a graph: every change applied to a copy, saved part by part to SQLite
//!   (`store.rs`), then made current and announced (`session.rs`); its data with algorithm
//!   results written in (`data.rs`, `augment.rs`); algorithms and layouts (`algorithms.rs`,
//!   `layout.rs`); the web view's scene (`scene.rs`); the state brought in line with reloaded data
//!   (`reconcile.rs`); what a missing property has to do with algorithms (`hints.rs`); what
//!   is read back from the session file checked as the tools check what they set
//!   (`restore.rs`).
//! - `GraphSessions` (`sessions.rs`): one session per graph source, reached through the
//!   [`GraphSources`] a host gives it; the tools (`tools.rs`, `params.rs`) answer with an
//!   [`Answer`] or a [`GraphSessionError`], which the host turns into its envelope.
//!
//! Words: a *graph* is a served graph source; a *session* is the state shared over one graph;
//! a *layer* is one named style rule of a session.

#![forbid(unsafe_code)]

pub mod algorithms;
mod answer;
mod augment;
pub mod caller;
pub mod color;
pub mod data;
mod error;
pub mod hints;
pub mod labels;
pub mod layers;
pub mod layout;
pub mod legend;
pub mod mapping;
pub mod palette;
pub mod params;
pub mod reconcile;
pub mod restore;
pub mod scene;
pub mod selection;
pub mod session;
pub mod sessions;
pub mod state;
pub mod store;
pub mod style;
pub mod tools;
pub mod view;

pub use answer::{Answer, MAX_AFFECTED, Outcome};
pub use caller::Caller;
pub use error::{GraphSessionError, LayerError};
pub use params::*;
pub use session::{GraphSession, SessionEvent};
pub use sessions::{GraphSessions, GraphSources};
pub use tools::*;
