//! A MySQL or MariaDB database's catalog from `information_schema`: the tables and views this
//! user may read in the URI's database, their columns with their full types (`decimal(10,2)`,
//! `enum('a','b')`; MariaDB's `JSON`, stored as `longtext` with a `json_valid` check, as
//! `json`), comments, primary and foreign keys, and row counts — exact below
//! [`EXACT_COUNT_BELOW`] rows by the storage engine's estimate.

use std::collections::HashMap;

use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};

use crate::error::SourceError;
use crate::sql::{Database, Dialect, SqlValue};

/// Tables estimated below this many rows are counted exactly when the catalog is read.
const EXACT_COUNT_BELOW: u64 = 1_000_000;

/// Small tables counted by one statement.
const COUNT_BATCH: usize = 100;

const TABLES: &str = "SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME";

const COLUMNS: &str = "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_COMMENT \
     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION";

const KEYS: &str = "SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME \
     FROM information_schema.KEY_COLUMN_USAGE k \
     WHERE k.TABLE_SCHEMA = DATABASE() AND (k.CONSTRAINT_NAME = 'PRIMARY' OR k.REFERENCED_TABLE_NAME IS NOT NULL) \
     ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION";

/// MariaDB's `JSON` columns: `longtext` with the check `json_valid(column)` the server adds.
const MARIADB_JSON: &str = "SELECT TABLE_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS \
     WHERE CONSTRAINT_SCHEMA = DATABASE() AND CHECK_CLAUSE LIKE 'json_valid(%'";

fn text(value: &SqlValue) -> &str {
    value.as_str().unwrap_or_default()
}

/// The column a MariaDB check `json_valid(`column`)` is about.
fn json_checked_column(clause: &str) -> Option<String> {
    let inner = clause.trim().strip_prefix("json_valid(")?.strip_suffix(')')?.trim();
    let name = inner.strip_prefix('`').and_then(|n| n.strip_suffix('`')).unwrap_or(inner);
    Some(name.replace("``", "`"))
}

/// Reads the catalog of `db`'s database.
pub(super) fn read(db: &dyn Database) -> Result<Catalog, SourceError> {
    let mut tables: Vec<TableInfo> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for row in db.query(TABLES, &[])? {
        let kind = if text(&row[1]).contains("VIEW") { TableKind::View } else { TableKind::Table };
        let comment = text(&row[3]);
        // A view's comment is the word VIEW; InnoDB may add its own note after a `; `.
        let comment =
            (kind == TableKind::Table && !comment.is_empty()).then(|| comment.to_string());
        by_name.insert(text(&row[0]).to_string(), tables.len());
        tables.push(TableInfo {
            name: text(&row[0]).to_string(),
            kind,
            columns: Vec::new(),
            primary_key: Vec::new(),
            foreign_keys: Vec::new(),
            row_count: match &row[2] {
                SqlValue::Integer(n) if kind == TableKind::Table => u64::try_from(*n).ok(),
                _ => None,
            },
            row_count_estimated: true,
            comment,
        });
    }
    let json_columns: Vec<(String, String)> = if db.dialect() == Dialect::MariaDb {
        db.query(MARIADB_JSON, &[])?
            .iter()
            .filter_map(|r| Some((text(&r[0]).to_string(), json_checked_column(text(&r[1]))?)))
            .collect()
    } else {
        Vec::new()
    };
    for row in db.query(COLUMNS, &[])? {
        let Some(&t) = by_name.get(text(&row[0])) else { continue };
        let name = text(&row[1]).to_string();
        let declared = text(&row[2]);
        let json =
            json_columns.iter().any(|(table, column)| table == text(&row[0]) && *column == name);
        let comment = text(&row[4]);
        tables[t].columns.push(ColumnInfo {
            declared_type: if json { "json".into() } else { declared.to_string() },
            nullable: text(&row[3]) != "NO",
            comment: (!comment.is_empty()).then(|| comment.to_string()),
            base_type: json.then(|| declared.to_string()),
            name,
        });
    }
    let mut foreign: Vec<(usize, String, ForeignKey)> = Vec::new();
    for row in db.query(KEYS, &[])? {
        let Some(&t) = by_name.get(text(&row[0])) else { continue };
        let (constraint, column) = (text(&row[1]), text(&row[2]).to_string());
        if constraint == "PRIMARY" {
            tables[t].primary_key.push(column);
            continue;
        }
        // A key to another database's table, or one this user cannot read, is left out.
        let referenced = text(&row[4]);
        if !by_name.contains_key(referenced) {
            continue;
        }
        match foreign.iter_mut().find(|(k, name, _)| *k == t && name == constraint) {
            Some((_, _, key)) => {
                key.columns.push(column);
                key.referenced_columns.push(text(&row[5]).to_string());
            }
            None => foreign.push((
                t,
                constraint.to_string(),
                ForeignKey {
                    columns: vec![column],
                    referenced_table: referenced.to_string(),
                    referenced_columns: vec![text(&row[5]).to_string()],
                },
            )),
        }
    }
    for (t, _, key) in foreign {
        tables[t].foreign_keys.push(key);
    }
    count_small_tables(db, &mut tables)?;
    Ok(Catalog { tables })
}

/// Counts the rows of tables the estimate puts below [`EXACT_COUNT_BELOW`], many per statement.
fn count_small_tables(db: &dyn Database, tables: &mut [TableInfo]) -> Result<(), SourceError> {
    let dialect = db.dialect();
    let small: Vec<usize> = (0..tables.len())
        .filter(|&i| {
            tables[i].kind == TableKind::Table
                && tables[i].row_count.is_none_or(|n| n < EXACT_COUNT_BELOW)
        })
        .collect();
    for batch in small.chunks(COUNT_BATCH) {
        let sql = batch
            .iter()
            .map(|&i| format!("SELECT {i}, COUNT(*) FROM {}", dialect.quote_table(&tables[i].name)))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let counted = match db.query(&sql, &[]) {
            Ok(rows) => rows,
            // A table dropped since it was listed: each on its own, the dropped ones left
            // with their estimate.
            Err(_) => batch
                .iter()
                .filter_map(|&i| {
                    db.query(
                        &format!(
                            "SELECT {i}, COUNT(*) FROM {}",
                            dialect.quote_table(&tables[i].name)
                        ),
                        &[],
                    )
                    .ok()
                })
                .flatten()
                .collect(),
        };
        for row in counted {
            let Some(table) = usize::try_from(row[0].as_count())
                .ok()
                .filter(|i| batch.contains(i))
                .and_then(|i| tables.get_mut(i))
            else {
                continue;
            };
            table.row_count = Some(row[1].as_count());
            table.row_count_estimated = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_json_checks_name_their_column() {
        assert_eq!(json_checked_column("json_valid(`doc`)").as_deref(), Some("doc"));
        assert_eq!(json_checked_column("json_valid(`a``b`)").as_deref(), Some("a`b"));
        assert_eq!(json_checked_column("json_valid(doc)").as_deref(), Some("doc"));
        assert_eq!(json_checked_column("length(x) > 1"), None);
    }
}
