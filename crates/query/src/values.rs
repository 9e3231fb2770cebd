//! What the validator may know about stored values — a column's complete value set when it is
//! small, numeric ranges, row counts — behind a small trait the caller implements, with an
//! implementation over column profiles.
//!
//! The validator never reads data itself (the crate does no I/O): the caller answers from what
//! it already computed. Every method has a default answering "unknown", so an implementation
//! provides only what it has, and [`NoValues`] knows nothing (schema-only validation).

use schemascope_core::CollectionProfile;
use schemascope_core::profile::PropertyProfile;

/// A column's value set is called complete, and literals are checked against it, only when it
/// has at most this many distinct values.
pub const MAX_COMPLETE_VALUES: u64 = 100;

/// Answers about stored values. Table and column names are matched as SQL matches unquoted
/// names (ASCII case-insensitively) by the implementations here. `Sync`, since validation runs
/// on a thread of its own (see [`crate::validate_sql`]).
pub trait KnownValues: Sync {
    /// Every distinct string value of `table.column`, when the column has few
    /// (≤ [`MAX_COMPLETE_VALUES`]) and all were counted; `None` when unknown or too many. A string
    /// literal compared with the column and not in this set matches no row.
    fn complete_values(&self, table: &str, column: &str) -> Option<Vec<String>> {
        let _ = (table, column);
        None
    }

    /// Stored values of `table.column` that `literal` may have meant (case, accents, words,
    /// typos aside), best first, when the caller can match them (`None`: the validator falls
    /// back to spelling alone).
    fn similar_values(&self, table: &str, column: &str, literal: &str) -> Option<Vec<String>> {
        let _ = (table, column, literal);
        None
    }

    /// Whether a row has `table.column = literal` as the engine compares (its collation, its
    /// type affinity), when the caller can ask it; `None` when it cannot. Asked only for a
    /// literal the value list lacks, before calling it absent.
    fn is_stored(&self, table: &str, column: &str, literal: &str) -> Option<bool> {
        let _ = (table, column, literal);
        None
    }

    /// The smallest and largest numeric value of `table.column`, when known.
    fn numeric_range(&self, table: &str, column: &str) -> Option<(f64, f64)> {
        let _ = (table, column);
        None
    }

    /// The number of rows of `table`, when known (the catalog's count is used otherwise).
    fn row_count(&self, table: &str) -> Option<u64> {
        let _ = table;
        None
    }
}

/// Knows nothing: schema-only validation.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoValues;

impl KnownValues for NoValues {}

/// Known values from tables' profiles (a table's profile has one top-level property per column).
#[derive(Debug, Clone, Default)]
pub struct ProfileValues<'a> {
    tables: Vec<(&'a str, &'a CollectionProfile)>,
}

impl<'a> ProfileValues<'a> {
    /// From `(table name, profile)` pairs.
    pub fn new(tables: impl IntoIterator<Item = (&'a str, &'a CollectionProfile)>) -> Self {
        Self { tables: tables.into_iter().collect() }
    }

    fn profile(&self, table: &str) -> Option<&'a CollectionProfile> {
        let found = self
            .tables
            .iter()
            .find(|(name, _)| *name == table)
            .or_else(|| self.tables.iter().find(|(name, _)| name.eq_ignore_ascii_case(table)));
        found.map(|(_, p)| *p)
    }

    fn column(&self, table: &str, column: &str) -> Option<&'a PropertyProfile> {
        let profile = self.profile(table)?;
        let key_is = |node: &&schemascope_core::profile::ProfileNode, exact: bool| {
            node.profile
                .path
                .last_key()
                .is_some_and(|k| if exact { k == column } else { k.eq_ignore_ascii_case(column) })
        };
        if let Some(exact) = profile.column(column) {
            return Some(exact);
        }
        let children = &profile.root.children;
        children
            .iter()
            .find(|n| key_is(n, true))
            .or_else(|| children.iter().find(|n| key_is(n, false)))
            .map(|n| &n.profile)
    }
}

