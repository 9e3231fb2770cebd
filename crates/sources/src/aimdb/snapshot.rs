//! An AimDB instance's records as a record set: the metadata `record.list` gives, the current
//! value of each record from `record.get`, and a bounded history of the values seen since (by
//! subscription or sampling), rebuilt into a [`Source`] whenever it changes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemascope_core::{Collection, CollectionKind, ItemEntry, ItemId, ProfileBuilder};
use serde_json::Value;

use super::client::AimxClient;
use super::error::AimxError;
use super::limits::{Limits, limits};
use super::value_text::ValueText;
use super::wire::Protocol;
use crate::error::LoadWarning;
use crate::source::Source;
use crate::spec::{Format, SourceSpec};

/// Values kept per record at most, whatever their size: enough for the merged schema and
/// property statistics over recent values. The byte bounds of [`Limits`] hold as well.
pub const HISTORY: usize = 100;

/// The records of one instance with their recent values, within the bounds of [`Limits`]: each
/// value at most `max_value_bytes`, each record's at most [`HISTORY`] and `record_bytes`, all of
/// them at most `source_bytes`; past a bound the oldest values go first.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The socket it was read from.
    pub socket: PathBuf,
    /// The protocol the instance speaks.
    pub protocol: Protocol,
    /// The instance's welcome.
    pub welcome: Value,
    /// Every record's metadata, in the server's order.
    pub records: Vec<Value>,
    /// Recent values per record key, oldest first.
    values: HashMap<String, History>,
    /// Values added per record key since the fetch: tells a record that changed from one that
    /// did not when the source is replaced.
    added: HashMap<String, u64>,
    /// The arrival number of every value kept, with its record key: the source's oldest first.
    order: BTreeMap<u64, Arc<str>>,
    /// The next arrival number.
    next: u64,
    /// Bytes of all values kept.
    held: u64,
    /// Values dropped to stay within the bounds, and values refused for their size.
    evicted: u64,
    refused: u64,
    /// Why values were refused when the instance was read (load warnings).
    notes: Vec<String>,
    /// The bounds, as when the instance was read.
    limits: Limits,
}

/// One record's kept values, oldest first, each with its arrival number.
#[derive(Debug, Clone, Default)]
struct History {
    values: VecDeque<(u64, ValueText)>,
    bytes: u64,
}

