//! The agent crate's integration tests, linked as one binary (a module per former test file).

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod graph;
mod llm_backends;
