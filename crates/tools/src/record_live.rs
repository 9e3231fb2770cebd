//! query_schema and validate_value on a live AimDB record: the schema is merged over the
//! record's recent values (those the source has seen) plus its current value and the values it
//! produces within a bounded window, so optional fields, type unions, enums and ranges show up
//! where a single value would hide them. AimDB's own `query_schema` inferred from one value.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use schemascope_core::ceilings::Ceiling;
use schemascope_core::suggest::closest;
use schemascope_core::{CollectionProfile, ProfileBuilder};
use schemascope_sources::Source;
use schemascope_sources::aimdb::{
    self, DEFAULT_TIMEOUT, HISTORY, Match, SampleOptions, Snapshot, ValueText,
};

use crate::result::ToolError;
use crate::services::Services;

/// Values merged by default.
pub(crate) const DEFAULT_SAMPLES: usize = 20;
/// How long to wait for more values by default.
pub(crate) const DEFAULT_WINDOW_MS: u64 = 1_000;

/// A record's values gathered for one call.
pub(crate) struct Merged {
    /// The record key.
    pub key: String,
    /// The record's metadata from `record.list`.
    pub metadata: Value,
    /// The values merged, oldest first, as JSON text (a tree of each could cost 100 times it).
    pub values: Vec<ValueText>,
    /// The profile of `values`.
    pub profile: CollectionProfile,
    /// What the values are: counts by origin and the window used.
    pub sampling: Value,
}

/// The record a call names on a live source: `record_name`, else `collection` when it is not
/// one of the source's collections (the CLI passes its target there). Naming neither (or only
/// the record set) means the only record; with several, an error lists them, as each record has
/// its own schema. `None`: the call is about another collection, or the instance has no records.
pub(crate) fn named(
    source: &Source,
    snapshot: &Snapshot,
    collection: Option<&str>,
    record: Option<&str>,
) -> Result<Option<String>, ToolError> {
    if let Some(name) = record.or(collection.filter(|c| source.collection(c).is_none())) {
        return Ok(Some(name.to_string()));
    }
    let set = source.collections.first().map(|c| c.name()).unwrap_or_default();
    if collection.is_some_and(|c| c != set) {
        return Ok(None);
    }
    match snapshot.keys().as_slice() {
        [] => Ok(None),
        [key] => Ok(Some((*key).to_string())),
        keys => Err(crate::resolve::record_required(source, set, keys)),
    }
}

/// The key of the record called `name` (its key, or its Rust type name), or an error listing the
/// records there are.
pub(crate) fn key<'a>(
    snapshot: &'a Snapshot,
    source: &Source,
    name: &str,
) -> Result<&'a str, ToolError> {
    match snapshot.find(name) {
        Match::Key(key) => Ok(key),
        Match::Ambiguous(keys) => Err(ToolError::UnknownRecord(format!(
            "'{name}' is the type of several records ({}); name one by its record key.",
            keys.join(", ")
        ))),
        Match::None => {
            let keys = snapshot.keys();
            let names =
                keys.iter().copied().chain(snapshot.records.iter().filter_map(aimdb::type_name));
            let hint = closest(name, names, 1)
                .first()
                .map(|s| format!(" Did you mean '{s}'?"))
                .unwrap_or_default();
            let listed: Vec<String> = snapshot
                .records
                .iter()
                .filter_map(|m| aimdb::record_key(m).map(|k| (k, aimdb::type_name(m))))
                .map(|(k, t)| match t {
                    Some(t) if t != k => format!("{k} (type {t})"),
                    _ => k.to_string(),
                })
                .collect();
            Err(ToolError::UnknownRecord(format!(
                "Record '{name}' not found in AimDB source `{}`.{hint}\n\nAvailable records:\n- {}",
                source.name(),
                listed.join("\n- ")
            )))
        }
    }
}

/// How many live values to merge over and how long to wait for them: what the call asked for
/// within the operator's ceilings, or the defaults. Checked for every source, live or not, so a
/// number past its ceiling is refused the same everywhere.
pub(crate) fn sampling(
    samples: Option<usize>,
    window_ms: Option<u64>,
) -> Result<(usize, u64), ToolError> {
    let samples = Ceiling::Samples.admit_usize(samples, DEFAULT_SAMPLES)?;
    if !(1..=HISTORY).contains(&samples) {
        return Err(ToolError::InvalidParams(format!(
            "`samples` must be between 1 and {HISTORY}, not {samples}"
        )));
    }
    Ok((samples, Ceiling::WindowMs.admit(window_ms, DEFAULT_WINDOW_MS)?))
}

/// Gathers the values of record `name`: the last ones the source has seen, then the current value
/// and what the record produces within the window, until `samples` values are known. New values
/// are folded into the source, so the source's other tools see them too.
pub(crate) fn merge(
    services: &Services,
    source: &Arc<Source>,
    snapshot: &Snapshot,
    name: &str,
    samples: Option<usize>,
    window_ms: Option<u64>,
) -> Result<Merged, ToolError> {
    let key = key(snapshot, source, name)?.to_string();
    let (samples, window_ms) = sampling(samples, window_ms)?;
    let mut values: Vec<ValueText> = snapshot.values(&key).cloned().collect();
    let seen = values.len();
    // Always ask the instance: its current value, and the window only while values are missing.
    let window = if seen >= samples { Duration::ZERO } else { Duration::from_millis(window_ms) };
    // The current value is most likely the last one seen, so it is asked for on top of those missing.
    let wanted = samples.saturating_sub(seen) + usize::from(seen > 0);
    let sampled = aimdb::sample(
        &snapshot.socket,
        &key,
        SampleOptions { samples: wanted, window, timeout: DEFAULT_TIMEOUT },
    )?;
    let mut fresh = Vec::new();
    // The current value is usually the last one seen already: count it once.
    if let Some(current) = &sampled.current
        && values.last() != Some(current)
    {
        fresh.push(current.clone());
    }
    fresh.extend(sampled.drained.iter().cloned());
    values.extend(fresh.iter().cloned());
    if !fresh.is_empty() {
        services.live.record_live_values(source.name(), &key, fresh.clone());
    }
    if values.len() > samples {
        values.drain(..values.len() - samples);
    }
    if values.is_empty() {
        return Err(ToolError::NoValues(format!(
            "Record '{key}' exists but has no value yet: none was produced within {window_ms} ms. Retry with a longer window_ms once its producer runs."
        )));
    }
    let mut builder = ProfileBuilder::new();
    for value in &values {
        // Read from the instance as JSON; what the profiler refuses (nesting past its limit)
        // is left out of the schema.
        let _ = builder.add_json(value.as_str());
    }
    let profile = builder.finish(values.len() as u64);
    let from_history = values.len().saturating_sub(fresh.len().min(values.len()));
    let sampling = json!({
        "samples": samples,
        "window_ms": window_ms,
        "seen_before": from_history,
        "current": sampled.current.is_some(),
        "produced_in_window": sampled.drained.len(),
        "waited_ms": u64::try_from(sampled.waited.as_millis()).unwrap_or(u64::MAX),
        "protocol": snapshot.protocol,
    });
    let metadata = snapshot.metadata(&key).cloned().unwrap_or(Value::Null);
    Ok(Merged { key, metadata, values, profile, sampling })
}
