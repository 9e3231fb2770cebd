//! SQLite through `rusqlite` (bundled): a small pool of read-only connections, each with
//! `query_only` on, the engine's authorizer as the gate on what a statement may do
//! (`gate.rs`), limits on value sizes, guards on the functions whose one call could
//! outlast the deadline (`guards.rs`), values read as text the same way in rows and in the
//! profile's statements (`value_text.rs`), a statement deadline enforced by the progress
//! handler, and a process-wide heap limit.

pub mod create;
mod gate;
mod guards;
mod pushdown;
mod quartiles;
mod value_text;

pub(crate) use self::pushdown::SqliteSql;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::types::{Value as Bound, ValueRef};
use rusqlite::{Connection, OpenFlags};
use schemascope_core::sync::lock;
use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};
use schemascope_query::Callables;

use self::gate::{FunctionNames, Gate};
use super::caps::Budget;
use super::pool::{Lease, Pool, pool_size};
use super::{Caps, Database, Dialect, QueryResult, STATEMENT_TIMEOUT_MS, SqlValue};
use crate::error::ErrorClass;
use crate::error::SourceError;

/// Longest string or blob a statement may make or read, in bytes (SQLITE_LIMIT_LENGTH). One
/// function call runs inside one step of the engine, where the deadline cannot stop it; with
/// its arguments and result bounded, so is its work (`replace(printf('%.*c', 30000000, 'a'),
/// …)` fails at once instead of running 25 s in 6 GB). Stored values longer than this cannot
/// be read either.
pub const SQLITE_MAX_LENGTH: i32 = 16 * 1024 * 1024;

/// Longest LIKE or GLOB pattern, in bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH): matching costs up
/// to the pattern's length times the text's, inside one step (a 100-byte pattern over a 16 MiB
/// value: a few seconds at most).
const MAX_LIKE_PATTERN: i32 = 100;

/// Memory all SQLite connections of the process may hold together (sqlite3_hard_heap_limit64:
/// past it an allocation fails and the statement ends with "out of memory"). Process-wide by
/// SQLite's design: it bounds the sources and the graph sessions' store alike.
pub const SQLITE_HEAP_LIMIT_BYTES: i64 = 1 << 30;

/// Steps of the engine between two checks of the deadline and of the call's cancellation. Few:
/// a row can take a whole second in one step (a LIKE over a long value), and a check every
/// 10,000 steps let a statement of ten such rows run ten times past its deadline; a check costs
/// a clock read.
const PROGRESS_STEPS: i32 = 100;

/// One pooled connection and the deadline its progress handler reads.
struct Pooled {
    connection: Connection,
    /// Milliseconds since `epoch` after which the running statement is interrupted.
    deadline_ms: Arc<AtomicU64>,
    /// The running statement's call's cancellation flag: set, the statement is interrupted.
    cancelled: Arc<std::sync::Mutex<Option<Arc<std::sync::atomic::AtomicBool>>>>,
    epoch: Instant,
    /// The authorizer's state: what it last refused, whether a statement runs.
    gate: Arc<Gate>,
}

/// A SQLite database file, read-only.
pub struct SqliteDatabase {
    path: PathBuf,
    location: String,
    /// The file's content digest with the file stamps it was computed at: a database of many
    /// tables is read once per change, not once per table.
    digest: std::sync::Mutex<Option<(Vec<FileStamp>, String)>>,
    pool: Pool<Pooled>,
    callables: Arc<Callables>,
    /// The function names the authorizer lets through: `callables`', and the profile's own
    /// (`value_text.rs`).
    allowed: Arc<FunctionNames>,
}

impl std::fmt::Debug for SqliteDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteDatabase")
            .field("location", &self.location)
            .field("connections", &self.pool.max())
            .finish_non_exhaustive()
    }
}

/// Sets the process-wide heap limit, once.
#[allow(unsafe_code)] // one FFI call, its safety stated inside
fn limit_heap() {
    static ONCE: Once = Once::new();
    // SAFETY: sqlite3_hard_heap_limit64 only stores the limit (under SQLite's own mutex); any
    // thread may call it at any time.
    ONCE.call_once(|| unsafe {
        rusqlite::ffi::sqlite3_hard_heap_limit64(SQLITE_HEAP_LIMIT_BYTES);
    });
}

