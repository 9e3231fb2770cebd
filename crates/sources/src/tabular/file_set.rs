//! A table of many files (a directory of part files, or a Hive-style partitioned one: see
//! `folder::partitions`) read as one: each file profiled as it would be alone, its partition
//! keys added as columns of every row it holds, the counters merged into one profile under one
//! memory budget; its SQL table is the union of the files by column name.
//!
//! Files' columns are matched by name; one a file lacks is null in its rows. Where files
//! disagree on a column's type, integers and doubles are read as doubles and anything else as
//! text (a note on the column says so); a column that cannot be text (a list, a struct) and
//! disagrees leaves its file out with a warning.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use schemascope_core::ProfileBuilder;

use super::{ALL_ROWS_UP_TO, Budget, Reread, SAMPLE_ROWS, TableFormat, read_file, rows_collection};
use crate::error::{LoadWarning, SourceError};
use crate::folder::partitions::{FileSet, KeyType, KeyValue};
use crate::source::Progress;
use crate::spec::SourceSpec;
use crate::sql::{BatchSource, FileUnion, PartitionedTable, ServedTable, UnionMember};

/// Warnings of the files themselves (a CSV file's reading choices, its bad rows) kept per
/// table: the rest are counted.
const FILE_WARNINGS_KEPT: usize = 20;

/// A file set, read.
pub(crate) struct FileSetRead {
    pub collection: schemascope_core::Collection,
    pub table: ServedTable,
    pub warnings: Vec<LoadWarning>,
    /// Bytes of the files read.
    pub bytes: u64,
}

/// A row kept as an item: its rank (the sample keeps the lowest), file, row in the file, and
/// text.
struct KeptRow {
    rank: u64,
    file: usize,
    row: u64,
    json: String,
}

