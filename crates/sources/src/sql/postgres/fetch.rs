//! Reading a PostgreSQL statement's rows within the caps, in a READ ONLY transaction that is
//! always rolled back.
//!
//! Rows are read as text, which every type has (binary formats are per type, and unknown for
//! extension types): the statement is prepared on its own for its column types, then run
//! wrapped so that each column comes back as its type's output text
//! (`format('%s', value)` runs the output function, as psql shows values). The wrapped
//! statement is bound to a portal and executed in batches — 1 row first, then more while rows
//! are small — and its rows are streamed one at a time (the connection waits for each to be
//! taken), so reading stops at the first row past a cap: memory holds the rows kept plus one.
//! Under a byte cap, the server measures each row's text before sending it, and sends a row
//! far past the cap as NULLs with its size ([`oversized_row`]): PostgreSQL sends a row as one
//! message (up to 1 GB), which would otherwise arrive whole to be refused.

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, Transaction};

use super::plan::{JsonText, MAX_PLANNED_SPILL_BYTES, largest_spill, shown_bytes};
use super::text;
use crate::sql::caps::Budget;
use crate::sql::{Caps, QueryResult};

/// Rows one execution of the portal asks for at most.
const MAX_BATCH: usize = 1_024;

/// How far a failed statement got: whether the server can have started it.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Failed before any message carrying the statement was sent: safe to send again.
    BeforeSent(postgres::Error),
    /// Failed after the statement was sent: it may have run.
    Sent(postgres::Error),
    /// Refused before anything was sent, with the reason.
    Refused(String),
}

/// `sql` with each of its `columns` as output text (NULL stays NULL). With `gate`, each row
/// gets one more column, the bytes of its texts, and a row of more than `gate` bytes comes
/// with its texts NULL: the server never sends it.
fn as_text(sql: &str, columns: usize, gate: Option<u64>) -> String {
    let names: Vec<String> = (1..=columns).map(|i| format!("c{i}")).collect();
    // num_nulls counts the argument itself, so a row value whose fields are all NULL is not
    // taken for NULL (as `IS NULL` would).
    let select: Vec<String> = names
        .iter()
        .map(|c| format!("CASE WHEN num_nulls(q.{c}) = 0 THEN format('%s', q.{c}) END"))
        .collect();
    // The newlines end a trailing `--` comment of the statement.
    if columns == 0 {
        return format!("SELECT FROM (\n{sql}\n) AS q");
    }
    let texts = format!("SELECT {} FROM (\n{sql}\n) AS q({})", select.join(", "), names.join(", "));
    let Some(gate) = gate else {
        return texts;
    };
    // OFFSET 0 keeps the texts computed once: without it the planner may inline them into both
    // the size and the output. The size is a bigint: 1,600 columns of 1 GB pass int4.
    let size: Vec<String> =
        names.iter().map(|c| format!("coalesce(octet_length(s.{c}), 0)::bigint")).collect();
    let gated: Vec<String> =
        names.iter().map(|c| format!("CASE WHEN z.n <= {gate} THEN s.{c} END")).collect();
    format!(
        "SELECT {}, z.n FROM ({texts} OFFSET 0) AS s({}), LATERAL (SELECT {} AS n) AS z",
        gated.join(", "),
        names.join(", "),
        size.join(" + ")
    )
}

/// The most bytes of text a row may have to be sent under a byte cap of `max_bytes`: twice the
/// cap and 64 KiB more. A row's JSON is never much shorter than its text (strings gain quotes
/// and escapes, numbers and dates keep their length), so a longer row cannot fit under the
/// cap — but for `json` values written with much white space, which compact JSON drops.
fn oversized_row(max_bytes: usize) -> u64 {
    (max_bytes as u64).saturating_mul(2).saturating_add(64 << 10)
}

/// The next batch: twice the last, at most [`MAX_BATCH`], and no more rows of the largest size
/// seen than the byte cap has room for (so that rows the server sends past a cut are few).
fn next_batch(batch: usize, largest_row: usize, bytes_left: Option<usize>) -> usize {
    let fit = bytes_left.map_or(MAX_BATCH, |left| (left / largest_row.max(1)).max(1));
    batch.saturating_mul(2).min(MAX_BATCH).min(fit)
}

