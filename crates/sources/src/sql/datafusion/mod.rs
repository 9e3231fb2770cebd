//! Apache DataFusion, embedded: read-only SQL over the files and in-memory collections a source
//! serves (CSV and Parquet files, document and record sets, a graph's nodes and edges).
//!
//! Read-only by construction, not by spelling: the session is built with no table factories
//! (no `CREATE EXTERNAL TABLE`), no table functions, no URL tables and no information schema;
//! its one catalog holds only the tables registered here; statements are planned with DDL, DML
//! and session statements (`SET`, `COPY`…) refused by the planner's own options, after the same
//! read-only check every engine's statements pass (`check_read_only`, with the served tables
//! as the relation scope). Memory is bounded by a pool (a plan that outgrows it spills up to a
//! bounded size of temporary files, then fails with a clear error), and a statement is
//! cancelled at its timeout by dropping its stream, which stops every task of the plan.

mod collections;
mod guards;
mod items;
mod overflow;
mod row_count;
mod table;
mod union;
mod values;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, ScalarValue};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use schemascope_core::{Catalog, ColumnInfo, TableInfo, TableKind};
use schemascope_query::sql::relations::RelationScope;

pub use self::collections::CollectionsDatabase;
pub(crate) use self::items::items_table;
pub(crate) use self::table::{BatchSource, PartitionedTable, parts_for};
pub(crate) use self::union::{FileUnion, UnionMember};
use super::caps::Budget;
use super::{Callables, Caps, Database, Dialect, QueryResult, SqlValue};
use crate::error::{ErrorClass, SourceError};

/// Memory a statement's operators (hash tables, sorts, joins) may hold before they spill.
pub const QUERY_MEMORY_BYTES: usize = 1 << 30;
/// Temporary files a statement may spill to before it fails.
pub const QUERY_SPILL_BYTES: u64 = 4 << 30;
/// How often a running statement looks whether its call was cancelled.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// One table served to the engine: its name and where its rows come from.
pub struct ServedTable {
    /// The name statements use (the collection's name).
    pub name: String,
    /// The engine's view of it.
    pub provider: Arc<dyn TableProvider>,
    /// Rows, when known without reading them.
    pub row_count: Option<u64>,
    /// Per column, a note for the model (how a column of mixed JSON types is read).
    pub notes: Vec<(String, String)>,
}

/// A DataFusion session over served tables (see the module docs).
pub struct DataFusionDatabase {
    location: String,
    context: SessionContext,
    catalog: Catalog,
    callables: Arc<Callables>,
}

impl std::fmt::Debug for DataFusionDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataFusionDatabase").field("location", &self.location).finish()
    }
}

/// The runtime every DataFusion plan runs on: one, shared, with a worker per core.
fn runtime() -> Result<&'static tokio::runtime::Runtime, SourceError> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(cores())
                .thread_name("schemascope-sql")
                .enable_time()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|message| SourceError::Statement {
            location: "DataFusion".into(),
            message: format!("cannot start the query runtime: {message}"),
            class: ErrorClass::Resource,
        })
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).max(1)
}

impl DataFusionDatabase {
    /// A session serving `tables` (and nothing else), named `location` in messages.
    pub fn new(location: impl Into<String>, tables: Vec<ServedTable>) -> Result<Self, SourceError> {
        let location = location.into();
        let engine_error = |e: DataFusionError| SourceError::Statement {
            location: location.clone(),
            message: e.to_string(),
            class: ErrorClass::Resource,
        };
        let disk = DiskManagerBuilder::default()
            .with_mode(DiskManagerMode::OsTmpDirectory)
            .with_max_temp_directory_size(QUERY_SPILL_BYTES);
        let runtime_env = RuntimeEnvBuilder::new()
            .with_memory_limit(QUERY_MEMORY_BYTES, 1.0)
            .with_disk_manager_builder(disk)
            .build_arc()
            .map_err(engine_error)?;
        let config = SessionConfig::new()
            .with_target_partitions(cores())
            .with_information_schema(false)
            // A file's statistics leave NaN out of a float column's min and max: a statement
            // is never planned away by them (see `tabular::parquet::listing_table`).
            .with_collect_statistics(false)
            .with_create_default_catalog_and_schema(true);
        // Functions and the planners of their syntax only: no table factories, no table
        // functions, no file formats for statements to name.
        let state =
            SessionStateBuilder::new()
                .with_config(config)
                .with_runtime_env(runtime_env)
                .with_scalar_functions(guards::bounded(
                    datafusion::execution::SessionStateDefaults::default_scalar_functions(),
                ))
                .with_aggregate_functions(
                    datafusion::execution::SessionStateDefaults::default_aggregate_functions(),
                )
                .with_window_functions(
                    datafusion::execution::SessionStateDefaults::default_window_functions(),
                )
                .with_expr_planners(
                    datafusion::execution::SessionStateDefaults::default_expr_planners(),
                )
                .with_analyzer_rule(Arc::new(overflow::CheckedIntegerArithmetic))
                .build();
        let mut context = SessionContext::new_with_state(state);
        {
            use datafusion::execution::FunctionRegistry;
            context
                .register_function_rewrite(Arc::new(overflow::ExactSums))
                .map_err(engine_error)?;
        }
        let mut catalog = Catalog::default();
        let mut served = std::collections::HashSet::new();
        for table in tables {
            let schema = table.provider.schema();
            // Registered under its name exactly (`Genre`, `sales.q1`): a name given as text would
            // be read as SQL, folded to lower case and split at its dots.
            let name = datafusion::common::TableReference::bare(table.name.as_str());
            let provider: Arc<dyn TableProvider> = match table.row_count {
                Some(rows) => Arc::new(row_count::CountedTable {
                    inner: table.provider,
                    rows: usize::try_from(rows).unwrap_or(usize::MAX),
                }),
                None => table.provider,
            };
            context.register_table(name, provider).map_err(engine_error)?;
            served.insert(table.name.clone());
            catalog.tables.push(table_info(&table.name, &schema, table.row_count, &table.notes));
        }
        catalog.tables.sort_by(|a, b| a.name.cmp(&b.name));
        let callables = callables(&context, served);
        Ok(Self { location, context, catalog, callables: Arc::new(callables) })
    }

