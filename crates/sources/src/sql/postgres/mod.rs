//! PostgreSQL through the `postgres` crate: every statement checked against the server's own
//! allow-list of what may be called (read from its catalog once per connection,
//! `callables.rs`), then run in a `READ ONLY` transaction with a `statement_timeout`, its
//! rows streamed within the caps as text and converted by column type (`fetch.rs`,
//! [`text`]); reconnects after the server went away, and sends a statement again only when
//! it provably never reached the server. A source holds a few connections, so one slow statement
//! does not hold up the others, and a cancelled call cancels its statement on the server.

mod callables;
mod fetch;
mod plan;
mod pushdown;
mod quartiles;
pub(crate) mod text;

pub use self::plan::MAX_PLANNED_SPILL_BYTES;

pub(crate) use self::pushdown::PostgresSql;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::allow_list::SharedAllowList;
use super::stopper::stopped_with_the_call;
use super::tls::{self, TlsMode, TlsSettings};
use schemascope_core::sync::joined_in_drop;
use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};
use schemascope_query::Callables;

use self::fetch::{CallerBounds, Failure, run_read_only};
use super::pool::{Pool, pool_size};
use super::{Caps, Database, Dialect, QueryResult, STATEMENT_TIMEOUT_MS, SqlValue, guard};
use crate::error::ErrorClass;
use crate::error::SourceError;

/// Tables the planner estimates below this many rows are counted exactly when the catalog is read.
const EXACT_COUNT_BELOW: u64 = 1_000_000;

/// Seconds to wait for a connection when the URI does not say.
const CONNECT_TIMEOUT_S: u64 = 5;

/// A live connection and the allow-list read through it.
struct Connected {
    client: Client,
    callables: Arc<Callables>,
    /// The `temp_file_limit` a caller's statement runs under, in kB, when this role may set it.
    temp_file_limit_kb: Option<u64>,
}

/// The most a caller's statement may write to temporary files on the database host, set as
/// `temp_file_limit` for it when the role may set that parameter (a superuser, or a role the
/// DBA granted `SET ON PARAMETER temp_file_limit`, PostgreSQL 15 and later); a lower limit the
/// DBA set for the role is kept. Without that right only the DBA's own `temp_file_limit` and
/// the statement timeout bound it (see SECURITY.md).
pub const CALLER_TEMP_FILE_BYTES: u64 = 256 << 20;

/// The `temp_file_limit` a caller's statement gets on this connection, in kB: ours, or the
/// DBA's where lower; `None` when the role may not set it.
fn caller_temp_file_limit(client: &mut Client) -> Result<Option<u64>, postgres::Error> {
    let row = client.query_one(
        "SELECT current_setting('server_version_num')::int, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), setting::int8 FROM pg_settings WHERE name = 'temp_file_limit'",
        &[],
    )?;
    let (version, superuser, current): (i32, Option<bool>, i64) =
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    // has_parameter_privilege is PostgreSQL 15's, with GRANT SET ON PARAMETER.
    let may = superuser == Some(true)
        || (version >= 150_000
            && client
                .query_one("SELECT has_parameter_privilege('temp_file_limit', 'SET')", &[])?
                .try_get::<_, bool>(0)?);
    let ours = CALLER_TEMP_FILE_BYTES / 1024;
    Ok(may.then(|| match u64::try_from(current) {
        Ok(theirs) => theirs.min(ours),
        Err(_) => ours,
    }))
}

/// Small tables counted by one statement when the catalog is read.
const COUNT_BATCH: usize = 100;

/// How often a PostgreSQL 14 or later server checks, while a statement runs, that this
/// process is still connected: a statement of a profile running in the background when the
/// process ends (killed, or stopped) is stopped by the server instead of running on to its
/// timeout.
const CLIENT_CHECK_MS: u32 = 2_000;

/// Has the server stop this connection's statements once this process is gone (PostgreSQL 14
/// and later; earlier servers notice only when they next write to the connection).
fn stop_statements_of_a_gone_client(client: &mut Client) -> Result<(), postgres::Error> {
    let version: i32 =
        client.query_one("SELECT current_setting('server_version_num')::int", &[])?.try_get(0)?;
    if version >= 140_000 {
        client
            .batch_execute(&format!("SET client_connection_check_interval = {CLIENT_CHECK_MS}"))?;
    }
    Ok(())
}

