//! Files that are tables: CSV/TSV (`csv.rs`) and Parquet (`parquet.rs`). Either is read into
//! Arrow record batches on every core, profiled a column at a time (every value, exact, as the
//! same rows written as JSON objects would be: `cells.rs`, `arrow_columns.rs`) and served as one
//! document collection whose items are its rows: all of them for a small file, otherwise a
//! uniform sample of about [`SAMPLE_ROWS`] rows, or of about [`KEPT_BYTES_UP_TO`] bytes of long
//! rows (said in a warning, as a streamed NDJSON file's sample is).

pub(crate) mod arrow_columns;
pub(crate) mod cells;
mod csv;
#[cfg(test)]
mod differential;
mod file_set;
mod parquet;

use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use schemascope_core::profile::Spill;
use schemascope_core::{Collection, CollectionKind, ItemEntry, ItemId, ProfileBuilder};

use crate::error::{LoadWarning, SourceError};
use crate::source::{Progress, Source};
use crate::spec::{Format, SourceSpec};

pub(crate) use self::file_set::read_file_set;

/// Files with at most this many rows keep every row as an item.
pub const ALL_ROWS_UP_TO: u64 = 100_000;
/// About how many rows a larger file keeps as its sample.
pub const SAMPLE_ROWS: u64 = 2_000;

/// Which of a table's rows become items.
pub(crate) struct SampleRule {
    /// Rows whose rank is below this are kept (`u64::MAX`: every row).
    below: u64,
}

/// About how many bytes of a table's rows are kept at most: a file of fewer rows than
/// [`ALL_ROWS_UP_TO`] but long ones keeps a sample too (99,000 rows of 3 KB once held 900 MB).
pub const KEPT_BYTES_UP_TO: u64 = 32 << 20;

impl SampleRule {
    /// The rule for a table of `rows` rows in `bytes` bytes (its text, or its data uncompressed).
    pub(crate) fn for_rows(rows: u64, bytes: u64) -> Self {
        let mut share = if rows <= ALL_ROWS_UP_TO { 1.0 } else { SAMPLE_ROWS as f64 / rows as f64 };
        if bytes > KEPT_BYTES_UP_TO {
            share = share.min(KEPT_BYTES_UP_TO as f64 / bytes as f64);
        }
        let below = if share >= 1.0 { u64::MAX } else { (u64::MAX as f64 * share) as u64 };
        Self { below }
    }

    fn keeps(&self, row: u64) -> bool {
        // The rank streamed NDJSON samples lines by: a row's number mixed, the same every run.
        self.below == u64::MAX || crate::stream::rank(row) < self.below
    }
}

/// The memory the counters of a table's profile may hold, as a streamed NDJSON file's may
/// ([`crate::stream::StreamOptions`]): a budget shared by the cores, past which the heaviest
/// properties' exact counters are spilled to scratch files.
pub(crate) struct Budget {
    bytes: usize,
    spill: Option<Spill>,
}

impl Budget {
    /// A builder for one of `workers` cores, with its share of the budget.
    pub(crate) fn builder(&self, workers: usize) -> TableWorker {
        let builder = match &self.spill {
            Some(spill) => ProfileBuilder::new().spill_to(spill.clone()),
            None => ProfileBuilder::new(),
        };
        let workers = workers.max(1);
        TableWorker {
            builder,
            rows: Vec::new(),
            share: self.bytes / workers,
            unfitted: 0,
            unfitted_bytes: 0,
            profiled: None,
        }
    }
}

/// What one core read: its counters and the rows it kept, by row number.
pub(crate) struct TableWorker {
    builder: ProfileBuilder,
    rows: Vec<(u64, String)>,
    /// Its share of the budget, in bytes.
    share: usize,
    /// Values added since the counters were last fitted, and their batches' bytes.
    unfitted: u64,
    unfitted_bytes: usize,
    /// The columns it profiles, when not all (by index): the others are read for the rows
    /// kept alone.
    profiled: Option<Vec<usize>>,
}

