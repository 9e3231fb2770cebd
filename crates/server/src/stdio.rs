//! MCP over stdio: one session on stdin/stdout, until the client closes stdin.

use std::sync::Arc;

use rmcp::{ServiceExt, transport::stdio_pipes};
use schemascope_tools::Registry;

use crate::{SchemascopeServer, ServerError};

/// Serves one MCP session over stdin/stdout until the client disconnects.
///
/// Nothing else may write to stdout while this runs: it is the transport.
pub async fn serve_stdio(registry: Arc<Registry>) -> Result<(), ServerError> {
    let running = SchemascopeServer::new(registry).serve(stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
