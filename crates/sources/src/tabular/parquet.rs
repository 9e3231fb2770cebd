//! Parquet files: read by the `parquet` crate into Arrow batches, row groups shared out among
//! the cores, every value profiled (the file's column statistics are not enough for exact
//! distinct counts, medians and top values, so they are not used in place of the data).

use std::path::Path;

use super::{Budget, TableRead, TableWorker};
use crate::error::SourceError;
use crate::source::Progress;
use crate::stream::FileState;
use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

/// Rows per batch read for SQL.
const BATCH_ROWS: usize = 8_192;
/// Rows per batch read for the profile: fewer, larger batches spend less per batch (in the
/// reader, and per dictionary value used) — 5 % of a 10M-row profile against 8,192 — with no
/// more memory held (the profile reads one row group at a time, and keeps no batch).
const PROFILE_BATCH_ROWS: usize = 32_768;

fn parquet_error(path: &Path, e: impl std::fmt::Display) -> SourceError {
    SourceError::Table {
        path: path.to_path_buf(),
        message: format!("not a Parquet file this reader can read: {e}"),
    }
}

/// `path` opened again, refused unless it is still the file first opened (same size and times):
/// a file replaced meanwhile would mix one version's footer with another's pages.
fn reopen(path: &Path, first: &std::fs::Metadata) -> Result<std::fs::File, SourceError> {
    let (file, now) = crate::file::open_regular(path)?;
    let same = FileState::of(&now) == FileState::of(first);
    if !same {
        return Err(SourceError::Io {
            path: path.to_path_buf(),
            cause: std::io::Error::other(
                "the file changed while it was being read; read it again once it is written",
            ),
        });
    }
    Ok(file)
}

/// Stack of the threads that read a Parquet file: the `parquet` crate builds a file's schema
/// tree recursively, a frame of some kilobytes per level of nesting, before any limit of ours
/// can look at it (2 MiB overflowed at 350 levels; this reaches some ten thousand). Only the
/// pages a thread touches are memory.
const STACK_BYTES: usize = 64 << 20;

/// Deepest nesting read: the profile descends 64 levels (`ProfileLimits`).
const MAX_NESTING: usize = 64;

/// The levels of nesting of a type (a plain value is 0).
fn nesting(data_type: &arrow_schema::DataType) -> usize {
    use arrow_schema::DataType::*;
    match data_type {
        List(f)
        | LargeList(f)
        | FixedSizeList(f, _)
        | ListView(f)
        | LargeListView(f)
        | Map(f, _) => 1 + nesting(f.data_type()),
        Struct(fields) => 1 + fields.iter().map(|f| nesting(f.data_type())).max().unwrap_or(0),
        Dictionary(_, v) => nesting(v),
        RunEndEncoded(_, v) => nesting(v.data_type()),
        _ => 0,
    }
}

/// The Parquet file at `path` as a DataFusion table: that one file (its address is the file's
/// own, not a pattern, so no other file can match), with the schema its footer declares, read
/// by DataFusion's Parquet reader.
pub(crate) fn listing_table(
    path: &Path,
) -> Result<std::sync::Arc<dyn datafusion::catalog::TableProvider>, SourceError> {
    use datafusion::datasource::file_format::parquet::ParquetFormat;
    use datafusion::datasource::listing::{
        ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
    };
    let (file, _) = crate::file::open_regular(path)?;
    let schema = parquet::arrow::arrow_reader::ArrowReaderMetadata::load(&file, Default::default())
        .map_err(|e| parquet_error(path, e))?
        .schema()
        .clone();
    let absolute = std::fs::canonicalize(path)
        .map_err(|cause| SourceError::Io { path: path.to_path_buf(), cause })?;
    let url = url::Url::from_file_path(&absolute)
        .map_err(|()| parquet_error(path, "the path is not an absolute file path"))?;
    let table_url = ListingTableUrl::try_new(url, None).map_err(|e| parquet_error(path, e))?;
    // Nothing is skipped by statistics — the file's, its row groups', its pages' or bloom
    // filters: writers leave NaN out of a float column's min and max, so `x = 'NaN'` would skip
    // the parts holding it and count none.
    let mut parquet_options = ParquetFormat::default().options().clone();
    parquet_options.global.pruning = false;
    parquet_options.global.enable_page_index = false;
    parquet_options.global.bloom_filter_on_read = false;
    // Filters are not evaluated inside the reader either: measured on 10M rows, it made a join
    // 2.7 times slower (the join key's implied `IS NOT NULL` decoded its text twice) and held
    // four times the memory, for a top-k that gained less.
    let format = ParquetFormat::default().with_options(parquet_options);
    let options = ListingOptions::new(std::sync::Arc::new(format)).with_file_extension("");
    // Text columns are read as views of the pages' bytes, not copied into one buffer per
    // batch: DataFusion groups, compares and filters views without the copy (measured on 10M
    // rows: a group-by by a five-valued text 0.46 -> 0.27 s, a top-k 0.54 -> 0.45 s).
    let schema = retyped(&schema, |_, field| {
        matches!(
            field.data_type(),
            arrow_schema::DataType::Utf8 | arrow_schema::DataType::LargeUtf8
        )
        .then_some(arrow_schema::DataType::Utf8View)
    });
    let config =
        ListingTableConfig::new(table_url).with_listing_options(options).with_schema(schema);
    let table = ListingTable::try_new(config).map_err(|e| parquet_error(path, e))?;
    Ok(std::sync::Arc::new(table))
}

