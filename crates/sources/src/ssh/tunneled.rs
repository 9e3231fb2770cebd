//! A database reached through an SSH tunnel: the engine's own connection, with the tunnel kept
//! open while it lives and named where the database is shown.

use std::sync::Arc;

use schemascope_core::{Catalog, TableInfo};

use super::Tunnel;
use crate::error::SourceError;
use crate::sql::{Callables, Caps, Database, Dialect, QueryResult, Rows, SqlValue};

/// `inner`, whose connections go through `tunnel`.
#[derive(Debug)]
pub(crate) struct Tunneled {
    inner: Arc<dyn Database>,
    /// Where the database is as the user wrote it, and the bastion: `postgres://app@db:5432/app
    /// through ssh deploy@bastion:22` (the engine's own location names the tunnel's port).
    location: String,
    tunnel: Tunnel,
}

impl Tunneled {
    pub(crate) fn new(inner: Arc<dyn Database>, shown_uri: &str, tunnel: Tunnel) -> Self {
        let location = format!("{shown_uri} through ssh {}", tunnel.shown());
        Self { inner, location, tunnel }
    }

    fn explained(&self, error: SourceError) -> SourceError {
        explained(error, &self.tunnel)
    }
}

/// An error of the engine with what the bastion said about reaching the database, when the
/// connection failed at the bastion.
pub(crate) fn explained(error: SourceError, tunnel: &Tunnel) -> SourceError {
    let lost = matches!(
        &error,
        SourceError::Database { .. }
            | SourceError::Statement { class: crate::error::ErrorClass::Resource, .. }
    );
    if !lost {
        return error;
    }
    let note = match (tunnel.down(), tunnel.refused_connections()) {
        (Some(down), _) => {
            format!(" (the SSH tunnel {} is down, being restarted: {down})", tunnel.shown())
        }
        (None, Some(said)) => format!(" (through the SSH tunnel {}: {said})", tunnel.shown()),
        (None, None) => return error,
    };
    match error {
        SourceError::Database { location, message } => {
            SourceError::Database { location, message: format!("{message}{note}") }
        }
        SourceError::Statement { location, message, class } => {
            SourceError::Statement { location, message: format!("{message}{note}"), class }
        }
        other => other,
    }
}

impl Database for Tunneled {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        self.inner.catalog().map_err(|e| self.explained(e))
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        self.inner.callables().map_err(|e| self.explained(e))
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        self.inner.compile(sql).map_err(|e| self.explained(e))
    }

    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.inner.run_capped(sql, params, caps, timeout_ms).map_err(|e| self.explained(e))
    }

    fn run_for_caller(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.inner.run_for_caller(sql, params, caps, timeout_ms).map_err(|e| self.explained(e))
    }

    fn run(
        &self,
        sql: &str,
        params: &[SqlValue],
        max_rows: Option<usize>,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.inner.run(sql, params, max_rows, timeout_ms).map_err(|e| self.explained(e))
    }

    fn query_with_timeout(
        &self,
        sql: &str,
        params: &[SqlValue],
        timeout_ms: u64,
    ) -> Result<Rows, SourceError> {
        self.inner.query_with_timeout(sql, params, timeout_ms).map_err(|e| self.explained(e))
    }

    fn data_version(&self, table: &TableInfo) -> Result<Option<String>, SourceError> {
        self.inner.data_version(table)
    }

    fn time_zone(&self) -> Option<&str> {
        self.inner.time_zone()
    }

    fn profile_parallelism(&self) -> usize {
        self.inner.profile_parallelism()
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Rows, SourceError> {
        self.inner.query(sql, params).map_err(|e| self.explained(e))
    }
}
