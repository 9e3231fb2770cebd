//! The command line's integration tests, linked as one binary (a module per former test file);
//! each drives the real `schemascope` binary (`CARGO_BIN_EXE_schemascope`) as a child process.

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod aimdb_cli;
mod aimdb_hostile;
mod aimdb_mcp;
mod ask_cli;
mod ceilings_cli;
mod checks;
mod cli;
mod config_cli;
mod conformance_cli;
mod hostile_files_cli;
mod hostile_input_cli;
mod inferred_schema_python;
mod interrupt_cli;
mod long_work_cli;
mod mcp_app;
mod package_cli;
mod python_sdk_e2e;
mod repeated_ids_memory;
mod schema_docs_cli;
mod session_kill;
mod ssh_tunnel_cli;
mod streamed_schema_cli;
mod streaming_memory;
mod tool_arguments_cli;
mod tools_cli;
mod web_view;
