//! Live AimDB sources: their records followed by subscription, each batch of new values folded
//! into the served source — replaced whole, so profiles and cached answers are recomputed and
//! subscribers of `schema://<source>` are told (`notifications/resources/updated`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};

use serde_json::Value;

use schemascope_sources::aimdb::{Event, Feed, FeedNotice, ValueText};

use schemascope_core::sync::lock;

use crate::result::ToolResult;
use crate::sources::{REFRESH_DEBOUNCE, ServeHook, Sources};

/// The live feeds of AimDB sources, and what is known about their connections.
pub struct LiveFeeds {
    sources: Arc<Sources>,
    /// One subscription feed per followed source.
    feeds: Mutex<Vec<(String, Feed)>>,
    /// The batch of AimDB feeds (the debounce `follow` was given), in milliseconds.
    batch_ms: AtomicU64,
    /// Serialises read-modify-write updates of AimDB sources, so no batch of values is lost.
    update: Mutex<()>,
    /// Whether AimDB sources are followed (so one that loads late is followed too).
    following: AtomicBool,
    /// Live AimDB sources whose connection is lost, with when it was lost.
    lost: Mutex<BTreeMap<String, DateTime<Utc>>>,
    /// What each followed source's feed said of floods and refused values.
    floods: Mutex<BTreeMap<String, Flood>>,
    /// This service, for the feeds' callbacks (which must not keep it alive).
    this: Weak<LiveFeeds>,
}

impl std::fmt::Debug for LiveFeeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveFeeds").field("following", &self.following).finish_non_exhaustive()
    }
}

impl ServeHook for LiveFeeds {
    /// A live source that loads while sources are followed (it failed at start-up) is followed.
    fn served(&self, name: &str) {
        if self.following.load(Ordering::SeqCst) {
            self.follow_source(name);
        }
    }

    /// A removed source's feed is dropped, which ends its subscription.
    fn removed(&self, name: &str) {
        // Dropped outside the lock: dropping joins the feed's threads, whose callbacks lock.
        let dropped: Vec<(String, Feed)> = {
            let mut feeds = lock(&self.feeds);
            let (gone, kept) =
                std::mem::take(&mut *feeds).into_iter().partition(|(f, _)| f == name);
            *feeds = kept;
            gone
        };
        drop(dropped);
        lock(&self.lost).remove(name);
        lock(&self.floods).remove(name);
    }
}

