//! ClickHouse over its HTTP interface (`http.rs`): every statement checked against the
//! server's own allow-list (`callables.rs`) and the validator's read-only check, then sent
//! with settings that keep it read-only and bounded, its rows read as `TabSeparated` text within
//! the caps and converted by column type (`text.rs`).
//!
//! Read-only by construction, whatever the user's profile, found out when connecting
//! (`system.settings`):
//! - a user that may write (`readonly=0`): every statement carries `readonly=1` (no writes, no
//!   DDL, no setting changes, no table functions) with `max_execution_time`, `max_result_rows`,
//!   `max_result_bytes` and `result_overflow_mode=break`;
//! - a user whose profile is `readonly=2`: the same with `readonly=2` (ClickHouse 18.16 refuses
//!   changing `readonly` itself there; `2` still forbids writes and table functions);
//! - a user whose profile is `readonly=1` may change no setting at all, so none is sent: the
//!   server's own `readonly=1` forbids writes, and the work is bounded from here — the row and
//!   byte caps stop the reading and the statement is then killed, and a statement still running
//!   at its timeout (or whose call is cancelled) is stopped with `KILL QUERY` by its `query_id`.
//!
//! ClickHouse has no parameter binding in 18.16: parameters (`$1`, …) are written into the
//! statement as literals, escaped (`text::sql_literal`), at the places the tokenizer finds
//! placeholders — never inside strings or comments.
//!
//! On a cluster the server the client talks to coordinates: a `Distributed` table's reads go to
//! every shard and come back merged there (`distributed.rs`: what its catalog entry, samples,
//! settings and errors need), and dates and times are written in that server's zone, whichever
//! shard computes them (`zones.rs`). The catalog is `catalog.rs`.

mod callables;
mod catalog;
mod distributed;
mod http;
mod pushdown;
mod quartiles;
pub(crate) mod text;
mod zones;

pub(crate) use self::pushdown::ClickHouseSql;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use schemascope_core::sync::joined;
use schemascope_core::{Catalog, TableInfo};
use schemascope_query::Callables;
use schemascope_query::sql::relations::RelationScope;
use schemascope_query::sql::source_offsets::{line_starts, offset};
use sqlparser::dialect::ClickHouseDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use self::http::{Endpoint, Failure, Http, Line, Reply, is_exception_line, query_id};
use super::allow_list::SharedAllowList;
use super::caps::Budget;
use super::{
    Caps, Cut, Database, Dialect, QueryResult, Rows, STATEMENT_TIMEOUT_MS, SqlValue, guard,
};
use crate::error::{ErrorClass, SourceError};

/// How often a running statement's call is checked for cancellation and its deadline.
const WATCH_POLL: Duration = Duration::from_millis(20);

/// The longest line read when no byte cap bounds it (one row of a profiling statement).
const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// The most memory a caller's statement may take on the server (`max_memory_usage`), when
/// settings can be sent; a lower limit of the user's profile is kept.
pub const CALLER_MEMORY_BYTES: u64 = 2 << 30;

/// What the user's profile lets schemascope set on each statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnlyMode {
    /// The user may write: each statement sets `readonly=1` and its limits.
    Set,
    /// The profile is `readonly=2`: each statement keeps `readonly=2` and sets its limits.
    Kept,
    /// The profile is `readonly=1`: no setting may be sent; limits are kept from here.
    Fixed,
}

/// A ClickHouse database, read-only.
pub struct ClickHouseDatabase {
    http: Http,
    location: String,
    mode: ReadOnlyMode,
    version: String,
    /// The database served (`currentDatabase()`): a caller's statement reads only its tables.
    database: String,
    /// The profile's `max_memory_usage` (0: none).
    profile_memory_bytes: u64,
    /// The server's `timezone()`: dates and times without their own zone are written in it.
    time_zone: String,
    /// The settings of [`distributed::INEXACT_SETTINGS`] the user's profile sets (not 0).
    inexact: Vec<&'static str>,
    /// Columns the server's `system` tables have (they differ between releases).
    tables_have_comment: bool,
    tables_have_total_rows: bool,
    columns_have_position: bool,
    functions_have_origin: bool,
    allow_list: SharedAllowList,
}

impl std::fmt::Debug for ClickHouseDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClickHouseDatabase")
            .field("location", &self.location)
            .field("mode", &self.mode)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A statement's result as read: column names and types, rows, and where reading stopped.
