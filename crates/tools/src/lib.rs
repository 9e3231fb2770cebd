//! The tool functions every surface calls — MCP, CLI and tests alike — with their parameters,
//! the `{success, message, data}` envelope, the sources and the services over them. No surface adds
//! logic of its own: it parses its input into these parameters and prints the envelope.

#![forbid(unsafe_code)]

pub mod aimdb_guidance;
pub mod asking;
mod business_names;
pub mod cap;
mod column_values;
mod describe;
pub mod descriptions;
mod discover;
mod docs_watch;
mod elsewhere;
pub mod embedding_model;
pub mod eval;
mod execute;
mod find;
pub mod graph_session;
mod instructions;
mod list_sources;
pub mod live;
pub mod metrics;
pub mod params;
mod property;
mod query_tools;
mod record_live;
mod record_schema;
pub mod record_write;
mod report;
pub mod requester;
mod resolve;
pub mod result;
mod sample;
pub mod schema_docs;
mod selector_query;
pub mod services;
pub mod sources;
pub mod tool_table;
pub mod toolsets;
mod validation;
mod value_lookup;
pub mod verified_examples;

pub use describe::{BASE_PROMPT, describe_schema, schema_markdown, system_prompt};
pub use discover::discover_instances;
pub use execute::execute_query;
pub use find::find_items;
pub use graph_session::Caller;
pub use instructions::instructions;
pub use list_sources::list_sources;
pub use params::*;
pub use property::describe_property;
pub use query_tools::{ask, ask_with, bench_data_access, validate_query};
pub use record_schema::{query_schema, query_schema_streamed, validate_value};
pub use record_write::set_record;
pub use report::profile_report;
pub use result::{ToolError, ToolResult, Written};
pub use sample::sample_data;
pub use schema_docs::{generate_schema_docs, get_schema_context, search_schema_docs};
pub use services::Services;
pub use sources::Sources;
pub use verified_examples::{Recorded, record_confirmed, record_example};
