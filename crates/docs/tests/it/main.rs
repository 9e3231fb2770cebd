//! The docs crate's integration tests, linked as one binary (a module per former test file).

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod chinook_docs;
mod hostile_markdown;
mod okapi_parity;
mod semantic_retrieval;
mod spider_eval;
