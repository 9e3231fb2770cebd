//! A collection held in memory (a document or record set, a graph's nodes or edges) as a table.
//!
//! Columns are the item's id (`id`; an edge's ends `source` and `target`), then one per
//! property path the profile found that is not only an object, named as the profile names it
//! (`metadata.category`: nested members are columns of their own, so every name a selector or
//! the profile uses is a column name). A path's column type is the one its values all have:
//! integers `BIGINT`, numbers `DOUBLE`, booleans `BOOLEAN`, strings `VARCHAR`; a path whose
//! values are of several JSON types, or arrays, is `VARCHAR` holding each value as JSON writes
//! it (strings as they are), and its catalog entry says so. Items that are not all objects (a
//! record whose value is an array) have a `value` column with each whole value so. Where a
//! data property takes a reserved name (`id`, `value`), the data keeps the name and the
//! reserved column takes `_id`, `_value`.
//!
//! Rows are converted from the items each time a statement reads them, a part per core, only
//! the columns it reads: nothing is held beside the collection.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Decimal128Builder, Float64Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use schemascope_core::Collection;
use schemascope_core::path::Segment;
use serde_json::Value;

use super::ServedTable;
use super::table::{BatchSource, PartitionedTable};

/// Rows per batch.
const BATCH_ROWS: usize = 8_192;
/// The most columns a collection's table has: past it, the paths seen least are left out.
pub(crate) const MAX_COLUMNS: usize = 1_000;

/// Where a column's values come from.
#[derive(Debug, Clone)]
enum Origin {
    Id,
    Source,
    Target,
    /// The member reached by these keys.
    Data(Vec<String>),
}

/// How a column's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Integer,
    /// Integers past `i64` (up to `u64`'s largest, down to `i64`'s smallest): `DECIMAL(20,0)`.
    Wide,
    Real,
    Boolean,
    Text,
    /// Any JSON value, as its text (strings as they are).
    Json,
}

impl ColumnKind {
    fn data_type(self) -> DataType {
        match self {
            Self::Integer => DataType::Int64,
            Self::Wide => DataType::Decimal128(20, 0),
            Self::Real => DataType::Float64,
            Self::Boolean => DataType::Boolean,
            Self::Text | Self::Json => DataType::Utf8,
        }
    }
}

#[derive(Debug)]
struct ItemsSource {
    collection: Arc<Collection>,
    schema: SchemaRef,
    columns: Vec<(Origin, ColumnKind)>,
    parts: usize,
}

