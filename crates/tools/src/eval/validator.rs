//! `eval validator`: the validator on gold SQL (every rejection is a false one) and on models'
//! predictions, compared with the engine's own verdict — SQLite compiling each statement
//! against the schema-only database. It measures what the validator promises: to flag before
//! execution what the engine would refuse (and nothing it would accept), to name a dialect fix
//! for borrowed functions, and to point an identifier error at the column the gold SQL uses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use schemascope_core::Catalog;
use schemascope_docs::eval::{SpiderQuestion, Split, spider_databases, spider_questions};
use schemascope_query::{
    IssueKind, NoValues, Query, QueryIssue, SqlDialect, TableColumn, referenced_columns,
};
use schemascope_sources::sql::create::{create_schema_only, sqlite_compiles};
use schemascope_sources::sql::{Database, SqliteDatabase};
use serde::Serialize;

use super::read;
use crate::result::ToolError;
use crate::validation::{confirm_with_engine, validate_locally, validate_on_database};

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct ValidatorRequest<'a> {
    /// Spider-format `tables.json` (Spider's, BIRD's `dev_tables.json`).
    pub tables: &'a Path,
    /// Questions with gold SQL (Spider's `query`, BIRD's `SQL`).
    pub questions: &'a Path,
    /// Prediction files, one predicted SQL per question in question order: BIRD's JSON object
    /// (`{"0": "SQL\t----- bird -----\tdb_id"}`), a JSON array of strings, or text with one
    /// query per line (Spider's `SQL\tdb_id` or plain SQL).
    pub predictions: &'a [PathBuf],
    /// Where progress is reported.
    pub progress: super::EvalProgress<'a>,
}

/// One query in a report, with what the engine and the validator made of it.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// Its position in the questions file.
    pub index: usize,
    /// The database.
    pub db_id: String,
    /// The question.
    pub question: String,
    /// The SQL checked.
    pub sql: String,
    /// SQLite's error compiling it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_error: Option<String>,
    /// The validator's errors.
    pub errors: Vec<QueryIssue>,
    /// The columns the gold SQL uses, for an identifier miss: where its fix was to point.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gold_columns: Vec<TableColumn>,
}

/// The validator on the gold SQL.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GoldReport {
    /// Gold queries checked.
    pub total: usize,
    /// Accepted (valid, warnings allowed).
    pub accepted: usize,
    /// Rejected: each is a false rejection.
    pub rejected: usize,
    /// Warnings given across all queries.
    pub warnings: usize,
    /// The rejected items.
    pub rejected_items: Vec<Item>,
}

/// Counts over predictions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PredictionCounts {
    /// Predictions checked.
    pub total: usize,
    /// Predictions SQLite cannot compile against the schema.
    pub engine_rejected: usize,
    /// Of those, flagged invalid by the validator (the engine's compiler included).
    pub flagged: usize,
    /// Of those, flagged by the local checks alone (catalog, allow-list, rules).
    pub flagged_locally: usize,
    /// Predictions SQLite compiles that the validator calls invalid: false rejections.
    pub false_rejections: usize,
    /// Predictions SQLite compiles that the validator refuses by policy, not by mistake: they
    /// write, hold several statements or call what may not run.
    pub refused_by_policy: usize,
    /// Unknown-function errors given.
    pub unknown_functions: usize,
    /// Of those, with the engine's spelling of the same computation as suggestion.
    pub unknown_functions_with_fix: usize,
    /// Unknown- and ambiguous-column errors given (local checks, which carry suggestions).
    pub identifier_errors: usize,
    /// Of those, whose suggestion names a column the gold SQL uses (and its table, when the
    /// suggestion names one).
    pub identifier_fixes_in_gold: usize,
    /// Identifier errors in predictions for the held-out half of the questions
    /// ([`Split::Heldout`]): the suggestions were never tuned on them.
    pub heldout_identifier_errors: usize,
    /// Of those, whose suggestion names a column the gold SQL uses.
    pub heldout_identifier_fixes_in_gold: usize,
}