/// A PostgreSQL database, read-only.
pub struct PostgresDatabase {
    config: Config,
    /// TLS as the URI's `sslmode` and certificates say (`prefer` by default, as libpq).
    tls: MakeRustlsConnect,
    location: String,
    /// The pool's slots, each connected on first use (`None` until then, and after a lost
    /// connection).
    connections: Pool<Option<Connected>>,
    /// The server's allow-list and when it was read: read by the first connection and shared
    /// by the others; read again when a connection was lost (the server may have restarted
    /// with other functions) and when old.
    allow_list: SharedAllowList,
}

impl Drop for PostgresDatabase {
    /// The client closes its connection by running its own runtime, which panics on a thread
    /// that is inside another runtime (a server's worker at shutdown): it is closed on a thread
    /// of its own.
    fn drop(&mut self) {
        let open: Vec<Connected> = self.connections.drain().into_iter().flatten().collect();
        if !open.is_empty() {
            // A thread that cannot be started leaves nothing to close on; a close that panics
            // is resumed here (schemascope_core::sync's policy).
            if let Ok(closing) =
                std::thread::Builder::new().name("postgres-close".into()).spawn(move || drop(open))
            {
                joined_in_drop(closing.join());
            }
        }
    }
}

impl std::fmt::Debug for PostgresDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresDatabase").field("location", &self.location).finish_non_exhaustive()
    }
}

/// The URI with its password left out, for messages and listings.
fn redacted(config: &Config) -> String {
    let user = config.get_user().unwrap_or("");
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

/// How long a server may take to answer the first message of PostgreSQL's protocol.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks that the first TCP host of `config` speaks PostgreSQL before the client connects: the
/// client bounds the TCP connect but not the start-up exchange, so a port where another server
/// listens (an HTTP one waits for a request line) would hold the connection forever. PostgreSQL
/// answers an SSLRequest with one byte, `S` or `N`, at once.
fn answers_as_postgres(config: &Config, location: &str) -> Result<(), SourceError> {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let Some(postgres::config::Host::Tcp(host)) = config.get_hosts().first() else {
        return Ok(());
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let connect_timeout = config.get_connect_timeout().copied().unwrap_or(HANDSHAKE_TIMEOUT);
    let not_postgres = |what: String| SourceError::Statement {
        location: location.to_string(),
        message: format!("{what} — is PostgreSQL listening at {host}:{port}?"),
        class: ErrorClass::Resource,
    };
    // Addresses the client would try; the first that accepts is asked. A `hostaddr` (an SSH
    // tunnel's local end) is where the client connects, whatever the host's name resolves to.
    let addresses: Vec<std::net::SocketAddr> = match config.get_hostaddrs().first() {
        Some(address) => vec![std::net::SocketAddr::new(*address, port)],
        None => match (host.as_str(), port).to_socket_addrs() {
            Ok(addresses) => addresses.collect(),
            // Name resolution errors are the client's to report, in its words.
            Err(_) => return Ok(()),
        },
    };
    let Some(mut stream) = addresses
        .iter()
        .find_map(|address| std::net::TcpStream::connect_timeout(address, connect_timeout).ok())
    else {
        // Nothing accepts: the client says so with its own error.
        return Ok(());
    };
    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT));
    // SSLRequest: length 8, code 80877103.
    let request = [0u8, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    let mut answer = [0u8; 1];
    match stream.write_all(&request).and_then(|()| stream.read_exact(&mut answer)) {
        Ok(()) if matches!(answer[0], b'S' | b'N') => Ok(()),
        Ok(()) => Err(not_postgres("the server there does not speak PostgreSQL's protocol".into())),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(not_postgres(format!(
                "no answer to PostgreSQL's first message within {} s",
                HANDSHAKE_TIMEOUT.as_secs()
            )))
        }
        Err(e) => Err(not_postgres(format!("the server there closed the connection ({e})"))),
    }
}