struct Read {
    columns: Vec<String>,
    types: Vec<String>,
    rows: Rows,
    more: bool,
    cut: Option<Cut>,
    rows_read: usize,
    cut_row: Option<super::CutRow>,
}

impl ClickHouseDatabase {
    /// Connects to the database at `uri` (`clickhouse://[user[:password]@]host:port/database`)
    /// and finds out what the user's profile allows.
    pub fn connect(uri: &str) -> Result<Self, SourceError> {
        let invalid =
            |reason| SourceError::InvalidSpec { spec: crate::spec::redact_uri(uri), reason };
        let endpoint = Endpoint::parse(uri).map_err(invalid)?;
        let location = endpoint.location();
        let http = Http::new(endpoint).map_err(invalid)?;
        let mut database = Self {
            http,
            location,
            mode: ReadOnlyMode::Fixed,
            version: String::new(),
            database: String::new(),
            profile_memory_bytes: 0,
            time_zone: String::new(),
            inexact: Vec::new(),
            tables_have_comment: false,
            tables_have_total_rows: false,
            columns_have_position: false,
            functions_have_origin: false,
            allow_list: SharedAllowList::default(),
        };
        // No setting is sent until the profile is known: a readonly=1 profile refuses any.
        let probe = database
            .http
            .text(
                &format!(
                    "SELECT version(), (SELECT value FROM system.settings WHERE name = 'readonly'), currentDatabase(), (SELECT value FROM system.settings WHERE name = 'max_memory_usage'), timezone(){} FORMAT TabSeparated",
                    distributed::INEXACT_SETTINGS
                        .map(|name| format!(
                            ", (SELECT value FROM system.settings WHERE name = '{name}')"
                        ))
                        .concat()
                ),
                &[],
                Duration::from_millis(STATEMENT_TIMEOUT_MS),
            )
            .map_err(|f| match f {
                // An HTTPS port answers a plain request by closing the connection.
                Failure::Transport { message, .. } if !database.http.endpoint.is_secure() => {
                    SourceError::Database {
                        location: database.location.clone(),
                        message: format!(
                            "{message} — is the server running and reachable at that host and port? If the port serves HTTPS, add ?secure=true"
                        ),
                    }
                }
                // A plain HTTP port answers a TLS handshake with an HTTP error, or waits for the
                // end of a request line that never comes.
                Failure::Transport { message, .. } if super::tls::hint(&message).is_none() => {
                    SourceError::Database {
                        location: database.location.clone(),
                        message: format!(
                            "{message} — is the server running and reachable at that host and port, and does the port serve HTTPS (ClickHouse's https_port, 8443 by default)?"
                        ),
                    }
                }
                f => database.failure(f, STATEMENT_TIMEOUT_MS, false),
            })?;
        let mut fields = probe.lines().next().unwrap_or_default().split('\t');
        database.version = fields.next().unwrap_or_default().to_string();
        database.mode = match fields.next().unwrap_or("0").trim() {
            "0" => ReadOnlyMode::Set,
            "2" => ReadOnlyMode::Kept,
            _ => ReadOnlyMode::Fixed,
        };
        // TabSeparated escapes a name's tabs and backslashes.
        let served = fields.next().unwrap_or_default().trim_end_matches(['\r', '\n']);
        database.database =
            String::from_utf8_lossy(&text::unescape(served.as_bytes()).unwrap_or_default())
                .into_owned();
        database.profile_memory_bytes =
            fields.next().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
        database.time_zone = fields.next().unwrap_or_default().trim().to_string();
        // A setting this server does not have reads as the empty text.
        for name in distributed::INEXACT_SETTINGS {
            if !matches!(fields.next().unwrap_or_default().trim(), "" | "0") {
                database.inexact.push(name);
            }
        }
        let system = database.query(
            "SELECT table, name FROM system.columns WHERE database = 'system' AND table IN ('tables', 'columns', 'functions')",
            &[],
        )?;
        let has = |table: &str, column: &str| {
            system.iter().any(|r| r[0].as_str() == Some(table) && r[1].as_str() == Some(column))
        };
        database.tables_have_comment = has("tables", "comment");
        database.tables_have_total_rows = has("tables", "total_rows");
        database.columns_have_position = has("columns", "position");
        database.functions_have_origin = has("functions", "origin");
        Ok(database)
    }

    /// What the user's profile lets schemascope set, as found when connecting.
    pub fn read_only_mode(&self) -> ReadOnlyMode {
        self.mode
    }