/// Profiles the Parquet file at `path` on every core. The `parquet` crate panics on some
/// corrupt files (a bad embedded Arrow schema, page lengths past their buffer): such a panic
/// is this file's error, not the process's end, so the reading runs on threads of its own and a
/// panic there is returned as "not a Parquet file this reader can read".
pub(crate) fn read(
    path: &Path,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    budget: &Budget,
) -> Result<TableRead, SourceError> {
    let joined = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("parquet".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || read_file(path, mode, progress, budget))
            .map(|h| h.join())
    });
    match joined {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the reader failed on it".into());
            Err(parquet_error(path, why))
        }
        Err(e) => Err(SourceError::Io { path: path.to_path_buf(), cause: e }),
    }
}

fn read_file(
    path: &Path,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    budget: &Budget,
) -> Result<TableRead, SourceError> {
    let (file, metadata) = crate::file::open_regular(path)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(
        file.try_clone().map_err(|e| SourceError::Io { path: path.to_path_buf(), cause: e })?,
    )
    .map_err(|e| parquet_error(path, e))?;
    let file_schema = builder.schema().clone();
    // Repeated column names told apart as the profile names them; read by the file's own.
    let names = repeated_names(&file_schema);
    let schema = match &names {
        Some(names) => with_names(&file_schema, names),
        None => file_schema.clone(),
    };
    let deepest =
        builder.schema().fields().iter().map(|f| nesting(f.data_type())).max().unwrap_or(0);
    if deepest > MAX_NESTING {
        return Err(SourceError::Table {
            path: path.to_path_buf(),
            message: format!(
                "a column is nested {deepest} levels deep; at most {MAX_NESTING} are read"
            ),
        });
    }
    let parquet_metadata = builder.metadata().clone();
    let groups: Vec<(usize, u64, i64)> = parquet_metadata
        .row_groups()
        .iter()
        .enumerate()
        .scan(0u64, |first, (i, g)| {
            let start = *first;
            *first += g.num_rows().max(0) as u64;
            Some((i, start, g.compressed_size()))
        })
        .collect();
    let rows: u64 = parquet_metadata.file_metadata().num_rows().max(0) as u64;
    let unpacked: i64 = parquet_metadata.row_groups().iter().map(|g| g.total_byte_size()).sum();
    let sample = &super::SampleRule::for_rows(rows, unpacked.max(0) as u64);
    let texts = &text_leaves(&schema, &parquet_metadata);
    let mapped =
        &mode.is_mapped().then(|| crate::read::map_shared(&file)).flatten().map(Mapped::new);
    let (file_schema, parquet_metadata, names) = (&file_schema, &parquet_metadata, &names);
    progress.start(metadata.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
    let workers = threads.min(groups.len()).max(1);
    let results: Vec<Result<TableWorker, SourceError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<(usize, u64, i64)> =
                    groups.iter().copied().skip(w).step_by(workers).collect();
                let file_metadata = &metadata;
                let spawned = std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(
                    scope,
                    move || -> Result<TableWorker, SourceError> {
                        let mut worker = budget.builder(workers);
                        for (group, first_row, size) in mine {
                            let read = read_schema(file_schema, texts, parquet_metadata, group);
                            // The group's batches renamed by one schema, made once.
                            let named = names.as_ref().map(|names| with_names(&read, names));
                            let options = ArrowReaderOptions::new().with_schema(read);
                            let metadata =
                                ArrowReaderMetadata::try_new(parquet_metadata.clone(), options)
                                    .map_err(|e| parquet_error(path, e))?;
                            // A handle of its own (clones of one share its position, and the
                            // reader seeks), opened only if the file is still the one first
                            // opened — a mapping shows a rewrite as it happens.
                            let own = reopen(path, file_metadata)?;
                            let reader = match mapped {
                                Some(mapped) => group_reader(mapped.bytes.clone(), metadata, group),
                                None => group_reader(own, metadata, group),
                            }
                            .map_err(|e| parquet_error(path, e))?;
                            let mut row = first_row;
                            for batch in reader {
                                let batch = batch.map_err(|e| parquet_error(path, e))?;
                                let batch = match &named {
                                    Some(named) => RecordBatch::try_new(
                                        named.clone(),
                                        batch.columns().to_vec(),
                                    )
                                    .map_err(|e| parquet_error(path, e))?,
                                    None => batch,
                                };
                                worker.add(&batch, row, sample);
                                row += batch.num_rows() as u64;
                            }
                            if let Some(mapped) = mapped {
                                mapped.release(parquet_metadata, group);
                            }
                            progress.advance(size.max(0) as u64);
                        }
                        Ok(worker)
                    },
                );
                spawned.map_err(|e| SourceError::Io { path: path.to_path_buf(), cause: e })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.and_then(|h| schemascope_core::sync::joined(h.join())))
            .collect()
    });
    // A file rewritten in place while its last groups were read (its size kept) would give
    // figures of neither version, or a decode error naming no cause: once more at the end, the
    // file must be the one first opened, before any result or error of the reading counts.
    reopen(path, &metadata)?;
    let mut read = TableRead::new(rows);
    for result in results {
        read.absorb(result?);
    }
    read.reread = Some(super::Reread::Parquet(ParquetFile {
        path: path.to_path_buf(),
        state: FileState::of(&metadata),
        schema: schema.clone(),
        row_groups: groups.len(),
    }));
    read.columns_of(schema);
    Ok(read)
}

