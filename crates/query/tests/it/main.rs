//! The query crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.

mod common;

mod hostile_depth;
mod read_only_calls;
mod spider;
mod sql;
mod structured;