impl KnownValues for ProfileValues<'_> {
    fn complete_values(&self, table: &str, column: &str) -> Option<Vec<String>> {
        let property = self.column(table, column)?;
        let strings = property.strings.as_ref()?;
        // Only strings: a number or a blob in the column (SQLite keeps what it is given) is a
        // value the string list does not show.
        let only_strings = strings.count + property.nulls >= property.present;
        let complete = only_strings
            && strings.distinct <= MAX_COMPLETE_VALUES
            && strings.top.len() as u64 >= strings.distinct;
        complete.then(|| {
            strings.top.iter().filter_map(|v| v.value.as_str().map(str::to_string)).collect()
        })
    }

    fn numeric_range(&self, table: &str, column: &str) -> Option<(f64, f64)> {
        let numbers = self.column(table, column)?.numbers.as_ref()?;
        (numbers.count > 0).then_some((numbers.min, numbers.max))
    }

    fn row_count(&self, table: &str) -> Option<u64> {
        self.profile(table).map(|p| p.item_count)
    }
}

/// Fixed answers, for tests and callers that hold values in hand.
#[derive(Debug, Clone, Default)]
pub struct StaticValues {
    /// `(table, column, values)`.
    pub values: Vec<(String, String, Vec<String>)>,
    /// `(table, column, min, max)`.
    pub ranges: Vec<(String, String, f64, f64)>,
    /// `(table, rows)`.
    pub row_counts: Vec<(String, u64)>,
}

impl KnownValues for StaticValues {
    fn complete_values(&self, table: &str, column: &str) -> Option<Vec<String>> {
        self.values
            .iter()
            .find(|(t, c, _)| t.eq_ignore_ascii_case(table) && c.eq_ignore_ascii_case(column))
            .map(|(_, _, v)| v.clone())
    }

    fn numeric_range(&self, table: &str, column: &str) -> Option<(f64, f64)> {
        self.ranges
            .iter()
            .find(|(t, c, _, _)| t.eq_ignore_ascii_case(table) && c.eq_ignore_ascii_case(column))
            .map(|(_, _, a, b)| (*a, *b))
    }

    fn row_count(&self, table: &str) -> Option<u64> {
        self.row_counts.iter().find(|(t, _)| t.eq_ignore_ascii_case(table)).map(|(_, n)| *n)
    }
}

/// Checks a string literal compared with `table.column` against the column's complete value set:
/// an error naming the closest stored values when no row has it (a case-only difference is
/// suggested first, since `=` compares case-sensitively).
pub(crate) fn check_string(
    values: &dyn KnownValues,
    table: &str,
    column: &str,
    literal: &str,
) -> Option<crate::QueryIssue> {
    let known = values.complete_values(table, column)?;
    if known.iter().any(|v| v == literal) || values.is_stored(table, column, literal) == Some(true)
    {
        return None;
    }
    let mut close: Vec<String> =
        known.iter().filter(|v| v.eq_ignore_ascii_case(literal)).cloned().collect();
    // The caller's matching knows words and their weight ('Holland' is no 'Poland', '80s
    // Music' no '90’s Music'); spelling alone is the fallback.
    let similar = values.similar_values(table, column, literal).unwrap_or_else(|| {
        schemascope_core::suggest::closest(literal, known.iter().map(String::as_str), 3)
    });
    for c in similar {
        if !close.contains(&c) {
            close.push(c);
        }
    }
    close.truncate(3);
    let listed = if close.is_empty() {
        let mut some: Vec<&str> = known.iter().map(String::as_str).take(5).collect();
        some.sort_unstable();
        format!("; it has {} values, such as {}", known.len(), quote_all(&some))
    } else {
        format!("; closest: {}", quote_all(&close.iter().map(String::as_str).collect::<Vec<_>>()))
    };
    let issue = crate::QueryIssue::new(
        crate::IssueKind::FilterValue,
        format!("no row has {table}.{column} = '{literal}'{listed}"),
    );
    Some(match close.first() {
        Some(best) => issue.suggest(best.clone()),
        None => issue,
    })
}

/// Checks a number compared with `table.column` against the column's range: a warning when it is
/// outside.
pub(crate) fn check_number(
    values: &dyn KnownValues,
    table: &str,
    column: &str,
    n: f64,
) -> Option<crate::QueryIssue> {
    let (min, max) = values.numeric_range(table, column)?;
    (n < min || n > max).then(|| {
        crate::QueryIssue::new(
            crate::IssueKind::FilterValue,
            format!("{n} is outside the range of {table}.{column} ({min} to {max})"),
        )
    })
}

fn quote_all(values: &[&str]) -> String {
    // Control characters escaped: a stored value is data, not part of the message.
    values
        .iter()
        .map(|v| format!("'{}'", schemascope_core::display::escape_controls(v)))
        .collect::<Vec<_>>()
        .join(", ")
}
