//! An AimDB instance's records as a record set: the metadata `record.list` gives, the current
//! value of each record from `record.get`, and a bounded history of the values seen since (by
//! subscription or sampling), rebuilt into a [`Source`] whenever it changes.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemascope_core::{Collection, CollectionKind, OwnedItem};
use serde_json::Value;

use super::client::AimxClient;
use super::error::AimxError;
use super::wire::Protocol;
use crate::error::LoadWarning;
use crate::source::Source;
use crate::spec::{Format, SourceSpec};

/// Values kept per record: enough for the merged schema and property statistics over recent
/// values, small enough to rebuild the collection on every batch of updates.
pub const HISTORY: usize = 100;

/// The records of one instance with their recent values.
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
    /// Recent values per record key, oldest first, at most [`HISTORY`].
    values: HashMap<String, VecDeque<Value>>,
    /// Values added per record key since the fetch: tells a record that changed from one that
    /// did not when the source is replaced.
    added: HashMap<String, u64>,
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

impl Snapshot {
    /// Reads the records and their current values from the instance at `socket`.
    pub fn fetch(socket: &Path, timeout: Duration) -> Result<Self, AimxError> {
        let mut client = AimxClient::connect(socket, timeout)?;
        let records = client.list_records()?;
        let mut values = HashMap::new();
        for metadata in &records {
            let Some(key) = record_key(metadata) else { continue };
            let history: VecDeque<Value> = client.get(key)?.into_iter().collect();
            values.insert(key.to_string(), history);
        }
        Ok(Self {
            socket: socket.to_path_buf(),
            protocol: client.protocol(),
            welcome: client.welcome().clone(),
            records,
            values,
            added: HashMap::new(),
        })
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
    pub fn values(&self, key: &str) -> impl Iterator<Item = &Value> + '_ {
        self.values.get(key).into_iter().flatten()
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

    /// Adds a value of record `key`, dropping the oldest beyond [`HISTORY`]. Unknown keys are
    /// ignored: the record set is fixed when the instance is built.
    pub fn push(&mut self, key: &str, value: Value) {
        if let Some(history) = self.values.get_mut(key) {
            *self.added.entry(key.to_string()).or_default() += 1;
            history.push_back(value);
            while history.len() > HISTORY {
                history.pop_front();
            }
        }
    }

    /// How many values record `key` received since the instance was read: a version number that
    /// changes exactly when the record did.
    pub fn version(&self, key: &str) -> u64 {
        self.added.get(key).copied().unwrap_or(0)
    }

    /// The record set: one item per value, records in the server's order and each record's
    /// values oldest first, every item carrying its record's metadata.
    pub fn collection(&self, name: &str) -> Collection {
        let items = self
            .records
            .iter()
            .filter_map(|metadata| record_key(metadata).map(|key| (key, metadata)))
            .flat_map(|(key, metadata)| {
                self.values(key).map(move |value| OwnedItem {
                    metadata: Some(metadata.clone()),
                    ..OwnedItem::new(key, value.clone())
                })
            });
        Collection::from_values(name, CollectionKind::Records, items)
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
            .collect();
        Source {
            spec: spec.clone(),
            format: Format::Aimdb,
            collections: vec![Arc::new(collection)],
            warnings,
            path: None,
            bytes: 0,
            database: None,
            aimdb: Some(Arc::new(self)),
            direction: None,
        }
    }
}