/// Values (rows times columns) between two fittings of a worker's counters into its budget, as
/// a streamed NDJSON file is fitted once a block. Each fitting may spill a chunk, and every
/// chunk costs a read-ahead buffer when the profile is finished: fitted after every batch, a
/// small budget made thousands of chunks that together held more than a larger budget (a 1 MiB
/// budget peaked at 567 MB on 40M integers).
const FIT_EVERY_VALUES: u64 = 1 << 20;

/// Bytes of batches between two fittings, at least (else a quarter of the worker's share): long
/// texts fill a budget in far fewer values than [`FIT_EVERY_VALUES`] (1.2M texts of 200 bytes
/// peaked at 400 MB whatever the budget).
const FIT_EVERY_BYTES: usize = 8 << 20;

impl TableWorker {
    /// The worker profiling only `columns` (by index; `None`: all).
    pub(crate) fn profiling(mut self, columns: Option<&[usize]>) -> Self {
        self.profiled = columns.map(<[usize]>::to_vec);
        self
    }

    /// Forgets every value counted for the column `name` (to count them again).
    pub(crate) fn forget_column(&mut self, name: &str) {
        self.builder.forget_column(name);
    }

    /// Profiles `batch`, whose first row is row `first` of the file, keeping the rows `sample`
    /// keeps as JSON text, then fits the counters into the worker's share of the budget.
    pub(crate) fn add(&mut self, batch: &RecordBatch, first: u64, sample: &SampleRule) {
        match &self.profiled {
            Some(columns) => {
                arrow_columns::add_columns(&mut self.builder, batch, columns.iter().copied())
            }
            None => arrow_columns::add_batch(&mut self.builder, batch),
        }
        self.unfitted += (batch.num_rows() * batch.num_columns().max(1)) as u64;
        self.unfitted_bytes += batch.get_array_memory_size();
        let bytes = (self.share / 4).max(FIT_EVERY_BYTES);
        if self.unfitted >= FIT_EVERY_VALUES || self.unfitted_bytes >= bytes {
            self.unfitted = 0;
            self.unfitted_bytes = 0;
            self.builder.fit_budget(self.share);
        }
        for i in 0..batch.num_rows() {
            let row = first + i as u64;
            if sample.keeps(row) {
                self.rows.push((row, row_json(batch, i)));
            }
        }
    }
}

/// `names` with each repeat given a suffix, `_2`, `_3`, …: a table's columns are its
/// properties, found by name, so two columns of one name would be counted as one (a CSV header,
/// a Parquet file's columns).
pub(crate) fn distinct_names(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .map(|base| {
            let mut name = base.clone();
            let mut n = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        })
        .collect()
}

/// Row `i` of `batch` as a JSON object's text.
fn row_json(batch: &RecordBatch, i: usize) -> String {
    let schema = batch.schema();
    let object: serde_json::Map<String, serde_json::Value> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| (f.name().clone(), cells::json(c.as_ref(), i)))
        .collect();
    serde_json::Value::Object(object).to_string()
}

impl Budget {
    /// The budget `spec` sets, or the default one, spilling where spills go.
    pub(crate) fn of(spec: &SourceSpec) -> Self {
        let bytes = spec.limits.memory_budget.unwrap_or_else(crate::stream::memory_budget);
        let spill =
            crate::stream::spill_options().as_ref().map(crate::scratch::SpillOptions::spill);
        Self { bytes, spill }
    }
}

/// Reads the table file at `path` into counters not yet finished.
fn read_file(
    path: &Path,
    format: TableFormat,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    budget: &Budget,
) -> Result<TableRead, SourceError> {
    match format {
        TableFormat::Parquet => parquet::read(path, mode, progress, budget),
        TableFormat::Csv => csv::read(path, mode, progress, budget),
    }
}

