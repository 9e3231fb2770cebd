//! Evaluations on Spider-format schemas and questions (Spider, BIRD). Each schema becomes a
//! schema-only SQLite database, read back through the SQLite source like any user database.
//! `eval retrieval` (here): generated docs searched for every question, gold tables from the
//! gold SQL. `eval validator` (`validator.rs`): the validator on gold SQL and on models'
//! predictions, against the engine's own verdict. `eval values` (`values.rs`): whether a
//! question's context names the stored values it refers to loosely.

mod validator;
mod values;

pub use validator::{ValidatorReport, ValidatorRequest, eval_validator};
pub use values::{ValuesReport, ValuesRequest, eval_values};

use std::path::Path;

use schemascope_docs::RetrievalConfig;
use schemascope_docs::eval::{
    EvalOptions, EvalReport, Setting, evaluate, spider_databases, spider_questions,
};
use schemascope_sources::sql::create::create_schema_only;
use schemascope_sources::sql::{Database, SqliteDatabase};

use crate::result::ToolError;

/// Told how a long evaluation stands: a stage ("building schema-only databases"), the items
/// done and the items in all.
#[derive(Clone, Copy)]
pub struct EvalProgress<'a>(pub &'a (dyn Fn(&str, usize, usize) + Sync));

impl EvalProgress<'_> {
    /// Reports that `done` of `total` items of `stage` are done.
    pub fn report(&self, stage: &str, done: usize, total: usize) {
        (self.0)(stage, done, total);
    }
}

impl std::fmt::Debug for EvalProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EvalProgress")
    }
}

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
    /// Ask each question with its evidence appended (BIRD's external knowledge, which its
    /// models are given with the question).
    pub with_evidence: bool,
    /// Only the questions of this half (all when `None`).
    pub split: Option<schemascope_docs::eval::Split>,
    /// The embedding model, to rank by meaning as well as by words.
    pub encoder: Option<std::sync::Arc<dyn schemascope_docs::Encoder>>,
    /// Where progress is reported.
    pub progress: EvalProgress<'a>,
}

pub(crate) fn read(path: &Path) -> Result<String, ToolError> {
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
    let mut questions =
        spider_questions(&read(request.questions)?).map_err(|e| bad(request.questions, &e))?;
    if let Some(split) = request.split {
        questions.retain(|q| schemascope_docs::eval::Split::of(&q.question) == split);
    }
    if request.with_evidence {
        for q in &mut questions {
            if let Some(evidence) = q.evidence.as_deref().filter(|e| !e.is_empty()) {
                q.question = format!("{} {evidence}", q.question);
            }
        }
    }
    if !(1..=schemascope_docs::MAX_TOP_K).contains(&request.k) {
        return Err(ToolError::InvalidParams(format!(
            "--k must be between 1 and {} (the most chunks one retrieval returns)",
            schemascope_docs::MAX_TOP_K
        )));
    }
    let dir = tempfile::tempdir().map_err(|e| {
        ToolError::InvalidParams(format!("cannot create a temporary directory: {e}"))
    })?;
    let total = databases.len();
    for (i, db) in databases.iter_mut().enumerate() {
        request.progress.report("building schema-only databases", i, total);
        // Through a real database and the SQLite source's catalog reader, as a user's would go.
        let path = dir.path().join(format!("{i}.sqlite"));
        create_schema_only(&path, &db.catalog)?;
        db.catalog = SqliteDatabase::open(&path)?.catalog()?;
    }
    request.progress.report("retrieving for every question", 0, questions.len());
    let setting = if request.pooled { Setting::Pooled } else { Setting::PerDatabase };
    Ok(evaluate(
        &databases,
        &questions,
        setting,
        &EvalOptions {
            k: request.k,
            config: request.config.clone(),
            encoder: request.encoder.clone(),
        },
    ))
}
