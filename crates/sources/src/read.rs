//! Reading a source file into memory as text, on all cores for large files.
//!
//! A 260 MB file costs a noticeable fraction of a second just to copy out of the page cache and
//! to check as UTF-8; both split cleanly, so large files are read in one slice per core
//! (positioned reads into disjoint parts of one buffer) and checked in slices that end at line
//! breaks, which never fall inside a multi-byte character.

use std::path::Path;

use crate::error::{SourceError, position};

/// Files at least this large are read and checked in parallel.
const PARALLEL_FROM: usize = 32 << 20;

fn io(path: &Path, source: std::io::Error) -> SourceError {
    SourceError::Io { path: path.to_path_buf(), source }
}

fn not_utf8(path: &Path, bytes: &[u8], valid_up_to: usize) -> SourceError {
    let prefix = String::from_utf8_lossy(&bytes[..valid_up_to]);
    let (line, column) = position(&prefix, valid_up_to);
    SourceError::Syntax { path: path.to_path_buf(), line, column, message: "the file is not valid UTF-8".into() }
}

/// Reads `path` as UTF-8 text, without a leading byte-order mark.
pub fn read_text(path: &Path) -> Result<String, SourceError> {
    let bytes = read_bytes(path)?;
    let parts = line_aligned_parts(&bytes);
    let checks: Vec<Result<(), usize>> = if parts.len() <= 1 {
        vec![std::str::from_utf8(&bytes).map(|_| ()).map_err(|e| e.valid_up_to())]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .map(|range| {
                    let part = &bytes[range.clone()];
                    let start = range.start;
                    scope.spawn(move || std::str::from_utf8(part).map(|_| ()).map_err(|e| start + e.valid_up_to()))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(Err(0))).collect()
        })
    };
    if let Some(Err(at)) = checks.into_iter().find(Result::is_err) {
        return Err(not_utf8(path, &bytes, at));
    }
    // SAFETY: every part was checked to be valid UTF-8 just above, and the parts tile the buffer
    // exactly; a concatenation of valid UTF-8 strings is valid UTF-8. Checking again here would
    // spend on one core the time the parallel check saved.
    let text = unsafe { String::from_utf8_unchecked(bytes) };
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// One range per core, each ending just after a newline; one range for small inputs.
fn line_aligned_parts(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if bytes.len() < PARALLEL_FROM || threads < 2 {
        return std::iter::once(0..bytes.len()).collect();
    }
    crate::ndjson::line_slices(bytes, threads)
}

#[cfg(unix)]
fn read_bytes(path: &Path) -> Result<Vec<u8>, SourceError> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let len = usize::try_from(file.metadata().map_err(|e| io(path, e))?.len()).unwrap_or(usize::MAX);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if len < PARALLEL_FROM || threads < 2 {
        return std::fs::read(path).map_err(|e| io(path, e));
    }
    let mut buffer = vec![0u8; len];
    let chunk = len.div_ceil(threads);
    let results: Vec<std::io::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = buffer
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, part)| {
                let file = &file;
                scope.spawn(move || file.read_exact_at(part, (i * chunk) as u64))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(std::io::Error::other("reader thread panicked")))).collect()
    });
    for result in results {
        result.map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => io(path, std::io::Error::other("the file shrank while it was being read")),
            _ => io(path, e),
        })?;
    }
    Ok(buffer)
}

#[cfg(not(unix))]
fn read_bytes(path: &Path) -> Result<Vec<u8>, SourceError> {
    std::fs::read(path).map_err(|e| io(path, e))
}
