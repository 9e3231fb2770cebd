//! The schemascope MCP server: the tools the served sources can use, one schema resource per source (with live update
//! notifications) and the schema system prompt, served over stdio or streamable HTTP.
//!
//! This is the only crate that knows MCP and HTTP. Every answer comes from the tool functions of
//! `schemascope-tools`; this crate only translates between them and the protocol. It never writes
//! to stdout itself (stdout is the stdio transport); diagnostics go through `tracing`.

#![forbid(unsafe_code)]
// stdout is the stdio transport: diagnostics go through `tracing`, never print.
#![deny(clippy::print_stdout)]

mod apps;
mod ask;
mod authority;
mod backoff;
mod cancel;
mod completions;
mod error;
mod graph_http;
mod guard;
mod http;
pub mod jsonrpc;
mod listen;
mod mcp_gate;
mod mcp_sessions;
mod prompts;
mod requester;
mod resources;
mod server;
mod stdio;
mod stdio_transport;
mod subscriptions;
mod tasks;
mod tools;

pub use error::ServerError;
pub use guard::HttpOptions;
pub use http::{MCP_PATH, bind_http, serve_http, serve_http_listener};
pub use server::SchemascopeServer;
pub use stdio::serve_stdio;

/// The name of the schema system prompt.
pub const PROMPT_NAME: &str = prompts::PROMPT_NAME;

/// The URI of the schema resource of a source: `schema://<source>`.
pub fn resource_uri(source: &str) -> String {
    resources::uri_for(source)
}
