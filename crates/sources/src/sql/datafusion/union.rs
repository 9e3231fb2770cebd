//! Several files' rows as one table: the union of their columns by name, each file's missing
//! columns null, and per file constant columns after them (a partitioned table's keys).
//!
//! The files' parts are shared out among the cores, each reading its parts one after another,
//! so a table of a thousand files reads on as many threads as a table of one.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, new_null_array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::ScalarValue;

use super::table::BatchSource;

/// One file of a [`FileUnion`]: where its rows come from and its constant columns' values.
#[derive(Debug)]
pub(crate) struct UnionMember {
    pub source: Arc<dyn BatchSource>,
    pub constants: Vec<ScalarValue>,
}

/// Files read as one table (see the module docs).
#[derive(Debug)]
pub(crate) struct FileUnion {
    schema: SchemaRef,
    members: Vec<UnionMember>,
    /// Every (member, part of it), in order.
    units: Vec<(usize, usize)>,
}

impl FileUnion {
    /// The union of `members` under `schema`: the files' columns (each file's read by name and
    /// cast to the column's type), then one column per constant.
    pub(crate) fn new(schema: SchemaRef, members: Vec<UnionMember>) -> Self {
        let units = members
            .iter()
            .enumerate()
            .flat_map(|(m, member)| (0..member.source.parts().max(1)).map(move |p| (m, p)))
            .collect();
        Self { schema, members, units }
    }

    fn file_columns(&self, member: &UnionMember) -> usize {
        self.schema.fields().len().saturating_sub(member.constants.len())
    }

    /// Reads part `part` of `member` with the union's columns `projection`.
    fn read_member(
        &self,
        member: &UnionMember,
        part: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<bool, String> {
        let own = member.source.schema();
        let file_columns = self.file_columns(member);
        // Where each projected column comes from: a column of the file's projection, its
        // constant, or nothing (null).
        let mut wanted: Vec<usize> = Vec::new();
        let mut origin: Vec<Origin> = Vec::with_capacity(projection.len());
        for &i in projection {
            let field = self.schema.field(i);
            if i >= file_columns {
                origin.push(Origin::Constant(i - file_columns));
            } else if let Ok(at) = own.index_of(field.name()) {
                let slot = wanted.iter().position(|&w| w == at).unwrap_or_else(|| {
                    wanted.push(at);
                    wanted.len() - 1
                });
                origin.push(Origin::Column(slot));
            } else {
                origin.push(Origin::Missing);
            }
        }
        let schema = Arc::new(self.schema.project(projection).map_err(|e| e.to_string())?);
        let mut failure = None;
        let mut more = true;
        member.source.read(part, &wanted, &mut |batch| {
            let rows = batch.num_rows();
            let columns: Result<Vec<ArrayRef>, String> = origin
                .iter()
                .zip(schema.fields())
                .map(|(from, field)| match from {
                    Origin::Column(slot) => {
                        let column = batch.column(*slot);
                        if column.data_type() == field.data_type() {
                            Ok(Arc::clone(column))
                        } else {
                            cast(column, field.data_type()).map_err(|e| e.to_string())
                        }
                    }
                    Origin::Constant(k) => member
                        .constants
                        .get(*k)
                        .ok_or_else(|| "a partition value is missing".to_string())
                        .and_then(|v| v.to_array_of_size(rows).map_err(|e| e.to_string())),
                    Origin::Missing => Ok(new_null_array(field.data_type(), rows)),
                })
                .collect();
            let batch = columns.and_then(|columns| {
                let options = RecordBatchOptions::new().with_row_count(Some(rows));
                RecordBatch::try_new_with_options(Arc::clone(&schema), columns, &options)
                    .map_err(|e| e.to_string())
            });
            match batch {
                Ok(batch) => {
                    more = emit(batch);
                    more
                }
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(more),
        }
    }
}

/// Where a projected column's values come from, in one file.
enum Origin {
    Column(usize),
    Constant(usize),
    Missing,
}

impl BatchSource for FileUnion {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn parts(&self) -> usize {
        super::table::parts_for(self.units.len())
    }

    fn read(
        &self,
        part: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), String> {
        for &(m, member_part) in self.units.iter().skip(part).step_by(self.parts()) {
            let Some(member) = self.members.get(m) else { continue };
            if !self.read_member(member, member_part, projection, emit)? {
                break;
            }
        }
        Ok(())
    }
}
