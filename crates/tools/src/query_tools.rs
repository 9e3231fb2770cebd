//! validate_query and ask: local validation of SQL or structured queries against a SQL source's
//! catalog and stored values, and the controlled question-to-query pipeline over a source.

use std::sync::Arc;

use schemascope_agent::graph::{
    AskInput, Budgets, DataAccess, Event, ExecutionFailure, ExecutionOutcome, Graph, SchemaInfo,
    ValidationOutcome,
};
use schemascope_core::value_index::ValueIndex;
use schemascope_core::{Catalog, CollectionProfile};
use schemascope_query::{KnownValues, ProfileValues, Query, SqlDialect, ValidationReport};
use schemascope_sources::Source;
use schemascope_sources::sql::{Database, SqlValue};
use serde_json::{Value, json};

use crate::business_names::{with_business_names, with_declared_joins};
use crate::execute::{QueryCaps, prepare, run_sql};
use crate::params::{AskParams, ValidateQueryParams};
use crate::result::{ToolError, ToolResult, envelope};
use crate::schema_docs::{Docs, catalog, context_for, schema_index};
use crate::selector_query;
use crate::services::Services;
use crate::validation::validate_on_database;
use schemascope_docs::semantic::Semantic;

/// Characters of a sampled value shown in the pipeline's per-field statistics.
const SAMPLE_CHARS: usize = 60;

/// Tokens of schema context the pipeline gives the model.
const SCHEMA_TOKENS: usize = 6_000;

/// The dialect queries of `source` are validated for: its engine's (DataFusion's for files and
/// collections served to SQL), SQLite's for sources that run no SQL (structured queries
/// compile to SQLite).
pub(crate) fn dialect(source: &Source) -> SqlDialect {
    source
        .database
        .as_ref()
        .map(|db| db.dialect())
        .or_else(|| source.format.dialect())
        .unwrap_or(SqlDialect::Sqlite)
}

/// Tables up to this many rows are profiled for validation if they were not yet (cheap); larger
/// ones lend their values only once profiled for another reason.
const PROFILE_FOR_VALIDATION_ROWS: usize = 100_000;

/// Profiles the validator may check literals against.
fn profiles(source: &Source) -> Vec<(&str, &CollectionProfile)> {
    source
        .collections
        .iter()
        .filter_map(|c| {
            let profile = match c.profile_ready() {
                Some(profile) => profile,
                None if c.len() <= PROFILE_FOR_VALIDATION_ROWS => c.profile(),
                None => return None,
            };
            Some((c.name(), profile))
        })
        .collect()
}

/// What the validator knows of `source`'s values: the value index's complete lists and lookups
/// where it read the column, the profiles' otherwise.
struct SourceValues<'a> {
    profiles: ProfileValues<'a>,
    index: Option<Arc<ValueIndex>>,
    /// The database, to ask whether a value the lists lack is stored after all.
    database: &'a dyn Database,
    catalog: &'a Catalog,
    /// Questions asked of the database so far (see [`MAX_STORED_PROBES`]).
    probes: std::sync::atomic::AtomicUsize,
}

/// Time the database may take to say whether one value is stored.
const IS_STORED_TIMEOUT_MS: u64 = 2_000;
/// The most values one validation asks the database about: a query with 150,000 absent values
/// in an `IN` list took 3.5 minutes on PostgreSQL when each was asked. Past it, the value lists
/// decide alone, as they did before the database was asked.
const MAX_STORED_PROBES: usize = 64;

impl KnownValues for SourceValues<'_> {
    fn complete_values(&self, table: &str, column: &str) -> Option<Vec<String>> {
        // A column the index read is answered by it alone: when it says its values were not
        // all read, a profile's shorter list is no more complete.
        match &self.index {
            Some(index) if index.has_column(table, column) => index.complete_values(table, column),
            _ => self.profiles.complete_values(table, column),
        }
    }

    fn similar_values(&self, table: &str, column: &str, literal: &str) -> Option<Vec<String>> {
        let index = self.index.as_ref().filter(|index| index.has_column(table, column))?;
        Some(index.similar(table, column, literal, 3))
    }

    fn is_stored(&self, table: &str, column: &str, literal: &str) -> Option<bool> {
        if self.probes.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= MAX_STORED_PROBES {
            return None;
        }
        // The catalog's spelling, quoted: only names that exist reach the statement.
        let table = self.catalog.table(table)?;
        let column = table.columns.iter().find(|c| c.name.eq_ignore_ascii_case(column))?;
        let dialect = self.database.dialect();
        let sql = format!(
            "SELECT 1 FROM {} WHERE {} = {} LIMIT 1",
            dialect.quote_table(&table.name),
            dialect.quote(&column.name),
            dialect.param(1)
        );
        let rows = self
            .database
            .query_with_timeout(&sql, &[SqlValue::Text(literal.to_string())], IS_STORED_TIMEOUT_MS)
            .ok()?;
        Some(!rows.is_empty())
    }

    fn numeric_range(&self, table: &str, column: &str) -> Option<(f64, f64)> {
        self.profiles.numeric_range(table, column)
    }

    fn row_count(&self, table: &str) -> Option<u64> {
        self.profiles.row_count(table)
    }
}