    /// The statement's options: reads only.
    fn options() -> SQLOptions {
        SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false)
    }

    /// Plans `sql` (with `params` bound) as the engine would before running it.
    async fn plan(
        context: &SessionContext,
        sql: &str,
        params: Vec<ScalarValue>,
    ) -> Result<datafusion::dataframe::DataFrame, DataFusionError> {
        let frame = context.sql_with_options(sql, Self::options()).await?;
        if params.is_empty() { Ok(frame) } else { frame.with_param_values(params) }
    }

    /// Runs `future` on the shared runtime within `timeout_ms` and while the calling thread's
    /// call is not cancelled, from any thread.
    fn block_on<T: Send + 'static>(
        &self,
        timeout_ms: u64,
        future: impl Future<Output = Result<T, SourceError>> + Send + 'static,
    ) -> Result<T, SourceError> {
        let location = self.location.clone();
        let cancel = schemascope_core::cancel::current();
        let task = runtime()?.spawn(async move {
            let cancelled = async {
                while !cancel.is_cancelled() {
                    tokio::time::sleep(CANCEL_POLL).await;
                }
                cancel.cancelled()
            };
            // Whichever ends first drops the others: a dropped plan's streams and tasks stop.
            tokio::select! {
                result = future => result,
                () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {
                    Err(SourceError::Timeout { location, timeout_ms })
                }
                stopped = cancelled => Err(SourceError::Cancelled(stopped)),
            }
        });
        futures::executor::block_on(task).map_err(|e| SourceError::Statement {
            location: self.location.clone(),
            message: format!("the statement's task failed: {e}"),
            class: ErrorClass::Resource,
        })?
    }

    /// Checks `sql` as a caller's statements are checked, before the engine sees it: every
    /// statement here is a caller's (schemascope writes none of its own), so the relations it
    /// reads are judged too.
    fn check(&self, sql: &str) -> Result<(), SourceError> {
        schemascope_query::check_read_only(sql, &self.callables).map_err(|issues| {
            SourceError::Statement {
                location: self.location.clone(),
                message: super::guard::refusal_message(&issues),
                class: ErrorClass::Refused,
            }
        })
    }
}

/// A failure of the engine as a classified error: a statement the planner rejects is a
/// `Syntax` error a corrected statement can fix; memory and I/O are `Resource`.
fn statement_error(location: &str, e: &DataFusionError) -> SourceError {
    let class = match e.find_root() {
        DataFusionError::ResourcesExhausted(_)
        | DataFusionError::IoError(_)
        | DataFusionError::External(_)
        | DataFusionError::ObjectStore(_) => ErrorClass::Resource,
        _ => ErrorClass::Syntax,
    };
    let message = match e.find_root() {
        DataFusionError::ResourcesExhausted(m) => format!(
            "the statement needs more memory than the {} MiB a statement may hold (and {} GiB of temporary files): {m}; aggregate more or select fewer rows",
            QUERY_MEMORY_BYTES >> 20,
            QUERY_SPILL_BYTES >> 30
        ),
        _ => e.to_string(),
    };
    SourceError::Statement { location: location.to_string(), message, class }
}

/// A table's catalog entry from its Arrow schema.
fn table_info(
    name: &str,
    schema: &SchemaRef,
    row_count: Option<u64>,
    notes: &[(String, String)],
) -> TableInfo {
    TableInfo {
        name: name.to_string(),
        kind: TableKind::Table,
        columns: schema
            .fields()
            .iter()
            .map(|field| ColumnInfo {
                name: field.name().clone(),
                declared_type: values::sql_type(field.data_type()),
                nullable: field.is_nullable(),
                comment: notes
                    .iter()
                    .find(|(c, _)| c == field.name())
                    .map(|(_, n)| n.clone())
                    .or_else(|| nested_note(field.data_type())),
                base_type: None,
            })
            .collect(),
        primary_key: Vec::new(),
        foreign_keys: Vec::new(),
        row_count,
        row_count_estimated: false,
        comment: None,
    }
}

