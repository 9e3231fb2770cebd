//! Validating SQL: parse (sqlparser, SQLite or PostgreSQL dialect), refuse anything but one
//! read-only query, resolve every name against the catalog, check aggregation, literals and
//! joins, and add a row limit where a query could return more than [`ROW_LIMIT`] rows.

mod bounded;
mod check;
mod expr;
mod safety;
mod scope;

pub use bounded::{MAX_NESTING, parse_bounded};
pub use safety::forbidden_function;

use schemascope_core::Catalog;
use sqlparser::ast::{Expr, LimitClause, Query, SetExpr, Statement, Value};
use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};

use crate::SqlDialect;
use crate::issue::{IssueKind, Issues, Location, QueryIssue, ValidationReport};
use crate::values::KnownValues;

/// A query that may return more rows than this without a limit gets `LIMIT` [`ROW_LIMIT`].
pub const ROW_LIMIT: u64 = 10_000;

/// Validates one SQL statement against `catalog` (and, for literals and row counts, `values`).
///
/// ```
/// use schemascope_core::{Catalog, ColumnInfo, TableInfo, TableKind};
/// use schemascope_query::{NoValues, SqlDialect, validate_sql};
///
/// let column = |name: &str| ColumnInfo { name: name.into(), declared_type: "TEXT".into(), nullable: true, comment: None, base_type: None };
/// let table = TableInfo { name: "Genre".into(), kind: TableKind::Table, columns: vec![column("GenreId"), column("Name")],
///     primary_key: vec!["GenreId".into()], foreign_keys: vec![], row_count: Some(25), comment: None };
/// let catalog = Catalog { tables: vec![table] };
/// let report = validate_sql("SELECT Nmae FROM Genre", SqlDialect::Sqlite, &catalog, &NoValues);
/// assert!(!report.valid);
/// assert_eq!(report.errors[0].suggestion.as_deref(), Some("Name"));
/// ```
pub fn validate_sql(sql: &str, dialect: SqlDialect, catalog: &Catalog, values: &dyn KnownValues) -> ValidationReport {
    let mut issues = Issues::default();
    let parsed = match dialect {
        SqlDialect::Sqlite => parse_bounded(&SQLiteDialect {}, sql),
        SqlDialect::Postgres => parse_bounded(&PostgreSqlDialect {}, sql),
    };
    let statements = match parsed {
        Ok(s) => s,
        Err(e) => {
            // A statement that is not a query often fails to parse (LOCK, DO, ANALYZE, …): the
            // token check says so first, which is the reason that matters.
            match dialect {
                SqlDialect::Sqlite => safety::check_tokens(sql, &SQLiteDialect {}, &mut issues),
                SqlDialect::Postgres => safety::check_tokens(sql, &PostgreSqlDialect {}, &mut issues),
            }
            let message = e.to_string();
            let location = parse_error_location(&message);
            issues.error(QueryIssue::new(IssueKind::Syntax, format!("the SQL does not parse ({dialect}): {message}")).at(location));
            return issues.into_report(None);
        }
    };
    if statements.len() != 1 {
        issues.error(
            QueryIssue::new(IssueKind::MultipleStatements, format!("exactly one statement is allowed; found {}", statements.len()))
                .suggest("send a single SELECT without other statements"),
        );
        for statement in &statements {
            safety::check_statement_kind(statement, &mut issues);
        }
        return issues.into_report(None);
    }
    let statement = &statements[0];
    if !safety::check_statement_kind(statement, &mut issues) {
        return issues.into_report(None);
    }
    let Statement::Query(query) = statement else { return issues.into_report(None) };
    safety::check_query_safety(query, &mut issues);
    if !issues.errors.is_empty() {
        return issues.into_report(None);
    }
    let mut checker = check::Checker::new(catalog, values, dialect);
    checker.query(query, None);
    let scanned = std::mem::take(&mut checker.scanned);
    let mut issues = checker.issues;
    let rewritten = row_limit(query, &scanned, &mut issues);
    issues.into_report(rewritten)
}

