//! MySQL and MariaDB through the `mysql` crate: every statement checked against the server's
//! own allow-list of what may be called (read once per connection, `callables.rs`), then
//! prepared and run in a `READ ONLY` transaction under the server's statement time limit, its
//! rows read within the caps (`fetch.rs`) and converted by column type (`values.rs`). A
//! cancelled call, and a statement past its time, is stopped on the server with `KILL QUERY`.
//! A source holds a few connections, reconnects after the server went away, and sends a
//! statement again only when it provably never reached the server.

mod callables;
mod catalog;
mod fetch;
mod pushdown;
mod quartiles;
mod session;
pub(crate) mod values;

pub(crate) use self::pushdown::MySqlSql;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use schemascope_core::Catalog;
use schemascope_core::sync::lock;
use schemascope_query::Callables;

use self::fetch::Failure;
use super::allow_list::SharedAllowList;
use super::pool::{Pool, pool_size};
use super::stopper::stopped_with_the_call;
use super::{Caps, Database, Dialect, QueryResult, STATEMENT_TIMEOUT_MS, SqlValue, guard};
use crate::error::{ErrorClass, SourceError};

/// How long past its time limit a statement is left to the server's own limit before it is
/// stopped from here (MySQL's `max_execution_time` does not reach inside stored functions).
const GRACE: Duration = Duration::from_secs(2);

/// A MySQL or MariaDB database, read-only.
pub struct MySqlDatabase {
    opts: Opts,
    location: String,
    /// MySQL or MariaDB, as the server said when first reached.
    dialect: Dialect,
    /// The pool's slots, each connected on first use (`None` until then, and after a lost
    /// connection).
    connections: Pool<Option<Conn>>,
    /// The server's allow-list and when it was read.
    allow_list: SharedAllowList,
    /// MariaDB's `JSON` columns (table, column), stored as text and read as documents: the
    /// catalog names them, the result's metadata does not.
    json_columns: Mutex<Arc<JsonColumns>>,
}

/// Columns (table, column) whose text is a JSON document.
pub(super) type JsonColumns = HashSet<(String, String)>;

impl std::fmt::Debug for MySqlDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MySqlDatabase").field("location", &self.location).finish_non_exhaustive()
    }
}

impl MySqlDatabase {
    /// Connects to the database at `uri` (`mysql://user:password@host:port/database`, or
    /// `mariadb://…`).
    pub fn connect(uri: &str) -> Result<Self, SourceError> {
        let (opts, plain_fallback) = session::options(uri)?;
        let location = session::location(&opts);
        let (conn, dialect, opts) =
            session::open_first(opts, plain_fallback).map_err(|e| error(&location, &e, 0))?;
        let database = Self {
            opts,
            location,
            dialect,
            connections: Pool::new(Some(conn), pool_size()),
            allow_list: SharedAllowList::default(),
            json_columns: Mutex::new(Arc::default()),
        };
        database.with_conn(0, |_, _| Ok::<_, Failure>(()))?;
        Ok(database)
    }

