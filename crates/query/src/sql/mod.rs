//! Validating SQL: parse (sqlparser, SQLite, PostgreSQL or ClickHouse dialect; PostgreSQL's
//! statements also with PostgreSQL's own grammar, which decides the read-only check), refuse
//! anything but one read-only query calling only what the engine allows, resolve every name
//! against the catalog, check aggregation, literals and joins, and add a row limit where a query
//! could return more than [`ROW_LIMIT`] rows.

mod bounded;
mod call_tokens;
pub(crate) mod callables;
mod calls;
mod check;
mod column_fixes;
mod dialect_fixes;
mod expr;
mod global_in;
mod pg_safety;
mod pg_tree;
mod question;
pub mod relations;
mod safety;
mod scope;
pub mod source_offsets;

pub use bounded::{
    BEYOND_BOUNDS, EXECUTION_WORK_BUDGET, MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_TOKENS, MAX_NESTING,
    MAX_QUERIES, WORK_BUDGET, parse_bounded, parse_within,
};
pub use callables::{Callables, HARMLESS_VOLATILE, Verdict, Written};
pub use calls::MAX_CALL_DEPTH;
pub use column_fixes::quote_name;
pub use pg_safety::{EXECUTION_POSTGRES_TOKENS, MAX_POSTGRES_TOKENS};
pub use pg_tree::RelationsRead;

use schemascope_core::Catalog;
use sqlparser::ast::{Expr, LimitClause, Query, SetExpr, Statement, Value};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::SqlDialect;
use crate::issue::{IssueKind, Issues, Location, QueryIssue, ValidationReport};
use crate::values::KnownValues;

/// How the message of an error for SQL that sqlparser cannot read begins (see
/// [`ValidationReport::only_unparsed`]).
pub const PARSE_FAILURE: &str = "the SQL does not parse";

/// A query that may return more rows than this without a limit gets `LIMIT` [`ROW_LIMIT`].
pub const ROW_LIMIT: u64 = 10_000;

/// Validates one SQL statement against `catalog` (and, for literals and row counts, `values`);
/// what it calls is checked against `callables`, which also give the dialect.
///
/// ```
/// use schemascope_core::{Catalog, ColumnInfo, TableInfo, TableKind};
/// use schemascope_query::{Callables, NoValues, SqlDialect, validate_sql};
///
/// let column = |name: &str| ColumnInfo { name: name.into(), declared_type: "TEXT".into(), nullable: true, comment: None, base_type: None };
/// let table = TableInfo { name: "Genre".into(), kind: TableKind::Table, columns: vec![column("GenreId"), column("Name")],
///     primary_key: vec!["GenreId".into()], foreign_keys: vec![], row_count: Some(25), row_count_estimated: false, comment: None };
/// let catalog = Catalog { tables: vec![table] };
/// let mut callables = Callables::new(SqlDialect::Sqlite);
/// callables.add_function(None, "upper", true);
/// let report = validate_sql("SELECT upper(Nmae) FROM Genre", &catalog, &NoValues, &callables);
/// assert!(!report.valid);
/// assert_eq!(report.errors[0].suggestion.as_deref(), Some("Name"));
/// let report = validate_sql("SELECT uper(Name) FROM Genre", &catalog, &NoValues, &callables);
/// assert!(report.errors[0].message.contains("Did you mean `upper`?"));
/// ```
pub fn validate_sql(
    sql: &str,
    catalog: &Catalog,
    values: &dyn KnownValues,
    callables: &Callables,
) -> ValidationReport {
    // sqlparser's parser, our walks and the tree's `Drop` recurse once per level of nesting; the
    // depth is bounded ([`parse_bounded`]), and all of it runs on a stack that holds the bound.
    validate_sql_for_question(sql, catalog, values, callables, None)
}

