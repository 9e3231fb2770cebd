//! Parallel NDJSON scanning: the file is split at line boundaries into one slice per core, each
//! slice is parsed and profiled by its own thread, and the partial results are merged.
//!
//! A line that fails to parse becomes a warning with its line and column and is skipped. Because
//! the profiler is fed while parsing (no intermediate value tree), a bad line may already have
//! touched the counters; that slice is then profiled again without its bad lines. Bad lines are
//! rare, so the common case pays nothing for this.

use std::ops::Range;

use schemascope_core::{ItemEntry, ProfileBuilder};

use crate::error::LoadWarning;
use crate::skipped_lines::{LINE_WARNINGS_KEPT, SkippedLines};
use crate::source::Progress;

/// Bytes between progress reports.
const PROGRESS_STEP: usize = 4 << 20;

/// What to do with each line: profile it and say where its item is.
pub(crate) trait LineHandler: Sync {
    /// Handles one non-empty line starting at byte `offset` of the file. On success the item's
    /// value has been added to `builder`; the entry's ranges and id are positions in the file.
    fn handle(
        &self,
        line: &str,
        offset: usize,
        builder: &mut ProfileBuilder,
    ) -> Result<ItemEntry, LineError>;

    /// A fresh profile builder for one slice.
    fn builder(&self) -> ProfileBuilder {
        ProfileBuilder::new()
    }
}

/// Why a line was skipped: a column within the line and a message.
pub(crate) struct LineError {
    pub column: usize,
    pub message: String,
}

pub(crate) struct ScanResult {
    /// The items of the good lines of each slice, in file order, joined once at the end
    /// ([`ScanResult::into_items`]).
    pub items: Vec<Vec<ItemEntry>>,
    pub builder: ProfileBuilder,
    pub skipped: SkippedLines,
}

impl ScanResult {
    /// Number of good lines.
    pub(crate) fn line_count(&self) -> usize {
        self.items.iter().map(Vec::len).sum()
    }

    /// The items of the good lines, in file order, in the first slice's vector (grown in place
    /// where the allocator can) rather than a new one.
    pub(crate) fn into_items(self) -> Vec<ItemEntry> {
        let total = self.line_count();
        let mut slices = self.items.into_iter();
        let mut items = slices.next().unwrap_or_default();
        items.reserve_exact(total - items.len());
        for mut slice in slices {
            items.append(&mut slice);
        }
        items
    }
}