/// Opens one read-only connection to `path`, set up as every pooled connection is, with the
/// authorizer letting `allowed` functions through (none yet for the first connection, which
/// reads the function list before its gate is installed).
fn connect(
    path: &Path,
    allowed: Option<&Arc<FunctionNames>>,
) -> Result<(Pooled, Option<(Callables, FunctionNames)>), rusqlite::Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let mut connection = Connection::open_with_flags(path, flags)?;
    // Defence in depth beside the read-only open and the authorizer: no writes even to temp
    // tables, and no other database files attached.
    connection.pragma_update(None, "query_only", true)?;
    connection.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    connection.set_limit(Limit::SQLITE_LIMIT_LENGTH, SQLITE_MAX_LENGTH)?;
    connection.set_limit(Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN)?;
    // Compiled statements are kept: tools and the pipeline repeat the same queries.
    connection.set_prepared_statement_cache_capacity(32);
    let epoch = Instant::now();
    let deadline_ms = Arc::new(AtomicU64::new(u64::MAX));
    let deadline = Arc::clone(&deadline_ms);
    let cancelled: Arc<std::sync::Mutex<Option<Arc<std::sync::atomic::AtomicBool>>>> =
        Arc::default();
    let flag = Arc::clone(&cancelled);
    connection.progress_handler(
        PROGRESS_STEPS,
        Some(move || {
            epoch.elapsed().as_millis() as u64 > deadline.load(Ordering::Relaxed)
                || lock(&flag).as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
        }),
    )?;
    let (listed, allowed) = match allowed {
        Some(allowed) => (None, Arc::clone(allowed)),
        None => {
            let (callables, mut names) = gate::function_list(&connection)?;
            // The profile's own functions: allowed by the gate, unknown to the validator.
            names.allow(value_text::CHAR_LENGTH);
            names.allow(value_text::BLOB_DESCRIPTION);
            let allowed = Arc::new(names.clone());
            (Some((callables, names)), allowed)
        }
    };
    // After the function list was read, so that it shows the engine's own flags.
    guards::install(&connection)?;
    value_text::install(&connection)?;
    let gate = gate::install(&mut connection, allowed)?;
    Ok((Pooled { connection, deadline_ms, cancelled, epoch, gate }, listed))
}

impl SqliteDatabase {
    /// Opens `path` read-only. The file must exist and be a SQLite database.
    pub fn open(path: &Path) -> Result<Self, SourceError> {
        let location = path.display().to_string();
        let fail = |message: String| SourceError::Database { location: location.clone(), message };
        // Checked on the opened file, which a FIFO or device cannot make wait: SQLite's own
        // open of a FIFO would block until a writer came.
        if let Err(error) = crate::file::open_regular(path) {
            return Err(fail(match error.io_kind() {
                Some(std::io::ErrorKind::NotFound) => {
                    "no such file (a SQLite source must be an existing database file; schemascope never creates one)".into()
                }
                _ => error.to_string(),
            }));
        }
        limit_heap();
        let (first, listed) = connect(path, None).map_err(|e| match e.sqlite_error_code() {
            // Setting the connection up reads the file: another kind of file fails here.
            Some(rusqlite::ErrorCode::NotADatabase) => {
                fail(format!("not a readable SQLite database ({e})"))
            }
            _ => fail(format!("cannot open: {e}")),
        })?;
        let Some((callables, names)) = listed else {
            return Err(fail("cannot read the function list".into()));
        };
        let database = Self {
            path: path.to_path_buf(),
            location: location.clone(),
            digest: std::sync::Mutex::new(None),
            pool: Pool::new(first, pool_size()),
            callables: Arc::new(callables),
            allowed: Arc::new(names),
        };
        // Reading the schema tells a database from some other file at once.
        database
            .query("SELECT count(*) FROM sqlite_schema", &[])
            .map_err(|e| fail(format!("not a readable SQLite database ({e})")))?;
        Ok(database)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A pooled connection for `sql`, after the statement-level refusals every statement meets
    /// first, waiting at most `timeout_ms` for one.
    fn checked_connection(
        &self,
        sql: &str,
        timeout_ms: u64,
    ) -> Result<Lease<'_, Pooled>, SourceError> {
        if let Some(message) = super::guard::refusal(sql, Dialect::Sqlite) {
            return Err(SourceError::Statement {
                location: self.location.clone(),
                message,
                class: ErrorClass::Refused,
            });
        }
        let wait = Duration::from_millis(timeout_ms);
        let pooled = self.pool.acquire(wait, || connect(&self.path, Some(&self.allowed)).map(|(pooled, _)| pooled)).map_err(|e| match e {
            Some(e) => SourceError::Database { location: self.location.clone(), message: format!("cannot open another connection: {e}") },
            None => SourceError::Statement {
                location: self.location.clone(),
                message: format!("all {} connections stayed busy for the statement's {timeout_ms} ms timeout; try again", self.pool.max()),
                class: ErrorClass::Resource,
            },
        })?;
        // A refusal recorded for an earlier statement is not this one's.
        let _ = pooled.gate.denied();
        Ok(pooled)
    }