/// How a nested column's members are read, for the model.
fn nested_note(data_type: &datafusion::arrow::datatypes::DataType) -> Option<String> {
    use datafusion::arrow::datatypes::DataType;
    match data_type {
        DataType::Struct(_) => {
            Some("a struct: read a member as column['member'] (\"st\"['a'])".to_string())
        }
        DataType::Map(..) => Some("a map: read a key as column['key']".to_string()),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => Some(
            "a list: column[1] is its first element; unnest(column) gives one row per element"
                .to_string(),
        ),
        _ => None,
    }
}

/// The allow-list: every function of the session's registry (DataFusion's built-ins, none of
/// which reaches a file, a process or another session), and the served tables as the only
/// relations.
fn callables(context: &SessionContext, served: std::collections::HashSet<String>) -> Callables {
    let mut callables = Callables::new(Dialect::DataFusion);
    let state = context.state();
    let names = state
        .scalar_functions()
        .keys()
        .chain(state.aggregate_functions().keys())
        .chain(state.window_functions().keys());
    for name in names {
        callables.add_function(None, name, true);
    }
    for udf in state.scalar_functions().values() {
        for alias in udf.aliases() {
            callables.add_function(None, alias, true);
        }
    }
    for udaf in state.aggregate_functions().values() {
        for alias in udaf.aliases() {
            callables.add_function(None, alias, true);
        }
    }
    callables.set_relation_scope(RelationScope::Served { tables: served });
    callables
}

/// A bound parameter as the engine takes it.
fn scalar(value: &SqlValue) -> ScalarValue {
    match value {
        SqlValue::Null => ScalarValue::Null,
        SqlValue::Integer(i) => ScalarValue::Int64(Some(*i)),
        SqlValue::Real(f) => ScalarValue::Float64(Some(*f)),
        SqlValue::Text(s) => ScalarValue::Utf8(Some(s.clone())),
        SqlValue::Bool(b) => ScalarValue::Boolean(Some(*b)),
        SqlValue::Json(v) => ScalarValue::Utf8(Some(v.to_string())),
    }
}

impl Database for DataFusionDatabase {
    fn dialect(&self) -> Dialect {
        Dialect::DataFusion
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn catalog(&self) -> Result<Catalog, SourceError> {
        Ok(self.catalog.clone())
    }

    fn callables(&self) -> Result<Arc<Callables>, SourceError> {
        Ok(Arc::clone(&self.callables))
    }

    fn compile(&self, sql: &str) -> Result<(), SourceError> {
        self.check(sql)?;
        let context = self.context.clone();
        let sql = sql.to_string();
        let location = self.location.clone();
        let planned = self.block_on(super::STATEMENT_TIMEOUT_MS, async move {
            Self::plan(&context, &sql, Vec::new())
                .await
                .map(|_| ())
                .map_err(|e| statement_error(&location, &e))
        });
        planned.map_err(|e| match e {
            SourceError::Statement { location, message, .. } => {
                SourceError::Statement { location, message, class: ErrorClass::Syntax }
            }
            other => other,
        })
    }

    fn run_capped(
        &self,
        sql: &str,
        params: &[SqlValue],
        caps: Caps,
        timeout_ms: u64,
    ) -> Result<QueryResult, SourceError> {
        self.check(sql)?;
        let context = self.context.clone();
        let sql = sql.to_string();
        let params: Vec<ScalarValue> = params.iter().map(scalar).collect();
        let location = self.location.clone();
        let error = move |e: &DataFusionError| statement_error(&location, e);
        self.block_on(timeout_ms, async move {
            let frame = Self::plan(&context, &sql, params).await.map_err(|e| error(&e))?;
            let mut stream = frame.execute_stream().await.map_err(|e| error(&e))?;
            // The executed plan's types: the analyzer's rewrites (an exact integer sum's
            // DECIMAL) come after the statement's first plan.
            let schema = stream.schema();
            let mut budget = Budget::new(caps);
            let mut rows = Vec::new();
            let mut cut = None;
            'batches: while let Some(batch) = stream.next().await {
                let batch = batch.map_err(|e| error(&e))?;
                for i in 0..batch.num_rows() {
                    let row: Vec<SqlValue> =
                        batch.columns().iter().map(|c| values::cell(c.as_ref(), i)).collect();
                    if let Err(c) = budget.admit(&row) {
                        cut = Some(c);
                        break 'batches;
                    }
                    rows.push(row);
                }
            }
            // Dropping the stream stops the plan: nothing past the cap is computed.
            drop(stream);
            Ok(QueryResult {
                columns: schema.fields().iter().map(|f| f.name().clone()).collect(),
                column_types: schema
                    .fields()
                    .iter()
                    .map(|f| values::sql_type(f.data_type()))
                    .collect(),
                rows,
                more: cut.is_some(),
                cut,
                rows_read: budget.read,
                cut_row: budget.cut_row,
                warnings: Vec::new(),
            })
        })
    }
}
