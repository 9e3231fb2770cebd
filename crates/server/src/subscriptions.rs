//! Live refresh notifications: when the services reloads a source, tell every client that
//! subscribed to `schema://<source>` (`notifications/resources/updated`), and tell clients when the
//! set of sources changed (`notifications/resources/list_changed`) and when the tools the sources
//! can use changed (`notifications/tools/list_changed`: a graph or database that loads late).
//!
//! Two protocol generations are served:
//! - sessions opened with `initialize` (protocol 2025-11-25 and older) subscribe with
//!   `resources/subscribe`; a per-session forwarder sends their notifications through the peer;
//! - protocol 2026-07-28 clients open a `subscriptions/listen` request; [`listen`] serves it until
//!   the client cancels it.

use schemascope_core::sync::lock;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rmcp::{
    ErrorData as McpError, Peer, RoleServer,
    model::{ResourceUpdatedNotificationParam, SubscriptionFilter},
    service::{SubscriptionContext, SubscriptionSendError},
};
use schemascope_tools::Services;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio_util::sync::CancellationToken;

use crate::resources;

/// What one services event means for a subscriber.
#[derive(Debug, Default, PartialEq)]
struct Changes {
    /// Subscribed URIs to report as updated.
    updated: Vec<String>,
    /// Whether the list of sources changed.
    list_changed: bool,
    /// Whether the list of tools changed.
    tools_changed: bool,
}

/// Tracks the source names so list changes can be told apart from reloads, and the version of
/// every live record so a source's update names only the records that changed.
struct ChangeTracker {
    names: Vec<String>,
    /// The tools listed when last looked at.
    tools: Vec<&'static str>,
    /// Record resource URI → the record's version when last looked at.
    versions: BTreeMap<String, u64>,
}

/// The resource URI and version of every record of live source `name`.
fn record_versions(services: &Services, name: &str) -> Vec<(String, u64)> {
    let Ok(source) = services.sources.get(Some(name)) else { return Vec::new() };
    let Some(snapshot) = &source.aimdb else { return Vec::new() };
    snapshot
        .keys()
        .into_iter()
        .map(|key| (resources::record_uri(name, key), snapshot.version(key)))
        .collect()
}

impl ChangeTracker {
    fn new(services: &Services) -> Self {
        let names = services.sources.names();
        let versions = names.iter().flat_map(|name| record_versions(services, name)).collect();
        Self { names, tools: listed_tools(services), versions }
    }

    /// Interprets one event: `Some(name)` reloaded, `None` when events were missed (every
    /// subscription is then reported, to be safe).
    fn changes(
        &mut self,
        services: &Services,
        reloaded: Option<&str>,
        subscribed: &BTreeSet<String>,
    ) -> Changes {
        let names = services.sources.names();
        let list_changed = names != self.names;
        self.names = names;
        let tools = listed_tools(services);
        let tools_changed = tools != self.tools;
        self.tools = tools;
        let updated = match reloaded {
            Some(name) => {
                let uri = resources::uri_for(name);
                let mut updated = if subscribed.contains(&uri) { vec![uri] } else { Vec::new() };
                for (uri, version) in record_versions(services, name) {
                    let before = self.versions.insert(uri.clone(), version);
                    if before != Some(version) && subscribed.contains(&uri) {
                        updated.push(uri);
                    }
                }
                updated
            }
            None => {
                for name in &self.names {
                    self.versions.extend(record_versions(services, name));
                }
                subscribed.iter().cloned().collect()
            }
        };
        Changes { updated, list_changed, tools_changed }
    }
}

fn listed_tools(services: &Services) -> Vec<&'static str> {
    schemascope_tools::tool_table::listed(services).into_iter().map(|spec| spec.name).collect()
}

/// Waits for the next services event: `Some(Some(name))` for a reload, `Some(None)` after missed
/// events, `None` when the services is gone.
async fn next_event(changes: &mut Receiver<String>) -> Option<Option<String>> {
    match changes.recv().await {
        Ok(name) => Some(Some(name)),
        Err(RecvError::Lagged(_)) => Some(None),
        Err(RecvError::Closed) => None,
    }
}

/// The legacy (`resources/subscribe`) subscriptions of one MCP session.
pub(crate) struct McpSessionSubscriptions {
    services: Services,
    state: Mutex<SessionState>,
}

#[derive(Default)]
struct SessionState {
    uris: BTreeSet<String>,
    forwarder: Option<tokio::task::AbortHandle>,
}

impl McpSessionSubscriptions {
    /// No subscriptions yet, no forwarder running.
    pub(crate) fn new(services: Services) -> Arc<Self> {
        Arc::new(Self { services, state: Mutex::new(SessionState::default()) })
    }

    fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    /// Starts forwarding services events to `peer`, once per session.
    pub(crate) fn start(self: &Arc<Self>, peer: Peer<RoleServer>) {
        let mut state = self.state();
        if state.forwarder.is_some() {
            return;
        }
        let changes = self.services.sources.subscribe();
        let tracker = ChangeTracker::new(&self.services);
        let task = tokio::spawn(forward(Arc::downgrade(self), peer, changes, tracker));
        state.forwarder = Some(task.abort_handle());
    }

