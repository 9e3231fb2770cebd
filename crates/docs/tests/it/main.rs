//! The docs crate's integration tests, linked as one binary (a module per former test file).

mod chinook_docs;
mod hostile_markdown;
mod okapi_parity;
mod spider_eval;