    /// The server's version (`18.16.1`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The settings every statement carries (see the module docs); a caller's statement
    /// (`caller`) also spills nothing to the server's disk and takes at most
    /// [`CALLER_MEMORY_BYTES`] of its memory.
    fn settings(&self, timeout_ms: u64, caps: Caps, caller: bool) -> Vec<(&'static str, String)> {
        let readonly = match self.mode {
            ReadOnlyMode::Fixed => return Vec::new(),
            ReadOnlyMode::Set => "1",
            ReadOnlyMode::Kept => "2",
        };
        let mut settings = vec![
            ("readonly", readonly.to_string()),
            ("max_execution_time", timeout_ms.div_ceil(1000).max(1).to_string()),
        ];
        // Reads of Distributed tables exact whatever the profile says (`distributed.rs`); sent
        // only where it says otherwise, and passed on to the shards with the rest.
        settings.extend(self.inexact.iter().map(|&name| (name, "0".to_string())));
        if caps.max_rows.is_some() || caps.max_bytes.is_some() {
            // One row past the cap tells "more" from "exactly the cap"; the server counts
            // bytes of its own columns, not of JSON, so its byte bound is loose and the
            // exact one is kept here. `break` ends the result quietly at the bound.
            if let Some(rows) = caps.max_rows {
                settings.push(("max_result_rows", rows.saturating_add(1).to_string()));
            }
            if let Some(bytes) = caps.max_bytes {
                settings.push((
                    "max_result_bytes",
                    bytes.saturating_mul(4).saturating_add(1 << 20).to_string(),
                ));
            }
            settings.push(("result_overflow_mode", "break".into()));
        }
        if caller {
            // Sorting and grouping stay in memory, bounded by max_memory_usage, rather than
            // writing temporary files past it (0 turns the external algorithms off).
            settings.push(("max_bytes_before_external_group_by", "0".into()));
            settings.push(("max_bytes_before_external_sort", "0".into()));
            let memory = match self.profile_memory_bytes {
                0 => CALLER_MEMORY_BYTES,
                profile => profile.min(CALLER_MEMORY_BYTES),
            };
            settings.push(("max_memory_usage", memory.to_string()));
        }
        settings
    }

    fn statement_error(&self, message: String, class: ErrorClass) -> SourceError {
        SourceError::Statement { location: self.location.clone(), message, class }
    }

    /// A failed exchange as a source error; `timed_out`: this side stopped the statement at its
    /// timeout.
    fn failure(&self, failure: Failure, timeout_ms: u64, timed_out: bool) -> SourceError {
        let location = self.location.clone();
        match failure {
            Failure::Server { .. } if timed_out => SourceError::Timeout { location, timeout_ms },
            Failure::Server { code, message } => {
                let code_text = code.map(|c| format!(" (code {c})")).unwrap_or_default();
                let (class, hint) = match code {
                    Some(159) => return SourceError::Timeout { location, timeout_ms },
                    Some(164) => (ErrorClass::Refused, " (refused: sources are read-only)"),
                    // A Distributed table's shard did not answer, or broke off.
                    Some(279 | 32) => (
                        ErrorClass::Resource,
                        " (a shard of a Distributed table did not answer: nothing is computed without it)",
                    ),
                    // The right side of a JOIN over a Distributed table is looked up on each
                    // shard, in the database its connection starts in.
                    Some(60) if message.starts_with("Received from ") => (
                        ErrorClass::Syntax,
                        " (a shard's answer: a JOIN over a Distributed table reads its right side on each shard unless written GLOBAL JOIN)",
                    ),
                    Some(497) => (ErrorClass::Refused, ""),
                    Some(192 | 193 | 194 | 195 | 516) => {
                        (ErrorClass::Auth, " (check the user and password in the URI)")
                    }
                    Some(81) => (ErrorClass::Resource, " (check the database name in the URI)"),
                    Some(
                        158 | 202 | 241 | 394 | 396 | 210 | 209 | 173 | 174 | 307 | 201 | 3 | 439,
                    ) => (ErrorClass::Resource, ""),
                    _ => (ErrorClass::Syntax, ""),
                };
                SourceError::Statement {
                    location,
                    message: format!("ClickHouse: {message}{code_text}{hint}"),
                    class,
                }
            }
            Failure::Transport { .. } if timed_out => SourceError::Timeout { location, timeout_ms },
            Failure::Transport { message, .. } if super::tls::hint(&message).is_some() => {
                SourceError::Database { location, message: super::tls::explained(&message) }
            }
            Failure::Transport { message, sent } => {
                let hint = if sent {
                    " (the statement may have run; it was not sent again)"
                } else {
                    " — is the server running and reachable at that host and port?"
                };
                SourceError::Database { location, message: format!("{message}{hint}") }
            }
        }
    }

