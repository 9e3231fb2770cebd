//! `eval values`: whether the schema context a question gets names the stored values it refers
//! to loosely ("bossa nova" → `Genre.Name has 'Bossa Nova'`), and the tables it needs.
//!
//! **Value recall** is the share of questions with values whose every stored value appears in
//! the context under its own column: listed for that column in the values section, or quoted
//! on the column's line among the schema's example values. The same share without the values
//! section shows what the example values alone give; of the pairs values sections list, the
//! share the gold values name shows what else is shown. Table recall is the share of questions
//! whose every gold table is in the context.

use std::path::Path;

use schemascope_docs::context::qualified_name;
use schemascope_sources::sql::create::create_from_script;
use schemascope_sources::{NoProgress, SourceSpec};
use serde::{Deserialize, Serialize};

use super::read;
use crate::result::ToolError;
use crate::schema_docs::context_for;
use crate::services::Services;

/// The heading of the context's section of values (see `schemascope_docs`).
const VALUES_SECTION: &str = "## Values the question names";

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct ValuesRequest<'a> {
    /// A SQLite database, or a `.sql` script that builds one (run into a temporary file).
    pub database: &'a Path,
    /// The questions: `{"questions": [{question, sql, tables, values}]}`.
    pub questions: &'a Path,
    /// The context's token budget (the pipeline's is 6,000).
    pub max_tokens: usize,
    /// Only one half of the questions (by a hash of each question's text).
    pub split: Option<schemascope_docs::eval::Split>,
    /// The embedding model, to find values named by meaning too.
    pub encoder: Option<std::sync::Arc<crate::embedding_model::EmbeddingModel>>,
    /// Where progress is reported.
    pub progress: super::EvalProgress<'a>,
}

/// A question file: `{"description", "questions": [{question, sql, tables, values}]}` (the
/// description and the SQL are for people).
#[derive(Debug, Clone, Deserialize)]
struct QuestionSet {
    questions: Vec<ValueQuestion>,
}

/// One question with its gold tables and stored values.
#[derive(Debug, Clone, Deserialize)]
struct ValueQuestion {
    question: String,
    tables: Vec<String>,
    #[serde(default)]
    values: Vec<StoredValue>,
}

/// A value as stored.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct StoredValue {
    /// The table.
    pub table: String,
    /// The column.
    pub column: String,
    /// The value exactly as stored.
    pub value: String,
}

/// A question whose context missed something.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// The question.
    pub question: String,
    /// Stored values the context does not name.
    pub missing_values: Vec<StoredValue>,
    /// Gold tables the context does not show.
    pub missing_tables: Vec<String>,
    /// The values section the context had.
    pub values_section: String,
}

/// The figures.
#[derive(Debug, Clone, Serialize)]
pub struct ValuesReport {
    /// Questions evaluated.
    pub questions: usize,
    /// Questions that refer to stored values.
    pub with_values: usize,
    /// Of those, questions whose every value is in the context.
    pub values_found: usize,
    /// `values_found / with_values`.
    pub value_recall: f64,
    /// The same without the context's values section (the schema's example values only).
    pub value_recall_without_index: f64,
    /// Share of questions whose every gold table is in the context.
    pub table_recall: f64,
    /// `(column, value)` pairs the values sections listed, over all questions.
    pub values_shown: usize,
    /// Of those, pairs a question's gold values name.
    pub values_shown_gold: usize,
    /// Mean tokens of the contexts.
    pub avg_context_tokens: f64,
    /// Tokens of the full schema.
    pub full_schema_tokens: usize,
    /// Median time to build one question's context, in milliseconds (the index built and, with a
    /// model, the docs and values encoded before the first question).
    pub median_context_ms: f64,
    /// The questions that missed a value or a table.
    pub misses: Vec<Miss>,
}

