//! Profiling a table a column at a time: the rows of a CSV or Parquet file arrive as typed
//! columns, so nothing is parsed as JSON and no row is built. Each row counts as one item that
//! is an object, each column as its member; the counters are the same ones a JSON item's walk
//! feeds, so a table's profile reads exactly as the same rows written as JSON objects would
//! (held to it by a test).
//!
//! Counts do not depend on the order values arrive in, so a column can be added whole before
//! the next one. A SQL `NULL` is a JSON `null` (present, null); the members of a null struct are
//! missing, as they are in JSON.

use super::accumulate::{Counters, Ctx, PathNode, ProfileBuilder, ValueStats};
use super::exact::F64_EXACT_INTEGER;

/// Where a column's values go: one property of the table ([`ProfileBuilder::column`]), or a
/// field or the elements below one ([`ColumnSink::field`], [`ColumnSink::elements`]).
pub struct ColumnSink<'a> {
    node: &'a mut PathNode,
    ctx: &'a mut Ctx,
    /// The depth of this property's values (a top-level column's are at 1).
    depth: usize,
}

impl ProfileBuilder {
    /// Counts `rows` more items, each an object: a table's rows, whose columns are then added
    /// through [`ProfileBuilder::column`].
    pub fn add_rows(&mut self, rows: u64) {
        let stats = &mut self.root.stats;
        stats.present += rows;
        stats.objects += rows;
    }

    /// The top-level member `name` of every row, made on first use; `None` when the path limit
    /// refused it (it is then counted among the dropped keys as a JSON member would be).
    pub fn column(&mut self, name: &str, ordinal: usize) -> Option<ColumnSink<'_>> {
        let (root, ctx) = self.root_and_ctx();
        let index = root.child_index(name, ordinal, ctx)?;
        Some(ColumnSink { node: &mut root.keys[index].1, ctx, depth: 1 })
    }

    /// Forgets every value counted for the top-level member `name`, which keeps its place
    /// among the properties: a column read with a type its values turned out not to have is
    /// counted again from the start.
    pub fn forget_column(&mut self, name: &str) {
        if let Some((_, node)) = self.root.keys.iter_mut().find(|(key, _)| &**key == name) {
            let first_seen = node.first_seen;
            *node = PathNode::default();
            node.first_seen = first_seen;
        }
    }

    /// Counts `rows` values of a column the path limit refused.
    pub fn dropped(&mut self, rows: u64) {
        self.root.dropped_keys += rows;
    }
}

impl ColumnSink<'_> {
    fn stats(&mut self) -> &mut ValueStats {
        &mut self.node.stats
    }

    /// A string.
    #[inline]
    pub fn str(&mut self, value: &str) {
        self.stats().add_str(value);
    }

    /// The string `value`, `n` times (a value every row of a part shares: a partition key).
    pub fn str_n(&mut self, value: &str, n: u64) {
        self.stats().add_str_n(value, n);
    }

    /// The integer `value`, `n` times (a value every row of a part shares: a partition key).
    pub fn integer_n(&mut self, value: i64, n: u64) {
        self.stats().add_integer_n(i128::from(value), n);
    }

    /// An integer.
    #[inline]
    pub fn integer(&mut self, value: i64) {
        if i128::from(value).abs() <= F64_EXACT_INTEGER {
            self.stats().add_number(value as f64, true);
        } else {
            self.stats().add_integer(i128::from(value));
        }
    }

    /// An integer of any width (an unsigned 64-bit column, a decimal without fraction). One
    /// past [`super::exact::EXACT_INTEGER_LIMIT`] is counted as its digits, a text: read as a
    /// number it would be rounded, merging neighbours and shifting medians, while the profile
    /// called it exact (as a CSV field of an integer past 64 bits is text).
    #[inline]
    pub fn wide_integer(&mut self, value: i128) {
        if value.unsigned_abs() < super::exact::EXACT_INTEGER_LIMIT {
            self.stats().add_integer(value);
        } else {
            self.stats().add_str(&value.to_string());
        }
    }

    /// A number with a fraction or exponent, as JSON would write it (a float column).
    #[inline]
    pub fn float(&mut self, value: f64) {
        self.stats().add_number(value, false);
    }

    /// Many floats at once (a float column without nulls).
    pub fn floats(&mut self, values: &[f64]) {
        self.stats().add_floats(values);
    }

    /// A boolean.
    #[inline]
    pub fn bool(&mut self, value: bool) {
        self.stats().add_bool(value);
    }

    /// `n` nulls.
    pub fn nulls(&mut self, n: u64) {
        let stats = self.stats();
        stats.present += n;
        stats.nulls += n;
    }

    /// `n` objects (struct values), whose fields are then added through [`ColumnSink::field`].
    /// `false` when they lie past the depth limit: they are counted, not descended into.
    pub fn objects(&mut self, n: u64) -> bool {
        let deep = self.depth >= self.ctx.max_depth();
        let stats = self.stats();
        stats.present += n;
        stats.objects += n;
        if deep {
            stats.depth_limited += n;
        }
        !deep
    }

    /// An array of `len` elements, added through [`ColumnSink::elements`]. `false` when it lies
    /// past the depth limit: it is counted, its elements are not.
    pub fn array(&mut self, len: u64) -> bool {
        let deep = self.depth >= self.ctx.max_depth();
        let stats = self.stats();
        stats.add_array(len);
        if deep {
            stats.add_depth_limited();
        }
        !deep
    }

    /// The member `name` of this property's objects; `None` when the path limit refused it.
    pub fn field(&mut self, name: &str, ordinal: usize) -> Option<ColumnSink<'_>> {
        let index = self.node.child_index(name, ordinal, self.ctx)?;
        Some(ColumnSink {
            node: &mut self.node.keys[index].1,
            ctx: self.ctx,
            depth: self.depth + 1,
        })
    }

    /// Counts `n` values of a field the path limit refused.
    pub fn dropped(&mut self, n: u64) {
        self.node.dropped_keys += n;
    }

    /// The elements of this property's arrays.
    pub fn elements(&mut self) -> ColumnSink<'_> {
        let items = self.ctx.items_of(self.node);
        ColumnSink { node: items, ctx: self.ctx, depth: self.depth + 1 }
    }
}