impl PostgresDatabase {
    /// Connects to the database at `uri` (`postgres://user:password@host:port/db`).
    pub fn connect(uri: &str) -> Result<Self, SourceError> {
        let invalid = |reason: String| SourceError::InvalidSpec {
            spec: crate::spec::redact_uri(uri),
            reason,
        };
        // The TLS parameters are read here: the client knows only disable, prefer and require.
        let (without_tls, settings) =
            TlsSettings::take_from(uri, TlsMode::Prefer).map_err(&invalid)?;
        let tls = MakeRustlsConnect::new((*settings.client_config().map_err(&invalid)?).clone());
        let mut config: Config = without_tls.parse().map_err(|e| SourceError::InvalidSpec {
            // The URI as shown everywhere else: any password in it, user info or parameter, hidden.
            spec: crate::spec::redact_uri(uri),
            reason: format!("not a PostgreSQL connection URI: {e} (expected postgres://user:password@host:port/database)"),
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_S));
        }
        config.application_name("schemascope");
        config.ssl_mode(match settings.mode {
            TlsMode::Disable => SslMode::Disable,
            TlsMode::Prefer => SslMode::Prefer,
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => SslMode::Require,
        });
        let location = redacted(&config);
        let database = Self {
            config,
            tls,
            location,
            connections: Pool::new(None, pool_size()),
            allow_list: SharedAllowList::default(),
        };
        database.with_client(0, |_, _, _| Ok::<_, Failure>(()))?;
        Ok(database)
    }

    /// `sql` past the statement-level refusals every statement meets first, its trailing
    /// semicolons trimmed.
    fn screened<'s>(&self, sql: &'s str) -> Result<&'s str, SourceError> {
        if let Some(message) = guard::refusal(sql, Dialect::Postgres) {
            return Err(SourceError::Statement {
                location: self.location.clone(),
                message,
                class: ErrorClass::Refused,
            });
        }
        Ok(guard::trim_trailing_semicolons(sql, Dialect::Postgres))
    }

    fn error(&self, e: &postgres::Error, timeout_ms: u64) -> SourceError {
        let location = self.location.clone();
        if let Some(db) = e.as_db_error() {
            let code = db.code();
            if *code == SqlState::QUERY_CANCELED {
                // 57014 is every cancellation; only PostgreSQL's message tells the statement
                // timeout from a cancel request by another session, an administrator or the
                // server itself.
                if db.message().contains("statement timeout") {
                    return SourceError::Timeout { location, timeout_ms };
                }
                let detail = db.detail().map(|d| format!("; {d}")).unwrap_or_default();
                return SourceError::Statement {
                    location,
                    message: format!(
                        "{}: {}{detail} (SQLSTATE 57014: cancelled, not by the {timeout_ms} ms statement timeout — another session, an administrator or the server stopped it)",
                        db.severity(),
                        db.message()
                    ),
                    class: ErrorClass::Resource,
                };
            }
            // Rows are read through a subquery, which refuses a writing WITH and SELECT … INTO before
            // the read-only transaction would: the same refusal.
            let writes = (*code == SqlState::FEATURE_NOT_SUPPORTED
                && db.message().contains("data-modifying"))
                || (*code == SqlState::SYNTAX_ERROR
                    && db.message().contains("INTO is not allowed"));
            let hint = if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
                " (refused: sources are read-only)"
            } else if writes {
                " (refused: sources are read-only; writes cannot run in a read-only transaction)"
            } else if let Some(hint) =
                tls::hint(db.message()).filter(|_| code.code().starts_with("28"))
            {
                // (a hint of its own below is `'static`: this one is shown the same way.)
                return SourceError::Statement {
                    location,
                    message: format!("{}: {} — {hint}", db.severity(), db.message()),
                    class: ErrorClass::Auth,
                };
            } else if *code == SqlState::INVALID_PASSWORD
                || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            {
                " (check the user and password in the URI)"
            } else if *code == SqlState::INVALID_CATALOG_NAME {
                " (check the database name in the URI)"
            } else if *code == SqlState::CONFIGURATION_LIMIT_EXCEEDED
                && db.message().contains("temp_file_limit")
            {
                " (the statement wrote more temporary files on the database host than a statement may; filter or aggregate before sorting, grouping or joining, or read fewer rows)"
            } else {
                ""
            };
            // The SQLSTATE class says whether a corrected statement could succeed.
            let class = match code.code().get(..2).unwrap_or("") {
                _ if writes
                    || *code == SqlState::READ_ONLY_SQL_TRANSACTION
                    || *code == SqlState::INSUFFICIENT_PRIVILEGE =>
                {
                    ErrorClass::Refused
                }
                "28" => ErrorClass::Auth,
                "08" | "53" | "54" | "55" | "57" | "58" | "40" | "XX" | "3D" => {
                    ErrorClass::Resource
                }
                _ => ErrorClass::Syntax,
            };
            let position = match db.position() {
                Some(postgres::error::ErrorPosition::Original(at)) => {
                    format!(" (at character {at})")
                }
                _ => String::new(),
            };
            return SourceError::Statement {
                location,
                message: format!("{}: {}{position}{hint}", db.severity(), db.message()),
                class,
            };
        }
        let text = e.to_string();
        // Errors of the client itself about a statement or its values: the server is fine.
        if !e.is_closed()
            && ["error serializing", "error deserializing", "invalid column", "expected "]
                .iter()
                .any(|p| text.starts_with(p))
        {
            let detail = std::error::Error::source(e).map(|s| format!(": {s}")).unwrap_or_default();
            return SourceError::Statement {
                location,
                message: format!("{text}{detail}"),
                class: ErrorClass::Syntax,
            };
        }
        let detail = std::error::Error::source(e)
            .map(|s| s.to_string())
            .filter(|s| !text.contains(s.as_str()))
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        let text = format!("{text}{detail}");
        if let Some(hint) = tls::hint(&text) {
            return SourceError::Database { location, message: format!("{text} — {hint}") };
        }
        let hint = if text.contains("connect") || e.is_closed() {
            " — is the server running and reachable at that host and port?"
        } else {
            ""
        };
        SourceError::Database { location, message: format!("{text}{hint}") }
    }

    /// Reads the allow-list through `client` and shares it.
    fn read_allow_list(&self, client: &mut Client) -> Result<Arc<Callables>, SourceError> {
        let loaded =
            callables::load(client, STATEMENT_TIMEOUT_MS).map_err(|e| SourceError::Database {
                location: self.location.clone(),
                message: format!(
                    "cannot read which functions may run from the server's catalog: {}",
                    self.error(&e, STATEMENT_TIMEOUT_MS)
                ),
            })?;
        Ok(self.allow_list.store(loaded))
    }

    /// Runs `work` with a live connection and its allow-list, connecting (again) when there is
    /// none: a new connection first reads the allow-list from the server's catalog.
    ///
    /// A connection found dead before the statement was sent (the server restarted since the
    /// last one: the transaction's `BEGIN` fails) is replaced and the statement sent on the new
    /// one, so the first request after a restart succeeds. A connection lost after the
    /// statement was sent is never resent: the statement may have run, so the caller is told.
    fn with_client<T>(
        &self,
        timeout_ms: u64,
        mut work: impl FnMut(&mut Client, &Arc<Callables>, Option<u64>) -> Result<T, Failure>,
    ) -> Result<T, SourceError> {
        let mut slot = self.connections.free_slot(&self.location, timeout_ms)?;
        loop {
            let fresh = slot.as_ref().is_none_or(|c| c.client.is_closed());
            if fresh {
                let lost = slot.is_some();
                *slot = None;
                answers_as_postgres(&self.config, &self.location)?;
                let mut client = self
                    .config
                    .connect(self.tls.clone())
                    .map_err(|e| self.error(&e, timeout_ms))?;
                let callables = match if lost { None } else { self.allow_list.current() } {
                    Some(callables) => callables,
                    None => self.read_allow_list(&mut client)?,
                };
                let temp_file_limit_kb =
                    caller_temp_file_limit(&mut client).map_err(|e| self.error(&e, timeout_ms))?;
                stop_statements_of_a_gone_client(&mut client)
                    .map_err(|e| self.error(&e, timeout_ms))?;
                *slot = Some(Connected { client, callables, temp_file_limit_kb });
            } else if let Some(connected) = slot.as_mut() {
                // A kept connection takes the newest shared list, or reads it when it is old.
                connected.callables = match self.allow_list.current() {
                    Some(callables) => callables,
                    None => self.read_allow_list(&mut connected.client)?,
                };
            }
            let Some(connected) = slot.as_mut() else { unreachable!("connected above") };
            let failure = match work(
                &mut connected.client,
                &connected.callables,
                connected.temp_file_limit_kb,
            ) {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let closed = connected.client.is_closed();
            if closed {
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
                Failure::BeforeSent(_) if closed && !fresh => {}
                Failure::BeforeSent(e) => return Err(self.error(&e, timeout_ms)),
                Failure::Sent(e) if closed => {
                    return Err(SourceError::Database {
                        location: self.location.clone(),
                        message: format!(
                            "the connection to the server was lost while the statement was running ({}); it was not sent again because it may have run — send it again if running it twice is harmless",
                            self.error(&e, timeout_ms)
                        ),
                    });
                }
                Failure::Sent(e) => return Err(self.error(&e, timeout_ms)),
            }
        }
    }
}