impl PredictionCounts {
    fn add(&mut self, other: &Self) {
        self.total += other.total;
        self.engine_rejected += other.engine_rejected;
        self.flagged += other.flagged;
        self.flagged_locally += other.flagged_locally;
        self.false_rejections += other.false_rejections;
        self.refused_by_policy += other.refused_by_policy;
        self.unknown_functions += other.unknown_functions;
        self.unknown_functions_with_fix += other.unknown_functions_with_fix;
        self.identifier_errors += other.identifier_errors;
        self.identifier_fixes_in_gold += other.identifier_fixes_in_gold;
        self.heldout_identifier_errors += other.heldout_identifier_errors;
        self.heldout_identifier_fixes_in_gold += other.heldout_identifier_fixes_in_gold;
    }
}

/// The validator on one file of predictions.
#[derive(Debug, Clone, Serialize)]
pub struct PredictionReport {
    /// The file.
    pub file: String,
    /// The counts.
    #[serde(flatten)]
    pub counts: PredictionCounts,
    /// Predictions SQLite rejects that the validator accepted.
    pub missed: Vec<Item>,
    /// Predictions SQLite compiles that the validator rejected.
    pub false_rejected: Vec<Item>,
    /// Predictions with an identifier error whose suggestion does not point to the gold fix,
    /// with those errors only.
    pub identifier_misses: Vec<Item>,
}

/// What the validator made of gold SQL and predictions.
#[derive(Debug, Clone, Serialize)]
pub struct ValidatorReport {
    /// On the gold SQL.
    pub gold: GoldReport,
    /// Per predictions file.
    pub predictions: Vec<PredictionReport>,
    /// Summed over every predictions file.
    pub all_predictions: PredictionCounts,
}

/// One database of the evaluation: schema-only file, source connection, catalog.
struct Schema {
    path: PathBuf,
    database: SqliteDatabase,
    catalog: Catalog,
}

/// Runs the evaluation.
pub fn eval_validator(request: &ValidatorRequest<'_>) -> Result<ValidatorReport, ToolError> {
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        ToolError::InvalidParams(format!("{}: {e}", path.display()))
    };
    let databases =
        spider_databases(&read(request.tables)?).map_err(|e| bad(request.tables, &e))?;
    let questions =
        spider_questions(&read(request.questions)?).map_err(|e| bad(request.questions, &e))?;
    if questions.is_empty() {
        return Err(bad(request.questions, &"no questions to evaluate"));
    }
    let dir = tempfile::tempdir().map_err(|e| {
        ToolError::InvalidParams(format!("cannot create a temporary directory: {e}"))
    })?;
    let mut schemas = HashMap::new();
    for (i, db) in databases.iter().enumerate() {
        request.progress.report("building schema-only databases", i, databases.len());
        let path = dir.path().join(format!("{i}.sqlite"));
        create_schema_only(&path, &db.catalog)?;
        let database = SqliteDatabase::open(&path)?;
        let mut catalog = database.catalog()?;
        // The dataset's words for its columns are their docs, as comments are.
        for table in &mut catalog.tables {
            for column in &mut table.columns {
                if let Some(words) = db.descriptions.get(&table.name, &column.name) {
                    column.comment.get_or_insert_with(|| words.to_string());
                }
            }
        }
        schemas.insert(db.db_id.clone(), Schema { path, database, catalog });
    }
    let schema_of = |q: &SpiderQuestion| {
        schemas.get(&q.db_id).ok_or_else(|| {
            ToolError::InvalidParams(format!("question for unknown database `{}`", q.db_id))
        })
    };
    let mut gold = GoldReport::default();
    for (index, q) in questions.iter().enumerate() {
        request.progress.report("validating the gold queries", index, questions.len());
        let schema = schema_of(q)?;
        let report = validate(schema, q, &q.query)?;
        gold.total += 1;
        gold.warnings += report.warnings.len();
        if report.valid {
            gold.accepted += 1;
        } else {
            gold.rejected += 1;
            gold.rejected_items.push(item(index, q, &q.query, None, report.errors));
        }
    }
    let mut predictions = Vec::new();
    let mut all = PredictionCounts::default();
    for path in request.predictions {
        let predicted = read_predictions(&read(path)?).map_err(|e| bad(path, &e))?;
        if predicted.len() != questions.len() {
            return Err(bad(
                path,
                &format!(
                    "{} predictions for {} questions; predictions follow the questions' order",
                    predicted.len(),
                    questions.len()
                ),
            ));
        }
        let mut report = PredictionReport {
            file: path.display().to_string(),
            counts: PredictionCounts::default(),
            missed: Vec::new(),
            false_rejected: Vec::new(),
            identifier_misses: Vec::new(),
        };
        for (index, (q, (sql, db_id))) in questions.iter().zip(&predicted).enumerate() {
            request.progress.report("validating the predictions", index, questions.len());
            if db_id.as_deref().is_some_and(|d| d != q.db_id) {
                return Err(bad(
                    path,
                    &format!(
                        "prediction {index} is for `{}`, question {index} for `{}`",
                        db_id.as_deref().unwrap_or_default(),
                        q.db_id
                    ),
                ));
            }
            let schema = schema_of(q)?;
            judge(schema, index, q, sql, &mut report)?;
        }
        all.add(&report.counts);
        predictions.push(report);
    }
    Ok(ValidatorReport { gold, predictions, all_predictions: all })
}

