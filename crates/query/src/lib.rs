//! Local query validation and the structured-query compiler, with no LLM and no I/O.
//!
//! Two query forms are accepted ([`Query`]): SQL for SQL sources, and a typed
//! [`StructuredQuery`] modelled on Tableau's VizQL Data Service (fields with aggregate and date
//! functions, SET/TOP/MATCH/quantitative/relative-date filters, a row limit). [`validate`]
//! checks either against a [`Catalog`], what the caller knows about stored values
//! ([`KnownValues`]) and what the engine allows to be called ([`Callables`]), and returns a [`ValidationReport`] — `{valid, errors, warnings,
//! rewritten_query}` — whose issues are structured (kind, location, message, suggestion) so a
//! retry prompt can quote them. [`compile`] turns a structured query into SQL for SQLite or
//! PostgreSQL with quoted identifiers and bound parameters.
//!
//! **Invariants.** Pure: no files, network or clocks (relative date filters take "today" from
//! the caller). Validation never panics on input. No false rejections: when unsure, a warning.

#![forbid(unsafe_code)]

mod dialect;
mod engine;
mod issue;
pub mod sql;
pub mod structured;
mod types;
pub mod values;

use schemascope_core::Catalog;
use serde::{Deserialize, Deserializer};

pub use dialect::{DialectRules, FunctionFamily, SqlDialect, TableFunctions};
pub use engine::engine_issue;
pub use issue::{IssueKind, Location, QueryIssue, TableColumn, ValidationReport};
pub use sql::{
    Callables, HARMLESS_VOLATILE, MAX_CALL_DEPTH, ROW_LIMIT, RelationsRead, Verdict, Written,
    check_read_only, check_read_only_within, postgres_relations, referenced_columns, validate_sql,
    validate_sql_for_question,
};
pub use structured::compile::{CompileError, CompiledQuery, compile};
pub use structured::validate::validate_structured;
pub use structured::{Field, Filter, StructuredQuery};
pub use types::ColumnType;
pub use values::{KnownValues, NoValues, ProfileValues, StaticValues};

/// A query in either form. Deserialises from a JSON string (SQL) or a JSON object (a
/// structured query).
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// SQL text.
    Sql(String),
    /// A structured query.
    Structured(StructuredQuery),
}

/// A query that is neither SQL text nor a well-formed structured query.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct QueryParseError {
    /// What is wrong.
    pub message: String,
    /// The JSON path at fault (`fields[2].function`), when known.
    pub path: Option<String>,
}

impl Query {
    /// Reads a query from JSON: a string is SQL, an object a structured query (errors name the
    /// JSON path).
    pub fn from_json(value: serde_json::Value) -> Result<Self, QueryParseError> {
        match value {
            serde_json::Value::String(sql) => Ok(Self::Sql(sql)),
            serde_json::Value::Object(_) => structured::parse(value).map(Self::Structured),
            other => Err(QueryParseError {
                message: format!("a query is SQL text or a structured-query object, not {other}"),
                path: None,
            }),
        }
    }
}

impl<'de> Deserialize<'de> for Query {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Self::from_json(value).map_err(|e| {
            serde::de::Error::custom(match e.path {
                Some(p) => format!("{p}: {}", e.message),
                None => e.message,
            })
        })
    }
}

/// Validates a query of either form; SQL's calls are checked against `callables` (the
/// engine's allow-list, which also gives the dialect).
pub fn validate(
    query: &Query,
    catalog: &Catalog,
    values: &dyn KnownValues,
    callables: &Callables,
) -> ValidationReport {
    validate_for_question(query, catalog, values, callables, None)
}

/// [`validate`] for a query written to answer `question`: where a name is wrong, the
/// candidates closest in spelling are also ranked by what the question is about.
pub fn validate_for_question(
    query: &Query,
    catalog: &Catalog,
    values: &dyn KnownValues,
    callables: &Callables,
    question: Option<&str>,
) -> ValidationReport {
    match query {
        Query::Sql(sql) => {
            sql::validate_sql_for_question(sql, catalog, values, callables, question)
        }
        Query::Structured(q) => validate_structured(q, catalog, values),
    }
}
