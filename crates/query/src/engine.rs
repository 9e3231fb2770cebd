//! Errors the database engine's own compiler raised (SQLite's prepare, PostgreSQL's Parse) as
//! issues of the same report: the engine is the last word on what it accepts, so what the
//! local checks miss it still finds before anything runs.

use crate::SqlDialect;
use crate::issue::{IssueKind, QueryIssue};

/// The issue for a compile error of `dialect`'s engine, kind read from the engine's message
/// (SQLite has one error code for all of them; PostgreSQL's SQLSTATE is not kept by the
/// database layer's message, whose wording is stable).
pub fn engine_issue(dialect: SqlDialect, message: &str) -> QueryIssue {
    let lower = message.to_lowercase();
    let has = |needle: &str| lower.contains(needle);
    // ClickHouse: "Missing columns: 'x'", "Table db.t doesn't exist", "Unknown function f",
    // "Number of arguments for function f doesn't match", "… is not under aggregate function
    // and not in GROUP BY", "Aggregate function … is found inside another aggregate function".
    let kind = if has("no such column")
        || (has("column ") && has("does not exist"))
        || has("missing columns")
        || has("unknown identifier")
    {
        IssueKind::UnknownColumn
    } else if has("ambiguous") {
        IssueKind::AmbiguousColumn
    } else if has("no such table")
        || (has("relation ") && has("does not exist"))
        || (has("table ") && has("doesn't exist"))
    {
        IssueKind::UnknownTable
    } else if has("no such function")
        || (has("function ") && has("does not exist"))
        || (has("operator ") && has("does not exist"))
        || has("wrong number of arguments")
        || has("unknown function")
        || has("number of arguments for function")
    {
        IssueKind::UnknownFunction
    } else if has("misuse of aggregate")
        || has("aggregate functions are not allowed")
        || has("inside another aggregate function")
    {
        IssueKind::Aggregation
    } else if has("group by") || has("not under aggregate function") {
        IssueKind::GroupBy
    } else {
        IssueKind::Syntax
    };
    QueryIssue::new(kind, format!("{dialect} rejects the query when compiling it: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_messages_get_their_kind() {
        let kind = |d, m| engine_issue(d, m).kind;
        assert_eq!(kind(SqlDialect::Sqlite, "no such column: x"), IssueKind::UnknownColumn);
        assert_eq!(
            kind(SqlDialect::Postgres, "ERROR: column \"x\" does not exist (at character 8)"),
            IssueKind::UnknownColumn
        );
        assert_eq!(
            kind(SqlDialect::Postgres, "ERROR: function year(date) does not exist"),
            IssueKind::UnknownFunction
        );
        assert_eq!(
            kind(
                SqlDialect::Postgres,
                "ERROR: column \"t.a\" must appear in the GROUP BY clause or be used in an aggregate function"
            ),
            IssueKind::GroupBy
        );
        assert_eq!(kind(SqlDialect::Sqlite, "near \"FROM\": syntax error"), IssueKind::Syntax);
        assert!(engine_issue(SqlDialect::Sqlite, "m").message.starts_with("SQLite rejects"));
    }
}