/// A table's collection: the rows kept (by id, as JSON objects' text, in order) as its items
/// and `profile`, of all `rows`; a sample says so in `warnings`.
fn rows_collection(
    name: &str,
    kept: impl Iterator<Item = (String, String)>,
    profile: schemascope_core::CollectionProfile,
    rows: u64,
    warnings: &mut Vec<LoadWarning>,
) -> Collection {
    let mut text = String::new();
    let mut entries = Vec::new();
    for (id, json) in kept {
        let start = text.len();
        text.push_str(&json);
        text.push('\n');
        entries.push(ItemEntry::new(ItemId::Owned(id.into()), start..start + json.len()));
    }
    let kept = entries.len() as u64;
    let collection =
        Collection::new(name, CollectionKind::Documents, Arc::new(text.into()), entries, profile);
    if kept >= rows {
        return collection;
    }
    warnings.push(LoadWarning::new(format!(
        "every one of the {rows} rows is profiled; {kept} of them are kept as a uniform sample, which sample_data, find_items and selections read"
    )));
    collection.sampled_from(rows)
}

/// A table file whose rows this crate reads again for SQL.
pub(crate) enum Reread {
    /// Its parts, by the profile's own reader.
    Csv(csv::CsvTable),
    /// Its row groups.
    Parquet(parquet::ParquetFile),
}

/// Everything the cores read, merged.
pub(crate) struct TableRead {
    builder: Option<ProfileBuilder>,
    rows_kept: Vec<(u64, String)>,
    rows: u64,
    warnings: Vec<LoadWarning>,
    /// The file as its rows are read again for SQL, as it was when profiled.
    reread: Option<Reread>,
    /// The columns read.
    schema: Option<arrow_schema::SchemaRef>,
}

impl TableRead {
    pub(crate) fn new(rows: u64) -> Self {
        Self {
            builder: None,
            rows_kept: Vec::new(),
            rows,
            warnings: Vec::new(),
            reread: None,
            schema: None,
        }
    }

    /// The table's columns are `schema`'s. Each is a property even when no row was read: an
    /// empty table's columns are facts too (each with no value).
    pub(crate) fn columns_of(&mut self, schema: arrow_schema::SchemaRef) {
        self.schema = Some(schema.clone());
        if self.rows == 0 {
            let mut builder = self.builder.take().unwrap_or_default();
            arrow_columns::add_batch(&mut builder, &RecordBatch::new_empty(schema));
            self.builder = Some(builder);
        }
    }

    pub(crate) fn absorb(&mut self, worker: TableWorker) {
        match &mut self.builder {
            Some(b) => b.merge(worker.builder),
            None => self.builder = Some(worker.builder),
        }
        self.rows_kept.extend(worker.rows);
    }
}

/// Why a served table file can no longer be read as it was loaded.
pub(crate) fn changed_since_loaded(path: &Path) -> String {
    format!(
        "{} changed since it was loaded: its new content is read once the source is loaded again (a file served alone reloads by itself; a folder's files are not watched, so restart the server or edit its configuration to reload it)",
        path.display()
    )
}

/// The format of a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Comma-, tab-, semicolon- or bar-separated values.
    Csv,
    /// Apache Parquet.
    Parquet,
}

impl TableFormat {
    /// The table format a file's name or first bytes say, if any: `.csv`, `.tsv`, `.tab`,
    /// `.parquet`, `.pq`, or Parquet's `PAR1` magic.
    pub fn of_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "csv" | "tsv" | "tab" => Some(Self::Csv),
            "parquet" | "pq" => Some(Self::Parquet),
            _ => None,
        }
    }

    fn format(self) -> Format {
        match self {
            Self::Csv => Format::Csv,
            Self::Parquet => Format::Parquet,
        }
    }
}

