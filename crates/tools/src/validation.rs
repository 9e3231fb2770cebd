//! Validating a query on a database: the local checks (catalog, stored values, the engine's
//! allow-list of functions), then — when they find nothing — the engine's own compiler, which
//! runs nothing ([`Database::compile`]). What the engine would refuse is thus found before
//! execution, with the local checks' suggestions where they have one.

use schemascope_core::Catalog;
use schemascope_query::{
    IssueKind, KnownValues, Query, QueryIssue, ValidationReport, engine_issue,
    validate_for_question,
};
use schemascope_sources::SourceError;
use schemascope_sources::error::ErrorClass;
use schemascope_sources::sql::Database;

use crate::result::ToolError;

/// The local checks alone: catalog, stored values, the engine's allow-list and the rules.
pub(crate) fn validate_locally(
    database: &dyn Database,
    catalog: &Catalog,
    values: &dyn KnownValues,
    query: &Query,
    question: Option<&str>,
) -> Result<ValidationReport, ToolError> {
    let callables = database.callables()?;
    Ok(validate_for_question(query, catalog, values, &callables, question))
}

/// Validates `query`, written to answer `question`, on `database` against `catalog` and
/// `values`: the local checks, then the engine's compiler.
pub(crate) fn validate_on_database(
    database: &dyn Database,
    catalog: &Catalog,
    values: &dyn KnownValues,
    query: &Query,
    question: Option<&str>,
) -> Result<ValidationReport, ToolError> {
    let local = validate_locally(database, catalog, values, query, question)?;
    confirm_with_engine(database, query, local)
}

/// The engine's word on `query` after the local checks gave `report`: what sqlparser could not
/// read, SQLite decides; a query the local checks accept is compiled by the engine.
pub(crate) fn confirm_with_engine(
    database: &dyn Database,
    query: &Query,
    mut report: ValidationReport,
) -> Result<ValidationReport, ToolError> {
    let dialect = database.callables()?.dialect();
    // SQLite syntax sqlparser does not read (`IS 'x'`, `GLOB`, `NOT INDEXED`, `x ISNULL`):
    // SQLite itself decides, behind the same token check and engine gate as execute_query. For
    // PostgreSQL such SQL stays refused: what it calls cannot be resolved.
    if dialect.rules().engine_decides_unparsed()
        && report.only_unparsed()
        && let Query::Sql(sql) = query
    {
        return Ok(match database.compile(sql) {
            Ok(()) => ValidationReport::new(
                Vec::new(),
                vec![QueryIssue::new(
                    IssueKind::Portability,
                    "schemascope's SQL parser does not read this SQLite syntax; SQLite compiled it (names and functions checked by SQLite), but filter values, joins and the row limit were not checked",
                )],
                None,
            ),
            // The engine's reason says more than the parser's.
            Err(SourceError::Statement {
                message,
                class: ErrorClass::Syntax | ErrorClass::Refused,
                ..
            }) => ValidationReport::new(vec![engine_issue(dialect, &message)], Vec::new(), None),
            Err(_) => report,
        });
    }
    if !report.valid {
        return Ok(report);
    }
    let sql = match (&report.rewritten_query, query) {
        (Some(rewritten), _) => rewritten.clone(),
        (None, Query::Sql(sql)) => sql.clone(),
        // A structured query is compiled by schemascope itself; its SQL is the rewritten query.
        (None, Query::Structured(_)) => return Ok(report),
    };
    match database.compile(&sql) {
        Ok(()) => {}
        Err(SourceError::Statement { message, class: ErrorClass::Syntax | ErrorClass::Refused, .. }) => {
            report.errors.push(engine_issue(dialect, &message));
            report.valid = false;
        }
        Err(e @ SourceError::Cancelled(_)) => return Err(e.into()),
        // The engine could not be asked (a lost connection, a timeout): the local verdict
        // stands, and says it was not confirmed.
        Err(e) => report.warnings.push(QueryIssue::new(
            IssueKind::Syntax,
            format!("{dialect} could not be asked to compile the query ({e}); the local checks found nothing"),
        )),
    }
    Ok(report)
}
