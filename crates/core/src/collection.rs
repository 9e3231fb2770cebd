//! The one data model: a collection of items, each an id plus a JSON value stored as text.
//!
//! Items keep their JSON text rather than a parsed tree: a million-line NDJSON file then costs its
//! own size in memory, the profiler parses each item exactly once while loading, and tools that need
//! a value (sampling, selectors) parse just the items they touch. All items of a collection share one
//! buffer, so a collection is a handful of allocations however many items it has.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::bin_memo::BinMemo;
use crate::catalog::TableInfo;
pub use crate::deferred::{DeferredProfile, ProfileFailure, ProfileState};
use crate::deferred::{ProfileProgress, ProgressSnapshot};
pub use crate::edge_ends::{EdgeEndsColumn, EdgeEndsRef};
use crate::error::CoreError;
use crate::profile::{CollectionProfile, ProfileBuilder};

/// What a collection holds; it decides how items are shown and what the extra fields mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectionKind {
    /// Graph nodes: `{id, data}`.
    Nodes,
    /// Graph edges: `{id, source, target, data}`.
    Edges,
    /// A record set: `{key, value, metadata?}`; a key may have many values (its history).
    Records,
    /// A document set: `{id, data}` from a JSON array or NDJSON file.
    Documents,
    /// A database table or view: rows stay in the database, which computes the profile.
    Table,
}

impl CollectionKind {
    /// The singular noun for one item ("node", "record", …).
    pub fn item_noun(self) -> &'static str {
        match self {
            Self::Nodes => "node",
            Self::Edges => "edge",
            Self::Records => "record value",
            Self::Documents => "document",
            Self::Table => "row",
        }
    }

    /// `n` items with the noun that fits the number ("1 document", "3 documents").
    pub fn counted(self, n: impl Into<u64>) -> String {
        let n = n.into();
        format!("{n} {}", if n == 1 { self.item_noun() } else { self.items_noun() })
    }

    /// The plural noun ("nodes", "record values", …).
    pub fn items_noun(self) -> &'static str {
        match self {
            Self::Nodes => "nodes",
            Self::Edges => "edges",
            Self::Records => "record values",
            Self::Documents => "documents",
            Self::Table => "rows",
        }
    }
}

impl fmt::Display for CollectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Nodes => "nodes",
            Self::Edges => "edges",
            Self::Records => "records",
            Self::Documents => "documents",
            Self::Table => "table",
        })
    }
}

pub use crate::text::SharedText;

/// The endpoints of an edge, as given to [`Collection::from_values`] (a collection keeps them in
/// an [`EdgeEndsColumn`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EdgeEnds {
    /// Source node id.
    pub source: Box<str>,
    /// Target node id.
    pub target: Box<str>,
}

/// An item's id: usually a span of the collection's text (a document's `id` string as written),
/// so a million items need no million small allocations; otherwise a string of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemId {
    /// The `len` bytes at `start` of the collection's text.
    InText {
        /// Byte offset in the text.
        start: usize,
        /// Length in bytes.
        len: u32,
    },
    /// An id not written as such in the text: a number's or boolean's canonical form, a
    /// position (`#3`), a record key, a renamed duplicate.
    Owned(Box<str>),
}

impl ItemId {
    /// The id's text, given the collection's text (which [`ItemId::InText`] points into).
    pub fn resolve<'a>(&'a self, text: &'a str) -> &'a str {
        match self {
            Self::InText { start, len } => {
                text.get(*start..*start + *len as usize).unwrap_or_default()
            }
            Self::Owned(id) => id,
        }
    }

    /// The same id with a span moved `offset` bytes further into the text.
    pub fn shifted(self, offset: usize) -> Self {
        match self {
            Self::InText { start, len } => Self::InText { start: start + offset, len },
            owned => owned,
        }
    }
}

impl From<String> for ItemId {
    fn from(id: String) -> Self {
        Self::Owned(id.into_boxed_str())
    }
}

impl From<&str> for ItemId {
    fn from(id: &str) -> Self {
        Self::Owned(id.into())
    }
}

