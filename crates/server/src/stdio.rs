//! MCP over stdio: one session on stdin/stdout, until the client closes stdin.

use rmcp::{ServiceExt, transport::stdio_pipes};
use schemascope_tools::Services;

use crate::{SchemascopeServer, ServerError};

/// Serves one MCP session over stdin/stdout until the client disconnects.
///
/// Nothing else may write to stdout while this runs: it is the transport.
pub async fn serve_stdio(services: Services) -> Result<(), ServerError> {
    let running = SchemascopeServer::new(services).serve(stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
