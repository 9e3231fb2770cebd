//! Profiling an NDJSON document file by streaming: memory does not grow with the number of
//! documents, only with what the statistics need, and that has a budget.
//!
//! The file is read in blocks of [`BLOCK`] bytes by one worker per core, each taking one
//! contiguous part of the file, and then the back halves of the parts still being read
//! (`block_claims`): positioned reads into a buffer each worker reuses (a file
//! rewritten meanwhile is told by its size and time, never SIGBUS), or, when the caller allows a
//! mapping (a one-shot command, [`crate::ReadMode::map`]), slices of the mapped file, whose pages
//! are given back after each block so that resident memory does not grow with the file. A
//! block owns the lines that start in it. Each worker profiles each part's blocks into its own
//! builder and, after every block, fits it into its share of the memory budget
//! ([`schemascope_core::ProfileBuilder::fit_budget`]: few-valued numbers folded into counts, then
//! the heaviest properties switched to sketches). No item entry is kept; instead every worker
//! keeps the lines whose hashed file offsets are smallest, which merged give a uniform sample of
//! up to [`SAMPLE_ITEMS`] documents and [`SAMPLE_BYTES`] bytes: the collection's items, for
//! examples, `sample_data`, `find_items` and selections, which then say they read a sample.

use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use schemascope_core::profile::{Fitted, SchemaBuilder, Spill};
use schemascope_core::size_text::{size_text, size_texts_apart};
use schemascope_core::{Collection, CollectionKind, ItemEntry, ItemId, ProfileBuilder};

use crate::block_claims::BlockClaims;
use crate::error::{LoadWarning, SourceError};
use crate::ndjson::line_error;
use crate::nesting::{LineNesting, NestingWalk, line_nesting};
use crate::scratch::SpillOptions;
use crate::skipped_lines::LINE_WARNINGS_KEPT;
use crate::source::{Progress, Source};
use crate::spec::{Format, SourceSpec};
use crate::worker_budget::WorkerBudget;

/// Bytes per block.
pub const BLOCK: usize = 8 << 20;

/// How a file is streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOptions {
    /// Bytes per block (at least 1 KiB).
    pub block_bytes: usize,
    /// The memory budget of the statistics, in bytes.
    pub budget: usize,
    /// Longest line read as a document; longer ones are skipped with a warning.
    pub max_line_bytes: usize,
    /// Say in the warnings that tools read a sample (when serving; a one-shot profile reads
    /// none).
    pub announce_sample: bool,
    /// Where counters past the budget are spilled, keeping them exact; `None`: they become
    /// estimates (`--no-spill`).
    pub spill: Option<SpillOptions>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            block_bytes: BLOCK,
            budget: memory_budget(),
            max_line_bytes: MAX_LINE_BYTES,
            announce_sample: false,
            spill: spill_options(),
        }
    }
}
/// The memory budget of a streamed profile's statistics unless set otherwise (96 MiB). Past it
/// the heaviest properties' exact counters are spilled to temporary files ([`SpillOptions`]),
/// so the budget costs no exactness, only some writing and reading back; a property is
/// estimated only when spilling is off (`--no-spill`) or its files reach their cap.
pub const DEFAULT_MEMORY_BUDGET: usize = 96 << 20;
/// Most documents kept as the sample of a streamed file.
pub const SAMPLE_ITEMS: usize = 2_000;
/// Most bytes of documents kept as the sample.
pub const SAMPLE_BYTES: usize = 32 << 20;
/// Parts a worker may take from the others once its own is read: each is merged at the end, and
/// the later ones are a block or two.
const MAX_STEALS_PER_WORKER: usize = 8;
/// Files at least this large are streamed by `serve` too (smaller ones are held whole).
pub const SERVE_STREAM_FROM: u64 = 1 << 30;

static MEMORY_BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_MEMORY_BUDGET);

static SPILL: std::sync::Mutex<Option<SpillOptions>> =
    std::sync::Mutex::new(Some(SpillOptions { dir: None, cap: crate::scratch::DEFAULT_SPILL_CAP }));

/// Where streamed profiles spill (`None`: they do not), as [`set_spill`] left it.
pub fn spill_options() -> Option<SpillOptions> {
    schemascope_core::sync::lock(&SPILL).clone()
}

/// Sets where streamed profiles spill, or that they do not (the CLI's `--spill-dir`,
/// `--spill-cap` and `--no-spill`).
pub fn set_spill(options: Option<SpillOptions>) {
    *schemascope_core::sync::lock(&SPILL) = options;
}

/// The memory budget of streamed profiles, in bytes.
pub fn memory_budget() -> usize {
    MEMORY_BUDGET.load(Ordering::Relaxed)
}

/// Sets the memory budget of streamed profiles (the CLI's `--memory-budget`).
pub fn set_memory_budget(bytes: usize) {
    MEMORY_BUDGET.store(bytes.max(1), Ordering::Relaxed);
}

/// One sampled line.
pub(crate) struct Sampled {
    /// The hash of its file offset: the sample keeps the smallest.
    rank: u64,
    pub(crate) offset: u64,
    pub(crate) text: Box<str>,
    /// Its `id`, a span of `text` when written there.
    id: Option<ItemId>,
    /// Which block, and which good item of it.
    block: usize,
    item: usize,
}

impl PartialEq for Sampled {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}
impl Eq for Sampled {}
impl PartialOrd for Sampled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Sampled {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank).then(self.offset.cmp(&other.offset))
    }
}

/// The sample being kept: a max-heap of the smallest ranks.
#[derive(Default)]
pub(crate) struct Sample {
    pub(crate) heap: BinaryHeap<Sampled>,
    bytes: usize,
}

impl Sample {
    fn wants(&self, rank: u64, len: usize) -> bool {
        len <= SAMPLE_BYTES / 16
            && (self.heap.len() < SAMPLE_ITEMS
                || self.heap.peek().is_some_and(|top| rank < top.rank))
    }

    fn keep(&mut self, entry: Sampled) {
        self.bytes += entry.text.len();
        self.heap.push(entry);
        while self.heap.len() > SAMPLE_ITEMS || self.bytes > SAMPLE_BYTES {
            match self.heap.pop() {
                Some(out) => self.bytes -= out.text.len(),
                None => break,
            }
        }
    }

    fn merge(&mut self, other: Sample) {
        for entry in other.heap {
            if self.wants(entry.rank, entry.text.len()) {
                self.keep(entry);
            }
        }
    }
}

