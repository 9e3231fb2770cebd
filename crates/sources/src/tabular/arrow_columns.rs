//! Arrow record batches into the profiler, a column at a time ([`ColumnSink`]): each value
//! read as [`super::cells`] reads it, with loops of their own for the types tables are mostly
//! made of (integers, doubles, text, booleans).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrowPrimitiveType, RecordBatch};
use arrow_schema::DataType;
use schemascope_core::ProfileBuilder;
use schemascope_core::profile::ColumnSink;

use super::cells::{self, Scalar};

/// Adds the rows of `batch` to `builder`: one item per row, one property per column.
pub(crate) fn add_batch(builder: &mut ProfileBuilder, batch: &RecordBatch) {
    builder.add_rows(batch.num_rows() as u64);
    add_columns(builder, batch, 0..batch.num_columns());
}

/// Adds the values of the `columns` of `batch` (by index) to `builder`, whose rows are counted
/// already.
pub(crate) fn add_columns(
    builder: &mut ProfileBuilder,
    batch: &RecordBatch,
    columns: impl IntoIterator<Item = usize>,
) {
    let rows = batch.num_rows() as u64;
    let schema = batch.schema();
    for ordinal in columns {
        let (Some(field), Some(column)) =
            (schema.fields().get(ordinal), batch.columns().get(ordinal))
        else {
            continue;
        };
        match builder.column(field.name(), ordinal) {
            Some(mut sink) => add_array(&mut sink, column.as_ref()),
            None => builder.dropped(rows),
        }
    }
}

/// Adds every value of `array` to `sink`.
pub(crate) fn add_array(sink: &mut ColumnSink<'_>, array: &dyn Array) {
    match array.data_type() {
        DataType::Int8 => integers::<Int8Type>(sink, array),
        DataType::Int16 => integers::<Int16Type>(sink, array),
        DataType::Int32 => integers::<Int32Type>(sink, array),
        DataType::Int64 => integers::<Int64Type>(sink, array),
        DataType::UInt8 => integers::<UInt8Type>(sink, array),
        DataType::UInt16 => integers::<UInt16Type>(sink, array),
        DataType::UInt32 => integers::<UInt32Type>(sink, array),
        DataType::Float64 => doubles(sink, array),
        DataType::Boolean => {
            sink.nulls(array.null_count() as u64);
            array.as_boolean().iter().flatten().for_each(|b| sink.bool(b));
        }
        DataType::Utf8 => {
            sink.nulls(array.null_count() as u64);
            array.as_string::<i32>().iter().flatten().for_each(|s| sink.str(s));
        }
        DataType::LargeUtf8 => {
            sink.nulls(array.null_count() as u64);
            array.as_string::<i64>().iter().flatten().for_each(|s| sink.str(s));
        }
        DataType::Utf8View => {
            sink.nulls(array.null_count() as u64);
            array.as_string_view().iter().flatten().for_each(|s| sink.str(s));
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            lists(sink, array, list.values().as_ref(), |i| {
                let o = list.value_offsets();
                (o[i] as usize, o[i + 1] as usize)
            });
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            lists(sink, array, list.values().as_ref(), |i| {
                let o = list.value_offsets();
                (o[i] as usize, o[i + 1] as usize)
            });
        }
        DataType::FixedSizeList(_, size) => {
            let list = array.as_fixed_size_list();
            let size = *size as usize;
            let offset = list.offset();
            lists(sink, array, list.values().as_ref(), |i| {
                ((offset + i) * size, (offset + i + 1) * size)
            });
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let nulls = array.null_count();
            sink.nulls(nulls as u64);
            if !sink.objects((array.len() - nulls) as u64) {
                return;
            }
            for (ordinal, (field, child)) in fields.iter().zip(s.columns()).enumerate() {
                // A null struct's fields are missing, not null: left out.
                let child = match array.logical_nulls() {
                    Some(valid) if nulls > 0 => {
                        let keep = arrow_array::BooleanArray::new(valid.inner().clone(), None);
                        match arrow_select::filter::filter(child.as_ref(), &keep) {
                            Ok(c) => c,
                            Err(_) => continue,
                        }
                    }
                    _ => child.clone(),
                };
                match sink.field(field.name(), ordinal) {
                    Some(mut f) => add_array(&mut f, child.as_ref()),
                    None => sink.dropped(child.len() as u64),
                }
            }
        }
        DataType::Map(..) => {
            let map = array.as_map();
            let (keys, values) = (map.keys(), map.values());
            let offsets = map.value_offsets();
            for i in 0..array.len() {
                if array.is_null(i) {
                    sink.nulls(1);
                    continue;
                }
                if !sink.objects(1) {
                    continue;
                }
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                for (ordinal, e) in (start..end).enumerate() {
                    let key = cells::key_text(keys.as_ref(), e);
                    match sink.field(&key, ordinal) {
                        Some(mut f) => add_array(&mut f, values.slice(e, 1).as_ref()),
                        None => sink.dropped(1),
                    }
                }
            }
        }
        DataType::Dictionary(..) if dictionary_texts(sink, array) => {}
        DataType::Dictionary(..) => {
            // Read as the plain array of its values.
            let dictionary = array.as_any_dictionary();
            let indices: arrow_array::UInt64Array = dictionary
                .normalized_keys()
                .iter()
                .enumerate()
                .map(|(i, &k)| (!array.is_null(i)).then_some(k as u64))
                .collect();
            if let Ok(plain) =
                arrow_select::take::take(dictionary.values().as_ref(), &indices, None)
            {
                add_array(sink, plain.as_ref());
            }
        }
        _ => {
            for i in 0..array.len() {
                match cells::scalar(array, i) {
                    Some(s) => add_scalar(sink, s),
                    None => {
                        add_scalar(sink, Scalar::Text(cells::json(array, i).to_string().into()))
                    }
                }
            }
        }
    }
}

