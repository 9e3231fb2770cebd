//! `POST /v1/ask`, which streams the `ask` pipeline as Server-Sent Events — one `thought` per
//! node, then the `result` — and `GET /metrics`, the pipeline's metrics. (Over MCP `ask` is a
//! tool like any other, its thoughts sent as progress notifications.)

use std::convert::Infallible;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::Stream;
use schemascope_tools::tool_table::Progress;
use schemascope_tools::{Caller, Services};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// `POST /v1/ask` with `{source?, question, history?}`: Server-Sent Events `thought` (one per
/// node) and a final `result` (the ask envelope: answer, query, rows, trace), run through the
/// same path as every tool call (so the result is within the byte cap).
/// Arguments that do not fit end the stream with a failed `result` naming the parameter.
pub(crate) async fn ask_sse(
    State(services): State<Services>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    Json(arguments): Json<Value>,
) -> impl IntoResponse {
    let who = crate::requester::of_http("POST /v1/ask", peer.map(|p| p.0.0));
    Sse::new(stream(services, who, arguments)).keep_alive(KeepAlive::default())
}

fn stream(
    services: Services,
    who: String,
    arguments: Value,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let (tx, rx) = mpsc::unbounded_channel::<Result<SseEvent, Infallible>>();
    // The task is aborted when the client goes away (the stream is dropped), which drops the
    // run and so cancels its work (see `crate::cancel`).
    let task = tokio::spawn(async move {
        let thought = |step: Progress| {
            let _ = tx.send(Ok(SseEvent::default().event("thought").data(step.detail.to_string())));
            std::future::ready(())
        };
        let result = crate::tools::run_reporting(
            services,
            Caller::User,
            who,
            "ask".into(),
            arguments,
            None,
            thought,
        )
        .await;
        let _ = tx.send(Ok(SseEvent::default().event("result").data(json!(result).to_string())));
    });
    let abort_on_drop = AbortOnDrop(task.abort_handle());
    let mut rx = rx;
    futures_util::stream::poll_fn(move |cx| {
        let _ = &abort_on_drop;
        rx.poll_recv(cx)
    })
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `GET /metrics`: the pipeline metrics in the Prometheus text format.
pub(crate) async fn metrics(State(services): State<Services>) -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        services.asking.metrics().render(),
    )
}
