//! list_sources: what is served, with collections, sizes and load warnings; and its last
//! answer, kept while nothing it shows can have changed ([`ListingMemo`]).

use std::sync::Mutex;

use schemascope_core::ProfileState;
use schemascope_core::profile::{CollectionProfile, ProfileNode};
use schemascope_core::sync::lock;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::params::ListSourcesParams;
use crate::result::{ToolResult, Written};
use crate::services::Services;
use crate::sources::Sources;

/// Warnings placed at a line shown per source when every source is listed: a file's bad lines
/// are held up to a thousand, which listed for every source would crowd out the sources.
pub(crate) const WARNINGS_SHOWN: usize = 20;

/// list_sources.
pub fn list_sources(services: &Services, params: ListSourcesParams) -> ToolResult {
    let mut pending: Vec<String> = Vec::new();
    let listed = match params.source.as_deref() {
        Some(name) => match services.sources.get(Some(name)) {
            Ok(source) => vec![source],
            Err(e) => return crate::result::envelope(Err(e)),
        },
        None => services.sources.sources(),
    };
    let every_warning = params.source.is_some();
    let mut warnings_cut = false;
    let sources: Vec<_> = listed
        .iter()
        .map(|s| {
            let collections: Vec<_> = s
                .collections
                .iter()
                .map(|c| {
                    // Never waits for a profile nor starts one: a table whose profile is not
                    // ready (a large table being scanned by another call) is listed with the
                    // catalog's columns and row count, and says where its profile stands.
                    let state = c.profile_state();
                    let properties = match (c.profile_ready(), c.table()) {
                        (Some(profile), _) => property_count(profile),
                        (None, Some(table)) => table.columns.len(),
                        (None, None) => c.profile().properties().len(),
                    };
                    let count = c.known_item_count().map_or(Value::Null, Into::into);
                    let mut entry = json!({"name": c.name(), "kind": c.kind(), "count": count, "properties": properties});
                    if c.count_is_estimate() {
                        entry["countIsEstimate"] = json!(true);
                    }
                    match state {
                        ProfileState::Ready => {}
                        // The first tool that needs it computes it; counts are the catalog's.
                        ProfileState::NotStarted => entry["profile"] = json!(state),
                        ProfileState::Computing | ProfileState::Retrying | ProfileState::Failed => {
                            entry["profile"] = json!(state);
                            pending.push(format!("`{}`.`{}` ({})", s.name(), c.name(), state_words(state)));
                        }
                    }
                    if c.sample_of().is_some() {
                        // A file profiled by streaming: its items are a uniform sample.
                        entry["itemsHeld"] = json!(c.len());
                    }
                    if let Some(table) = c.table() {
                        entry["relation"] = json!(table.kind);
                    }
                    if let Some(error) = c.profile_error() {
                        entry["profileError"] = json!(error);
                    }
                    if let Some(snapshot) = &s.aimdb {
                        // Every record of the instance, those without a value yet too, with its type.
                        entry["records"] = Value::from(snapshot
                            .records
                            .iter()
                            .filter_map(|m| schemascope_sources::aimdb::record_key(m).map(|k| (k, m)))
                            .map(|(k, m)| json!({"name": k, "values": snapshot.values(k).count(), "bytes": snapshot.record_bytes(k), "type": schemascope_sources::aimdb::type_name(m)}))
                            .collect::<Vec<_>>());
                    } else if c.kind() == schemascope_core::CollectionKind::Records {
                        entry["records"] =
                            Value::from(c.record_profiles().iter().map(|(k, p)| json!({"name": k, "values": p.item_count})).collect::<Vec<_>>());
                    }
                    entry
                })
                .collect();
            // `json!` would copy the collections through serde: they are moved in after.
            let mut entry = json!({
                "name": s.name(),
                "uri": s.spec.display_text(),
                "format": format!("{:?}", s.format).to_lowercase(),
                "resource": format!("schema://{}", s.name()),
                "bytes": s.bytes,
                "collections": null,
                "warnings": null,
                "reloadError": services.sources.reload_error(s.name()),
            });
            // Notes first (what was cut or estimated, in all): a capped answer keeps them.
            let (placed, notes): (Vec<_>, Vec<_>) = s.warnings.iter().partition(|w| w.line.is_some());
            let shown = if every_warning { placed.len() } else { placed.len().min(WARNINGS_SHOWN) };
            let kept: Vec<_> = notes.iter().chain(&placed[..shown]).collect();
            entry["warnings"] = json!(kept);
            if shown < placed.len() {
                entry["warningsNotShown"] = json!(placed.len() - shown);
                warnings_cut = true;
            }
            entry["collections"] = Value::from(collections);
            if let Some(description) = &s.spec.description {
                entry["description"] = json!(description);
            }
            let limits = &s.spec.limits;
            if *limits != schemascope_sources::SourceLimits::default() {
                let mut shown = serde_json::Map::new();
                for (key, value) in [
                    ("maxRows", limits.max_rows),
                    ("maxBytes", limits.max_bytes),
                    ("timeoutMs", limits.timeout_ms),
                    ("memoryBudget", limits.memory_budget.map(|b| b as u64)),
                ] {
                    if let Some(value) = value {
                        shown.insert(key.into(), json!(value));
                    }
                }
                entry["limits"] = Value::Object(shown);
            }
            if s.aimdb.is_some() {
                // Whether the values are live, or as of when the connection was lost.
                let mut live = match services.live.live_lost_since(s.name()) {
                    None => json!({"connected": true}),
                    Some(since) => json!({
                        "connected": false,
                        "dataAsOf": since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        "dataAgeSeconds": (chrono::Utc::now() - since).num_milliseconds().max(0) as f64 / 1000.0,
                    }),
                };
                // Whether a flood is being slowed, and what was refused for its size.
                if let (Value::Object(live), Value::Object(flood)) = (&mut live, services.live.flood_state(s.name())) {
                    live.extend(flood);
                    if live.get("connected") == Some(&Value::Bool(false)) {
                        live.insert("state".into(), json!("lost"));
                    }
                }
                entry["live"] = live;
            }
            if let Some(snapshot) = &s.aimdb {
                // What a live AimDB source is connected to: the instance and what it allows.
                entry["aimdb"] = json!({
                    "heldBytes": snapshot.held_bytes(),
                    "evictedValues": snapshot.evicted(),
                    "refusedValues": snapshot.refused(),
                    "limits": snapshot.limits(),
                    "socket": snapshot.socket,
                    "protocol": snapshot.protocol,
                    "server": snapshot.welcome.get("server"),
                    "permissions": snapshot.welcome.get("permissions"),
                    "writable_records": snapshot.welcome.get("writable_records"),
                });
            }
            entry
        })
        .collect();
    let names: Vec<String> = services.sources.names();
    let failed = services.sources.failed_sources();
    let mut message = if names.is_empty() {
        "No source is served.".to_string()
    } else if let Some(name) = &params.source {
        format!("Source `{name}` of {}: {}.", names.len(), names.join(", "))
    } else {
        format!("{} source(s): {}.", names.len(), names.join(", "))
    };
    if warnings_cut {
        message.push_str(&format!(
            " Sources with more than {WARNINGS_SHOWN} warnings at lines show the first (`warningsNotShown` counts the rest): list_sources with `source` lists all of one."
        ));
    }
    if !failed.is_empty() {
        let listed: Vec<String> = failed
            .iter()
            .map(|f| {
                format!("`{}` ({}; next retry in {:.1} s)", f.spec.name, f.error, f.retry_in())
            })
            .collect();
        message.push_str(&format!(
            " {} failed to load and are retried: {}.",
            failed.len(),
            listed.join("; ")
        ));
    }
    if !pending.is_empty() {
        message.push_str(&format!(
            " Profiles not ready (counts are the catalog's until they are): {}.",
            pending.join(", ")
        ));
    }
    let config_error = services.sources.config_error();
    if let Some(error) = &config_error {
        message.push_str(&format!(
            " The configuration file's last edit was not applied ({error}); these are the sources of the last good one."
        ));
    }
    let dirs = services.sources.aimdb_dirs();
    if !dirs.is_empty() {
        let listed: Vec<String> =
            dirs.dirs().iter().map(|d| d.path.display().to_string()).collect();
        message.push_str(&format!(
            " AimDB instances in {} can be named by socket path as `source`: discover_instances lists them.",
            listed.join(", ")
        ));
    }
    let failed: Vec<_> =
        failed.iter().map(crate::sources::failing::FailedSource::describe).collect();
    let mut data = serde_json::Map::with_capacity(4);
    if !dirs.is_empty() {
        data.insert("aimdbDirs".into(), json!(dirs.dirs()));
    }
    data.insert("sources".into(), Value::from(sources));
    data.insert("failed".into(), Value::from(failed));
    if let Some(error) = config_error {
        data.insert("configError".into(), Value::from(error));
    }
    ToolResult::ok(message, Value::Object(data))
}