    /// Subscribes the session to `uri` (a known schema URI).
    pub(crate) fn subscribe(self: &Arc<Self>, uri: String, peer: Peer<RoleServer>) {
        self.state().uris.insert(uri);
        self.start(peer);
    }

    /// Drops the session's subscription to `uri`.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.state().uris.remove(uri);
    }

    fn changes(&self, tracker: &mut ChangeTracker, reloaded: Option<&str>) -> Changes {
        let subscribed = self.state().uris.clone();
        tracker.changes(&self.services, reloaded, &subscribed)
    }
}

impl Drop for McpSessionSubscriptions {
    fn drop(&mut self) {
        if let Some(forwarder) = self.state().forwarder.take() {
            forwarder.abort();
        }
    }
}

/// Sends a legacy session its notifications until the session or the services goes away.
async fn forward(
    session: Weak<McpSessionSubscriptions>,
    peer: Peer<RoleServer>,
    mut events: Receiver<String>,
    mut tracker: ChangeTracker,
) {
    while let Some(reloaded) = next_event(&mut events).await {
        let Some(subscriptions) = session.upgrade() else {
            return;
        };
        let changes = subscriptions.changes(&mut tracker, reloaded.as_deref());
        drop(subscriptions);
        if peer.is_transport_closed() {
            return;
        }
        if changes.list_changed && peer.notify_resource_list_changed().await.is_err() {
            return;
        }
        if changes.tools_changed && peer.notify_tool_list_changed().await.is_err() {
            return;
        }
        for uri in changes.updated {
            if let Err(error) =
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await
            {
                tracing::debug!(%error, "resource update notification not delivered; stopping the session's forwarder");
                return;
            }
        }
    }
}

/// The part of a `subscriptions/listen` filter this server honours: resource and tool list changes, and
/// updates of known schema URIs (unknown URIs are left out of the acknowledgment).
pub(crate) fn accepted_filter(
    services: &Services,
    requested: &SubscriptionFilter,
) -> SubscriptionFilter {
    let known = resources::known_uris(services);
    let mut accepted = SubscriptionFilter::new();
    accepted.resources_list_changed = requested.resources_list_changed.filter(|wanted| *wanted);
    accepted.tools_list_changed = requested.tools_list_changed.filter(|wanted| *wanted);
    accepted.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().filter(|uri| known.contains(uri)).cloned().collect::<Vec<_>>())
        .filter(|uris| !uris.is_empty());
    accepted
}

/// Serves one `subscriptions/listen` request (protocol 2026-07-28) until the client cancels it,
/// or ends it gracefully (the final result tells the client) when `closing` is cancelled.
pub(crate) async fn listen(
    services: &Services,
    context: SubscriptionContext,
    closing: &CancellationToken,
) -> Result<(), McpError> {
    let mut events = services.sources.subscribe();
    let mut tracker = ChangeTracker::new(services);
    let accepted = context.accepted().clone();
    let subscribed: BTreeSet<String> =
        accepted.resource_subscriptions.clone().unwrap_or_default().into_iter().collect();
    let wants_list_changes = accepted.resources_list_changed == Some(true);
    let wants_tool_changes = accepted.tools_list_changed == Some(true);
    let sink = context.sink().clone();
    loop {
        let event = tokio::select! {
            () = context.cancelled() => return Ok(()),
            () = closing.cancelled() => return Ok(()),
            event = next_event(&mut events) => event,
        };
        let Some(reloaded) = event else {
            // The services is gone: nothing more will change.
            tokio::select! {
                () = context.cancelled() => {}
                () = closing.cancelled() => {}
            }
            return Ok(());
        };
        let changes = tracker.changes(services, reloaded.as_deref(), &subscribed);
        let mut sends = Vec::new();
        if changes.list_changed && wants_list_changes {
            sends.push(sink.notify_resource_list_changed().await);
        }
        if changes.tools_changed && wants_tool_changes {
            sends.push(sink.notify_tool_list_changed().await);
        }
        for uri in changes.updated {
            sends.push(sink.notify_resource_updated(uri).await);
        }
        for sent in sends {
            match sent {
                Ok(()) => {}
                Err(SubscriptionSendError::SubscriptionClosed)
                | Err(SubscriptionSendError::Service(_)) => return Ok(()),
                Err(error) => tracing::debug!(%error, "subscription notification not sent"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reload_of_a_subscribed_source_is_reported() {
        let services = Services::new();
        let mut tracker = ChangeTracker::new(&services);
        let subscribed: BTreeSet<String> = ["schema://a".to_string()].into_iter().collect();
        assert_eq!(
            tracker.changes(&services, Some("a"), &subscribed),
            Changes { updated: vec!["schema://a".into()], ..Changes::default() }
        );
        assert_eq!(tracker.changes(&services, Some("b"), &subscribed), Changes::default());
        assert_eq!(
            tracker.changes(&services, None, &subscribed).updated,
            vec!["schema://a".to_string()]
        );
    }

    #[test]
    fn unknown_uris_are_not_accepted() {
        let services = Services::new();
        let requested = SubscriptionFilter::builder().resources_list_changed().build();
        let mut requested = requested;
        requested.resource_subscriptions = Some(vec!["schema://nope".into()]);
        let accepted = accepted_filter(&services, &requested);
        assert_eq!(accepted.resource_subscriptions, None);
        assert_eq!(accepted.resources_list_changed, Some(true));
    }
}