/// One item: its id, where its JSON text lives in the buffer, and kind-specific extras.
#[derive(Debug, Clone)]
pub struct ItemEntry {
    /// The item's id (for records, the record key; several values may share it).
    pub id: ItemId,
    /// Byte range of the item's value in the collection buffer.
    pub value: Range<usize>,
    /// Record metadata, which most items do not have (kept apart so the entries of a million
    /// documents stay small).
    pub extra: Option<Box<ItemExtra>>,
}

/// What only some items carry.
#[derive(Debug, Clone, Default)]
pub struct ItemExtra {
    /// Byte range of the record metadata, for records that carry it.
    pub metadata: Option<Range<usize>>,
}

impl ItemEntry {
    /// An item with an id and a value and nothing else.
    pub fn new(id: ItemId, value: Range<usize>) -> Self {
        Self { id, value, extra: None }
    }

    /// An item with record metadata, if it has any (no extra is stored without).
    pub fn with_metadata(id: ItemId, value: Range<usize>, metadata: Option<Range<usize>>) -> Self {
        let extra = metadata.map(|metadata| Box::new(ItemExtra { metadata: Some(metadata) }));
        Self { id, value, extra }
    }
}

/// A borrowed view of one item.
#[derive(Debug, Clone, Copy)]
pub struct ItemRef<'a> {
    /// Position of the item in its collection.
    pub index: usize,
    /// The item's id.
    pub id: &'a str,
    /// The item's JSON text.
    pub json: &'a str,
    /// Edge endpoints, for edges.
    pub ends: Option<EdgeEndsRef<'a>>,
    /// Record metadata JSON text, if any.
    pub metadata_json: Option<&'a str>,
}

impl ItemRef<'_> {
    /// Parses the item's value.
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.json)
    }

    /// Parses the record metadata, if any.
    pub fn metadata(&self) -> Option<Value> {
        self.metadata_json.and_then(|m| serde_json::from_str(m).ok())
    }
}

/// How long a call waiting for another's profile computation sleeps between two looks at it and
/// at its own cancellation.
const PROFILE_WAIT_TURN: std::time::Duration = std::time::Duration::from_millis(20);

/// A named set of items with their profile: computed when the collection was built, or for a
/// database table, on first use (opening a database with large tables stays instant).
#[derive(Debug)]
pub struct Collection {
    name: String,
    kind: CollectionKind,
    buffer: SharedText,
    items: Vec<ItemEntry>,
    profile: OnceLock<CollectionProfile>,
    deferred: Option<Box<dyn DeferredProfile>>,
    /// Why the last attempt at a deferred profile failed, if it did.
    profile_error: Mutex<Option<String>>,
    /// What `profile` answers while a transient failure keeps the real profile from being made.
    columns_only: OnceLock<CollectionProfile>,
    /// One computation of a deferred profile at a time (a scan is expensive).
    computing: Mutex<()>,
    /// What the current (or last) computation of a deferred profile has finished.
    progress: ProfileProgress,
    /// True when the last attempt failed for a cause that would only repeat.
    failed: std::sync::atomic::AtomicBool,
    /// For record sets: one profile per record key, built on first use.
    record_profiles: OnceLock<Vec<(String, CollectionProfile)>>,
    /// For database tables: the table's structure (its rows stay in the database).
    table: Option<Arc<TableInfo>>,
    /// For a file profiled by streaming: how many items it has; `items` is then a uniform
    /// sample of them (see `schemascope_sources::stream`).
    sampled_from: Option<u64>,
    /// Computes the profile from the items on first use, for a collection whose profile is
    /// seldom read right after it is made (see [`Collection::with_profile_on_use`]).
    on_use: Option<Box<dyn ProfileOnUse>>,
    /// Items made when first read, in place of `buffer` and `items` (see
    /// [`Collection::with_items_on_use`]).
    lazy: Option<Box<LazyItems>>,
    /// For edges: every item's ends (shared by the versions of a graph's edges).
    ends: Option<Arc<EdgeEndsColumn>>,
    /// For database tables: histogram bins counted in the database for the profile above.
    bin_memo: BinMemo,
}

/// Makes an in-memory collection's text and items when they are first read.
pub trait ItemsOnUse: Send + Sync + fmt::Debug {
    /// The buffer and its items: exactly as many as the collection was made with.
    fn make(self: Box<Self>) -> (SharedText, Vec<ItemEntry>);
}

