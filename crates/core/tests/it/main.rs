//! The core crate's integration tests, linked as one binary (a module per former test file).

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod asked_bins;
mod deep_items;
mod deferred_profile;
mod exact_integers;
mod hostile_selectors;
mod items_on_use;
mod path_limit;
mod shown_figures;
