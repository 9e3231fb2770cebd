//! list_sources: what is served, with collections, sizes and load warnings.

use schemascope_core::ProfileState;
use schemascope_core::profile::{CollectionProfile, ProfileNode};
use serde_json::{Value, json};

use crate::params::ListSourcesParams;
use crate::result::ToolResult;
use crate::services::Services;

/// list_sources.
pub fn list_sources(services: &Services, _params: ListSourcesParams) -> ToolResult {
    let mut pending: Vec<String> = Vec::new();
    let sources: Vec<_> = services
        .sources
        .sources()
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
                "warnings": s.warnings,
                "reloadError": services.sources.reload_error(s.name()),
            });
            entry["collections"] = Value::from(collections);
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
    let mut message = format!("{} source(s): {}.", names.len(), names.join(", "));
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
    let failed: Vec<_> =
        failed.iter().map(crate::sources::failing::FailedSource::describe).collect();
    let mut data = serde_json::Map::with_capacity(2);
    data.insert("sources".into(), Value::from(sources));
    data.insert("failed".into(), Value::from(failed));
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