/// A collection's items before and after they are made.
#[derive(Debug)]
struct LazyItems {
    count: usize,
    made: OnceLock<(SharedText, Vec<ItemEntry>)>,
    make: Mutex<Option<Box<dyn ItemsOnUse>>>,
}

/// Computes an in-memory collection's profile when it is first asked for.
pub trait ProfileOnUse: Send + Sync + fmt::Debug {
    /// The profile of `collection`'s items.
    fn compute(&self, collection: &Collection) -> CollectionProfile;
}

impl Collection {
    /// Assembles a collection from a buffer, its items, and their profile (see [`crate::profile`]).
    pub fn new(
        name: impl Into<String>,
        kind: CollectionKind,
        buffer: SharedText,
        items: Vec<ItemEntry>,
        profile: CollectionProfile,
    ) -> Self {
        Self {
            name: name.into(),
            kind,
            buffer,
            items,
            profile: OnceLock::from(profile),
            deferred: None,
            profile_error: Mutex::new(None),
            columns_only: OnceLock::new(),
            computing: Mutex::new(()),
            progress: ProfileProgress::default(),
            failed: std::sync::atomic::AtomicBool::new(false),
            record_profiles: OnceLock::new(),
            table: None,
            sampled_from: None,
            on_use: None,
            lazy: None,
            ends: None,
            bin_memo: BinMemo::default(),
        }
    }

    /// The same collection with its items' ends, for edges (one per item, in item order).
    pub fn with_ends(mut self, ends: Arc<EdgeEndsColumn>) -> Self {
        self.ends = Some(ends);
        self
    }

    /// The ends of every item, for edges.
    pub fn ends(&self) -> Option<&Arc<EdgeEndsColumn>> {
        self.ends.as_ref()
    }

    /// A collection whose profile `on_use` computes from its items when first asked for: for
    /// one rebuilt often whose profile is read seldom (a graph's nodes after each algorithm run),
    /// so making it costs its items alone. The profile is the same whenever it is computed.
    pub fn with_profile_on_use(
        name: impl Into<String>,
        kind: CollectionKind,
        buffer: SharedText,
        items: Vec<ItemEntry>,
        on_use: Box<dyn ProfileOnUse>,
    ) -> Self {
        let mut collection = Self::new(name, kind, buffer, items, ProfileBuilder::new().finish(0));
        collection.profile = OnceLock::new();
        collection.on_use = Some(on_use);
        collection
    }

    /// A collection of `count` items that `items` makes when one is first read, its profile
    /// by `on_use`: for one rebuilt on every change whose items are read seldom (a graph's
    /// nodes after each algorithm run), so making it costs next to nothing.
    pub fn with_items_on_use(
        name: impl Into<String>,
        kind: CollectionKind,
        count: usize,
        items: Box<dyn ItemsOnUse>,
        on_use: Box<dyn ProfileOnUse>,
    ) -> Self {
        let mut collection =
            Self::with_profile_on_use(name, kind, SharedText::default(), Vec::new(), on_use);
        collection.lazy = Some(Box::new(LazyItems {
            count,
            made: OnceLock::new(),
            make: Mutex::new(Some(items)),
        }));
        collection
    }

    /// The text and the items, made first if they are made on use.
    fn stored(&self) -> (&SharedText, &[ItemEntry]) {
        match &self.lazy {
            None => (&self.buffer, &self.items),
            Some(lazy) => {
                let (buffer, items) = lazy.made.get_or_init(|| {
                    crate::sync::lock(&lazy.make).take().map(|m| m.make()).unwrap_or_default()
                });
                (buffer, items)
            }
        }
    }

    /// The same collection, its items a uniform sample of the `total` its profile counted.
    pub fn sampled_from(mut self, total: u64) -> Self {
        self.sampled_from = Some(total);
        self
    }

    /// How many items the collection stands for: [`Self::len`], or for a file profiled by
    /// streaming, every item of the file (of which it holds a sample).
    pub fn item_count(&self) -> u64 {
        self.sampled_from.unwrap_or(self.len() as u64)
    }

    /// For a file profiled by streaming: how many items the file has (the collection holds a
    /// uniform sample of them); `None` when every item is held.
    pub fn sample_of(&self) -> Option<u64> {
        self.sampled_from
    }