/// Reads the files of `set` as one table named `set.name` (see the module docs).
pub(crate) fn read_file_set(
    spec: &SourceSpec,
    set: &FileSet,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<FileSetRead, SourceError> {
    // Half the budget for the file being read, half for what the files before it counted:
    // together within the one budget.
    let whole = Budget::of(spec);
    let budget = Budget { bytes: whole.bytes / 2, spill: whole.spill };
    let mut warnings: Vec<LoadWarning> = set.left_out.iter().map(LoadWarning::new).collect();
    let mut file_warnings = 0usize;
    let mut said = std::collections::HashSet::new();
    let mut total: Option<ProfileBuilder> = None;
    let mut columns = Columns::default();
    let mut members = Vec::new();
    let mut kept: Vec<KeptRow> = Vec::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    for (index, file) in set.files.iter().enumerate() {
        let shown = &file.relative;
        let left_out = |why: String| LoadWarning::new(format!("{shown} is left out: {why}"));
        let format = match crate::load::table_format(&file.path, None) {
            Some(format @ (TableFormat::Csv | TableFormat::Parquet)) => format,
            None => {
                warnings.push(left_out(
                    "only CSV and Parquet files are read as parts of a table".into(),
                ));
                continue;
            }
        };
        let read = match read_file(&file.path, format, mode, progress, &budget) {
            Ok(read) => read,
            Err(e) => {
                warnings.push(left_out(e.to_string()));
                continue;
            }
        };
        let Some(schema) = read.schema.clone() else { continue };
        if let Some(key) = set.keys.iter().find(|k| schema.index_of(k).is_ok()) {
            warnings.push(left_out(format!("its column `{key}` has the name of a partition key")));
            continue;
        }
        // A file without rows (a header-only CSV part, as Spark writes for an empty partition)
        // says nothing of its columns' types, nor does a CSV column without a value.
        let untyped: Vec<String> = match &read.reread {
            _ if read.rows == 0 => schema.fields().iter().map(|f| f.name().clone()).collect(),
            Some(Reread::Csv(csv)) => csv.valueless_columns().map(str::to_string).collect(),
            _ => Vec::new(),
        };
        if let Err(why) = columns.add(&schema, &untyped) {
            warnings.push(left_out(why));
            continue;
        }
        let source: Arc<dyn BatchSource> = match read.reread {
            Some(Reread::Csv(csv)) => Arc::new(csv),
            Some(Reread::Parquet(parquet)) => Arc::new(parquet),
            None => {
                warnings.push(left_out("its rows cannot be read again for SQL".into()));
                continue;
            }
        };
        let values: Vec<KeyValue<'_>> =
            set.types.iter().zip(&file.values).map(|(t, v)| t.value(v.as_deref())).collect();
        let mut builder = read.builder.unwrap_or_default();
        for (j, (key, value)) in set.keys.iter().zip(&values).enumerate() {
            let Some(mut sink) = builder.column(key, schema.fields().len() + j) else {
                builder.dropped(read.rows);
                continue;
            };
            match value {
                KeyValue::Null => sink.nulls(read.rows),
                KeyValue::Integer(v) => sink.integer_n(*v, read.rows),
                KeyValue::Text(t) => sink.str_n(t, read.rows),
            }
        }
        match &mut total {
            Some(merged) => {
                merged.merge(builder);
                merged.fit_budget(budget.bytes);
            }
            None => total = Some(builder),
        }
        for w in read.warnings {
            // What every file says alike (how a CSV file is read) is said once.
            if !said.insert(w.message.clone()) {
                continue;
            }
            file_warnings += 1;
            if file_warnings <= FILE_WARNINGS_KEPT {
                warnings.push(LoadWarning { message: format!("{shown}: {}", w.message), ..w });
            }
        }
        let members_text = key_members(&set.keys, &values);
        kept.extend(read.rows_kept.into_iter().map(|(row, json)| KeptRow {
            rank: crate::stream::rank(row),
            file: index,
            row,
            json: with_members(json, &members_text),
        }));
        rows += read.rows;
        if rows > ALL_ROWS_UP_TO && kept.len() > SAMPLE_ROWS as usize {
            // The lowest ranks of all rows so far: each file kept at least its own lowest.
            kept.select_nth_unstable_by_key(SAMPLE_ROWS as usize, |k| (k.rank, k.file));
            kept.truncate(SAMPLE_ROWS as usize);
        }
        let constants = set.types.iter().zip(&values).map(|(t, v)| scalar(*t, v)).collect();
        members.push(UnionMember { source, constants });
        bytes += std::fs::metadata(&file.path).map_or(0, |m| m.len());
    }
    if file_warnings > FILE_WARNINGS_KEPT {
        warnings.push(LoadWarning::new(format!(
            "{} more warnings of its files are not listed",
            file_warnings - FILE_WARNINGS_KEPT
        )));
    }
    if members.is_empty() {
        return Err(SourceError::InvalidSpec {
            spec: set.dir.display().to_string(),
            reason: format!(
                "no file of the table `{}` could be read: {}",
                set.name,
                warnings.iter().map(|w| w.message.as_str()).collect::<Vec<_>>().join("; ")
            ),
        });
    }
    let profile = total.unwrap_or_default().finish(rows);
    crate::stream::check_spill(
        &set.dir,
        &profile,
        whole.bytes,
        budget.spill.as_ref(),
        &mut warnings,
    )?;
    kept.sort_by_key(|k| (k.file, k.row));
    let items = kept.into_iter().map(|k| {
        let relative = set.files.get(k.file).map_or("", |f| f.relative.as_str());
        (format!("{relative}#{}", k.row + 1), k.json)
    });
    let collection = rows_collection(&set.name, items, profile, rows, &mut warnings);
    let mut fields = columns.fields;
    let mut notes = columns.notes;
    for (key, key_type) in set.keys.iter().zip(&set.types) {
        let data_type = match key_type {
            KeyType::Integer => DataType::Int64,
            KeyType::Text => DataType::Utf8,
        };
        fields.push(Field::new(key, data_type, true));
        notes.push((
            key.clone(),
            format!("partition key: the value of the `{key}=…` directory each row's file lies in"),
        ));
    }
    let union = FileUnion::new(Arc::new(Schema::new(fields)), members);
    let table = ServedTable {
        name: set.name.clone(),
        provider: Arc::new(PartitionedTable(Arc::new(union))),
        row_count: Some(rows),
        notes,
    };
    progress.finish();
    Ok(FileSetRead { collection, table, warnings, bytes })
}

/// The columns of the files read so far, with notes on those whose types differ.
#[derive(Default)]
struct Columns {
    fields: Vec<Field>,
    notes: Vec<(String, String)>,
}

impl Columns {
    /// Adds the columns of `schema`; `Err` says why its file cannot be read with the others.
    fn add(&mut self, schema: &Schema, untyped: &[String]) -> Result<(), String> {
        let mut fields = self.fields.clone();
        let mut notes = Vec::new();
        for field in schema.fields() {
            let theirs =
                if untyped.contains(field.name()) { &DataType::Null } else { field.data_type() };
            let Some(at) = fields.iter().position(|f| f.name() == field.name()) else {
                fields.push(Field::new(field.name(), theirs.clone(), true));
                continue;
            };
            let ours = fields[at].data_type().clone();
            let joined = match (&ours, theirs) {
                _ if &ours == theirs => continue,
                (DataType::Null, _) => theirs.clone(),
                (_, DataType::Null) => continue,
                (a, b) if is_text(a) && is_text(b) => DataType::Utf8,
                (a, b) if a.is_integer() && b.is_integer() => wider_integer(a, b),
                // A CSV file's integers past `i64` (see `csv.rs`) beside other integers.
                (a, b) if is_whole(a) && is_whole(b) => DataType::Decimal128(20, 0),
                (a, b) if (is_number(a) || is_whole(a)) && (is_number(b) || is_whole(b)) => {
                    DataType::Float64
                }
                (a, b) if is_scalar(a) && is_scalar(b) => {
                    notes.push((
                        field.name().clone(),
                        format!(
                            "files differ in this column's type ({ours} and {theirs}): read as text"
                        ),
                    ));
                    DataType::Utf8
                }
                _ => {
                    return Err(format!(
                        "its column `{}` is {theirs} where the files before it have {ours}",
                        field.name()
                    ));
                }
            };
            fields[at] = Field::new(field.name(), joined, true);
        }
        self.fields = fields;
        for note in notes {
            if !self.notes.iter().any(|(name, _)| *name == note.0) {
                self.notes.push(note);
            }
        }
        Ok(())
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The integer type that holds every value of both: 64 bits, or a 20-digit decimal for signed
/// beside unsigned 64-bit values.
fn wider_integer(a: &DataType, b: &DataType) -> DataType {
    let unsigned = |t: &DataType| t.is_unsigned_integer();
    let wide = |t: &DataType| matches!(t, DataType::Int64 | DataType::UInt64);
    match (unsigned(a), unsigned(b)) {
        (true, true) => DataType::UInt64,
        (false, false) => DataType::Int64,
        _ if wide(a) || wide(b) => DataType::Decimal128(20, 0),
        _ => DataType::Int64,
    }
}

/// An integer type, or the 20-digit decimal that holds every `i64` and `u64`.
fn is_whole(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Decimal128(20, 0))
}

fn is_number(t: &DataType) -> bool {
    t.is_integer() || t.is_floating()
}

/// A type whose values can be written as text.
fn is_scalar(t: &DataType) -> bool {
    !t.is_nested() && datafusion::arrow::compute::can_cast_types(t, &DataType::Utf8)
}

/// A partition value in its column.
fn scalar(key_type: KeyType, value: &KeyValue<'_>) -> ScalarValue {
    match (key_type, value) {
        (_, KeyValue::Integer(v)) => ScalarValue::Int64(Some(*v)),
        (KeyType::Integer, _) => ScalarValue::Int64(None),
        (KeyType::Text, KeyValue::Text(t)) => ScalarValue::Utf8(Some(t.to_string())),
        (KeyType::Text, KeyValue::Null) => ScalarValue::Utf8(None),
    }
}

/// The partition keys as JSON members (`"year":2024,"region":"eu"`).
fn key_members(keys: &[String], values: &[KeyValue<'_>]) -> String {
    keys.iter()
        .zip(values)
        .map(|(key, value)| {
            let value = match value {
                KeyValue::Null => serde_json::Value::Null,
                KeyValue::Integer(v) => serde_json::Value::from(*v),
                KeyValue::Text(t) => serde_json::Value::from(*t),
            };
            format!("{}:{value}", serde_json::Value::from(key.as_str()))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A row's JSON object text with `members` added at its end.
fn with_members(mut json: String, members: &str) -> String {
    if members.is_empty() || !json.ends_with('}') {
        return json;
    }
    json.pop();
    if !json.ends_with('{') {
        json.push(',');
    }
    json.push_str(members);
    json.push('}');
    json
}