/// The rank of a line: its file offset mixed (splitmix64), so the smallest ranks are a uniform
/// sample, the same on every run.
pub(crate) fn rank(offset: u64) -> u64 {
    let mut z = offset.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What one block held: its lines and good items (to number lines and items across blocks),
/// and its bad lines that open or close brackets (see [`crate::nesting`]).
#[derive(Clone, Default)]
struct BlockCounts {
    lines: usize,
    items: usize,
    blank: usize,
    /// Each such bad line: how many good items came since the one before, indented at most
    /// how deep, and its nesting and indentation.
    nesting: Vec<NestingStep>,
    /// The deepest indentation of a good item since the last of them.
    indent_after: usize,
    /// Bad lines that neither open nor close brackets but could be lines of a pretty-printed
    /// value ([`LineNesting::fragment`]) since the last of them.
    plain_bad_after: usize,
    /// More such lines than [`MAX_NESTING_LINES`]: not a file of JSON lines, as far as the
    /// streamed profile can tell.
    nesting_overflow: bool,
    /// Good items before the last line in `nesting`.
    items_at_nesting: usize,
}

/// Bad lines that open or close brackets kept per block: a pretty-printed file has one a line.
const MAX_NESTING_LINES: usize = 1 << 12;

impl BlockCounts {
    /// Notes bad line `raw`, in the block after `counts.items` good items.
    fn bad_line(&mut self, raw: &[u8]) {
        let nesting = line_nesting(raw);
        if !nesting.is_step() {
            self.plain_bad_after += usize::from(nesting.fragment);
            return;
        }
        if self.nesting.len() >= MAX_NESTING_LINES {
            self.nesting_overflow = true;
            return;
        }
        self.nesting.push(NestingStep {
            items: self.items - self.items_at_nesting,
            items_indent: std::mem::take(&mut self.indent_after),
            plain_bad: std::mem::take(&mut self.plain_bad_after),
            nesting,
            indent: crate::nesting::indent(raw),
        });
        self.items_at_nesting = self.items;
    }

    /// Notes a good item indented by `indent` bytes (after `items` was counted up).
    fn good_line(&mut self, indent: usize) {
        self.indent_after = self.indent_after.max(indent);
    }
}

/// A bad line that opens or closes brackets, in [`BlockCounts::nesting`].
#[derive(Clone, Copy)]
struct NestingStep {
    items: usize,
    items_indent: usize,
    plain_bad: usize,
    nesting: LineNesting,
    indent: usize,
}

/// A bad line: its block, its line within the block (1-based), and why.
struct BadLine {
    block: usize,
    line: usize,
    column: usize,
    message: String,
}

/// What a streamed file's workers read its documents into: a full profile's builder, or a
/// schema-only one (`crate::stream_schema`). The reading, sampling and warnings are the same.
pub(crate) trait Reader: Sized + Send {
    /// True when the counters are a few values a path whatever the input (a schema's): parts
    /// taken from other workers then cost no memory that matters.
    const BOUNDED: bool = false;
    /// Reads one document, leaving the counters untouched when it is not valid JSON.
    fn add_json_whole(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error>;
    /// Says where the next documents lie.
    fn set_position(&mut self, position: u64);
    /// Fits the counters into `share` bytes; returns the bytes they needed before and after
    /// (see [`ProfileBuilder::fit_budget`]).
    fn fit(&mut self, share: usize) -> Fitted;
    /// Adds another worker's counts.
    fn merge(&mut self, other: Self);
}

impl Reader for ProfileBuilder {
    fn add_json_whole(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        ProfileBuilder::add_json_whole(self, json)
    }
    fn set_position(&mut self, position: u64) {
        ProfileBuilder::set_position(self, position);
    }
    fn fit(&mut self, share: usize) -> Fitted {
        self.fit_budget_measured(share)
    }
    fn merge(&mut self, other: Self) {
        ProfileBuilder::merge(self, other);
    }
}

impl Reader for SchemaBuilder {
    const BOUNDED: bool = true;

    fn add_json_whole(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        SchemaBuilder::add_json_whole(self, json)
    }
    fn set_position(&mut self, position: u64) {
        SchemaBuilder::set_position(self, position);
    }
    /// A schema's counters hold a few values per path, whatever the input: nothing to fit.
    fn fit(&mut self, _: usize) -> Fitted {
        Fitted { before: 0, after: 0 }
    }
    fn merge(&mut self, other: Self) {
        SchemaBuilder::merge(self, other);
    }
}

/// One worker's results.
struct WorkerResult<R> {
    builder: R,
    sample: Sample,
    bad: Vec<BadLine>,
    blocks: Vec<(usize, BlockCounts)>,
}

/// What tells that a file changed while it was read: its size and times. The change time too, since a writer may set the modification time back (`touch -r`), and
/// nothing can set the change time; and the inode, since a path opened again may name another
/// file by then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileState {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    changed: (i64, i64),
    #[cfg(unix)]
    inode: u64,
}

impl FileState {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            changed: (metadata.ctime(), metadata.ctime_nsec()),
            #[cfg(unix)]
            inode: metadata.ino(),
        }
    }
}

/// The shared state of the workers.
struct Shared<'a> {
    file: &'a std::fs::File,
    /// The file's mapping, when the caller allowed one: blocks are slices of it, not copies.
    map: Option<&'a memmap2::Mmap>,
    path: &'a Path,
    len: u64,
    failed: AtomicBool,
    progress: &'a dyn Progress,
    /// The memory budget, shared by the workers.
    budget: WorkerBudget,
    block: u64,
    /// Which blocks each worker reads.
    claims: BlockClaims,
    max_line: usize,
    /// Where the workers' counters past their share spill, when they may.
    spill: Option<schemascope_core::profile::Spill>,
}

/// Bytes read to recognise a file as NDJSON documents.
const HEAD_BYTES: u64 = 16 << 20;

/// True when the file at `path` is NDJSON documents (not `{key, value}` record lines), as a
/// whole load would read it: see the comment inside. Anything else (a JSON array, a graph
/// written over several lines, a file of NUL bytes) is left to the loaders that hold a file
/// whole, within the size limit.
pub fn is_document_lines(path: &Path, forced: Option<Format>) -> bool {
    use std::io::Read;
    if !matches!(forced, None | Some(Format::Documents)) {
        return false;
    }
    let Ok((file, _)) = crate::file::open_regular(path) else { return false };
    let named = crate::load::is_ndjson_path(path);
    // The head is read in growing steps: the first lines usually settle it, and reading the
    // whole 16 MiB first cost a large file's profile tens of milliseconds before any work.
    let mut head = Vec::new();
    let mut want = HEAD_STEP;
    loop {
        let missing = want - head.len() as u64;
        if (&file).take(missing).read_to_end(&mut head).is_err() {
            return false;
        }
        let whole = (head.len() as u64) < want || want >= HEAD_BYTES;
        if let Some(decided) = head_decides(&head, whole, named, forced) {
            return decided;
        }
        want = (want * 4).min(HEAD_BYTES);
    }
}

/// The first bytes read to recognise a file as NDJSON documents; more are read, up to
/// [`HEAD_BYTES`], while they do not settle it.
const HEAD_STEP: u64 = 64 << 10;

/// Whether `head`, the file's first bytes (all of them, or all that are read, when `whole`), is
/// NDJSON documents (see the comment inside); `None` when more bytes could change the answer.
fn head_decides(head: &[u8], whole: bool, named: bool, forced: Option<Format>) -> Option<bool> {
    let marked;
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        // The head may end inside a character.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        // A line that is not UTF-8 is a bad line, skipped with a warning: the file is recognised
        // as a whole load recognises it, with such lines marked as lines that are not JSON
        // (binary data still has no JSON line at all). A last line cut inside a character is
        // marked too: it is not complete, so it decides nothing.
        Err(_) => {
            marked = crate::ndjson::mark_lines_not_utf8(head.to_vec()).0;
            std::str::from_utf8(&marked).unwrap_or("")
        }
    };
    // Pretty-printed documents one after another are not lines: the whole-file loaders read them
    // (or say which one is broken). As the whole load decides: the first value runs over several
    // lines, or values follow one another, one of them over several lines.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    match crate::load::first_value_spans_lines(body, whole) {
        Some(true) => return Some(false),
        None => return None,
        Some(false) => {}
    }
    if crate::load::is_sequence_over_lines(body, whole) {
        return Some(false);
    }
    // The first non-empty line, complete within the head (a one-line file is small anyway),
    // must be JSON with more lines after it, as a whole load decides; a file named as NDJSON is
    // lines whatever its first ones hold (bad lines are warnings), so its first JSON line counts.
    // So is NDJSON whose first line is broken, as a whole load decides too.
    let lines = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rest = lines;
    // A broken line before the first JSON one is a line more, as the whole load counts it.
    let mut broken_first = false;
    while let Some(newline) = rest.find('\n') {
        let line = rest[..newline].trim();
        rest = &rest[newline + 1..];
        if line.is_empty() {
            continue;
        }
        if serde_json::from_str::<serde::de::IgnoredAny>(line).is_err() {
            if named {
                continue;
            }
            return match crate::load::lines_after_a_broken_first(lines, whole) {
                Some(true) => {
                    broken_first = true;
                    continue;
                }
                Some(false) => Some(false),
                None => None,
            };
        }
        let more = named || broken_first || !rest.trim().is_empty();
        if !more && !whole {
            return None;
        }
        return Some(more && document_line(line, forced));
    }
    whole.then_some(false)
}