/// `'value'` as the context quotes it.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// Runs the evaluation.
pub fn eval_values(request: &ValuesRequest<'_>) -> Result<ValuesReport, ToolError> {
    let bad = |path: &Path, e: &dyn std::fmt::Display| {
        ToolError::InvalidParams(format!("{}: {e}", path.display()))
    };
    let mut set: QuestionSet =
        serde_json::from_str(&read(request.questions)?).map_err(|e| bad(request.questions, &e))?;
    if let Some(split) = request.split {
        set.questions.retain(|q| schemascope_docs::eval::Split::of(&q.question) == split);
    }
    if set.questions.is_empty() {
        return Err(bad(request.questions, &"no questions to evaluate"));
    }
    let dir = tempfile::tempdir().map_err(|e| {
        ToolError::InvalidParams(format!("cannot create a temporary directory: {e}"))
    })?;
    let database = if request.database.extension().is_some_and(|e| e == "sql") {
        let path = dir.path().join("database.sqlite");
        // Named as given: the temporary file means nothing to the caller.
        create_from_script(&path, &read(request.database)?).map_err(|e| {
            bad(request.database, &e.to_string().replace(&format!("{}: ", path.display()), ""))
        })?;
        path
    } else {
        request.database.to_path_buf()
    };
    let spec: SourceSpec =
        format!("eval={}", database.display()).parse().map_err(|e| bad(request.database, &e))?;
    let services = Services::new();
    services.docs.set_encoder(request.encoder.clone());
    services.sources.load(&[spec], &NoProgress)?;
    let source = services.sources.get(Some("eval"))?;
    // Questions written for another database would only count as misses.
    let catalog = crate::schema_docs::catalog(&source)?;
    for q in &set.questions {
        let unknown = q
            .tables
            .iter()
            .chain(q.values.iter().map(|v| &v.table))
            .find(|t| catalog.table(t).is_none());
        if let Some(table) = unknown {
            return Err(bad(
                request.questions,
                &format!(
                    "\"{}\" names table {table}, which {} does not have",
                    q.question,
                    request.database.display()
                ),
            ));
        }
    }
    let mut report = ValuesReport {
        questions: 0,
        with_values: 0,
        values_found: 0,
        value_recall: 0.0,
        value_recall_without_index: 0.0,
        table_recall: 0.0,
        values_shown: 0,
        values_shown_gold: 0,
        avg_context_tokens: 0.0,
        full_schema_tokens: 0,
        median_context_ms: 0.0,
        misses: Vec::new(),
    };
    // Built (and encoded) once before the questions are timed.
    context_for(&services.docs, &source, "tables", Some(request.max_tokens))?;
    let mut times: Vec<f64> = Vec::with_capacity(set.questions.len());
    let (mut found_without, mut tables_found, mut tokens) = (0usize, 0usize, 0usize);
    for (index, q) in set.questions.iter().enumerate() {
        request.progress.report("building each question's context", index, set.questions.len());
        let started = std::time::Instant::now();
        let (context, _) =
            context_for(&services.docs, &source, &q.question, Some(request.max_tokens))?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        report.questions += 1;
        report.full_schema_tokens = context.full_schema_tokens;
        tokens += context.tokens;
        let text = &context.text;
        let (section, rest) = split_values_section(text);
        let listed = listed_values(section);
        report.values_shown += listed.len();
        let gold_pair = |column: &str, value: &str| {
            q.values.iter().any(|v| {
                value == v.value
                    && column.eq_ignore_ascii_case(&qualified_name(&v.table, &v.column))
            })
        };
        report.values_shown_gold += listed.iter().filter(|(c, v)| gold_pair(c, v)).count();
        let in_section = |v: &StoredValue| {
            let column = qualified_name(&v.table, &v.column);
            listed.iter().any(|(c, value)| *value == v.value && c.eq_ignore_ascii_case(&column))
        };
        let missing_values: Vec<StoredValue> = q
            .values
            .iter()
            .filter(|v| !in_section(v) && !in_column_notes(&rest, v))
            .cloned()
            .collect();
        if !q.values.is_empty() {
            report.with_values += 1;
            report.values_found += usize::from(missing_values.is_empty());
            found_without += usize::from(q.values.iter().all(|v| in_column_notes(&rest, v)));
        }
        let shown = &context.metadata.tables_included;
        let missing_tables: Vec<String> = q
            .tables
            .iter()
            .filter(|t| !shown.iter().any(|s| s.eq_ignore_ascii_case(t)))
            .cloned()
            .collect();
        tables_found += usize::from(missing_tables.is_empty());
        if !missing_values.is_empty() || !missing_tables.is_empty() {
            report.misses.push(Miss {
                question: q.question.clone(),
                missing_values,
                missing_tables,
                values_section: section.to_string(),
            });
        }
    }
    let share =
        |part: usize, whole: usize| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
    report.value_recall = share(report.values_found, report.with_values);
    report.value_recall_without_index = share(found_without, report.with_values);
    report.table_recall = share(tables_found, report.questions);
    report.avg_context_tokens = share(tokens, report.questions);
    times.sort_by(f64::total_cmp);
    report.median_context_ms = times.get(times.len() / 2).copied().unwrap_or(0.0);
    Ok(report)
}

