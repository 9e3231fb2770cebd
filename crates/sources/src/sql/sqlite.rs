//! SQLite through `rusqlite` (bundled): opened read-only, with `query_only` on, `ATTACH`
//! disabled, and a statement deadline enforced by the progress handler.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::types::{Value as Bound, ValueRef};
use rusqlite::{Connection, OpenFlags};
use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};

use super::{Database, Dialect, QueryResult, SqlValue};
use crate::error::ErrorClass;
use crate::error::SourceError;

/// A SQLite database file, read-only.
#[derive(Debug)]
pub struct SqliteDatabase {
    path: PathBuf,
    location: String,
    connection: Mutex<Connection>,
    /// Milliseconds since `epoch` after which the running statement is interrupted.
    deadline_ms: Arc<AtomicU64>,
    epoch: Instant,
}

impl SqliteDatabase {
    /// Opens `path` read-only. The file must exist and be a SQLite database.
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let location = path.display().to_string();
        let fail = |message: String| SourceError::Database { location: location.clone(), message };
        if !path.is_file() {
            return Err(fail("no such file (a SQLite source must be an existing database file; schemascope never creates one)".into()));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let mut connection = Connection::open_with_flags(path, flags).map_err(|e| fail(format!("cannot open: {e}")))?;
        // Defence in depth beside the read-only open: no writes even to temp tables, and no
        // other database files attached.
        connection.pragma_update(None, "query_only", true).map_err(|e| fail(format!("cannot set query_only: {e}")))?;
        let _ = connection.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0);
        // Compiled statements are kept: tools and the pipeline repeat the same queries.
        connection.set_prepared_statement_cache_capacity(64);
        let epoch = Instant::now();
        let deadline_ms = Arc::new(AtomicU64::new(u64::MAX));
        let deadline = Arc::clone(&deadline_ms);
        connection
            .progress_handler(10_000, Some(move || epoch.elapsed().as_millis() as u64 > deadline.load(Ordering::Relaxed)))
            .map_err(|e| fail(format!("cannot install the statement deadline: {e}")))?;
        let database = Self { path: path.to_path_buf(), location: location.clone(), connection: Mutex::new(connection), deadline_ms, epoch };
        // Reading the schema tells a database from some other file at once.
        database.query("SELECT count(*) FROM sqlite_schema", &[]).map_err(|e| fail(format!("not a readable SQLite database ({e})")))?;
        Ok(database)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, e: rusqlite::Error, timeout_ms: u64) -> SourceError {
        use rusqlite::ErrorCode as Code;
        let class = match &e {
            rusqlite::Error::SqliteFailure(code, _) => match code.code {
                Code::OperationInterrupted => return SourceError::Timeout { location: self.location.clone(), timeout_ms },
                Code::ReadOnly | Code::AuthorizationForStatementDenied | Code::PermissionDenied => ErrorClass::Refused,
                Code::DatabaseBusy
                | Code::DatabaseLocked
                | Code::CannotOpen
                | Code::NotADatabase
                | Code::DatabaseCorrupt
                | Code::SystemIoFailure
                | Code::OutOfMemory
                | Code::DiskFull => ErrorClass::Resource,
                _ => ErrorClass::Syntax,
            },
            rusqlite::Error::MultipleStatement => ErrorClass::Refused,
            _ => ErrorClass::Syntax,
        };
        let message = match &e {
            rusqlite::Error::MultipleStatement => "refused: several statements in one query (send one statement)".to_string(),
            other => other.to_string(),
        };
        SourceError::Statement { location: self.location.clone(), message, class }
    }

    fn table_info(&self, name: &str, kind: TableKind) -> Result<TableInfo, SourceError> {
        let name_param = [SqlValue::Text(name.to_string())];
        let mut primary: Vec<(i64, String)> = Vec::new();
        let mut columns = Vec::new();
        for row in self.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid", &name_param)? {
            let column = text(&row[0]);
            let pk = int(&row[3]);
            if pk > 0 {
                primary.push((pk, column.clone()));
            }
            columns.push(ColumnInfo { name: column, declared_type: text(&row[1]), nullable: int(&row[2]) == 0 && pk == 0, comment: None, base_type: None });
        }
        primary.sort();
        let mut foreign_keys: Vec<(i64, ForeignKey)> = Vec::new();
        for row in self.query("SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq", &name_param)? {
            let id = int(&row[0]);
            let (referenced, from, to) = (text(&row[1]), text(&row[2]), row[3].as_str().map(str::to_string));
            match foreign_keys.last_mut() {
                Some((last, fk)) if *last == id => {
                    fk.columns.push(from);
                    fk.referenced_columns.extend(to);
                }
                _ => foreign_keys
                    .push((id, ForeignKey { columns: vec![from], referenced_table: referenced, referenced_columns: to.into_iter().collect() })),
            }
        }
        Ok(TableInfo {
            name: name.to_string(),
            kind,
            columns,
            primary_key: primary.into_iter().map(|(_, c)| c).collect(),
            foreign_keys: foreign_keys.into_iter().map(|(_, fk)| fk).collect(),
            row_count: None,
            comment: None,
        })
    }
}