/// The validator's read-only check against this server's own allow-list: a read-only
/// transaction still lets functions sleep, lock, signal other sessions or write outside the
/// transaction, so what a statement calls is decided here too, whoever sent it.
fn allowed(sql: &str, callables: &Callables) -> Result<(), Failure> {
    super::guard::read_only_refusal(sql, callables).map_err(Failure::Refused)
}

fn bound(value: &SqlValue) -> Box<dyn ToSql + Sync> {
    match value {
        SqlValue::Null => Box::new(None::<String>),
        SqlValue::Integer(i) => Box::new(*i),
        SqlValue::Real(f) => Box::new(*f),
        SqlValue::Text(s) => Box::new(s.clone()),
        SqlValue::Bool(b) => Box::new(*b),
        SqlValue::Json(v) => Box::new(v.to_string()),
    }
}

/// Names of the columns listed in `joined` (separated by U+001F, as the catalog query writes them).
fn names(joined: &SqlValue) -> Vec<String> {
    joined.as_str().map(|s| s.split('\u{1f}').map(str::to_string).collect()).unwrap_or_default()
}

fn oid(value: &SqlValue) -> i64 {
    match value {
        SqlValue::Integer(i) => *i,
        _ => -1,
    }
}

const RELATIONS: &str = "SELECT c.oid::int8, n.nspname::text, c.relname::text, c.relkind::text, obj_description(c.oid, 'pg_class'), c.reltuples::int8
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT c.relispartition
  AND has_table_privilege(c.oid, 'SELECT')";