/// Loads the table file at `path`: see the module docs. Its SQL is the embedded engine's, over
/// this one file.
pub fn load_table(
    spec: &SourceSpec,
    path: &Path,
    format: TableFormat,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<Source, SourceError> {
    let (mut source, table) = read_table(spec, path, format, mode, progress)?;
    let database = crate::sql::DataFusionDatabase::new(path.display().to_string(), vec![table])?;
    source.database = Some(Arc::new(database));
    Ok(source)
}

/// The table file at `path` as a source with no SQL of its own, and its table for the engine.
pub(crate) fn read_table(
    spec: &SourceSpec,
    path: &Path,
    format: TableFormat,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<(Source, crate::sql::ServedTable), SourceError> {
    let budget = Budget::of(spec);
    let read = read_file(path, format, mode, progress, &budget)?;
    let TableRead { builder, mut rows_kept, rows, mut warnings, reread, schema: _ } = read;
    let profile = builder.unwrap_or_default().finish(rows);
    crate::stream::check_spill(path, &profile, budget.bytes, budget.spill.as_ref(), &mut warnings)?;
    rows_kept.sort_by_key(|r| r.0);
    // Rows are numbered from 1 as a person counts them (a CSV's header is not a row).
    let kept = rows_kept.into_iter().map(|(row, json)| (format!("#{}", row + 1), json));
    let collection = rows_collection(&spec.name, kept, profile, rows, &mut warnings);
    progress.finish();
    // A Parquet file alone is read by DataFusion's own reader, on every core.
    let provider: Arc<dyn datafusion::catalog::TableProvider> = match reread {
        Some(Reread::Csv(csv)) => Arc::new(crate::sql::PartitionedTable(Arc::new(csv))),
        Some(Reread::Parquet(_)) | None => parquet::listing_table(path)?,
    };
    let table = crate::sql::ServedTable {
        name: spec.name.clone(),
        provider,
        row_count: Some(rows),
        notes: Vec::new(),
    };
    let source = Source {
        spec: spec.clone(),
        format: format.format(),
        collections: vec![Arc::new(collection)],
        warnings,
        path: Some(path.to_path_buf()),
        bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
        database: None,
        aimdb: None,
        direction: None,
    };
    Ok((source, table))
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// Few rows are all kept, unless they are long: then about [`KEPT_BYTES_UP_TO`] of them.
    #[test]
    fn long_rows_are_sampled_by_their_bytes() {
        let kept = |rows: u64, bytes: u64| {
            let rule = SampleRule::for_rows(rows, bytes);
            (0..rows).filter(|&r| rule.keeps(r)).count() as u64
        };
        assert_eq!(kept(50_000, 5 << 20), 50_000);
        let long = kept(90_000, 300 << 20);
        let about = 90_000 * KEPT_BYTES_UP_TO / (300 << 20);
        assert!(long.abs_diff(about) < about / 10, "{long} of about {about}");
        let many = kept(1_000_000, 80 << 20);
        assert!(many.abs_diff(SAMPLE_ROWS) < SAMPLE_ROWS / 10, "{many}");
    }

    /// Long texts fill a budget in far fewer values than [`FIT_EVERY_VALUES`]: the counters are
    /// fitted by bytes too, so 40 MB of unique 200-byte texts (200,000 values) never sit in
    /// memory whole under a 4 MiB budget.
    #[test]
    fn long_texts_are_fitted_into_the_budget_by_their_bytes() {
        let rows = 200_000u64;
        let budget = Budget { bytes: 4 << 20, spill: None };
        let mut worker = budget.builder(1);
        let sample = SampleRule::for_rows(rows, 0);
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
        let mut first = 0u64;
        while first < rows {
            let texts: arrow_array::StringArray =
                (first..first + 8_192).map(|i| Some(format!("{i:0>200}"))).collect();
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(texts)]).expect("batch");
            worker.add(&batch, first, &sample);
            first += 8_192;
        }
        let held = worker.builder.needed_bytes();
        assert!(held < 20 << 20, "{held} bytes held after 40 MB of texts");
    }
}
