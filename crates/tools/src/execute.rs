//! execute_query: one read-only statement on a SQL source, with a timeout, a row cap and a byte
//! cap (an explicit `truncated` flag says what was cut), and failures classified (syntax,
//! refused, timeout, auth, resource) so a pipeline knows whether a retry can help.

use std::time::Instant;

use schemascope_core::ceilings::Ceiling;
use schemascope_core::display::code;
use schemascope_query::{StructuredQuery, check_read_only, compile};
use schemascope_sources::SourceError;
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::{Caps, CutRow, SqlValue};
use serde_json::{Value, json};

use crate::params::ExecuteQueryParams;
use crate::result::{ToolError, ToolResult, envelope};
use crate::sources::Sources;

/// Rows returned unless the call asks otherwise (lowered to the operator's ceiling).
pub(crate) const DEFAULT_MAX_ROWS: usize = 1_000;
/// Bytes of row data (as JSON) returned unless the call asks otherwise.
pub(crate) const DEFAULT_MAX_BYTES: usize = 1_000_000;
/// Statement timeout unless the call asks otherwise.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// A query's caps: what the call asked for, within the operator's ceilings
/// ([`Ceiling::MaxRows`], [`Ceiling::MaxBytes`], [`Ceiling::TimeoutMs`]), or the defaults
/// lowered to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueryCaps {
    pub max_rows: usize,
    pub max_bytes: usize,
    pub timeout_ms: u64,
}

impl QueryCaps {
    /// The caps of a call asking for `max_rows`, `max_bytes` and `timeout_ms` (each optional).
    pub(crate) fn admit(
        max_rows: Option<usize>,
        max_bytes: Option<usize>,
        timeout_ms: Option<u64>,
    ) -> Result<Self, ToolError> {
        let at_least_one = |name: &str, value: Option<u64>| match value {
            Some(0) => Err(ToolError::InvalidParams(format!("`{name}` must be at least 1"))),
            _ => Ok(()),
        };
        at_least_one("max_rows", max_rows.map(|v| v as u64))?;
        at_least_one("max_bytes", max_bytes.map(|v| v as u64))?;
        at_least_one("timeout_ms", timeout_ms)?;
        Ok(Self {
            max_rows: Ceiling::MaxRows.admit_usize(max_rows, DEFAULT_MAX_ROWS)?,
            max_bytes: Ceiling::MaxBytes.admit_usize(max_bytes, DEFAULT_MAX_BYTES)?,
            timeout_ms: Ceiling::TimeoutMs.admit(timeout_ms, DEFAULT_TIMEOUT_MS)?,
        })
    }

    /// The defaults within the ceilings: what a query the pipeline writes runs with.
    pub(crate) fn defaults() -> Self {
        Self::admit(None, None, None).unwrap_or(Self { max_rows: 1, max_bytes: 1, timeout_ms: 1 })
    }

    /// These caps within what source `name` allows (`limits`): a call that asked for more
    /// than the source allows is refused, naming the limit; defaults are lowered to it.
    pub(crate) fn within(
        self,
        name: &str,
        limits: &schemascope_sources::SourceLimits,
        asked: [bool; 3],
    ) -> Result<Self, ToolError> {
        let bound = |key: &str, value: u64, limit: Option<u64>, asked: bool| match limit {
            Some(limit) if value > limit && asked => Err(ToolError::InvalidParams(format!(
                "`{key}` {value} is past source `{name}`'s limit of {limit} (its configuration's `{key}`)"
            ))),
            Some(limit) => Ok(value.min(limit)),
            None => Ok(value),
        };
        let [rows, bytes, timeout] = asked;
        Ok(Self {
            max_rows: usize::try_from(bound(
                "max_rows",
                self.max_rows as u64,
                limits.max_rows,
                rows,
            )?)
            .unwrap_or(usize::MAX),
            max_bytes: usize::try_from(bound(
                "max_bytes",
                self.max_bytes as u64,
                limits.max_bytes,
                bytes,
            )?)
            .unwrap_or(usize::MAX),
            timeout_ms: bound("timeout_ms", self.timeout_ms, limits.timeout_ms, timeout)?,
        })
    }
}

/// Rows of one statement, capped.
#[derive(Debug, Clone)]
pub(crate) struct Ran {
    /// Column names.
    pub columns: Vec<String>,
    /// Column types as the engine names them (empty where it does not say).
    pub column_types: Vec<String>,
    /// Rows as JSON arrays, within the caps.
    pub rows: Vec<Value>,
    /// True when rows were cut.
    pub truncated: bool,
    /// `rows` or `bytes`, when cut: the cap that stopped the reading.
    pub truncated_by: Option<&'static str>,
    /// Bytes of row data returned.
    pub bytes: usize,
    /// Rows read from the database: the rows returned, plus the one that passed a cap.
    pub rows_read: usize,
    /// The row that passed the byte cap, as far as it was read.
    pub cut_row: Option<CutRow>,
    /// What the database warned about the result (MySQL's and MariaDB's warnings).
    pub warnings: Vec<String>,
    /// Time the statement took.
    pub elapsed_ms: f64,
}

