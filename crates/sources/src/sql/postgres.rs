//! PostgreSQL through the `postgres` crate: every statement in a `READ ONLY` transaction with a
//! `statement_timeout`, its rows read as text through a cursor and converted by column type
//! ([`pg_text`]); reconnects after the server went away, and sends a statement again only when
//! it provably never reached the server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, SimpleQueryMessage};
use schemascope_core::{Catalog, ColumnInfo, ForeignKey, TableInfo, TableKind};

use super::{Database, Dialect, QueryResult, Rows, SqlValue, pg_text};
use crate::error::ErrorClass;
use crate::error::SourceError;

/// Tables the planner estimates below this many rows are counted exactly when the catalog is read.
const EXACT_COUNT_BELOW: u64 = 1_000_000;

/// Seconds to wait for a connection when the URI does not say.
const CONNECT_TIMEOUT_S: u64 = 5;

/// A PostgreSQL database, read-only.
pub struct PostgresDatabase {
    config: Config,
    location: String,
    client: Mutex<Option<Client>>,
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

impl PostgresDatabase {
    /// Connects to the database at `uri` (`postgres://user:password@host:port/db`).
    pub fn connect(uri: &str) -> Result<Self, SourceError> {
        let mut config: Config = uri.parse().map_err(|e| SourceError::InvalidSpec {
            spec: uri.split('@').next_back().unwrap_or(uri).to_string(),
            reason: format!("not a PostgreSQL connection URI: {e} (expected postgres://user:password@host:port/database)"),
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(CONNECT_TIMEOUT_S));
        }
        config.application_name("schemascope");
        let location = redacted(&config);
        let database = Self { config, location, client: Mutex::new(None) };
        database.with_client(0, |_| Ok::<_, Failure>(()))?;
        Ok(database)
    }