    /// Refuses a prepared statement SQLite says would write.
    fn refuse_writes(&self, statement: &rusqlite::Statement<'_>) -> Result<(), SourceError> {
        if statement.readonly() {
            return Ok(());
        }
        Err(SourceError::Statement {
            location: self.location.clone(),
            message: "refused: the statement would write (sources are read-only)".into(),
            class: ErrorClass::Refused,
        })
    }

    fn error(
        &self,
        e: rusqlite::Error,
        timeout_ms: u64,
        pooled: &Pooled,
        deadline_ms: u64,
    ) -> SourceError {
        use rusqlite::ErrorCode as Code;
        let location = self.location.clone();
        let statement = |message: String, class| SourceError::Statement {
            location: location.clone(),
            message,
            class,
        };
        // SQLite reports a denied function as a plain error ("not authorized to use function"):
        // what the authorizer recorded says it was the gate, and why.
        if let Some(what) = pooled.gate.denied() {
            return statement(
                format!(
                    "refused by SQLite's authorizer: {what} (a statement may only read, and call the functions SQLite lists as safe)"
                ),
                ErrorClass::Refused,
            );
        }
        // The length limit, met in the engine or inside a guarded function (guards.rs,
        // whose error reaches here as the function's own).
        if e.sqlite_error_code() == Some(Code::TooBig)
            || e.to_string().contains("string or blob too big")
        {
            return statement(
                format!(
                    "{e}: a value would pass {SQLITE_MAX_LENGTH} bytes, the most a statement may make or read; narrow the query"
                ),
                ErrorClass::Syntax,
            );
        }
        match &e {
            rusqlite::Error::SqliteFailure(code, _) => match code.code {
                // The progress handler interrupts only past the deadline; an interruption
                // before it has another cause and says so.
                Code::OperationInterrupted
                    if pooled.epoch.elapsed().as_millis() as u64 >= deadline_ms =>
                {
                    SourceError::Timeout { location, timeout_ms }
                }
                Code::OperationInterrupted => statement(
                    format!(
                        "the statement was interrupted before its {timeout_ms} ms timeout ({e})"
                    ),
                    ErrorClass::Resource,
                ),
                Code::AuthorizationForStatementDenied => {
                    statement(format!("refused by SQLite's authorizer: {e}"), ErrorClass::Refused)
                }
                Code::OutOfMemory => statement(
                    format!(
                        "{e}: SQLite's memory limit for the process ({} MiB) was reached; narrow the query",
                        SQLITE_HEAP_LIMIT_BYTES >> 20
                    ),
                    ErrorClass::Resource,
                ),
                Code::ReadOnly | Code::PermissionDenied => {
                    statement(e.to_string(), ErrorClass::Refused)
                }
                Code::DatabaseBusy
                | Code::DatabaseLocked
                | Code::CannotOpen
                | Code::NotADatabase
                | Code::DatabaseCorrupt
                | Code::SystemIoFailure
                | Code::DiskFull => statement(e.to_string(), ErrorClass::Resource),
                _ => statement(e.to_string(), ErrorClass::Syntax),
            },
            rusqlite::Error::MultipleStatement => statement(
                "refused: several statements in one query (send one statement)".into(),
                ErrorClass::Refused,
            ),
            other => statement(other.to_string(), ErrorClass::Syntax),
        }
    }

