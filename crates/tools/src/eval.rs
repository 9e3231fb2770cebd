//! `eval retrieval`: table retrieval quality on Spider-format schemas and questions. Each schema
//! becomes a schema-only SQLite database, is read back through the SQLite source like any user
//! database, gets generated docs, and is searched for every question; the gold tables come from
//! the gold SQL.

use std::path::Path;

use schemascope_docs::RetrievalConfig;
use schemascope_docs::eval::{
    EvalOptions, EvalReport, Setting, evaluate, spider_databases, spider_questions,
};
use schemascope_sources::sql::create::create_schema_only;
use schemascope_sources::sql::{Database, SqliteDatabase};

use crate::result::ToolError;

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct EvalRequest<'a> {
    /// Spider `tables.json`.
    pub tables: &'a Path,
    /// Spider `dev.json`-format questions.
    pub questions: &'a Path,
    /// All databases pooled into one schema (else each database alone).
    pub pooled: bool,
    /// K of the @K metrics.
    pub k: usize,
    /// Retrieval configuration.
    pub config: RetrievalConfig,
}

fn read(path: &Path) -> Result<String, ToolError> {
    use schemascope_sources::file;
    file::read_string(
        path,
        file::max_source_bytes(),
        "for an evaluation file (raise it with --max-file-bytes)",
    )
    .map_err(|e| ToolError::InvalidParams(e.to_string()))
}

/// Runs the evaluation.
pub fn eval_retrieval(request: &EvalRequest<'_>) -> Result<EvalReport, ToolError> {
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        ToolError::InvalidParams(format!("{}: {e}", path.display()))
    };
    let mut databases =
        spider_databases(&read(request.tables)?).map_err(|e| bad(request.tables, &e))?;
    let questions =
        spider_questions(&read(request.questions)?).map_err(|e| bad(request.questions, &e))?;
    if request.k == 0 {
        return Err(ToolError::InvalidParams("--k must be at least 1".into()));
    }
    let dir = tempfile::tempdir().map_err(|e| {
        ToolError::InvalidParams(format!("cannot create a temporary directory: {e}"))
    })?;
    for (i, db) in databases.iter_mut().enumerate() {
        // Through a real database and the SQLite source's catalog reader, as a user's would go.
        let path = dir.path().join(format!("{i}.sqlite"));
        create_schema_only(&path, &db.catalog)?;
        db.catalog = SqliteDatabase::open(&path)?.catalog()?;
    }
    let setting = if request.pooled { Setting::Pooled } else { Setting::PerDatabase };
    Ok(evaluate(
        &databases,
        &questions,
        setting,
        &EvalOptions { k: request.k, config: request.config.clone() },
    ))
}

/// One gold query the validator rejected.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rejected {
    /// The database.
    pub db_id: String,
    /// The question.
    pub question: String,
    /// The gold SQL.
    pub query: String,
    /// The validator's errors.
    pub errors: Vec<schemascope_query::QueryIssue>,
}

/// What the validator made of every gold query.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ValidatorReport {
    /// Gold queries checked.
    pub total: usize,
    /// Accepted (valid, warnings allowed).
    pub accepted: usize,
    /// Rejected: each is a false rejection.
    pub rejected: usize,
    /// Warnings given across all queries.
    pub warnings: usize,
    /// The rejected items.
    pub rejected_items: Vec<Rejected>,
}

/// Validates every gold SQL of `questions` against its schema-only SQLite database (built from
/// `tables` and read back by the SQLite source).
pub fn eval_validator(tables: &Path, questions: &Path) -> Result<ValidatorReport, ToolError> {
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        ToolError::InvalidParams(format!("{}: {e}", path.display()))
    };
    let databases = spider_databases(&read(tables)?).map_err(|e| bad(tables, &e))?;
    let questions = spider_questions(&read(questions)?).map_err(|e| bad(questions, &e))?;
    let dir = tempfile::tempdir().map_err(|e| {
        ToolError::InvalidParams(format!("cannot create a temporary directory: {e}"))
    })?;
    let mut catalogs = std::collections::HashMap::new();
    for (i, db) in databases.iter().enumerate() {
        let path = dir.path().join(format!("{i}.sqlite"));
        create_schema_only(&path, &db.catalog)?;
        let opened = SqliteDatabase::open(&path)?;
        catalogs.insert(db.db_id.clone(), (opened.catalog()?, opened.callables()?));
    }
    let mut report = ValidatorReport {
        total: 0,
        accepted: 0,
        rejected: 0,
        warnings: 0,
        rejected_items: Vec::new(),
    };
    for q in &questions {
        let Some((catalog, callables)) = catalogs.get(&q.db_id) else {
            return Err(ToolError::InvalidParams(format!(
                "question for unknown database `{}`",
                q.db_id
            )));
        };
        let result = schemascope_query::validate_sql(
            &q.query,
            catalog,
            &schemascope_query::NoValues,
            callables,
        );
        report.total += 1;
        report.warnings += result.warnings.len();
        if result.valid {
            report.accepted += 1;
        } else {
            report.rejected += 1;
            report.rejected_items.push(Rejected {
                db_id: q.db_id.clone(),
                question: q.question.clone(),
                query: q.query.clone(),
                errors: result.errors,
            });
        }
    }
    Ok(report)
}
