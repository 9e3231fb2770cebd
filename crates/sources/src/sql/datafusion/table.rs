//! A table whose rows this crate reads itself (a CSV file's parts, a collection's items), served
//! to DataFusion as partitions that each produce record batches of the projected columns only.
//!
//! Each partition reads on a thread of its own and hands batches over a channel of two: the
//! plan pulls them as it needs them, so memory stays at a few batches per partition, and when
//! the plan is dropped (a cap reached, a timeout) the channel closes and the reading stops at
//! its next batch.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::DataFusionError;
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};

/// Where a table's rows come from: its schema, how many parts it reads in, and one part's
/// batches with the chosen columns only.
pub(crate) trait BatchSource: fmt::Debug + Send + Sync + 'static {
    /// Every column.
    fn schema(&self) -> SchemaRef;

    /// How many parts the rows are read in (each a partition of the plan).
    fn parts(&self) -> usize;

    /// Reads part `part`, with the columns `projection` (indices into [`BatchSource::schema`])
    /// in that order, giving each batch to `emit`; stops when `emit` says so (`false`).
    fn read(
        &self,
        part: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), String>;
}

/// How many parts to read `units` (parts of a file, files) in: one per core, at most one per
/// unit, at least one.
pub(crate) fn parts_for(units: usize) -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(units).max(1)
}

/// A [`BatchSource`] served as a DataFusion table.
#[derive(Debug)]
pub(crate) struct PartitionedTable<S: BatchSource>(pub(crate) Arc<S>);

#[async_trait]
impl<S: BatchSource> TableProvider for PartitionedTable<S> {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let schema = self.0.schema();
        let projection: Vec<usize> =
            projection.cloned().unwrap_or_else(|| (0..schema.fields().len()).collect());
        let projected = Arc::new(schema.project(&projection)?);
        let projection: Arc<[usize]> = projection.into();
        let partitions: Vec<Arc<dyn PartitionStream>> = (0..self.0.parts().max(1))
            .map(|part| {
                Arc::new(Part {
                    source: Arc::clone(&self.0),
                    part,
                    projection: Arc::clone(&projection),
                    schema: Arc::clone(&projected),
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        let exec = StreamingTableExec::try_new(projected, partitions, None, [], false, limit)?;
        Ok(Arc::new(exec))
    }
}

/// One part of a [`BatchSource`] as a partition of the plan.
struct Part<S: BatchSource> {
    source: Arc<S>,
    part: usize,
    projection: Arc<[usize]>,
    schema: SchemaRef,
}

impl<S: BatchSource> fmt::Debug for Part<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Part").field("part", &self.part).finish()
    }
}

impl<S: BatchSource> PartitionStream for Part<S> {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (sender, receiver) =
            tokio::sync::mpsc::channel::<Result<RecordBatch, DataFusionError>>(2);
        let (source, part, projection) =
            (Arc::clone(&self.source), self.part, Arc::clone(&self.projection));
        let spawned =
            std::thread::Builder::new().name("schemascope-scan".into()).spawn(move || {
                let mut emit = |batch: RecordBatch| sender.blocking_send(Ok(batch)).is_ok();
                // Reading failed (a file changed or unreadable): not the statement's fault, so not
                // an execution error a corrected statement would avoid.
                if let Err(message) = source.read(part, &projection, &mut emit) {
                    let _ = sender.blocking_send(Err(DataFusionError::External(message.into())));
                }
            });
        let stream = futures::stream::unfold(Some(receiver), move |receiver| async move {
            let mut receiver = receiver?;
            let next = receiver.recv().await?;
            Some((next, Some(receiver)))
        });
        let stream: futures::stream::BoxStream<'static, Result<RecordBatch, DataFusionError>> =
            match spawned {
                Ok(_) => Box::pin(stream),
                Err(e) => Box::pin(futures::stream::once(async move {
                    Err(DataFusionError::External(
                        format!("cannot start a reading thread: {e}").into(),
                    ))
                })),
            };
        Box::pin(RecordBatchStreamAdapter::new(Arc::clone(&self.schema), stream))
    }
}
