//! Profiling: exact per-property statistics of a collection, computed in one pass over its items.
//!
//! [`ProfileBuilder`] accumulates (push model, mergeable across threads); [`CollectionProfile`] is
//! the finished, immutable result every tool reads from. Everything is exact — counts, distinct
//! values, medians, histograms — because every value is seen; nothing is sampled. A streamed
//! profile has a memory budget ([`ProfileBuilder::fit_budget`]): a property whose exact counters
//! outgrow it switches to mergeable sketches (`sketch/`), and its profile says which figures are
//! then estimates and how close ([`Approximation`]).

mod accumulate;
mod budget;
mod columns;
pub mod exact;
mod finalize;
pub mod formats;
mod histogram;
mod model;
pub mod numeric;
mod path_limit;
mod repeats;
mod schema_counters;
#[cfg(test)]
mod schema_differential;
mod sketch;
mod skewed_bins;
mod skip;
pub mod spill;
#[cfg(test)]
mod spill_differential;
mod spilled;
mod spilled_ascending;
pub mod split;
mod stored;
mod string_counts;
mod tape;
#[cfg(test)]
mod tape_differential;

pub use accumulate::{ProfileBuilder, ProfileLimits, long_key_parts, value_key};
pub use budget::Fitted;
pub use columns::ColumnSink;
pub use formats::StringFormat;
pub use model::*;
pub use path_limit::{PathLimit, Unprofiled};
pub use schema_counters::SchemaBuilder;
pub use spill::{MemoryScratch, ScratchFile, ScratchSpace, Spill, SpillError};
pub use stored::StoredProfile;

/// Most frequent values kept per property.
pub const TOP_VALUES: usize = 100;