/// True when the JSON `line` is a document line: not a `{key, value}` record line unless
/// documents were asked for.
fn document_line(line: &str, forced: Option<Format>) -> bool {
    forced.is_some() || !crate::records::looks_like_record_lines(line)
}

/// Reads up to `buf.len()` bytes at `offset`; fewer only at the end of the file.
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Longest line profiled; a longer one is skipped with a warning rather than held whole.
pub const MAX_LINE_BYTES: usize = 256 << 20;

/// Reads block `k` into `buf`: the bytes of the lines starting in it, the last one whole unless
/// it is longer than [`MAX_LINE_BYTES`]; then it is left out of `buf` and `true` is returned
/// with the file offset of `buf`'s first byte.
fn read_block(shared: &Shared<'_>, k: u64, buf: &mut Vec<u8>) -> std::io::Result<(u64, bool)> {
    let start = k * shared.block;
    let from = start.saturating_sub(1);
    let want = (start + shared.block).min(shared.len) - from;
    buf.resize(want as usize, 0);
    let got = read_at(shared.file, buf, from)?;
    buf.truncate(got);
    // The line running into the block from the previous one is that block's.
    let skip = if k == 0 {
        // A byte-order mark is not part of the first line.
        if buf.starts_with("\u{feff}".as_bytes()) { 3 } else { 0 }
    } else {
        match memchr::memchr(b'\n', buf) {
            Some(at) => at + 1,
            None => buf.len(),
        }
    };
    buf.drain(..skip);
    let first = from + skip as u64;
    if buf.is_empty() || buf.last() == Some(&b'\n') {
        return Ok((first, false));
    }
    // The block's last line, whole: read on to its end, in steps from 64 KiB (a line is
    // usually short, and the next block reads the same bytes again) up to 1 MiB. Past the line
    // limit, the line's bytes are read into the same tail and dropped.
    let last_line = memchr::memrchr(b'\n', buf).map_or(0, |at| at + 1);
    let mut end = from + got as u64;
    let mut step = 64usize << 10;
    let mut overlong = false;
    while end < shared.len {
        let at = buf.len();
        buf.resize(at + (shared.len - end).min(step as u64) as usize, 0);
        let n = read_at(shared.file, &mut buf[at..], end)?;
        buf.truncate(at + n);
        if n == 0 {
            break;
        }
        end += n as u64;
        let newline = memchr::memchr(b'\n', &buf[at..]);
        if let Some(nl) = newline {
            buf.truncate(at + nl + 1);
        }
        if overlong || buf.len() - last_line > shared.max_line {
            overlong = true;
            buf.truncate(last_line);
        }
        if newline.is_some() {
            break;
        }
        step = (step * 2).min(1 << 20);
    }
    Ok((first, overlong))
}

/// Block `k` of the mapped file, as [`read_block`] reads it: the lines starting in it, the last
/// one whole unless it is longer than the line limit (then left out, and `true`).
fn mapped_block<'m>(shared: &Shared<'_>, map: &'m [u8], k: u64) -> (u64, &'m [u8], bool) {
    let len = map.len();
    let start = usize::try_from(k * shared.block).unwrap_or(len).min(len);
    let from = start.saturating_sub(1);
    let end = start.saturating_add(shared.block as usize).min(len);
    let window = &map[from..end];
    let skip = if k == 0 {
        if window.starts_with("\u{feff}".as_bytes()) { 3 } else { 0 }
    } else {
        memchr::memchr(b'\n', window).map_or(window.len(), |at| at + 1)
    };
    let first = from + skip;
    if first >= end || map[end - 1] == b'\n' {
        return (first as u64, &map[first..end], false);
    }
    // The last line runs on past the block: to its newline, looked for no further than the
    // line limit allows.
    let last_line = memchr::memrchr(b'\n', &map[first..end]).map_or(first, |at| first + at + 1);
    let limit = last_line.saturating_add(shared.max_line).min(len);
    match memchr::memchr(b'\n', &map[end..limit.max(end)]) {
        Some(newline) => (first as u64, &map[first..end + newline + 1], false),
        None if limit == len => (first as u64, &map[first..len], false),
        None => (first as u64, &map[first..last_line], true),
    }
}

/// Maps `file` for reading front to back; `None` where it cannot be mapped (reading works
/// everywhere).
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File) -> Option<memmap2::Mmap> {
    // SAFETY: only called under `ReadMode::map`, whose caller accepted its contract: no other
    // process truncates or rewrites the file meanwhile (a truncation ends a one-shot command
    // with SIGBUS, which the CLI reports). Every block is checked as UTF-8 before it is read.
    let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Asks the system to read the pages of `map` under `range` (cut to the map) into the page cache
/// without waiting for them.
fn prefetch(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    let end = range.end.min(map.len());
    if range.start < end {
        let _ = map.advise_range(memmap2::Advice::WillNeed, range.start, end - range.start);
    }
}

/// How far before a block its release reaches back (the largest page-cache folio mapped whole).
const RELEASE_BACK: usize = 2 << 20;

/// Gives back the pages of `map` under `range` that this process holds, once a block is done: a
/// mapped file's pages count in its resident memory until then, and would grow with the file.
#[allow(unsafe_code)]
pub(crate) fn release(map: &memmap2::Mmap, range: std::ops::Range<usize>) {
    // SAFETY: the mapping is shared and read-only, never written: dropping this process's copy
    // of its pages loses nothing, and a later read maps them in again from the file.
    let _ = unsafe {
        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, range.len())
    };
}

/// Profiles part `worker` of the file, then parts taken from the others while any block is left
/// ([`BlockClaims::steal`]); returns each part's first block and counters.
fn work<R: Reader>(
    shared: &Shared<'_>,
    worker: usize,
    new: &(impl Fn(Option<&Spill>) -> R + Sync),
) -> Result<Vec<(u64, WorkerResult<R>)>, SourceError> {
    let mut parts = Vec::new();
    let mut part = (worker, shared.claims.first(worker).unwrap_or(0));
    // What the counters of this worker's finished parts hold: the budget counts them with its
    // current part's.
    let mut held = 0;
    loop {
        let PartRead { mut counters, held: mut need } =
            work_part(shared, worker, part.0, held, new)?;
        // Without spilling, the distinct values a taken part meets again are held twice, and
        // past the budget they become estimates: no part is taken then.
        if !(R::BOUNDED || shared.spill.is_some()) || !shared.claims.any_left() {
            parts.push((part.1, counters));
            return Ok(parts);
        }
        // Room for another part: the finished one's heaviest counters are spilled until it holds
        // at most half of what this worker may hold. Where they cannot get that small (a tiny
        // budget and many small counters, which stay in memory), no part is taken: each part's
        // small counters would add up past the budget.
        let half = shared.budget.allowance(worker).saturating_sub(held) / 2;
        if need > half {
            let fitted = counters.builder.fit(half);
            need = fitted.after;
            let with_held = Fitted { before: fitted.before + held, after: fitted.after + held };
            shared.budget.report(worker, with_held);
        }
        held += need;
        parts.push((part.1, counters));
        if need > half {
            return Ok(parts);
        }
        match shared.claims.steal() {
            Some(next) if !shared.failed.load(Ordering::Relaxed) => part = next,
            _ => return Ok(parts),
        }
    }
}

