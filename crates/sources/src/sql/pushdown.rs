//! Profiling a table inside its database: counts, distinct values, ranges, means, standard
//! deviations, quartiles, top values and histogram bins are computed by SQL (`COUNT`,
//! `COUNT(DISTINCT)`, `MIN`/`MAX`/`AVG`, `GROUP BY … ORDER BY count`), so only summaries cross
//! the wire — never the rows.
//!
//! The result is the same [`CollectionProfile`] the in-memory profiler builds from the rows as
//! JSON (see [`super::rows`] for that mapping), value for value: tests compare the two. Each
//! column is read through a *JSON view* — the expression that gives its value as schemascope
//! shows it (PostgreSQL: `bigint`, `float8`, `boolean` or `text`; SQLite: the stored value, with
//! blobs as `<blob: N bytes, sha256 H>`) — so both paths see the same values.
//!
//! One statement scans the table for every column's counts; columns with numbers add one for
//! their spread and quartiles and, with few distinct values, their top values; columns with
//! text add one for their top values and formats.

use schemascope_core::path::PropertyPath;
use schemascope_core::profile::formats::{self, StringFormat};
use schemascope_core::profile::numeric::HistogramLayout;
use schemascope_core::profile::{
    BooleanProfile, CollectionProfile, ProfileNode, PropertyProfile, StringProfile, TOP_VALUES,
    TypeCounts, ValueCount, long_key_parts, value_key,
};
use schemascope_core::property::BinCounter;
use schemascope_core::{ProfileProgress, TableInfo};
use serde_json::Value;

use super::engine::{EngineSql, engine};
use super::{Database, Dialect, PROFILE_TIMEOUT_MS, SqlValue};
use crate::error::SourceError;

pub(crate) mod numbers;
mod parallel;
pub(crate) mod text_order;

use text_order::TextOrder;

/// Distinct texts up to which a column's formats are counted over every value, each distinct
/// value fetched once with its count (a few tens of megabytes at most); past it, over a sample.
const FORMATS_EXACT_UP_TO: u64 = 250_000;

/// Rows whose values are the sample counted for formats, past [`FORMATS_EXACT_UP_TO`].
const FORMAT_SAMPLE_ROWS: usize = 100_000;

/// Most bytes of values fetched to check their formats (by the longest value's size).
const FETCHED_BYTES: u64 = 64 << 20;

/// The revision of the rules below: raised whenever a figure they compute changes, so that
/// profiles kept across restarts ([`crate::profile_store`]) by earlier rules are computed anew.
/// 2: ClickHouse numbers read as the doubles their text denotes, columns named like the view's
/// aliases read as themselves. 3: zone-less timestamps (`2024-03-05 10:22:00`) are a format of
/// their own, with their earliest and latest. 4: formats are counted over every value up to
/// 250,000 distinct ones (was 10,000); past it, over the first rows, said to be a sample, with no
/// format claimed but a date or time type's checked on its extremes; the earliest and latest
/// text times are compared as instants. 5: `email` is an RFC 5321 mailbox checked by hand (a
/// domain of any characters but `@` counted before). 6: SQLite texts measured whole (past NULs,
/// and bytes that are not UTF-8 as shown), blobs read as `<blob: N bytes, sha256 H>`. 7: SQLite
/// infinities are the texts `Infinity`/`-Infinity`, and doubles whose squares underflow or
/// sums overflow get their true mean and deviation.
pub const PROFILE_RULES: u32 = 7;

/// How a column's values appear as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueClass {
    /// SQLite: each value has its own type (integer, real, text; blobs shown as text).
    Dynamic,
    /// Whole numbers.
    Integer,
    /// Whole numbers of a type wider than `i64` (MySQL's `BIGINT UNSIGNED`): those past `i64`
    /// are shown as their text, as execute_query shows them. The view has the ones within as
    /// `c<i>` and the text of the others as `t<i>`.
    WideInteger,
    /// Other numbers (floats, `numeric`): JSON numbers when exactly the database's value, else
    /// their text (`NaN`, `Infinity`, `numeric` past `float8`'s precision) — the rule of
    /// PostgreSQL's `postgres/text.rs`. The view has the number as `c<i>` and, for those shown as
    /// text, the text as `t<i>`.
    Number,
    /// Booleans.
    Boolean,
    /// PostgreSQL `json`, `jsonb` and arrays: documents, read as `execute_query` reads them and
    /// profiled from their values (`sql/json_columns.rs`).
    Json,
    /// Everything else, shown as its text form (the type's output, as `psql` shows it).
    Text,
}

/// True when `name` has the shape of an alias the view defines (`c0`, `r12`, `t3`, …).
pub(crate) fn is_view_alias(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('r' | 'c' | 't' | 'x' | 'e'))
        && chars.as_str().parse::<u32>().is_ok()
        || name == "c_"
}