    /// `sql` past the statement-level refusals every statement meets first, its trailing
    /// semicolons trimmed.
    fn screened<'s>(&self, sql: &'s str) -> Result<&'s str, SourceError> {
        if let Some(message) = guard::refusal(sql, self.dialect) {
            return Err(SourceError::Statement {
                location: self.location.clone(),
                message,
                class: ErrorClass::Refused,
            });
        }
        Ok(guard::trim_trailing_semicolons(sql, self.dialect))
    }

    /// Reads the allow-list through `conn` and shares it.
    fn read_allow_list(&self, conn: &mut Conn) -> Result<Arc<Callables>, SourceError> {
        let failed = |e: mysql::Error| SourceError::Database {
            location: self.location.clone(),
            message: format!(
                "cannot read which functions may run from the server's catalog: {}",
                error(&self.location, &e, STATEMENT_TIMEOUT_MS)
            ),
        };
        let mut built_ins: Vec<String> = Vec::new();
        // Each list is read where the server has it (and this user may read it).
        for sql in [
            "SELECT FUNCTION FROM information_schema.SQL_FUNCTIONS",
            "SELECT WORD FROM information_schema.KEYWORDS",
            "SELECT name FROM mysql.help_topic",
        ] {
            if let Ok(names) = conn.query::<String, _>(sql) {
                built_ins.extend(names);
            }
        }
        let stored: Vec<callables::StoredFunction> = conn
            .query_map(
                "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, SQL_DATA_ACCESS, IS_DETERMINISTIC FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION'",
                |(schema, name, data_access, deterministic): (String, String, String, String)| {
                    callables::StoredFunction {
                        schema,
                        name,
                        data_access,
                        deterministic: deterministic.eq_ignore_ascii_case("YES"),
                    }
                },
            )
            .map_err(failed)?;
        if built_ins.is_empty() {
            return Err(SourceError::Database {
                location: self.location.clone(),
                message: "the server lists no built-in functions (no information_schema.SQL_FUNCTIONS, KEYWORDS or mysql.help_topic this user may read), so no statement could be checked".into(),
            });
        }
        let database = self.opts.get_db_name().unwrap_or_default().to_string();
        let mut callables = callables::allow_list(self.dialect, &database, &built_ins, &stored);
        callables.set_relation_scope(schemascope_query::sql::relations::RelationScope::MySql {
            database,
        });
        Ok(self.allow_list.store(callables))
    }

    /// Runs `work` with a live connection and the allow-list, connecting (again) when there is
    /// none. A connection found dead before the statement was sent is replaced and the
    /// statement sent on the new one; one lost after it was sent is never resent.
    fn with_conn<T>(
        &self,
        timeout_ms: u64,
        mut work: impl FnMut(&mut Conn, &Arc<Callables>) -> Result<T, Failure>,
    ) -> Result<T, SourceError> {
        let mut slot = self.connections.free_slot(&self.location, timeout_ms)?;
        loop {
            let fresh = slot.is_none();
            if fresh {
                let (conn, _) =
                    session::open(&self.opts).map_err(|e| error(&self.location, &e, timeout_ms))?;
                *slot = Some(conn);
            }
            let Some(conn) = slot.as_mut() else { unreachable!("connected above") };
            let callables = match self.allow_list.current() {
                Some(callables) => callables,
                None => self.read_allow_list(conn)?,
            };
            let failure = match work(conn, &callables) {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let lost = match &failure {
                Failure::BeforeSent(e) | Failure::Sent(e) => connection_lost(e),
                Failure::Refused(_) => false,
            };
            if lost {
                *slot = None;
            }
            match failure {
                Failure::Refused(message) => {
                    return Err(SourceError::Statement {
                        location: self.location.clone(),
                        message,
                        class: ErrorClass::Refused,
                    });
                }
                Failure::BeforeSent(_) if lost && !fresh => {}
                Failure::BeforeSent(e) => return Err(error(&self.location, &e, timeout_ms)),
                Failure::Sent(e) if lost => {
                    return Err(SourceError::Database {
                        location: self.location.clone(),
                        message: format!(
                            "the connection to the server was lost while the statement was running ({}); it was not sent again because it may have run — send it again if running it twice is harmless",
                            error(&self.location, &e, timeout_ms)
                        ),
                    });
                }
                Failure::Sent(e) => return Err(error(&self.location, &e, timeout_ms)),
            }
        }
    }

    /// [`Database::run_capped`]; a caller's statement (`caller`) leaves the session as it
    /// found it: whatever a stored function it called took or set (a named lock, a user
    /// variable) is dropped with a reset of the session.
    fn run_statement(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
        caller: bool,
    ) -> Result<QueryResult, SourceError> {
        let sql = self.screened(sql)?;
        let cancel = schemascope_core::cancel::current();
        cancel.check()?;
        self.with_conn(timeout_ms, |conn, callables| {
            allowed(sql, callables)?;
            let json = Arc::clone(&lock(&self.json_columns));
            let statement = fetch::Statement { sql, params, caps, timeout_ms, json: &json };
            let (opts, id) = (self.opts.clone(), conn.connection_id());
            let kill = move || {
                let _ = session::kill_query(&opts, id);
            };
            // Past its time and a grace, the statement is stopped from here too: MySQL's
            // max_execution_time does not reach inside stored functions.
            let deadline = Instant::now() + Duration::from_millis(timeout_ms) + GRACE;
            let result = stopped_with_the_call("mysql-cancel", Some(deadline), kill, || {
                fetch::run_read_only(conn, &self.opts, self.dialect, &statement)
            });
            if caller && !matches!(result, Err(Failure::BeforeSent(_) | Failure::Refused(_))) {
                session::reset(conn).map_err(Failure::Sent)?;
            }
            result
        })
        .map_err(|e| {
            if cancel.is_cancelled() { SourceError::Cancelled(cancel.cancelled()) } else { e }
        })
    }
}

/// The validator's read-only check against this server's own allow-list.
fn allowed(sql: &str, callables: &Callables) -> Result<(), Failure> {
    guard::read_only_refusal(sql, callables).map_err(Failure::Refused)
}

/// Whether `e` means the connection is gone (rather than the statement failed on it).
fn connection_lost(e: &mysql::Error) -> bool {
    !matches!(e, mysql::Error::MySqlError(_)) && !statement_error(e)
}

/// Whether `e` is the client's own objection to a statement or its values (the connection is
/// fine): parameters that do not match the statement's placeholders.
fn statement_error(e: &mysql::Error) -> bool {
    matches!(
        e,
        mysql::Error::DriverError(
            mysql::DriverError::MismatchedStmtParams(..) | mysql::DriverError::MixedParams
        )
    )
}

