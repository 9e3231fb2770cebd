//! Relational sources: SQLite files, PostgreSQL and ClickHouse servers, read-only, with their
//! statistics computed inside the database; and DataFusion, embedded, for SQL over the files and
//! in-memory collections of the other sources.
//!
//! A [`Database`] is small on purpose: it runs one read-only statement with bound parameters
//! and reads its catalog. Everything else — profiling by pushdown (`pushdown.rs`), fetching rows
//! for samples (`rows.rs`) — is written once over that trait, asking the engine for what it
//! writes its own way (`engine.rs`: the JSON view, its aggregates, random rows). Each engine is
//! one folder (`sqlite/`, `postgres/`, `clickhouse/`) holding its `Database` and that SQL. Every
//! table becomes a [`schemascope_core::Collection`] of kind `Table` whose profile the database
//! computed; its rows never leave the database except as samples.

mod allow_list;
mod caps;
mod clickhouse;
mod datafusion;
mod engine;
pub mod guard;
mod json_columns;
mod mysql;
mod pool;
mod postgres;
pub mod pushdown;
pub mod rows;
mod sqlite;
mod stopper;
pub mod tls;

use std::fmt;
use std::sync::Arc;

use schemascope_core::collection::DeferredProfile;
use schemascope_core::{
    Catalog, Collection, CollectionProfile, ProfileFailure, ProfileProgress, TableInfo,
};
use serde_json::Value;

pub use self::caps::{Caps, Cut, CutRow, row_json_bytes};
pub use self::clickhouse::{CALLER_MEMORY_BYTES, ClickHouseDatabase, ReadOnlyMode};
pub(crate) use self::datafusion::{
    BatchSource, FileUnion, PartitionedTable, UnionMember, items_table, parts_for,
};
pub use self::datafusion::{
    CollectionsDatabase, DataFusionDatabase, QUERY_MEMORY_BYTES, QUERY_SPILL_BYTES, ServedTable,
};
pub use self::mysql::MySqlDatabase;
pub use self::postgres::MAX_PLANNED_SPILL_BYTES;
pub use self::postgres::{CALLER_TEMP_FILE_BYTES, PostgresDatabase};
pub use self::sqlite::create;
pub use self::sqlite::{SQLITE_HEAP_LIMIT_BYTES, SQLITE_MAX_LENGTH, SqliteDatabase};
use crate::error::SourceError;
use crate::profile_store::{EntryKey, ProfileStore};
pub use schemascope_query::Callables;

/// How long one statement may run before the database cancels it.
pub const STATEMENT_TIMEOUT_MS: u64 = 30_000;
/// How long one profiling statement may run: profiling scans whole tables, inside the database.
pub const PROFILE_TIMEOUT_MS: u64 = 600_000;

/// The SQL dialect of a database: the engine's name (the validator's [`SqlDialect`], one type
/// for both). What the engine's SQL looks like is asked of its rules
/// ([`schemascope_query::DialectRules`], through [`Dialect::rules`]); what pushdown profiling
/// writes for it, of its `EngineSql` (`engine.rs`).
///
/// [`SqlDialect`]: schemascope_query::SqlDialect
pub use schemascope_query::SqlDialect as Dialect;

/// One value read from or bound to a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// SQL NULL.
    Null,
    /// A whole number.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// A boolean (PostgreSQL).
    Bool(bool),
    /// A JSON document (PostgreSQL `json` and `jsonb`).
    Json(Value),
}

impl SqlValue {
    /// The value as JSON, as tools show rows: non-finite floats become the strings PostgreSQL
    /// writes for them ("NaN", "Infinity", "-Infinity").
    pub fn to_json(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Integer(i) => Value::from(*i),
            Self::Real(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| Value::String(non_finite(*f).into()), Value::Number),
            Self::Text(s) => Value::String(s.clone()),
            Self::Bool(b) => Value::Bool(*b),
            Self::Json(v) => v.clone(),
        }
    }

    /// [`SqlValue::to_json`] taking the value: text and JSON move instead of being copied, so a
    /// large row is never held twice.
    pub fn into_json(self) -> Value {
        match self {
            Self::Text(s) => Value::String(s),
            Self::Json(v) => v,
            small => small.to_json(),
        }
    }

    /// The value of a document column as JSON: text that arrives for it (MariaDB's `JSON` is
    /// text, which a derived table's result does not mark) is read as its document, numbers
    /// a JSON number cannot hold kept as their exact text.
    pub fn as_document(&self) -> Value {
        match self {
            Self::Text(text) => postgres::text::json(text).into_json(),
            other => other.to_json(),
        }
    }

    /// The value as a float, for numbers.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Integer(i) => Some(*i as f64),
            Self::Real(f) => Some(*f),
            _ => None,
        }
    }

    /// The value as an unsigned count (`COUNT`, `SUM` of flags); NULL counts as 0.
    pub fn as_count(&self) -> u64 {
        match self {
            Self::Integer(i) => u64::try_from(*i).unwrap_or(0),
            Self::Real(f) if *f >= 0.0 => *f as u64,
            _ => 0,
        }
    }

    /// The value as text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// The name PostgreSQL (and JSON readers such as JavaScript's) gives a non-finite float.