/// The JSON view of a table: a subquery with one column `c<i>` per table column, and each
/// column's class.
#[derive(Debug, Clone)]
pub struct JsonView {
    /// The engine's SQL for what the view reads.
    engine: &'static dyn EngineSql,
    /// `(SELECT … FROM "table") AS s`.
    pub from: String,
    /// Class of each column, in table order.
    pub classes: Vec<ValueClass>,
    /// The table's name and column names (for catalog statistics).
    table: Option<String>,
    columns: Vec<String>,
    /// Columns with an `e<i>`: their exact value for the mean and deviation.
    exact_columns: Vec<usize>,
    /// PostgreSQL `smallint` and `integer` columns: their squares fit in a `bigint`.
    small_integers: Vec<usize>,
    /// How each column's stored values compare with its text (text columns of the types
    /// [`TextOrder`] knows; [`TextOrder::Text`] for the rest).
    text_orders: Vec<TextOrder>,
    /// The length in characters of each column's text computed from its stored value, where
    /// the type allows (dates and times): no text made per row.
    text_lengths: Vec<Option<String>>,
}

impl JsonView {
    /// The view of `table` in `dialect`; an error for an engine whose tables are not profiled
    /// by pushdown (DataFusion's).
    pub fn new(dialect: Dialect, table: &TableInfo) -> Result<Self, SourceError> {
        Self::over(dialect, table, &dialect.quote_table(&table.name))
    }

