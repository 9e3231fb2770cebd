//! The server crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.

mod common;

mod aimdb_resources;
mod cancellation;
mod http_ask;
mod http_guard;
mod http_hostile;
mod http_smoke;
mod in_process;