/// A Parquet file mapped (under [`crate::ReadMode::map`]): its pages read by every row group's
/// reader without a copy into fresh buffers (5 % of a profile's time, in the kernel).
struct Mapped {
    map: std::sync::Arc<memmap2::Mmap>,
    bytes: bytes::Bytes,
}

/// The map's bytes as the `parquet` crate reads them.
struct MapBytes(std::sync::Arc<memmap2::Mmap>);

impl AsRef<[u8]> for MapBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Mapped {
    fn new(map: std::sync::Arc<memmap2::Mmap>) -> Self {
        Self { bytes: bytes::Bytes::from_owner(MapBytes(map.clone())), map }
    }

    /// Gives back the pages of row group `group` once it is read: a mapped file's pages count in
    /// the process's resident memory until then, and would grow with the file.
    fn release(&self, metadata: &ParquetMetaData, group: usize) {
        let Some(group) = metadata.row_groups().get(group) else { return };
        let ranges = group.columns().iter().map(|c| c.byte_range());
        let start = ranges.clone().map(|(start, _)| start).min().unwrap_or(0);
        let end = ranges.map(|(start, len)| start.saturating_add(len)).max().unwrap_or(0);
        let end = usize::try_from(end).unwrap_or(usize::MAX).min(self.map.len());
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(end);
        crate::stream::release(&self.map, start..end);
    }
}