    /// A database table or view whose profile `deferred` computes on first use; it holds no
    /// items (tools ask the source's database for rows).
    pub fn from_table(table: TableInfo, deferred: Box<dyn DeferredProfile>) -> Self {
        Self {
            name: table.name.clone(),
            kind: CollectionKind::Table,
            buffer: SharedText::default(),
            items: Vec::new(),
            profile: OnceLock::new(),
            deferred: Some(deferred),
            profile_error: Mutex::new(None),
            columns_only: OnceLock::new(),
            computing: Mutex::new(()),
            progress: ProfileProgress::default(),
            failed: std::sync::atomic::AtomicBool::new(false),
            record_profiles: OnceLock::new(),
            table: Some(Arc::new(table)),
            sampled_from: None,
            on_use: None,
            lazy: None,
            ends: None,
            bin_memo: BinMemo::default(),
        }
    }

    /// Histogram bins counted outside memory for this collection's profile (a table's, in its
    /// database), kept as long as the collection and its profile are.
    pub fn bin_memo(&self) -> &BinMemo {
        &self.bin_memo
    }

    /// The table's structure, for database tables.
    pub fn table(&self) -> Option<&TableInfo> {
        self.table.as_deref()
    }

    /// Builds a collection from parsed values (tests, small sources, synthesized items).
    pub fn from_values<I>(name: impl Into<String>, kind: CollectionKind, values: I) -> Self
    where
        I: IntoIterator<Item = OwnedItem>,
    {
        let name = name.into();
        let mut buffer = String::new();
        let mut items = Vec::new();
        let mut profiler = ProfileBuilder::new();
        let mut ends = Vec::new();
        for item in values {
            profiler.add_value(&item.value);
            let value = append_json(&mut buffer, &item.value);
            let metadata = item.metadata.as_ref().map(|m| append_json(&mut buffer, m));
            items.push(ItemEntry::with_metadata(item.id.into(), value, metadata));
            ends.push(item.ends);
        }
        let profile = profiler.finish(items.len() as u64);
        let collection = Self::new(name, kind, Arc::new(buffer.into()), items, profile);
        if ends.iter().all(Option::is_none) {
            return collection;
        }
        let texts = ends.iter().map(|e| e.as_ref().map(|e| (&*e.source, &*e.target)));
        collection.with_ends(Arc::new(EdgeEndsColumn::from_texts(texts)))
    }

    /// The collection's name (`nodes`, `edges`, a record set's or document set's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the collection holds.
    pub fn kind(&self) -> CollectionKind {
        self.kind
    }

    /// Number of items. For a table, its rows: counted by the profile's first scan, until then
    /// the catalog's count (an estimate for very large PostgreSQL tables:
    /// [`Self::count_is_estimate`]).
    pub fn len(&self) -> usize {
        match &self.table {
            Some(table) => {
                let rows = self
                    .profile
                    .get()
                    .map(|p| p.item_count)
                    .or_else(|| self.progress.snapshot().partial.map(|p| p.item_count))
                    .or(table.row_count)
                    .unwrap_or(0);
                usize::try_from(rows).unwrap_or(usize::MAX)
            }
            None => self.lazy.as_ref().map_or(self.items.len(), |lazy| lazy.count),
        }
    }

    /// [`Self::item_count`] when it is known: `None` for a table whose rows neither its profile
    /// nor the catalog has counted or estimated yet (a view before its profile's first scan).
    pub fn known_item_count(&self) -> Option<u64> {
        match &self.table {
            Some(table)
                if self.profile.get().is_none()
                    && table.row_count.is_none()
                    && self.progress.snapshot().partial.is_none() =>
            {
                None
            }
            _ => Some(self.item_count()),
        }
    }

    /// True when [`Self::len`] is the catalog's estimate rather than a count.
    pub fn count_is_estimate(&self) -> bool {
        self.table.as_ref().is_some_and(|t| t.row_count_estimated)
            && self.profile.get().is_none()
            && self.progress.snapshot().partial.is_none()
    }

    /// True when there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when the items are held here (false for database tables, whose rows stay in the database).
    pub fn holds_items(&self) -> bool {
        self.table.is_none()
    }

