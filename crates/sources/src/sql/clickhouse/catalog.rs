//! The served database's catalog from ClickHouse's `system.tables` and `system.columns`: tables
//! and views with their columns, sorting keys and exact row counts (`total_rows` where the
//! server keeps it, else `count()`).
//!
//! A `Distributed` table (`distributed.rs`) is listed with the sorting key of its shards'
//! table (where this server has it) and the row count of all its shards: `count()`, which the
//! coordinator sums over them (`total_rows` is NULL for it). Should a shard not answer, the
//! count is left unknown — never a partial sum — and the table stays listed: its profile says
//! which shard failed.

use std::collections::HashMap;

use schemascope_core::{Catalog, ColumnInfo, TableInfo, TableKind};

use super::{ClickHouseDatabase, ReadOnlyMode, distributed, text, zones};
use crate::error::{ErrorClass, SourceError};
use crate::sql::{Database, Dialect, SqlValue};

/// Engines whose reads consume what they read (a stream's offsets): not listed as tables.
const CONSUMING_ENGINES: &[&str] = &["Kafka", "RabbitMQ", "NATS", "FileLog"];

/// What the listing says of a table beyond its [`TableInfo`].
struct Listed {
    /// The sorting key as `system.tables` writes it (`a, b`).
    key: String,
    /// True for a Distributed table.
    distributed: bool,
    /// The database and table its shards hold, when its engine names them.
    target: Option<(String, String)>,
}

impl ClickHouseDatabase {
    /// [`Database::catalog`].
    pub(super) fn read_catalog(&self) -> Result<Catalog, SourceError> {
        let comment = if self.tables_have_comment { "comment" } else { "''" };
        let total = if self.tables_have_total_rows { "total_rows" } else { "NULL" };
        let rows = self.query(
            &format!(
                "SELECT name, engine, primary_key, {comment}, {total}, engine_full FROM system.tables WHERE database = currentDatabase() AND NOT is_temporary ORDER BY name"
            ),
            &[],
        )?;
        let mut tables: Vec<TableInfo> = Vec::new();
        let mut listed: Vec<Listed> = Vec::new();
        for row in &rows {
            let engine = row[1].as_str().unwrap_or_default();
            if CONSUMING_ENGINES.contains(&engine) {
                continue;
            }
            let kind = if matches!(engine, "View" | "LiveView" | "WindowView") {
                TableKind::View
            } else {
                TableKind::Table
            };
            tables.push(TableInfo {
                name: row[0].as_str().unwrap_or_default().to_string(),
                kind,
                columns: Vec::new(),
                primary_key: Vec::new(),
                foreign_keys: Vec::new(),
                row_count: match &row[4] {
                    SqlValue::Integer(n) => u64::try_from(*n).ok(),
                    _ => None,
                },
                row_count_estimated: false,
                comment: row[3].as_str().filter(|c| !c.is_empty()).map(str::to_string),
            });
            let distributed = engine == distributed::ENGINE;
            listed.push(Listed {
                key: row[2].as_str().unwrap_or_default().to_string(),
                distributed,
                target: row[5].as_str().filter(|_| distributed).and_then(distributed::target),
            });
        }
        self.refuse_inexact_distributed_reads(&tables, &listed)?;
        self.take_shard_keys(&mut listed)?;
        let order = if self.columns_have_position { "ORDER BY table, position" } else { "" };
        for row in self.query(
            &format!(
                "SELECT table, name, type, comment FROM system.columns WHERE database = currentDatabase() {order}"
            ),
            &[],
        )? {
            let Some(table) = tables.iter_mut().find(|t| Some(t.name.as_str()) == row[0].as_str())
            else {
                continue;
            };
            let declared = row[2].as_str().unwrap_or_default().to_string();
            table.columns.push(ColumnInfo {
                name: row[1].as_str().unwrap_or_default().to_string(),
                nullable: declared.starts_with("Nullable(")
                    || declared.starts_with("LowCardinality(Nullable("),
                base_type: zones::zoned_type(&declared, &self.time_zone),
                declared_type: declared,
                comment: row[3].as_str().filter(|c| !c.is_empty()).map(str::to_string),
            });
        }
        for (table, listed) in tables.iter_mut().zip(&listed) {
            // The primary key as ClickHouse lists it: column names (an expression in it is no
            // column and leaves the key out). ClickHouse does not keep it unique.
            let key = &listed.key;
            let parts: Vec<String> = key.split(',').map(|p| p.trim().to_string()).collect();
            if !key.is_empty() && parts.iter().all(|p| table.columns.iter().any(|c| &c.name == p)) {
                table.primary_key = parts;
            }
        }
        let mut dropped = Vec::new();
        for (table, listed) in tables.iter_mut().zip(&listed) {
            if table.kind != TableKind::Table || table.row_count.is_some() {
                continue;
            }
            let quoted = Dialect::ClickHouse.quote_table(&table.name);
            match self.query(&format!("SELECT count() FROM {quoted}"), &[]) {
                Ok(counted) => table.row_count = counted.first().map(|r| r[0].as_count()),
                Err(e @ SourceError::Cancelled(_)) => return Err(e),
                // A shard that did not answer (or has no such table): not counted, rather than
                // counted without it.
                Err(_) if listed.distributed => {}
                // Dropped since it was listed: no longer part of the catalog.
                Err(SourceError::Statement { class: ErrorClass::Syntax, .. }) => {
                    dropped.push(table.name.clone())
                }
                Err(e) => return Err(e),
            }
        }
        tables.retain(|t| !dropped.contains(&t.name));
        Ok(Catalog { tables })
    }