    /// The view of `table`'s columns read from `relation` (the table itself, or a sample of it).
    pub fn over(dialect: Dialect, table: &TableInfo, relation: &str) -> Result<Self, SourceError> {
        let mut select = Vec::with_capacity(table.columns.len());
        let mut classes = Vec::with_capacity(table.columns.len());
        let mut exact_columns = Vec::new();
        // ClickHouse resolves a name to an alias of the same SELECT before a column: a column
        // named `c1` would read as the view's `c1`. Such a table is read through positional
        // names no column has.
        let engine = engine(dialect).ok_or_else(|| SourceError::Statement {
            location: table.name.clone(),
            message: format!(
                "{dialect} tables are profiled as their rows are read, not by statements"
            ),
            class: crate::error::ErrorClass::Refused,
        })?;
        let renamed = engine.positional_prefix(table);
        let relation = match &renamed {
            Some(prefix) => format!(
                "(SELECT {} FROM {relation})",
                table
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!(
                        "{} AS {}",
                        dialect.quote(&c.name),
                        dialect.quote(&format!("{prefix}{i}"))
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => relation.to_string(),
        };
        for (i, column) in table.columns.iter().enumerate() {
            let quoted = match &renamed {
                Some(prefix) => dialect.quote(&format!("{prefix}{i}")),
                None => dialect.quote(&column.name),
            };
            let (expr, class) =
                engine.view_column(i, column, &quoted, &mut select, &mut exact_columns);
            select.push(format!("{expr} AS c{i}"));
            classes.push(class);
        }
        if select.is_empty() {
            select.push("NULL AS c_".into());
        }
        let from = format!("(SELECT {} FROM {relation}) AS s", select.join(", "));
        let text_orders = table
            .columns
            .iter()
            .zip(&classes)
            .map(|(column, &class)| engine.text_order(column, class))
            .collect();
        let text_lengths = table
            .columns
            .iter()
            .zip(&classes)
            .enumerate()
            .map(|(i, (column, &class))| engine.text_length(i, column, class))
            .collect();
        Ok(Self {
            engine,
            from,
            classes,
            table: Some(table.name.clone()),
            columns: table.columns.iter().map(|c| c.name.clone()).collect(),
            exact_columns,
            text_orders,
            text_lengths,
            small_integers: engine.small_integers(table),
        })
    }

    /// The engine's SQL for what the view reads.
    pub(crate) fn engine(&self) -> &'static dyn EngineSql {
        self.engine
    }

    /// The view with ClickHouse's dates and times read in `server_zone`, the zone the server
    /// writes those without their own in ([`Database::time_zone`]): in a zone whose offset
    /// never changes they are counted and ordered as stored.
    pub fn in_zone(mut self, server_zone: Option<&str>, table: &TableInfo) -> Self {
        let engine = self.engine;
        for (i, column) in table.columns.iter().enumerate() {
            if self.classes.get(i) == Some(&ValueClass::Text)
                && let Some(order) = engine.text_order_in_zone(column, server_zone)
            {
                self.text_orders[i] = order;
            }
        }
        self
    }

    /// The predicate "column `i` has a value": on the stored value where its text is known to
    /// be NULL exactly when it is ([`TextOrder`]), so no text is made for it.
    fn present(&self, i: usize) -> String {
        if self.text_orders[i] == TextOrder::Text {
            format!("c{i} IS NOT NULL")
        } else {
            format!("r{i} IS NOT NULL")
        }
    }

    /// The length in characters of column `i`'s text: from its stored value where the type
    /// allows.
    fn text_length(&self, i: usize) -> String {
        match &self.text_lengths[i] {
            Some(length) => length.clone(),
            None => self.length(&self.text(i)),
        }
    }

    /// The predicate "the value of column `i` is of type `kind`", or `None` when it never is.
    fn is(&self, i: usize, kind: Kind) -> Option<String> {
        let c = format!("c{i}");
        match (self.classes[i], kind) {
            (ValueClass::Dynamic, Kind::Integer) => Some(format!("typeof({c}) = 'integer'")),
            (ValueClass::Dynamic, Kind::Real) => Some(format!("typeof({c}) = 'real'")),
            (ValueClass::Dynamic, Kind::Numeric) => {
                Some(format!("typeof({c}) IN ('integer', 'real')"))
            }
            (ValueClass::Dynamic, Kind::Text) => Some(format!("typeof({c}) = 'text'")),
            (ValueClass::Number, Kind::Real | Kind::Numeric) => {
                Some(format!("{c} IS NOT NULL AND t{i} IS NULL"))
            }
            (ValueClass::Number | ValueClass::WideInteger, Kind::Text) => {
                Some(format!("t{i} IS NOT NULL"))
            }
            (ValueClass::WideInteger, Kind::Integer | Kind::Numeric) => {
                Some(format!("{c} IS NOT NULL AND t{i} IS NULL"))
            }
            (ValueClass::Integer, Kind::Integer | Kind::Numeric)
            | (ValueClass::Boolean, Kind::Boolean)
            | (ValueClass::Text, Kind::Text) => Some(self.present(i)),
            _ => None,
        }
    }

    /// The predicate "column `i` holds a number" (`FALSE` where it never does).
    pub(crate) fn numeric(&self, i: usize) -> String {
        self.is(i, Kind::Numeric).unwrap_or_else(|| "FALSE".into())
    }

    /// Column `i`'s value as a row shows it: as the database returns the column (PostgreSQL), or
    /// its JSON view (SQLite, whose blobs are described rather than shown).
    pub fn shown(&self, i: usize) -> String {
        self.engine.shown(i)
    }

    /// Column `i`'s value for an exact mean and deviation: `e<i>` (a float's exact decimal) for
    /// PostgreSQL floats, else `c<i>`.
    fn exact(&self, i: usize) -> String {
        if self.exact_columns.contains(&i) { format!("e{i}") } else { format!("c{i}") }
    }

    /// Column `i`'s value where it is text (numbers shown as text have it in `t<i>`).
    pub fn text(&self, i: usize) -> String {
        if matches!(self.classes[i], ValueClass::Number | ValueClass::WideInteger) {
            format!("t{i}")
        } else {
            format!("c{i}")
        }
    }

    /// Column `i`'s value as a `float8` where it is a JSON number (for comparing with one).
    pub fn number(&self, i: usize) -> String {
        if self.classes[i] == ValueClass::Number {
            format!("(CASE WHEN t{i} IS NULL THEN {} END)", self.as_float(&format!("c{i}")))
        } else {
            format!("c{i}")
        }
    }

    /// Text ordered by code point, as Rust orders strings.
    fn binary(&self, expr: &str) -> String {
        self.engine.binary(expr)
    }

    fn length(&self, expr: &str) -> String {
        self.engine.length(expr)
    }

    fn as_float(&self, expr: &str) -> String {
        self.engine.as_float(expr)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Integer,
    Real,
    Numeric,
    Text,
    Boolean,
}

/// Builds one select list and remembers where each aggregate landed.
#[derive(Default)]
struct SelectList {
    items: Vec<String>,
}

impl SelectList {
    fn push(&mut self, expr: String) -> usize {
        self.items.push(expr);
        self.items.len() - 1
    }
}

/// Positions of one column's aggregates in the scan's result row.
#[derive(Default, Clone, Copy)]
struct ColumnSlots {
    non_null: usize,
    integers: Option<usize>,
    reals: Option<usize>,
    texts: Option<usize>,
    /// Numbers shown by queries as their exact text (counted as numbers here).
    exact_texts: Option<usize>,
    trues: Option<usize>,
    falses: Option<usize>,
    num_min: Option<usize>,
    num_max: Option<usize>,
    num_avg: Option<usize>,
    num_std: Option<usize>,
    len_min: Option<usize>,
    len_max: Option<usize>,
    len_avg: Option<usize>,
    text_min: Option<usize>,
    text_max: Option<usize>,
}

fn flag_sum(predicate: &str) -> String {
    format!("SUM(CASE WHEN {predicate} THEN 1 ELSE 0 END)")
}

fn when(predicate: &str, expr: &str) -> String {
    format!("CASE WHEN {predicate} THEN {expr} END")
}

fn get(row: &[SqlValue], slot: Option<usize>) -> &SqlValue {
    slot.and_then(|i| row.get(i)).unwrap_or(&SqlValue::Null)
}

fn count(row: &[SqlValue], slot: Option<usize>) -> u64 {
    get(row, slot).as_count()
}

fn float(row: &[SqlValue], slot: Option<usize>) -> f64 {
    get(row, slot).as_f64().unwrap_or(0.0)
}

/// Profiles `table` inside `db`: every column.
pub fn profile_table(
    db: &dyn Database,
    table: &TableInfo,
) -> Result<CollectionProfile, SourceError> {
    profile_columns(db, table, None)
}

/// Profiles `table` inside `db`, every column, reporting to `progress` each column as it is
/// finished (and the exact row count once the first scan has counted it).
pub fn profile_table_with_progress(
    db: &dyn Database,
    table: &TableInfo,
    progress: &ProfileProgress,
) -> Result<CollectionProfile, SourceError> {
    profile_columns_with(db, table, None, Some(progress))
}

/// Profiles the columns of `table` named in `only` (all when `None`), inside `db`. The profile
/// lists just those columns; its item count is the table's row count.
pub fn profile_columns(
    db: &dyn Database,
    table: &TableInfo,
    only: Option<&[&str]>,
) -> Result<CollectionProfile, SourceError> {
    profile_columns_with(db, table, only, None)
}

fn profile_columns_with(
    db: &dyn Database,
    table: &TableInfo,
    only: Option<&[&str]>,
    progress: Option<&ProfileProgress>,
) -> Result<CollectionProfile, SourceError> {
    let report_step = |step: String| {
        if let Some(progress) = progress {
            progress.step(step);
        }
    };
    let view = JsonView::new(db.dialect(), table)?.in_zone(db.time_zone(), table);
    let wanted: Vec<usize> = (0..table.columns.len())
        .filter(|&i| only.is_none_or(|names| names.contains(&table.columns[i].name.as_str())))
        .collect();
    // One scan computes every counter that needs no grouping or sorting (the database runs it
    // in parallel where it can); distinct values, top values and quartiles follow per column.
    let mut list = SelectList::default();
    let rows_slot = list.push("COUNT(*)".into());
    let mut slots = Vec::with_capacity(wanted.len());
    for &i in &wanted {
        let c = format!("c{i}");
        // ClickHouse 18.16 refuses some aggregates of a function of a LowCardinality(Nullable)
        // column (and accepts them of a CASE), and counts its NULLs in COUNT(c).
        let low_cardinality = view.engine.guarded(&table.columns[i]);
        let non_null = if low_cardinality {
            flag_sum(&format!("{c} IS NOT NULL"))
        } else if view.engine.counts_stored()
            || view.text_orders[i] != TextOrder::Text
            || view.classes[i] == ValueClass::WideInteger
        {
            // The stored value is NULL exactly when its text is: counted without converting.
            format!("COUNT(r{i})")
        } else {
            format!("COUNT({c})")
        };
        let mut s = ColumnSlots { non_null: list.push(non_null), ..ColumnSlots::default() };
        let not_null = view.present(i);
        // A kind whose values are exactly the non-null ones is counted by the count above: each
        // aggregate more is work on every row.
        let non_null_slot = s.non_null;
        let mut counted =
            |p: String| if p == not_null { non_null_slot } else { list.push(flag_sum(&p)) };
        let (integers, reals, texts) = (
            view.is(i, Kind::Integer).map(&mut counted),
            view.is(i, Kind::Real).map(&mut counted),
            view.is(i, Kind::Text).map(&mut counted),
        );
        (s.integers, s.reals, s.texts) = (integers, reals, texts);
        // Aggregates skip NULLs: under the predicate "not null" a value needs no guard, so the
        // view's expression (a type's output, for text) is evaluated once per aggregate, not
        // twice.
        let bare = !low_cardinality;
        let when = |p: &str, expr: &str| {
            if bare && p == not_null { expr.to_string() } else { when(p, expr) }
        };
        if view.classes[i] == ValueClass::Number && !view.exact_columns.contains(&i) {
            s.exact_texts = Some(
                list.push(flag_sum(&format!("{c} IS NOT NULL AND t{i} IS NULL AND NOT x{i}"))),
            );
        }
        if let Some(p) = view.is(i, Kind::Boolean) {
            s.trues = Some(list.push(flag_sum(&format!("{p} AND {c}"))));
            s.falses = Some(list.push(flag_sum(&format!("{p} AND NOT {c}"))));
        }
        if let Some(p) = view.is(i, Kind::Numeric) {
            s.num_min = Some(list.push(format!("MIN({})", when(&p, &c))));
            s.num_max = Some(list.push(format!("MAX({})", when(&p, &c))));
            let exact = view.exact(i);
            s.num_avg = Some(
                list.push(
                    view.engine
                        .mean(view.classes[i], &c, &p, &exact, &when)
                        .unwrap_or_else(|| view.as_float(&format!("AVG({})", when(&p, &exact)))),
                ),
            );
            let small_integer = view.small_integers.contains(&i);
            if let Some(deviation) = view.engine.deviation(small_integer, &c, &p, &exact, &when) {
                s.num_std = Some(list.push(deviation));
            }
            // ClickHouse's deviation is summed around this mean with the quartiles (see
            // `numbers`), and so is its few-valued columns' from their counted values.
        }
        if let Some(p) = view.is(i, Kind::Text) {
            let t = view.text(i);
            let len = view.text_length(i);
            s.len_min = Some(list.push(format!("MIN({})", when(&p, &len))));
            s.len_max = Some(list.push(format!("MAX({})", when(&p, &len))));
            s.len_avg = Some(list.push(view.as_float(&format!("AVG({})", when(&p, &len)))));
            if matches!(
                view.text_orders[i],
                TextOrder::Ordered | TextOrder::OrderedInFourDigitYears
            ) {
                // The stored extremes, whose text is the text's extremes when the order holds
                // (checked on them: see `text_extremes`).
                s.text_min = Some(list.push(format!("MIN(r{i})")));
                s.text_max = Some(list.push(format!("MAX(r{i})")));
            } else {
                s.text_min = Some(list.push(format!("MIN({})", view.binary(&when(&p, &t)))));
                s.text_max = Some(list.push(format!("MAX({})", view.binary(&when(&p, &t)))));
            }
        }
        slots.push(s);
    }
    schemascope_core::cancel::current().check()?;
    report_step(format!("counting the rows, nulls and types of {} columns", wanted.len()));
    let scan = db.query_with_timeout(
        &format!("SELECT {} FROM {}", list.items.join(", "), view.from),
        &[],
        PROFILE_TIMEOUT_MS,
    )?;
    let row = scan.first().map(Vec::as_slice).unwrap_or(&[]);
    let rows = count(row, Some(rows_slot));
    let documents: Vec<usize> =
        wanted.iter().copied().filter(|&i| view.classes[i] == ValueClass::Json).collect();
    let mut document_nodes =
        super::json_columns::profile(db, &view, table, &documents, rows)?.into_iter();
    // Columns of documents were profiled together above; the others each by their own
    // statements, on as many connections at once as the database gives a profile.
    let mut nodes: Vec<Option<ProfileNode>> = wanted
        .iter()
        .map(|&i| (view.classes[i] == ValueClass::Json).then(|| document_nodes.next()).flatten())
        .collect();
    let report_done = |nodes: &[Option<ProfileNode>]| {
        if let Some(progress) = progress {
            progress.finished(table_profile(rows, nodes.iter().flatten().cloned().collect()));
        }
    };
    report_done(&nodes);
    let jobs: Vec<usize> = (0..wanted.len()).filter(|&k| nodes[k].is_none()).collect();
    let computed = parallel::each(
        db.profile_parallelism(),
        &jobs,
        |k| {
            let (i, s) = (wanted[k], &slots[k]);
            report_step(format!(
                "the distinct values, top values and quartiles of `{}`",
                table.columns[i].name
            ));
            column_node(db, &view, table, i, row, s, rows)
        },
        |k, node| {
            nodes[k] = Some(node);
            report_done(&nodes);
        },
    )?;
    debug_assert_eq!(computed, jobs.len());
    Ok(table_profile(rows, nodes.into_iter().flatten().collect()))
}

/// The profile of column `i` (not a document column) from the scan's `row` and its own
/// statements.
fn column_node(
    db: &dyn Database,
    view: &JsonView,
    table: &TableInfo,
    i: usize,
    row: &[SqlValue],
    s: &ColumnSlots,
    rows: u64,
) -> Result<ProfileNode, SourceError> {
    let column = &table.columns[i];
    // ClickHouse's primary key orders the data and does not make it unique.
    let unique = view.engine.primary_key_unique()
        && table.primary_key.len() == 1
        && table.primary_key[0] == column.name;
    let non_null = count(row, Some(s.non_null));
    let (integers, reals, texts) =
        (count(row, s.integers), count(row, s.reals), count(row, s.texts));
    let (trues, falses) = (count(row, s.trues), count(row, s.falses));
    let numbers = if integers + reals > 0 {
        Some(numbers::number_profile(db, view, i, row, s, integers, reals, unique)?)
    } else {
        None
    };
    let strings =
        if texts > 0 { Some(string_profile(db, view, i, row, s, texts, unique)?) } else { None };
    let distinct = strings.as_ref().map_or(0, |x| x.distinct)
        + numbers.as_ref().map_or(0, |x| x.distinct)
        + u64::from(trues > 0)
        + u64::from(falses > 0);
    let profile = PropertyProfile {
        path: PropertyPath::root().child(&column.name),
        total: rows,
        present: rows,
        nulls: rows - non_null,
        types: TypeCounts {
            string: texts,
            integer: integers,
            number: reals,
            boolean: trues + falses,
            array: 0,
            object: 0,
            null: rows - non_null,
        },
        distinct,
        strings,
        numbers,
        booleans: (trues + falses > 0)
            .then_some(BooleanProfile { true_count: trues, false_count: falses }),
        arrays: None,
        objects: 0,
        dropped_keys: 0,
        depth_limited: 0,
        approximate: None,
    };
    Ok(ProfileNode { profile, children: Vec::new(), items: None })
}

/// The profile of a table of `rows` rows with these column profiles.
fn table_profile(rows: u64, children: Vec<ProfileNode>) -> CollectionProfile {
    let root = PropertyProfile {
        total: rows,
        present: rows,
        types: TypeCounts { object: rows, ..TypeCounts::default() },
        objects: rows,
        ..PropertyProfile::empty(PropertyPath::root())
    };
    CollectionProfile {
        item_count: rows,
        root: ProfileNode { profile: root, children, items: None },
        path_limit_hit: false,
        path_limit: Default::default(),
    }
}

/// Rows of `(value, count)` as pairs, the values moved out.
fn value_counts(rows: Vec<Vec<SqlValue>>) -> Vec<(SqlValue, u64)> {
    rows.into_iter()
        .map(|mut r| (std::mem::replace(&mut r[0], SqlValue::Null), r[1].as_count()))
        .collect()
}

/// What [`top_values`] is asked for.
#[derive(Debug, Clone, Copy)]
struct TopWanted {
    /// The kind of values ranked.
    kind: Kind,
    /// Values returned at most.
    limit: usize,
    /// How many values of that kind there are.
    values: u64,
    /// Their distinct count, when already counted.
    known: Option<u64>,
    /// True when the stored values order as their text ([`TextOrder::ordered`]).
    stored_order: bool,
}

/// True when the planner's statistics say column `i` has few distinct values (PostgreSQL).
fn few_values(db: &dyn Database, view: &JsonView, i: usize) -> Result<bool, SourceError> {
    Ok(numbers::estimated_distinct(db, view, i)?.is_some_and(|d| d <= numbers::GROUPED_DISTINCT))
}

/// The values of column `i` of one kind grouped and counted, most frequent first (ties by value),
/// at most `limit` of them, with the number of distinct values (counted here unless `known`).
/// `values` is how many values of that kind there are: when every one is distinct, the top
/// values are the smallest ones, read by a bounded sort instead of grouping every row.
fn top_values(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    wanted: TopWanted,
) -> Result<(u64, Vec<(SqlValue, u64)>), SourceError> {
    let TopWanted { kind, limit, values, known, stored_order } = wanted;
    let c = if kind == Kind::Text { view.text(i) } else { format!("c{i}") };
    let predicate = view.is(i, kind).unwrap_or_else(|| "FALSE".into());
    // Text compared by its bytes (code points), as in memory, whatever the column's collation —
    // or by its stored values where they order as its text (`stored_order`).
    let ordered = match kind {
        Kind::Text if stored_order => format!("r{i}"),
        Kind::Text => view.binary(&c),
        _ => c.clone(),
    };
    // Distinct values counted and grouped on the stored values where equal text means equal
    // values ([`TextOrder`]): no conversion per row.
    let native = kind == Kind::Text && view.text_orders[i] != TextOrder::Text;
    let key = if native { format!("r{i}") } else { c.clone() };
    if known.is_none() && few_values(db, view, i)? {
        // Few distinct values (by the planner's statistics): one grouping in a hash table gives
        // the distinct count and the top values together.
        let rows = db.query_with_timeout(
            &format!(
                "SELECT v, n, COUNT(*) OVER () FROM (SELECT {c} AS v, COUNT(*) AS n FROM {} WHERE {predicate} GROUP BY {c}) AS g ORDER BY n DESC, {} LIMIT {limit}",
                view.from,
                if kind == Kind::Text { view.binary("v") } else { "v".to_string() }
            ),
            &[],
            PROFILE_TIMEOUT_MS,
        )?;
        let distinct = rows.first().map_or(0, |r| r[2].as_count());
        return Ok((distinct, value_counts(rows)));
    }
    let distinct = match known {
        Some(distinct) => distinct,
        None => {
            // ClickHouse's exact distinct count; elsewhere one sort (cheaper than grouping
            // every value in a hash table when most are distinct).
            let counted = match view.engine.exact_distinct(&key) {
                Some(counted) => counted,
                None if native => format!("COUNT(DISTINCT {key})"),
                None => format!(
                    "COUNT(DISTINCT {})",
                    if kind == Kind::Text { view.binary(&c) } else { c.clone() }
                ),
            };
            let rows = db.query_with_timeout(
                &format!("SELECT {counted} FROM {} WHERE {predicate}", view.from),
                &[],
                PROFILE_TIMEOUT_MS,
            )?;
            rows.first().map_or(0, |r| r[0].as_count())
        }
    };
    let rows = if distinct == values {
        db.query_with_timeout(
            &format!(
                "SELECT {c}, 1 FROM {} WHERE {predicate} ORDER BY {ordered} LIMIT {limit}",
                view.from
            ),
            &[],
            PROFILE_TIMEOUT_MS,
        )?
    } else {
        // By the alias: ClickHouse 18.16 reads `GROUP BY 1` as the constant; an exact GROUP
        // BY there too, not topK's approximate sketch. Ties by the grouped expression
        // (PostgreSQL reads an alias in ORDER BY only alone). Grouped stored values are read
        // as their type's output, which is their text.
        let (shown, tie) = match (native, stored_order) {
            (true, true) => (key.clone(), key.clone()),
            (true, false) => (key.clone(), view.binary(&format!("{key}::text"))),
            (false, _) => (c.clone(), ordered.clone()),
        };
        db.query_with_timeout(
            &format!(
                "SELECT {shown} AS v, COUNT(*) AS n FROM {} WHERE {predicate} GROUP BY {key} ORDER BY n DESC, {tie} LIMIT {limit}",
                view.from
            ),
            &[],
            PROFILE_TIMEOUT_MS,
        )?
    };
    Ok((distinct, value_counts(rows)))
}

#[allow(clippy::too_many_arguments)]
fn string_profile(
    db: &dyn Database,
    view: &JsonView,
    i: usize,
    row: &[SqlValue],
    s: &ColumnSlots,
    texts: u64,
    unique: bool,
) -> Result<StringProfile, SourceError> {
    let c = view.text(i);
    let predicate = view.is(i, Kind::Text).unwrap_or_else(|| "FALSE".into());
    let keyed = |rows: Vec<(SqlValue, u64)>| -> Vec<(String, u64)> {
        rows.into_iter()
            .map(|(v, n)| (value_key(v.as_str().unwrap_or_default()).into_owned(), n))
            .collect()
    };
    let order = view.text_orders[i];
    let (native_min, native_max) = (get(row, s.text_min).as_str(), get(row, s.text_max).as_str());
    let ordered = order.ordered(native_min, native_max);
    let (distinct, top_rows) = if unique {
        // Distinct by constraint: every count is 1, so the top values are the smallest ones.
        let rows = db.query_with_timeout(
            &format!(
                "SELECT {c} FROM {} WHERE {predicate} ORDER BY {} LIMIT {TOP_VALUES}",
                view.from,
                if ordered { format!("r{i}") } else { view.binary(&c) }
            ),
            &[],
            PROFILE_TIMEOUT_MS,
        )?;
        (
            texts,
            keyed(
                rows.into_iter()
                    .map(|mut r| (std::mem::replace(&mut r[0], SqlValue::Null), 1))
                    .collect(),
            ),
        )
    } else {
        let wanted = TopWanted {
            kind: Kind::Text,
            limit: TOP_VALUES,
            values: texts,
            known: None,
            stored_order: ordered,
        };
        let (distinct, rows) = top_values(db, view, i, wanted)?;
        (distinct, keyed(rows))
    };
    // Values are fetched whole (a long one's format is its whole text's), so their number is
    // bounded by the longest's size too.
    let longest = count(row, s.len_max).saturating_mul(4).max(1);
    let all_groups = |sample: bool| -> Result<Vec<(String, u64)>, SourceError> {
        // A sample is every value of the first rows in the table's own order (grouped): rows
        // past them would cost a second full aggregation. All its groups, not some: which
        // groups a `LIMIT` keeps follows their text, not how often they come.
        let from = if sample {
            let rows = (FORMAT_SAMPLE_ROWS as u64).min(FETCHED_BYTES / longest).max(1);
            format!("(SELECT {c} FROM {} WHERE {predicate} LIMIT {rows}) AS first_rows", view.from)
        } else {
            format!("{} WHERE {predicate}", view.from)
        };
        // Grouped by code point: a collation that holds `a` and `A` (or full-width digits) equal
        // would hand over one of them for both.
        let bytewise = view.binary(&c);
        let rows = db.query_with_timeout(
            &format!("SELECT {bytewise}, COUNT(*) FROM {from} GROUP BY {bytewise}"),
            &[],
            PROFILE_TIMEOUT_MS,
        )?;
        Ok(value_counts(rows)
            .into_iter()
            .map(|(v, n)| (v.as_str().unwrap_or_default().to_string(), n))
            .collect())
    };
    // Every distinct value, when few enough to fetch: formats then exact, as in memory. The top
    // values are all of them when there are few, unless one is the key of a long value.
    let every_value = if distinct as usize <= TOP_VALUES
        && top_rows.iter().all(|(v, _)| long_key_parts(v).is_none())
    {
        Some(top_rows.clone())
    } else if distinct <= FORMATS_EXACT_UP_TO && distinct.saturating_mul(longest) <= FETCHED_BYTES {
        Some(all_groups(false)?)
    } else {
        None
    };
    // A date or time type the engine writes in one fixed shape, ordered as its text (checked on
    // its smallest and largest value): the engine's extremes are the earliest and latest.
    let fixed_shape = ordered && order != TextOrder::Text;
    let (format_counts, format_sample) = match &every_value {
        Some(values) => (count_formats(values), None),
        None => {
            let sample = all_groups(true)?;
            let sampled = sample.iter().map(|(_, n)| n).sum::<u64>();
            let counts = count_formats(&sample);
            let of_format = |f: StringFormat, text: Option<&str>| {
                text.is_some_and(|t| formats::detect(t) == Some(f))
            };
            match counts.as_slice() {
                // Every value of such a type has the shape the sample and both extremes have.
                [(f, n)]
                    if *n == sampled
                        && fixed_shape
                        && f.is_temporal()
                        && of_format(*f, native_min)
                        && of_format(*f, native_max) =>
                {
                    (vec![(*f, texts)], None)
                }
                // Said to be a sample's: a format every sampled value has is not claimed for
                // the column (a later value may have none), nor the range it would bring.
                _ => (counts, Some(sampled)),
            }
        }
    };
    let format = format_counts
        .first()
        .filter(|(_, n)| format_sample.is_none() && *n == texts)
        .map(|(f, _)| *f);
    let (min, max) = match (format, &every_value) {
        // By the engine's order where it is the times' (a zone's offset written with each
        // value orders as its instant too).
        (Some(f), _) if f.is_temporal() && (fixed_shape || order == TextOrder::Distinct) => {
            (native_min.map(str::to_string), native_max.map(str::to_string))
        }
        // Else compared as moments, not as text (offsets, fractions and separators differ).
        (Some(f), Some(values)) if f.is_temporal() => {
            formats::temporal_range(f, values.iter().map(|(v, _)| v.as_str()))
        }
        _ => (None, None),
    };
    Ok(StringProfile {
        count: texts,
        distinct,
        top: top_rows
            .into_iter()
            .map(|(v, count)| ValueCount { value: Value::String(v), count })
            .collect(),
        min_length: count(row, s.len_min),
        max_length: count(row, s.len_max),
        avg_length: float(row, s.len_avg),
        min,
        max,
        format,
        format_counts,
        format_sample,
    })
}

/// Values per format of whole values (none is a long value's key).
fn count_formats(entries: &[(String, u64)]) -> Vec<(StringFormat, u64)> {
    formats::with_counts(
        Vec::new(),
        entries.iter().filter_map(|(value, n)| Some((formats::detect(value)?, *n))),
    )
}

/// Counts histogram bins of a table's numeric columns with one `GROUP BY` per request.
#[derive(Debug)]
pub struct TableBins<'a> {
    /// The database.
    pub db: &'a dyn Database,
    /// The table.
    pub table: &'a TableInfo,
}

impl BinCounter for TableBins<'_> {
    fn count_bins(&self, path: &PropertyPath, layout: &HistogramLayout) -> Option<Vec<u64>> {
        let column = path.last_key().filter(|_| path.depth() == 1)?;
        let i = self.table.columns.iter().position(|c| c.name == column)?;
        let view = JsonView::new(self.db.dialect(), self.table).ok()?;
        let predicate = view.is(i, Kind::Numeric)?;
        let bins = layout.bins();
        // The bin of a value: how many inner edges are at or below it (edges are our own floats,
        // written as literals, never user input). The top edge belongs to the last bin.
        let inner = &layout.edges[1..bins];
        let edges = || inner.iter().map(|&e| edge_literal(e)).collect::<Vec<_>>().join(", ");
        let bin = if inner.is_empty() {
            "0".to_string()
        } else {
            // SQLite compares an integer with a real exactly; ClickHouse 18.16 has no
            // width_bucket, and an integer edge is an integer literal.
            view.engine.bin_of(i, view.classes[i], &edges()).unwrap_or_else(|| {
                inner
                    .iter()
                    .map(|&e| format!("CASE WHEN c{i} >= {} THEN 1 ELSE 0 END", edge_literal(e)))
                    .collect::<Vec<_>>()
                    .join(" + ")
            })
        };
        let rows = self
            .db
            .query(
                &format!(
                    // By the alias: ClickHouse 18.16 reads `GROUP BY 1` as the constant.
                    "SELECT {bin} AS b, COUNT(*) FROM {} WHERE {predicate} GROUP BY b",
                    view.from
                ),
                &[],
            )
            .ok()?;
        let mut counts = vec![0u64; bins];
        for r in rows {
            let b = usize::try_from(r[0].as_count()).ok()?.min(bins.saturating_sub(1));
            counts[b] += r[1].as_count();
        }
        Some(counts)
    }
}

/// A histogram edge (our own double, never user input) as an SQL literal that denotes exactly
/// it: a whole edge with all its digits (the shortest form of `2^60` is `1.152921504606847e18`,
/// a different integer, which would misplace integers near it), any other by its shortest form
/// (no integer lies between that decimal and the double).
fn edge_literal(edge: f64) -> String {
    if edge.fract() == 0.0 && edge.abs() < 1e38 {
        format!("{}", edge as i128)
    } else {
        format!("{edge:?}")
    }
}