    fn table_info(&self, name: &str, kind: TableKind) -> Result<TableInfo, SourceError> {
        let name_param = [SqlValue::Text(name.to_string())];
        let mut primary: Vec<(i64, String)> = Vec::new();
        let mut columns = Vec::new();
        for row in self.query(
            // `table_xinfo` lists generated columns too (`hidden` 2 and 3), which `table_info`
            // leaves out; a virtual table's hidden columns (1) are not its data.
            "SELECT name, type, \"notnull\", pk FROM pragma_table_xinfo(?1) WHERE hidden <> 1 ORDER BY cid",
            &name_param,
        )? {
            let column = text(&row[0]);
            let pk = int(&row[3]);
            if pk > 0 {
                primary.push((pk, column.clone()));
            }
            columns.push(ColumnInfo {
                name: column,
                declared_type: text(&row[1]),
                nullable: int(&row[2]) == 0 && pk == 0,
                comment: None,
                base_type: None,
            });
        }
        primary.sort();
        let left_out = self.uncomputable(name, &mut columns)?;
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
        let listed =
            |fk: &ForeignKey| fk.columns.iter().all(|c| columns.iter().any(|k| k.name == *c));
        let foreign_keys = foreign_keys.into_iter().map(|(_, fk)| fk).filter(listed).collect();
        Ok(TableInfo {
            name: name.to_string(),
            kind,
            columns,
            primary_key: primary.into_iter().map(|(_, c)| c).collect(),
            foreign_keys,
            row_count: None,
            row_count_estimated: false,
            comment: left_out.map(|left_out| left_out.sentence()),
        })
    }

    /// Takes out of `columns` those of `table` this connection cannot compute, saying which
    /// and why; an error when it can compute none of them.
    ///
    /// SQLite computes a virtual generated column, or a view's column, each time a statement
    /// reads it, so one calling a function of the application that made the file fails every
    /// statement naming it — and `SELECT *`. Left in the catalog, it would fail the whole
    /// table's profile and have the model write queries that cannot run; the other columns
    /// read fine. The probes read no row (`LIMIT 0`): one for the whole table, one per column
    /// only when that fails.
    fn uncomputable(
        &self,
        table: &str,
        columns: &mut Vec<ColumnInfo>,
    ) -> Result<Option<LeftOut>, SourceError> {
        let compiles = |names: &[&str]| -> Result<Result<(), SourceError>, SourceError> {
            let list: Vec<String> = names.iter().map(|n| Dialect::Sqlite.quote(n)).collect();
            let sql =
                format!("SELECT {} FROM {} LIMIT 0", list.join(", "), Dialect::Sqlite.quote(table));
            match self.query(&sql, &[]) {
                Ok(_) => Ok(Ok(())),
                Err(error) if error.class().is_lasting() => Ok(Err(error)),
                Err(error) => Err(error),
            }
        };
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        if names.is_empty() {
            return Ok(None);
        }
        let Err(whole) = compiles(&names)? else {
            return Ok(None);
        };
        let mut left_out = LeftOut::default();
        let mut kept = Vec::with_capacity(columns.len());
        for column in columns.drain(..) {
            match compiles(&[column.name.as_str()])? {
                Ok(()) => kept.push(column),
                Err(error) => left_out.add(column.name, reason(&error)),
            }
        }
        if kept.is_empty() {
            return Err(whole);
        }
        *columns = kept;
        Ok(Some(left_out))
    }
}

/// The columns of a table left out of the catalog, by the engine's reason.
#[derive(Debug, Default)]
struct LeftOut {
    by_reason: Vec<(String, Vec<String>)>,
}

impl LeftOut {
    /// Columns named in the sentence, past which it says how many more.
    const NAMED: usize = 12;