    /// `sql` past the statement-level refusal every statement meets first, its trailing
    /// semicolons trimmed.
    fn screened<'s>(&self, sql: &'s str) -> Result<&'s str, SourceError> {
        if let Some(message) = guard::refusal(sql, Dialect::ClickHouse) {
            return Err(self.statement_error(message, ErrorClass::Refused));
        }
        Ok(guard::trim_trailing_semicolons(sql, Dialect::ClickHouse))
    }

    /// The validator's read-only check against this server's allow-list, whoever sent `sql`.
    fn allowed(&self, sql: &str) -> Result<(), SourceError> {
        let callables = self.callables()?;
        super::guard::read_only_refusal(sql, &callables)
            .map_err(|message| self.statement_error(message, ErrorClass::Refused))
    }

    /// `sql` with its placeholders `$1`, `$2`, … replaced by `params` as literals.
    fn bound(&self, sql: &str, params: &[SqlValue]) -> Result<String, SourceError> {
        if params.is_empty() {
            return Ok(sql.to_string());
        }
        let tokens =
            Tokenizer::new(&ClickHouseDialect {}, sql).tokenize_with_location().map_err(|e| {
                self.statement_error(
                    format!("the statement does not tokenize: {e}"),
                    ErrorClass::Syntax,
                )
            })?;
        let mut out = String::with_capacity(sql.len() + 16 * params.len());
        let lines = line_starts(sql);
        let mut copied = 0;
        for token in &tokens {
            let Token::Placeholder(name) = &token.token else { continue };
            let value = name
                .strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1))
                .and_then(|n| params.get(n))
                .ok_or_else(|| {
                    self.statement_error(
                        format!("the placeholder {name} has no parameter ({} given)", params.len()),
                        ErrorClass::Syntax,
                    )
                })?;
            let start = offset(sql, &lines, token.span.start);
            let end = offset(sql, &lines, token.span.end);
            let (Some(start), Some(end)) = (start, end) else {
                return Err(self.statement_error(
                    "cannot place a parameter in the statement".into(),
                    ErrorClass::Syntax,
                ));
            };
            out.push_str(&sql[copied..start]);
            out.push_str(&text::sql_literal(value));
            copied = end;
        }
        out.push_str(&sql[copied..]);
        Ok(out)
    }

    /// Runs `sql` (already checked) under the caps, stopped at `timeout_ms` or when the call is
    /// cancelled.
    fn read(&self, sql: &str, caps: Caps, timeout_ms: u64) -> Result<Read, SourceError> {
        self.read_as(sql, caps, timeout_ms, false)
    }

    /// [`Self::read`], with a caller's settings when `caller`.
    fn read_as(
        &self,
        sql: &str,
        caps: Caps,
        timeout_ms: u64,
        caller: bool,
    ) -> Result<Read, SourceError> {
        let cancel = schemascope_core::cancel::current();
        cancel.check()?;
        let id = query_id();
        let settings = self.settings(timeout_ms, caps, caller);
        // A new line first: a trailing `--` comment must not swallow the format.
        let text = format!("{sql}\nFORMAT TabSeparatedWithNamesAndTypes");
        let timeout = Duration::from_millis(timeout_ms);
        let timed_out = AtomicBool::new(false);
        let (ended, watch) = std::sync::mpsc::channel::<()>();
        let flag = cancel.flag();
        let started = Instant::now();
        let result = std::thread::scope(|scope| {
            // The watcher stops the statement on the server at its deadline or when its call is
            // cancelled; dropping the sender when reading ends wakes it at once.
            let (me, id, timed_out) = (self, &id, &timed_out);
            let watcher = std::thread::Builder::new().name("clickhouse-watch".into()).spawn_scoped(
                scope,
                move || {
                    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                        watch.recv_timeout(WATCH_POLL)
                    {
                        let late = started.elapsed() >= timeout;
                        if late || flag.load(Ordering::Relaxed) {
                            timed_out.store(late, Ordering::Relaxed);
                            me.http.kill(
                                id,
                                &me.settings(STATEMENT_TIMEOUT_MS, Caps::default(), false),
                            );
                            // Sent once more after a while: a kill that arrives before the
                            // statement is registered stops nothing.
                            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                                watch.recv_timeout(Duration::from_millis(500))
                            {
                                me.http.kill(
                                    id,
                                    &me.settings(STATEMENT_TIMEOUT_MS, Caps::default(), false),
                                );
                            }
                            break;
                        }
                    }
                },
            );
            let result = self
                .http
                .send(&text, id, &settings, timeout)
                .and_then(|mut reply| read_rows(&mut reply, caps));
            drop(ended);
            if let Ok(watcher) = watcher {
                joined(watcher.join());
            }
            result
        });
        let timed_out = timed_out.load(Ordering::Relaxed);
        match result {
            Ok(read) => {
                if read.cut.is_some() && self.mode == ReadOnlyMode::Fixed {
                    // No server-side bound was set: the rest of the statement is not computed.
                    self.http.kill(&id, &[]);
                }
                Ok(read)
            }
            Err(_) if cancel.is_cancelled() && !timed_out => {
                Err(SourceError::Cancelled(cancel.cancelled()))
            }
            Err(failure) => Err(self.failure(failure, timeout_ms, timed_out)),
        }
    }

    /// The shared allow-list, read again when old.
    fn read_allow_list(&self) -> Result<Arc<Callables>, SourceError> {
        if let Some(callables) = self.allow_list.current() {
            return Ok(callables);
        }
        let origin = if self.functions_have_origin { "origin" } else { "''" };
        let read = self.read(
            &format!(
                "SELECT name, case_insensitive, alias_to, {origin}, is_aggregate FROM system.functions"
            ),
            Caps::default(),
            STATEMENT_TIMEOUT_MS,
        )?;
        let rows: Vec<callables::FunctionRow> = read
            .rows
            .iter()
            .map(|r| callables::FunctionRow {
                name: r[0].as_str().unwrap_or_default().to_string(),
                case_insensitive: r[1].as_count() > 0,
                alias_to: r[2].as_str().unwrap_or_default().to_string(),
                origin: r[3].as_str().unwrap_or_default().to_string(),
                is_aggregate: r[4].as_count() > 0,
            })
            .collect();
        let mut callables = callables::allow_list(&rows);
        callables.set_relation_scope(RelationScope::ClickHouse { database: self.database.clone() });
        Ok(self.allow_list.store(callables))
    }
}