/// MariaDB's and MySQL's error codes this layer tells apart.
mod code {
    /// MariaDB: `max_statement_time` exceeded.
    pub(super) const STATEMENT_TIMEOUT: u16 = 1969;
    /// MySQL: `max_execution_time` exceeded.
    pub(super) const EXECUTION_TIMEOUT: u16 = 3024;
    /// Query execution was interrupted (`KILL QUERY`).
    pub(super) const INTERRUPTED: u16 = 1317;
    /// Cannot execute statement in a READ ONLY transaction.
    pub(super) const READ_ONLY_TRANSACTION: u16 = 1792;
    /// Access denied for user (wrong password).
    pub(super) const ACCESS_DENIED: u16 = 1045;
    /// Access denied for user to database.
    pub(super) const DATABASE_ACCESS_DENIED: u16 = 1044;
    /// Unknown database.
    pub(super) const UNKNOWN_DATABASE: u16 = 1049;
    /// Command denied (a privilege missing on a table, column or routine).
    pub(super) const COMMAND_DENIED: [u16; 3] = [1142, 1143, 1370];
}

/// `e` as a [`SourceError`] of `location`, classed by what a corrected statement could do.
fn error(location: &str, e: &mysql::Error, timeout_ms: u64) -> SourceError {
    let location = location.to_string();
    if statement_error(e) {
        return SourceError::Statement {
            location,
            message: format!("{e} (send one value for each `?` of the statement)"),
            class: ErrorClass::Syntax,
        };
    }
    let mysql::Error::MySqlError(db) = e else {
        let text = e.to_string();
        // The client wraps a TLS failure twice: its words are the rustls error's.
        let text = match text.strip_prefix("CodecError { IO error: `") {
            Some(inner) => inner.trim_end_matches("' }").to_string(),
            None => text,
        };
        if let Some(hint) = super::tls::hint(&text) {
            return SourceError::Database { location, message: format!("{text} — {hint}") };
        }
        return SourceError::Database {
            location,
            message: format!(
                "{text} — is the server running and reachable at that host and port, and is it MySQL or MariaDB?"
            ),
        };
    };
    match db.code {
        code::STATEMENT_TIMEOUT | code::EXECUTION_TIMEOUT => {
            return SourceError::Timeout { location, timeout_ms };
        }
        code::INTERRUPTED => {
            return SourceError::Statement {
                location,
                message: format!(
                    "ERROR {} ({}): {} (stopped: the call was cancelled, it ran past its {timeout_ms} ms, or an administrator stopped it)",
                    db.code, db.state, db.message
                ),
                class: ErrorClass::Resource,
            };
        }
        _ => {}
    }
    let (class, hint) = match db.code {
        code::READ_ONLY_TRANSACTION => (ErrorClass::Refused, " (refused: sources are read-only)"),
        c if code::COMMAND_DENIED.contains(&c) => (ErrorClass::Refused, ""),
        code::ACCESS_DENIED => (
            ErrorClass::Auth,
            " (check the user and password in the URI, and the client certificate when the user requires one: sslcert=PATH, sslkey=PATH)",
        ),
        code::DATABASE_ACCESS_DENIED => {
            (ErrorClass::Auth, " (check the database name and the user's grants)")
        }
        code::UNKNOWN_DATABASE => (ErrorClass::Resource, " (check the database name in the URI)"),
        // SQLSTATE classes: 08 connection, HY000 and 40 are the server's own state.
        _ if db.state.starts_with("08") || db.state.starts_with("40") => (ErrorClass::Resource, ""),
        _ if db.state.starts_with("28") => (ErrorClass::Auth, ""),
        // Out of memory, disk full, too many connections.
        1037 | 1038 | 1040 | 1041 | 1114 | 1135 | 1203 | 1205 | 1213 => (ErrorClass::Resource, ""),
        _ => (ErrorClass::Syntax, ""),
    };
    SourceError::Statement {
        location,
        message: format!("ERROR {} ({}): {}{hint}", db.code, db.state, db.message),
        class,
    }
}

impl Database for MySqlDatabase {
    fn profile_parallelism(&self) -> usize {
        super::pool::profile_parallelism()
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        let catalog = catalog::read(self)?;
        let json: JsonColumns = catalog
            .tables
            .iter()
            .flat_map(|t| {
                t.columns
                    .iter()
                    .filter(|c| c.declared_type == "json")
                    .map(|c| (t.name.clone(), c.name.clone()))
            })
            .collect();
        *lock(&self.json_columns) = Arc::new(json);
        Ok(catalog)
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        if let Some(callables) = self.allow_list.current() {
            return Ok(callables);
        }
        self.with_conn(STATEMENT_TIMEOUT_MS, |_, callables| Ok(Arc::clone(callables)))
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        let sql = self.screened(sql)?;
        schemascope_core::cancel::current().check()?;
        self.with_conn(STATEMENT_TIMEOUT_MS, |conn, callables| {
            allowed(sql, callables)?;
            fetch::compile_read_only(conn, self.dialect, sql, STATEMENT_TIMEOUT_MS)
        })
    }

    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.run_statement(sql, params, caps, timeout_ms, false)
    }

    fn run_for_caller(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.run_statement(sql, params, caps, timeout_ms, true)
    }
}