fn non_finite(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// Rows returned by a statement: values in select-list order.
pub type Rows = Vec<Vec<SqlValue>>;

/// The result of a statement read up to its caps.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// Column names, in select-list order.
    pub columns: Vec<String>,
    /// Each column's type as the engine names it (`numeric`, `jsonb`, `_int4`); empty where the
    /// engine does not say (SQLite's expressions, whose values carry their own type).
    pub column_types: Vec<String>,
    /// The rows kept (within both caps).
    pub rows: Rows,
    /// True when the statement had more rows than were kept.
    pub more: bool,
    /// Which cap stopped the reading, when one did.
    pub cut: Option<Cut>,
    /// Rows read from the database, the one that passed a cap included: reading stops there.
    pub rows_read: usize,
    /// The row that passed the byte cap, as far as it was read (when the byte cap cut).
    pub cut_row: Option<CutRow>,
    /// What the engine said about the statement beside its rows, in its words: MySQL's and
    /// MariaDB's warnings (a recursion stopped at its limit, "the query result may be
    /// incomplete"; a value truncated by a conversion). The rows may not be what the statement
    /// asks for when there are any.
    pub warnings: Vec<String>,
}

/// A read-only connection to a database.
///
/// Implementations guarantee that nothing run through them can change data: SQLite files are
/// opened read-only with `query_only` on and `ATTACH` disabled; PostgreSQL statements run in a
/// `READ ONLY` transaction with a statement timeout; ClickHouse statements carry `readonly` and
/// their limits as settings (or, for a user whose profile is `readonly=1` and may set nothing,
/// are bounded and killed from here). The rest of schemascope only composes
/// `SELECT`s over this trait.
pub trait Database: Send + Sync + fmt::Debug {
    /// The dialect, for the SQL written against it.
    fn dialect(&self) -> Dialect;

    /// The predicate "column `quoted` holds `value`" as schemascope shows values, `value` being
    /// parameter 1: by default the column's text where the engine compares no number with a
    /// string (ClickHouse), else the column; an engine whose values are shown otherwise than
    /// stored says how they compare (SQLite: a number in a column without numeric affinity, a
    /// blob by its description).
    fn shown_value_predicate(&self, quoted: &str, value: &str) -> String {
        let _ = value;
        let dialect = self.dialect();
        format!("{} = {}", dialect.rules().compared_with_text(quoted), dialect.param(1))
    }

    /// Where the database is, for messages (a path, or a URI without its password).
    fn location(&self) -> &str;

    /// Files besides the source's own whose change changes the data, for live refresh: none by
    /// default (a server's database is not a file); SQLite's write-ahead log, where a commit
    /// in WAL mode is written without touching the database file.
    fn companion_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Reads the tables, views, columns and keys (row counts are filled in by profiling).
    fn catalog(&self) -> Result<Catalog, SourceError>;

    /// What statements on this database may call: the engine's own allow-list of functions,
    /// operators and casts, read from its catalog (once per connection).
    fn callables(&self) -> Result<Arc<Callables>, SourceError>;

    /// Asks the engine to compile `sql` as it would before running it — names, types and
    /// functions resolved by the engine itself — and runs nothing: SQLite prepares the statement
    /// (`sqlite3_prepare`), PostgreSQL parses and analyses it (the extended protocol's Parse) in a
    /// read-only transaction that is rolled back, ClickHouse analyses it for `DESCRIBE TABLE
    /// (query)`. The same read-only checks as
    /// [`Database::run_capped`] come first. A statement the engine rejects is a
    /// [`SourceError::Statement`] of class `Syntax` with the engine's message.
    fn compile(&self, sql: &str) -> Result<(), SourceError>;

    /// Runs one read-only statement with bound parameters, cancelled after `timeout_ms`, and
    /// stops reading rows as soon as a cap is reached: the row past `caps.max_rows`, or the
    /// row that takes the rows kept past `caps.max_bytes` of JSON ([`row_json_bytes`]). The rest
    /// are never fetched, so memory stays within the caps plus one row.
    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError>;

