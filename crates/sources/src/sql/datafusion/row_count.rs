//! Tables that tell the planner how many rows they hold, and nothing of their values: the one
//! fact it needs to build a join's hash table on the smaller side (without it, it builds on
//! whichever table the statement names first: 10M orders joined to 50k customers took 2.1 s
//! and 730 MB, the other way round 0.28 s). Column statistics stay unknown on purpose: a
//! Parquet file's minimum and maximum leave NaN out, and a plan may answer from them.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Statistics, internal_err};
use datafusion::datasource::TableType;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

/// A table whose scans state its number of rows.
#[derive(Debug)]
pub(crate) struct CountedTable {
    pub inner: Arc<dyn TableProvider>,
    pub rows: usize,
}

#[async_trait]
impl TableProvider for CountedTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>, DataFusionError> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>, DataFusionError> {
        let input = self.inner.scan(state, projection, filters, limit).await?;
        let rows = limit.map_or(self.rows, |l| l.min(self.rows));
        Ok(Arc::new(RowCount { input, rows }))
    }
}

/// A scan with its number of rows stated.
#[derive(Debug)]
struct RowCount {
    input: Arc<dyn ExecutionPlan>,
    rows: usize,
}

impl DisplayAs for RowCount {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RowCount: rows={}", self.rows)
    }
}

impl ExecutionPlan for RowCount {
    fn name(&self) -> &str {
        "RowCount"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::common::Result<TreeNodeRecursion>,
    ) -> datafusion::common::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        match <[_; 1]>::try_from(children) {
            Ok([input]) => Ok(Arc::new(RowCount { input, rows: self.rows })),
            Err(_) => internal_err!("RowCount has one input"),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> datafusion::common::Result<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }

    fn partition_statistics(
        &self,
        partition: Option<usize>,
    ) -> datafusion::common::Result<Arc<Statistics>> {
        let mut statistics = Statistics::new_unknown(&self.schema());
        if partition.is_none() {
            statistics.num_rows = Precision::Inexact(self.rows);
        }
        Ok(Arc::new(statistics))
    }
}