/// The table of `collection`, or `None` when its items are a sample of a larger file (a
/// statement over them would answer for the sample as if for the whole).
pub(crate) fn items_table(collection: &Arc<Collection>) -> Option<ServedTable> {
    if collection.sample_of().is_some() || collection.table().is_some() {
        return None;
    }
    let profile = collection.profile();
    let mut columns: Vec<(String, Origin, ColumnKind)> = Vec::new();
    let mut notes = Vec::new();
    let mut taken = std::collections::HashSet::new();
    let mut properties: Vec<_> = profile
        .properties()
        .into_iter()
        .filter(|p| p.path.segments().iter().all(|s| matches!(s, Segment::Key(_))))
        .collect();
    // The paths most items have first, when there are more than a table takes.
    if properties.len() > MAX_COLUMNS {
        properties.sort_by_key(|p| std::cmp::Reverse(p.present));
        properties.truncate(MAX_COLUMNS);
    }
    for property in properties {
        let t = &property.types;
        let scalars = t.string + t.integer + t.number + t.boolean + t.array;
        if scalars == 0 && t.object > 0 {
            continue;
        }
        let keys: Vec<String> = property
            .path
            .segments()
            .iter()
            .filter_map(|s| match s {
                Segment::Key(k) => Some(k.to_string()),
                Segment::Items => None,
            })
            .collect();
        let name = keys.join(".");
        if !taken.insert(name.clone()) {
            continue;
        }
        let kind = if t.object > 0 || t.array > 0 {
            ColumnKind::Json
        } else if scalars == t.integer && t.integer > 0 {
            integer_kind(property.numbers.as_ref())
        } else if scalars == t.integer + t.number && t.number > 0 {
            ColumnKind::Real
        } else if scalars == t.boolean && t.boolean > 0 {
            ColumnKind::Boolean
        } else if scalars == t.string {
            ColumnKind::Text
        } else {
            ColumnKind::Json
        };
        if kind == ColumnKind::Json {
            let shown: Vec<String> =
                t.breakdown().iter().map(|(ty, n)| format!("{} {n}", ty.name())).collect();
            notes.push((
                name.clone(),
                format!(
                    "values of several JSON types or arrays ({}): each is its JSON text, a string as it is",
                    shown.join(", ")
                ),
            ));
        }
        columns.push((name, Origin::Data(keys), kind));
    }
    // Items that are not all objects (a record whose value is an array or a number): the whole
    // value is a column too.
    let root = &profile.root.profile.types;
    let whole_values = root.string + root.integer + root.number + root.boolean + root.array > 0;
    let mut reserved = vec![("id", Origin::Id)];
    if whole_values {
        reserved.push(("value", Origin::Data(Vec::new())));
    }
    if collection.ends().is_some() {
        reserved.push(("source", Origin::Source));
        reserved.push(("target", Origin::Target));
    }
    let mut all = Vec::new();
    for (name, origin) in reserved {
        let mut name = name.to_string();
        while taken.contains(&name) {
            name.insert(0, '_');
        }
        taken.insert(name.clone());
        let kind = match origin {
            Origin::Data(_) => {
                notes.push((
                    name.clone(),
                    "the item's whole value as its JSON text (a string as it is), for items that are not all objects".to_string(),
                ));
                ColumnKind::Json
            }
            _ => ColumnKind::Text,
        };
        all.push((name, origin, kind));
    }
    all.extend(columns);
    let schema = Arc::new(Schema::new(
        all.iter()
            .map(|(name, origin, kind)| {
                Field::new(name, kind.data_type(), !matches!(origin, Origin::Id))
            })
            .collect::<Vec<_>>(),
    ));
    let len = collection.len();
    let parts = super::table::parts_for(len.div_ceil(BATCH_ROWS));
    let source = ItemsSource {
        collection: Arc::clone(collection),
        schema,
        columns: all.into_iter().map(|(_, origin, kind)| (origin, kind)).collect(),
        parts,
    };
    Some(ServedTable {
        name: collection.name().to_string(),
        provider: Arc::new(PartitionedTable(Arc::new(source))),
        row_count: Some(len as u64),
        notes,
    })
}

/// Integers within `i64` are `BIGINT`; past it, within `u64`, `DECIMAL(20,0)`; beyond, doubles.
fn integer_kind(numbers: Option<&schemascope_core::profile::NumberProfile>) -> ColumnKind {
    let Some(n) = numbers else { return ColumnKind::Integer };
    // The exact extremes: a double cannot tell `i64::MAX` from 2^63, nor `u64::MAX` from 2^64.
    let exact = n.exact_range.and_then(|(lo, hi)| Some((lo.integer_value()?, hi.integer_value()?)));
    match exact {
        Some((lo, hi)) if lo >= i128::from(i64::MIN) && hi <= i128::from(i64::MAX) => {
            ColumnKind::Integer
        }
        Some((lo, hi)) if lo >= i128::from(i64::MIN) && hi <= i128::from(u64::MAX) => {
            ColumnKind::Wide
        }
        Some(_) => ColumnKind::Real,
        None => {
            // 2^63 as a double: every integer below it (in magnitude) fits.
            const LIMIT: f64 = 9_223_372_036_854_775_808.0;
            if n.min >= -LIMIT && n.max < LIMIT { ColumnKind::Integer } else { ColumnKind::Real }
        }
    }
}

/// One column being built.
enum Builder {
    Integer(Int64Builder),
    Wide(Decimal128Builder),
    Real(Float64Builder),
    Boolean(BooleanBuilder),
    Text(StringBuilder),
}