/// Reads the header lines and then rows within `caps`.
fn read_rows(reply: &mut Reply, caps: Caps) -> Result<Read, Failure> {
    let io = |e: std::io::Error| Failure::Transport { message: e.to_string(), sent: true };
    let mut line = Vec::new();
    let header = |reply: &mut Reply, line: &mut Vec<u8>| -> Result<Vec<String>, Failure> {
        match reply.line(line, MAX_LINE_BYTES).map_err(io)? {
            Line::Full if !is_exception_line(line) => Ok(line
                .split(|&b| b == b'\t')
                .map(|f| {
                    String::from_utf8_lossy(&text::unescape(f).unwrap_or_default()).into_owned()
                })
                .collect()),
            Line::Full | Line::End if is_exception_line(line) => {
                let (code, message) = http::exception(&String::from_utf8_lossy(line));
                Err(Failure::Server { code, message })
            }
            Line::TooLong { received } => Err(Failure::Transport {
                message: format!(
                    "a column header line of the server's answer passed {MAX_LINE_BYTES} bytes (reading stopped after {received} bytes of it)"
                ),
                sent: true,
            }),
            _ => Err(Failure::Transport {
                message: "the server's answer has no column header".into(),
                sent: true,
            }),
        }
    };
    let columns = header(reply, &mut line)?;
    let types = header(reply, &mut line)?;
    let mut budget = Budget::new(caps);
    let mut rows = Vec::new();
    let mut cut = None;
    loop {
        let limit = budget.bytes_left().map_or(MAX_LINE_BYTES, |left| {
            left.saturating_mul(2).saturating_add(4096).min(MAX_LINE_BYTES)
        });
        match reply.line(&mut line, limit).map_err(io)? {
            Line::End if line.is_empty() => break,
            Line::TooLong { received } => {
                cut = Some(budget.stopped_inside_row(received, limit));
                break;
            }
            Line::Full | Line::End => {
                let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
                if fields.len() != types.len() || is_exception_line(&line) {
                    // What follows the rows when a statement fails while its result streams.
                    if is_exception_line(&line) {
                        let (code, message) = http::exception(&String::from_utf8_lossy(&line));
                        return Err(Failure::Server { code, message });
                    }
                    return Err(Failure::Transport {
                        message: format!(
                            "a row of the server's answer has {} fields for {} columns",
                            fields.len(),
                            types.len()
                        ),
                        sent: true,
                    });
                }
                let row: Vec<SqlValue> =
                    types.iter().zip(&fields).map(|(ty, raw)| text::value(ty, raw)).collect();
                if let Err(which) = budget.admit(&row) {
                    cut = Some(which);
                    break;
                }
                rows.push(row);
            }
        }
    }
    Ok(Read {
        columns,
        types,
        rows,
        more: cut.is_some(),
        cut,
        rows_read: budget.read,
        cut_row: budget.cut_row,
    })
}

