//! MCP sessions over HTTP, bounded and safe against repeated request ids: the one place sessions
//! are created and every request enters a session, whatever path or route led there.
//!
//! **Bound.** [`BoundedMcpSessions::create_session`] refuses past `max_sessions`, counted and
//! created under one lock, so no route, path spelling or race can open more (the HTTP gate
//! refuses earlier with a clear 503; this is the backstop it cannot bypass).
//!
//! **Request ids.** rmcp routes a response to its HTTP stream, and its service loop tracks a
//! request for cancellation, by the client's JSON-RPC id; a second request with an id still in
//! flight overwrote both, so one of the two was never answered (and the other could get the first
//! one's answer). Each request is therefore given a session-unique id on the way in, which
//! carries the client's id; on the way out every response gets the client's id back. Two
//! requests with the same id are then two requests, each answered on its own stream with the id
//! it was sent with. A client's `notifications/cancelled` names its own id and is translated to
//! the latest request in flight with that id.

use schemascope_core::sync::lock;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::{Stream, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Marks an id this module assigned: `<MARK><n><MARK><client id as JSON>`. The unit separator
/// does not occur in ids clients choose in practice, and an id without it is left alone.
const MARK: char = '\u{1f}';

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpSessionsError {
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// The bound on sessions is reached.
    #[error("the server already holds its maximum of {0} MCP sessions")]
    TooMany(usize),
}

/// rmcp's in-memory sessions with a bound on their number and request ids made unique.
pub(crate) struct BoundedMcpSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held while a session is counted and created.
    creating: tokio::sync::Mutex<()>,
    next_id: AtomicU64,
    /// Per session: a client's request id → the id its latest request in flight was given.
    in_flight: std::sync::Mutex<HashMap<SessionId, HashMap<RequestId, RequestId>>>,
}

impl BoundedMcpSessions {
    /// At most `max` sessions of `inner`.
    pub(crate) fn new(inner: LocalSessionManager, max: usize) -> Self {
        Self {
            inner,
            max,
            creating: tokio::sync::Mutex::new(()),
            next_id: AtomicU64::new(1),
            in_flight: Default::default(),
        }
    }

    /// The sessions open now.
    pub(crate) async fn count(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// The most sessions held at once.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    fn remember(&self, session: &SessionId, client: RequestId, internal: RequestId) {
        {
            let mut map = lock(&self.in_flight);
            map.entry(session.clone()).or_default().insert(client, internal);
        }
    }

    fn forget(&self, session: &SessionId, client: &RequestId, internal: &RequestId) {
        let mut map = lock(&self.in_flight);
        if let Some(ids) = map.get_mut(session) {
            if ids.get(client) == Some(internal) {
                ids.remove(client);
            }
            if ids.is_empty() {
                map.remove(session);
            }
        }
    }

    fn in_flight_id(&self, session: &SessionId, client: &RequestId) -> Option<RequestId> {
        lock(&self.in_flight).get(session)?.get(client).cloned()
    }
}

/// The session-unique id for the `n`th request, carrying the client's `id`.
fn internal_id(n: u64, id: &RequestId) -> RequestId {
    let client = serde_json::to_string(id).unwrap_or_default();
    NumberOrString::String(format!("{MARK}{n}{MARK}{client}").into())
}

/// The client's id inside an id [`internal_id`] made; `None` for any other id.
pub(crate) fn client_id(id: &RequestId) -> Option<RequestId> {
    let NumberOrString::String(text) = id else { return None };
    let rest = text.strip_prefix(MARK)?;
    let (_, client) = rest.split_once(MARK)?;
    serde_json::from_str(client).ok()
}

/// A server message with the client's id back in a response or error.
fn restore(message: ServerSseMessage) -> ServerSseMessage {
    let Some(inner) = &message.message else { return message };
    let id = match &**inner {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    };
    let Some(original) = id.and_then(client_id) else { return message };
    let mut restored = (**inner).clone();
    match &mut restored {
        JsonRpcMessage::Response(response) => response.id = original,
        JsonRpcMessage::Error(error) => error.id = Some(original),
        _ => {}
    }
    let mut message = message;
    message.message = Some(Arc::new(restored));
    message
}

/// Removes a request from the in-flight table when its stream ends or is dropped.
struct InFlight {
    sessions: Arc<BoundedMcpSessions>,
    session: SessionId,
    client: RequestId,
    internal: RequestId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.sessions.forget(&self.session, &self.client, &self.internal);
    }
}

/// The [`SessionManager`] rmcp is given: an `Arc` so that streams can hold what they release.
#[derive(Clone)]
pub(crate) struct SharedMcpSessions(pub Arc<BoundedMcpSessions>);

impl SessionManager for SharedMcpSessions {
    type Error = McpSessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.0.creating.lock().await;
        if self.0.count().await >= self.0.max {
            return Err(McpSessionsError::TooMany(self.0.max));
        }
        Ok(self.0.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.0.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.0.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        {
            let mut map = lock(&self.0.in_flight);
            map.remove(id);
        }
        Ok(self.0.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let mut message = message;
        let mut guard = None;
        if let JsonRpcMessage::Request(request) = &mut message {
            let n = self.0.next_id.fetch_add(1, Ordering::Relaxed);
            let internal = internal_id(n, &request.id);
            let client = std::mem::replace(&mut request.id, internal.clone());
            self.0.remember(id, client.clone(), internal.clone());
            guard = Some(InFlight {
                sessions: Arc::clone(&self.0),
                session: id.clone(),
                client,
                internal,
            });
        }
        let stream = self.0.inner.create_stream(id, message).await?;
        Ok(stream.map(move |event| {
            // The guard lives as long as the stream: dropped with it, it releases the id.
            let _held = &guard;
            restore(event)
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let mut message = message;
        if let JsonRpcMessage::Notification(notification) = &mut message
            && let ClientNotification::CancelledNotification(cancelled) =
                &mut notification.notification
            && let Some(request_id) = &cancelled.params.request_id
            && let Some(internal) = self.0.in_flight_id(id, request_id)
        {
            cancelled.params.request_id = Some(internal);
        }
        Ok(self.0.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A response whose own stream is gone falls back to this one: it too gets its id back.
        Ok(self.0.inner.create_standalone_stream(id).await?.map(restore))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.0.inner.resume(id, last_event_id).await?.map(restore))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(self.0.inner.restore_session(id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_ids_carry_the_clients_id_of_either_kind() {
        for id in [
            NumberOrString::Number(7),
            NumberOrString::Number(-3),
            NumberOrString::String("abc\u{1f}x\"y".into()),
        ] {
            let internal = internal_id(42, &id);
            assert_ne!(internal, id);
            assert_eq!(client_id(&internal), Some(id));
        }
        assert_eq!(client_id(&NumberOrString::Number(1)), None);
        assert_eq!(client_id(&NumberOrString::String("plain".into())), None);
        assert_ne!(
            internal_id(1, &NumberOrString::Number(5)),
            internal_id(2, &NumberOrString::Number(5)),
            "unique per request"
        );
    }
}
