//! The SQL of a source's in-memory collections, built when first asked for: a source is loaded
//! (and a graph session writes algorithm results into a new version of its items) without
//! converting anything; the first statement, catalog or validation builds the session over
//! the collections as they are in that version.

use std::sync::{Arc, OnceLock};

use schemascope_core::{Catalog, Collection};

use super::items::items_table;
use super::{DataFusionDatabase, ServedTable};
use crate::error::{ErrorClass, SourceError};
use crate::sql::{Callables, Caps, Database, Dialect, QueryResult, SqlValue};

/// A [`DataFusionDatabase`] over collections, built on first use.
pub struct CollectionsDatabase {
    location: String,
    collections: Vec<Arc<Collection>>,
    built: OnceLock<Result<DataFusionDatabase, String>>,
}

impl std::fmt::Debug for CollectionsDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectionsDatabase").field("location", &self.location).finish()
    }
}

impl CollectionsDatabase {
    /// The SQL of every collection of `collections` held whole in memory (a sampled one is left
    /// out: a statement over its items would answer for the sample as if for the whole); `None`
    /// when none is.
    pub fn over(
        location: impl Into<String>,
        collections: &[Arc<Collection>],
    ) -> Option<Arc<dyn Database>> {
        let served: Vec<Arc<Collection>> = collections
            .iter()
            .filter(|c| c.sample_of().is_none() && c.table().is_none())
            .cloned()
            .collect();
        if served.is_empty() {
            return None;
        }
        Some(Arc::new(Self {
            location: location.into(),
            collections: served,
            built: OnceLock::new(),
        }))
    }

    fn built(&self) -> Result<&DataFusionDatabase, SourceError> {
        self.built
            .get_or_init(|| {
                let tables: Vec<ServedTable> =
                    self.collections.iter().filter_map(items_table).collect();
                DataFusionDatabase::new(self.location.clone(), tables).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| SourceError::Statement {
                location: self.location.clone(),
                message: message.clone(),
                class: ErrorClass::Resource,
            })
    }
}

impl Database for CollectionsDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::DataFusion
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        self.built()?.catalog()
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        self.built()?.callables()
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        self.built()?.compile(sql)
    }

    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.built()?.run_capped(sql, params, caps, timeout_ms)
    }
}
