//! Stopping a tool's work when its call ends early. Each call gets a
//! [`schemascope_core::cancel::Cancel`] token that the work (on the blocking pool) checks in its
//! long loops; it is cancelled when the call's time (`--request-timeout`) is up, when an MCP
//! client sends `notifications/cancelled` for it, and when the call's future is dropped (an HTTP
//! client went away, the server shut down). The caller then gets an answer at once, and the
//! work stops at its next check instead of running on for minutes.

use std::future::Future;
use std::time::Duration;

use schemascope_core::cancel::{self, Cancel};
use schemascope_tools::ToolResult;
use serde_json::json;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// The MCP request's own token, which rmcp cancels on `notifications/cancelled`.
    pub(crate) static REQUEST: CancellationToken;
}

/// Cancels its token when dropped: the call's future went away before the work finished.
pub(crate) struct CancelOnDrop(pub(crate) Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        // A no-op when the work finished first; otherwise the first reason given stays.
        self.0.cancel_because(
            "the call ended before its work did (the request timed out or the client went away)",
        );
    }
}

/// How long a cancelled call waits for its work to notice, so that its answer can say how far
/// the work got; work that does not look at its token in time (a database statement, which has
/// its own timeout) is answered for without it.
const NOTICE_GRACE: Duration = Duration::from_secs(2);

/// How blocking work under a token ended ([`run_blocking`]).
pub(crate) enum Ended<T> {
    /// It finished (or panicked) before its call was cut.
    Finished(Result<T, tokio::task::JoinError>),
    /// Its call was cut: why, what it was doing then if it said ([`cancel::during`]), and its
    /// result if it noticed within [`NOTICE_GRACE`].
    Stopped {
        reason: String,
        during: Option<String>,
        late: Option<Result<T, tokio::task::JoinError>>,
    },
}

/// Runs `work` on the blocking pool under a new token, cancelled when `timeout` passes, when the
/// MCP client cancels the request, or when this future is dropped (an HTTP client went away).
pub(crate) async fn run_blocking<T: Send + 'static>(
    timeout: Option<Duration>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Ended<T> {
    let token = Cancel::new();
    let _on_drop = CancelOnDrop(token.clone());
    let inner = token.clone();
    let mut handle = tokio::task::spawn_blocking(move || cancel::with(&inner, work));
    let request = REQUEST.try_with(CancellationToken::clone).ok();
    let cancelled = async {
        match &request {
            Some(request) => request.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let timed_out = async {
        match timeout {
            Some(timeout) => tokio::time::sleep(timeout).await,
            None => std::future::pending().await,
        }
    };
    let reason = tokio::select! {
        joined = &mut handle => return Ended::Finished(joined),
        () = cancelled => "the client cancelled the request (notifications/cancelled)".to_string(),
        () = timed_out => format!("the request took longer than {} s (--request-timeout)", timeout.map_or(0.0, |t| t.as_secs_f64())),
    };
    token.cancel_because(reason.clone());
    let late = tokio::time::timeout(NOTICE_GRACE, handle).await.ok();
    Ended::Stopped { reason, during: token.stopped_during(), late }
}

/// Runs `work` on the blocking pool under a new token, and returns its answer. When `timeout`
/// passes or the MCP client cancels the request first, the token is cancelled and the call
/// answers with the work's own "stopped" answer if it comes within [`NOTICE_GRACE`], else with
/// a failed envelope saying why (made a `T` by `answer`, as is the envelope of work that
/// panicked).
pub(crate) async fn run_cancellable<T: Send + 'static>(
    tool: &str,
    timeout: Option<Duration>,
    work: impl FnOnce() -> T + Send + 'static,
    answer: impl FnOnce(ToolResult) -> T,
) -> T {
    match run_blocking(timeout, work).await {
        Ended::Finished(joined) => finished(tool, joined, answer),
        // Stopped while it waited on shared work (another call's profile of a table): what it
        // answers then is cut short, so the answer says what it waited for instead.
        Ended::Stopped { reason, during: Some(step), .. } => answer(ToolResult::failed(
            format!("`{tool}` was stopped while {step}: {reason}"),
            json!({"error": "cancelled", "reason": reason, "stoppedWhile": step}),
        )),
        Ended::Stopped { late: Some(joined), .. } => finished(tool, joined, answer),
        Ended::Stopped { reason, .. } => answer(ToolResult::failed(
            format!("`{tool}` was stopped: {reason}; its work stops at its next check"),
            json!({"error": "cancelled", "reason": reason}),
        )),
    }
}

/// The result of work that finished (or panicked).
fn finished<T>(
    tool: &str,
    joined: Result<T, tokio::task::JoinError>,
    answer: impl FnOnce(ToolResult) -> T,
) -> T {
    joined.unwrap_or_else(|error| {
        answer(ToolResult::failed(
            format!("`{tool}` failed unexpectedly: {error}"),
            json!({"error": "internal_error"}),
        ))
    })
}

/// Runs `future` with `request` as the MCP request's token, for [`run_cancellable`] to watch.
pub(crate) async fn with_request<F: Future>(request: CancellationToken, future: F) -> F::Output {
    REQUEST.scope(request, future).await
}