/// Validates `query` against `source`: its catalog, its values, and what its engine allows a
/// statement to call (the same allow-list its database layer enforces).
fn check(
    docs: &Docs,
    source: &Source,
    catalog: &Catalog,
    query: &Value,
    question: Option<&str>,
) -> Result<ValidationReport, ToolError> {
    let query = Query::from_json(query.clone())
        .map_err(|e| ToolError::InvalidParams(format!("`query`: {e}")))?;
    let index = schema_index(docs, source).ok();
    let values = index.as_ref().and_then(|i| i.values().cloned());
    let semantic = index.as_ref().and_then(|i| i.semantic());
    // What the docs say a column is helps name the column a wrong name meant.
    let catalog = match &index {
        Some(index) => index.described(catalog),
        None => std::borrow::Cow::Borrowed(catalog),
    };
    check_with_semantic(source, &catalog, values, semantic, &query, question)
}

/// [`check_with_values`], then what the semantic file says of the names the schema lacks
/// (see [`with_business_names`]).
pub(crate) fn check_with_semantic(
    source: &Source,
    catalog: &Catalog,
    values: Option<Arc<ValueIndex>>,
    semantic: Option<&Semantic>,
    query: &Query,
    question: Option<&str>,
) -> Result<ValidationReport, ToolError> {
    // The joins the business declared count as the schema's own.
    let joined = semantic.map(|semantic| with_declared_joins(catalog, semantic));
    let catalog = joined.as_ref().unwrap_or(catalog);
    let report = check_with_values(source, catalog, values.clone(), query, question)?;
    // SQLite takes an unknown double-quoted name for a string, with a warning.
    let unknown_names = !report.valid
        || report.warnings.iter().any(|w| w.kind == schemascope_query::IssueKind::Portability);
    let (true, Query::Sql(sql), Some(semantic)) = (unknown_names, query, semantic) else {
        return Ok(report);
    };
    let revalidate = |rewritten: &str| {
        let query = Query::Sql(rewritten.to_string());
        check_with_values(source, catalog, values.clone(), &query, question)
    };
    with_business_names(report, sql, semantic, dialect(source), &revalidate)
}

/// [`check`] with the value index given (`None`: the profiles' values alone).
pub(crate) fn check_with_values(
    source: &Source,
    catalog: &Catalog,
    index: Option<Arc<ValueIndex>>,
    query: &Query,
    question: Option<&str>,
) -> Result<ValidationReport, ToolError> {
    let Some(database) = &source.database else {
        return Err(ToolError::InvalidParams(format!(
            "source `{}` is not a SQL database",
            source.name()
        )));
    };
    let values = SourceValues {
        profiles: ProfileValues::new(profiles(source)),
        index,
        database: &**database,
        catalog,
        probes: Default::default(),
    };
    validate_on_database(&**database, catalog, &values, query, question)
}

/// validate_query.
pub fn validate_query(docs: &Docs, params: ValidateQueryParams) -> ToolResult {
    envelope((|| {
        let source = docs.sources().get(params.source.as_deref())?;
        let report = if selector_query::is_selector(&source, &params.query) {
            selector_query::validate(&source, &params.query)?
        } else {
            check(docs, &source, &catalog(&source)?, &params.query, params.question.as_deref())?
        };
        let message = if report.valid {
            match report.warnings.len() {
                0 => "The query is valid.".to_string(),
                n => format!(
                    "The query is valid, with {n} warning(s): {}",
                    report.warnings[0].message
                ),
            }
        } else {
            format!(
                "The query is invalid: {} error(s); first: {}",
                report.errors.len(),
                report.errors[0].message
            )
        };
        Ok(ToolResult::ok(message, json!(report)))
    })())
}