impl Builder {
    fn new(kind: ColumnKind) -> Self {
        match kind {
            ColumnKind::Integer => Self::Integer(Int64Builder::with_capacity(BATCH_ROWS)),
            ColumnKind::Wide => Self::Wide(
                Decimal128Builder::with_capacity(BATCH_ROWS)
                    .with_data_type(DataType::Decimal128(20, 0)),
            ),
            ColumnKind::Real => Self::Real(Float64Builder::with_capacity(BATCH_ROWS)),
            ColumnKind::Boolean => Self::Boolean(BooleanBuilder::with_capacity(BATCH_ROWS)),
            ColumnKind::Text | ColumnKind::Json => Self::Text(StringBuilder::new()),
        }
    }

    fn push_text(&mut self, text: Option<&str>) {
        if let Self::Text(b) = self {
            b.append_option(text);
        } else {
            self.push(None);
        }
    }

    /// Appends `value` (null when absent, or of a type the column does not hold — which the
    /// profile's types rule out, as the column's type is the one every value has).
    fn push(&mut self, value: Option<&Value>) {
        let value = value.filter(|v| !v.is_null());
        match self {
            Self::Integer(b) => b.append_option(value.and_then(Value::as_i64)),
            Self::Wide(b) => {
                b.append_option(value.and_then(|v| {
                    v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from))
                }))
            }
            Self::Real(b) => b.append_option(value.and_then(Value::as_f64)),
            Self::Boolean(b) => b.append_option(value.and_then(Value::as_bool)),
            Self::Text(b) => match value {
                None => b.append_null(),
                Some(Value::String(s)) => b.append_value(s),
                Some(other) => b.append_value(other.to_string()),
            },
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Self::Integer(b) => Arc::new(b.finish()),
            Self::Wide(b) => Arc::new(b.finish()),
            Self::Real(b) => Arc::new(b.finish()),
            Self::Boolean(b) => Arc::new(b.finish()),
            Self::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// The member of `value` reached by `keys`.
fn member<'a>(value: &'a Value, keys: &[String]) -> Option<&'a Value> {
    keys.iter().try_fold(value, |v, k| v.as_object()?.get(k))
}

impl BatchSource for ItemsSource {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn parts(&self) -> usize {
        self.parts
    }

    fn read(
        &self,
        part: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), String> {
        let len = self.collection.len();
        let range = len * part / self.parts..len * (part + 1) / self.parts;
        let schema = Arc::new(self.schema.project(projection).map_err(|e| e.to_string())?);
        let columns: Vec<&(Origin, ColumnKind)> =
            projection.iter().filter_map(|&i| self.columns.get(i)).collect();
        let needs_value = columns.iter().any(|(origin, _)| matches!(origin, Origin::Data(_)));
        let mut start = range.start;
        while start < range.end {
            let end = (start + BATCH_ROWS).min(range.end);
            let mut builders: Vec<Builder> =
                columns.iter().map(|(_, kind)| Builder::new(*kind)).collect();
            for index in start..end {
                let Some(item) = self.collection.item(index) else { continue };
                // Read as items are shown: containers past the display depth are a marker.
                let value = if needs_value {
                    self.collection.parse_item(&item).map_err(|e| e.to_string())?
                } else {
                    Value::Null
                };
                for ((origin, _), builder) in columns.iter().zip(&mut builders) {
                    match origin {
                        Origin::Id => builder.push_text(Some(item.id)),
                        Origin::Source => builder.push_text(item.ends.map(|e| e.source)),
                        Origin::Target => builder.push_text(item.ends.map(|e| e.target)),
                        Origin::Data(keys) => builder.push(member(&value, keys)),
                    }
                }
            }
            let arrays: Vec<ArrayRef> = builders.iter_mut().map(Builder::finish).collect();
            let batch = if arrays.is_empty() {
                RecordBatch::try_new_with_options(
                    Arc::clone(&schema),
                    arrays,
                    &arrow_array::RecordBatchOptions::new().with_row_count(Some(end - start)),
                )
            } else {
                RecordBatch::try_new(Arc::clone(&schema), arrays)
            }
            .map_err(|e| e.to_string())?;
            if !emit(batch) {
                return Ok(());
            }
            start = end;
        }
        Ok(())
    }
}