/// What one part's reading left.
struct PartRead<R> {
    counters: WorkerResult<R>,
    /// Bytes its counters needed at their last fit.
    held: usize,
}

/// Profiles the blocks of part `part` in order, as worker `worker`, whose finished parts hold
/// `held` bytes.
fn work_part<R: Reader>(
    shared: &Shared<'_>,
    worker: usize,
    part: usize,
    held: usize,
    new: &(impl Fn(Option<&Spill>) -> R + Sync),
) -> Result<PartRead<R>, SourceError> {
    let mut result = WorkerResult {
        builder: new(shared.spill.as_ref()),
        sample: Sample::default(),
        bad: Vec::new(),
        blocks: Vec::new(),
    };
    let mut need = 0;
    let mut buf = Vec::new();
    // A read that fails stops the other workers too: the profile is lost anyway.
    let io = |e| {
        shared.failed.store(true, Ordering::Relaxed);
        SourceError::Io { path: shared.path.to_path_buf(), cause: e }
    };
    while let Some(k) = shared.claims.next(part) {
        if shared.failed.load(Ordering::Relaxed) {
            break;
        }
        let (first, bytes, overlong) = match shared.map {
            Some(map) => {
                let block = mapped_block(shared, map, k);
                // The bytes after this block, most often the next one this worker reads, are
                // asked of the disk now, so they are read while this one is profiled: a file
                // that is not all in the page cache otherwise stalls the worker at each fault.
                let end = block.0 as usize + block.1.len();
                prefetch(map, end..end.saturating_add(shared.block as usize));
                block
            }
            None => {
                let (first, overlong) = read_block(shared, k, &mut buf).map_err(io)?;
                (first, &buf[..], overlong)
            }
        };
        let window = window_bytes(shared.block);
        let mut counts =
            profile_block(bytes, first, k as usize, window, shared.max_line, &mut result);
        if overlong {
            counts.lines += 1;
            result.bad.push(overlong_line(k as usize, counts.lines, shared.max_line));
        }
        result.blocks.push((k as usize, counts));
        if let Some(map) = shared.map {
            // Reading a block's first bytes maps in pages around them, before the block too (the
            // fault-around window, or a whole 2 MiB folio of the page cache): pages the block
            // before gave back. So the release reaches back to the 2 MiB boundary before that.
            let at = first as usize;
            let back = at.saturating_sub(RELEASE_BACK) & !(RELEASE_BACK - 1);
            release(map, back..at + bytes.len());
        }
        let fitted = result.builder.fit(shared.budget.allowance(worker).saturating_sub(held));
        need = fitted.after;
        let with_held = Fitted { before: fitted.before + held, after: fitted.after + held };
        shared.budget.report(worker, with_held);
        shared.progress.advance(bytes.len() as u64);
    }
    Ok(PartRead { counters: result, held: need })
}

/// The warning for a line longer than `max_line`.
fn overlong_line(block: usize, line: usize, max_line: usize) -> BadLine {
    BadLine {
        block,
        line,
        column: 1,
        message: format!(
            "the line is longer than {max_line} bytes, the most a streamed profile reads as one document"
        ),
    }
}

/// Most bytes of a block whose line ends are found and whose UTF-8 is checked in one pass
/// before its lines are read: small enough to stay in a core's cache for the second pass.
/// Found one line at a time, each line's first touch of memory stalled the search (a tenth of
/// a flat file's profile).
const WINDOW: usize = 256 << 10;

/// The window of blocks of `block` bytes: a sixteenth of a block, at most [`WINDOW`] (small
/// blocks, as tests read, have small windows with lines running past them).
fn window_bytes(block: u64) -> usize {
    usize::try_from(block / 16).unwrap_or(WINDOW).clamp(64, WINDOW)
}

/// Profiles the lines of one block; bad lines leave the counters untouched. The block is read a
/// window of whole lines at a time (about `window` bytes): its line ends are found and its bytes checked
/// as UTF-8 in one pass, then its lines are read while the window is in the cache. A window
/// that is not UTF-8 is checked line by line: a line that is not is a bad line like one that
/// is not JSON, so one stray byte costs one line, not the file.
fn profile_block<R: Reader>(
    bytes: &[u8],
    first: u64,
    block: usize,
    window: usize,
    max_line: usize,
    out: &mut WorkerResult<R>,
) -> BlockCounts {
    let mut counts = BlockCounts::default();
    let mut ends = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let stop = window_end(bytes, start, window);
        let window = &bytes[start..stop];
        ends.clear();
        ends.extend(memchr::memchr_iter(b'\n', window).map(|at| at + 1));
        if ends.last() != Some(&window.len()) {
            ends.push(window.len());
        }
        // The SIMD check first (std's took 3–4 % of a flat file's profile).
        let text = simdutf8::basic::from_utf8(window).ok();
        let mut from = 0;
        for &end in &ends {
            let offset = first + (start + from) as u64;
            let line = match text {
                Some(text) => Line::Text(text.get(from..end).unwrap_or_default()),
                None => Line::Bytes(&window[from..end]),
            };
            from = end;
            profile_line(line, offset, block, max_line, &mut counts, out);
        }
        start = stop;
    }
    counts
}

/// Where the window of `bytes` starting at `start` ends: after the last newline within
/// `window` bytes, or after the first one past them when a line is longer, or at the end.
fn window_end(bytes: &[u8], start: usize, window: usize) -> usize {
    let reach = start.saturating_add(window).min(bytes.len());
    if reach == bytes.len() {
        return reach;
    }
    match memchr::memrchr(b'\n', &bytes[start..reach]) {
        Some(at) => start + at + 1,
        None => memchr::memchr(b'\n', &bytes[reach..]).map_or(bytes.len(), |at| reach + at + 1),
    }
}