/// What the validator says of `sql`, given the question it answers.
fn validate(
    schema: &Schema,
    q: &SpiderQuestion,
    sql: &str,
) -> Result<schemascope_query::ValidationReport, ToolError> {
    validate_on_database(
        &schema.database,
        &schema.catalog,
        &NoValues,
        &Query::Sql(sql.to_string()),
        Some(&question_text(q)),
    )
}

/// The question as its model saw it: BIRD's evidence is part of the prompt.
fn question_text(q: &SpiderQuestion) -> String {
    match &q.evidence {
        Some(evidence) if !evidence.is_empty() => format!("{} {evidence}", q.question),
        _ => q.question.clone(),
    }
}

fn item(
    index: usize,
    q: &SpiderQuestion,
    sql: &str,
    engine_error: Option<String>,
    errors: Vec<QueryIssue>,
) -> Item {
    Item {
        index,
        db_id: q.db_id.clone(),
        question: q.question.clone(),
        sql: sql.to_string(),
        engine_error,
        errors,
        gold_columns: Vec::new(),
    }
}

/// Counts one prediction into `report`.
fn judge(
    schema: &Schema,
    index: usize,
    q: &SpiderQuestion,
    sql: &str,
    report: &mut PredictionReport,
) -> Result<(), ToolError> {
    let counts = &mut report.counts;
    counts.total += 1;
    let engine = sqlite_compiles(&schema.path, sql).err();
    let query = Query::Sql(sql.to_string());
    let local = validate_locally(
        &schema.database,
        &schema.catalog,
        &NoValues,
        &query,
        Some(&question_text(q)),
    )?;
    let verdict = confirm_with_engine(&schema.database, &query, local.clone())?;
    for error in verdict.errors.iter().filter(|e| e.kind == IssueKind::UnknownFunction) {
        counts.unknown_functions += 1;
        counts.unknown_functions_with_fix += usize::from(error.suggestion.is_some());
    }
    match (&engine, verdict.valid) {
        (Some(_), valid) => {
            counts.engine_rejected += 1;
            counts.flagged += usize::from(!valid);
            counts.flagged_locally += usize::from(!local.valid);
            if valid {
                report.missed.push(item(index, q, sql, engine.clone(), Vec::new()));
            }
        }
        (None, false)
            if verdict.errors.iter().all(|e| {
                matches!(
                    e.kind,
                    IssueKind::NotReadOnly
                        | IssueKind::MultipleStatements
                        | IssueKind::ForbiddenFunction
                )
            }) =>
        {
            counts.refused_by_policy += 1;
        }
        (None, false) => {
            counts.false_rejections += 1;
            report.false_rejected.push(item(index, q, sql, None, verdict.errors.clone()));
        }
        (None, true) => {}
    }
    // Each wrong name once, wherever it is repeated.
    let mut seen = std::collections::HashSet::new();
    let identifier_errors: Vec<&QueryIssue> = local
        .errors
        .iter()
        .filter(|e| matches!(e.kind, IssueKind::UnknownColumn | IssueKind::AmbiguousColumn))
        .filter(|e| seen.insert((e.kind, e.message.as_str())))
        .collect();
    if identifier_errors.is_empty() {
        return Ok(());
    }
    let gold =
        referenced_columns(&q.query, &schema.catalog, SqlDialect::Sqlite).unwrap_or_default();
    let heldout = Split::of(&q.question) == Split::Heldout;
    let mut missed = Vec::new();
    for error in identifier_errors {
        counts.identifier_errors += 1;
        counts.heldout_identifier_errors += usize::from(heldout);
        if points_to(error, &gold, &schema.catalog) {
            counts.identifier_fixes_in_gold += 1;
            counts.heldout_identifier_fixes_in_gold += usize::from(heldout);
        } else {
            missed.push(error.clone());
        }
    }
    if !missed.is_empty() {
        let mut miss = item(index, q, sql, engine, missed);
        miss.gold_columns = gold;
        report.identifier_misses.push(miss);
    }
    Ok(())
}