thread_local! {
    /// Each dictionary key's count in the batch, and the keys counted in order of first use
    /// (kept between batches: all zero again after each).
    static KEY_COUNTS: std::cell::RefCell<(Vec<u64>, Vec<u32>)> = Default::default();
}

/// A dictionary of texts (as a Parquet column of dictionary pages is read): each row's key
/// counted, then each value used added once with its count, in the order first used — so a
/// value's text is hashed once a batch instead of once a row. `false`, with nothing added, for
/// other dictionaries (their values are read as a plain array).
fn dictionary_texts(sink: &mut ColumnSink<'_>, array: &dyn Array) -> bool {
    let Some(dictionary) = array.as_dictionary_opt::<Int32Type>() else { return false };
    let Some(texts) = dictionary.values().as_string_opt::<i32>() else { return false };
    if texts.null_count() > 0 {
        return false;
    }
    let keys = dictionary.keys();
    KEY_COUNTS.with_borrow_mut(|(counts, used)| {
        counts.resize(counts.len().max(texts.len()), 0);
        let mut count = |key: i32| match usize::try_from(key).ok().and_then(|k| counts.get_mut(k)) {
            Some(n) => {
                if *n == 0 {
                    used.push(key as u32);
                }
                *n += 1;
                true
            }
            None => false,
        };
        let counted = match keys.nulls() {
            Some(valid) => valid.valid_indices().all(|i| count(keys.value(i))),
            None => keys.values().iter().all(|&k| count(k)),
        };
        if counted {
            sink.nulls(keys.null_count() as u64);
        }
        for key in used.drain(..) {
            let n = std::mem::take(&mut counts[key as usize]);
            if counted {
                sink.str_n(texts.value(key as usize), n);
            }
        }
        counted
    })
}

fn add_scalar(sink: &mut ColumnSink<'_>, s: Scalar<'_>) {
    match s {
        Scalar::Null => sink.nulls(1),
        Scalar::Bool(b) => sink.bool(b),
        Scalar::Int(v) => sink.integer(v),
        Scalar::Wide(v) => sink.wide_integer(v),
        Scalar::Float(v) => sink.float(v),
        Scalar::Text(t) => sink.str(&t),
    }
}

fn integers<T>(sink: &mut ColumnSink<'_>, array: &dyn Array)
where
    T: ArrowPrimitiveType,
    T::Native: Into<i64>,
{
    sink.nulls(array.null_count() as u64);
    array.as_primitive::<T>().iter().flatten().for_each(|v| sink.integer(v.into()));
}

fn doubles(sink: &mut ColumnSink<'_>, array: &dyn Array) {
    let doubles = array.as_primitive::<Float64Type>();
    let values = doubles.values();
    if array.null_count() == 0 && values.iter().all(|v| v.is_finite()) {
        sink.floats(values);
        return;
    }
    sink.nulls(array.null_count() as u64);
    doubles.iter().flatten().for_each(|v| add_scalar(sink, cells::float(v)));
}

/// Arrays: each non-null row's length, then every element of the rows that are not null.
fn lists(
    sink: &mut ColumnSink<'_>,
    array: &dyn Array,
    values: &dyn Array,
    range: impl Fn(usize) -> (usize, usize),
) {
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let mut descend = true;
    for i in 0..array.len() {
        if array.is_null(i) {
            sink.nulls(1);
            continue;
        }
        let (start, end) = range(i);
        descend &= sink.array((end - start) as u64);
        // Adjacent rows' elements are one slice.
        match kept.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ if end > start => kept.push((start, end)),
            _ => {}
        }
    }
    if !descend {
        return;
    }
    let mut elements = sink.elements();
    for (start, end) in kept {
        if end <= values.len() {
            add_array(&mut elements, values.slice(start, end - start).as_ref());
        }
    }
}