/// One line of a block: checked as UTF-8 with its window, or still to be checked.
#[derive(Clone, Copy)]
enum Line<'a> {
    Text(&'a str),
    Bytes(&'a [u8]),
}

/// Profiles one line, starting at file offset `offset`, the next of block `block`.
fn profile_line<R: Reader>(
    line: Line<'_>,
    offset: u64,
    block: usize,
    max_line: usize,
    counts: &mut BlockCounts,
    out: &mut WorkerResult<R>,
) {
    counts.lines += 1;
    let raw = match line {
        Line::Text(text) => text,
        // std's check only for a line that fails the SIMD one, to say where.
        Line::Bytes(raw) => {
            match simdutf8::basic::from_utf8(raw).or_else(|_| std::str::from_utf8(raw)) {
                Ok(raw) => raw,
                Err(e) => {
                    counts.bad_line(raw);
                    out.bad.push(not_utf8_line(block, counts.lines, raw, e.valid_up_to()));
                    out.bad.truncate(LINE_WARNINGS_KEPT + 1);
                    return;
                }
            }
        }
    };
    let trimmed = raw.trim_start();
    let lead = raw.len() - trimmed.len();
    let trimmed = trimmed.trim_end();
    if trimmed.is_empty() {
        counts.blank += 1;
        return;
    }
    if trimmed.len() > max_line {
        out.bad.push(overlong_line(block, counts.lines, max_line));
        return;
    }
    out.builder.set_position((block as u64) << 32 | counts.lines as u64);
    match out.builder.add_json_whole(trimmed) {
        Ok(id) => {
            let at = offset + lead as u64;
            let r = rank(at);
            if out.sample.wants(r, trimmed.len()) {
                out.sample.keep(Sampled {
                    rank: r,
                    offset: at,
                    text: trimmed.into(),
                    id,
                    block,
                    item: counts.items,
                });
            }
            counts.items += 1;
            counts.good_line(crate::nesting::indent(raw.as_bytes()));
        }
        Err(e) => {
            counts.bad_line(raw.as_bytes());
            let error = line_error(&e);
            out.bad.push(BadLine {
                block,
                line: counts.lines,
                column: error.column + lead,
                message: error.message,
            });
            // Keep the first ones only; the rest are counted from the block counts.
            out.bad.truncate(LINE_WARNINGS_KEPT + 1);
        }
    }
}

/// The warning for line `line` of block `block`, whose bytes `raw` are UTF-8 up to `valid`.
fn not_utf8_line(block: usize, line: usize, raw: &[u8], valid: usize) -> BadLine {
    let (column, message) = crate::ndjson::not_utf8_line(raw, valid);
    BadLine { block, line, column, message }
}

/// How much memory a streamed profile needed: what the workers' counters needed together at
/// most, each measured after fitting what the others left of the budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// The budget the statistics had, in bytes.
    pub budget: usize,
    /// The most the workers' counters needed together.
    pub peak_needed: usize,
    /// Bytes of counters spilled to scratch files (gone once the profile was finished).
    pub spilled: u64,
}

/// Profiles the NDJSON document file `path` by streaming (see the module docs).
pub fn load_streamed(
    spec: &SourceSpec,
    path: &Path,
    options: StreamOptions,
    progress: &dyn Progress,
) -> Result<(Source, StreamStats), SourceError> {
    stream(spec, path, options, crate::ReadMode::COPY, progress)
}

/// [`load_streamed`], reading blocks as slices of the file's mapping when `mode` allows one
/// ([`crate::ReadMode::map`]: a one-shot command; no copy of every byte), else by positioned
/// reads.
pub(crate) fn stream(
    spec: &SourceSpec,
    path: &Path,
    options: StreamOptions,
    mode: crate::ReadMode,
    progress: &dyn Progress,
) -> Result<(Source, StreamStats), SourceError> {
    let new = |spill: Option<&Spill>| match spill {
        Some(spill) => ProfileBuilder::new().capture_ids().spill_to(spill.clone()),
        None => ProfileBuilder::new().capture_ids(),
    };
    let read = read_documents(path, &options, mode, progress, &new)?;
    let Read {
        builder,
        sample,
        mut warnings,
        skipped,
        items_before,
        items,
        peak_needed,
        spill,
        len,
    } = read;
    let budget = options.budget;
    // Fitting is by block, so a few percent past the budget is within what "about" says.
    if peak_needed > budget + budget / 32 {
        let (needed, budget) = size_texts_apart(peak_needed as u64, budget as u64);
        // What stays in memory past the budget differs: spilling writes out any property's
        // counters worth a chunk, sketching (without spilling, or once it failed) only those a
        // sketch is smaller than.
        let held = if spill.as_ref().is_some_and(|s| s.declined().is_none()) {
            "counters too small to be worth spilling (many small properties) stay in memory"
        } else {
            "what cannot be sketched (many properties, few-valued ones, many distinct long strings) is held exactly"
        };
        warnings.push(LoadWarning::new(format!(
            "the statistics needed up to about {needed} at once, more than the memory budget of {budget}: the cores reading the file fit the budget block by block, and {held}"
        )));
    }
    let name = spec.name.as_str();
    let profile = builder.unwrap_or_default().finish(items as u64);
    let spill = spill.as_ref();
    check_spill(path, &profile, budget, spill, &mut warnings)?;
    let spilled = spill.map_or(0, |s| s.written());
    if let Some(warning) = repeated_ids(&profile) {
        warnings.push(warning);
    }
    let collection = sample_collection(name, sample, &items_before, profile, items as u64);
    crate::load::nothing_loaded(path, std::slice::from_ref(&collection), skipped, &warnings)?;
    if options.announce_sample
        && collection.sample_of().is_some_and(|t| t > collection.len() as u64)
    {
        warnings.push(LoadWarning::new(format!(
            "profiled by streaming ({} documents); {} of them are kept as a uniform sample, which sample_data, find_items and selections read",
            items,
            collection.len()
        )));
    }
    progress.finish();
    let source = Source {
        spec: spec.clone(),
        format: Format::Documents,
        collections: vec![Arc::new(collection)],
        warnings,
        path: Some(path.to_path_buf()),
        bytes: len,
        database: None,
        aimdb: None,
        direction: None,
    };
    Ok((source, StreamStats { budget, peak_needed, spilled }))
}

/// What the workers read from a file, merged: the counters (`None` for an empty file), the
/// sample, the warnings about its lines, the good documents before each block and in all, and
/// what the counters needed.
pub(crate) struct Read<R> {
    pub(crate) builder: Option<R>,
    pub(crate) sample: Sample,
    pub(crate) warnings: Vec<LoadWarning>,
    /// The lines skipped in all (`warnings` lists the first of them).
    pub(crate) skipped: usize,
    pub(crate) items_before: Vec<usize>,
    pub(crate) items: usize,
    /// The most the workers' counters needed together.
    peak_needed: usize,
    spill: Option<Spill>,
    /// The file's size.
    pub(crate) len: u64,
}

/// Reads the NDJSON document file `path` on every core into the counters `new` makes (given
/// where they may spill): see the module docs.
pub(crate) fn read_documents<R: Reader>(
    path: &Path,
    options: &StreamOptions,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    new: &(impl Fn(Option<&Spill>) -> R + Sync),
) -> Result<Read<R>, SourceError> {
    let block = options.block_bytes.max(1 << 10) as u64;
    // No size limit: memory does not grow with the file.
    let (file, metadata) = crate::file::open_regular(path)?;
    let len = metadata.len();
    progress.start(len);
    let map = if mode.is_mapped() { map_file(&file) } else { None };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
    let workers = threads.min(len.div_ceil(block).max(1) as usize);
    let budget = options.budget;
    let shared = Shared {
        file: &file,
        map: map.as_ref(),
        path,
        len,
        failed: AtomicBool::new(false),
        progress,
        budget: WorkerBudget::new(budget, workers),
        block,
        claims: BlockClaims::new(len.div_ceil(block), workers, MAX_STEALS_PER_WORKER * workers),
        max_line: options.max_line_bytes,
        spill: options.spill.as_ref().map(SpillOptions::spill),
    };
    let before = FileState::of(&metadata);
    type Parts<R> = Vec<(u64, WorkerResult<R>)>;
    let results: Vec<Result<Parts<R>, SourceError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let shared = &shared;
                scope.spawn(move || work(shared, w, new))
            })
            .collect();
        handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
    });
    // A file rewritten or truncated meanwhile gave figures of no version of it: say so.
    let after = file.metadata().ok().map(|m| FileState::of(&m));
    if after != Some(before) {
        return Err(SourceError::Io {
            path: path.to_path_buf(),
            cause: std::io::Error::other(
                "the file changed while it was being read (its size or times differ); read it again once it is written",
            ),
        });
    }
    let mut builder: Option<R> = None;
    let mut sample = Sample::default();
    let mut bad = Vec::new();
    let mut blocks: Vec<(usize, BlockCounts)> = Vec::new();
    let mut parts = Vec::new();
    for result in results {
        parts.extend(result?);
    }
    // Merged in file order, the counters hold the values in file order (see `block_claims`).
    parts.sort_by_key(|&(first, _)| first);
    for (_, result) in parts {
        match &mut builder {
            Some(b) => b.merge(result.builder),
            None => builder = Some(result.builder),
        }
        sample.merge(result.sample);
        bad.extend(result.bad);
        blocks.extend(result.blocks);
    }
    blocks.sort_by_key(|b| b.0);
    if values_over_lines(&blocks) {
        return Err(SourceError::ValuesOverLines { path: path.to_path_buf() });
    }
    // Lines and items before each block.
    let mut lines_before = Vec::with_capacity(blocks.len());
    let mut items_before = Vec::with_capacity(blocks.len());
    let (mut lines, mut items, mut blank) = (0usize, 0usize, 0usize);
    for (_, counts) in &blocks {
        lines_before.push(lines);
        items_before.push(items);
        lines += counts.lines;
        items += counts.items;
        blank += counts.blank;
    }
    let skipped_in_all = lines.saturating_sub(items + blank);
    bad.sort_by_key(|b| (b.block, b.line));
    let skipped = bad.len();
    let mut warnings: Vec<LoadWarning> = bad
        .iter()
        .take(LINE_WARNINGS_KEPT)
        .map(|b| {
            let line = lines_before.get(b.block).copied().unwrap_or(0) + b.line;
            LoadWarning::at(line, b.column, format!("skipped: {}", b.message))
        })
        .collect();
    if skipped > LINE_WARNINGS_KEPT {
        warnings.push(crate::skipped_lines::more_lines_skipped(skipped_in_all));
    }
    let peak_needed = shared.budget.peak();
    let spill = shared.spill;
    let skipped = skipped_in_all;
    Ok(Read { builder, sample, warnings, skipped, items_before, items, peak_needed, spill, len })
}