/// The properties of `profile` (`properties().len()`: every node below its root), counted
/// without listing them: a flat table's columns allocate nothing.
fn property_count(profile: &CollectionProfile) -> usize {
    let mut count = 0;
    let mut deeper: Vec<&ProfileNode> = Vec::new();
    let mut node = &profile.root;
    loop {
        count += node.children.len() + usize::from(node.items.is_some());
        deeper.extend(
            node.children
                .iter()
                .chain(node.items.as_deref())
                .filter(|n| !n.children.is_empty() || n.items.is_some()),
        );
        match deeper.pop() {
            Some(next) => node = next,
            None => return count,
        }
    }
}

/// A profile's state in words, for the answer's message.
fn state_words(state: ProfileState) -> &'static str {
    match state {
        ProfileState::Ready => "ready",
        ProfileState::Computing => "being computed",
        ProfileState::NotStarted => "computed when a tool first needs it",
        ProfileState::Retrying => "its last attempt failed or was stopped; retried on next use",
        ProfileState::Failed => "its last attempt failed; the columns profiled before are shown",
    }
}

/// True when `arguments` are none (`null` or `{}`), the only ones list_sources answers the same
/// for every time (any other is refused, naming the parameter).
pub(crate) fn takes_no_arguments(arguments: &Value) -> bool {
    match arguments {
        Value::Null => true,
        Value::Object(members) => members.is_empty(),
        _ => false,
    }
}

