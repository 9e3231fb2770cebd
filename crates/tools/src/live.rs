//! Live AimDB sources: their records followed by subscription, each batch of new values folded
//! into the served source — replaced whole, so profiles and cached answers are recomputed and
//! subscribers of `schema://<source>` are told (`notifications/resources/updated`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use schemascope_sources::aimdb::{Event, Feed};

use crate::registry::{Registry, lock};

impl Registry {
    /// Adds `values` of record `key` to AimDB source `name` and serves the result.
    pub fn record_live_values(&self, name: &str, key: &str, values: Vec<Value>) {
        self.fold(name, values.into_iter().map(|v| (key.to_string(), v)).collect());
    }

    /// Adds `(record key, value)` pairs, oldest first, to AimDB source `name` in one update.
    fn fold(&self, name: &str, values: Vec<(String, Value)>) {
        let _one_at_a_time = lock(&self.live_update);
        let Ok(source) = self.get(Some(name)) else { return };
        let Some(snapshot) = &source.aimdb else { return };
        let mut snapshot = (**snapshot).clone();
        for (key, value) in values {
            snapshot.push(&key, value);
        }
        self.insert(snapshot.to_source(&source.spec));
    }

    /// Folds subscription events into AimDB source `name`. A subscription's first event that
    /// repeats the record's last known value is the server telling the current value on
    /// subscribe (2.x does for single-latest records), not a new value: it is not counted twice.
    fn fold_events(&self, name: &str, events: Vec<Event>) {
        let known_last = |key: &str| -> Option<Value> {
            let source = self.get(Some(name)).ok()?;
            source.aimdb.as_ref()?.values(key).last().cloned()
        };
        let fresh =
            events.into_iter().filter(|e| e.seq != 1 || known_last(&e.key).as_ref() != Some(&e.data)).map(|e| (e.key, e.data)).collect::<Vec<_>>();
        if !fresh.is_empty() {
            self.fold(name, fresh);
        }
    }

    /// Starts one subscription feed per AimDB source, folding values in at most every `batch`.
    pub(crate) fn follow_aimdb(self: &Arc<Self>, batch: Duration) {
        let mut feeds = lock(&self.feeds);
        if !feeds.is_empty() {
            return;
        }
        for source in self.sources() {
            let Some(snapshot) = &source.aimdb else { continue };
            let name = source.name().to_string();
            let keys: Vec<String> = snapshot.keys().into_iter().map(str::to_string).collect();
            let on_values = {
                let (registry, name) = (Arc::downgrade(self), name.clone());
                move |events: Vec<Event>| {
                    let Some(registry) = registry.upgrade() else { return };
                    registry.set_reload_error(&name, None);
                    registry.fold_events(&name, events);
                }
            };
            let on_error = {
                let (registry, name) = (Arc::downgrade(self), name.clone());
                move |error: schemascope_sources::aimdb::AimxError| {
                    let Some(registry) = registry.upgrade() else { return };
                    tracing::warn!(source = name, %error, "live AimDB updates interrupted; reconnecting");
                    registry.set_reload_error(&name, Some(format!("live updates interrupted, reconnecting: {error}")));
                }
            };
            feeds.push(Feed::start(snapshot.socket.clone(), keys, batch, on_values, on_error));
        }
    }

    /// The values of each record of AimDB source `name`, oldest first (for tests and reports).
    pub fn live_values(&self, name: &str) -> BTreeMap<String, Vec<Value>> {
        let Ok(source) = self.get(Some(name)) else { return BTreeMap::new() };
        let Some(snapshot) = &source.aimdb else { return BTreeMap::new() };
        snapshot.keys().into_iter().map(|k| (k.to_string(), snapshot.values(k).cloned().collect())).collect()
    }
}