/// Whether `issue`'s suggestion names a column `gold` uses: the table column it names, or —
/// for a suggestion that is only text — its last name, with the table when the qualifier is
/// a catalog table.
fn points_to(issue: &QueryIssue, gold: &[TableColumn], catalog: &Catalog) -> bool {
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if let Some(fix) = &issue.fix_column {
        return gold.iter().any(|g| same(&g.table, &fix.table) && same(&g.column, &fix.column));
    }
    let Some(text) = &issue.suggestion else { return false };
    let parts: Vec<&str> = text.split('.').map(|p| p.trim_matches(['"', '`'])).collect();
    let Some((column, qualifier)) = parts.split_last() else { return false };
    let table = qualifier.last().filter(|t| catalog.table(t).is_some());
    gold.iter().any(|g| same(&g.column, column) && table.is_none_or(|t| same(&g.table, t)))
}

/// Reads a predictions file: each prediction's SQL, with its database when the file names it.
fn read_predictions(text: &str) -> Result<Vec<(String, Option<String>)>, String> {
    const BIRD_SEPARATOR: &str = "\t----- bird -----\t";
    let split = |entry: &str| match entry.rsplit_once(BIRD_SEPARATOR) {
        Some((sql, db)) => (sql.to_string(), Some(db.trim().to_string())),
        None => (entry.to_string(), None),
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => {
            let mut entries = Vec::with_capacity(map.len());
            for (key, value) in map {
                let index: usize =
                    key.parse().map_err(|_| format!("key `{key}` is not a question index"))?;
                let sql =
                    value.as_str().ok_or_else(|| format!("prediction {key} is not a string"))?;
                entries.push((index, split(sql)));
            }
            entries.sort_by_key(|(i, _)| *i);
            if entries.iter().enumerate().any(|(i, (key, _))| i != *key) {
                return Err("the keys are not the question indexes 0, 1, 2, …".into());
            }
            Ok(entries.into_iter().map(|(_, e)| e).collect())
        }
        Ok(serde_json::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(split).ok_or_else(|| format!("prediction {i} is not a string"))
            })
            .collect(),
        Ok(_) => Err("expected a JSON object or array of predictions".into()),
        // Text that starts as JSON is JSON gone wrong, not SQL lines.
        Err(e) if text.trim_start().starts_with(['{', '[']) => Err(format!(
            "not valid JSON ({e}); predictions are a JSON object, a JSON array or one SQL per line"
        )),
        Err(_) => Ok(text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| match line.rsplit_once('\t') {
                Some((sql, db)) => (sql.to_string(), Some(db.trim().to_string())),
                None => (line.to_string(), None),
            })
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_are_read_in_every_format() {
        let bird =
            r#"{"1": "SELECT 2\t----- bird -----\tb", "0": "SELECT 1\t----- bird -----\ta"}"#;
        assert_eq!(
            read_predictions(bird).unwrap(),
            vec![("SELECT 1".into(), Some("a".into())), ("SELECT 2".into(), Some("b".into()))]
        );
        assert_eq!(read_predictions(r#"["SELECT 1"]"#).unwrap(), vec![("SELECT 1".into(), None)]);
        // JSON cut short is an error, not one line of SQL.
        assert!(read_predictions("{\"0\": \"SELECT").unwrap_err().contains("not valid JSON"));
        assert!(read_predictions("[").is_err());
        assert_eq!(
            read_predictions("SELECT 1\tdb\n\nSELECT 2\n").unwrap(),
            vec![("SELECT 1".into(), Some("db".into())), ("SELECT 2".into(), None)]
        );
        assert!(read_predictions(r#"{"0": "a", "2": "b"}"#).is_err());
        assert!(read_predictions(r#"{"x": "a"}"#).is_err());
    }
}
