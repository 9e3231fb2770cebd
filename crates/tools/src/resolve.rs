//! Finding what a call names: the collection(s) and record it is about, with errors that list
//! what exists and suggest the closest name.

use std::sync::Arc;

use schemascope_core::suggest::closest;
use schemascope_core::{Collection, CollectionKind, CollectionProfile};
use schemascope_sources::Source;

use crate::result::ToolError;

/// Most record names listed in an error.
pub(crate) const MAX_LISTED: usize = 50;

/// The error for a collection name that is neither a collection nor (a collection naming a
/// record's set) a record: both are listed and suggested from.
fn unknown_collection(source: &Source, name: &str) -> ToolError {
    let names = source.collection_names();
    let records: Vec<&str> = source
        .collections
        .iter()
        .filter(|c| c.kind() == CollectionKind::Records)
        .flat_map(|c| c.record_profiles().iter().map(|(k, _)| k.as_str()))
        .collect();
    let hint = schemascope_core::suggest::did_you_mean(
        name,
        names.iter().copied().chain(records.iter().copied()),
    );
    let mut message = format!(
        "Source `{}` has no collection `{name}`.{hint} Available collections: {}",
        source.name(),
        names.join(", ")
    );
    if !records.is_empty() {
        let listed: Vec<&str> = records.iter().copied().take(MAX_LISTED).collect();
        let more = if records.len() > MAX_LISTED {
            format!(" (+{} more)", records.len() - MAX_LISTED)
        } else {
            String::new()
        };
        message.push_str(&format!("; records: {}{more}", listed.join(", ")));
    }
    ToolError::UnknownCollection(message)
}

/// The collection a single-collection tool works on: the one named, else `nodes` for a graph,
/// else the first. A record key given as the collection resolves to its record set.
pub(crate) fn one<'a>(
    source: &'a Source,
    name: Option<&str>,
) -> Result<(&'a Arc<Collection>, Option<String>), ToolError> {
    match name {
        None => source
            .collection("nodes")
            .or_else(|| source.collections.first())
            .map(|c| (c, None))
            .ok_or_else(|| {
                ToolError::UnknownCollection(format!(
                    "source `{}` has no collections",
                    source.name()
                ))
            }),
        Some(name) => {
            if let Some(c) = source.collection(name) {
                return Ok((c, None));
            }
            for c in source.collections.iter().filter(|c| c.kind() == CollectionKind::Records) {
                if let Some(key) = key_in(c, name)? {
                    return Ok((c, Some(key)));
                }
            }
            Err(unknown_collection(source, name))
        }
    }
}

/// The collections a multi-collection tool works on: all, for none/`both`/`all`.
pub(crate) fn many(source: &Source, name: Option<&str>) -> Result<Vec<Arc<Collection>>, ToolError> {
    match name {
        None | Some("both" | "all" | "*") => Ok(source.collections.clone()),
        Some(name) => one(source, Some(name)).map(|(c, _)| vec![c.clone()]),
    }
}

/// The key of the record called `name` in record set `c`: `name` itself when it is a key, else
/// the key of the only record whose metadata gives `name` as its type (`name` in AimDB's record
/// metadata is the Rust type name, which AimDB's own tools mistook for the key).
pub(crate) fn key_in(c: &Collection, name: &str) -> Result<Option<String>, ToolError> {
    if c.record_profile(name).is_some() {
        return Ok(Some(name.to_string()));
    }
    let mut keys: Vec<&str> = Vec::new();
    for item in c.items() {
        let typed = item
            .metadata()
            .is_some_and(|m| m.get("name").and_then(serde_json::Value::as_str) == Some(name));
        if typed && !keys.contains(&item.id) {
            keys.push(item.id);
        }
    }
    match keys.as_slice() {
        [] => Ok(None),
        [key] => Ok(Some((*key).to_string())),
        _ => Err(ToolError::UnknownRecord(format!(
            "'{name}' is the type of several records ({}); name one by its record key.",
            keys.join(", ")
        ))),
    }
}

/// A record found by [`record`].
pub(crate) struct FoundRecord<'a> {
    /// Its record set.
    pub collection: &'a Arc<Collection>,
    /// Its key (the name asked for, or the key of the record of that type).
    pub key: String,
    /// The profile of its values.
    pub profile: &'a CollectionProfile,
}

/// The record set holding `record` (by key, else by type name), or an error listing the records
/// there are.
pub(crate) fn record<'a>(
    source: &'a Source,
    collection: Option<&Arc<Collection>>,
    record: &str,
) -> Result<FoundRecord<'a>, ToolError> {
    let candidates: Vec<&Arc<Collection>> = source
        .collections
        .iter()
        .filter(|c| collection.is_none_or(|wanted| Arc::ptr_eq(c, wanted)))
        .collect();
    for c in &candidates {
        if let Some(key) = key_in(c, record)?
            && let Some(profile) = c.record_profile(&key)
        {
            return Ok(FoundRecord { collection: c, key, profile });
        }
    }
    let names: Vec<&str> = candidates
        .iter()
        .filter(|c| c.kind() == CollectionKind::Records)
        .flat_map(|c| c.record_profiles().iter().map(|(k, _)| k.as_str()))
        .collect();
    if names.is_empty() {
        return Err(ToolError::UnknownRecord(format!(
            "Record '{record}' not found: source `{}` has no record sets (its collections: {}). Omit record_name to use a whole collection.",
            source.name(),
            source.collection_names().join(", ")
        )));
    }
    let hint = closest(record, names.iter().copied(), 1)
        .first()
        .map(|s| format!(" Did you mean '{s}'?"))
        .unwrap_or_default();
    let listed: Vec<&str> = names.iter().copied().take(MAX_LISTED).collect();
    let more = if names.len() > MAX_LISTED {
        format!(" (+{} more)", names.len() - MAX_LISTED)
    } else {
        String::new()
    };
    Err(ToolError::UnknownRecord(format!(
        "Record '{record}' not found.{hint}\n\nAvailable records:\n- {}{more}",
        listed.join("\n- ")
    )))
}

/// The error for a call that needs one record of a record set holding several (`keys`, in the
/// set's order): merging them would describe no record at all.
pub(crate) fn record_required(source: &Source, set: &str, keys: &[&str]) -> ToolError {
    let listed: Vec<String> = keys.iter().take(MAX_LISTED).map(|k| (*k).to_string()).collect();
    let more = if keys.len() > MAX_LISTED {
        format!("\n(+{} more)", keys.len() - MAX_LISTED)
    } else {
        String::new()
    };
    let message = format!(
        "Record set `{set}` of source `{}` holds {} records, each with its own schema; name one with record_name (on the CLI, as the target).\n\nAvailable records:\n- {}{more}",
        source.name(),
        keys.len(),
        listed.join("\n- ")
    );
    ToolError::RecordRequired { message, records: listed }
}