    /// A readonly=1 profile that sets [`distributed::INEXACT_SETTINGS`] cannot be read exactly
    /// through Distributed tables: refused with what to change, when the database has one.
    fn refuse_inexact_distributed_reads(
        &self,
        tables: &[TableInfo],
        listed: &[Listed],
    ) -> Result<(), SourceError> {
        if self.mode != ReadOnlyMode::Fixed || self.inexact.is_empty() {
            return Ok(());
        }
        let Some(table) = tables.iter().zip(listed).find(|(_, l)| l.distributed).map(|(t, _)| t)
        else {
            return Ok(());
        };
        let settings: Vec<String> = self.inexact.iter().map(|name| format!("{name} = 1")).collect();
        Err(SourceError::Database {
            location: self.location.clone(),
            message: format!(
                "the user's profile sets {} and, being readonly=1, lets no statement set it back to 0: reads of Distributed tables (`{}`) would leave out a shard that does not answer, or return each shard's groups unmerged, without saying so. Set it to 0 in the user's profile, or give the user a readonly=2 profile (schemascope then sets it to 0 on each statement)",
                settings.join(" and "),
                table.name
            ),
        })
    }

    /// Gives each Distributed table the sorting key of its shards' table, where this server
    /// has that table.
    fn take_shard_keys(&self, listed: &mut [Listed]) -> Result<(), SourceError> {
        let mut databases: Vec<&str> =
            listed.iter().filter_map(|l| l.target.as_ref()).map(|(d, _)| d.as_str()).collect();
        if databases.is_empty() {
            return Ok(());
        }
        databases.sort_unstable();
        databases.dedup();
        let names: Vec<String> = databases.iter().map(|d| text::quote_string(d)).collect();
        let keys: HashMap<(String, String), String> = self
            .query(
                &format!(
                    "SELECT database, name, primary_key FROM system.tables WHERE database IN ({})",
                    names.join(", ")
                ),
                &[],
            )?
            .iter()
            .map(|r| {
                let text = |k: usize| r[k].as_str().unwrap_or_default().to_string();
                ((text(0), text(1)), text(2))
            })
            .collect();
        for entry in listed.iter_mut() {
            if let Some(key) = entry.target.as_ref().and_then(|target| keys.get(target)) {
                entry.key = key.clone();
            }
        }
        Ok(())
    }
}
