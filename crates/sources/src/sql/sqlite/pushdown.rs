//! SQLite's SQL for pushdown profiling and samples: every value with its own type (blobs
//! described), random rows by rowid.

use schemascope_core::{ColumnInfo, TableInfo, TableKind};
use serde_json::Value;

use super::quartiles;
use crate::error::SourceError;
use crate::sql::engine::{EngineSql, NumberColumn, ReadRows, Spread};
use crate::sql::pushdown::ValueClass;
use crate::sql::rows::POOL_ROWS;
use crate::sql::{Database, Dialect, SqlValue};

/// SQLite's [`EngineSql`].
#[derive(Debug)]
pub(crate) struct SqliteSql;

impl EngineSql for SqliteSql {
    fn view_column(
        &self,
        _: usize,
        _: &ColumnInfo,
        quoted: &str,
        _: &mut Vec<String>,
        _: &mut Vec<usize>,
    ) -> (String, ValueClass) {
        (super::value_text::view_sql(quoted), ValueClass::Dynamic)
    }

    fn spread_and_quartiles(&self, column: &NumberColumn<'_>) -> Result<Spread, SourceError> {
        quartiles::spread_and_quartiles(column)
    }

    fn length(&self, expr: &str) -> String {
        super::value_text::length_sql(expr)
    }

    fn as_float(&self, expr: &str) -> String {
        format!("({expr}) * 1.0")
    }

    /// The JSON view: blobs are described rather than shown.
    fn shown(&self, i: usize) -> String {
        format!("c{i}")
    }

    fn random_rows(
        &self,
        db: &dyn Database,
        table: &TableInfo,
        _: u64,
        seed: u64,
        read: &ReadRows<'_>,
    ) -> Option<Result<Vec<Value>, SourceError>> {
        if table.kind != TableKind::Table {
            return None;
        }
        let quoted = Dialect::Sqlite.quote_table(&table.name);
        // A WITHOUT ROWID table: its first rows.
        let bounds = db.query(&format!("SELECT MIN(rowid), MAX(rowid) FROM {quoted}"), &[]).ok()?;
        let (low, high) = match bounds.first().map(Vec::as_slice) {
            Some([SqlValue::Integer(l), SqlValue::Integer(h)]) => (*l, *h),
            _ => return Some(Ok(Vec::new())),
        };
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut ids: Vec<i64> = (0..POOL_ROWS).map(|_| rng.i64(low..=high)).collect();
        ids.sort_unstable();
        ids.dedup();
        // Each random rowid seeks the next existing row, so gaps in the rowids cost nothing.
        let relation = format!(
            "{quoted} WHERE rowid IN (SELECT (SELECT t.rowid FROM {quoted} AS t WHERE t.rowid >= wanted.value ORDER BY t.rowid LIMIT 1) FROM json_each(?1) AS wanted)"
        );
        Some(read(
            relation,
            &[SqlValue::Text(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into()))],
        ))
    }
}
