//! The tools crate's integration tests, linked as one binary (a module per former test file);
//! `common` holds what they share.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod aimdb_fake;
mod aimdb_guidance;
mod answers_say_where;
mod ask_tools;
mod background_profiles;
mod business_names;
mod ceilings;
mod column_meanings;
mod dbt_docs;
mod demo_tools;
mod docs_changes;
mod engine_validation;
mod failing_sources;
mod file_faults;
mod graph_inputs;
mod graph_session;
mod hostile_depth;
mod hostile_files;
mod hostile_sql;
mod hostile_sql_clickhouse;
mod hostile_sql_datafusion;
mod hostile_sql_mysql;
mod listing_memo;
mod live_refresh;
mod mapped_styles;
mod output_caps;
mod outside_source;
mod postgres_restart;
mod session_bounds;
mod session_disk_full;
mod session_restore;
mod set_record_hostile;
mod sql_files;
mod sql_tools;
mod tool_list;
mod value_index;
mod verified_examples;