    fn error(&self, e: &postgres::Error, timeout_ms: u64) -> SourceError {
        let location = self.location.clone();
        if let Some(db) = e.as_db_error() {
            let code = db.code();
            if *code == SqlState::QUERY_CANCELED {
                return SourceError::Timeout { location, timeout_ms };
            }
            // Rows are read through a cursor, which refuses a writing WITH and SELECT … INTO before
            // the read-only transaction would: the same refusal.
            let writes = (*code == SqlState::FEATURE_NOT_SUPPORTED && db.message().contains("data-modifying"))
                || (*code == SqlState::SYNTAX_ERROR && db.message().contains("INTO is not allowed"));
            let hint = if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
                " (refused: sources are read-only)"
            } else if writes {
                " (refused: sources are read-only; writes cannot run in a read-only transaction)"
            } else if *code == SqlState::INVALID_PASSWORD || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
                " (check the user and password in the URI)"
            } else if *code == SqlState::INVALID_CATALOG_NAME {
                " (check the database name in the URI)"
            } else {
                ""
            };
            // The SQLSTATE class says whether a corrected statement could succeed.
            let class = match code.code().get(..2).unwrap_or("") {
                _ if writes || *code == SqlState::READ_ONLY_SQL_TRANSACTION || *code == SqlState::INSUFFICIENT_PRIVILEGE => ErrorClass::Refused,
                "28" => ErrorClass::Auth,
                "08" | "53" | "54" | "55" | "57" | "58" | "40" | "XX" | "3D" => ErrorClass::Resource,
                _ => ErrorClass::Syntax,
            };
            let position = match db.position() {
                Some(postgres::error::ErrorPosition::Original(at)) => format!(" (at character {at})"),
                _ => String::new(),
            };
            return SourceError::Statement { location, message: format!("{}: {}{position}{hint}", db.severity(), db.message()), class };
        }
        let text = e.to_string();
        // Errors of the client itself about a statement or its values: the server is fine.
        if !e.is_closed() && ["error serializing", "error deserializing", "invalid column", "expected "].iter().any(|p| text.starts_with(p)) {
            let detail = std::error::Error::source(e).map(|s| format!(": {s}")).unwrap_or_default();
            return SourceError::Statement { location, message: format!("{text}{detail}"), class: ErrorClass::Syntax };
        }
        let hint = if text.contains("connect") || e.is_closed() { " — is the server running and reachable at that host and port?" } else { "" };
        SourceError::Database { location, message: format!("{text}{hint}") }
    }

    /// Runs `work` with a live connection, connecting (again) when there is none.
    ///
    /// A connection found dead before the statement was sent (the server restarted since the
    /// last one: the transaction's `BEGIN` fails) is replaced and the statement sent on the new
    /// one, so the first request after a restart succeeds. A connection lost after the
    /// statement was sent is never resent: the statement may have run (read-only still allows
    /// sleeps, locks and calls with effects outside the transaction), so the caller is told.
    fn with_client<T>(&self, timeout_ms: u64, mut work: impl FnMut(&mut Client) -> Result<T, Failure>) -> Result<T, SourceError> {
        let mut slot = self.client.lock().map_err(|_| SourceError::Database {
            location: self.location.clone(),
            message: "connection unusable after a failed statement; reload the source".into(),
        })?;
        loop {
            let fresh = slot.as_ref().is_none_or(Client::is_closed);
            if fresh {
                *slot = None;
                *slot = Some(self.config.connect(NoTls).map_err(|e| self.error(&e, timeout_ms))?);
            }
            let Some(client) = slot.as_mut() else { unreachable!("connected above") };
            let failure = match work(client) {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            let closed = client.is_closed();
            if closed {
                *slot = None;
            }
            match failure {
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

/// How far a failed statement got: whether the server can have started it.
#[derive(Debug)]
enum Failure {
    /// Failed before any message carrying the statement was sent: safe to send again.
    BeforeSent(postgres::Error),
    /// Failed after the statement was sent: it may have run.
    Sent(postgres::Error),
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

impl Database for PostgresDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        let mut by_oid: HashMap<i64, TableInfo> = HashMap::new();
        for row in self.query(RELATIONS, &[])? {
            let (schema, name) = (row[1].as_str().unwrap_or("public"), row[2].as_str().unwrap_or_default());
            let qualified = if schema == "public" { name.to_string() } else { format!("{schema}.{name}") };
            let kind = if matches!(row[3].as_str(), Some("v" | "m")) { TableKind::View } else { TableKind::Table };
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
                    row_count: u64::try_from(oid(&row[5])).ok(),
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
        let table_names: HashMap<i64, String> = by_oid.iter().map(|(oid, t)| (*oid, t.name.clone())).collect();
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
        for table in tables.iter_mut().filter(|t| t.kind == TableKind::Table && t.row_count.is_none_or(|n| n < EXACT_COUNT_BELOW)) {
            let quoted = Dialect::Postgres.quote_table(&table.name);
            match self.query(&format!("SELECT COUNT(*) FROM {quoted}"), &[]) {
                Ok(counted) => table.row_count = counted.first().map(|r| r[0].as_count()),
                // Dropped since it was listed: no longer part of the catalog.
                Err(_) if self.query("SELECT to_regclass($1) IS NULL", &[SqlValue::Text(quoted)])?.first().is_some_and(|r| r[0] == SqlValue::Bool(true)) => {
                    dropped.push(table.name.clone());
                }
                Err(e) => return Err(e),
            }
        }
        tables.retain(|t| !dropped.contains(&t.name));
        Ok(Catalog { tables })
    }

    fn run(&self, sql: &str, params: &[SqlValue], max_rows: Option<usize>, timeout_ms: u64) -> Result<QueryResult, SourceError> {
        if let Some(message) = super::guard::refusal(sql, Dialect::Postgres) {
            return Err(SourceError::Statement { location: self.location.clone(), message, class: ErrorClass::Refused });
        }
        let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(bound).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| &**b).collect();
        self.with_client(timeout_ms, |client| {
            let result = Self::run_read_only(client, sql, &refs, max_rows, timeout_ms);
            // A rolled-back transaction keeps session-level advisory locks: the one side effect
            // of a query that outlives it on this connection (the validator refuses the
            // functions; this holds if a query got past it).
            if !client.is_closed() && !matches!(result, Err(Failure::BeforeSent(_))) {
                client.batch_execute("SELECT pg_advisory_unlock_all()").map_err(Failure::Sent)?;
            }
            result
        })
    }
}

impl PostgresDatabase {
    /// Runs one statement in a READ ONLY transaction that is rolled back (also when it fails:
    /// dropping the transaction rolls it back).
    ///
    /// The rows are read in text format, which every type has (binary formats are per type, and
    /// unknown for extension types): a cursor is declared for the statement with its
    /// parameters bound, and fetched with the simple protocol, which returns text. The
    /// statement is prepared first for its column types, which say how to read each text.
    fn run_read_only(
        client: &mut Client,
        sql: &str,
        refs: &[&(dyn ToSql + Sync)],
        max_rows: Option<usize>,
        timeout_ms: u64,
    ) -> Result<QueryResult, Failure> {
        let mut tx = client.build_transaction().read_only(true).start().map_err(Failure::BeforeSent)?;
        // Room to hash and sort in memory: profiling groups millions of values, and a
        // read-only transaction's memory is returned when it ends.
        // JIT compilation costs seconds and rarely pays off for these scans.
        // Text output fixed whatever the server's defaults: floats shortest and exact, ISO
        // dates, hex bytea (the date order for input is left as configured).
        tx.batch_execute(&format!(
            "SET LOCAL statement_timeout = {timeout_ms}; SET LOCAL work_mem = '256MB'; SET LOCAL jit = off; \
             SET LOCAL extra_float_digits = 1; SET LOCAL DateStyle = 'ISO'; SET LOCAL IntervalStyle = 'postgres'; SET LOCAL bytea_output = 'hex'"
        ))
        .map_err(Failure::BeforeSent)?;
        let statement = tx.prepare(sql).map_err(Failure::Sent)?;
        let columns: Vec<String> = statement.columns().iter().map(|c| c.name().to_string()).collect();
        let types: Vec<_> = statement.columns().iter().map(|c| c.type_().clone()).collect();
        // The cursor fetches only the rows asked for; the rest never leave the server.
        tx.execute(&format!("DECLARE schemascope_rows NO SCROLL CURSOR FOR {sql}"), refs).map_err(Failure::Sent)?;
        let fetch = match max_rows {
            None => "FETCH ALL FROM schemascope_rows".to_string(),
            Some(max) => format!("FETCH FORWARD {} FROM schemascope_rows", max.saturating_add(1)),
        };
        let mut out: Rows = Vec::new();
        for message in tx.simple_query(&fetch).map_err(Failure::Sent)? {
            if let SimpleQueryMessage::Row(row) = message {
                out.push(types.iter().enumerate().map(|(i, ty)| pg_text::value(ty, row.get(i))).collect());
            }
        }
        let more = max_rows.is_some_and(|max| out.len() > max);
        if let Some(max) = max_rows {
            out.truncate(max);
        }
        // Nothing to keep: a read-only transaction is rolled back.
        tx.rollback().map_err(Failure::Sent)?;
        Ok(QueryResult { columns, rows: out, more })
    }
}
