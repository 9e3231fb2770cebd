//! The sources crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.
//!
//! `tests/hostile_files.rs` stays a binary of its own: one of its tests lowers the process-wide
//! source size limit (`set_max_source_bytes`) for a moment, which would refuse the files that
//! tests running beside it in the same process load.

mod common;

mod caps;
mod exact_numbers;
mod loading;
mod pg_cancel;
mod pg_values;
mod sql_postgres;
mod sql_sqlite;
mod sqlite_limits;
