//! Reading a source file into memory as text, on all cores for large files.
//!
//! A 260 MB file costs a noticeable fraction of a second just to copy out of the page cache and
//! to check as UTF-8; both split cleanly, so large files are read in one slice per core
//! (positioned reads into disjoint parts of one buffer) and checked in slices that end at line
//! breaks, which never fall inside a multi-byte character.
//!
//! One-shot commands may map the file instead ([`ReadMode::map`], `unsafe` to choose): no copy and no fresh pages to
//! fault in and zero, which is a third of a large file's load time. A server keeps a private
//! copy, because the files it serves are rewritten under it.
//!
//! Either way the file is opened once, through [`crate::file`]: only a regular file is read (a
//! FIFO or `/dev/zero` given as a source is refused at once), and only up to
//! [`crate::file::max_source_bytes`], checked on the open file's size before anything is read.

// Mapping a file and skipping a second UTF-8 check are this module's purpose; each unsafe site
// states what makes it sound.
#![allow(unsafe_code)]

use std::path::Path;
use std::sync::Arc;

use schemascope_core::{ExternalBytes, SharedText, Text};

use crate::error::SourceError;
use crate::skipped_lines::SkippedLines;

/// Files at least this large are read and checked in parallel, and mapped when asked to.
const PARALLEL_FROM: usize = 32 << 20;

/// How a source file is brought into memory: a private copy ([`ReadMode::COPY`], the default),
/// or, chosen in an `unsafe` block, a mapping ([`ReadMode::map`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadMode {
    /// Large files mapped rather than copied; only [`ReadMode::map`] sets it.
    mapped: bool,
    /// NDJSON document files profiled by streaming, whatever their size ([`ReadMode::streamed`]).
    streamed: bool,
}

impl ReadMode {
    /// A private copy: the file may be rewritten while the source is in use (serving, watching).
    pub const COPY: Self = Self { mapped: false, streamed: false };

    /// Large files mapped into memory rather than copied, for a command that loads a source,
    /// answers and exits: no copy and no fresh pages to fault in and zero.
    ///
    /// # Safety
    ///
    /// The text of a mapped file is handed out as `&str` to safe code, which may then observe
    /// the file change under it: no other process may modify or truncate the file while the
    /// source is in use. As with any mapped reader (ripgrep's `MmapChoice::auto` is `unsafe`
    /// for the same reason), a file truncated meanwhile makes reading it fail with SIGBUS (the
    /// CLI reports that), and one rewritten in place shows text that was never checked as UTF-8.
    pub unsafe fn map() -> Self {
        Self { mapped: true, streamed: false }
    }

    /// The same, with NDJSON document files profiled by streaming within the memory budget
    /// (see [`crate::stream`]): for commands that need the profile, not every document.
    pub fn streamed(self) -> Self {
        Self { streamed: true, ..self }
    }

    /// Whether NDJSON document files are streamed whatever their size.
    pub fn is_streamed(self) -> bool {
        self.streamed
    }

    /// Whether large files are mapped.
    pub fn is_mapped(self) -> bool {
        self.mapped
    }
}

fn io(path: &Path, source: std::io::Error) -> SourceError {
    SourceError::Io { path: path.to_path_buf(), cause: source }
}

/// The error for a file whose first byte that is not UTF-8 is at `valid_up_to`: at its line and
/// byte column (as JSON errors and a skipped line's warning count them; a byte-order mark is not
/// part of the text).
fn not_utf8(path: &Path, bytes: &[u8], valid_up_to: usize) -> SourceError {
    let before = &bytes[..valid_up_to];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(bom_len(before), |at| at + 1);
    not_utf8_at(path, line, valid_up_to - line_start + 1)
}

/// The error for a file that is not UTF-8 from its byte at `line` and `column`.
pub(crate) fn not_utf8_at(path: &Path, line: usize, column: usize) -> SourceError {
    SourceError::Syntax {
        path: path.to_path_buf(),
        line,
        column,
        message: crate::load::not_read(path, "the file is not valid UTF-8 text"),
    }
}