    /// The profile of every property, computed from all items (for a table, on first call; if
    /// that fails, a profile listing the columns without statistics — a stand-in whose zeros are
    /// not facts: [`Self::profile_ready`] is `None` then, [`Self::profile_error`] says why, and
    /// summaries show the catalog and [`Self::profile_progress`] instead).
    ///
    /// While another call computes a table's profile, this one waits for it only as long as its
    /// own call is not cancelled ([`crate::cancel`]): cancelled, it gets the columns-only
    /// stand-in, and its token names what it waited for ([`crate::cancel::Cancel::stopped_during`]).
    pub fn profile(&self) -> &CollectionProfile {
        if let Some(profile) = self.profile.get() {
            return profile;
        }
        if let Some(on_use) = &self.on_use {
            return self.profile.get_or_init(|| on_use.compute(self));
        }
        let (Some(deferred), Some(table)) = (&self.deferred, &self.table) else {
            return self.profile.get_or_init(|| ProfileBuilder::new().finish(0));
        };
        if self.failed.load(std::sync::atomic::Ordering::SeqCst) {
            return self.columns_only.get_or_init(|| columns_only(table));
        }
        let what = format!("the profile of table `{}`", table.name);
        // The lock guards no data, it only serialises the computation: one that panicked set
        // nothing, so the next caller computes again.
        let Some(_computing) = self.wait_to_compute(&what) else {
            return self.columns_only.get_or_init(|| columns_only(table));
        };
        if let Some(profile) = self.profile.get() {
            return profile;
        }
        if self.failed.load(std::sync::atomic::Ordering::SeqCst) {
            return self.columns_only.get_or_init(|| columns_only(table));
        }
        self.progress.reset();
        let result = crate::cancel::during(format!("computing {what}"), || {
            deferred.compute(table, &self.progress)
        });
        self.progress.ended();
        let mut error = crate::sync::lock(&self.profile_error);
        match result {
            Ok(profile) => {
                *error = None;
                self.profile.get_or_init(|| profile)
            }
            Err(failure) => {
                *error = Some(failure.message);
                if !failure.transient {
                    self.failed.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                self.columns_only.get_or_init(|| columns_only(table))
            }
        }
    }

    /// The right to compute the deferred profile, waited for in short turns while another call
    /// holds it; `None` once this call is cancelled (its answer no longer waits on another's
    /// work).
    fn wait_to_compute(&self, what: &str) -> Option<std::sync::MutexGuard<'_, ()>> {
        let attempt = || match self.computing.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if let Some(guard) = attempt() {
            return Some(guard);
        }
        let cancel = crate::cancel::current();
        crate::cancel::during(
            format!("waiting for {what}, which another call is computing"),
            || {
                loop {
                    if cancel.is_cancelled() {
                        return None;
                    }
                    if let Some(guard) = attempt() {
                        return Some(guard);
                    }
                    std::thread::sleep(PROFILE_WAIT_TURN);
                }
            },
        )
    }

    /// Where a table's profile stands, without waiting for it or starting it (what
    /// `list_sources` reports while a large table is being profiled).
    pub fn profile_state(&self) -> ProfileState {
        if self.profile.get().is_some() {
            return ProfileState::Ready;
        }
        if self.deferred.is_none() {
            // Made on first use from the items in memory: nothing to wait for.
            return ProfileState::Ready;
        }
        if self.failed.load(std::sync::atomic::Ordering::SeqCst) {
            return ProfileState::Failed;
        }
        if matches!(self.computing.try_lock(), Err(std::sync::TryLockError::WouldBlock)) {
            return ProfileState::Computing;
        }
        if self.columns_only.get().is_some() {
            ProfileState::Retrying
        } else {
            ProfileState::NotStarted
        }
    }

    /// The profile if it has been computed already (never starts a database scan; one computed
    /// on use from the items in memory is computed now).
    pub fn profile_ready(&self) -> Option<&CollectionProfile> {
        if self.on_use.is_some() {
            return Some(self.profile());
        }
        self.profile.get()
    }

    /// What the computation of a table's profile has finished so far (or had, when it stopped)
    /// and what it is computing now; empty for collections whose profile is ready.
    pub fn profile_progress(&self) -> ProgressSnapshot {
        if self.profile.get().is_some() {
            return ProgressSnapshot::default();
        }
        self.progress.snapshot()
    }

    /// True when a table's profile is not ready: answers built now show the catalog and what is
    /// finished, and must not be kept as if final.
    pub fn profile_pending(&self) -> bool {
        self.profile_state() != ProfileState::Ready
    }