    fn add(&mut self, column: String, reason: String) {
        match self.by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, columns)) => columns.push(column),
            None => self.by_reason.push((reason, vec![column])),
        }
    }

    /// The table's comment: each reason once, with the columns it holds.
    fn sentence(&self) -> String {
        let (mut room, mut parts, mut unnamed) = (Self::NAMED, Vec::new(), 0);
        for (reason, columns) in &self.by_reason {
            let shown = columns.len().min(room);
            room -= shown;
            if shown == 0 {
                unnamed += columns.len();
                continue;
            }
            let more = match columns.len() - shown {
                0 => String::new(),
                more => format!(" and {more} more"),
            };
            parts.push(format!("{}{more} ({reason})", columns[..shown].join(", ")));
        }
        if unnamed > 0 {
            parts.push(format!("{unnamed} more for other reasons"));
        }
        format!("Columns left out, as this SQLite cannot compute them: {}", parts.join("; "))
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
        ValueRef::Text(t) => SqlValue::Text(value_text::decoded(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Text(value_text::blob_description(b)),
    }
}

/// The engine's own words for why a statement failed.
fn reason(error: &SourceError) -> String {
    match error {
        SourceError::Statement { message, .. } | SourceError::Database { message, .. } => {
            message.clone()
        }
        other => other.to_string(),
    }
}

/// A table or view that cannot be read here, listed with no columns and the engine's reason
/// as its comment.
fn unreadable(name: String, kind: TableKind, error: &SourceError) -> TableInfo {
    let reason = reason(error);
    TableInfo {
        name,
        kind,
        columns: Vec::new(),
        primary_key: Vec::new(),
        foreign_keys: Vec::new(),
        row_count: None,
        row_count_estimated: false,
        comment: Some(format!("Cannot be read here: {reason}")),
    }
}

/// What the file system says of a file: identity, size and last change (a rewrite or a write
/// moves one of them, `ctime` even when `mtime` is set back).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    identity: (u64, u64),
    len: u64,
    changed: (i64, i64, i64, i64),
}

impl FileStamp {
    /// The stamp of `path`; `None` when there is no such file.
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Self {
            identity: (m.dev(), m.ino()),
            len: m.size(),
            changed: (m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()),
        })
    }
}

/// The database file and its write-ahead log, which holds committed pages not yet copied back.
fn database_files(path: &Path) -> [PathBuf; 2] {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [path.to_path_buf(), PathBuf::from(wal)]
}

impl SqliteDatabase {
    /// The SHA-256 of the database file and its log: equal digests, equal tables. Computed again
    /// only when a file's stamp moved.
    fn content_digest(&self) -> Result<Option<String>, SourceError> {
        let files = database_files(&self.path);
        let stamps: Vec<FileStamp> = files.iter().filter_map(|f| FileStamp::of(f)).collect();
        if let Some((at, digest)) = lock(&self.digest).as_ref()
            && *at == stamps
        {
            return Ok(Some(digest.clone()));
        }
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        for file in &files {
            let Ok(mut opened) = std::fs::File::open(file) else {
                hasher.update(b"absent\0");
                continue;
            };
            let mut buffer = vec![0_u8; 1 << 20];
            loop {
                use std::io::Read;
                let read = match opened.read(&mut buffer) {
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return Err(SourceError::Database {
                            location: self.location.clone(),
                            message: format!(
                                "cannot read {} to know whether it changed: {e}",
                                file.display()
                            ),
                        });
                    }
                };
                if read == 0 {
                    break;
                }
                hasher.update(&buffer[..read]);
            }
            hasher.update(b"\0end\0");
        }
        // A write while the files were read moves a stamp: that digest is of no one version.
        let after: Vec<FileStamp> = files.iter().filter_map(|f| FileStamp::of(f)).collect();
        if after != stamps {
            return Ok(None);
        }
        let digest = crate::profile_store::hex(&hasher.finalize());
        *lock(&self.digest) = Some((stamps, digest.clone()));
        Ok(Some(digest))
    }
}

impl Database for SqliteDatabase {
    fn profile_parallelism(&self) -> usize {
        super::pool::profile_parallelism()
    }