/// The reader of row group `group` of the file `input`, whose footer `metadata` has read.
fn group_reader<T: parquet::file::reader::ChunkReader + 'static>(
    input: T,
    metadata: ArrowReaderMetadata,
    group: usize,
) -> Result<ParquetRecordBatchReader, parquet::errors::ParquetError> {
    ParquetRecordBatchReaderBuilder::new_with_metadata(input, metadata)
        .with_row_groups(vec![group])
        .with_batch_size(PROFILE_BATCH_ROWS)
        .build()
}

/// The top-level text columns of `schema` that are one Parquet column each: (the field's index,
/// its column's index). A file's fields are its schema's roots, in order.
fn text_leaves(schema: &arrow_schema::Schema, metadata: &ParquetMetaData) -> Vec<(usize, usize)> {
    use arrow_schema::DataType::{LargeUtf8, Utf8, Utf8View};
    let descriptor = metadata.file_metadata().schema_descr();
    let leaves: std::collections::HashMap<usize, usize> = (0..descriptor.num_columns())
        .filter(|&i| descriptor.column(i).path().parts().len() == 1)
        .map(|i| (descriptor.get_column_root_idx(i), i))
        .collect();
    schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(f.data_type(), Utf8 | LargeUtf8 | Utf8View))
        .filter_map(|(i, _)| Some((i, *leaves.get(&i)?)))
        .collect()
}

/// The schema to read row group `group` with for its profile: a text column (`texts`, from
/// [`text_leaves`]) whose every page is dictionary-encoded read as a dictionary, its values once
/// and a key per row, which the profile counts by key and hashes each value once a batch rather
/// than each row's text; any other text column as views of the pages' bytes rather than copies
/// of them (2–3 % of a profile). A column with plain pages is not read as a dictionary: the
/// reader would make one by hashing every row. Columns are named as `schema` names them.
fn read_schema(
    schema: &arrow_schema::SchemaRef,
    texts: &[(usize, usize)],
    metadata: &ParquetMetaData,
    group: usize,
) -> arrow_schema::SchemaRef {
    use arrow_schema::DataType;
    let columns = metadata.row_groups().get(group).map(|g| g.columns()).unwrap_or_default();
    retyped(schema, |index, _| {
        let &(_, leaf) = texts.iter().find(|&&(field, _)| field == index)?;
        Some(if columns.get(leaf).is_some_and(every_page_dictionary) {
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        } else {
            DataType::Utf8View
        })
    })
}

/// `schema` with the fields `retype` gives a type (by index and field) read as that type; names,
/// nullability and metadata kept.
fn retyped(
    schema: &arrow_schema::Schema,
    retype: impl Fn(usize, &arrow_schema::Field) -> Option<arrow_schema::DataType>,
) -> arrow_schema::SchemaRef {
    let fields: Vec<arrow_schema::FieldRef> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(index, field)| match retype(index, field) {
            Some(read) if field.data_type() != &read => {
                std::sync::Arc::new(field.as_ref().clone().with_data_type(read))
            }
            _ => field.clone(),
        })
        .collect();
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The names of `schema`'s columns with repeats told apart (`s`, `s_2`; see
/// [`super::distinct_names`]), as the profile and the rows shown name them; `None` when no name
/// repeats.
fn repeated_names(schema: &arrow_schema::Schema) -> Option<Vec<String>> {
    let names = super::distinct_names(schema.fields().iter().map(|f| f.name().clone()));
    let renamed = names.iter().zip(schema.fields()).any(|(n, f)| n != f.name());
    renamed.then_some(names)
}

