//! What the database layer writes for one engine, asked through one trait, [`EngineSql`],
//! instead of matched on its [`Dialect`]: the JSON view pushdown profiling reads each column
//! through, the aggregates it computes, how a sample picks random rows.
//!
//! Each engine implements it in its own folder (`sqlite/pushdown.rs`, `postgres/pushdown.rs`,
//! `clickhouse/pushdown.rs`); [`engine`] is the one registration, a line per engine. What the
//! validator also needs (quoting, parameters, the parser) is the engine's
//! [`schemascope_query::DialectRules`], reached through the same [`Dialect`].

use super::pushdown::numbers::Quartiles;
use schemascope_core::{ColumnInfo, TableInfo};
use serde_json::Value;

use super::pushdown::text_order::TextOrder;
use super::pushdown::{JsonView, ValueClass};
use super::{Database, Dialect, Rows, SqlValue};
use crate::error::SourceError;

/// A number column's mean, sample standard deviation and quartiles.
pub(crate) type Spread = (f64, f64, Quartiles);

/// Reads rows of a table for a sample: the relation they are read from (a table with a
/// sampling clause or a condition) and its parameters, to the rows as JSON objects.
pub(crate) type ReadRows<'a> = dyn Fn(String, &[SqlValue]) -> Result<Vec<Value>, SourceError> + 'a;

/// A number column of a table being profiled, for [`EngineSql::spread_and_quartiles`].
#[derive(Clone, Copy)]
pub(crate) struct NumberColumn<'a> {
    /// The database.
    pub(crate) db: &'a dyn Database,
    /// The table's JSON view.
    pub(crate) view: &'a JsonView,
    /// The column's position.
    pub(crate) i: usize,
    /// How many numbers it holds.
    pub(crate) n: u64,
    /// Their mean, as the scan computed it.
    pub(crate) mean: f64,
    /// Their sample standard deviation, as the scan computed it (NaN where it did not).
    pub(crate) std_dev: f64,
    /// True when every number is an integer.
    pub(crate) integers: bool,
}

/// The engine's SQL for the database layer (see the module docs); `None` for DataFusion, whose
/// tables are collections profiled as they are read, never by pushdown.
pub(crate) fn engine(dialect: Dialect) -> Option<&'static dyn EngineSql> {
    match dialect {
        Dialect::Sqlite => Some(&super::sqlite::SqliteSql),
        Dialect::Postgres => Some(&super::postgres::PostgresSql),
        Dialect::ClickHouse => Some(&super::clickhouse::ClickHouseSql),
        Dialect::MySql => Some(&super::mysql::MySqlSql(Dialect::MySql)),
        Dialect::MariaDb => Some(&super::mysql::MySqlSql(Dialect::MariaDb)),
        Dialect::DataFusion => None,
    }
}

/// One engine's SQL for pushdown profiling and samples. The required methods are what every
/// engine writes its own way; the provided ones hold where an engine has nothing particular.
pub(crate) trait EngineSql: Send + Sync + std::fmt::Debug {
    /// Column `i` of the JSON view, read from `quoted`: the expression giving its value as
    /// JSON shows it (aliased `c<i>` by the caller) and its class. Other select items the
    /// engine needs beside it (`r<i>` as stored, `t<i>` a number's text, `x<i>` whether it is
    /// exact, `e<i>` its exact value) are pushed onto `select`, and a column with `e<i>` onto
    /// `exact_columns`.
    fn view_column(
        &self,
        i: usize,
        column: &ColumnInfo,
        quoted: &str,
        select: &mut Vec<String>,
        exact_columns: &mut Vec<usize>,
    ) -> (String, ValueClass);