/// Whether the bad lines of `blocks` (in file order) hold JSON values over several lines with
/// good lines inside them, as a whole load would find (see [`crate::nesting`]).
fn values_over_lines(blocks: &[(usize, BlockCounts)]) -> bool {
    let mut walk = NestingWalk::default();
    for (_, counts) in blocks {
        if counts.nesting_overflow {
            return true;
        }
        let mut seen = 0;
        for step in &counts.nesting {
            walk.documents(step.items, step.items_indent);
            walk.plain_bad(step.plain_bad);
            walk.bad(step.nesting, step.indent);
            seen += step.items;
        }
        walk.documents(counts.items - seen, counts.indent_after);
        walk.plain_bad(counts.plain_bad_after);
    }
    walk.found()
}

/// What spilling did to a finished `profile`: an error when a chunk could not be read back (the
/// figures would miss its values), else the warning naming the properties the budget made
/// estimates, if any.
pub(crate) fn check_spill(
    path: &Path,
    profile: &schemascope_core::CollectionProfile,
    budget: usize,
    spill: Option<&Spill>,
    warnings: &mut Vec<LoadWarning>,
) -> Result<(), SourceError> {
    if let Some(failure) = spill.and_then(|s| s.failure()) {
        return Err(SourceError::Io {
            path: path.to_path_buf(),
            cause: std::io::Error::other(format!(
                "the profile's spilled counters could not be read back: {failure}"
            )),
        });
    }
    warnings.extend(estimated_properties(profile, budget, spill));
    Ok(())
}

/// The warning that the budget made some properties' figures estimates: how many and which,
/// and the lever, so that a reader learns it from the answer and not only from each figure's
/// stated error.
fn estimated_properties(
    profile: &schemascope_core::CollectionProfile,
    budget: usize,
    spill: Option<&schemascope_core::profile::Spill>,
) -> Option<LoadWarning> {
    const NAMED: usize = 8;
    let properties = profile.properties();
    let estimated: Vec<String> =
        properties.iter().filter(|p| p.approximate.is_some()).map(|p| p.path.to_string()).collect();
    if estimated.is_empty() {
        return None;
    }
    let mut named = estimated.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    if estimated.len() > NAMED {
        named.push_str(&format!(" and {} more", estimated.len() - NAMED));
    }
    let (why, lever) = match spill {
        None => (
            format!(
                "their exact counters would have outgrown the memory budget of {} (spilling to temporary files was off)",
                size_text(budget as u64)
            ),
            "a larger budget (--memory-budget), or spilling (without --no-spill), keeps them exact",
        ),
        Some(spill) => (
            format!(
                "their exact counters outgrew the memory budget of {} and could not be spilled to temporary files in {} ({})",
                size_text(budget as u64),
                spill.place(),
                spill.declined().map_or_else(|| "no reason given".to_string(), |e| e.to_string())
            ),
            "a larger cap (--spill-cap), or room in the directory (--spill-dir), keeps them exact",
        ),
    };
    Some(LoadWarning::new(format!(
        "{} of {} properties have estimated figures ({named}): {why}; each estimate states its error, and {lever}",
        estimated.len(),
        properties.len(),
    )))
}

/// Documents repeating an earlier `id`, as a whole load reports them: told from the profile
/// (no id is kept), exactly while `id`'s distinct count is exact. An estimated distinct count
/// reports repeats only when the shortfall is past three standard errors (unique ids estimated a
/// little low must not read as repeats), and otherwise says that it cannot tell.
fn repeated_ids(profile: &schemascope_core::CollectionProfile) -> Option<LoadWarning> {
    let id = profile.property(&"id".parse().ok()?)?;
    let scalars = id.types.string + id.types.integer + id.types.number + id.types.boolean;
    let repeats = scalars.saturating_sub(id.distinct);
    let estimated = id.approximate.is_some_and(|a| a.distinct_relative_error.is_some());
    if repeats == 0 && !estimated {
        return None;
    }
    let error = id.approximate.and_then(|a| a.distinct_relative_error);
    let about = match error {
        Some(e) if (repeats as f64) <= 3.0 * e * scalars as f64 => {
            // Too few to tell from the estimate's error: say that nothing is known.
            return Some(LoadWarning::new(format!(
                "whether documents repeat an earlier id is not known: `id`'s distinct count is an estimate ({}), so up to about {} repeats would not show (a streamed file keeps no ids)",
                id.approximate.and_then(|a| a.distinct_phrase()).unwrap_or_default(),
                (3.0 * e * scalars as f64).ceil() as u64
            )));
        }
        Some(e) => format!("about {repeats} (±{})", (2.0 * e * scalars as f64).ceil() as u64),
        None => repeats.to_string(),
    };
    Some(LoadWarning::new(format!(
        "{about} document(s) repeat an earlier id (told from the profile: a streamed file keeps no ids; the sample's repeats get a `~#N` suffix)"
    )))
}