impl Database for ClickHouseDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::ClickHouse
    }

    fn time_zone(&self) -> Option<&str> {
        Some(self.time_zone.as_str()).filter(|zone| !zone.is_empty())
    }

    fn data_version(&self, table: &TableInfo) -> Result<Option<String>, SourceError> {
        let name = SqlValue::Text(table.name.clone());
        let listed = self.query(
            "SELECT engine, toString(metadata_modification_time), \
             toString(least(now() - metadata_modification_time, now() - (SELECT max(modification_time) FROM system.parts WHERE database = currentDatabase() AND table = $1 AND active))) \
             FROM system.tables WHERE database = currentDatabase() AND name = $1",
            std::slice::from_ref(&name),
        )?;
        // A MergeTree table's rows live in immutable parts: every insert, mutation or merge
        // makes parts of new names. Other engines (Memory, Log, views, Distributed) say nothing
        // of their changes.
        let Some(row) = listed.first() else { return Ok(None) };
        if !row[0].as_str().is_some_and(|engine| engine.ends_with("MergeTree")) {
            return Ok(None);
        }
        // Times are in whole seconds: a table dropped and made again with the same rows count
        // in the same second as its last change would have the same parts. A table changed in
        // the last two seconds is not kept; later it is, under times no new table can have.
        let age: i64 = row[2].as_str().and_then(|a| a.trim().parse().ok()).unwrap_or(0);
        if age < 2 {
            return Ok(None);
        }
        let parts = self.query(
            "SELECT name, toString(rows), toString(bytes_on_disk), toString(modification_time) FROM system.parts WHERE database = currentDatabase() AND table = $1 AND active ORDER BY name",
            &[name],
        )?;
        let mut text = row[1].as_str().unwrap_or_default().to_string();
        for part in &parts {
            for value in part {
                text.push('\u{1f}');
                text.push_str(value.as_str().unwrap_or_default());
            }
            text.push('\u{1e}');
        }
        Ok(Some(format!("clickhouse:{}", crate::profile_store::digest_hex(text.as_bytes()))))
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        self.read_catalog()
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        self.read_allow_list()
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        let sql = self.screened(sql)?;
        self.allowed(sql)?;
        // `DESCRIBE TABLE (query)` has the server parse and analyse the query — names, types
        // and functions resolved — and returns its columns without running it, on 18.16 and
        // current releases alike (`EXPLAIN` is newer). Scalar subqueries are the exception:
        // ClickHouse computes them while analysing, under the same limits.
        self.read(&format!("DESCRIBE TABLE ({sql}\n)"), Caps::default(), STATEMENT_TIMEOUT_MS)
            .map(|_| ())
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

impl ClickHouseDatabase {
    /// [`Database::run_capped`], with a caller's settings when `caller`.
    fn run_statement(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
        caller: bool,
    ) -> Result<QueryResult, SourceError> {
        let sql = self.screened(sql)?;
        let sql = self.bound(sql, params)?;
        self.allowed(&sql)?;
        let read = self.read_as(&sql, caps, timeout_ms, caller)?;
        Ok(QueryResult {
            columns: read.columns,
            column_types: read.types,
            rows: read.rows,
            more: read.more,
            cut: read.cut,
            rows_read: read.rows_read,
            cut_row: read.cut_row,
            warnings: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_offsets_follow_lines_and_characters() {
        let sql = "SELECT 'é'\n, $1";
        let lines = line_starts(sql);
        let at = |line, column| sqlparser::tokenizer::Location { line, column };
        assert_eq!(offset(sql, &lines, at(2, 3)), Some(sql.find('$').unwrap_or(0)));
        assert_eq!(offset(sql, &lines, at(2, 5)), Some(sql.len()));
        assert_eq!(offset(sql, &lines, at(1, 9)), Some(8), "the é");
        assert_eq!(offset(sql, &lines, at(1, 10)), Some(10), "after the é");
    }
}
