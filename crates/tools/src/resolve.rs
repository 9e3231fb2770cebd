//! Finding what a call names: the collection(s) and record it is about, with errors that list
//! what exists and suggest the closest name.

use std::sync::Arc;

use schemascope_core::suggest::closest;
use schemascope_core::{Collection, CollectionKind, CollectionProfile};
use schemascope_sources::Source;

use crate::result::ToolError;

/// Most record names listed in an error.
const MAX_LISTED: usize = 50;

fn unknown_collection(source: &Source, name: &str) -> ToolError {
    let names = source.collection_names();
    let hint = closest(name, names.iter().copied(), 1).first().map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default();
    ToolError::UnknownCollection(format!("Source `{}` has no collection `{name}`.{hint} Available collections: {}", source.name(), names.join(", ")))
}

/// The collection a single-collection tool works on: the one named, else `nodes` for a graph,
/// else the first. A record key given as the collection resolves to its record set.
pub fn one<'a>(source: &'a Source, name: Option<&str>) -> Result<(&'a Arc<Collection>, Option<String>), ToolError> {
    match name {
        None => source
            .collection("nodes")
            .or_else(|| source.collections.first())
            .map(|c| (c, None))
            .ok_or_else(|| ToolError::UnknownCollection(format!("source `{}` has no collections", source.name()))),
        Some(name) => {
            if let Some(c) = source.collection(name) {
                return Ok((c, None));
            }
            if let Some(c) = source.collections.iter().find(|c| c.kind() == CollectionKind::Records && c.record_profile(name).is_some()) {
                return Ok((c, Some(name.to_string())));
            }
            Err(unknown_collection(source, name))
        }
    }
}

/// The collections a multi-collection tool works on: all, for none/`both`/`all`.
pub fn many(source: &Source, name: Option<&str>) -> Result<Vec<Arc<Collection>>, ToolError> {
    match name {
        None | Some("both" | "all" | "*") => Ok(source.collections.clone()),
        Some(name) => one(source, Some(name)).map(|(c, _)| vec![c.clone()]),
    }
}

/// The record set holding `record`, or an error listing the records there are.
pub fn record<'a>(
    source: &'a Source,
    collection: Option<&Arc<Collection>>,
    record: &str,
) -> Result<(&'a Arc<Collection>, &'a CollectionProfile), ToolError> {
    let candidates: Vec<&Arc<Collection>> = source.collections.iter().filter(|c| collection.is_none_or(|wanted| Arc::ptr_eq(c, wanted))).collect();
    for c in &candidates {
        if let Some(profile) = c.record_profile(record) {
            return Ok((c, profile));
        }
    }
    let names: Vec<&str> =
        candidates.iter().filter(|c| c.kind() == CollectionKind::Records).flat_map(|c| c.record_profiles().iter().map(|(k, _)| k.as_str())).collect();
    if names.is_empty() {
        return Err(ToolError::UnknownRecord(format!(
            "Record '{record}' not found: source `{}` has no record sets (its collections: {}). Omit record_name to use a whole collection.",
            source.name(),
            source.collection_names().join(", ")
        )));
    }
    let hint = closest(record, names.iter().copied(), 1).first().map(|s| format!(" Did you mean '{s}'?")).unwrap_or_default();
    let listed: Vec<&str> = names.iter().copied().take(MAX_LISTED).collect();
    let more = if names.len() > MAX_LISTED { format!(" (+{} more)", names.len() - MAX_LISTED) } else { String::new() };
    Err(ToolError::UnknownRecord(format!("Record '{record}' not found.{hint}\n\nAvailable records:\n- {}{more}", listed.join("\n- "))))
}