    /// Why a table's profile could not be computed, if it could not.
    pub fn profile_error(&self) -> Option<String> {
        crate::sync::lock(&self.profile_error).clone()
    }

    /// The item at `index`.
    pub fn item(&self, index: usize) -> Option<ItemRef<'_>> {
        let (buffer, items) = self.stored();
        let entry = items.get(index)?;
        Some(ItemRef {
            index,
            id: entry.id.resolve(buffer),
            json: buffer.get(entry.value.clone()).unwrap_or("null"),
            ends: self.ends.as_ref().and_then(|column| column.get(index)),
            metadata_json: entry
                .extra
                .as_ref()
                .and_then(|e| e.metadata.clone())
                .and_then(|m| buffer.get(m)),
        })
    }

    /// All items in order.
    pub fn items(&self) -> impl Iterator<Item = ItemRef<'_>> + '_ {
        (0..self.stored().1.len()).filter_map(move |i| self.item(i))
    }

    /// For record sets: every record key with its own profile (over all of its values), in
    /// first-seen order. Computed once, on first use; other kinds have one group per item id.
    pub fn record_profiles(&self) -> &[(String, CollectionProfile)] {
        self.record_profiles.get_or_init(|| {
            let mut order: Vec<&str> = Vec::new();
            let mut builders: std::collections::HashMap<&str, (ProfileBuilder, u64)> =
                std::collections::HashMap::new();
            for item in self.items() {
                let (builder, count) = builders.entry(item.id).or_insert_with(|| {
                    order.push(item.id);
                    (ProfileBuilder::new(), 0)
                });
                // Items were validated when the collection was built.
                if builder.add_json(item.json).is_ok() {
                    *count += 1;
                }
            }
            order
                .into_iter()
                .filter_map(|key| builders.remove(key).map(|(b, n)| (key.to_string(), b.finish(n))))
                .collect()
        })
    }

    /// The profile of one record key, if the collection has it.
    pub fn record_profile(&self, key: &str) -> Option<&CollectionProfile> {
        self.record_profiles().iter().find(|(k, _)| k == key).map(|(_, p)| p)
    }

    /// Parses one item's value for showing, naming the item if its text is not JSON. Containers
    /// nested past [`crate::capped::MAX_PARSE_DEPTH`] levels are replaced by a marker, so one deep
    /// item is shown cut instead of failing its whole collection.
    pub fn parse_item(&self, item: &ItemRef<'_>) -> Result<Value, CoreError> {
        crate::capped::parse_capped(item.json).map(|(value, _)| value).map_err(|e| {
            CoreError::CorruptItem {
                collection: self.name.clone(),
                item: item.id.to_string(),
                reason: e.to_string(),
            }
        })
    }
}

/// A profile naming a table's columns with no statistics (when the database could not compute them).
fn columns_only(table: &TableInfo) -> CollectionProfile {
    use crate::profile::{ProfileNode, PropertyProfile};
    let children = table
        .columns
        .iter()
        .map(|c| ProfileNode {
            profile: PropertyProfile::empty(crate::PropertyPath::root().child(&c.name)),
            children: Vec::new(),
            items: None,
        })
        .collect();
    CollectionProfile {
        item_count: 0,
        root: ProfileNode {
            profile: PropertyProfile::empty(crate::PropertyPath::root()),
            children,
            items: None,
        },
        path_limit_hit: false,
        path_limit: Default::default(),
    }
}

/// An item given as a parsed value, for [`Collection::from_values`].
#[derive(Debug, Clone)]
pub struct OwnedItem {
    /// Item id.
    pub id: String,
    /// Item value.
    pub value: Value,
    /// Edge endpoints, for edges.
    pub ends: Option<EdgeEnds>,
    /// Record metadata, for records.
    pub metadata: Option<Value>,
}

impl OwnedItem {
    /// An item with just an id and a value.
    pub fn new(id: impl Into<String>, value: Value) -> Self {
        Self { id: id.into(), value, ends: None, metadata: None }
    }
}

fn append_json(buffer: &mut String, value: &Value) -> Range<usize> {
    let start = buffer.len();
    // Serializing a Value cannot fail: its keys are strings and its numbers finite.
    buffer.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "null".into()));
    start..buffer.len()
}
