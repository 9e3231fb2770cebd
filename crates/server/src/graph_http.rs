//! The web view and the HTTP API over the same tool functions: `GET /` (the page), its script,
//! `GET /v1/graph/scene` (what to draw), `GET /v1/graph/events` (Server-Sent Events when any
//! client changes the session), and `POST /v1/tools/{name}` (every tool by name; the page
//! selects, reports its viewport and camera through it).

use std::convert::Infallible;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::Stream;
use schemascope_tools::{Caller, Services, ToolResult};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::apps::{VIEW_HTML, VIEW_JS};

/// `?source=NAME` (optional when one graph is served).
#[derive(Debug, Deserialize)]
pub(crate) struct SourceQuery {
    source: Option<String>,
}

/// `GET /`: the graph view.
pub(crate) async fn page() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
        VIEW_HTML,
    )
}

/// `GET /assets/view.js`.
pub(crate) async fn script() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        VIEW_JS,
    )
}

fn failure(result: ToolResult) -> Response {
    (StatusCode::BAD_REQUEST, Json(result)).into_response()
}

/// `GET /v1/graph/scene`: positions, edges and computed styles at the session's version.
pub(crate) async fn scene(
    State(services): State<Services>,
    Query(query): Query<SourceQuery>,
) -> Response {
    let outcome = tokio::task::spawn_blocking(move || {
        let session = services.graphs.session(query.source.as_deref())?;
        schemascope_tools::graph_session::scene::scene(&session)
    })
    .await;
    match outcome {
        Ok(Ok(scene)) => ([(header::CACHE_CONTROL, "no-cache")], Json(scene)).into_response(),
        Ok(Err(error)) => failure(error.into()),
        Err(error) => failure(ToolResult::failed(
            format!("the scene could not be built: {error}"),
            json!({"error": "internal_error"}),
        )),
    }
}

/// `GET /v1/graph/events`: one `changed` event (`{source, version, changed}`) per session change.
pub(crate) async fn events(
    State(services): State<Services>,
    Query(query): Query<SourceQuery>,
) -> Response {
    let session = match services.graphs.session(query.source.as_deref()) {
        Ok(session) => session,
        Err(error) => return failure(error.into()),
    };
    let receiver = session.subscribe();
    let hello = json!({"source": session.name(), "version": session.version(), "changed": []});
    Sse::new(event_stream(receiver, hello)).keep_alive(KeepAlive::default()).into_response()
}

fn event_stream(
    receiver: tokio::sync::broadcast::Receiver<schemascope_tools::graph_session::SessionEvent>,
    hello: Value,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let first = futures_util::stream::once(async move {
        Ok(SseEvent::default().event("changed").data(hello.to_string()))
    });
    let rest = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let data = match receiver.recv().await {
            Ok(event) => serde_json::to_string(&event).unwrap_or_default(),
            // A slow page missed events: one "changed" makes it refetch everything.
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                r#"{"changed":["all"]}"#.to_string()
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(SseEvent::default().event("changed").data(data)), receiver))
    });
    futures_util::StreamExt::chain(first, rest)
}

/// How the body of `POST /v1/tools/{name}` is read, by its `Content-Type`.
#[derive(Debug, PartialEq, Eq)]
enum BodyType {
    /// JSON: `application/json`, `application/*+json`, no type at all, or
    /// `application/x-www-form-urlencoded` — what `curl -d` sends. A browser form cannot send
    /// JSON under that type (it percent-encodes `{` and `"`), and scripts on other pages are
    /// stopped by the Origin check, so accepting it opens no cross-site request.
    Json,
    /// Anything else (`text/plain`, which a cross-site form can send raw, and multipart).
    Refused,
}

fn body_type(headers: &HeaderMap) -> BodyType {
    let Some(value) = headers.get(header::CONTENT_TYPE) else { return BodyType::Json };
    let essence =
        value.to_str().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let json = essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
        || essence == "application/x-www-form-urlencoded";
    if json { BodyType::Json } else { BodyType::Refused }
}

/// `POST /v1/tools/{name}` with the tool's arguments as a JSON object: the envelope (HTTP 200
/// whether or not `success`; 400 for a body that is not JSON, 415 for a content type that
/// cannot carry it). The caller is a person or their app, so what it adds is recorded as
/// `user`.
pub(crate) async fn call_tool(
    State(services): State<Services>,
    Path(name): Path<String>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if body_type(&headers) == BodyType::Refused {
        let given = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("?");
        let message = format!(
            "the body has Content-Type `{given}`; send the tool's arguments as a JSON object with `Content-Type: application/json`, e.g. curl -X POST http://HOST/v1/tools/{name} -H 'Content-Type: application/json' -d '{{}}'"
        );
        let result = ToolResult::failed(message, json!({"error": "unsupported_media_type"}));
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, Json(result)).into_response();
    }
    let arguments = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(value) => value,
            Err(error) => {
                let message = format!(
                    "the body is not JSON ({error}); send the tool's arguments as a JSON object, e.g. {{\"source\": \"NAME\"}}"
                );
                return failure(ToolResult::failed(message, json!({"error": "invalid_json"})));
            }
        }
    };
    // When the guard's --request-timeout drops this future, or the client goes away, the
    // tool's work is cancelled (see `crate::cancel`).
    let who = crate::requester::of_http(&format!("POST /v1/tools/{name}"), peer.map(|p| p.0.0));
    let result = crate::tools::run(services, Caller::User, who, name, arguments, None).await;
    Json(result).into_response()
}
