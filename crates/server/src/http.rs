//! MCP over streamable HTTP at `/mcp`, the graph web view at `/` with its API under `/v1/`, and
//! a plain-text `GET /healthz`.
//!
//! Clients that `initialize` (protocol 2025-11-25 and older) get a session (`Mcp-Session-Id`) with
//! a `GET` stream for notifications; protocol 2026-07-28 requests are served statelessly and use
//! `subscriptions/listen` streams instead (rmcp routes both).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::{
    Router,
    extract::Request,
    http::{Method, StatusCode},
    middleware::{self, Next},
    response::Response,
    routing::{get, post},
};
use rmcp::transport::{
    StreamableHttpServerConfig, StreamableHttpService,
    streamable_http_server::session::local::LocalSessionManager,
};
use schemascope_tools::Services;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::guard::{Guard, HttpOptions};
use crate::listen::ConnectionLimits;
use crate::mcp_gate::McpGate;
use crate::mcp_sessions::{BoundedMcpSessions, SharedMcpSessions};
use crate::{SchemascopeServer, ServerError};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The answer of `GET /healthz`.
const INDEX_TEXT: &str = "schemascope MCP server; endpoint /mcp\n";

/// How long an idle legacy session (no request, no notification) is kept before it is closed.
/// Subscribed clients may sit quietly for a long time waiting for file changes.
const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How long shutdown lets `subscriptions/listen` streams send their final result.
const LISTEN_CLOSE_GRACE: Duration = Duration::from_millis(200);

/// How long shutdown waits for open connections after the streams were told to close.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// rmcp answers a session `DELETE` with `202 Accepted`; the Python SDK expects `200`/`204` and
/// logs a warning otherwise. The session is closed either way, so say `204 No Content`.
async fn session_delete_status(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Binds a TCP listener, returning it with its actual address (so port 0 can be used).
pub async fn bind_http(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), ServerError> {
    let listener =
        TcpListener::bind(addr).await.map_err(|source| ServerError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(ServerError::LocalAddr)?;
    Ok((listener, local))
}

/// Serves MCP over streamable HTTP on `addr` until `shutdown` completes.
pub async fn serve_http(
    services: Services,
    addr: SocketAddr,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let (listener, _) = bind_http(addr).await?;
    serve_http_listener(services, listener, options, shutdown).await
}

/// Serves MCP over streamable HTTP on an already bound listener until `shutdown` completes.
///
/// Every route sits behind the guard (`guard.rs`) (Host, Origin, token with backoff, body
/// limit, timeout), the MCP service behind its gate (`mcp_gate.rs`) (JSON-RPC envelope,
/// session bound), and every connection within the limits (`listen.rs`) (header timeout,
/// connection bound); a non-loopback listener without a strong token is refused here. On
/// shutdown every MCP session and open stream is closed, then the server waits a few seconds at
/// most for connections to finish.
pub async fn serve_http_listener(
    services: Services,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let local_addr = listener.local_addr().map_err(ServerError::LocalAddr)?;
    let streams = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        // Sessions for clients that `initialize` (the Python SDK in legacy mode, most clients
        // today); 2026-07-28 requests are stateless whatever this says.
        .with_legacy_session_mode(true)
        .with_cancellation_token(streams.child_token())
        // The guard checks Host on every route (with --allow-host names), so rmcp need not.
        .disable_allowed_hosts();
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(SESSION_IDLE_TIMEOUT);
    let sessions = Arc::new(BoundedMcpSessions::new(local, options.max_sessions));
    let limits = ConnectionLimits {
        header_timeout: options.header_timeout,
        max_connections: options.max_connections,
    };
    let gate = Arc::new(McpGate::new(Arc::clone(&sessions), options.max_body_bytes));
    let tool_timeout = options.request_timeout;
    let guard = Arc::new(Guard::new(options, local_addr)?);

    // Shutdown first ends the listen streams gracefully, then closes every stream and session.
    let closing = CancellationToken::new();
    let api = Router::new()
        .route("/v1/ask", post(crate::ask::ask_sse))
        .route("/metrics", get(crate::ask::metrics))
        .route("/v1/graph/scene", get(crate::graph_http::scene))
        .route("/v1/graph/events", get(crate::graph_http::events))
        .route("/v1/tools/{name}", post(crate::graph_http::call_tool))
        .with_state(services.clone());
    // A tool call over /mcp answers as a stream the guard's timeout does not cut: the server
    // cancels the call's work itself at the same timeout.
    let base = SchemascopeServer::new(services)
        .with_closing(closing.clone())
        .with_tool_timeout(tool_timeout);
    let mcp = StreamableHttpService::new(
        move || Ok(base.new_session()),
        Arc::new(SharedMcpSessions(sessions)),
        config,
    );
    // The MCP gate is part of the MCP service: every path the router hands to it (`/mcp`,
    // `/mcp/`, `/mcp/…`) goes through the same checks.
    let mcp = Router::new()
        .fallback_service(mcp)
        .layer(middleware::from_fn_with_state(gate, crate::mcp_gate::check));
    let app = Router::new()
        .route("/", get(crate::graph_http::page))
        .route("/assets/view.js", get(crate::graph_http::script))
        .route("/healthz", get(|| async { INDEX_TEXT }))
        .nest_service(MCP_PATH, mcp)
        .merge(api)
        .layer(middleware::from_fn(session_delete_status))
        .layer(middleware::from_fn_with_state(guard, crate::guard::check));

    let stopping = CancellationToken::new();
    let graceful = {
        let stopping = stopping.clone();
        async move {
            shutdown.await;
            closing.cancel();
            // Give the listen streams a moment to send their final result, then close the
            // long-lived SSE streams so the connections can drain.
            tokio::time::sleep(LISTEN_CLOSE_GRACE).await;
            streams.cancel();
            stopping.cancel();
        }
    };
    let shutting_down = tokio::spawn(graceful);
    let server = crate::listen::serve(listener, app, limits, stopping.clone());
    tokio::pin!(server);
    tokio::select! {
        () = &mut server => {}
        () = async { stopping.cancelled().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
            tracing::debug!("connections still open after the shutdown grace period; closing them");
        }
    }
    shutting_down.abort();
    Ok(())
}
