//! The query crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod hostile_depth;
mod pg_corpus;
mod read_only_calls;
mod spider;
mod sql;
mod structured;