/// Everything list_sources' answer depends on that can change while the served sources do not
/// (the sources themselves are the generation: any reload changes it).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    generation: u64,
    max_result_bytes: usize,
    /// Each source's last reload error, by name.
    reload_errors: Vec<Option<String>>,
    /// Each collection's profile state, source by source: a table whose profile starts, finishes
    /// or fails is listed differently.
    states: Vec<ProfileState>,
}

/// The stamp of the data now, or `None` when an answer made now must not be kept: one naming a
/// failed source (its next retry counts down), a live AimDB source (its values and connection
/// change without a reload), or a profile under way or to be retried (its counts and error move
/// while it runs).
fn stamp(services: &Services) -> Option<Stamp> {
    let sources = &services.sources;
    if !sources.failed_sources().is_empty() {
        return None;
    }
    // Read before the sources: a reload in between makes this stamp an old one, never kept
    // for the new data.
    let generation = sources.generation();
    let served = sources.sources();
    let mut states = Vec::new();
    let mut reload_errors = Vec::with_capacity(served.len());
    for source in &served {
        if source.aimdb.is_some() {
            return None;
        }
        reload_errors.push(sources.reload_error(source.name()));
        for collection in &source.collections {
            let state = collection.profile_state();
            if matches!(state, ProfileState::Computing | ProfileState::Retrying) {
                return None;
            }
            states.push(state);
        }
    }
    Some(Stamp { generation, max_result_bytes: services.max_result_bytes(), reload_errors, states })
}

/// list_sources' last answer with the stamp of the data it was made from. Building and writing
/// the answer costs milliseconds on hundreds of tables; an MCP client may call it every turn.
/// The answer is given again, the same bytes, while the stamp of the data is the same and the
/// sources have announced no change since (a finished profile is announced).
#[derive(Debug)]
pub(crate) struct ListingMemo {
    inner: Mutex<Kept>,
}

#[derive(Debug)]
struct Kept {
    /// The sources' change broadcast: any change announced forgets the answer.
    changes: broadcast::Receiver<String>,
    answer: Option<(Stamp, Written)>,
}

impl ListingMemo {
    /// Nothing kept yet; changes of `sources` followed from now.
    pub(crate) fn new(sources: &Sources) -> Self {
        Self { inner: Mutex::new(Kept { changes: sources.subscribe(), answer: None }) }
    }

    /// The kept answer, if it still holds; else the stamp to keep a new answer under (`None`
    /// when a new answer must not be kept).
    pub(crate) fn recall(&self, services: &Services) -> Result<Written, Option<Stamp>> {
        let mut kept = lock(&self.inner);
        loop {
            match kept.changes.try_recv() {
                Err(
                    broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed,
                ) => break,
                // A change, or more than the channel holds.
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => kept.answer = None,
            }
        }
        let now = stamp(services);
        match (&kept.answer, now) {
            (Some((then, written)), Some(now)) if *then == now => Ok(written.clone()),
            (_, now) => Err(now),
        }
    }

    /// Keeps `written`, made from data stamped `stamp`, when it is a successful answer.
    pub(crate) fn keep(&self, stamp: Stamp, written: &Written) {
        if written.success {
            lock(&self.inner).answer = Some((stamp, written.clone()));
        }
    }
}