/// Parses and analyses `sql` (the extended protocol's Parse: names, types and functions
/// resolved) in a READ ONLY transaction that is rolled back; nothing is bound or executed.
pub(crate) fn compile_read_only(
    client: &mut Client,
    sql: &str,
    timeout_ms: u64,
) -> Result<(), Failure> {
    let mut tx = client.build_transaction().read_only(true).start().map_err(Failure::BeforeSent)?;
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {timeout_ms}"))
        .map_err(Failure::BeforeSent)?;
    tx.prepare(sql).map_err(Failure::Sent)?;
    tx.rollback().map_err(Failure::Sent)
}

/// The bounds a caller's statement meets on the database host (see
/// [`super::Database::run_for_caller`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallerBounds {
    /// `temp_file_limit` to set, in kB, when the role may set it.
    pub temp_file_limit_kb: Option<u64>,
}

/// Runs one statement in a READ ONLY transaction that is rolled back (also when it fails:
/// dropping the transaction rolls it back), reading its rows within `caps`; a caller's
/// statement (`caller`) is first planned, and refused when the plan spills too much.
pub(crate) fn run_read_only(
    client: &mut Client,
    sql: &str,
    refs: &[&(dyn ToSql + Sync)],
    caps: Caps,
    timeout_ms: u64,
    caller: Option<CallerBounds>,
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
    if let Some(bounds) = caller {
        bounded_by_plan(&mut tx, sql, refs, bounds)?;
    }
    let statement = tx.prepare(sql).map_err(Failure::Sent)?;
    let columns: Vec<String> = statement.columns().iter().map(|c| c.name().to_string()).collect();
    let types: Vec<_> = statement.columns().iter().map(|c| c.type_().clone()).collect();
    let gate = caps.max_bytes.map(oversized_row);
    let wrapped = as_text(sql, columns.len(), gate);
    let (rows, cut, read, cut_row) = stream(&mut tx, &wrapped, refs, &types, caps, gate.is_some())?;
    // Nothing to keep: a read-only transaction is rolled back.
    tx.rollback().map_err(Failure::Sent)?;
    let column_types = types.iter().map(|t| t.name().to_string()).collect();
    Ok(QueryResult {
        columns,
        column_types,
        rows,
        more: cut.is_some(),
        cut,
        rows_read: read,
        cut_row,
        warnings: Vec::new(),
    })
}

/// Sets the caller's `temp_file_limit` (when the role may), then asks the planner what `sql`
/// would spill and refuses it past [`MAX_PLANNED_SPILL_BYTES`]. EXPLAIN without ANALYZE runs
/// nothing but the planner (which folds constant immutable calls, as preparing does).
fn bounded_by_plan(
    tx: &mut Transaction<'_>,
    sql: &str,
    refs: &[&(dyn ToSql + Sync)],
    bounds: CallerBounds,
) -> Result<(), Failure> {
    if let Some(kb) = bounds.temp_file_limit_kb {
        tx.batch_execute(&format!("SET LOCAL temp_file_limit = '{kb}kB'"))
            .map_err(Failure::BeforeSent)?;
    }
    // A new line first: a trailing `--` comment of the statement ends there.
    let row =
        tx.query_one(&format!("EXPLAIN (FORMAT JSON) {sql}\n"), refs).map_err(Failure::Sent)?;
    let explained: JsonText = row.try_get(0).map_err(Failure::Sent)?;
    match largest_spill(&explained.0) {
        Some(spill) if spill.bytes > MAX_PLANNED_SPILL_BYTES => Err(Failure::Refused(format!(
            "refused before running: PostgreSQL's plan expects its {} to hold about {:.0} rows ({}), past the {} a statement may be planned to write to temporary files on the database host (MAX_PLANNED_SPILL_BYTES); filter or aggregate before sorting, grouping or joining, or read fewer rows",
            spill.node,
            spill.rows,
            shown_bytes(spill.bytes),
            shown_bytes(MAX_PLANNED_SPILL_BYTES)
        ))),
        _ => Ok(()),
    }
}