/// [`validate_sql`] for a query written to answer `question` (see
/// [`crate::validate_for_question`]).
pub fn validate_sql_for_question(
    sql: &str,
    catalog: &Catalog,
    values: &dyn KnownValues,
    callables: &Callables,
    question: Option<&str>,
) -> ValidationReport {
    schemascope_core::deep_stack::on_deep_stack(|| {
        validate_sql_here(sql, catalog, values, callables, question)
    })
    .unwrap_or_else(not_run)
}

/// The validation was not run: no thread could be started for it.
fn not_run(reason: String) -> ValidationReport {
    let mut issues = Issues::default();
    issues.error(
        QueryIssue::new(IssueKind::Syntax, format!("the SQL was not checked: {reason}"))
            .suggest("try again"),
    );
    issues.into_report(None)
}

/// [`validate_sql`] on the current thread's stack.
fn validate_sql_here(
    sql: &str,
    catalog: &Catalog,
    values: &dyn KnownValues,
    callables: &Callables,
    question: Option<&str>,
) -> ValidationReport {
    let dialect = callables.dialect();
    let mut issues = Issues::default();
    let (parsed, tokens) = parse(sql, dialect, WORK_BUDGET);
    // PostgreSQL's own grammar decides whether a PostgreSQL statement is one read-only query and
    // what it calls; sqlparser's tree then serves the name checks, when it reads the statement.
    let own_grammar = dialect.rules().own_grammar() && !parsed.as_ref().is_err_and(beyond_bounds);
    if own_grammar {
        let read = pg_safety::check(sql, tokens.as_deref(), callables, WORK_BUDGET, &mut issues);
        check_postgres_relations(read.as_ref(), callables, &mut issues);
        if !issues.errors.is_empty() {
            if let Ok([Statement::Query(query)]) = parsed.as_deref() {
                dialect_fixes::add_fixes(query, callables, &mut issues);
            }
            return issues.into_report(None);
        }
    }
    let statements = match parsed {
        Ok(s) => s,
        // PostgreSQL reads it, sqlparser does not (`TABLE t`, `ORDER BY … USING`, `ROWS FROM`,
        // typed literals of some types): the names are left to the engine's compile step.
        Err(e) if own_grammar => return unread_by_name_checks(&e.to_string()),
        Err(e) => {
            // A statement that is not a query often fails to parse (LOCK, DO, ANALYZE, …): the
            // token check says so first, which is the reason that matters.
            let message = e.to_string();
            token_fallback(&tokens, callables, &message, &mut issues);
            let location = parse_error_location(&message);
            // Past a bound the SQL is refused unread; otherwise the parser could not read it
            // (which the engine may still accept: see `ValidationReport::only_unparsed`).
            let bounded = beyond_bounds(&e);
            let text = if bounded {
                format!("the SQL is refused unread ({dialect}): {message}")
            } else {
                format!("{PARSE_FAILURE} ({dialect}): {message}")
            };
            issues.error(QueryIssue::new(IssueKind::Syntax, text).at(location));
            return issues.into_report(None);
        }
    };
    if statements.len() != 1 && own_grammar {
        // PostgreSQL reads one query where sqlparser reads several statements.
        return unread_by_name_checks("sqlparser reads several statements");
    }
    if statements.len() != 1 {
        issues.error(
            QueryIssue::new(
                IssueKind::MultipleStatements,
                format!("exactly one statement is allowed; found {}", statements.len()),
            )
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
    let Statement::Query(query) = statement else {
        return if own_grammar {
            unread_by_name_checks("sqlparser reads another kind of statement")
        } else {
            issues.into_report(None)
        };
    };
    if !own_grammar {
        safety::check_query(query, tokens.as_deref().unwrap_or_default(), callables, &mut issues);
        check_relations(query, callables, &mut issues);
    }
    if !issues.errors.is_empty() {
        dialect_fixes::add_fixes(query, callables, &mut issues);
        return issues.into_report(None);
    }
    let mut checker = check::Checker::new(catalog, values, dialect);
    checker.question = question.map(question::Question::of).unwrap_or_default();
    checker.text = sql;
    checker.query(query, None);
    let scanned = std::mem::take(&mut checker.scanned);
    let mut issues = checker.issues;
    let rewritten = row_limit(query, &scanned, &mut issues);
    issues.into_report(rewritten)
}

/// Whether sqlparser stopped at one of the bounds (which the SQL is refused for, unread).
fn beyond_bounds(e: &sqlparser::parser::ParserError) -> bool {
    matches!(e, sqlparser::parser::ParserError::RecursionLimitExceeded)
        || e.to_string().contains(BEYOND_BOUNDS)
}

/// The report on a PostgreSQL query that passed the read-only check on PostgreSQL's own parse
/// but that sqlparser, whose tree the name checks walk, does not read (`why`): valid, with a
/// warning that names were not checked here (the engine's compile step still checks them).
fn unread_by_name_checks(why: &str) -> ValidationReport {
    let mut issues = Issues::default();
    issues.warn(QueryIssue::new(
        IssueKind::Portability,
        format!(
            "schemascope's name checks do not read this PostgreSQL syntax ({why}); PostgreSQL's own parser read it and everything it calls is allowed, but table and column names, filter values, joins and the row limit were not checked here"
        ),
    ));
    issues.into_report(None)
}

/// The table columns `sql` reads, each name resolved as the validator resolves it (aliases,
/// CTEs and subqueries followed), without repeats; `Err` with the parser's message when it does
/// not parse as one query. For evaluations: which columns a gold query uses.
pub fn referenced_columns(
    sql: &str,
    catalog: &Catalog,
    dialect: SqlDialect,
) -> Result<Vec<crate::TableColumn>, String> {
    schemascope_core::deep_stack::on_deep_stack(|| {
        let (parsed, _) = parse(sql, dialect, WORK_BUDGET);
        let statements = parsed.map_err(|e| e.to_string())?;
        let [Statement::Query(query)] = statements.as_slice() else {
            return Err("not one query".into());
        };
        let mut checker = check::Checker::new(catalog, &crate::NoValues, dialect);
        checker.query(query, None);
        let mut seen = std::collections::HashSet::new();
        Ok(checker.referenced.into_iter().filter(|c| seen.insert(c.clone())).collect())
    })?
}

/// The statements of `sql` (bounded, see [`parse_within`]) and its tokens, when it tokenizes.
fn parse(
    sql: &str,
    dialect: SqlDialect,
    budget: u64,
) -> (Result<Vec<Statement>, sqlparser::parser::ParserError>, Option<Vec<Token>>) {
    let parser_dialect = dialect.rules().parser();
    let tokens = Tokenizer::new(parser_dialect, sql).tokenize().ok();
    (parse_within(parser_dialect, sql, budget), tokens)
}

/// The token check for SQL that does not parse; text that does not even tokenize is refused:
/// a string the tokenizer cannot delimit might hide anything.
fn token_fallback(
    tokens: &Option<Vec<Token>>,
    callables: &Callables,
    parse_error: &str,
    issues: &mut Issues,
) {
    match tokens {
        Some(tokens) => safety::check_tokens(tokens, callables, parse_error, issues),
        None => issues.error(
            QueryIssue::new(IssueKind::Syntax, "the SQL does not tokenize")
                .suggest("check quotes and comments"),
        ),
    }
}

/// Refuses SQL that is not one read-only query calling only what `callables` allow, without
/// resolving a single table or column name: what runs before a statement is executed — in
/// execute_query and, for PostgreSQL, in the database layer itself — where a query the
/// validator would merely question must still run. SQL that parses gets the same safety check
/// as [`validate_sql`]; SQL that does not is checked on its tokens and, for PostgreSQL, refused
/// (what it calls cannot be resolved).
///
/// ```
/// use schemascope_query::{Callables, SqlDialect, check_read_only};
///
/// let mut callables = Callables::new(SqlDialect::Postgres);
/// callables.add_function(Some("pg_catalog"), "pg_sleep", false);
/// assert!(check_read_only("SELECT 1 AS \"drop\"", &callables).is_ok());
/// let refused = check_read_only("SELECT 1; DR/**/OP TABLE t", &callables).unwrap_err();
/// assert!(refused[0].message.contains("one statement"));
/// let refused = check_read_only("SELECT PG_CATALOG.\"pg_sleep\"(1)", &callables).unwrap_err();
/// assert!(refused[0].message.contains("is not allowed"));
/// ```
pub fn check_read_only(sql: &str, callables: &Callables) -> Result<(), Vec<QueryIssue>> {
    schemascope_core::deep_stack::on_deep_stack(|| {
        check_read_only_here(sql, callables, WORK_BUDGET, Reach::Served)
    })
    .unwrap_or_else(|reason| Err(not_run(reason).errors))
}

/// Which relations a statement checked for running may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// A caller's statement: only what the source serves ([`Callables::relation_scope`]).
    Served,
    /// Any: the database layer's check, which also sees schemascope's own statements (its
    /// catalog reads `system.tables`, `pg_class`, `sqlite_schema`).
    Any,
}

/// Refuses every relation `query` reads outside what the source serves, when the database
/// layer set the scope ([`relations::RelationScope`]).
fn check_relations(query: &Query, callables: &Callables, issues: &mut Issues) {
    if let Some(scope) = callables.relation_scope() {
        let found = relations::collect(query, callables.dialect());
        for issue in relations::judge_relations(&found, scope) {
            issues.error(issue);
        }
    }
}

/// [`check_relations`] for a PostgreSQL statement, on the relations PostgreSQL's own grammar
/// read (`read`: names already folded and unquoted as PostgreSQL resolves them, CTEs left out).
fn check_postgres_relations(
    read: Option<&RelationsRead>,
    callables: &Callables,
    issues: &mut Issues,
) {
    let (Some(read), Some(scope)) = (read, callables.relation_scope()) else { return };
    let part = |text: &str| relations::RelationPart { text: text.to_string(), quoted: true };
    let found: Vec<relations::RelationRef> = read
        .tables
        .iter()
        .map(|(schema, name)| relations::RelationRef {
            parts: schema.iter().map(|s| part(s)).chain([part(name)]).collect(),
            cte: false,
        })
        .collect();
    for issue in relations::judge_relations(&found, scope) {
        issues.error(issue);
    }
}

/// [`check_read_only`] with another parsing budget, for the database layer: its budget
/// ([`EXECUTION_WORK_BUDGET`]) lets its own wide profiling SQL through, and the relations a
/// statement reads are not judged there, since schemascope's own statements read the engine's
/// catalog; callers' statements meet that rule in [`check_read_only`] and [`validate_sql`]
/// before they reach it. Runs on a deep stack, as [`validate_sql`].
pub fn check_read_only_within(
    sql: &str,
    callables: &Callables,
    parse_budget: u64,
) -> Result<(), Vec<QueryIssue>> {
    schemascope_core::deep_stack::on_deep_stack(|| {
        check_read_only_here(sql, callables, parse_budget, Reach::Any)
    })
    .unwrap_or_else(|reason| Err(not_run(reason).errors))
}

/// [`check_read_only_within`] on the current thread's stack.
fn check_read_only_here(
    sql: &str,
    callables: &Callables,
    parse_budget: u64,
    reach: Reach,
) -> Result<(), Vec<QueryIssue>> {
    let mut issues = Issues::default();
    let rules = callables.dialect().rules();
    if rules.own_grammar() {
        let tokens = Tokenizer::new(rules.parser(), sql).tokenize().ok();
        let read = pg_safety::check(sql, tokens.as_deref(), callables, parse_budget, &mut issues);
        if reach == Reach::Served {
            check_postgres_relations(read.as_ref(), callables, &mut issues);
        }
        return if issues.errors.is_empty() { Ok(()) } else { Err(issues.errors) };
    }
    let (parsed, tokens) = parse(sql, callables.dialect(), parse_budget);
    match parsed {
        Ok(statements) if statements.len() == 1 => {
            if safety::check_statement_kind(&statements[0], &mut issues)
                && let Statement::Query(query) = &statements[0]
            {
                safety::check_query(
                    query,
                    tokens.as_deref().unwrap_or_default(),
                    callables,
                    &mut issues,
                );
                if reach == Reach::Served {
                    check_relations(query, callables, &mut issues);
                }
            }
        }
        Ok(statements) => {
            issues.error(
                QueryIssue::new(
                    IssueKind::MultipleStatements,
                    format!("exactly one statement is allowed; found {}", statements.len()),
                )
                .suggest("send a single SELECT without other statements"),
            );
            for statement in &statements {
                safety::check_statement_kind(statement, &mut issues);
            }
        }
        Err(e) => token_fallback(&tokens, callables, &e.to_string(), &mut issues),
    }
    if issues.errors.is_empty() { Ok(()) } else { Err(issues.errors) }
}

/// The relations and functions in FROM that a PostgreSQL statement reads, read with
/// PostgreSQL's own grammar (CTE names left out): for rules on which relations a source
/// serves. `Err` with PostgreSQL's message when it does not parse, or with the bound passed.
/// Runs on a deep stack, as [`check_read_only`].
///
/// ```
/// use schemascope_query::postgres_relations;
///
/// let read = postgres_relations(
///     "WITH c AS (SELECT * FROM pg_catalog.pg_stat_activity) SELECT * FROM c, public.t, generate_series(1, 2)",
/// )
/// .unwrap();
/// let mut tables = read.tables.clone();
/// tables.sort();
/// assert_eq!(
///     tables,
///     vec![(Some("pg_catalog".to_string()), "pg_stat_activity".to_string()), (Some("public".into()), "t".into())]
/// );
/// assert_eq!(read.functions, vec![(None, "generate_series".to_string())]);
/// ```
pub fn postgres_relations(sql: &str) -> Result<RelationsRead, String> {
    schemascope_core::deep_stack::on_deep_stack(|| {
        if let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() {
            bounded::check_token_bounds(&tokens, WORK_BUDGET).map_err(|e| e.to_string())?;
        }
        pg_safety::relations(sql)
    })?
}

/// `LIMIT ROW_LIMIT` added when the query has no limit, is not aggregated at the top, and reads
/// a table known to have more rows.
fn row_limit(
    query: &Query,
    scanned: &[(String, Option<u64>)],
    issues: &mut Issues,
) -> Option<String> {
    if query.limit_clause.is_some() || query.fetch.is_some() {
        return None;
    }
    if let SetExpr::Select(select) = query.body.as_ref() {
        let grouped = !matches!(&select.group_by, sqlparser::ast::GroupByExpr::Expressions(e, _) if e.is_empty());
        let aggregated = select.projection.iter().any(|item| match item {
            sqlparser::ast::SelectItem::UnnamedExpr(e)
            | sqlparser::ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                expr::contains_aggregate(e)
            }
            _ => false,
        });
        if grouped || aggregated {
            return None;
        }
    }
    let (table, rows) =
        scanned.iter().filter_map(|(t, n)| n.map(|n| (t, n))).max_by_key(|(_, n)| *n)?;
    if rows <= ROW_LIMIT {
        return None;
    }
    let mut limited = query.clone();
    limited.limit_clause = Some(LimitClause::LimitOffset {
        limit: Some(Expr::value(Value::Number(ROW_LIMIT.to_string(), false))),
        offset: None,
        limit_by: Vec::new(),
    });
    issues.warn(
        QueryIssue::new(
            IssueKind::RowLimit,
            format!(
                "{table} has {rows} rows and the query has no LIMIT; LIMIT {ROW_LIMIT} was added"
            ),
        )
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
