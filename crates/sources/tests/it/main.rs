//! The sources crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.
//!
//! `tests/hostile_files.rs` stays a binary of its own: one of its tests lowers the process-wide
//! source size limit (`set_max_source_bytes`) for a moment, which would refuse the files that
//! tests running beside it in the same process load.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod caps;
mod ch_endless_line;
mod clickhouse_cluster;
mod exact_numbers;
#[allow(unsafe_code)] // maps files (`ReadMode::map`)
mod loading;
mod mysql_cancel;
mod mysql_values;
mod partitioned_folders;
mod pg_cancel;
mod pg_values;
mod profile_store;
mod spilling;
mod sql_clickhouse;
mod sql_files;
mod sql_mysql;
mod sql_postgres;
mod sql_sqlite;
#[allow(unsafe_code)] // reads SQLite's heap limit through its C API
mod sqlite_limits;
mod ssh_tunnel;
mod streaming;
#[allow(unsafe_code)] // maps files (`ReadMode::map`)
mod tables;
mod tls;
