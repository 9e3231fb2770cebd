//! The `ask` pipeline on the server's surfaces: the MCP tool (each node's thought sent as
//! `notifications/progress` when the client asked for progress), and `POST /v1/ask`, which
//! streams Server-Sent Events — one `thought` per node, then the `result`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::Stream;
use schemascope_agent::graph::{Event, Phase};
use schemascope_core::cancel::Cancel;
use schemascope_tools::{AskParams, Registry, ToolResult};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cancel::CancelOnDrop;

/// Runs `ask` on the blocking pool under `cancel` (its steps stop asking the model once it is
/// cancelled); every node entry is sent on the returned channel as it happens, and the result
/// when the run ends.
pub fn spawn_ask(
    registry: Arc<Registry>,
    params: AskParams,
    cancel: Cancel,
) -> (mpsc::UnboundedReceiver<Event>, tokio::task::JoinHandle<ToolResult>) {
    let (events, receiver) = mpsc::unbounded_channel();
    let handle = tokio::task::spawn_blocking(move || {
        schemascope_core::cancel::with(&cancel, || {
            schemascope_tools::ask_with(&registry, params, &mut |event| {
                if event.phase == Phase::Enter {
                    // Nobody listening any more is fine: the run still finishes and is recorded.
                    let _ = events.send(event.clone());
                }
            })
        })
    });
    (receiver, handle)
}

/// The thought of an event, as progress shows it.
pub fn thought(event: &Event) -> Value {
    json!({"node": event.node, "current_thought": event.current_thought, "execution_id": event.execution_id})
}

/// `POST /v1/ask` with `{source?, question, history?}`: Server-Sent Events `thought` (one per
/// node) and a final `result` (the ask envelope: answer, query, rows, trace).
pub async fn ask_sse(State(registry): State<Arc<Registry>>, Json(params): Json<AskParams>) -> impl IntoResponse {
    Sse::new(stream(registry, params)).keep_alive(KeepAlive::default())
}

fn stream(registry: Arc<Registry>, params: AskParams) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let cancel = Cancel::new();
    // The stream is dropped when the client goes away: the run is then cancelled.
    let on_drop = CancelOnDrop(cancel.clone());
    let (mut events, handle) = spawn_ask(registry, params, cancel);
    let (tx, rx) = mpsc::unbounded_channel::<Result<SseEvent, Infallible>>();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let _ = tx.send(Ok(SseEvent::default().event("thought").data(thought(&event).to_string())));
        }
        let result = handle.await.unwrap_or_else(|error| ToolResult {
            success: false,
            message: format!("`ask` failed unexpectedly: {error}"),
            data: json!({"error": "internal_error"}),
            ..Default::default()
        });
        let _ = tx.send(Ok(SseEvent::default().event("result").data(json!(result).to_string())));
    });
    let mut rx = rx;
    futures_util::stream::poll_fn(move |cx| {
        let _ = &on_drop;
        rx.poll_recv(cx)
    })
}

/// `GET /metrics`: the pipeline metrics in the Prometheus text format.
pub async fn metrics(State(registry): State<Arc<Registry>>) -> impl IntoResponse {
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], registry.metrics().render())
}
