//! The distinct values of a database's text columns, read for the value index
//! ([`schemascope_core::value_index`]): each text column with at most
//! [`MAX_DISTINCT_PER_COLUMN`] distinct values, read by one bounded `SELECT DISTINCT` inside the
//! database, within a time budget for the whole source.

use std::time::{Duration, Instant};

use schemascope_core::TableKind;
use schemascope_core::value_index::{ColumnValues, MAX_INDEXED_VALUES, ValueIndex};
use schemascope_sources::Source;
use schemascope_sources::sql::SqlValue;

/// A column with more distinct values than this is not a list people pick from (names of
/// things, not free text or identifiers): it is left out.
pub(crate) const MAX_DISTINCT_PER_COLUMN: usize = 10_000;
/// Time one column's read may take.
const COLUMN_TIMEOUT_MS: u64 = 5_000;
/// Time all reads of one source may take; columns past it are left out.
const SOURCE_BUDGET: Duration = Duration::from_secs(30);
/// Tables with more rows than this are read only when their profile says the column is small.
const UNPROFILED_ROWS: usize = 1_000_000;

/// Whether a declared column type holds text.
fn is_text_type(declared: &str) -> bool {
    let t = declared.to_ascii_lowercase();
    t.is_empty() || ["char", "text", "clob", "string", "citext"].iter().any(|k| t.contains(k))
}

/// The value index of `source` (empty for sources that are not databases).
pub(crate) fn value_index(source: &Source) -> ValueIndex {
    let Some(database) = &source.database else { return ValueIndex::default() };
    let dialect = database.dialect();
    let started = Instant::now();
    let mut columns = Vec::new();
    let mut total = 0usize;
    let Ok(catalog) = crate::schema_docs::catalog(source) else { return ValueIndex::default() };
    // Views show their tables' values again: base tables only.
    for table in catalog.tables.iter().filter(|t| t.kind == TableKind::Table) {
        let Some(collection) = source.collection(&table.name) else { continue };
        let profile = collection.profile_ready();
        for column in &table.columns {
            // A cancelled call reads no more columns (each read would fail at once anyway); its
            // caller drops the index cut short (see `schema_docs::index`).
            if started.elapsed() > SOURCE_BUDGET
                || total >= MAX_INDEXED_VALUES
                || schemascope_core::cancel::current().is_cancelled()
            {
                break;
            }
            if !is_text_type(&column.declared_type) {
                continue;
            }
            // What the profile knows decides without reading; else only tables small enough.
            let distinct = profile.and_then(|p| {
                p.column(&column.name).map(|prop| prop.strings.as_ref().map_or(0, |s| s.distinct))
            });
            match distinct {
                Some(0) => continue,
                Some(n) if n as usize > MAX_DISTINCT_PER_COLUMN => continue,
                None if collection.len() > UNPROFILED_ROWS => continue,
                _ => {}
            }
            let quoted = dialect.quote(&column.name);
            let sql = format!(
                "SELECT DISTINCT {quoted} FROM {} WHERE {quoted} IS NOT NULL LIMIT {}",
                dialect.quote_table(&table.name),
                MAX_DISTINCT_PER_COLUMN + 1
            );
            let Ok(rows) = database.query_with_timeout(&sql, &[], COLUMN_TIMEOUT_MS) else {
                continue;
            };
            if rows.len() > MAX_DISTINCT_PER_COLUMN {
                continue;
            }
            let read = rows.len();
            let values: Vec<String> = rows
                .into_iter()
                .filter_map(|row| match row.into_iter().next() {
                    Some(SqlValue::Text(text)) => Some(text),
                    _ => None,
                })
                .collect();
            if values.is_empty() {
                continue;
            }
            total += values.len();
            // Numbers or blobs in a text column (SQLite keeps what it is given): the list of
            // strings is not all the column holds.
            let complete = values.len() == read;
            columns.push(ColumnValues {
                table: table.name.clone(),
                column: column.name.clone(),
                values,
                complete,
            });
        }
    }
    let names = catalog.tables.iter().flat_map(|t| {
        std::iter::once(t.name.as_str()).chain(t.columns.iter().map(|c| c.name.as_str()))
    });
    ValueIndex::new(columns).with_schema_words(names)
}