/// `schema` with its columns named `names`.
fn with_names(schema: &arrow_schema::Schema, names: &[String]) -> arrow_schema::SchemaRef {
    let fields: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .zip(names)
        .map(|(f, name)| f.as_ref().clone().with_name(name))
        .collect();
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Whether every data page of `column` is dictionary-encoded, by its pages' encodings when the
/// file gives them, else by the chunk's (which must then name no plain encoding).
#[allow(deprecated)] // old writers name BIT_PACKED for the levels of dictionary-encoded pages
fn every_page_dictionary(column: &ColumnChunkMetaData) -> bool {
    use parquet::basic::Encoding::{BIT_PACKED, PLAIN_DICTIONARY, RLE, RLE_DICTIONARY};
    if column.dictionary_page_offset().is_none() {
        return false;
    }
    match column.page_encoding_stats_mask() {
        Some(pages) => pages.is_only(PLAIN_DICTIONARY) || pages.is_only(RLE_DICTIONARY),
        None => {
            column.encodings().any(|e| matches!(e, PLAIN_DICTIONARY | RLE_DICTIONARY))
                && column
                    .encodings()
                    .all(|e| matches!(e, PLAIN_DICTIONARY | RLE_DICTIONARY | RLE | BIT_PACKED))
        }
    }
}

/// A Parquet file served to SQL by this crate's own reader, a part (some of its row groups) at a
/// time, from the file as it was profiled: the files of a partitioned table, which DataFusion's
/// listing would find by listing their directories again at each statement.
#[derive(Debug)]
pub(crate) struct ParquetFile {
    path: std::path::PathBuf,
    state: FileState,
    schema: arrow_schema::SchemaRef,
    row_groups: usize,
}

impl crate::sql::BatchSource for ParquetFile {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.schema.clone()
    }

    fn parts(&self) -> usize {
        crate::sql::parts_for(self.row_groups)
    }

    fn read(
        &self,
        part: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(arrow_array::RecordBatch) -> bool,
    ) -> Result<(), String> {
        let groups: Vec<usize> = (part..self.row_groups).step_by(self.parts()).collect();
        if groups.is_empty() {
            return Ok(());
        }
        let (file, now) = crate::file::open_regular(&self.path).map_err(|e| e.to_string())?;
        if FileState::of(&now) != self.state {
            return Err(super::changed_since_loaded(&self.path));
        }
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| parquet_error(&self.path, e).to_string())?;
        // The reader gives the chosen columns in the file's order: put back in the asked one.
        let mut roots = projection.to_vec();
        roots.sort_unstable();
        roots.dedup();
        let order: Vec<usize> =
            projection.iter().map(|p| roots.binary_search(p).unwrap_or_default()).collect();
        let mask = parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), roots);
        let reader = builder
            .with_row_groups(groups)
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| parquet_error(&self.path, e).to_string())?;
        let schema =
            std::sync::Arc::new(self.schema.project(projection).map_err(|e| e.to_string())?);
        for batch in reader {
            let batch = batch.map_err(|e| parquet_error(&self.path, e).to_string())?;
            let columns = order.iter().map(|&i| batch.column(i).clone()).collect();
            let options =
                arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            let batch =
                arrow_array::RecordBatch::try_new_with_options(schema.clone(), columns, &options)
                    .map_err(|e| e.to_string())?;
            if !emit(batch) {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, LargeStringArray, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    use super::*;

    const GROUP_ROWS: usize = 4_000;

    /// Text columns of 20,000 rows: few values with nulls and unicode; few values in the first
    /// two row groups and distinct ones later (the dictionary overflows there); long and large
    /// texts; nulls alone.
    fn texts() -> RecordBatch {
        let rows = 20_000;
        let mut rng = fastrand::Rng::with_seed(30);
        let status: StringArray = (0..rows)
            .map(|i| {
                let pick = ["shipped", "delivered", "ünïcode ✓", ""][rng.usize(..4)];
                (i % 7 != 0).then_some(pick)
            })
            .collect();
        let customer: StringArray = (0..rows)
            .map(|i| {
                Some(if i < 2 * GROUP_ROWS {
                    format!("customer {}", rng.usize(..40))
                } else {
                    format!("c-{i:06} {}", "x".repeat(i % 50))
                })
            })
            .collect();
        let note: LargeStringArray = (0..rows)
            .map(|i| {
                let text =
                    if i % 11 == 0 { "long ".repeat(i % 90) } else { format!("note {}", i % 13) };
                (i % 3 != 0).then_some(text)
            })
            .collect();
        let empty: StringArray = (0..rows).map(|_| None::<&str>).collect();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("status", Arc::new(status)),
            ("customer", Arc::new(customer)),
            ("note", Arc::new(note)),
            ("empty", Arc::new(empty)),
        ];
        RecordBatch::try_from_iter(columns).expect("a batch")
    }

    fn write(path: &Path, dictionary: bool) {
        let properties = WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .set_dictionary_page_size_limit(32_768)
            .set_data_page_size_limit(1_024)
            .set_max_row_group_row_count(Some(GROUP_ROWS))
            .build();
        write_batch(path, &texts(), Some(properties));
    }

    /// `batch` written to `path` as a Parquet file.
    fn write_batch(path: &Path, batch: &RecordBatch, properties: Option<WriterProperties>) {
        let file = std::fs::File::create(path).expect("create");
        let mut writer = ArrowWriter::try_new(file, batch.schema(), properties).expect("a writer");
        writer.write(batch).expect("write");
        writer.close().expect("close");
    }

    /// The file at `path` loaded as a source.
    fn load(path: &Path) -> crate::Source {
        let spec: crate::SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        crate::load(&spec, &crate::NoProgress).expect("loads")
    }

    /// How each row group's text columns are read for the profile: "keys" (a dictionary) or
    /// "views" (of the pages' bytes), in column order.
    fn read_as(path: &Path) -> Vec<Vec<&'static str>> {
        let file = std::fs::File::open(path).expect("open");
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).expect("a reader");
        let (schema, metadata) = (builder.schema().clone(), builder.metadata().clone());
        let texts = text_leaves(&schema, &metadata);
        assert_eq!(texts.len(), 4);
        (0..metadata.num_row_groups())
            .map(|group| {
                let read = read_schema(&schema, &texts, &metadata, group);
                read.fields()
                    .iter()
                    .map(|f| match f.data_type() {
                        arrow_schema::DataType::Dictionary(..) => "keys",
                        arrow_schema::DataType::Utf8View => "views",
                        other => panic!("{} read as {other}", f.name()),
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn dictionary_pages_are_read_as_keys_plain_pages_as_views_and_both_profile_alike() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (keys, plain) = (dir.path().join("keys.parquet"), dir.path().join("plain.parquet"));
        write(&keys, true);
        write(&plain, false);
        let groups = read_as(&keys);
        assert_eq!(groups.len(), 5);
        // Every group's few-valued and null columns by key; the customers only while they are
        // few (the dictionary overflows into plain pages later).
        for (group, read) in groups.iter().enumerate() {
            let customer = if group < 2 { "keys" } else { "views" };
            assert_eq!(read, &["keys", customer, "keys", "keys"], "row group {group}");
        }
        assert!(read_as(&plain).iter().flatten().all(|&r| r == "views"));
        let (keys, plain) = (load(&keys), load(&plain));
        let profile = |s: &crate::Source| {
            serde_json::to_value(s.collections[0].profile()).expect("profile JSON")
        };
        assert_eq!(profile(&keys), profile(&plain));
        let rows = |s: &crate::Source| {
            s.collections[0].items().map(|i| i.json.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(rows(&keys), rows(&plain));
        let path = schemascope_core::PropertyPath::root().child("status");
        let status = keys.collections[0].profile().property(&path).expect("status");
        assert_eq!(status.distinct, 4);
        assert_eq!(status.nulls, 20_000 / 7 + 1);
    }

    /// Whole decimals are numbers, exactly, while a number of the profile holds them (below
    /// 2^116); larger ones are their digits' text: read as numbers they were rounded to doubles
    /// (10^37 and 10^37 + 1 counted as one value, shown as 9999999999999999538762658202121142272;
    /// the median of -2^126 and 2^126 shown as -0.25).
    #[test]
    fn whole_decimals_past_what_a_number_holds_exactly_are_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("decimals.parquet");
        let big = |digits: &str| digits.parse::<i128>().expect("an i128");
        let column = |values: Vec<i128>| -> ArrayRef {
            let array = arrow_array::Decimal128Array::from(values)
                .with_precision_and_scale(38, 0)
                .expect("decimal(38,0)");
            Arc::new(array)
        };
        let below = 1i128 << 115;
        let exact = column(vec![1, 3, below, -below]);
        let huge =
            column(vec![1, 3, big("10000000000000000000000000000000000000"), 10i128.pow(37) + 1]);
        let wide = column(vec![-(1i128 << 126), 1i128 << 126, 5, 7]);
        let batch = RecordBatch::try_from_iter([("exact", exact), ("huge", huge), ("wide", wide)])
            .expect("a batch");
        write_batch(&path, &batch, None);
        let source = load(&path);
        let profile = source.collections[0].profile();
        let property = |name: &str| {
            profile.property(&schemascope_core::PropertyPath::root().child(name)).expect(name)
        };
        let exact = property("exact");
        assert_eq!((exact.types.integer, exact.types.string, exact.distinct), (4, 0, 4));
        let numbers = exact.numbers.as_ref().expect("numbers");
        // The median of 1 and 3.
        assert_eq!(numbers.median, 2.0);
        let huge = property("huge");
        assert_eq!((huge.types.integer, huge.types.string, huge.distinct), (2, 2, 4));
        let strings = huge.strings.as_ref().expect("strings");
        let mut texts: Vec<String> = strings.top.iter().map(|t| t.value.to_string()).collect();
        texts.sort();
        assert_eq!(
            texts,
            [
                r#""10000000000000000000000000000000000000""#,
                r#""10000000000000000000000000000000000001""#
            ]
        );
        let wide = property("wide");
        assert_eq!((wide.types.integer, wide.types.string), (2, 2));
        let numbers = wide.numbers.as_ref().expect("numbers");
        assert_eq!((numbers.min, numbers.max, numbers.median), (5.0, 7.0, 6.0));
    }

    /// A file rewritten in place while it is read, its size kept, is refused as changed, mapped
    /// or copied: the reading gave figures of neither version.
    #[test]
    #[allow(unsafe_code)]
    fn a_file_rewritten_in_place_while_read_is_refused() {
        struct Rewrites<'a>(&'a Path, std::sync::Once);
        impl crate::source::Progress for Rewrites<'_> {
            fn advance(&self, _: u64) {
                self.1.call_once(|| {
                    use std::io::{Seek, Write};
                    let bytes = std::fs::read(self.0).expect("read");
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    // A page byte past the magic number: the size stays, the content does not.
                    // Written where it is, never truncated first: a mapped reader touching the
                    // file while it was empty got SIGBUS (once, under load).
                    let mut file =
                        std::fs::OpenOptions::new().write(true).open(self.0).expect("open");
                    file.seek(std::io::SeekFrom::Start(100)).expect("seek");
                    file.write_all(&[bytes[100] ^ 0xff]).expect("rewrite in place");
                });
            }
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rewritten.parquet");
        // SAFETY: the test's own file; the mapped reading is what the test checks.
        for mode in [crate::ReadMode::COPY, unsafe { crate::ReadMode::map() }] {
            write(&path, false);
            let budget = super::Budget { bytes: 4 << 20, spill: None };
            let progress = Rewrites(&path, std::sync::Once::new());
            let Err(error) = read(&path, mode, &progress, &budget) else {
                panic!("{mode:?}: a file rewritten while read was profiled");
            };
            let message = error.to_string();
            assert!(message.contains("changed while it was being read"), "{mode:?}: {message}");
        }
    }

    /// Two columns of one name are two properties (`s`, `s_2`), as a CSV's repeated header is:
    /// they were counted as one, twice as many values as rows.
    #[test]
    fn repeated_column_names_are_told_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("repeated.parquet");
        let few: StringArray = (0..1_000).map(|i| Some(format!("x{}", i % 3))).collect();
        let many: StringArray = (0..1_000).map(|i| Some(format!("y{i}"))).collect();
        let fields = vec![
            arrow_schema::Field::new("s", arrow_schema::DataType::Utf8, true),
            arrow_schema::Field::new("s", arrow_schema::DataType::Utf8, true),
        ];
        let columns: Vec<ArrayRef> = vec![Arc::new(few), Arc::new(many)];
        let batch = RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
            .expect("a batch");
        write_batch(&path, &batch, None);
        let source = load(&path);
        let profile = source.collections[0].profile();
        for (name, distinct) in [("s", 3), ("s_2", 1_000)] {
            let path = schemascope_core::PropertyPath::root().child(name);
            let property = profile.property(&path).expect("a property");
            assert_eq!((property.present, property.distinct), (1_000, distinct), "{name}");
        }
        let row = source.collections[0].items().next().expect("a row");
        assert_eq!(row.json.to_string(), r#"{"s":"x0","s_2":"y0"}"#);
    }
}