impl LiveFeeds {
    /// No feeds yet, over `sources` (which must have it as a [`ServeHook`]: see
    /// `Services::new`).
    pub fn new(sources: Arc<Sources>) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            sources,
            feeds: Mutex::new(Vec::new()),
            batch_ms: AtomicU64::new(u64::try_from(REFRESH_DEBOUNCE.as_millis()).unwrap_or(1000)),
            update: Mutex::new(()),
            following: AtomicBool::new(false),
            lost: Mutex::new(BTreeMap::new()),
            floods: Mutex::new(BTreeMap::new()),
            this: this.clone(),
        })
    }

    /// Adds `values` of record `key` to AimDB source `name` and serves the result.
    pub fn record_live_values(&self, name: &str, key: &str, values: Vec<ValueText>) {
        self.fold(name, values.into_iter().map(|v| (key.to_string(), v)).collect());
    }

    /// Adds `(record key, value)` pairs, oldest first, to AimDB source `name` in one update.
    fn fold(&self, name: &str, values: Vec<(String, ValueText)>) {
        // An instance named by its socket path is read afresh on every call, never served.
        if crate::sources::names_instance(name) {
            return;
        }
        let _one_at_a_time = lock(&self.update);
        let Ok(source) = self.sources.get(Some(name)) else { return };
        let Some(snapshot) = &source.aimdb else { return };
        let mut snapshot = (**snapshot).clone();
        for (key, value) in values {
            snapshot.push(&key, value);
        }
        self.sources.insert(snapshot.to_source(&source.spec));
    }

    /// Folds subscription events into AimDB source `name`. A subscription's first event that
    /// repeats the record's last known value is the server telling the current value on
    /// subscribe (2.x does for single-latest records), not a new value: it is not counted twice.
    fn fold_events(&self, name: &str, events: Vec<Event>) {
        let known_last = |key: &str| -> Option<ValueText> {
            let source = self.sources.get(Some(name)).ok()?;
            source.aimdb.as_ref()?.values(key).last().cloned()
        };
        let fresh = events
            .into_iter()
            .filter(|e| e.seq != 1 || known_last(&e.key).as_ref() != Some(&e.data))
            .map(|e| (e.key, e.data))
            .collect::<Vec<_>>();
        if !fresh.is_empty() {
            self.fold(name, fresh);
        }
    }

    /// Starts one subscription feed per AimDB source, folding values in at most every `batch`
    /// (also for AimDB sources that load later, see `failing.rs`).
    pub fn follow(&self, batch: Duration) {
        self.batch_ms.store(u64::try_from(batch.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
        if self.following.swap(true, Ordering::SeqCst) {
            return;
        }
        for source in self.sources.sources() {
            self.follow_source(source.name());
        }
    }

    /// Starts the subscription feed of source `name` (once), if it is a live AimDB source.
    fn follow_source(&self, name: &str) {
        let Ok(source) = self.sources.get(Some(name)) else { return };
        let Some(snapshot) = &source.aimdb else { return };
        let mut feeds = lock(&self.feeds);
        if feeds.iter().any(|(followed, _)| followed == name) {
            return;
        }
        let batch = Duration::from_millis(self.batch_ms.load(Ordering::SeqCst));
        let name = name.to_string();
        let keys: Vec<String> = snapshot.keys().into_iter().map(str::to_string).collect();
        let on_values = {
            let (feeds, name) = (self.this.clone(), name.clone());
            move |events: Vec<Event>| {
                let Some(feeds) = feeds.upgrade() else { return };
                feeds.fold_events(&name, events);
            }
        };
        let on_error = {
            let (feeds, name) = (self.this.clone(), name.clone());
            move |error: schemascope_sources::aimdb::AimxError| {
                let Some(feeds) = feeds.upgrade() else { return };
                tracing::warn!(source = name, %error, "live AimDB updates interrupted; reconnecting");
                feeds.sources.set_reload_error(
                    &name,
                    Some(format!("live updates interrupted, reconnecting: {error}")),
                );
                // The data is current up to the first failure, not the latest retry.
                lock(&feeds.lost).entry(name.clone()).or_insert_with(Utc::now);
            }
        };
        let on_notice = {
            let (feeds, name) = (self.this.clone(), name.clone());
            move |notice: FeedNotice| {
                let Some(feeds) = feeds.upgrade() else { return };
                lock(&feeds.floods).entry(name.clone()).or_default().note(notice);
            }
        };
        let on_connected = {
            let (feeds, name) = (self.this.clone(), name.clone());
            move || {
                let Some(feeds) = feeds.upgrade() else { return };
                feeds.sources.set_reload_error(&name, None);
                lock(&feeds.lost).remove(&name);
            }
        };
        feeds.push((
            name,
            Feed::start_with(
                snapshot.socket.clone(),
                keys,
                batch,
                on_values,
                on_error,
                on_connected,
                on_notice,
            ),
        ));
    }

    /// When the live connection of AimDB source `name` was lost, if it is lost now: its data is
    /// as of then.
    pub fn live_lost_since(&self, name: &str) -> Option<DateTime<Utc>> {
        lock(&self.lost).get(name).copied()
    }

    /// [`LiveFeeds::mark_data_age`] for the source a tool call named (`named`), or the only
    /// source served when it named none. Failed results are left as they are.
    pub fn mark_data_age_of(&self, named: Option<&str>, result: &mut ToolResult) {
        if !result.success || lock(&self.lost).is_empty() {
            return;
        }
        let name = match named {
            Some(name) => name.to_string(),
            None => match self.sources.names().as_slice() {
                [only] => only.clone(),
                _ => return,
            },
        };
        self.mark_data_age(&name, result);
    }

    /// Marks a result about AimDB source `name` with the age of its data when its live
    /// connection is lost (`dataAgeSeconds`, `dataAsOf`), so nobody takes old values for current.
    pub fn mark_data_age(&self, name: &str, result: &mut ToolResult) {
        let Some(since) = self.live_lost_since(name) else { return };
        let age = (Utc::now() - since).num_milliseconds().max(0) as f64 / 1000.0;
        let as_of = since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        if let Value::Object(data) = &mut result.data {
            data.insert("dataAgeSeconds".into(), Value::from(age));
            data.insert("dataAsOf".into(), Value::from(as_of.clone()));
        }
        result.message = format!(
            "{} (Live connection to `{name}` lost: data as of {as_of}, {age:.0} s old.)",
            result.message
        );
    }

    /// The values of each record of AimDB source `name`, oldest first (for tests and reports:
    /// each is parsed).
    pub fn live_values(&self, name: &str) -> BTreeMap<String, Vec<Value>> {
        let Ok(source) = self.sources.get(Some(name)) else { return BTreeMap::new() };
        let Some(snapshot) = &source.aimdb else { return BTreeMap::new() };
        snapshot
            .keys()
            .into_iter()
            .map(|k| (k.to_string(), snapshot.values(k).filter_map(|v| v.parse().ok()).collect()))
            .collect()
    }

    /// What list_sources says of the flood state of AimDB source `name`: `following`, or
    /// `throttled` (read slower than it sends, for the last few seconds) with the reason, and
    /// the values refused for their size or dropped while waiting, with the last reason.
    pub fn flood_state(&self, name: &str) -> Value {
        let floods = lock(&self.floods);
        let flood = floods.get(name);
        let throttled = flood
            .and_then(|f| f.throttled)
            .filter(|at| (Utc::now() - *at).num_milliseconds() < THROTTLE_SHOWN.as_millis() as i64);
        let mut state = match (throttled, flood) {
            (Some(at), Some(flood)) => serde_json::json!({
                "state": "throttled",
                "reason": format!(
                    "the instance sends more than the {}-byte/s bound (--aimdb-bytes-per-second): it is read no faster, so its values arrive late and it may drop some",
                    flood.bytes_per_second
                ),
                "throttledAt": at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            }),
            _ => serde_json::json!({"state": "following"}),
        };
        if let Some(flood) = flood {
            state["throttledTimes"] = flood.throttles.into();
            state["refusedValues"] = flood.refused.into();
            if let Some(reason) = &flood.last_refusal {
                state["lastRefusal"] = reason.clone().into();
            }
        }
        state
    }
}

/// How long after its last pause a source still shows as throttled.
const THROTTLE_SHOWN: Duration = Duration::from_secs(10);

/// What one source's feed said of floods.
#[derive(Debug, Default)]
struct Flood {
    /// When reading was last paused for the byte rate.
    throttled: Option<DateTime<Utc>>,
    /// How many times it was.
    throttles: u64,
    /// The rate bound, in bytes per second.
    bytes_per_second: u64,
    /// Values refused for their size or dropped while waiting.
    refused: u64,
    /// The last such refusal, said as its error says it.
    last_refusal: Option<String>,
}

impl Flood {
    fn note(&mut self, notice: FeedNotice) {
        match notice {
            FeedNotice::Throttled { bytes_per_second } => {
                self.throttled = Some(Utc::now());
                self.throttles += 1;
                self.bytes_per_second = bytes_per_second;
            }
            FeedNotice::Refused(error) => {
                self.refused += 1;
                self.last_refusal = Some(error.to_string());
            }
        }
    }
}
