//! Sources: reading graph files, record sets and document sets into profiled collections, and
//! watching their files for changes. Everything format-specific lives here; the core never sees
//! a file.

pub mod aimdb;
mod block_claims;
pub mod demo;
mod documents;
pub mod error;
pub mod file;
mod folder;
mod graph;
mod graph_check;
mod graph_fast;
#[cfg(test)]
mod graph_fast_differential;
mod load;
mod ndjson;
mod nesting;
pub mod profile_store;
mod read;
mod records;
pub mod scratch;
mod skipped_lines;
pub mod source;
pub mod spec;
pub mod sql;
pub mod ssh;
pub mod stream;
pub mod stream_schema;
pub mod tabular;
pub mod watch;
mod worker_budget;

pub use error::{LoadWarning, SourceError};
pub use file::FileError;
pub use graph::{DirectionBasis, GraphDirection};
pub use load::{load, load_str, load_with};
pub use profile_store::ProfileStore;
pub use read::ReadMode;
pub use source::{NoProgress, Progress, Source};
pub use spec::{DemoSet, Format, Location, SourceLimits, SourceSpec};
pub use watch::FileWatcher;