/// A query ready to run: SQL text and its bound parameters (a structured query compiled).
pub(crate) fn prepare(
    source: &schemascope_sources::Source,
    query: &Value,
) -> Result<(String, Vec<SqlValue>), ToolError> {
    match query {
        Value::String(sql) if !sql.trim().is_empty() => Ok((sql.trim().to_string(), Vec::new())),
        Value::String(_) => Err(ToolError::InvalidParams(
            "`query` is empty; give one SELECT statement or a structured query".into(),
        )),
        Value::Object(_) => {
            let structured: StructuredQuery =
                serde_json::from_value(query.clone()).map_err(|e| {
                    ToolError::InvalidParams(format!(
                        "`query` is not a valid structured query: {e}"
                    ))
                })?;
            let catalog = crate::schema_docs::catalog(source)?;
            let dialect = crate::query_tools::dialect(source);
            // Relative date filters ("last 3 months") are relative to today.
            let today = chrono::Utc::now().date_naive();
            let compiled = compile(&structured, &catalog, dialect, today).map_err(|e| {
                ToolError::InvalidParams(format!("cannot compile the structured query: {e}"))
            })?;
            let params = compiled.params.iter().map(sql_value).collect();
            Ok((compiled.sql, params))
        }
        _ => Err(ToolError::InvalidParams(
            "`query` must be SQL text or a structured-query object".into(),
        )),
    }
}

fn sql_value(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Bool(*b),
        Value::Number(n) => {
            n.as_i64().map_or_else(|| SqlValue::Real(n.as_f64().unwrap_or(0.0)), SqlValue::Integer)
        }
        Value::String(s) => SqlValue::Text(s.clone()),
        other => SqlValue::Text(other.to_string()),
    }
}

/// Runs one statement on a SQL source within the caps.
pub(crate) fn run_sql(
    source: &schemascope_sources::Source,
    sql: &str,
    params: &[SqlValue],
    caps: QueryCaps,
) -> Result<Ran, ToolError> {
    let Some(db) = &source.database else {
        return Err(ToolError::InvalidParams(format!(
            "source `{}` runs no SQL (find_items selects items of this one)",
            source.name()
        )));
    };
    // The read-only check runs on every statement, not only in validate_query: whoever calls
    // execute_query directly gets the same refusals, before anything reaches the database,
    // against the engine's own allow-list (which the database layer checks again).
    let callables = db.callables()?;
    if let Err(issues) = check_read_only(sql, &callables) {
        let reasons: Vec<String> = issues
            .iter()
            .map(|issue| match &issue.suggestion {
                Some(suggestion) => format!("{} ({suggestion})", issue.message),
                None => issue.message.clone(),
            })
            .collect();
        return Err(ToolError::Source(SourceError::Statement {
            location: db.location().to_string(),
            message: format!("refused before running: {}", reasons.join("; ")),
            class: ErrorClass::Refused,
        }));
    }
    let started = Instant::now();
    // The database stops reading at the first row past either cap, so a few huge rows are
    // never all in memory; a caller's statement is also bounded on the database host's disk
    // and memory.
    let result = db.run_for_caller(
        sql,
        params,
        Caps { max_rows: Some(caps.max_rows), max_bytes: Some(caps.max_bytes) },
        caps.timeout_ms,
    )?;
    let elapsed_ms = schemascope_core::figure::millis(started.elapsed());
    let bytes = result.rows.iter().map(|row| schemascope_sources::sql::row_json_bytes(row)).sum();
    // Each value moves into its JSON form: a row is held once, never beside a copy of itself.
    let rows: Vec<Value> = result
        .rows
        .into_iter()
        .map(|row| Value::Array(row.into_iter().map(SqlValue::into_json).collect()))
        .collect();
    let truncated_by = result.cut.map(|cut| cut.as_str());
    Ok(Ran {
        columns: result.columns,
        column_types: result.column_types,
        rows,
        truncated: truncated_by.is_some(),
        truncated_by,
        bytes,
        rows_read: result.rows_read,
        cut_row: result.cut_row,
        warnings: result.warnings,
        elapsed_ms,
    })
}

/// Per numeric column (`numeric`, `float4`, `float8`, `money`… as the engine names them), how
/// many of its values are strings: numbers sent as their exact text (more digits than a double
/// holds, NaN, Infinity). Columns without such values are left out.
fn exact_text_counts(ran: &Ran) -> Vec<(String, Value)> {
    const NUMERIC: &[&str] =
        &["numeric", "float4", "float8", "decimal", "real", "double precision"];
    ran.columns
        .iter()
        .zip(&ran.column_types)
        .enumerate()
        .filter(|(_, (_, ty))| {
            let ty = ty.to_ascii_lowercase();
            // DataFusion's `DECIMAL(38,9)` and `BIGINT UNSIGNED` are numeric too.
            NUMERIC.contains(&ty.as_str())
                || ty.starts_with("decimal(")
                || ty.ends_with(" unsigned")
        })
        .filter_map(|(i, (column, _))| {
            let n = ran.rows.iter().filter(|row| row.get(i).is_some_and(Value::is_string)).count();
            (n > 0).then(|| (column.clone(), Value::from(n)))
        })
        .collect()
}