/// Checks `bytes` as UTF-8, in one slice per core for large inputs: the offset of the first
/// byte that is not, if one is not.
fn check_utf8(bytes: &[u8]) -> Result<(), usize> {
    let parts = line_aligned_parts(bytes);
    let checks: Vec<Result<(), usize>> = if parts.len() <= 1 {
        vec![std::str::from_utf8(bytes).map(|_| ()).map_err(|e| e.valid_up_to())]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .map(|range| {
                    let part = &bytes[range.clone()];
                    let start = range.start;
                    scope.spawn(move || {
                        std::str::from_utf8(part).map(|_| ()).map_err(|e| start + e.valid_up_to())
                    })
                })
                .collect();
            handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
        })
    };
    checks.into_iter().find(Result::is_err).unwrap_or(Ok(()))
}

/// The length of a leading byte-order mark, which is not part of the text.
fn bom_len(bytes: &[u8]) -> usize {
    if bytes.starts_with("\u{feff}".as_bytes()) { 3 } else { 0 }
}

/// Reads `path` as UTF-8 text, without a leading byte-order mark.
///
/// A file that is not UTF-8 is refused, unless it is lines of JSON once each line that is not
/// UTF-8 is marked as a line that is not JSON (`is_lines` decides, on that text): those lines
/// are then skipped, as a streamed profile skips them, and the warnings saying so come with the
/// text, to replace the loaders' warnings for them. A stray byte in one line of a log must not
/// cost the other lines.
pub(crate) fn read_shared(
    path: &Path,
    mode: ReadMode,
    is_lines: impl FnOnce(&str) -> bool,
) -> Result<(SharedText, SkippedLines), SourceError> {
    let (bytes, bad_at) = match mode.is_mapped().then(|| map_file(path)).transpose()?.flatten() {
        Some(map) => match check_utf8(&map) {
            Ok(()) => {
                let start = bom_len(&map);
                // SAFETY: checked as UTF-8 just above (a whole byte-order mark is skipped, so the
                // text still starts on a character); it stays unchanged under `ReadMode::map`'s
                // safety contract.
                let text =
                    unsafe { Text::from_external_unchecked(Box::new(MappedFile(map)), start) };
                return Ok((Arc::new(text), SkippedLines::default()));
            }
            Err(at) => (map.to_vec(), at),
        },
        None => {
            let bytes = read_bytes(path)?;
            match check_utf8(&bytes) {
                Ok(()) => return Ok((Arc::new(owned_text(bytes)), SkippedLines::default())),
                Err(at) => (bytes, at),
            }
        }
    };
    let refused = not_utf8(path, &bytes, bad_at);
    let (bytes, not_utf8) = crate::ndjson::mark_lines_not_utf8(bytes);
    let text = owned_text(bytes);
    if is_lines(&text) { Ok((Arc::new(text), not_utf8)) } else { Err(refused) }
}

/// `bytes`, checked as UTF-8, as text without a leading byte-order mark.
fn owned_text(bytes: Vec<u8>) -> Text {
    debug_assert!(std::str::from_utf8(&bytes).is_ok());
    let skip = bom_len(&bytes);
    // SAFETY: every caller checked every byte to be valid UTF-8 (or overwrote the lines that
    // were not). Checking again in `String::from_utf8` would spend on one core the time the parallel
    // check saved.
    let text = unsafe { String::from_utf8_unchecked(bytes) };
    Text::from(text).skip_prefix(skip)
}

/// The bytes of a file that is not text as a whole (a CSV, whose fields are checked one by
/// one): mapped when `mode` allows it, else a private copy; within the source size limit.
pub(crate) fn read_file_bytes(path: &Path, mode: ReadMode) -> Result<FileBytes, SourceError> {
    if mode.is_mapped() {
        let (file, _) = open_source(path)?;
        // SAFETY: as in `map_text`: read-only, private, under `ReadMode::map`'s contract that no
        // other process truncates or rewrites the file while the one-shot command runs.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().map(&file) } {
            return Ok(FileBytes::Mapped(map));
        }
    }
    Ok(FileBytes::Owned(read_bytes(path)?))
}

