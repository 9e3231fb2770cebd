//! A loaded source: its name, its collections, and what loading had to say about it.

use std::path::PathBuf;
use std::sync::Arc;

use schemascope_core::Collection;

use crate::error::LoadWarning;
use crate::spec::{Format, SourceSpec};
use crate::sql::Database;

/// Reports progress while a large file is read; every method has a do-nothing default.
///
/// Loaders call `start` once with the total bytes, `advance` as bytes are processed (from any
/// thread), and `finish` at the end. The CLI plugs a progress bar in here; servers and tests use
/// [`NoProgress`].
pub trait Progress: Sync {
    /// Loading of `total_bytes` begins.
    fn start(&self, _total_bytes: u64) {}
    /// `bytes` more have been processed.
    fn advance(&self, _bytes: u64) {}
    /// Loading is over.
    fn finish(&self) {}
}

/// Progress that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// A source with its collections loaded and profiled.
#[derive(Debug)]
pub struct Source {
    /// The specification it was loaded from.
    pub spec: SourceSpec,
    /// What its content is.
    pub format: Format,
    /// Its collections (a graph has `nodes` and `edges`; other formats one collection).
    pub collections: Vec<Arc<Collection>>,
    /// Problems that did not stop loading.
    pub warnings: Vec<LoadWarning>,
    /// The file to watch for changes, if any.
    pub path: Option<PathBuf>,
    /// Bytes read (for a SQLite source, the file's size).
    pub bytes: u64,
    /// For database sources, the read-only connection tools use for rows and histograms.
    pub database: Option<Arc<dyn Database>>,
    /// For AimDB sources, the records and recent values the collection was built from.
    pub aimdb: Option<Arc<crate::aimdb::Snapshot>>,
    /// For graph files, whether the edges have a direction and what decided it.
    pub direction: Option<crate::GraphDirection>,
}

impl Source {
    /// The source's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The collection called `name`.
    pub fn collection(&self, name: &str) -> Option<&Arc<Collection>> {
        self.collections.iter().find(|c| c.name() == name)
    }

    /// Names of all collections.
    pub fn collection_names(&self) -> Vec<&str> {
        self.collections.iter().map(|c| c.name()).collect()
    }
}
