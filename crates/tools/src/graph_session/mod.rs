//! Live graph sessions (issue: style layers, selection, view, layout, algorithms): the state
//! (`state.rs`) saved part by part to SQLite (`store.rs`), the session with its change log and
//! events (`session.rs`), its data with algorithm results written in (`data.rs`), algorithms
//! (`algorithms.rs`), layouts (`layout.rs`), computed styles and the web view's scene
//! (`scene.rs`), the tools (`tools.rs`, `params.rs`), what a missing property has to do with
//! algorithms (`hints.rs`), and the state brought in line with new data on open and reload
//! (`reconcile.rs`).

pub mod algorithms;
pub mod data;
pub mod hints;
pub mod layout;
pub mod params;
pub mod reconcile;
pub mod scene;
pub mod session;
pub mod sessions;
pub mod state;
pub mod store;
pub mod tools;

pub use params::*;
pub use session::{GraphSession, SessionEvent};
pub use sessions::GraphSessions;
pub use tools::*;