/// The `(table.column, value)` pairs a values section lists (`- A.b, C.d have 'v'`).
fn listed_values(section: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in section.lines().filter_map(|l| l.strip_prefix("- ")) {
        // What follows the quoted value says how it was found.
        let line = match line.rfind("' (") {
            Some(end) if line.ends_with(')') => &line[..=end],
            _ => line,
        };
        let Some((columns, value)) =
            line.split_once(" has '").or_else(|| line.split_once(" have '"))
        else {
            continue;
        };
        let Some(value) = value.strip_suffix('\'') else { continue };
        let value = value.replace("''", "'");
        out.extend(columns.split(", ").map(|c| (c.to_string(), value.clone())));
    }
    out
}

/// Whether the context's line for `v`'s column (under its table's heading) quotes the value:
/// the schema's own example values.
fn in_column_notes(text: &str, v: &StoredValue) -> bool {
    let heading = format!("## {} (", v.table);
    let Some(start) = text.find(&heading) else { return false };
    let block = &text[start..];
    let block = block[3..].find("\n## ").map_or(block, |end| &block[..end + 3]);
    let prefix = format!("- {} ", v.column);
    block.lines().any(|l| l.starts_with(&prefix) && l.contains(&quoted(&v.value)))
}

/// The context's values section and the rest of its text.
fn split_values_section(text: &str) -> (&str, String) {
    let Some(start) = text.find(VALUES_SECTION) else { return ("", text.to_string()) };
    let end = text[start..].find("\n\n").map_or(text.len(), |i| start + i);
    (&text[start..end], format!("{}{}", &text[..start], &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(table: &str, column: &str, value: &str) -> StoredValue {
        StoredValue { table: table.into(), column: column.into(), value: value.into() }
    }

    #[test]
    fn a_value_counts_only_under_its_own_column() {
        let section = "## Values the question names\n- A.x, B.y have 'Rock'\n- C.z has 'It''s' (partial match)\n- D.w has 'USA' (by meaning: \"the States\")";
        assert_eq!(
            listed_values(section),
            [
                ("A.x".to_string(), "Rock".to_string()),
                ("B.y".to_string(), "Rock".to_string()),
                ("C.z".to_string(), "It's".to_string()),
                ("D.w".to_string(), "USA".to_string())
            ]
        );
        let text = "# Database schema\n\n## Genre (25 rows)\n- Name TEXT (e.g. 'Rock', 'Jazz')\n\n## Track (3 rows)\n- Title TEXT (e.g. 'Blues')\n";
        assert!(in_column_notes(text, &stored("Genre", "Name", "Jazz")));
        assert!(!in_column_notes(text, &stored("Track", "Title", "Jazz")));
        assert!(!in_column_notes(text, &stored("Genre", "Name", "Blues")));
        assert!(!in_column_notes(text, &stored("Nope", "Name", "Rock")));
    }
}
