//! Selector columns: the values fast-path selectors read, extracted once per property path
//! straight from the items' JSON text into compact cells. Evaluating many selectors over a large
//! collection then reads a few contiguous arrays per item instead of building and walking a
//! parsed tree per item, and a path read by several selectors (or by a later one) is extracted
//! once. Only the paths' own values are materialised; everything else in an item is skipped by
//! the parser without allocating.

mod eval;
mod read;

use serde_json::Value;

use crate::parallel::on_all_cores;
use crate::selector::value::{Cell, ChunkCells, Row, Step, V, walk};

pub use crate::selector::value::FieldPath;
pub use eval::evaluate;
use read::{FieldTree, build_chunk};

/// Rows per chunk: columns are built a chunk per task and stored chunk by chunk.
const CHUNK_SHIFT: u32 = 12;
const CHUNK_ROWS: usize = 1 << CHUNK_SHIFT;

/// Building a chunk: the columns' side of [`ChunkCells`] (decoding it is [`super::value`]'s).
impl ChunkCells {
    fn string(&mut self, s: &str) -> Cell {
        // Chunks are bounded by rows, not bytes: a chunk holding more than 4 GiB of strings keeps
        // the rest as containers' worth of owned values instead of overflowing the offsets.
        match (u32::try_from(self.text.len()), u32::try_from(s.len())) {
            (Ok(at), Ok(len))
                if self
                    .text
                    .len()
                    .checked_add(s.len())
                    .is_some_and(|end| u32::try_from(end).is_ok()) =>
            {
                self.text.push_str(s);
                Cell::Str { at, len }
            }
            _ => self.container(Value::String(s.to_string())),
        }
    }

    fn container(&mut self, value: Value) -> Cell {
        self.containers.push(value);
        Cell::Container(u32::try_from(self.containers.len() - 1).unwrap_or(u32::MAX))
    }

    fn cell_of(&mut self, value: &Value) -> Cell {
        match value {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => n.as_f64().map_or(Cell::Null, Cell::Num),
            Value::String(s) => self.string(s),
            Value::Array(_) | Value::Object(_) => self.container(value.clone()),
        }
    }
}

/// One field path's values for every item of a collection, as the item's JSON text gives them.
#[derive(Debug)]
pub struct PathColumn {
    path: FieldPath,
    chunks: Vec<ChunkCells>,
    /// Items whose JSON text did not parse (sorted); they match no selector, as with parsed items.
    unreadable: Vec<usize>,
}

impl PathColumn {
    /// Extracts the columns of `paths` (in that order) for items `0..n`, whose JSON text
    /// `json(i)` gives, on all cores; one parse of each item serves every path.
    pub fn build<'a>(
        paths: &[FieldPath],
        n: usize,
        json: impl Fn(usize) -> &'a str + Sync,
    ) -> Vec<PathColumn> {
        let tree = FieldTree::new(paths);
        let built = on_all_cores(n.div_ceil(CHUNK_ROWS), |k| {
            build_chunk(&tree, paths.len(), chunk_rows(k, n), &json)
        });
        let mut columns: Vec<PathColumn> = paths
            .iter()
            .map(|path| PathColumn {
                path: path.clone(),
                chunks: Vec::with_capacity(built.len()),
                unreadable: Vec::new(),
            })
            .collect();
        for (chunks, unreadable) in built {
            for (column, chunk) in columns.iter_mut().zip(chunks) {
                column.chunks.push(chunk);
                column.unreadable.extend(&unreadable);
            }
        }
        columns
    }

    /// The field path this column holds.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// How many items the column covers.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.cells.len()).sum()
    }

    /// Whether the column covers no items.
    pub fn is_empty(&self) -> bool {
        self.chunks.iter().all(|c| c.cells.is_empty())
    }

    /// Item `row`'s value (null when missing).
    pub(crate) fn view(&self, row: usize) -> V<'_> {
        self.chunks
            .get(row >> CHUNK_SHIFT)
            .map_or(V::Null, |chunk| chunk.view(row & (CHUNK_ROWS - 1)))
    }
}

/// The rows of chunk `k` of `n` rows.
fn chunk_rows(k: usize, n: usize) -> std::ops::Range<usize> {
    k * CHUNK_ROWS..((k + 1) * CHUNK_ROWS).min(n)
}

/// One row of a selector's columns (one column per path id).
struct ColumnRow<'a> {
    columns: &'a [&'a PathColumn],
    row: usize,
}

impl<'a> Row<'a> for ColumnRow<'a> {
    fn path(&self, id: usize, steps: &'a [Step]) -> V<'a> {
        let Some(column) = self.columns.get(id) else { return V::Null };
        let value = column.view(self.row);
        match steps.get(column.path.len()..) {
            None | Some([]) => value,
            Some(rest) => match (value, rest) {
                (V::Container(inner), _) => walk(inner, rest).map_or(V::Null, V::of),
                (V::List(list), [Step::Index(i), more @ ..]) => match list.index(*i) {
                    Some(V::Container(inner)) => walk(inner, more).map_or(V::Null, V::of),
                    Some(element) if more.is_empty() => element,
                    _ => V::Null,
                },
                _ => V::Null,
            },
        }
    }
}
