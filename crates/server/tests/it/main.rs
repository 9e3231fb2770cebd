//! The server crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod aimdb_resources;
mod cancellation;
mod chosen_tools;
mod http_ask;
mod http_guard;
mod http_hostile;
mod http_smoke;
mod http_writes;
mod in_process;
mod long_algorithms;
mod mcp_lists;
mod tasks;
mod verified_examples_surfaces;