/// `file` mapped, to be shared by readers on several threads (a Parquet file's row groups);
/// `None` where it cannot be mapped. Only under [`ReadMode::map`], whose caller accepted its
/// contract.
pub(crate) fn map_shared(file: &std::fs::File) -> Option<Arc<memmap2::Mmap>> {
    // SAFETY: read-only and private, under `ReadMode::map`'s contract that no other process
    // truncates or rewrites the file while the one-shot command runs.
    unsafe { memmap2::MmapOptions::new().map(file) }.ok().map(Arc::new)
}

/// A file's bytes ([`read_file_bytes`]).
pub(crate) enum FileBytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl FileBytes {
    /// Gives back the pages under `range` once they are read, when mapped: a mapped file's
    /// pages count in the process's resident memory until then.
    pub(crate) fn release(&self, range: std::ops::Range<usize>) {
        if let Self::Mapped(map) = self {
            crate::stream::release(map, range);
        }
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Self::Mapped(map) => map,
            Self::Owned(bytes) => bytes,
        }
    }
}

/// A mapped file.
#[derive(Debug)]
struct MappedFile(memmap2::Mmap);

impl ExternalBytes for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The size limit's name in errors about a source file.
const SOURCE_LIMIT: &str = "for a source file (raise it with --max-file-bytes)";

/// Opens the source file `path`: a regular file within the source size limit.
fn open_source(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), SourceError> {
    let (file, metadata) = crate::file::open_regular(path)?;
    crate::file::check_size(path, &metadata, crate::file::max_source_bytes(), SOURCE_LIMIT)?;
    Ok((file, metadata))
}

/// Maps `path` when it is a large regular file; `None` when it is better read.
fn map_file(path: &Path) -> Result<Option<memmap2::Mmap>, SourceError> {
    let (file, metadata) = open_source(path)?;
    if metadata.len() < PARALLEL_FROM as u64 {
        return Ok(None);
    }
    // SAFETY: the mapping is read-only and private to this process. Another process truncating
    // or rewriting the file while it is mapped is the caveat `ReadMode::map` documents; one-shot
    // commands, which alone ask for a mapping, finish long before a file is usually rewritten.
    // Not populated up front: the parallel UTF-8 check maps the pages in on every core at once.
    // Some file systems cannot map; reading works everywhere.
    Ok(unsafe { memmap2::MmapOptions::new().map(&file) }.ok())
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
    let (file, metadata) = open_source(path)?;
    let len = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if len < PARALLEL_FROM || threads < 2 {
        return Ok(crate::file::read_opened(
            path,
            file,
            &metadata,
            crate::file::max_source_bytes(),
            SOURCE_LIMIT,
        )?);
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
        handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
    });
    for result in results {
        result.map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                io(path, std::io::Error::other("the file shrank while it was being read"))
            }
            _ => io(path, e),
        })?;
    }
    Ok(buffer)
}

#[cfg(not(unix))]
fn read_bytes(path: &Path) -> Result<Vec<u8>, SourceError> {
    let (file, metadata) = open_source(path)?;
    Ok(crate::file::read_opened(
        path,
        file,
        &metadata,
        crate::file::max_source_bytes(),
        SOURCE_LIMIT,
    )?)
}

/// Pages of `bytes` (a mapping) this process has mapped in, from /proc/self/pagemap's present
/// bits: what tests of giving a mapped file's pages back read.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn resident_pages(bytes: &[u8]) -> usize {
    use std::os::unix::fs::FileExt;
    let page = 4096;
    let first = bytes.as_ptr() as usize / page;
    let pages = bytes.len().div_ceil(page);
    let pagemap = std::fs::File::open("/proc/self/pagemap").expect("pagemap");
    let mut entries = vec![0u8; pages * 8];
    pagemap.read_exact_at(&mut entries, (first * 8) as u64).expect("read pagemap");
    entries.chunks_exact(8).filter(|e| e[7] & 0x80 != 0).count()
}