    /// Runs a statement a caller sent (execute_query) as [`Database::run_capped`] does, with the
    /// bounds only callers' statements meet on the database host's disk and memory (the
    /// engine's own profiling statements legitimately sort whole tables): PostgreSQL refuses a
    /// statement its planner expects to spill more than [`MAX_PLANNED_SPILL_BYTES`] to
    /// temporary files, and caps its temporary files at [`CALLER_TEMP_FILE_BYTES`] where the
    /// role may set `temp_file_limit`; ClickHouse, where settings can be sent, forbids spilling
    /// to disk and bounds the statement's memory.
    fn run_for_caller(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.run_capped(sql, params, caps, timeout_ms)
    }

    /// Runs one read-only statement with bound parameters, cancelled after `timeout_ms`, reading
    /// at most `max_rows` rows (all when `None`) — the rest are never fetched.
    fn run(
        &self,
        sql: &str,
        params: &[SqlValue],
        max_rows: Option<usize>,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.run_capped(sql, params, Caps { max_rows, max_bytes: None }, timeout_ms)
    }

    /// Runs one read-only statement with bound parameters, cancelled after `timeout_ms`.
    fn query_with_timeout(
        &self,
        sql: &str,
        params: &[SqlValue],
        timeout_ms: u64,
    ) -> Result<Rows, SourceError> {
        self.run(sql, params, None, timeout_ms).map(|r| r.rows)
    }

    /// A token that changes whenever `table`'s rows may have changed, under which its profile is
    /// kept across restarts ([`crate::profile_store`]); `None` when the engine cannot tell (a
    /// view), and the table is then profiled anew each time.
    fn data_version(&self, _table: &TableInfo) -> Result<Option<String>, SourceError> {
        Ok(None)
    }

    /// The zone the server writes dates and times that carry no zone of their own in
    /// (ClickHouse's `timezone()`), when the engine has one.
    fn time_zone(&self) -> Option<&str> {
        None
    }

    /// How many statements of one table's profile may run at once on this database (each on
    /// its own connection; the pool keeps one more for callers).
    fn profile_parallelism(&self) -> usize {
        1
    }

    /// Runs one read-only statement with bound parameters and the default timeout
    /// ([`STATEMENT_TIMEOUT_MS`]).
    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Rows, SourceError> {
        self.query_with_timeout(sql, params, STATEMENT_TIMEOUT_MS)
    }
}

/// A database with its profiled tables, ready to become a [`crate::Source`].
pub struct LoadedDatabase {
    /// The connection, kept for samples and histograms.
    pub database: Arc<dyn Database>,
    /// One collection per table and view, in name order.
    pub collections: Vec<Arc<Collection>>,
}

/// Reads the catalog; each table is profiled inside the database when a tool first needs it,
/// or read from `store` when it was profiled before at the same data version.
pub fn load_database(
    database: Arc<dyn Database>,
    store: Option<&ProfileStore>,
) -> Result<LoadedDatabase, SourceError> {
    let catalog = database.catalog()?;
    let collections = catalog
        .tables
        .into_iter()
        .map(|table| {
            Arc::new(Collection::from_table(
                table,
                Box::new(TableProfiler { database: Arc::clone(&database), store: store.cloned() }),
            ))
        })
        .collect();
    Ok(LoadedDatabase { database, collections })
}

/// Profiles a table by pushdown when its collection first needs the profile.
#[derive(Debug)]
struct TableProfiler {
    database: Arc<dyn Database>,
    store: Option<ProfileStore>,
}

impl TableProfiler {
    fn data_version(&self, table: &TableInfo) -> Option<String> {
        // Not knowing the version only means not reusing a profile.
        self.database.data_version(table).ok().flatten()
    }
}

impl DeferredProfile for TableProfiler {
    fn compute(
        &self,
        table: &TableInfo,
        progress: &ProfileProgress,
    ) -> Result<CollectionProfile, ProfileFailure> {
        let stored = self.store.as_ref().and_then(|store| {
            let key = EntryKey::new(self.database.location(), table, self.data_version(table)?);
            Some((store, key))
        });
        if let Some(profile) = stored.as_ref().and_then(|(store, key)| store.load(key)) {
            return Ok(profile);
        }
        let profile = pushdown::profile_table_with_progress(&*self.database, table, progress)
            .map_err(|e| ProfileFailure {
                // An unreachable or restarting server passes; a timeout or a refusal would only
                // repeat.
                transient: e.class() == crate::error::ErrorClass::Resource,
                message: e.to_string(),
            })?;
        // Kept only when the version did not move while the table was read: the profile is
        // then of that one version.
        if let Some((store, key)) = stored
            && self.data_version(table).as_deref() == Some(key.data_version())
        {
            store.save(&key, &profile);
        }
        Ok(profile)
    }
}