    /// A number column's mean, sample standard deviation and quartiles (`[q1, median, q3]`,
    /// each with its exact quarters where interpolated from integers), from one sort; the
    /// scan's mean and deviation are given, which the engine may compute again.
    fn spread_and_quartiles(&self, column: &NumberColumn<'_>) -> Result<Spread, SourceError>;

    /// Text's length in characters.
    fn length(&self, expr: &str) -> String;

    /// A number as a double.
    fn as_float(&self, expr: &str) -> String;

    /// A prefix the view names `table`'s columns by (followed by their position) instead of by
    /// their names, when their names could be read as the view's own aliases.
    fn positional_prefix(&self, table: &TableInfo) -> Option<String> {
        let _ = table;
        None
    }

    /// How a column of `class` compares with its text.
    fn text_order(&self, column: &ColumnInfo, class: ValueClass) -> TextOrder {
        let _ = (column, class);
        TextOrder::Text
    }

    /// How a text column compares with its text when the server writes its dates and times in
    /// `server_zone`, where that changes it.
    fn text_order_in_zone(
        &self,
        column: &ColumnInfo,
        server_zone: Option<&str>,
    ) -> Option<TextOrder> {
        let _ = (column, server_zone);
        None
    }

    /// Column `i`'s text length in characters from its stored value `r<i>`, where its type
    /// allows (no text made per row).
    fn text_length(&self, i: usize, column: &ColumnInfo, class: ValueClass) -> Option<String> {
        let _ = (i, column, class);
        None
    }

    /// The columns whose squares fit the engine's integers, for an exact deviation.
    fn small_integers(&self, table: &TableInfo) -> Vec<usize> {
        let _ = table;
        Vec::new()
    }

    /// Column `i`'s value as a row shows it: as the database returns the column (`r<i>`) unless
    /// the JSON view describes it (SQLite's blobs).
    fn shown(&self, i: usize) -> String {
        format!("r{i}")
    }

    /// Text ordered by code point, as Rust orders strings.
    fn binary(&self, expr: &str) -> String {
        expr.to_string()
    }

    /// Whether some aggregates must guard `column` with a CASE (ClickHouse's LowCardinality).
    fn guarded(&self, column: &ColumnInfo) -> bool {
        let _ = column;
        false
    }

    /// Whether a column's values are counted on its stored value `r<i>`, always.
    fn counts_stored(&self) -> bool {
        false
    }

    /// The mean of `c` (a column of `class`, exact value `exact`) where `p` holds, when the
    /// engine computes it its own way rather than as `AVG`. `when(p, e)` is `e` where `p` holds.
    fn mean(
        &self,
        class: ValueClass,
        c: &str,
        p: &str,
        exact: &str,
        when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        let _ = (class, c, p, exact, when);
        None
    }

    /// The sample standard deviation of `c` (exact value `exact`; `small_integer` when its
    /// squares fit the engine's integers) where `p` holds, computed in the scan; `None` when the
    /// engine computes it later, with the quartiles. `when(p, e)` is `e` where `p` holds.
    fn deviation(
        &self,
        small_integer: bool,
        c: &str,
        p: &str,
        exact: &str,
        when: &dyn Fn(&str, &str) -> String,
    ) -> Option<String> {
        let _ = (small_integer, c, p, exact, when);
        None
    }

    /// Whether a one-column primary key makes the column's values unique.
    fn primary_key_unique(&self) -> bool {
        true
    }

    /// The planner's estimate of a column's distinct values, when the engine keeps one.
    fn estimated_distinct(
        &self,
        db: &dyn Database,
        table: &str,
        column: &str,
    ) -> Result<Option<u64>, SourceError> {
        let _ = (db, table, column);
        Ok(None)
    }

    /// The exact count of distinct `key`, when the engine has an aggregate for it (else
    /// `COUNT(DISTINCT …)`).
    fn exact_distinct(&self, key: &str) -> Option<String> {
        let _ = key;
        None
    }

    /// Column `i`'s histogram bin (how many of the inner `edges`, a list of literals, are at
    /// or below its value), when the engine has a function for it; else a sum of comparisons.
    fn bin_of(&self, i: usize, class: ValueClass, edges: &str) -> Option<String> {
        let _ = (i, class, edges);
        None
    }

    /// What a document column's values are, when its type says so without reading them:
    /// rows of (JSON type, count) for `rows` rows.
    fn document_kinds(&self, column: &ColumnInfo, rows: u64) -> Option<Rows> {
        let _ = (column, rows);
        None
    }

    /// The JSON type (`object`, `array`, `string`, `integer`, `number`, `boolean`, `null`) of
    /// document column `i`'s value `c<i>`, counted in the database where
    /// [`EngineSql::document_kinds`] does not say.
    fn document_kind(&self, i: usize) -> Option<String> {
        let _ = i;
        None
    }

    /// A sample of `table` (of about `rows` rows) chosen at random, reproducibly for `seed`,
    /// read by `read` from a relation with parameters; `None` where the engine has no cheaper
    /// way than the shared one.
    fn random_rows(
        &self,
        db: &dyn Database,
        table: &TableInfo,
        rows: u64,
        seed: u64,
        read: &ReadRows<'_>,
    ) -> Option<Result<Vec<Value>, SourceError>> {
        let _ = (db, table, rows, seed, read);
        None
    }
}