/// Splits `bytes` into about `parts` slices, each ending just after a newline (or at the end).
pub(crate) fn line_slices(bytes: &[u8], parts: usize) -> Vec<Range<usize>> {
    let target = bytes.len().div_ceil(parts.max(1)).max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + target).min(bytes.len());
        while end < bytes.len() && bytes[end - 1] != b'\n' {
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

struct SliceResult {
    items: Vec<ItemEntry>,
    builder: ProfileBuilder,
    /// Every bad line's number within the slice.
    bad: Vec<usize>,
    /// Why the first [`LINE_WARNINGS_KEPT`] of them are bad (the others are counted only).
    errors: Vec<LineError>,
    line_count: usize,
}

/// The lines of `text`, each with its `\n`, as `split_inclusive('\n')` gives them; `memchr`
/// finds the line ends with SIMD where std searches a word at a time.
pub(crate) fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> {
    line_ranges(text.as_bytes()).map(|r| &text[r])
}

/// Where the lines of `bytes` lie, each with its newline (the last one may have none).
pub(crate) fn line_ranges(bytes: &[u8]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut start = 0;
    let ends =
        memchr::memchr_iter(b'\n', bytes).map(|at| at + 1).chain(std::iter::once(bytes.len()));
    ends.filter_map(move |end| {
        let line = (end > start).then_some(start..end);
        start = end;
        line
    })
}

/// Why the line `raw`, UTF-8 up to byte `valid`, is skipped: the column of its first bad byte
/// and the message naming it.
pub(crate) fn not_utf8_line(raw: &[u8], valid: usize) -> (usize, String) {
    let byte = raw.get(valid).copied().unwrap_or_default();
    // Columns count bytes, as those of a line's JSON errors do.
    (valid + 1, format!("the line is not valid UTF-8 (byte 0x{byte:02X})"))
}

/// What each byte that is not UTF-8 is overwritten with: a control character, which JSON holds
/// nowhere, so the line is not JSON, and its brackets and quotes stay where they were.
const NOT_UTF8_FILL: u8 = 0x01;

/// `bytes` with every byte that is not UTF-8 overwritten with [`NOT_UTF8_FILL`], and the lines
/// that held one, with a warning at the byte column of its first bad byte (for the first of them). Such a
/// line stays a line that is not JSON, so a file is recognised, and its lines loaded or counted,
/// as if the line held a syntax error there (the loaders' warning for it is then replaced by
/// this one); the other lines keep their numbers and offsets.
pub(crate) fn mark_lines_not_utf8(mut bytes: Vec<u8>) -> (Vec<u8>, SkippedLines) {
    let mut bad = Vec::new();
    let mut skipped = SkippedLines::default();
    for (i, range) in line_ranges(&bytes).enumerate() {
        let line = &bytes[range.clone()];
        if simdutf8::basic::from_utf8(line).is_err()
            && let Err(e) = std::str::from_utf8(line)
        {
            skipped.add(i + 1, || {
                // A byte-order mark is not part of the text: columns count from after it.
                let bom = if i == 0 && line.starts_with("\u{feff}".as_bytes()) { 3 } else { 0 };
                let (column, message) = not_utf8_line(&line[bom..], e.valid_up_to() - bom);
                Some(LoadWarning::at(i + 1, column, format!("skipped: {message}")))
            });
            bad.push(range);
        }
    }
    for range in bad {
        let line = &mut bytes[range];
        let mut at = 0;
        while let Err(e) = std::str::from_utf8(&line[at..]) {
            let start = at + e.valid_up_to();
            let end = e.error_len().map_or(line.len(), |len| start + len);
            line[start..end].fill(NOT_UTF8_FILL);
            at = end;
        }
    }
    (bytes, skipped)
}

/// About how many lines `slice` has (a tenth more), from the lines in its first 64 KiB, so
/// the entries are allocated once instead of copied as they grow. Lines under 16 bytes are not
/// counted on: a file of blank lines must not reserve entries for items it does not have.
fn estimated_lines(slice: &str) -> usize {
    let sample = &slice.as_bytes()[..slice.len().min(64 << 10)];
    let lines = memchr::memchr_iter(b'\n', sample).count().max(1);
    let estimate = slice.len() as f64 / sample.len().max(1) as f64 * lines as f64 * 1.1;
    (estimate as usize).min(slice.len() / 16) + 16
}

/// One pass over the lines of a slice, leaving out the lines numbered in `skip` (ascending).
fn scan_lines(
    text: &str,
    range: Range<usize>,
    handler: &dyn LineHandler,
    progress: &dyn Progress,
    skip: &[usize],
) -> SliceResult {
    let slice = &text[range.clone()];
    let mut builder = handler.builder();
    let mut items = Vec::with_capacity(estimated_lines(slice));
    let mut bad = Vec::new();
    let mut errors = Vec::new();
    let mut line_count = 0;
    let mut offset = range.start;
    let mut since_report = 0;
    let mut skip = skip.iter().peekable();
    for raw in lines_inclusive(slice) {
        line_count += 1;
        let line_start = offset;
        offset += raw.len();
        since_report += raw.len();
        if since_report >= PROGRESS_STEP {
            progress.advance(since_report as u64);
            since_report = 0;
        }
        if skip.next_if_eq(&&line_count).is_some() {
            continue;
        }
        let trimmed = raw.trim_start();
        let lead = raw.len() - trimmed.len();
        let trimmed = trimmed.trim_end();
        if trimmed.is_empty() {
            continue;
        }
        match handler.handle(trimmed, line_start + lead, &mut builder) {
            Ok(item) => items.push(item),
            Err(e) => {
                bad.push(line_count);
                if errors.len() < LINE_WARNINGS_KEPT {
                    errors.push(LineError { column: e.column + lead, message: e.message });
                }
            }
        }
    }
    progress.advance(since_report as u64);
    SliceResult { items, builder, bad, errors, line_count }
}

fn scan_slice(
    text: &str,
    range: Range<usize>,
    handler: &dyn LineHandler,
    progress: &dyn Progress,
) -> SliceResult {
    let first = scan_lines(text, range.clone(), handler, progress, &[]);
    if first.bad.is_empty() {
        return first;
    }
    // The bad lines may have left partial counts: profile the slice again without them.
    let again = scan_lines(text, range, handler, &crate::NoProgress, &first.bad);
    SliceResult { items: again.items, builder: again.builder, ..first }
}

/// Scans every line of `text` on all cores.
pub(crate) fn scan(text: &str, handler: &dyn LineHandler, progress: &dyn Progress) -> ScanResult {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Small inputs are not worth a thread each.
    let parts = if text.len() < (1 << 20) { 1 } else { threads };
    let ranges = line_slices(text.as_bytes(), parts);
    let results: Vec<SliceResult> = if ranges.len() <= 1 {
        ranges.into_iter().map(|r| scan_slice(text, r, handler, progress)).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = ranges
                .into_iter()
                .map(|r| scope.spawn(move || scan_slice(text, r, handler, progress)))
                .collect();
            handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
        })
    };
    let mut merged = ScanResult {
        items: Vec::new(),
        builder: handler.builder(),
        skipped: SkippedLines::default(),
    };
    let mut line_base = 0;
    let mut first = true;
    for slice in results {
        merged.items.push(slice.items);
        let mut errors = slice.errors.into_iter();
        for line in slice.bad {
            let line = line + line_base;
            // A slice says why its first bad lines are bad, so the first of all are among them.
            let error = errors.next();
            merged.skipped.add(line, || {
                error.map(|LineError { column, message }| {
                    LoadWarning::at(line, column, format!("skipped: {message}"))
                })
            });
        }
        if first {
            merged.builder = slice.builder;
            first = false;
        } else {
            merged.builder.merge(slice.builder);
        }
        line_base += slice.line_count;
    }
    merged
}

/// The line error for a serde_json error on a single line.
pub(crate) fn line_error(e: &serde_json::Error) -> LineError {
    LineError {
        column: e.column().max(1),
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_split_as_split_inclusive_does() {
        for text in ["", "a", "a\n", "a\nb", "\n\n", "a\r\nb\n\nc", "é\nü"] {
            let ours: Vec<&str> = super::lines_inclusive(text).collect();
            let std: Vec<&str> = text.split_inclusive('\n').collect();
            assert_eq!(ours, std, "{text:?}");
        }
    }
}
