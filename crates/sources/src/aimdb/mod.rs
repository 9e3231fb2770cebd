//! AimDB records over AimX: a live AimDB instance's records as a record set. The client
//! (`client.rs`) speaks both AimX wires (`wire.rs`); `snapshot.rs` turns the records and a
//! bounded history of their values into a source, `sample.rs` collects a record's values over a
//! time window, and `feed.rs` follows subscriptions in the background,
//! `write.rs` sets a record and reads it back, and `discover.rs` finds the instances in a directory.
//! Values stay JSON text (`value_text.rs`) within the byte bounds of `limits.rs`. README.md beside this file
//! says why the client is our own and how each wire looks.

mod client;
pub mod discover;
pub mod endpoint;
mod error;
#[cfg(any(test, feature = "aimdb-fake"))]
pub mod fake;
mod feed;
pub mod limits;
mod sample;
mod snapshot;
mod value_text;
mod wire;
mod write;

#[cfg(test)]
mod client_tests;

pub use client::{AimxClient, DEFAULT_TIMEOUT, Event};
pub use error::AimxError;
pub use feed::{Feed, FeedNotice, SUBSCRIPTIONS_PER_CONNECTION};
pub use limits::{Limits, LimitsError, limits, set_limits};
pub use sample::{SampleOptions, Sampled, sample};
pub use snapshot::{HISTORY, Match, Snapshot, record_key, type_name, writable};
pub use value_text::ValueText;
pub use wire::Protocol;
pub use write::{WriteError, Written, check_size, write};