/// The longest question `ask` takes, in bytes.
const MAX_QUESTION_BYTES: usize = 4_000;
/// The most history `ask` takes, in bytes of JSON.
const MAX_HISTORY_BYTES: usize = 64 * 1024;

/// The pipeline's access to one source of the services.
struct ServedData<'a> {
    services: &'a Services,
    source: Arc<Source>,
}

impl DataAccess for ServedData<'_> {
    fn schema(&self, _source: &str, question: &str) -> Result<SchemaInfo, String> {
        if self.source.database.is_none() {
            // Items: the schema summary, and selectors as the query language.
            let text = crate::describe::schema_markdown(
                &self.services.sources,
                self.source.name(),
                Some(SCHEMA_TOKENS),
            )
            .map_err(|e| e.to_string())?;
            let collections =
                self.source.collection_names().iter().map(|s| s.to_string()).collect();
            return Ok(SchemaInfo {
                text,
                dialect: "jmespath".into(),
                metadata_stats: json!({}),
                tables: collections,
                strategy: "full".into(),
                cached: true,
            });
        }
        let (context, cached) =
            context_for(&self.services.docs, &self.source, question, Some(SCHEMA_TOKENS))
                .map_err(|e| e.to_string())?;
        let tables = context.metadata.tables_included.clone();
        let mut stats = serde_json::Map::new();
        for table in &tables {
            let Some(profile) = self.source.collection(table).and_then(|c| c.profile_ready())
            else {
                continue;
            };
            for p in profile.properties() {
                // Shown as lists show counted values: an over-long one by its start and length,
                // never its key's hash.
                let samples = schemascope_core::display::shorten_value_list(
                    p.strings
                        .iter()
                        .flat_map(|s| s.top.iter().take(3))
                        .chain(p.numbers.iter().flat_map(|n| n.top.iter().take(3)))
                        .map(|v| &v.value),
                    SAMPLE_CHARS,
                );
                stats.insert(
                    format!("{table}.{}", p.path),
                    json!({"cardinality": p.distinct, "samples": samples}),
                );
            }
        }
        let strategy = json!(context.metadata.strategy);
        Ok(SchemaInfo {
            text: context.text,
            dialect: dialect(&self.source).rules().prompt_name().into(),
            metadata_stats: Value::Object(stats),
            tables,
            strategy: strategy
                .get("strategy")
                .and_then(Value::as_str)
                .unwrap_or("full")
                .to_string(),
            cached,
        })
    }

    fn validate(
        &self,
        _source: &str,
        question: &str,
        query: &Value,
    ) -> Result<ValidationOutcome, String> {
        let report = if selector_query::is_selector(&self.source, query) {
            selector_query::validate(&self.source, query).map_err(|e| e.to_string())?
        } else {
            let catalog = catalog(&self.source).map_err(|e| e.to_string())?;
            check(&self.services.docs, &self.source, &catalog, query, Some(question))
                .map_err(|e| e.to_string())?
        };
        let to_values = |issues: &[schemascope_query::QueryIssue]| {
            issues.iter().map(|i| json!(i)).collect::<Vec<_>>()
        };
        Ok(ValidationOutcome {
            valid: report.valid,
            errors: to_values(&report.errors),
            warnings: to_values(&report.warnings),
            rewritten_query: report.rewritten_query.map(Value::String),
        })
    }

    fn execute(&self, _source: &str, query: &Value) -> Result<ExecutionOutcome, ExecutionFailure> {
        let failure = |e: ToolError| ExecutionFailure {
            class: match &e {
                ToolError::Source(source) => {
                    json!(source.class()).as_str().unwrap_or("resource").to_string()
                }
                _ => "syntax".into(),
            },
            message: e.to_string(),
        };
        // The pipeline's own queries run with the defaults, within the operator's ceilings and
        // the source's limits.
        let caps = QueryCaps::defaults()
            .within(self.source.name(), &self.source.spec.limits, [false; 3])
            .unwrap_or_else(|_| QueryCaps::defaults());
        if selector_query::is_selector(&self.source, query) {
            let (columns, rows, truncated) =
                selector_query::execute(&self.source, query, caps.max_rows).map_err(failure)?;
            return Ok(ExecutionOutcome { columns, rows, truncated, warnings: Vec::new() });
        }
        let (sql, params) = prepare(&self.source, query).map_err(failure)?;
        let result = run_sql(&self.source, &sql, &params, caps).map_err(failure)?;
        Ok(ExecutionOutcome {
            columns: result.columns,
            rows: result.rows,
            truncated: result.truncated,
            warnings: result.warnings,
        })
    }
}