/// How a name given by a caller matched a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match<'a> {
    /// The record with this key (the name was its key, or the type name of exactly this record).
    Key(&'a str),
    /// The name is the type name of several records: these keys.
    Ambiguous(Vec<&'a str>),
    /// Nothing is called that.
    None,
}

/// The `record_key` of a metadata object.
pub fn record_key(metadata: &Value) -> Option<&str> {
    metadata.get("record_key").and_then(Value::as_str)
}

/// The Rust type name (`name`) of a metadata object.
pub fn type_name(metadata: &Value) -> Option<&str> {
    metadata.get("name").and_then(Value::as_str)
}

/// Whether a metadata object says its record may be set remotely (`writable`).
pub fn writable(metadata: &Value) -> bool {
    metadata.get("writable").and_then(Value::as_bool).unwrap_or(false)
}

impl Snapshot {
    /// Reads the records and their current values from the instance at `socket`. A value over
    /// the bounds is refused with a load warning, not the whole instance.
    pub fn fetch(socket: &Path, timeout: Duration) -> Result<Self, AimxError> {
        let mut client = AimxClient::connect(socket, timeout)?;
        let records = client.list_records()?;
        let mut snapshot = Self {
            socket: socket.to_path_buf(),
            protocol: client.protocol(),
            welcome: client.welcome().clone(),
            values: records
                .iter()
                .filter_map(record_key)
                .map(|key| (key.to_string(), History::default()))
                .collect(),
            records,
            added: HashMap::new(),
            order: BTreeMap::new(),
            next: 0,
            held: 0,
            evicted: 0,
            refused: 0,
            notes: Vec::new(),
            limits: limits(),
        };
        let keys: Vec<String> = snapshot.keys().into_iter().map(str::to_string).collect();
        for key in keys {
            match client.get(&key) {
                Ok(Some(value)) => snapshot.keep(&key, value),
                Ok(None) => {}
                Err(error @ (AimxError::ValueTooLarge { .. } | AimxError::LineTooLong { .. })) => {
                    snapshot.refused += 1;
                    snapshot.notes.push(format!("record `{key}`: {error}"));
                }
                Err(error) => return Err(error),
            }
        }
        Ok(snapshot)
    }

    /// Record keys, in the server's order.
    pub fn keys(&self) -> Vec<&str> {
        self.records.iter().filter_map(record_key).collect()
    }

    /// The metadata of record `key`.
    pub fn metadata(&self, key: &str) -> Option<&Value> {
        self.records.iter().find(|m| record_key(m) == Some(key))
    }

    /// The recent values of record `key`, oldest first.
    pub fn values(&self, key: &str) -> impl Iterator<Item = &ValueText> + '_ {
        self.values.get(key).into_iter().flat_map(|h| h.values.iter().map(|(_, v)| v))
    }

    /// Bytes of the values of record `key` kept.
    pub fn record_bytes(&self, key: &str) -> u64 {
        self.values.get(key).map_or(0, |h| h.bytes)
    }

    /// Bytes of all values kept.
    pub fn held_bytes(&self) -> u64 {
        self.held
    }

    /// Values dropped, oldest first, to stay within the bounds since the instance was read.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Values refused for their size since the instance was read.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// The bounds the values are kept within.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Finds the record called `name`: by record key, else by Rust type name (AimDB's own
    /// `query_schema` looked metadata up by type name while `record.get` takes the key).
    pub fn find(&self, name: &str) -> Match<'_> {
        if let Some(key) = self.records.iter().filter_map(record_key).find(|k| *k == name) {
            return Match::Key(key);
        }
        let keys: Vec<&str> = self
            .records
            .iter()
            .filter(|m| type_name(m) == Some(name))
            .filter_map(record_key)
            .collect();
        match keys.as_slice() {
            [] => Match::None,
            [key] => Match::Key(key),
            _ => Match::Ambiguous(keys),
        }
    }

    /// Adds a value of record `key`, dropping the oldest values past the bounds (the record's,
    /// then the source's). A value over the per-value bound is refused; unknown keys are
    /// ignored: the record set is fixed when the instance is built.
    pub fn push(&mut self, key: &str, value: ValueText) {
        if !self.values.contains_key(key) {
            return;
        }
        *self.added.entry(key.to_string()).or_default() += 1;
        if value.len() as u64 > self.limits.max_value_bytes {
            self.refused += 1;
            return;
        }
        self.keep(key, value);
    }

    fn keep(&mut self, key: &str, value: ValueText) {
        let Some(history) = self.values.get_mut(key) else { return };
        let (arrival, bytes) = (self.next, value.len() as u64);
        self.next += 1;
        history.values.push_back((arrival, value));
        history.bytes += bytes;
        self.held += bytes;
        self.order.insert(arrival, Arc::from(key));
        while history.values.len() > HISTORY
            || (history.bytes > self.limits.record_bytes && history.values.len() > 1)
        {
            let Some((old, value)) = history.values.pop_front() else { break };
            history.bytes -= value.len() as u64;
            self.held -= value.len() as u64;
            self.order.remove(&old);
            self.evicted += 1;
        }
        while self.held > self.limits.source_bytes {
            let Some((old, key)) = self.order.pop_first() else { break };
            let Some(history) = self.values.get_mut(&*key) else { continue };
            // A record's values arrived in order, so the source's oldest is its record's oldest.
            if history.values.front().map(|(arrival, _)| *arrival) == Some(old)
                && let Some((_, value)) = history.values.pop_front()
            {
                history.bytes -= value.len() as u64;
                self.held -= value.len() as u64;
                self.evicted += 1;
            }
        }
    }

    /// How many values record `key` received since the instance was read: a version number that
    /// changes exactly when the record did.
    pub fn version(&self, key: &str) -> u64 {
        self.added.get(key).copied().unwrap_or(0)
    }

    /// The record set: one item per value, records in the server's order and each record's
    /// values oldest first, every item carrying its record's metadata. Built from the values'
    /// text (profiled from it too), so it costs their bytes, not a tree of each.
    pub fn collection(&self, name: &str) -> Collection {
        let mut buffer = String::with_capacity(usize::try_from(self.held).unwrap_or(0));
        let mut items = Vec::new();
        let mut profiler = ProfileBuilder::new();
        for (key, metadata) in self.records.iter().filter_map(|m| record_key(m).map(|key| (key, m)))
        {
            let metadata = serde_json::to_string(metadata).unwrap_or_else(|_| "null".into());
            for value in self.values(key) {
                // The text was checked to be JSON when read; what the profiler still refuses
                // (nesting past its limit) is left out rather than served unprofiled.
                if profiler.add_json(value.as_str()).is_err() {
                    continue;
                }
                let start = buffer.len();
                buffer.push_str(value.as_str());
                let text = start..buffer.len();
                buffer.push_str(&metadata);
                let meta = text.end..buffer.len();
                items.push(ItemEntry::with_metadata(ItemId::from(key), text, Some(meta)));
            }
        }
        let profile = profiler.finish(items.len() as u64);
        Collection::new(name, CollectionKind::Records, Arc::new(buffer.into()), items, profile)
    }

    /// The source serving this snapshot under `spec`.
    pub fn to_source(self, spec: &SourceSpec) -> Source {
        let collection = self.collection(&spec.name);
        let warnings = self
            .keys()
            .into_iter()
            .filter(|key| self.values(key).next().is_none())
            .map(|key| {
                LoadWarning::new(format!(
                    "record `{key}` has no value yet; query_schema waits for one within its window"
                ))
            })
            .chain(self.notes.iter().map(|note| LoadWarning::new(note.clone())))
            .collect();
        let collections = vec![Arc::new(collection)];
        // The recent values answer SQL too (built when first asked).
        let database = crate::sql::CollectionsDatabase::over(spec.display_text(), &collections);
        Source {
            spec: spec.clone(),
            format: Format::Aimdb,
            collections,
            warnings,
            path: None,
            bytes: 0,
            database,
            aimdb: Some(Arc::new(self)),
            direction: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fake::{Behaviour, FakeAimdb, FakeRecord};
    use super::*;

    fn text(bytes: usize) -> ValueText {
        ValueText::from(&json!("x".repeat(bytes - 2)))
    }

    #[test]
    fn keeps_values_within_the_byte_bounds_oldest_dropped_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let records = vec![FakeRecord::new("a", "A", vec![]), FakeRecord::new("b", "B", vec![])];
        let fake =
            FakeAimdb::start(&dir.path().join("s.sock"), Protocol::V3, Behaviour::Normal, records)
                .expect("fake starts");
        let mut snapshot = Snapshot::fetch(fake.path(), Duration::from_secs(5)).expect("reads");
        snapshot.limits = Limits {
            max_value_bytes: 100,
            record_bytes: 300,
            source_bytes: 500,
            bytes_per_second: 1,
        };
        // Per record: 100 bytes each, the fourth pushes out the first.
        for _ in 0..4 {
            snapshot.push("a", text(100));
        }
        assert_eq!((snapshot.values("a").count(), snapshot.record_bytes("a")), (3, 300));
        // Per source: b's values push out a's oldest first, then b's own.
        for _ in 0..3 {
            snapshot.push("b", text(100));
        }
        assert_eq!(snapshot.held_bytes(), 500);
        assert_eq!((snapshot.values("a").count(), snapshot.values("b").count()), (2, 3));
        assert_eq!(snapshot.evicted(), 2);
        // Too large for one value: refused, counted, nothing dropped for it.
        snapshot.push("b", text(101));
        assert_eq!((snapshot.refused(), snapshot.held_bytes()), (1, 500));
        // A record of many small values keeps at most HISTORY of them.
        for _ in 0..(HISTORY + 5) {
            snapshot.push("a", text(2));
        }
        assert_eq!(snapshot.values("a").count(), HISTORY);
        assert!(snapshot.held_bytes() <= 500);
        let collection = snapshot.collection("s");
        assert_eq!(collection.len(), snapshot.values("a").count() + snapshot.values("b").count());
    }
}
