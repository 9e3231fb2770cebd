//! `schemascope eval …`: the accuracy figures of the question-to-query pipeline, one command
//! each, on Spider-format data (Spider, BIRD) shipped in `testdata/`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Subcommand;
use schemascope_tools as tools;

use crate::retrieval::RetrievalArgs;

/// The evaluations.
#[derive(Subcommand)]
pub(crate) enum EvalCommand {
    /// The validator on gold SQL (every rejection is false) and on models' predictions, against
    /// SQLite's own verdict on schema-only databases built from the tables file: the share of
    /// predictions SQLite cannot compile that are flagged, false rejections, dialect fixes for
    /// unknown functions, and identifier errors whose suggestion points to the gold SQL's fix.
    Validator {
        /// Spider-format `tables.json` (Spider's, or BIRD's `dev_tables.json`).
        #[arg(long)]
        tables: PathBuf,
        /// Questions with gold SQL (Spider's `dev.json`, BIRD's `mini_dev_sqlite.json`).
        #[arg(long)]
        questions: PathBuf,
        /// A predictions file, in question order: BIRD's JSON object, a JSON array of SQL
        /// strings, or one query per line (`SQL<TAB>db_id` or plain SQL). Repeatable.
        #[arg(long = "predictions")]
        predictions: Vec<PathBuf>,
        /// Print the report as JSON (with every missed, falsely rejected and mis-suggested item).
        #[arg(long)]
        json: bool,
    },
    /// Value recall: the share of questions whose stored values (named loosely: "bossa nova",
    /// "Sao Jose dos Campos") appear in the schema context the question gets, with and without
    /// the value index; and the share whose tables all appear.
    Values {
        /// A SQLite database, or a `.sql` script that builds one (run as `sqlite3` would run
        /// it, into a temporary file: give only scripts you trust).
        #[arg(long)]
        database: PathBuf,
        /// Questions: `{"questions": [{"question", "sql", "tables", "values": [{"table",
        /// "column", "value"}]}]}` (see testdata/eval/).
        #[arg(long)]
        questions: PathBuf,
        /// The context's token budget (the ask pipeline's).
        #[arg(long, default_value_t = 6_000)]
        max_tokens: usize,
        /// Only one half of the questions: `tune` or `heldout`, split by a hash of each
        /// question's text.
        #[arg(long, value_name = "HALF", value_parser = parse_split)]
        split: Option<schemascope_docs::eval::Split>,
        /// Find the values questions name by meaning too, with the sentence-embedding model in
        /// DIR (see `docs --help`).
        #[arg(long, value_name = "DIR", env = "SCHEMASCOPE_EMBEDDING_MODEL")]
        embedding_model: Option<PathBuf>,
        /// Print the report as JSON (with every miss).
        #[arg(long)]
        json: bool,
    },
    /// Table retrieval quality on Spider-format data: Recall@K, Precision@K, MRR and context
    /// reduction versus the full schema.
    Retrieval {
        /// Spider `tables.json`.
        #[arg(long)]
        tables: PathBuf,
        /// Questions in Spider's `dev.json` format.
        #[arg(long)]
        questions: PathBuf,
        /// Pool every database's tables into one schema (else each database alone).
        #[arg(long)]
        pooled: bool,
        /// K of the @K metrics (and the retrieval top-K).
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Append each question's evidence (BIRD's external knowledge) to it.
        #[arg(long)]
        with_evidence: bool,
        /// Only one half of the questions: `tune` (what retrieval may be tuned on) or `heldout`
        /// (never tuned on), split by a hash of each question's text.
        #[arg(long, value_name = "HALF", value_parser = parse_split)]
        split: Option<schemascope_docs::eval::Split>,
        #[command(flatten)]
        retrieval: RetrievalArgs,
        /// Print the metrics as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one evaluation.
pub(crate) fn run(command: EvalCommand) -> Result<ExitCode> {
    match command {
        EvalCommand::Validator { tables, questions, predictions, json } => {
            eval_validator(&tables, &questions, &predictions, json)
        }
        EvalCommand::Values { database, questions, max_tokens, split, embedding_model, json } => {
            let model = embedding_model
                .as_deref()
                .map(tools::embedding_model::EmbeddingModel::load)
                .transpose()?;
            eval_values(&database, &questions, (max_tokens, split), model, json)
        }
        EvalCommand::Retrieval {
            tables,
            questions,
            pooled,
            k,
            with_evidence,
            split,
            retrieval,
            json,
        } => {
            eval_retrieval(&tables, &questions, pooled, k, (with_evidence, split), &retrieval, json)
        }
    }
}

/// `part / whole` as a percentage, 0 for an empty whole.
fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 }
}