type Streamed = (crate::sql::Rows, Option<crate::sql::Cut>, usize, Option<crate::sql::CutRow>);

fn stream(
    tx: &mut Transaction<'_>,
    wrapped: &str,
    refs: &[&(dyn ToSql + Sync)],
    types: &[postgres::types::Type],
    caps: Caps,
    gated: bool,
) -> Result<Streamed, Failure> {
    let portal = tx.bind(wrapped, refs).map_err(Failure::Sent)?;
    let mut budget = Budget::new(caps);
    let mut out = Vec::new();
    let (mut batch, mut largest) = (1usize, 0usize);
    loop {
        let want = budget.rows_to_probe().map_or(batch, |n| n.min(batch)).max(1);
        let mut rows = tx
            .query_portal_raw(&portal, i32::try_from(want).unwrap_or(i32::MAX))
            .map_err(Failure::Sent)?;
        let mut got = 0;
        while let Some(row) = rows.next().map_err(Failure::Sent)? {
            got += 1;
            if gated && !types.is_empty() {
                let size: i64 = row.try_get(types.len()).map_err(Failure::Sent)?;
                let size = u64::try_from(size).unwrap_or(0);
                if size > oversized_row(caps.max_bytes.unwrap_or(0)) {
                    let cut = budget.refuse_oversized(usize::try_from(size).unwrap_or(usize::MAX));
                    return Ok((out, Some(cut), budget.read, budget.cut_row));
                }
            }
            let mut values = Vec::with_capacity(types.len());
            for (i, ty) in types.iter().enumerate() {
                values.push(text::value(
                    ty,
                    row.try_get::<_, Option<&str>>(i).map_err(Failure::Sent)?,
                ));
            }
            largest = largest.max(crate::sql::row_json_bytes(&values));
            if let Err(cut) = budget.admit(&values) {
                // Dropping the rows stream lets the connection discard the rest of the batch.
                return Ok((out, Some(cut), budget.read, budget.cut_row));
            }
            out.push(values);
        }
        if got < want {
            return Ok((out, None, budget.read, None));
        }
        batch = next_batch(batch, largest, budget.bytes_left());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_reads_every_column_as_text_and_ends_trailing_comments() {
        let texts = "SELECT CASE WHEN num_nulls(q.c1) = 0 THEN format('%s', q.c1) END, CASE WHEN num_nulls(q.c2) = 0 THEN format('%s', q.c2) END FROM (\nSELECT 1, 2 -- two\n) AS q(c1, c2)";
        assert_eq!(as_text("SELECT 1, 2 -- two", 2, None), texts);
        assert_eq!(as_text("SELECT FROM t", 0, Some(10)), "SELECT FROM (\nSELECT FROM t\n) AS q");
        assert_eq!(
            as_text("SELECT 1, 2 -- two", 2, Some(10)),
            format!(
                "SELECT CASE WHEN z.n <= 10 THEN s.c1 END, CASE WHEN z.n <= 10 THEN s.c2 END, z.n FROM ({texts} OFFSET 0) AS s(c1, c2), LATERAL (SELECT coalesce(octet_length(s.c1), 0)::bigint + coalesce(octet_length(s.c2), 0)::bigint AS n) AS z"
            )
        );
    }

    #[test]
    fn batches_grow_while_rows_are_small_and_stay_small_for_big_rows() {
        assert_eq!(next_batch(1, 20, Some(1_000_000)), 2);
        assert_eq!(next_batch(512, 20, Some(1_000_000)), MAX_BATCH);
        assert_eq!(next_batch(1_024, 20, None), MAX_BATCH);
        assert_eq!(next_batch(4, 50_000_000, Some(1_000_000)), 1, "one big row at a time");
        assert_eq!(next_batch(8, 300_000, Some(900_000)), 3);
    }
}