    fn data_version(&self, _table: &TableInfo) -> Result<Option<String>, SourceError> {
        // Views too: a view reads tables of this same file, which the digest covers.
        Ok(self.content_digest()?.map(|digest| format!("sqlite-sha256:{digest}")))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn shown_value_predicate(&self, quoted: &str, value: &str) -> String {
        value_text::shown_value_predicate(quoted, &Dialect::Sqlite.param(1), value)
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn companion_files(&self) -> Vec<PathBuf> {
        let [_, wal] = database_files(&self.path);
        vec![wal]
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        let relations = self.query(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
            &[],
        )?;
        let mut tables = Vec::with_capacity(relations.len());
        for row in relations {
            let kind =
                if row[1].as_str() == Some("view") { TableKind::View } else { TableKind::Table };
            let name = text(&row[0]);
            let read = self.table_info(&name, kind).and_then(|mut table| {
                // Counting a SQLite table walks its b-tree without reading rows: cheap enough
                // to do now.
                let quoted = Dialect::Sqlite.quote(&table.name);
                let counted = match self.query(&format!("SELECT COUNT(*) FROM {quoted}"), &[]) {
                    // SQLite counts on its smallest index, which cannot be read without the
                    // collation it is ordered by: one of the application that made the file is
                    // not here. The table itself reads.
                    Err(error)
                        if kind == TableKind::Table && error.class() == ErrorClass::Syntax =>
                    {
                        self.query(&format!("SELECT COUNT(*) FROM {quoted} NOT INDEXED"), &[])?
                    }
                    counted => counted?,
                };
                table.row_count = counted.first().map(|r| r[0].as_count());
                Ok(table)
            });
            // A view is compiled when it is read, a virtual table connected to its module: one
            // calling a function of the application that made the file, over a table since
            // dropped, or of a module this build lacks cannot be, and must not take the file's
            // other tables with it. It is listed, saying why it has no columns. An error that
            // may pass (busy, a timeout) fails the catalog as before, to be read again.
            match read {
                Ok(table) => tables.push(table),
                Err(error) if error.class().is_lasting() => {
                    tables.push(unreadable(name, kind, &error));
                }
                Err(error) => return Err(error),
            }
        }
        // A foreign key declared without columns references the other table's primary key.
        let keys: Vec<(String, Vec<String>)> =
            tables.iter().map(|t| (t.name.clone(), t.primary_key.clone())).collect();
        for table in &mut tables {
            for fk in &mut table.foreign_keys {
                if fk.referenced_columns.is_empty()
                    && let Some((_, pk)) = keys
                        .iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case(&fk.referenced_table))
                {
                    fk.referenced_columns = pk.clone();
                }
            }
        }
        Ok(Catalog { tables })
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        Ok(Arc::clone(&self.callables))
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        let pooled = self.checked_connection(sql, STATEMENT_TIMEOUT_MS)?;
        let fail = |e| self.error(e, STATEMENT_TIMEOUT_MS, &pooled, u64::MAX);
        // Prepared and dropped: nothing is stepped, so nothing runs.
        let statement = pooled.connection.prepare_cached(sql).map_err(fail)?;
        self.refuse_writes(&statement)
    }

    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        let pooled = self.checked_connection(sql, timeout_ms)?;
        let wait = Duration::from_millis(timeout_ms);
        let deadline = (pooled.epoch.elapsed() + wait).as_millis() as u64;
        let fail = |e| self.error(e, timeout_ms, &pooled, deadline);
        let mut statement = pooled.connection.prepare_cached(sql).map_err(fail)?;
        self.refuse_writes(&statement)?;
        let names: Vec<String> = statement.column_names().map(str::to_string).collect();
        // The declared type of a column read straight from a table; expressions have none.
        let column_types: Vec<String> =
            statement.columns().map(|c| c.decl_type().unwrap_or_default().to_string()).collect();
        let columns = names.len();
        let bound: Vec<Bound> = params.iter().map(bind).collect();
        let cancel = schemascope_core::cancel::current();
        cancel.check()?;
        // The slot is replaced whole (the policy of schemascope_core::sync).
        *lock(&pooled.cancelled) = Some(cancel.flag());
        pooled.deadline_ms.store(deadline, Ordering::Relaxed);
        pooled.gate.running(true);
        let mut budget = Budget::new(caps);
        let result = (|| {
            let mut rows = statement.query(rusqlite::params_from_iter(bound.iter()))?;
            let mut out = Vec::new();
            // Rows are stepped one at a time: reading stops at the first row past a cap, so
            // memory holds the rows kept and that one row.
            while let Some(row) = rows.next()? {
                let values = (0..columns)
                    .map(|i| row.get_ref(i).map(read))
                    .collect::<Result<Vec<_>, _>>()?;
                if let Err(cut) = budget.admit(&values) {
                    return Ok((out, Some(cut)));
                }
                out.push(values);
            }
            Ok((out, None))
        })();
        pooled.deadline_ms.store(u64::MAX, Ordering::Relaxed);
        *lock(&pooled.cancelled) = None;
        pooled.gate.running(false);
        // Interrupted because the call was cancelled: that call's error, not a timeout's.
        if result.is_err() && cancel.is_cancelled() {
            return Err(SourceError::Cancelled(cancel.cancelled()));
        }
        let (rows, cut) = result.map_err(fail)?;
        Ok(QueryResult {
            columns: names,
            column_types,
            rows,
            more: cut.is_some(),
            cut,
            rows_read: budget.read,
            cut_row: budget.cut_row,
            warnings: Vec::new(),
        })
    }
}