fn eval_validator(
    tables: &Path,
    questions: &Path,
    predictions: &[PathBuf],
    json: bool,
) -> Result<ExitCode> {
    let stages = crate::progress::Stages::new();
    let progress = |stage: &str, done: usize, total: usize| stages.report(stage, done, total);
    let request = tools::eval::ValidatorRequest {
        tables,
        questions,
        predictions,
        progress: tools::eval::EvalProgress(&progress),
    };
    let report = tools::eval::eval_validator(&request)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let gold = &report.gold;
    println!(
        "gold SQL: {} queries, {} accepted, {} rejected (false rejections), {} warnings",
        gold.total, gold.accepted, gold.rejected, gold.warnings
    );
    for item in &gold.rejected_items {
        let errors: Vec<&str> = item.errors.iter().map(|e| e.message.as_str()).collect();
        println!("- [{}] {}\n  {}\n  {}", item.db_id, item.question, item.sql, errors.join("; "));
    }
    let rows = report
        .predictions
        .iter()
        .map(|p| (p.file.rsplit('/').next().unwrap_or(&p.file).to_string(), &p.counts))
        .chain(
            (report.predictions.len() > 1).then(|| ("all".to_string(), &report.all_predictions)),
        );
    for (name, c) in rows {
        println!(
            "{name}: {} predictions; SQLite rejects {}: flagged {} ({:.1}%), by the local checks alone {} ({:.1}%); false rejections {} of {} (refused by policy: {})\n  unknown functions {}: with a dialect fix {} ({:.1}%); identifier errors {}: suggestion points to the gold fix {} ({:.1}%; on the questions held out from tuning {} of {}, {:.1}%)",
            c.total,
            c.engine_rejected,
            c.flagged,
            percent(c.flagged, c.engine_rejected),
            c.flagged_locally,
            percent(c.flagged_locally, c.engine_rejected),
            c.false_rejections,
            c.total - c.engine_rejected,
            c.refused_by_policy,
            c.unknown_functions,
            c.unknown_functions_with_fix,
            percent(c.unknown_functions_with_fix, c.unknown_functions),
            c.identifier_errors,
            c.identifier_fixes_in_gold,
            percent(c.identifier_fixes_in_gold, c.identifier_errors),
            c.heldout_identifier_fixes_in_gold,
            c.heldout_identifier_errors,
            percent(c.heldout_identifier_fixes_in_gold, c.heldout_identifier_errors),
        );
    }
    let false_rejections = gold.rejected + report.all_predictions.false_rejections;
    Ok(if false_rejections == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `--split`'s value.
fn parse_split(text: &str) -> Result<schemascope_docs::eval::Split, String> {
    match text {
        "tune" => Ok(schemascope_docs::eval::Split::Tune),
        "heldout" => Ok(schemascope_docs::eval::Split::Heldout),
        other => Err(format!("`{other}` is not a half: tune or heldout")),
    }
}

fn eval_retrieval(
    tables: &Path,
    questions: &Path,
    pooled: bool,
    k: usize,
    (with_evidence, split): (bool, Option<schemascope_docs::eval::Split>),
    retrieval: &RetrievalArgs,
    json: bool,
) -> Result<ExitCode> {
    let config = retrieval.config()?;
    let stages = crate::progress::Stages::new();
    let progress = |stage: &str, done: usize, total: usize| stages.report(stage, done, total);
    let request = tools::eval::EvalRequest {
        tables,
        questions,
        pooled,
        k,
        config,
        with_evidence,
        split,
        encoder: retrieval.model()?.map(|model| model as Arc<dyn schemascope_docs::Encoder>),
        progress: tools::eval::EvalProgress(&progress),
    };
    let report = tools::eval::eval_retrieval(&request)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{:?}, K = {}{}: {} questions over {} schema(s) of {:.1} tables on average\n  Recall@{k} {:.3}  Precision@{k} {:.3}  MRR {:.3}  all gold in top {k} {:.3}\n  context recall {:.3}  context tokens {:.0} of {:.0} (reduction {:.1}%)\n  strategies: {:?}",
            report.setting,
            report.k,
            if report.semantic { ", ranked by words and meaning" } else { ", ranked by words" },
            report.questions,
            report.databases,
            report.avg_tables,
            report.recall_at_k,
            report.precision_at_k,
            report.mrr,
            report.all_gold_at_k,
            report.context_recall,
            report.avg_context_tokens,
            report.avg_full_tokens,
            report.reduction * 100.0,
            report.strategies
        );
        if report.gold_parse_failures > 0 {
            println!("  {} gold queries could not be parsed (skipped)", report.gold_parse_failures);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn eval_values(
    database: &Path,
    questions: &Path,
    (max_tokens, split): (usize, Option<schemascope_docs::eval::Split>),
    encoder: Option<Arc<tools::embedding_model::EmbeddingModel>>,
    json: bool,
) -> Result<ExitCode> {
    let stages = crate::progress::Stages::new();
    let progress = |stage: &str, done: usize, total: usize| stages.report(stage, done, total);
    let request = tools::eval::ValuesRequest {
        database,
        questions,
        max_tokens,
        split,
        encoder,
        progress: tools::eval::EvalProgress(&progress),
    };
    let report = tools::eval::eval_values(&request)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} questions, {} naming stored values\n  value recall {:.3} ({} of {}); without the value index {:.3}; values listed {}, named by the questions {}\n  table recall {:.3}; context tokens {:.0} of {} for the full schema; {:.1} ms per context (median)",
        report.questions,
        report.with_values,
        report.value_recall,
        report.values_found,
        report.with_values,
        report.value_recall_without_index,
        report.values_shown,
        report.values_shown_gold,
        report.table_recall,
        report.avg_context_tokens,
        report.full_schema_tokens,
        report.median_context_ms
    );
    for miss in &report.misses {
        let values: Vec<String> = miss
            .missing_values
            .iter()
            .map(|v| format!("{}.{} '{}'", v.table, v.column, v.value))
            .collect();
        println!(
            "- {}\n  missing: {}{}",
            miss.question,
            values.join(", "),
            if miss.missing_tables.is_empty() {
                String::new()
            } else {
                format!(" tables {}", miss.missing_tables.join(", "))
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