/// What the byte cap cut, in the figures measured: the bytes kept, and the row that passed the
/// cap as far as it was read (its size, or where reading stopped inside it) — never the cap alone,
/// which a caller may have set far beyond anything read.
fn bytes_cut_sentence(ran: &Ran, max_bytes: usize) -> String {
    let kept = format!("{} row(s) shown ({} bytes of data)", ran.rows.len(), ran.bytes);
    let next = match ran.cut_row {
        Some(CutRow { bytes, whole: true, .. }) => {
            format!("the next row takes {bytes} bytes, which would pass the {max_bytes}-byte cap")
        }
        Some(CutRow { bytes, whole: false, read_limit }) => {
            let limit = read_limit.map_or_else(String::new, |limit| {
                format!(" (at most {limit} bytes of one row are read with the room left under the {max_bytes}-byte cap)")
            });
            format!("reading stopped {bytes} bytes into the next row, before its end{limit}")
        }
        None => format!("the next row would pass the {max_bytes}-byte cap"),
    };
    format!("{kept}; {next}. Narrow the query or select fewer columns.")
}

/// execute_query.
pub fn execute_query(sources: &Sources, params: ExecuteQueryParams) -> ToolResult {
    envelope(run(sources, &params))
}

fn run(sources: &Sources, params: &ExecuteQueryParams) -> Result<ToolResult, ToolError> {
    let source = sources.get(params.source.as_deref())?;
    let caps = QueryCaps::admit(params.max_rows, params.max_bytes, params.timeout_ms)?.within(
        source.name(),
        &source.spec.limits,
        [params.max_rows.is_some(), params.max_bytes.is_some(), params.timeout_ms.is_some()],
    )?;
    if crate::selector_query::is_selector(&source, &params.query) {
        // Items: the query is a JMESPath selector.
        let (columns, rows, truncated) =
            crate::selector_query::execute(&source, &params.query, caps.max_rows)?;
        return Ok(ToolResult::ok(
            format!("{} item(s){}.", rows.len(), if truncated { ", more match" } else { "" }),
            json!({"source": source.name(), "query": params.query, "columns": columns, "rowCount": rows.len(), "rows": rows, "truncated": truncated}),
        ));
    }
    let (sql, bound) = prepare(&source, &params.query)?;
    let sql = sql.as_str();
    let ran = run_sql(&source, sql, &bound, caps)?;
    let max_bytes = caps.max_bytes;
    let mut message = match ran.truncated_by {
        None => format!(
            "{} row(s) in {} ms.",
            ran.rows.len(),
            schemascope_core::figure::text(ran.elapsed_ms)
        ),
        Some("bytes") => bytes_cut_sentence(&ran, max_bytes),
        Some(_) => format!(
            "{} row(s) shown; the query returns more (add a LIMIT, an aggregate or a filter).",
            ran.rows.len()
        ),
    };
    let exact_text = exact_text_counts(&ran);
    if !exact_text.is_empty() {
        let listed: Vec<String> =
            exact_text.iter().map(|(column, n)| format!("{} ({n})", code(column))).collect();
        message.push_str(&format!(
            " Numbers a JSON number cannot hold exactly are strings of their exact text, in {}: numbers, not text.",
            listed.join(", ")
        ));
    }
    if !ran.warnings.is_empty() {
        // In the message too: a result the database says may be incomplete must not read as
        // the whole answer.
        message.push_str(&format!(
            " The database warned: {} — the rows may not be all, or exactly, what the query asks for.",
            ran.warnings.join("; ")
        ));
    }
    let cut_row = ran
        .cut_row
        .map(|row| json!({"bytes": row.bytes, "whole": row.whole, "readLimit": row.read_limit}));
    let (truncated, truncated_by, bytes, rows_read, elapsed_ms) =
        (ran.truncated, ran.truncated_by, ran.bytes, ran.rows_read, ran.elapsed_ms);
    let (columns, column_types, rows, warnings) =
        (ran.columns, ran.column_types, ran.rows, ran.warnings);
    Ok(ToolResult::ok(
        message,
        json!({
            "source": source.name(),
            "query": sql,
            "columns": columns,
            "columnTypes": column_types,
            "exactTextNumbers": exact_text.into_iter().collect::<serde_json::Map<String, Value>>(),
            "rows": rows,
            "rowCount": rows.len(),
            "truncated": truncated,
            "truncatedBy": truncated_by,
            "rowsRead": rows_read,
            "bytes": bytes,
            "cutRow": cut_row,
            "warnings": warnings,
            "elapsedMs": elapsed_ms,
        }),
    ))
}