/// Refuses SQL that is not one read-only query, without resolving a single name: what runs
/// before a statement is executed (execute_query), where a query the validator would merely
/// question must still run. SQL that parses gets the same safety walk as [`validate_sql`]; SQL
/// that does not is checked on its tokens (first word, one statement, no forbidden function, no
/// INTO) and otherwise left to the database, which is read-only on its own.
///
/// ```
/// use schemascope_query::{SqlDialect, check_read_only};
///
/// assert!(check_read_only("SELECT 1 AS \"drop\"", SqlDialect::Postgres).is_ok());
/// let refused = check_read_only("SELECT 1; DR/**/OP TABLE t", SqlDialect::Postgres).unwrap_err();
/// assert!(refused[0].message.contains("one statement"));
/// ```
pub fn check_read_only(sql: &str, dialect: SqlDialect) -> Result<(), Vec<QueryIssue>> {
    let mut issues = Issues::default();
    let parsed = match dialect {
        SqlDialect::Sqlite => parse_bounded(&SQLiteDialect {}, sql),
        SqlDialect::Postgres => parse_bounded(&PostgreSqlDialect {}, sql),
    };
    match parsed {
        Ok(statements) if statements.len() == 1 => {
            if safety::check_statement_kind(&statements[0], &mut issues)
                && let Statement::Query(query) = &statements[0]
            {
                safety::check_query_safety(query, &mut issues);
            }
        }
        Ok(statements) => {
            issues.error(
                QueryIssue::new(IssueKind::MultipleStatements, format!("exactly one statement is allowed; found {}", statements.len()))
                    .suggest("send a single SELECT without other statements"),
            );
            for statement in &statements {
                safety::check_statement_kind(statement, &mut issues);
            }
        }
        Err(_) => match dialect {
            SqlDialect::Sqlite => safety::check_tokens(sql, &SQLiteDialect {}, &mut issues),
            SqlDialect::Postgres => safety::check_tokens(sql, &PostgreSqlDialect {}, &mut issues),
        },
    }
    if issues.errors.is_empty() { Ok(()) } else { Err(issues.errors) }
}

/// `LIMIT ROW_LIMIT` added when the query has no limit, is not aggregated at the top, and reads
/// a table known to have more rows.
fn row_limit(query: &Query, scanned: &[(String, Option<u64>)], issues: &mut Issues) -> Option<String> {
    if query.limit_clause.is_some() || query.fetch.is_some() {
        return None;
    }
    if let SetExpr::Select(select) = query.body.as_ref() {
        let grouped = !matches!(&select.group_by, sqlparser::ast::GroupByExpr::Expressions(e, _) if e.is_empty());
        let aggregated = select.projection.iter().any(|item| match item {
            sqlparser::ast::SelectItem::UnnamedExpr(e) | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. } => expr::contains_aggregate(e),
            _ => false,
        });
        if grouped || aggregated {
            return None;
        }
    }
    let (table, rows) = scanned.iter().filter_map(|(t, n)| n.map(|n| (t, n))).max_by_key(|(_, n)| *n)?;
    if rows <= ROW_LIMIT {
        return None;
    }
    let mut limited = query.clone();
    limited.limit_clause =
        Some(LimitClause::LimitOffset { limit: Some(Expr::value(Value::Number(ROW_LIMIT.to_string(), false))), offset: None, limit_by: Vec::new() });
    issues.warn(
        QueryIssue::new(IssueKind::RowLimit, format!("{table} has {rows} rows and the query has no LIMIT; LIMIT {ROW_LIMIT} was added"))
            .suggest("add an explicit LIMIT, aggregate, or filter"),
    );
    Some(limited.to_string())
}

/// `… at Line: 3, Column: 7` in a sqlparser message.
fn parse_error_location(message: &str) -> Option<Location> {
    let rest = &message[message.rfind("Line: ")? + 6..];
    let (line, rest) = rest.split_once(", Column: ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Location::at(line.trim().parse().ok()?, column.parse().ok()?)
}
