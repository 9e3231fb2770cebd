//! Parquet files: read by the `parquet` crate into Arrow batches, row groups shared out among
//! the cores, every value profiled (the file's column statistics are not enough for exact
//! distinct counts, medians and top values, so they are not used in place of the data).

use std::path::Path;

use super::{Budget, TableRead, TableWorker};
use crate::error::SourceError;
use crate::source::Progress;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Rows per batch read.
const BATCH_ROWS: usize = 8_192;

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
    let same = now.len() == first.len() && now.modified().ok() == first.modified().ok() && {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            (now.ino(), now.ctime(), now.ctime_nsec())
                == (first.ino(), first.ctime(), first.ctime_nsec())
        }
        #[cfg(not(unix))]
        true
    };
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

/// Profiles the Parquet file at `path` into `new()` builders, one per core.
pub(crate) fn read(
    path: &Path,
    progress: &dyn Progress,
    budget: &Budget,
) -> Result<TableRead, SourceError> {
    let (file, metadata) = crate::file::open_regular(path)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(
        file.try_clone().map_err(|e| SourceError::Io { path: path.to_path_buf(), cause: e })?,
    )
    .map_err(|e| parquet_error(path, e))?;
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
    let sample = &super::SampleRule::for_rows(rows);
    progress.start(metadata.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
    let workers = threads.min(groups.len()).max(1);
    let results: Vec<Result<TableWorker, SourceError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<(usize, u64, i64)> =
                    groups.iter().copied().skip(w).step_by(workers).collect();
                let metadata = &metadata;
                scope.spawn(move || -> Result<TableWorker, SourceError> {
                    let mut worker = budget.builder(workers, rows);
                    for (group, first_row, size) in mine {
                        // A handle of its own: clones of one share its position, and the
                        // reader seeks.
                        let own = reopen(path, metadata)?;
                        let reader = ParquetRecordBatchReaderBuilder::try_new(own)
                            .and_then(|b| {
                                b.with_row_groups(vec![group]).with_batch_size(BATCH_ROWS).build()
                            })
                            .map_err(|e| parquet_error(path, e))?;
                        let mut row = first_row;
                        for batch in reader {
                            let batch = batch.map_err(|e| parquet_error(path, e))?;
                            worker.add(&batch, row, sample);
                            row += batch.num_rows() as u64;
                        }
                        progress.advance(size.max(0) as u64);
                    }
                    Ok(worker)
                })
            })
            .collect();
        handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
    });
    let mut read = TableRead::new(rows);
    for result in results {
        read.absorb(result?);
    }
    Ok(read)
}
