//! Running one MySQL or MariaDB statement read-only within the caps.
//!
//! Each statement is prepared and executed (the binary protocol): a prepared statement is one
//! statement whatever its text holds, so a second statement after a `;` can never run, and
//! parameters are bound, never spliced in. It runs in a `READ ONLY` transaction that is always
//! rolled back, under the server's own statement time limit (MariaDB's `max_statement_time`,
//! MySQL's `max_execution_time`). Rows are read one at a time as they arrive; at the first row
//! past a cap the statement is stopped on the server (`KILL QUERY`), so what it had still to
//! send is never produced.

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, Params, Value};

use super::JsonColumns;
use super::values::ColumnReading;
use crate::sql::caps::Budget;
use crate::sql::{Caps, Dialect, QueryResult, SqlValue};

/// How far a failed statement got: whether the server can have started it.
#[derive(Debug)]
pub(super) enum Failure {
    /// Failed before the statement was sent: safe to send again.
    BeforeSent(mysql::Error),
    /// Failed after the statement was sent: it may have run.
    Sent(mysql::Error),
    /// Refused before anything was sent, with the reason.
    Refused(String),
}

/// The statement that bounds the next statement's time on the server, and opens its read-only
/// transaction (one round trip).
fn begin(dialect: Dialect, timeout_ms: u64) -> String {
    let limit = match dialect {
        // Seconds, with a fraction; 0 is "no limit", so at least a millisecond.
        Dialect::MariaDb => {
            format!("SET SESSION max_statement_time = {:.3}", timeout_ms.max(1) as f64 / 1000.0)
        }
        _ => format!("SET SESSION max_execution_time = {}", timeout_ms.max(1)),
    };
    format!("{limit}; START TRANSACTION READ ONLY")
}

/// The value bound for a parameter.
fn bound(value: &SqlValue) -> Value {
    match value {
        SqlValue::Null => Value::NULL,
        SqlValue::Integer(i) => Value::Int(*i),
        SqlValue::Real(f) => Value::Double(*f),
        SqlValue::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
        SqlValue::Bool(b) => Value::Int(i64::from(*b)),
        SqlValue::Json(v) => Value::Bytes(v.to_string().into_bytes()),
    }
}

/// Prepares `sql` (the server resolves its names, types and functions) in a read-only
/// transaction that is rolled back; nothing is executed.
pub(super) fn compile_read_only(
    conn: &mut Conn,
    dialect: Dialect,
    sql: &str,
    timeout_ms: u64,
) -> Result<(), Failure> {
    conn.query_drop(begin(dialect, timeout_ms)).map_err(Failure::BeforeSent)?;
    let prepared = conn.prep(sql).map_err(Failure::Sent);
    let rolled_back = conn.query_drop("ROLLBACK").map_err(Failure::Sent);
    let statement = prepared?;
    rolled_back?;
    conn.close(statement).map_err(Failure::Sent)
}

/// One statement to run, with what reading its rows needs.
pub(super) struct Statement<'a> {
    /// The statement.
    pub sql: &'a str,
    /// Its parameters, in the order of its `?`.
    pub params: &'a [SqlValue],
    /// The caps on its rows.
    pub caps: Caps,
    /// Its time limit.
    pub timeout_ms: u64,
    /// The columns whose text is JSON.
    pub json: &'a JsonColumns,
}

/// Runs `statement` read-only, reading its rows within its caps; `opts` reach the server again
/// to stop the statement at a cap.
pub(super) fn run_read_only(
    conn: &mut Conn,
    opts: &Opts,
    dialect: Dialect,
    statement: &Statement<'_>,
) -> Result<QueryResult, Failure> {
    conn.query_drop(begin(dialect, statement.timeout_ms)).map_err(Failure::BeforeSent)?;
    let read = read_rows(conn, opts, statement);
    // Nothing to keep: the read-only transaction is rolled back, also after a failure (a lost
    // connection is replaced by the caller).
    let rolled_back = conn.query_drop("ROLLBACK").map_err(Failure::Sent);
    let result = read?;
    rolled_back?;
    Ok(result)
}

fn read_rows(
    conn: &mut Conn,
    opts: &Opts,
    statement: &Statement<'_>,
) -> Result<QueryResult, Failure> {
    let Statement { sql, params, caps, json, .. } = *statement;
    let id = conn.connection_id();
    let params = if params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(params.iter().map(bound).collect())
    };
    let mut result = conn.exec_iter(sql, params).map_err(Failure::Sent)?;
    let mut budget = Budget::new(caps);
    let mut rows = Vec::new();
    let mut cut = None;
    let (mut columns, mut column_types) = (Vec::new(), Vec::new());
    if let Some(set) = result.iter() {
        let described: Vec<mysql::Column> = set.columns().as_ref().to_vec();
        let readings: Vec<ColumnReading> = described
            .iter()
            .map(|c| {
                let of = (c.org_table_str().into_owned(), c.org_name_str().into_owned());
                ColumnReading::of(c, json.contains(&of))
            })
            .collect();
        columns = described.iter().map(|c| c.name_str().into_owned()).collect();
        column_types = described
            .iter()
            .map(|c| super::values::type_name(c.column_type(), c.flags(), c.character_set()))
            .collect();
        for row in set {
            let row = row.map_err(Failure::Sent)?;
            let values: Vec<SqlValue> = (0..readings.len())
                .map(|i| row.as_ref(i).map_or(SqlValue::Null, |v| readings[i].value(v)))
                .collect();
            if let Err(passed) = budget.admit(&values) {
                cut = Some(passed);
                // The rest is never produced: the statement is stopped on the server, and what
                // was already sent is read past. Should stopping fail, the rest is read past
                // up to the statement's time limit.
                let _ = super::session::kill_query(opts, id);
                break;
            }
            rows.push(values);
        }
    }
    // Reads past whatever the statement still had in flight (after the stop, its error).
    drop(result);
    // A statement read to its end may still not be what it asks for: the server says so only
    // in warnings (a recursion stopped at max_recursive_iterations, a value truncated by a
    // conversion). A statement stopped at a cap has the stop's own.
    let warnings = if cut.is_none() { warnings(conn) } else { Vec::new() };
    Ok(QueryResult {
        columns,
        column_types,
        rows,
        more: cut.is_some(),
        cut,
        rows_read: budget.read,
        cut_row: budget.cut_row,
        warnings,
    })
}

/// The most warnings of one statement quoted.
const QUOTED_WARNINGS: u16 = 10;

/// The warnings the last statement on `conn` left, as the server words them.
fn warnings(conn: &mut Conn) -> Vec<String> {
    let count = conn.warnings();
    if count == 0 {
        return Vec::new();
    }
    let read: Result<Vec<String>, _> = conn.query_map(
        format!("SHOW WARNINGS LIMIT {QUOTED_WARNINGS}"),
        |(level, code, message): (String, u32, String)| format!("{level} {code}: {message}"),
    );
    let mut quoted = match read {
        Ok(quoted) if !quoted.is_empty() => quoted,
        Ok(_) | Err(_) => {
            vec![format!("the server reported {count} warning(s) that could not be read")]
        }
    };
    if count > QUOTED_WARNINGS {
        quoted.push(format!("… and {} more", count - QUOTED_WARNINGS));
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_bounds_the_statement_its_own_way() {
        assert_eq!(
            begin(Dialect::MariaDb, 30_000),
            "SET SESSION max_statement_time = 30.000; START TRANSACTION READ ONLY"
        );
        assert_eq!(
            begin(Dialect::MySql, 0),
            "SET SESSION max_execution_time = 1; START TRANSACTION READ ONLY"
        );
    }
}