/// Columns with their declared type and, for a domain, the built-in type under its chain of
/// domains (PostgreSQL sends values of a domain as that type).
const COLUMNS: &str =
    "SELECT a.attrelid::int8, a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, col_description(a.attrelid, a.attnum),
  (WITH RECURSIVE d(t, m, n) AS (SELECT a.atttypid, a.atttypmod, 0
      UNION ALL SELECT ty.typbasetype, ty.typtypmod, d.n + 1 FROM d JOIN pg_type ty ON ty.oid = d.t WHERE ty.typtype = 'd' AND d.n < 64)
    SELECT format_type(t, m) FROM d WHERE n > 0 ORDER BY n DESC LIMIT 1)
FROM pg_attribute a
WHERE a.attrelid = ANY (SELECT oid FROM pg_class WHERE relkind IN ('r', 'v', 'm', 'p', 'f')) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum";

const KEYS: &str = "SELECT con.conrelid::int8, con.contype::text, con.confrelid::int8,
  (SELECT string_agg(a.attname::text, E'\\x1f' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
     JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum),
  (SELECT string_agg(a.attname::text, E'\\x1f' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
     JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum)
FROM pg_constraint con WHERE con.contype IN ('p', 'f') ORDER BY con.conrelid, con.conname";

/// What moves when a table's rows may have changed: its file node (a `TRUNCATE`, a rewrite),
/// its cumulative insert, update and delete counters, its columns as stored (a column dropped
/// and added again keeps its name and type but not its number), and the server's start and
/// the database's statistics reset (after either the counters start again from zero).
///
/// Read only where the counters follow every change of what the table's profile shows:
/// `track_counts` on; not a standby, whose replayed changes are not counted (`in_hot_standby`,
/// PostgreSQL 14 and later: before, nothing says so without a volatile function); no
/// inheritance children (their rows are read with the parent's); no row-level security (a
/// policy changes what a role sees without a write); no column of a user-defined type (an enum
/// label renamed or a composite's attribute dropped changes values without a write).
const DATA_VERSION: &str = "SELECT c.relkind::text, c.relfilenode::int8, s.n_tup_ins, s.n_tup_upd, s.n_tup_del,
  current_setting('track_counts'), current_setting('in_hot_standby', true), pg_postmaster_start_time()::text,
  (SELECT d.stats_reset::text FROM pg_stat_database d WHERE d.datname = current_database()),
  c.relhassubclass OR c.relrowsecurity OR c.relforcerowsecurity
    OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND a.atttypid >= 16384),
  (SELECT string_agg(a.attnum || ' ' || a.atttypid || ' ' || a.atttypmod || ' ' || a.attisdropped || ' ' || a.atthasmissing, ',' ORDER BY a.attnum)
     FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0)
FROM pg_class c JOIN pg_stat_all_tables s ON s.relid = c.oid
WHERE c.oid = to_regclass($1)";

impl Database for PostgresDatabase {
    fn profile_parallelism(&self) -> usize {
        super::pool::profile_parallelism()
    }

    fn data_version(&self, table: &TableInfo) -> Result<Option<String>, SourceError> {
        let quoted = Dialect::Postgres.quote_table(&table.name);
        let rows = self.query(DATA_VERSION, &[SqlValue::Text(quoted)])?;
        let Some(row) = rows.first() else { return Ok(None) };
        // A view or partitioned table has no rows of its own, a foreign table's are elsewhere:
        // only plain tables and materialized views are versioned.
        let counted = matches!(row[0].as_str(), Some("r" | "m"))
            && row[5].as_str() == Some("on")
            && row[6].as_str() == Some("off")
            && row[9] == SqlValue::Bool(false);
        if !counted {
            return Ok(None);
        }
        let text = |v: &SqlValue| match v {
            SqlValue::Integer(i) => i.to_string(),
            SqlValue::Text(t) => t.clone(),
            _ => "-".into(),
        };
        let version = [1, 2, 3, 4, 7, 8, 10].map(|i| text(&row[i])).join("\u{1f}");
        Ok(Some(format!("pg:{}", crate::profile_store::digest_hex(version.as_bytes()))))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        let mut by_oid: HashMap<i64, TableInfo> = HashMap::new();
        for row in self.query(RELATIONS, &[])? {
            let (schema, name) =
                (row[1].as_str().unwrap_or("public"), row[2].as_str().unwrap_or_default());
            let qualified =
                if schema == "public" { name.to_string() } else { format!("{schema}.{name}") };
            let kind = if matches!(row[3].as_str(), Some("v" | "m")) {
                TableKind::View
            } else {
                TableKind::Table
            };
            by_oid.insert(
                oid(&row[0]),
                TableInfo {
                    name: qualified,
                    kind,
                    columns: Vec::new(),
                    primary_key: Vec::new(),
                    foreign_keys: Vec::new(),
                    // The planner's estimate for now; large tables are counted exactly only when
                    // profiled, small ones just below.
                    // A view has no estimate of its own (its `reltuples` is 0 or -1).
                    row_count: u64::try_from(oid(&row[5]))
                        .ok()
                        .filter(|_| kind == TableKind::Table),
                    row_count_estimated: true,
                    comment: row[4].as_str().map(str::to_string),
                },
            );
        }
        for row in self.query(COLUMNS, &[])? {
            if let Some(table) = by_oid.get_mut(&oid(&row[0])) {
                table.columns.push(ColumnInfo {
                    name: row[1].as_str().unwrap_or_default().to_string(),
                    declared_type: row[2].as_str().unwrap_or_default().to_string(),
                    nullable: row[3] != SqlValue::Bool(true),
                    comment: row[4].as_str().map(str::to_string),
                    base_type: row[5].as_str().map(str::to_string),
                });
            }
        }
        let table_names: HashMap<i64, String> =
            by_oid.iter().map(|(oid, t)| (*oid, t.name.clone())).collect();
        for row in self.query(KEYS, &[])? {
            let Some(table) = by_oid.get_mut(&oid(&row[0])) else { continue };
            match row[1].as_str() {
                Some("p") => table.primary_key = names(&row[3]),
                _ => {
                    // A key to a table this role cannot read is left out with that table.
                    if let Some(referenced) = table_names.get(&oid(&row[2])) {
                        table.foreign_keys.push(ForeignKey {
                            columns: names(&row[3]),
                            referenced_table: referenced.clone(),
                            referenced_columns: names(&row[4]),
                        });
                    }
                }
            }
        }
        let mut tables: Vec<TableInfo> = by_oid.into_values().collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        let mut dropped = Vec::new();
        let small: Vec<usize> = (0..tables.len())
            .filter(|&i| {
                let t = &tables[i];
                t.kind == TableKind::Table && t.row_count.is_none_or(|n| n < EXACT_COUNT_BELOW)
            })
            .collect();
        // Counted many at a time: a statement per table costs a round trip each, which is most
        // of the time a database of hundreds of small tables takes to open.
        let mut uncounted = Vec::new();
        for batch in small.chunks(COUNT_BATCH) {
            // Each count names its table's position: a parallel append may answer in any order.
            let sql = batch
                .iter()
                .map(|&i| {
                    format!(
                        "SELECT {i}::int8, COUNT(*) FROM {}",
                        Dialect::Postgres.quote_table(&tables[i].name)
                    )
                })
                .collect::<Vec<_>>()
                .join(" UNION ALL ");
            match self.query(&sql, &[]) {
                Ok(counted) if counted.len() == batch.len() => {
                    for row in &counted {
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
                // One table dropped since it was listed (or a refusal): each on its own.
                _ => uncounted.extend_from_slice(batch),
            }
        }
        for i in uncounted {
            let table = &mut tables[i];
            let quoted = Dialect::Postgres.quote_table(&table.name);
            match self.query(&format!("SELECT COUNT(*) FROM {quoted}"), &[]) {
                Ok(counted) => {
                    table.row_count = counted.first().map(|r| r[0].as_count());
                    table.row_count_estimated = false;
                }
                // Dropped since it was listed: no longer part of the catalog.
                Err(_)
                    if self
                        .query("SELECT to_regclass($1) IS NULL", &[SqlValue::Text(quoted)])?
                        .first()
                        .is_some_and(|r| r[0] == SqlValue::Bool(true)) =>
                {
                    dropped.push(table.name.clone());
                }
                Err(e) => return Err(e),
            }
        }
        tables.retain(|t| !dropped.contains(&t.name));
        Ok(Catalog { tables })
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        // The shared list needs no connection: asking for it never waits behind busy ones.
        if let Some(callables) = self.allow_list.current() {
            return Ok(callables);
        }
        self.with_client(STATEMENT_TIMEOUT_MS, |_, callables, _| Ok(Arc::clone(callables)))
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        let sql = self.screened(sql)?;
        schemascope_core::cancel::current().check()?;
        self.with_client(STATEMENT_TIMEOUT_MS, |client, callables, _| {
            allowed(sql, callables)?;
            fetch::compile_read_only(client, sql, STATEMENT_TIMEOUT_MS)
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

impl PostgresDatabase {
    /// [`Database::run_capped`], with a caller's bounds when `caller`.
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
        let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(bound).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| &**b).collect();
        self.with_client(timeout_ms, |client, callables, temp_file_limit_kb| {
            allowed(sql, callables)?;
            let token = client.cancel_token();
            let bounds = caller.then_some(CallerBounds { temp_file_limit_kb });
            let tls = self.tls.clone();
            // A failed cancel request leaves the statement timeout as the bound.
            let cancel = move || {
                let _ = token.cancel_query(tls.clone());
            };
            let result = stopped_with_the_call("postgres-cancel", None, cancel, || {
                run_read_only(client, sql, &refs, caps, timeout_ms, bounds)
            });
            // A rolled-back transaction keeps session-level advisory locks: the one side effect
            // of a query that outlives it on this connection (the allow-list refuses the lock
            // functions; this holds if a query got past it).
            if !client.is_closed()
                && !matches!(result, Err(Failure::BeforeSent(_) | Failure::Refused(_)))
            {
                client.batch_execute("SELECT pg_advisory_unlock_all()").map_err(Failure::Sent)?;
            }
            result
        })
        // The server's cancellation, when the call was cancelled, is that call's: say so.
        .map_err(|e| {
            if cancel.is_cancelled() { SourceError::Cancelled(cancel.cancelled()) } else { e }
        })
    }
}