fn text(value: &SqlValue) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn int(value: &SqlValue) -> i64 {
    match value {
        SqlValue::Integer(i) => *i,
        _ => 0,
    }
}

fn bind(value: &SqlValue) -> Bound {
    match value {
        SqlValue::Null => Bound::Null,
        SqlValue::Integer(i) => Bound::Integer(*i),
        SqlValue::Real(f) => Bound::Real(*f),
        SqlValue::Text(s) => Bound::Text(s.clone()),
        SqlValue::Bool(b) => Bound::Integer(i64::from(*b)),
        SqlValue::Json(v) => Bound::Text(v.to_string()),
    }
}

fn read(value: ValueRef<'_>) -> SqlValue {
    match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Text(format!("<blob: {} bytes>", b.len())),
    }
}

impl Database for SqliteDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        let relations = self.query(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
            &[],
        )?;
        let mut tables = Vec::with_capacity(relations.len());
        for row in relations {
            let kind = if row[1].as_str() == Some("view") { TableKind::View } else { TableKind::Table };
            let mut table = self.table_info(&text(&row[0]), kind)?;
            // Counting a SQLite table walks its b-tree without reading rows: cheap enough to do now.
            let counted = self.query(&format!("SELECT COUNT(*) FROM {}", Dialect::Sqlite.quote(&table.name)), &[])?;
            table.row_count = counted.first().map(|r| r[0].as_count());
            tables.push(table);
        }
        // A foreign key declared without columns references the other table's primary key.
        let keys: Vec<(String, Vec<String>)> = tables.iter().map(|t| (t.name.clone(), t.primary_key.clone())).collect();
        for table in &mut tables {
            for fk in &mut table.foreign_keys {
                if fk.referenced_columns.is_empty()
                    && let Some((_, pk)) = keys.iter().find(|(name, _)| name.eq_ignore_ascii_case(&fk.referenced_table))
                {
                    fk.referenced_columns = pk.clone();
                }
            }
        }
        Ok(Catalog { tables })
    }

    fn run(&self, sql: &str, params: &[SqlValue], max_rows: Option<usize>, timeout_ms: u64) -> Result<QueryResult, SourceError> {
        if let Some(message) = super::guard::refusal(sql, Dialect::Sqlite) {
            return Err(SourceError::Statement { location: self.location.clone(), message, class: ErrorClass::Refused });
        }
        let connection = self.connection.lock().map_err(|_| SourceError::Database {
            location: self.location.clone(),
            message: "connection unusable after a failed statement; reload the source".into(),
        })?;
        let mut statement = connection.prepare_cached(sql).map_err(|e| self.error(e, timeout_ms))?;
        if !statement.readonly() {
            return Err(SourceError::Statement {
                location: self.location.clone(),
                message: "refused: the statement would write (sources are read-only)".into(),
                class: ErrorClass::Refused,
            });
        }
        let names: Vec<String> = statement.column_names().map(str::to_string).collect();
        let columns = names.len();
        let bound: Vec<Bound> = params.iter().map(bind).collect();
        let deadline = self.epoch.elapsed() + Duration::from_millis(timeout_ms);
        self.deadline_ms.store(deadline.as_millis() as u64, Ordering::Relaxed);
        let result = (|| {
            let mut rows = statement.query(rusqlite::params_from_iter(bound.iter()))?;
            let mut out = Vec::new();
            let mut more = false;
            while let Some(row) = rows.next()? {
                if max_rows.is_some_and(|max| out.len() >= max) {
                    more = true;
                    break;
                }
                out.push((0..columns).map(|i| row.get_ref(i).map(read)).collect::<Result<Vec<_>, _>>()?);
            }
            Ok((out, more))
        })();
        self.deadline_ms.store(u64::MAX, Ordering::Relaxed);
        let (rows, more) = result.map_err(|e| self.error(e, timeout_ms))?;
        Ok(QueryResult { columns: names, rows, more })
    }
}
