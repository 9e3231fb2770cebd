//! The column-at-a-time profile of a table held to the profile of the same rows written as
//! JSON objects (as the items show them), field by field, on batches of every type the readers
//! produce, with nulls at every level.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::types::*;
use arrow_array::*;
use arrow_schema::{DataType, Field, Fields};
use schemascope_core::ProfileBuilder;

use super::{arrow_columns, row_json};

fn batch() -> RecordBatch {
    let n = 600usize;
    let ints: Int64Array = (0..n).map(|i| (i % 7 != 0).then_some(i as i64 * 3 - 900)).collect();
    let big: UInt64Array = (0..n).map(|i| (i % 5 != 0).then_some(u64::MAX - i as u64)).collect();
    let doubles: Float64Array = (0..n)
        .map(|i| match i % 11 {
            0 => None,
            1 => Some(f64::NAN),
            2 => Some(f64::INFINITY),
            _ => Some(i as f64 / 8.0 - 20.0),
        })
        .collect();
    let narrow: Float32Array = (0..n).map(|i| (i % 3 != 0).then_some(i as f32 * 0.1)).collect();
    let text: StringArray = (0..n).map(|i| (i % 4 != 0).then(|| format!("v{}é", i % 37))).collect();
    let flags: BooleanArray = (0..n).map(|i| (i % 6 != 0).then_some(i % 4 == 1)).collect();
    let decimals = Decimal128Array::from(
        (0..n).map(|i| (i % 9 != 0).then_some(i as i128 * 1_234 - 50_000)).collect::<Vec<_>>(),
    )
    .with_precision_and_scale(12, 3)
    .expect("decimal type");
    let stamps = TimestampMillisecondArray::from(
        (0..n)
            .map(|i| (i % 8 != 0).then_some(1_700_000_000_000 + i as i64 * 250))
            .collect::<Vec<_>>(),
    )
    .with_timezone("Europe/Paris");
    let dates: Date32Array = (0..n).map(|i| (i % 10 != 0).then_some(19_000 + i as i32)).collect();
    let mut lists = ListBuilder::new(Int64Builder::new());
    for i in 0..n {
        if i % 5 == 0 {
            lists.append_null();
        } else {
            for j in 0..(i % 4) {
                lists.values().append_option((j != 2).then_some((i * j) as i64 % 13));
            }
            lists.append(true);
        }
    }
    let inner_text: StringArray =
        (0..n).map(|i| (i % 3 != 1).then(|| format!("k{}", i % 5))).collect();
    let inner_ints: Int64Array = (0..n).map(|i| (i % 2 == 0).then_some(i as i64)).collect();
    let struct_fields = Fields::from(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("rank", DataType::Int64, true),
    ]);
    let valid = arrow_buffer_nulls(n, |i| i % 7 != 3);
    let structs = StructArray::new(
        struct_fields,
        vec![Arc::new(inner_text), Arc::new(inner_ints)],
        Some(valid),
    );
    let mut words = StringBuilder::new();
    for i in 0..n {
        words.append_value(["red", "green", "blue"][i % 3]);
    }
    let dictionary: DictionaryArray<Int32Type> = words.finish().iter().collect();
    RecordBatch::try_from_iter(vec![
        ("ints", Arc::new(ints) as ArrayRef),
        ("big", Arc::new(big)),
        ("doubles", Arc::new(doubles)),
        ("narrow", Arc::new(narrow)),
        ("text", Arc::new(text)),
        ("flags", Arc::new(flags)),
        ("decimals", Arc::new(decimals)),
        ("stamps", Arc::new(stamps)),
        ("dates", Arc::new(dates)),
        ("lists", Arc::new(lists.finish())),
        ("structs", Arc::new(structs)),
        ("dictionary", Arc::new(dictionary)),
        (
            "naive",
            Arc::new(TimestampMicrosecondArray::from(
                vec![Some(1), None, Some(-1_500_000)]
                    .into_iter()
                    .cycle()
                    .take(n)
                    .collect::<Vec<_>>(),
            )),
        ),
    ])
    .expect("batch")
}

fn arrow_buffer_nulls(n: usize, valid: impl Fn(usize) -> bool) -> arrow_buffer::NullBuffer {
    (0..n).map(valid).collect::<Vec<bool>>().into()
}

#[test]
fn columns_profile_as_their_rows_written_as_json() {
    let batch = batch();
    let rows = batch.num_rows() as u64;
    let mut by_columns = ProfileBuilder::new();
    // Two halves, as two batches arrive.
    arrow_columns::add_batch(&mut by_columns, &batch.slice(0, 250));
    arrow_columns::add_batch(&mut by_columns, &batch.slice(250, batch.num_rows() - 250));
    let mut by_rows = ProfileBuilder::new();
    for i in 0..batch.num_rows() {
        by_rows.add_json(&row_json(&batch, i)).expect("a row is JSON");
    }
    let columns = serde_json::to_value(by_columns.finish(rows)).expect("profile");
    let json = serde_json::to_value(by_rows.finish(rows)).expect("profile");
    assert_eq!(columns, json);
    // The reading is what the module docs say.
    let first = row_json(&batch, 1);
    assert!(first.contains(r#""stamps":"2023-11-14T22:13:20.25+00:00""#), "{first}");
    assert!(first.contains(r#""doubles":"NaN""#), "{first}");
    assert!(first.contains(r#""decimals":-48.766"#), "{first}");
}

/// A column forgotten and added again, as another type, is counted as if only the second
/// reading had happened, in its place among the columns; the others are untouched.
#[test]
fn a_forgotten_column_counts_only_what_is_added_again() {
    let batch = batch();
    let rows = batch.num_rows() as u64;
    let as_text = |i: usize| -> ArrayRef {
        let column = batch.column(i);
        let texts: StringArray =
            (0..column.len()).map(|row| column.is_valid(row).then(|| format!("t{row}"))).collect();
        Arc::new(texts)
    };
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[0] = as_text(0);
    let fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .enumerate()
        .map(
            |(i, f)| {
                if i == 0 { Field::new(f.name(), DataType::Utf8, true) } else { (**f).clone() }
            },
        )
        .collect();
    let retyped =
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).expect("batch");
    let mut again = ProfileBuilder::new();
    arrow_columns::add_batch(&mut again, &batch);
    again.forget_column("ints");
    arrow_columns::add_columns(&mut again, &retyped, [0]);
    let mut once = ProfileBuilder::new();
    arrow_columns::add_batch(&mut once, &retyped);
    let again = serde_json::to_value(again.finish(rows)).expect("profile");
    let once = serde_json::to_value(once.finish(rows)).expect("profile");
    assert_eq!(again, once);
    assert_eq!(again["root"]["children"][0]["profile"]["path"], "ints", "{again}");
}