/// The model, asked only while the call is not cancelled: a cancelled `ask` (its time up, its
/// client gone) ends at the next step instead of waiting on the model again.
#[derive(Debug)]
struct StopAware {
    inner: Box<dyn schemascope_agent::llm::LlmBackend>,
    cancel: schemascope_core::cancel::Cancel,
}

impl schemascope_agent::llm::LlmBackend for StopAware {
    fn complete(
        &self,
        request: &schemascope_agent::llm::ChatRequest,
    ) -> Result<schemascope_agent::llm::ChatResponse, schemascope_agent::llm::LlmError> {
        self.cancel
            .check()
            .map_err(|cancelled| schemascope_agent::llm::LlmError::Cancelled(cancelled.reason))?;
        self.inner.complete(request)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// ask: a question answered by the controlled pipeline; `observe` sees every node's entry and
/// exit as it happens (progress for MCP, Server-Sent Events, the CLI's live display).
pub fn ask_with(
    services: &Services,
    params: AskParams,
    observe: &mut dyn FnMut(&Event),
) -> ToolResult {
    envelope((|| {
        if params.question.trim().is_empty() {
            return Err(ToolError::InvalidParams(
                "`question` is empty; ask in words, e.g. \"top 5 customers by total spent\"".into(),
            ));
        }
        // Every byte of the question and the history goes to the model on every attempt.
        if params.question.len() > MAX_QUESTION_BYTES {
            return Err(ToolError::InvalidParams(format!(
                "`question` is {} bytes; ask in at most {MAX_QUESTION_BYTES}",
                params.question.len()
            )));
        }
        let history_bytes = serde_json::to_string(&params.history).map_or(0, |h| h.len());
        if history_bytes > MAX_HISTORY_BYTES {
            return Err(ToolError::InvalidParams(format!(
                "`history` is {history_bytes} bytes of JSON; pass at most {MAX_HISTORY_BYTES} (the last few turns)"
            )));
        }
        let source = services.sources.get(params.source.as_deref())?;
        let llm = StopAware {
            inner: services.asking.llm()?.backend(),
            cancel: schemascope_core::cancel::current(),
        };
        let data = ServedData { services, source: Arc::clone(&source) };
        let graph = Graph { llm: &llm, data: &data, budgets: Budgets::default() };
        let history = params.history.unwrap_or_default();
        let outcome = graph.run(
            AskInput {
                source: source.name().to_string(),
                question: params.question.clone(),
                history,
            },
            observe,
        );
        services.asking.metrics().record(&outcome);
        services.asking.write_trace(&json!({
            "execution_id": outcome.state.execution_id,
            "source": source.name(),
            "question": params.question,
            "success": outcome.success,
            "attempts": outcome.state.attempts,
            "usage": outcome.state.usage,
            "trace": outcome.trace,
        }));
        let data = json!({
            "source": source.name(),
            "question": params.question,
            "answer": outcome.answer,
            "query": outcome.query,
            "columns": outcome.result.as_ref().map(|r| r.columns.clone()),
            "rows": outcome.result.as_ref().map(|r| r.rows.clone()),
            "truncated": outcome.result.as_ref().map(|r| r.truncated),
            "shown_entities": outcome.shown_entities,
            "attempts": outcome.state.attempts,
            "usage": outcome.state.usage,
            "llm": schemascope_agent::llm::LlmBackend::describe(&llm),
            "execution_id": outcome.state.execution_id,
            "trace": outcome.trace,
            "error_summary": outcome.state.error_summary,
        });
        Ok(ToolResult {
            success: outcome.success,
            message: outcome.answer.clone(),
            data,
            ..Default::default()
        })
    })())
}

/// The pipeline's data access over `source` of `services`, for benchmarks that drive the graph
/// with their own LLM backend.
pub fn bench_data_access<'a>(
    services: &'a Services,
    source: &str,
) -> Result<Box<dyn DataAccess + 'a>, ToolError> {
    let source = services.sources.get(Some(source))?;
    Ok(Box::new(ServedData { services, source }))
}

/// ask, without progress.
pub fn ask(services: &Services, params: AskParams) -> ToolResult {
    ask_with(services, params, &mut |_| {})
}
