//! Where else a property one collection lacks can be found, so a "not found" answer says where
//! to ask instead: another collection of the same source (a node property asked on the edges, a
//! column of another table), another record of the same record set, and for a graph the
//! algorithm that writes it.

use std::sync::Arc;

use schemascope_core::suggest::closest;
use schemascope_core::{Collection, CollectionKind, PropertyPath};
use schemascope_graph_session::style::ElementKind;
use schemascope_sources::Source;
use serde_json::{Value, json};

use crate::graph_session::hints::algorithm_hint;
use crate::graph_session::state::AlgorithmRun;

/// Most other records named as holding the property.
const MAX_RECORDS: usize = 5;

/// What was found elsewhere: the places (`{collection, path, record_name?, exact}`) and one
/// sentence per place or hint, for the answer's message.
#[derive(Debug, Default)]
pub(crate) struct Elsewhere {
    /// Where the property (or, failing that, the closest name) is.
    pub places: Vec<Value>,
    /// Sentences for the message.
    pub sentences: Vec<String>,
}

/// Whether `collection` has `path`, without profiling a table for it: a table not profiled yet
/// answers from its catalog columns.
fn has_path(collection: &Collection, path: &PropertyPath) -> bool {
    if let Some(profile) = if collection.holds_items() {
        Some(collection.profile())
    } else {
        collection.profile_ready()
    } {
        return profile.property(path).is_some();
    }
    let column = path.last_key().filter(|_| path.depth() == 1);
    collection
        .table()
        .zip(column)
        .is_some_and(|(table, column)| table.columns.iter().any(|c| c.name == column))
}

/// The property names of `collection` known without profiling it.
fn known_names(collection: &Collection) -> Vec<String> {
    match if collection.holds_items() {
        Some(collection.profile())
    } else {
        collection.profile_ready()
    } {
        Some(profile) => profile.properties().iter().map(|p| p.path.to_string()).collect(),
        None => collection
            .table()
            .map(|t| t.columns.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default(),
    }
}

/// Where `path`, missing from `collection` (or from its record `record`), is found in the rest
/// of `source`: the exact path first; only when no collection has it, the closest name in each.
/// `history` is the graph session's runs, if any (see [`algorithm_hint`]).
pub(crate) fn find(
    source: &Source,
    collection: &Arc<Collection>,
    record: Option<&str>,
    path: &PropertyPath,
    history: &[AlgorithmRun],
) -> Elsewhere {
    let wanted = path.to_string();
    let mut out = Elsewhere::default();
    let others: Vec<&Arc<Collection>> =
        source.collections.iter().filter(|c| !Arc::ptr_eq(c, collection)).collect();
    for other in others.iter().filter(|c| has_path(c, path)) {
        out.places.push(json!({"collection": other.name(), "path": wanted, "exact": true}));
        out.sentences.push(format!(
            "'{wanted}' is a property of the {} (collection `{}`): ask describe_property with collection `{}`.",
            other.kind().items_noun(),
            other.name(),
            other.name()
        ));
    }
    if let Some(record) = record.filter(|_| collection.kind() == CollectionKind::Records) {
        let holding: Vec<&str> = collection
            .record_profiles()
            .iter()
            .filter(|(key, p)| key != record && p.property(path).is_some())
            .map(|(key, _)| key.as_str())
            .collect();
        for key in holding.iter().take(MAX_RECORDS) {
            out.places.push(json!({"collection": collection.name(), "record_name": key, "path": wanted, "exact": true}));
        }
        if !holding.is_empty() {
            let listed: Vec<String> =
                holding.iter().take(MAX_RECORDS).map(|k| format!("`{k}`")).collect();
            let more = holding.len().saturating_sub(MAX_RECORDS);
            let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
            out.sentences.push(format!(
                "'{wanted}' is a property of record {}{more}: ask with that record_name.",
                listed.join(", ")
            ));
        }
    }
    if out.places.is_empty() {
        for other in &others {
            if let Some(near) = closest(&wanted, known_names(other).iter().map(String::as_str), 1)
                .into_iter()
                .next()
            {
                out.sentences.push(format!(
                    "The {} (collection `{}`) have '{near}'.",
                    other.kind().items_noun(),
                    other.name()
                ));
                out.places.push(json!({"collection": other.name(), "path": near, "exact": false}));
            }
        }
    }
    let kind = match collection.kind() {
        CollectionKind::Nodes => Some(ElementKind::Node),
        CollectionKind::Edges => Some(ElementKind::Edge),
        _ => None,
    };
    out.sentences.extend(kind.and_then(|kind| algorithm_hint(source, kind, &wanted, history)));
    out
}