/// The sampled documents, in file order, as the collection's items.
fn sample_collection(
    name: &str,
    sample: Sample,
    items_before: &[usize],
    profile: schemascope_core::CollectionProfile,
    total: u64,
) -> Collection {
    let mut kept = sample.heap.into_vec();
    kept.sort_by_key(|s| s.offset);
    let mut buffer = String::with_capacity(kept.iter().map(|s| s.text.len() + 1).sum());
    let mut entries = Vec::with_capacity(kept.len());
    let mut seen = std::collections::HashSet::new();
    for s in kept {
        let start = buffer.len();
        buffer.push_str(&s.text);
        buffer.push('\n');
        let position = items_before.get(s.block).copied().unwrap_or(0) + s.item;
        let id = match s.id {
            Some(id) => id.shifted(start),
            None => ItemId::Owned(format!("#{position}").into()),
        };
        // Ids repeated within the sample get the position's suffix, as a loaded file's would.
        let id = if seen.insert(id.resolve(&buffer).to_string()) {
            id
        } else {
            ItemId::Owned(format!("{}~#{position}", id.resolve(&buffer)).into())
        };
        entries.push(ItemEntry::new(id, start..start + s.text.len()));
    }
    Collection::new(name, CollectionKind::Documents, Arc::new(buffer.into()), entries, profile)
        .sampled_from(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;

    #[test]
    fn the_head_is_read_on_until_its_first_lines_settle_it() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{{\"text\": \"{}\"}}", "x".repeat(300 << 10));
        let cases = [
            // A first line longer than the first step, and its second line past it.
            (format!("{long}\n{{\"a\": 1}}\n"), "data.json", true),
            // Blank lines past the first step before the second document.
            (format!("{{\"a\": 1}}{}{{\"a\": 2}}\n", "\n".repeat(200 << 10)), "data.json", true),
            // One document: not lines, however long.
            (format!("{long}\n"), "data.json", false),
            // Lines of a file named NDJSON: bad first lines are skipped to a good one.
            (format!("{}{{\"a\": 1}}\n", "not json\n".repeat(20 << 10)), "data.ndjson", true),
            // A JSON array over several lines.
            (format!("[{}\n]\n", "1,\n".repeat(100 << 10)), "data.json", false),
            // Pretty-printed documents, whose lines include ones that are JSON alone (`"y"`),
            // and documents over several lines after a one-line one (tester helper-59).
            (
                "{\n  \"t\": [\n    \"x\",\n    \"y\"\n  ]\n}\n{\n  \"t\": [\n    \"z\"\n  ]\n}\n"
                    .into(),
                "data.ndjson",
                false,
            ),
            ("{}\n{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n".into(), "data.ndjson", false),
            // NDJSON whose first line is broken, whatever its name (tester helper-59 F3), its
            // lines settled past the first step; a document broken on its first line is not.
            (format!("{{\"a\": tru}}\n{long}\n{{\"a\": 1}}\n"), "data.json", true),
            ("nope\n{\"a\": 1}\n[2]\n".into(), "data.json", true),
            // Lines of arrays, as a whole load reads them too.
            ("[{\"a\": 1}]\n[{\"a\": 2}, 3]\n".into(), "data.json", true),
            ("{\"a\": 1,,\n  \"b\": {\"c\": 2}\n}\n".into(), "data.json", false),
            // Record lines are not documents.
            (
                "{\"key\": \"a\", \"value\": 1}\n{\"key\": \"b\", \"value\": 2}\n".into(),
                "data.json",
                false,
            ),
        ];
        for (text, name, expected) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, &text).unwrap();
            assert_eq!(is_document_lines(&path, None), expected, "{name}: {}", &text[..40]);
        }
    }

    /// Lines crossing every block edge, blank and bad ones, a byte-order mark, lines longer than
    /// the line limit (within one block and across several), unicode, no final newline.
    /// A window ends after its last newline, runs on to the next one past a long line, and
    /// takes the rest of a block without one; every window holds whole lines.
    #[test]
    fn windows_hold_whole_lines() {
        let text = b"ab\ncdefgh\nij\n0123456789abcdef\nxyz";
        let cases: [(usize, usize, usize); 7] =
            [(0, 4, 3), (0, 8, 3), (0, 11, 10), (3, 4, 10), (10, 4, 13), (13, 4, 30), (30, 4, 33)];
        for (start, window, end) in cases {
            assert_eq!(window_end(text, start, window), end, "from {start}, window {window}");
        }
        assert_eq!(window_end(b"no newline at all", 0, 4), 17);
        assert_eq!(window_bytes(1 << 10), 64);
        assert_eq!(window_bytes(65_536), 4_096);
        assert_eq!(window_bytes(BLOCK as u64), WINDOW);
    }

    fn awkward_text() -> String {
        let mut text = String::from("\u{feff}");
        for i in 0..3_000 {
            let line = match i % 53 {
                7 => String::new(),
                11 => "{\"id\": 1, \"broken\": ".into(),
                17 => format!("{{\"id\": \"long-{i}\", \"pad\": \"{}\"}}", "x".repeat(5_000 + i)),
                // Exactly one byte under, at and over a line limit of 3,000 with its newline.
                23 => {
                    let head = format!("{{\"id\": \"edge-{i}\", \"pad\": \"");
                    let target = 2_998 + (i / 53) % 3;
                    format!("{head}{}\"}}", "y".repeat(target - head.len() - 2))
                }
                _ => format!(
                    "{{\"id\": \"d-{i}\", \"n\": {}, \"s\": \"ünï-{}\", \"t\": [{i}, null]}}",
                    i as f64 * 0.37,
                    i % 17
                ),
            };
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str("{\"id\": \"last\", \"n\": 1}");
        text
    }

    #[test]
    #[allow(unsafe_code)]
    fn a_line_that_is_not_utf8_is_skipped_with_a_warning_however_blocks_cut() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = awkward_text();
        let clean_path = dir.path().join("clean.ndjson");
        std::fs::write(&clean_path, &text).expect("write");
        // Two good lines with a byte that is not UTF-8 for the quote closing `"n"`: the second
        // line (in the head's first step) and one past the middle.
        let mut bytes = text.into_bytes();
        let line_of =
            |bytes: &[u8], at: usize| bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let mut bad_lines = Vec::new();
        for needle in [&b"\"id\": \"d-1\""[..], &b"\"id\": \"d-2001\""[..]] {
            let at = bytes.windows(needle.len()).position(|w| w == needle).expect("the line");
            let column = needle.len() + 5;
            bytes[at + column - 1] = 0xFF;
            let start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |n| n + 1);
            bad_lines.push((line_of(&bytes, at), at + column - start));
        }
        let path = dir.path().join("docs.ndjson");
        std::fs::write(&path, &bytes).expect("write");
        let spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        let clean_spec: SourceSpec = clean_path.to_str().expect("utf-8").parse().expect("spec");
        let clean = stream(
            &clean_spec,
            &clean_path,
            StreamOptions::default(),
            crate::ReadMode::COPY,
            &NoProgress,
        )
        .expect("reads")
        .0;
        assert!(is_document_lines(&path, None), "recognised as lines despite the bad bytes");
        // Recognised from the lines with such bytes replaced, whatever the file's name; binary
        // data has no JSON line.
        let heads: [(&str, &[u8], bool); 3] = [
            ("first.json", b"{\"a\": \"\xFF\"}\n{\"a\": 1}\n", true),
            ("binary.ndjson", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\n\x00\x01", false),
            ("binary.json", b"\xff\xfe{\x00\"\x00a\x00\"\x00}\x00\n\x00", false),
        ];
        for (name, head, expected) in heads {
            let at = dir.path().join(name);
            std::fs::write(&at, head).expect("write");
            assert_eq!(is_document_lines(&at, None), expected, "{name}");
        }
        // SAFETY: the test's own file, which nothing rewrites while it is read.
        let mapped = unsafe { crate::ReadMode::map() };
        for mode in [crate::ReadMode::COPY, mapped] {
            for block_bytes in [1 << 10, 65_536, 8 << 20] {
                let options = StreamOptions { block_bytes, ..StreamOptions::default() };
                let (source, _) = stream(&spec, &path, options, mode, &NoProgress).expect("reads");
                let case = format!("{mode:?}, block {block_bytes}");
                let items = |s: &Source| s.collections[0].item_count();
                assert_eq!(items(&source) + 2, items(&clean), "{case}");
                let warnings: Vec<String> =
                    source.warnings.iter().map(ToString::to_string).collect();
                for (line, column) in &bad_lines {
                    let expected = format!(
                        "line {line}, column {column}: skipped: the line is not valid UTF-8 (byte 0xFF)"
                    );
                    assert!(
                        warnings.iter().any(|w| w.contains(&expected)),
                        "{case}: {expected} not in {warnings:?}"
                    );
                }
            }
        }
    }

    /// The profile of `text` read in 1 KiB blocks by worker 0 and then worker 1 of two (worker 0
    /// takes part 1's back half again and again before worker 1 starts), with the parts' builders
    /// merged as [`read_documents`] merges them; `budget` bytes, spilling when `spill`.
    fn profile_in_parts(
        text: &str,
        parts: usize,
        budget: usize,
        spill: bool,
    ) -> (serde_json::Value, Vec<String>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("docs.ndjson");
        std::fs::write(&path, text).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let block: u64 = 1 << 10;
        let blocks = text.len().div_ceil(block as usize) as u64;
        let spill = spill.then(|| SpillOptions { dir: Some(dir.path().into()), cap: 1 << 30 });
        let shared = Shared {
            file: &file,
            map: None,
            path: &path,
            len: text.len() as u64,
            failed: AtomicBool::new(false),
            progress: &NoProgress,
            budget: WorkerBudget::new(budget, parts),
            spill: spill.as_ref().map(SpillOptions::spill),
            block,
            claims: BlockClaims::new(blocks, parts, MAX_STEALS_PER_WORKER * parts),
            max_line: MAX_LINE_BYTES,
        };
        let new = |spill: Option<&Spill>| match spill {
            Some(spill) => ProfileBuilder::new().capture_ids().spill_to(spill.clone()),
            None => ProfileBuilder::new().capture_ids(),
        };
        let mut read: Vec<_> = (0..parts)
            .flat_map(|w| work(&shared, w, &new).unwrap_or_else(|e| panic!("worker {w}: {e}")))
            .collect();
        if parts > 1 {
            // Halving part 1's 280 blocks until none is left; under a tiny budget, until the
            // parts' small counters fill it.
            let taken = if budget >= 1 << 20 { 8 } else { 1 };
            assert!(read.len() >= parts + taken, "{} parts: too few taken", read.len());
        }
        read.sort_by_key(|&(first, _)| first);
        let mut items = 0;
        let mut builder: Option<ProfileBuilder> = None;
        for (_, part) in read {
            items += part.blocks.iter().map(|b| b.1.items).sum::<usize>();
            match &mut builder {
                Some(b) => b.merge(part.builder),
                None => builder = Some(part.builder),
            }
        }
        let profile = builder.expect("a part").finish(items as u64);
        if let Some(spill) = shared.spill.as_ref().filter(|_| budget < 1 << 20) {
            assert!(spill.written() > 0, "nothing spilled");
        }
        let paths = profile.properties().iter().map(|p| p.path.to_string()).collect();
        (serde_json::to_value(&profile).expect("serializes"), paths)
    }

    #[test]
    fn parts_taken_from_a_slow_worker_profile_as_one_worker_reading_all() {
        // Ascending ids and timestamps, a key first seen in the middle and one in the last lines,
        // floats and repeated texts.
        let text: String = (0..6_000)
            .map(|i| {
                let mut line = format!(
                    "{{\"id\": \"d-{i:06}\", \"at\": \"2024-01-01T{:02}:{:02}:{:02}Z\", \"x\": {}, \"k\": \"{}\"",
                    i / 3600,
                    i / 60 % 60,
                    i % 60,
                    (i as f64 * 0.731).sin(),
                    i % 7
                );
                if i >= 3_000 {
                    line.push_str(&format!(", \"mid\": {i}"));
                }
                if i >= 5_990 {
                    line.push_str(", \"late\": true");
                }
                line + "}\n"
            })
            .collect();
        // Parts are taken only where counters may spill (see `work`).
        for (budget, spill) in [(1 << 30, true), (64 << 10, true)] {
            let whole = profile_in_parts(&text, 1, budget, spill);
            let parts = profile_in_parts(&text, 2, budget, spill);
            assert_eq!(parts, whole, "budget {budget}, spill {spill}");
            assert_eq!(whole.1, ["id", "at", "x", "k", "mid", "late"], "paths in file order");
            assert!(whole.0.to_string().contains("\"distinct\":6000"), "ids and times distinct");
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn a_mapped_file_read_through_is_given_back_but_for_its_last_blocks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("docs.ndjson");
        let line =
            |i: usize| format!("{{\"id\": \"d-{i:08}\", \"pad\": \"{}\"}}\n", "p".repeat(i % 300));
        let text: String = (0..200_000).map(line).collect();
        std::fs::write(&path, &text).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let map = map_file(&file).expect("maps");
        let block: u64 = 1 << 20;
        let shared = Shared {
            file: &file,
            map: Some(&map),
            path: &path,
            len: text.len() as u64,
            failed: AtomicBool::new(false),
            progress: &NoProgress,
            budget: WorkerBudget::new(1 << 30, 1),
            spill: None,
            block,
            claims: BlockClaims::new(text.len().div_ceil(block as usize) as u64, 1, 0),
            max_line: MAX_LINE_BYTES,
        };
        let new = |_: Option<&Spill>| ProfileBuilder::new().capture_ids();
        let Ok(parts) = work(&shared, 0, &new) else { panic!("the blocks profile") };
        let items = parts.iter().flat_map(|(_, part)| &part.blocks).map(|b| b.1.items);
        assert_eq!(items.sum::<usize>(), 200_000);
        // Every block read, and given back but what fault-around maps past the last release.
        let resident = crate::read::resident_pages(&map) * 4096;
        assert!(resident <= 4 << 20, "{resident} bytes of {} still mapped in", text.len());
    }

    #[test]
    #[allow(unsafe_code)]
    fn mapped_blocks_read_what_positioned_reads_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("docs.ndjson");
        std::fs::write(&path, awkward_text()).expect("write");
        let spec: SourceSpec = path.to_str().expect("utf-8").parse().expect("spec");
        // SAFETY: the test's own file, which nothing rewrites while it is read.
        let mapped = unsafe { crate::ReadMode::map() };
        let said = |s: &Source| s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>();
        for block_bytes in [1 << 10, 4_099, 65_536, 8 << 20] {
            for max_line_bytes in [3_000, 7_000, MAX_LINE_BYTES] {
                let options =
                    StreamOptions { block_bytes, max_line_bytes, ..StreamOptions::default() };
                let read =
                    stream(&spec, &path, options.clone(), crate::ReadMode::COPY, &NoProgress);
                let map = stream(&spec, &path, options, mapped, &NoProgress);
                let ((read, _), (map, _)) = (read.expect("reads"), map.expect("maps"));
                let case = format!("block {block_bytes}, line limit {max_line_bytes}");
                let profile =
                    |s: &Source| serde_json::to_value(s.collections[0].profile()).expect("json");
                assert_eq!(profile(&map), profile(&read), "{case}");
                assert_eq!(said(&map), said(&read), "{case}");
                let items = |s: &Source| s.collections[0].item_count();
                assert_eq!(items(&map), items(&read), "{case}");
                let texts = |s: &Source| {
                    let items = s.collections[0].items();
                    items.map(|i| format!("{} {}", i.id, i.json)).collect::<Vec<_>>()
                };
                assert_eq!(texts(&map), texts(&read), "{case}");
            }
        }
    }
}
