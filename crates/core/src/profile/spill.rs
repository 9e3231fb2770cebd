//! Spilling: a streamed profile's exact counters that outgrow its memory budget go to scratch
//! files instead of becoming sketches, so the profile stays exact.
//!
//! When the budget is reached, the heaviest property's counters are sorted, folded into distinct
//! values with their counts and written out as one *chunk* (numbers in their order; strings by
//! hash bucket, or in text order as they came when they came in ascending order); the property keeps counting in memory and may write more chunks later.
//! Finishing merges a property's chunks and what is left in memory in one ordered pass (see
//! `spilled.rs`): every figure is then computed from every value, as in memory, holding only a
//! read buffer per chunk.
//!
//! The profiling core does no I/O of its own: where scratch files live is a [`ScratchSpace`]
//! the caller gives ([`ProfileBuilder::spill_to`]; the streamed loader's is a directory of
//! unnamed temporary files, gone when closed, whatever way the process ends). A [`Spill`] caps
//! the bytes written; past the cap, or when a write fails, a property falls back to sketches and
//! says it is estimated, as without spilling. A failed *read* of a chunk would lose values, so it
//! is recorded ([`Spill::failure`]) and the loader reports the load as failed.
//!
//! [`ProfileBuilder::spill_to`]: super::ProfileBuilder::spill_to

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::exact::NumberKey;
use crate::sync::lock;

/// One scratch file: written at offsets given by its owner, read back at them.
pub trait ScratchFile: Send + Sync {
    /// Writes all of `bytes` at `offset`.
    fn write_at(&self, bytes: &[u8], offset: u64) -> std::io::Result<()>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

/// Where scratch files are made (a directory of temporary files, or memory in tests).
pub trait ScratchSpace: Send + Sync {
    /// A new, empty scratch file.
    fn create(&self) -> std::io::Result<Box<dyn ScratchFile>>;
    /// Where the files are, for messages (a directory).
    fn place(&self) -> String;
}

/// Why a property's counters could not be spilled (it is then estimated).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpillError {
    /// The scratch files reached their cap.
    #[error("the temporary files reached their cap of {}", crate::size_text::size_text(*cap))]
    Cap {
        /// The cap, in bytes.
        cap: u64,
    },
    /// A scratch file could not be made, written or read.
    #[error("temporary file in {place}: {message}")]
    Io {
        /// Where the scratch files are.
        place: String,
        /// What failed.
        message: String,
    },
}

/// The scratch space of one streamed profile, shared by its builders: where files go, how many
/// bytes they may hold in all, and what went wrong.
#[derive(Clone)]
pub struct Spill {
    space: Arc<dyn ScratchSpace>,
    cap: u64,
    written: Arc<AtomicU64>,
    /// Why a property could not be spilled (the last reason), for the warning.
    declined: Arc<Mutex<Option<SpillError>>>,
    /// A chunk that could not be read back: the profile is incomplete.
    failure: Arc<Mutex<Option<SpillError>>>,
}

impl std::fmt::Debug for Spill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spill")
            .field("place", &self.space.place())
            .field("cap", &self.cap)
            .field("written", &self.written())
            .finish()
    }
}

impl Spill {
    /// Scratch files in `space`, at most `cap` bytes in all.
    pub fn new(space: Arc<dyn ScratchSpace>, cap: u64) -> Self {
        Self {
            space,
            cap,
            written: Arc::default(),
            declined: Arc::default(),
            failure: Arc::default(),
        }
    }

    /// Bytes written to scratch files so far.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// The cap on the bytes written.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Where the scratch files are.
    pub fn place(&self) -> String {
        self.space.place()
    }

    /// Why a property could not be spilled and was estimated instead, if one was.
    pub fn declined(&self) -> Option<SpillError> {
        lock(&self.declined).clone()
    }

    /// A chunk that could not be read back, if one could not: the profile misses its values.
    pub fn failure(&self) -> Option<SpillError> {
        lock(&self.failure).clone()
    }

    pub(super) fn decline(&self, error: SpillError) {
        *lock(&self.declined) = Some(error);
    }

    pub(super) fn fail(&self, error: SpillError) {
        lock(&self.failure).get_or_insert(error);
    }

    fn io_error(&self, error: &std::io::Error) -> SpillError {
        SpillError::Io { place: self.space.place(), message: error.to_string() }
    }
}

/// One builder's scratch file, appended to piece by piece.
pub(crate) struct Scratch {
    spill: Spill,
    file: Box<dyn ScratchFile>,
    end: AtomicU64,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} bytes)", self.end.load(Ordering::Relaxed))
    }
}

impl Scratch {
    /// A new scratch file of `spill`.
    pub(super) fn create(spill: &Spill) -> Result<Arc<Self>, SpillError> {
        let file = spill.space.create().map_err(|e| spill.io_error(&e))?;
        Ok(Arc::new(Self { spill: spill.clone(), file, end: AtomicU64::new(0) }))
    }

    /// Records that chunks of this file could not be finished (see [`Spill::failure`]).
    pub(super) fn fail(&self, error: SpillError) {
        self.spill.fail(error);
    }

    /// Appends `bytes`, within the cap; returns their offset.
    fn append(&self, bytes: &[u8]) -> Result<u64, SpillError> {
        let len = bytes.len() as u64;
        let before = self.spill.written.fetch_add(len, Ordering::Relaxed);
        if before + len > self.spill.cap {
            self.spill.written.fetch_sub(len, Ordering::Relaxed);
            return Err(SpillError::Cap { cap: self.spill.cap });
        }
        let at = self.end.fetch_add(len, Ordering::Relaxed);
        self.file.write_at(bytes, at).map_err(|e| self.spill.io_error(&e))?;
        Ok(at)
    }
}

/// Bytes per piece of a chunk: what a reader holds of it at a time.
const PIECE: usize = 128 << 10;

/// Sorted distinct values with their counts, in a scratch file: a list of pieces, each whole
/// entries.
pub(crate) struct Chunk {
    scratch: Arc<Scratch>,
    pieces: Vec<(u64, u32)>,
    /// Values (counts summed).
    pub values: u64,
    /// Distinct values.
    pub entries: u64,
    /// The first and last number, in a chunk of numbers.
    pub numbers: Option<(NumberKey, NumberKey)>,
    /// The bucket of each piece's first string, in a chunk of strings by bucket: where a reader
    /// of a range of buckets starts (see [`ChunkReader::from_bucket`]).
    first_buckets: Vec<u16>,
    /// In a chunk of strings by bucket, the bytes each piece's entries (hash, length, count)
    /// take before its texts, which follow them one after another: a reader checks a piece's
    /// texts as UTF-8 at once (one by one, most are too short for the SIMD check).
    entry_bytes: Vec<u32>,
    /// In a chunk of strings in ascending text order (values that arrived in order, as ids and
    /// timestamps do): where its pieces begin and where it ends.
    pub ascending: Option<TextRun>,
}

/// The layout of an ascending chunk of strings: each piece holds its texts one after another,
/// each without the bytes it shares with the text before it in the piece, then for each one
/// those shared bytes' length, its rest's length and its count. The texts begin each piece with
/// tell where a reader of a range of texts starts (see [`RunReader::from_text`]); its first and
/// last texts, which chunks can follow one another without a merge.
#[derive(Debug, Default)]
pub(crate) struct TextRun {
    /// The first text of each piece.
    pub firsts: Vec<String>,
    /// The bytes of text in each piece (its shared lengths, lengths and counts follow them).
    text_bytes: Vec<u32>,
    /// The chunk's last text.
    pub last: String,
}

impl Chunk {
    /// The scratch file the chunk is in.
    pub(super) fn scratch(&self) -> &Arc<Scratch> {
        &self.scratch
    }

    /// Reads `len` bytes at `offset` of its file into `buf`; false (recorded as the spill's
    /// failure, `buf` emptied) when they cannot be read.
    fn read_into(&self, buf: &mut Vec<u8>, offset: u64, len: usize) -> bool {
        buf.resize(len, 0);
        let read = self.scratch.file.read_exact_at(buf, offset);
        if let Err(e) = &read {
            let spill = &self.scratch.spill;
            spill.fail(spill.io_error(e));
            buf.clear();
        }
        read.is_ok()
    }

    /// Reads a piece of strings: `text_range` (offset and length in its file) into `texts` and
    /// `meta_range` into `meta`. False when they cannot be read, or when the texts are not UTF-8:
    /// chunks hold what was written from `str`s, so the piece was not read back as written
    /// (recorded as the spill's failure).
    fn read_strings(
        &self,
        texts: &mut String,
        text_range: (u64, usize),
        meta: &mut Vec<u8>,
        meta_range: (u64, usize),
    ) -> bool {
        let mut bytes = std::mem::take(texts).into_bytes();
        let read = self.read_into(&mut bytes, text_range.0, text_range.1)
            && self.read_into(meta, meta_range.0, meta_range.1);
        match String::from_utf8(bytes).ok().filter(|_| read) {
            Some(text) => {
                *texts = text;
                true
            }
            None => {
                if read {
                    self.fail_read("a chunk of strings read back is not UTF-8");
                }
                false
            }
        }
    }

    /// Records that the chunk was not read back as written.
    fn fail_read(&self, message: &str) {
        self.scratch.fail(SpillError::Io {
            place: self.scratch.spill.place(),
            message: message.to_string(),
        });
    }

    /// Bytes the chunk holds.
    pub(super) fn bytes(&self) -> u64 {
        self.pieces.iter().map(|&(_, len)| u64::from(len)).sum()
    }
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Chunk({} values, {} entries)", self.values, self.entries)
    }
}

/// Writes a chunk's entries, in order.
pub(super) struct ChunkWriter {
    chunk: Chunk,
    buf: Vec<u8>,
    /// The texts of the strings in `buf`, which a piece holds after their entries.
    texts: Vec<u8>,
    /// Whether the entries are strings, whose pieces' first buckets are kept.
    strings: bool,
    /// The [`order_key`] of the piece's last number (0 at a piece's start).
    previous: u64,
}

impl ChunkWriter {
    pub(super) fn new(scratch: &Arc<Scratch>) -> Self {
        Self {
            chunk: Chunk {
                scratch: scratch.clone(),
                pieces: Vec::new(),
                values: 0,
                entries: 0,
                numbers: None,
                first_buckets: Vec::new(),
                entry_bytes: Vec::new(),
                ascending: None,
            },
            buf: Vec::with_capacity(PIECE + 64),
            texts: Vec::new(),
            strings: false,
            previous: 0,
        }
    }

    fn flush(&mut self) -> Result<(), SpillError> {
        // Each piece reads on its own: its first number is written whole.
        self.previous = 0;
        if !self.buf.is_empty() {
            let mut buf = std::mem::take(&mut self.buf);
            let written = if self.strings {
                let entries = buf.len();
                buf.extend_from_slice(&self.texts);
                self.texts.clear();
                self.string_piece(&buf, entries)
            } else {
                self.piece(&buf)
            };
            self.buf = buf;
            self.buf.clear();
            written?;
        }
        Ok(())
    }

    /// Counts an entry of `n` values just written, and writes out a full piece.
    fn entry_done(&mut self, n: u64) -> Result<(), SpillError> {
        self.chunk.values += n;
        self.chunk.entries += 1;
        if self.buf.len() + self.texts.len() >= PIECE { self.flush() } else { Ok(()) }
    }

    /// Adds a number seen `n` times (numbers in ascending order), as the distance of its
    /// [`order_key`] from the one before: a few bytes where the eight of a double were written
    /// (a spilled 10M-row file wrote and read back a gigabyte). An entry is a [`NumberHead`]
    /// byte, the distance's bytes, then the offset and the count only where not 0 and 1.
    pub(super) fn number(&mut self, key: NumberKey, n: u64) -> Result<(), SpillError> {
        let bounds = self.chunk.numbers.get_or_insert((key, key));
        bounds.1 = key;
        let ordered = order_key(key.double());
        // Never below the one before for ascending numbers; wrapping keeps any order exact.
        let distance = ordered.wrapping_sub(self.previous);
        self.previous = ordered;
        let head = NumberHead::new(distance, key.offset(), n);
        self.buf.push(head.0);
        self.buf.extend_from_slice(&distance.to_le_bytes()[..head.distance_bytes()]);
        if head.has_offset() {
            put_varint(&mut self.buf, zigzag(key.offset()));
        }
        if head.has_count() {
            put_varint(&mut self.buf, n);
        }
        self.entry_done(n)
    }

    /// Adds a string seen `n` times with its hash (strings in the order of the hash's top bits:
    /// what a merge reads a bucket at a time).
    #[cfg(test)]
    pub(super) fn hashed_string(
        &mut self,
        hash: u64,
        text: &str,
        n: u64,
    ) -> Result<(), SpillError> {
        self.strings = true;
        self.buf.extend_from_slice(&hash.to_le_bytes());
        put_varint(&mut self.buf, text.len() as u64);
        self.texts.extend_from_slice(text.as_bytes());
        put_varint(&mut self.buf, n);
        self.entry_done(n)
    }

    /// Adds every string `tally()` yields (with its hash and count, in any order, a string
    /// more than once if need be: finishing folds equal strings) in the order of their hashes'
    /// buckets, which a merge reads a bucket at a time.
    ///
    /// Visiting the strings in bucket order would cost a cache miss per string, as their texts
    /// lie in the order they arrived. Instead a window of buckets at a time is laid out in
    /// memory by one pass over the tally in its own order, each string copied to its bucket's
    /// place: reads in order, writes to one cursor per bucket.
    pub(super) fn hashed_strings_by_bucket<'t, I>(
        &mut self,
        tally: impl Fn() -> I,
    ) -> Result<(), SpillError>
    where
        I: Iterator<Item = (u64, &'t str, u64)>,
    {
        use super::spilled::{BUCKET_BITS, bucket_of};
        self.flush()?;
        self.strings = true;
        let buckets = 1usize << BUCKET_BITS;
        let entry_bytes = |text: &str, n: u64| 8 + varint_len(text.len() as u64) + varint_len(n);
        // Each bucket's entries and its texts, in bytes.
        let mut sizes = vec![(0usize, 0usize); buckets];
        for (hash, text, n) in tally() {
            let size = &mut sizes[usize::from(bucket_of(hash))];
            size.0 += entry_bytes(text, n);
            size.1 += text.len();
            self.chunk.values += n;
            self.chunk.entries += 1;
        }
        let (mut entries, mut texts, mut piece) = (Vec::new(), Vec::new(), Vec::new());
        let mut cursors = vec![(0usize, 0usize); buckets];
        let mut first = 0;
        while first < buckets {
            let mut end = first;
            let (mut entry_end, mut text_end) = (0, 0);
            while end < buckets
                && (end == first || entry_end + text_end + sizes[end].0 + sizes[end].1 <= WINDOW)
            {
                cursors[end] = (entry_end, text_end);
                entry_end += sizes[end].0;
                text_end += sizes[end].1;
                end += 1;
            }
            entries.clear();
            entries.resize(entry_end, 0);
            texts.clear();
            texts.resize(text_end, 0);
            for (hash, text, n) in tally() {
                let bucket = usize::from(bucket_of(hash));
                if bucket < first || bucket >= end {
                    continue;
                }
                let (at, text_at) = &mut cursors[bucket];
                *at = put_at(&mut entries, *at, &hash.to_le_bytes());
                *at = put_varint_at(&mut entries, *at, text.len() as u64);
                *at = put_varint_at(&mut entries, *at, n);
                *text_at = put_at(&mut texts, *text_at, text.as_bytes());
            }
            // Pieces end where a bucket does (an entry's end), each about a piece long.
            let (mut start, mut at) = ((0, 0), (0, 0));
            for (k, &(entry_size, text_size)) in sizes[first..end].iter().enumerate() {
                at = (at.0 + entry_size, at.1 + text_size);
                if at.0 + at.1 - start.0 - start.1 >= PIECE || first + k + 1 == end {
                    if at.0 > start.0 {
                        piece.clear();
                        piece.extend_from_slice(&entries[start.0..at.0]);
                        piece.extend_from_slice(&texts[start.1..at.1]);
                        self.string_piece(&piece, at.0 - start.0)?;
                    }
                    start = at;
                }
            }
            first = end;
        }
        Ok(())
    }

    /// Writes `run` (distinct strings in ascending order, with their counts) as the chunk's
    /// entries, in the layout of [`TextRun`]: no hash, no reordering, and each text without
    /// the start it shares with the one before (ids and timestamps in order share most of it).
    pub(super) fn ascending_strings<'t>(
        &mut self,
        run: impl IntoIterator<Item = (&'t str, u64)>,
    ) -> Result<(), SpillError> {
        self.flush()?;
        let mut layout = TextRun::default();
        let (mut texts, mut meta) = (Vec::with_capacity(PIECE + 64), Vec::new());
        let mut last = "";
        for (text, n) in run {
            let shared = if meta.is_empty() {
                layout.firsts.push(text.to_string());
                0
            } else {
                shared_start(last, text)
            };
            texts.extend_from_slice(&text.as_bytes()[shared..]);
            put_varint(&mut meta, shared as u64);
            put_varint(&mut meta, (text.len() - shared) as u64);
            put_varint(&mut meta, n);
            self.chunk.values += n;
            self.chunk.entries += 1;
            last = text;
            if texts.len() + meta.len() >= PIECE {
                self.text_piece(&mut texts, &mut meta, &mut layout)?;
            }
        }
        if !meta.is_empty() {
            self.text_piece(&mut texts, &mut meta, &mut layout)?;
        }
        layout.last = last.to_string();
        self.chunk.ascending = Some(layout);
        Ok(())
    }

    /// Writes `texts` and then `meta` as one piece of an ascending chunk, and empties them.
    fn text_piece(
        &mut self,
        texts: &mut Vec<u8>,
        meta: &mut Vec<u8>,
        layout: &mut TextRun,
    ) -> Result<(), SpillError> {
        layout.text_bytes.push(texts.len() as u32);
        texts.extend_from_slice(meta);
        let written = self.piece(texts);
        texts.clear();
        meta.clear();
        written
    }

    /// Appends `bytes`, the first `entries` of them strings' entries and the rest their texts,
    /// as one piece.
    fn string_piece(&mut self, bytes: &[u8], entries: usize) -> Result<(), SpillError> {
        self.piece(bytes)?;
        self.chunk.entry_bytes.push(entries as u32);
        Ok(())
    }

    /// Appends `bytes` (whole entries) as one piece.
    fn piece(&mut self, bytes: &[u8]) -> Result<(), SpillError> {
        let at = self.chunk.scratch.append(bytes)?;
        self.chunk.pieces.push((at, bytes.len() as u32));
        // A string entry starts with its hash.
        if self.strings
            && let Some(hash) = bytes.first_chunk::<8>()
        {
            self.chunk.first_buckets.push(super::spilled::bucket_of(u64::from_le_bytes(*hash)));
        }
        Ok(())
    }

    /// The chunk, written.
    pub(super) fn finish(mut self) -> Result<Chunk, SpillError> {
        self.flush()?;
        Ok(self.chunk)
    }
}

/// The bytes `a` and `b` start with alike, up to a character's end (so each rest is text).
fn shared_start(a: &str, b: &str) -> usize {
    let same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (0..=same).rev().find(|&at| b.is_char_boundary(at)).unwrap_or(0)
}

/// Bytes a window of buckets holds at most while [`ChunkWriter::hashed_strings_by_bucket`]
/// lays it out (one bucket larger than this is a window of its own).
const WINDOW: usize = 16 << 20;

/// Bytes [`put_varint`] writes for `n`.
fn varint_len(n: u64) -> usize {
    (64 - (n | 1).leading_zeros() as usize).div_ceil(7)
}

/// `bytes` written into `buf` at `at`; the position after them.
fn put_at(buf: &mut [u8], at: usize, bytes: &[u8]) -> usize {
    let end = at + bytes.len();
    buf[at..end].copy_from_slice(bytes);
    end
}

/// [`put_varint`] into `buf` at `at`; the position after it.
fn put_varint_at(buf: &mut [u8], mut at: usize, mut n: u64) -> usize {
    while n >= 0x80 {
        buf[at] = n as u8 | 0x80;
        n >>= 7;
        at += 1;
    }
    buf[at] = n as u8;
    at + 1
}

fn put_varint(buf: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        buf.push(n as u8 | 0x80);
        n >>= 7;
    }
    buf.push(n as u8);
}

/// The first byte of a number's entry in a chunk: how many bytes its distance takes (0 to 8),
/// and whether an offset and a count other than 1 follow them.
#[derive(Clone, Copy)]
struct NumberHead(u8);

impl NumberHead {
    const OFFSET: u8 = 0x10;
    const COUNT: u8 = 0x20;

    fn new(distance: u64, offset: i64, n: u64) -> Self {
        let bytes = (64 - distance.leading_zeros()).div_ceil(8) as u8;
        let offset = if offset == 0 { 0 } else { Self::OFFSET };
        let count = if n == 1 { 0 } else { Self::COUNT };
        Self(bytes | offset | count)
    }

    fn distance_bytes(self) -> usize {
        usize::from(self.0 & 0x0f).min(8)
    }

    fn has_offset(self) -> bool {
        self.0 & Self::OFFSET != 0
    }

    fn has_count(self) -> bool {
        self.0 & Self::COUNT != 0
    }
}

/// `double`'s bits as an integer in the doubles' total order (`f64::total_cmp`), which
/// ascending numbers follow (a chunk holds one zero, -0 or 0).
pub(super) fn order_key(double: f64) -> u64 {
    let bits = double.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

/// The double whose [`order_key`] is `key`.
pub(super) fn from_order_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// Reads a chunk's entries back, one piece in memory at a time. A read that fails is recorded
/// as the spill's failure and ends the entries.
pub(super) struct ChunkReader<'a> {
    chunk: &'a Chunk,
    piece: usize,
    /// The piece's entries.
    buf: Vec<u8>,
    at: usize,
    /// The piece's texts, in a chunk of strings.
    texts: String,
    text_at: usize,
    /// The [`order_key`] of the number read last in the piece.
    previous: u64,
}

impl<'a> ChunkReader<'a> {
    pub(super) fn new(chunk: &'a Chunk) -> Self {
        Self {
            chunk,
            piece: 0,
            buf: Vec::new(),
            at: 0,
            texts: String::new(),
            text_at: 0,
            previous: 0,
        }
    }

    /// A reader of a chunk of strings from the first string of bucket `bucket` or a later one.
    pub(super) fn from_bucket(chunk: &'a Chunk, bucket: u16) -> Self {
        // A bucket may begin at the end of the piece before the first piece it opens.
        let opens = chunk.first_buckets.partition_point(|&first| first < bucket);
        let mut reader = Self::new(chunk);
        reader.piece = opens.saturating_sub(1);
        while reader.peek_hash().is_some_and(|hash| super::spilled::bucket_of(hash) < bucket) {
            if reader.hashed_string().is_none() {
                break;
            }
        }
        reader
    }

    /// True when an entry is ready in the buffer (loading the next piece if needed).
    fn ready(&mut self) -> bool {
        while self.at >= self.buf.len() {
            let Some(&(offset, len)) = self.chunk.pieces.get(self.piece) else { return false };
            let entries = self.chunk.entry_bytes.get(self.piece).map(|&e| e as usize);
            self.piece += 1;
            (self.at, self.text_at, self.previous) = (0, 0, 0);
            let len = len as usize;
            let read = match entries {
                None => self.chunk.read_into(&mut self.buf, offset, len),
                Some(entries) => self.chunk.read_strings(
                    &mut self.texts,
                    (offset + entries as u64, len.saturating_sub(entries)),
                    &mut self.buf,
                    (offset, entries),
                ),
            };
            if !read {
                self.end();
                return false;
            }
        }
        true
    }

    /// Ends the entries (the chunk could not be read back as written).
    fn end(&mut self) {
        self.piece = self.chunk.pieces.len();
        self.buf.clear();
        self.at = 0;
    }

    fn varint(&mut self) -> u64 {
        let (n, end) = varint_at(&self.buf, self.at);
        self.at = end;
        n
    }

    fn word(&mut self) -> Option<u64> {
        let bits = self.buf.get(self.at..self.at + 8)?;
        Some(u64::from_le_bytes(bits.try_into().ok()?))
    }

    /// The next number and its count.
    pub(super) fn number(&mut self) -> Option<(NumberKey, u64)> {
        if !self.ready() {
            return None;
        }
        let head = NumberHead(*self.buf.get(self.at)?);
        let (start, len) = (self.at + 1, head.distance_bytes());
        let distance = match self.buf.get(start..start + 8) {
            // Eight bytes read at once and the distance's kept: no loop over its bytes.
            Some(word) => {
                let word = u64::from_le_bytes(word.try_into().ok()?);
                word & u64::MAX.checked_shr(64 - 8 * len as u32).unwrap_or(0)
            }
            None => {
                let mut word = [0u8; 8];
                word[..len].copy_from_slice(self.buf.get(start..start + len)?);
                u64::from_le_bytes(word)
            }
        };
        self.at = start + len;
        self.previous = self.previous.wrapping_add(distance);
        let offset = if head.has_offset() { unzigzag(self.varint()) } else { 0 };
        let n = if head.has_count() { self.varint() } else { 1 };
        Some((NumberKey::from_parts(from_order_key(self.previous), offset), n))
    }

    /// Up to `most` more numbers onto `out`; false when there were none left.
    pub(super) fn numbers(&mut self, out: &mut Vec<(NumberKey, u64)>, most: usize) -> bool {
        for k in 0..most {
            match self.number() {
                Some(entry) => out.push(entry),
                None => return k > 0,
            }
        }
        true
    }

    /// The hash of the next string, without reading it.
    pub(super) fn peek_hash(&mut self) -> Option<u64> {
        if !self.ready() {
            return None;
        }
        self.word()
    }

    /// The next string with its hash and count (the text borrowed until the next call).
    pub(super) fn hashed_string(&mut self) -> Option<(u64, &str, u64)> {
        if !self.ready() {
            return None;
        }
        let hash = self.word()?;
        self.at += 8;
        let len = usize::try_from(self.varint()).unwrap_or(usize::MAX);
        let n = self.varint();
        let start = self.text_at;
        let end = start.saturating_add(len);
        if self.texts.get(start..end).is_none() {
            self.chunk.fail_read("a chunk of strings read back does not hold the texts it lists");
            self.end();
            return None;
        }
        self.text_at = end;
        Some((hash, self.texts.get(start..end)?, n))
    }
}

/// Reads an ascending chunk's strings back ([`TextRun`]), one piece in memory at a time: its
/// texts checked as UTF-8 once, as a whole. A read that fails is recorded as the spill's failure
/// and ends the strings.
pub(super) struct RunReader<'a> {
    chunk: &'a Chunk,
    piece: usize,
    /// The piece's texts whole, one after another.
    texts: String,
    /// Each text's range in `texts`, and its count.
    spans: Vec<(std::ops::Range<usize>, u64)>,
    /// The span the reader stands on.
    at: usize,
    /// The piece as written: the rests of its texts, and its entries.
    rests: Vec<u8>,
    entries: Vec<u8>,
}

impl<'a> RunReader<'a> {
    /// A reader of an ascending chunk from its first text not below `low` (`""`: all of it).
    pub(super) fn from_text(chunk: &'a Chunk, low: &str) -> Self {
        let firsts = chunk.ascending.as_ref().map_or(&[][..], |run| &run.firsts[..]);
        // Texts below `low` may end the piece before the first piece that begins past it.
        let opens = firsts.partition_point(|first| first.as_str() < low);
        let mut reader = Self {
            chunk,
            piece: opens.saturating_sub(1),
            texts: String::new(),
            spans: Vec::new(),
            at: 0,
            rests: Vec::new(),
            entries: Vec::new(),
        };
        while reader.head().is_some_and(|(text, _)| text < low) {
            reader.skip();
        }
        reader
    }

    /// True when a string is ready (loading the next piece if needed).
    fn ready(&mut self) -> bool {
        while self.at >= self.spans.len() {
            let (Some(&(offset, len)), Some(&text_bytes)) = (
                self.chunk.pieces.get(self.piece),
                self.chunk.ascending.as_ref().and_then(|run| run.text_bytes.get(self.piece)),
            ) else {
                return false;
            };
            self.piece += 1;
            let (text_bytes, len) = (text_bytes as usize, len as usize);
            let read = self.chunk.read_into(&mut self.rests, offset, text_bytes)
                && self.chunk.read_into(
                    &mut self.entries,
                    offset + text_bytes as u64,
                    len.saturating_sub(text_bytes),
                )
                && self.restore_piece();
            if !read {
                self.piece = self.chunk.pieces.len();
                self.spans.clear();
                return false;
            }
            self.at = 0;
        }
        true
    }

    /// The loaded piece's texts made whole again from their rests and the lengths they share
    /// (see [`TextRun`]), checked as UTF-8 once. False (recorded as the spill's failure) when
    /// the entries do not fit the texts or the texts are not UTF-8: the piece was not read back
    /// as written.
    fn restore_piece(&mut self) -> bool {
        let mut texts = std::mem::take(&mut self.texts).into_bytes();
        texts.clear();
        self.spans.clear();
        let (mut at, mut rests) = (0, &self.rests[..]);
        let mut previous = 0..0;
        let mut whole = true;
        while at < self.entries.len() {
            let (shared, next) = varint_at(&self.entries, at);
            let (len, next) = varint_at(&self.entries, next);
            let (n, next) = varint_at(&self.entries, next);
            at = next;
            let shared = usize::try_from(shared).ok().filter(|&s| s <= previous.len());
            let len = usize::try_from(len).ok().filter(|&len| len <= rests.len());
            let (Some(shared), Some(len)) = (shared, len) else {
                whole = false;
                break;
            };
            let start = texts.len();
            texts.extend_from_within(previous.start..previous.start + shared);
            texts.extend_from_slice(&rests[..len]);
            rests = &rests[len..];
            previous = start..texts.len();
            self.spans.push((previous.clone(), n));
        }
        if !whole || !rests.is_empty() {
            self.chunk.fail_read("a chunk of strings read back does not hold the texts it lists");
            return false;
        }
        // The rests were written from `str`s, each shared start ending on a character's end.
        match String::from_utf8(texts) {
            Ok(texts) => {
                self.texts = texts;
                true
            }
            Err(_) => {
                self.chunk.fail_read("a chunk of strings read back is not UTF-8");
                false
            }
        }
    }

    /// The string the reader stands on, with its count, without moving on.
    pub(super) fn head(&mut self) -> Option<(&str, u64)> {
        if !self.ready() {
            return None;
        }
        self.loaded()
    }

    /// What [`Self::head`] gives, once it has loaded the string's piece.
    pub(super) fn loaded(&self) -> Option<(&str, u64)> {
        let (span, n) = self.spans.get(self.at)?;
        Some((self.texts.get(span.clone())?, *n))
    }

    /// Where the piece the reader stands in ends, once loaded: every string left in it is
    /// below the text given, or at most it when `true` (the chunk's last piece).
    pub(super) fn piece_end(&self) -> Option<(&'a str, bool)> {
        let run = self.chunk.ascending.as_ref()?;
        Some(match run.firsts.get(self.piece) {
            Some(next) => (next.as_str(), false),
            None => (run.last.as_str(), true),
        })
    }

    /// Hands every string left in the loaded piece to `add`, with its count.
    pub(super) fn drain_piece(&mut self, mut add: impl FnMut(&str, u64)) {
        while self.at < self.spans.len() {
            if let Some((text, n)) = self.loaded() {
                add(text, n);
            }
            self.skip();
        }
    }

    /// Moves past the string the reader stands on.
    pub(super) fn skip(&mut self) {
        self.at += 1;
    }
}

/// The varint at `at` in `buf` and where it ends (what it holds up to `buf`'s end, if it is cut).
fn varint_at(buf: &[u8], mut at: usize) -> (u64, usize) {
    let mut n = 0u64;
    let mut shift = 0;
    while let Some(&byte) = buf.get(at) {
        at += 1;
        n |= u64::from(byte & 0x7f) << shift.min(63);
        shift += 7;
        if byte < 0x80 {
            return (n, at);
        }
    }
    (n, at)
}

/// Scratch files kept in memory: for tests, and where no directory may be written.
#[derive(Debug, Default)]
pub struct MemoryScratch;

struct MemoryFile(Mutex<Vec<u8>>);

impl ScratchFile for MemoryFile {
    fn write_at(&self, bytes: &[u8], offset: u64) -> std::io::Result<()> {
        let mut data = lock(&self.0);
        let end = offset as usize + bytes.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(bytes);
        Ok(())
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let data = lock(&self.0);
        let from = offset as usize;
        let bytes = data
            .get(from..from + buf.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

impl ScratchSpace for MemoryScratch {
    fn create(&self) -> std::io::Result<Box<dyn ScratchFile>> {
        Ok(Box::new(MemoryFile(Mutex::new(Vec::new()))))
    }

    fn place(&self) -> String {
        "memory".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_read_back_what_was_written_across_pieces() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut numbers = ChunkWriter::new(&scratch);
        let keys: Vec<(NumberKey, u64)> = (0..40_000)
            .map(|i: u32| {
                (NumberKey::float(f64::from(i) * 0.5 - 7.0), u64::from(i % 3 + 1) << (i % 40))
            })
            .chain([(NumberKey::integer((1 << 60) + 3), 2), (NumberKey::float(f64::MAX), 1)])
            .collect();
        for &(k, n) in &keys {
            numbers.number(k, n).expect("write");
        }
        let mut strings = ChunkWriter::new(&scratch);
        let texts: Vec<String> = (0..30_000).map(|i| format!("é-{i:08}-ü")).collect();
        for (i, t) in texts.iter().enumerate() {
            strings.hashed_string(i as u64 * 0x9e37_79b9, t, 2).expect("write");
        }
        let (numbers, strings) = (numbers.finish().expect("n"), strings.finish().expect("s"));
        assert!(numbers.pieces.len() > 1 && strings.pieces.len() > 1);
        let mut read = ChunkReader::new(&numbers);
        let back: Vec<(NumberKey, u64)> = std::iter::from_fn(|| read.number()).collect();
        assert_eq!(back, keys);
        assert_eq!(numbers.values, keys.iter().map(|k| k.1).sum::<u64>());
        let mut read = ChunkReader::new(&strings);
        let mut back = Vec::new();
        while let Some(hash) = read.peek_hash() {
            let (h, t, n) = read.hashed_string().expect("an entry after its hash");
            assert_eq!(h, hash);
            back.push((h, t.to_string(), n));
        }
        let written: Vec<(u64, String, u64)> =
            texts.iter().enumerate().map(|(i, t)| (i as u64 * 0x9e37_79b9, t.clone(), 2)).collect();
        assert_eq!(back, written);
        // A few at a time, numbers read back as one by one.
        let mut read = ChunkReader::new(&numbers);
        let mut out = Vec::new();
        while read.numbers(&mut out, 1_000) {}
        assert_eq!(out, keys);
        assert!(spill.failure().is_none());
    }

    #[test]
    fn numbers_are_written_as_distances_in_the_doubles_order_and_read_back_exactly() {
        let mut doubles = vec![
            f64::NEG_INFINITY,
            -f64::MAX,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1e-310,
            f64::MIN_POSITIVE,
            0.1,
            9_007_199_254_740_992.0,
            f64::MAX,
            f64::INFINITY,
        ];
        let keys: Vec<u64> = doubles.iter().map(|&d| order_key(d)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        for (&d, &k) in doubles.iter().zip(&keys) {
            assert_eq!(from_order_key(k).to_bits(), d.to_bits());
        }
        // Any order reads back as written (the distances wrap), though chunks are ascending.
        doubles.reverse();
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut writer = ChunkWriter::new(&scratch);
        let entries: Vec<(NumberKey, u64)> = doubles
            .iter()
            .map(|&d| (NumberKey::float(d), 1))
            .chain([
                (NumberKey::integer((1 << 60) - 5), 3),
                (NumberKey::integer(-(1 << 62) + 7), 1),
            ])
            .collect();
        for &(key, n) in &entries {
            writer.number(key, n).expect("write");
        }
        let chunk = writer.finish().expect("chunk");
        let mut read = ChunkReader::new(&chunk);
        let back: Vec<(u64, i64, u64)> = std::iter::from_fn(|| read.number())
            .map(|(k, n)| (k.double().to_bits(), k.offset(), n))
            .collect();
        let written: Vec<(u64, i64, u64)> =
            entries.iter().map(|(k, n)| (k.double().to_bits(), k.offset(), *n)).collect();
        assert_eq!(back, written);
        // Ascending latitudes 1e-5 apart, once each: five bytes each (a head and 31 bits of
        // distance), where a whole double, its offset and its count took ten.
        let mut writer = ChunkWriter::new(&scratch);
        for i in 0..10_000 {
            writer.number(NumberKey::float(40.0 + f64::from(i) * 1e-5), 1).expect("write");
        }
        let chunk = writer.finish().expect("chunk");
        assert!(chunk.bytes() < 10_000 * 5 + 16, "{} bytes", chunk.bytes());
    }

    /// A piece whose texts were changed under the reader into bytes that are not UTF-8 ends the
    /// strings and fails the spill: no string is read back as another.
    #[test]
    fn texts_changed_in_the_scratch_file_fail_the_spill() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut strings = ChunkWriter::new(&scratch);
        for i in 0..20_000u64 {
            strings.hashed_string(i << 40, &format!("text-{i}"), 1).expect("write");
        }
        let strings = strings.finish().expect("written");
        assert!(strings.pieces.len() > 2);
        let (offset, _) = strings.pieces[1];
        let texts_at = offset + u64::from(strings.entry_bytes[1]);
        scratch.file.write_at(&[0xFF], texts_at + 2).expect("changed");
        let mut read = ChunkReader::new(&strings);
        let mut back = 0;
        while read.hashed_string().is_some() {
            back += 1;
        }
        assert!(back > 0 && back < 20_000, "{back}");
        assert!(spill.failure().is_some_and(|e| e.to_string().contains("not UTF-8")));
    }

    /// Every text of an ascending run read back whole, however pieces cut it and wherever the
    /// bytes it shares with the text before end inside a character.
    #[test]
    fn ascending_texts_written_without_their_shared_starts_read_back_whole() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut texts: Vec<String> =
            ["", "a", "aè", "aé", "aéb", "b", "日本", "日本語", "日末", "🦀", "🦁"]
                .map(String::from)
                .to_vec();
        texts.extend(
            (0..60_000).map(|i| format!("2024-01-{:02}T{:02}:{:02}Z-é{i}", i % 28, i % 24, i % 60)),
        );
        texts.sort();
        let entries: Vec<(&str, u64)> =
            texts.iter().enumerate().map(|(i, t)| (t.as_str(), i as u64 % 5 + 1)).collect();
        let chunk = ascending_chunk(&scratch, entries.iter().copied());
        let raw: usize = texts.iter().map(String::len).sum();
        assert!(chunk.bytes() < raw as u64 / 2, "{} bytes for {raw} of text", chunk.bytes());
        let written: Vec<(String, u64)> =
            entries.iter().map(|&(t, n)| (t.to_string(), n)).collect();
        assert_eq!(read_back(&chunk), written);
        assert!(spill.failure().is_none());
    }

    /// `entries` written as one ascending run, in several pieces.
    fn ascending_chunk<'t>(
        scratch: &Arc<Scratch>,
        entries: impl IntoIterator<Item = (&'t str, u64)>,
    ) -> Chunk {
        let mut writer = ChunkWriter::new(scratch);
        writer.ascending_strings(entries).expect("written");
        let chunk = writer.finish().expect("finished");
        assert!(chunk.pieces.len() > 2);
        chunk
    }

    /// Every text an ascending chunk's reader gives from its start, with its count.
    fn read_back(chunk: &Chunk) -> Vec<(String, u64)> {
        let mut read = RunReader::from_text(chunk, "");
        let mut back = Vec::new();
        while read.head().is_some() {
            read.drain_piece(|t, n| back.push((t.to_string(), n)));
        }
        back
    }

    /// A piece whose lengths were changed to share more than the text before holds fails the
    /// spill instead of reading back other texts.
    #[test]
    fn ascending_entries_changed_in_the_scratch_file_fail_the_spill() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let texts: Vec<String> = (0..100_000).map(|i| format!("id-{i:09}")).collect();
        let chunk = ascending_chunk(&scratch, texts.iter().map(|t| (t.as_str(), 1)));
        let run = chunk.ascending.as_ref().expect("ascending");
        let (offset, _) = chunk.pieces[1];
        // The piece's first entry shares nothing: say it shares 100 bytes.
        scratch.file.write_at(&[100], offset + u64::from(run.text_bytes[1])).expect("changed");
        let back = read_back(&chunk).len();
        assert!(back > 0 && back < texts.len(), "{back}");
        assert!(spill.failure().is_some_and(|e| e.to_string().contains("does not hold the texts")));
    }

    /// A piece of an ascending run whose texts were changed into bytes that are not UTF-8 fails
    /// the spill: the texts made whole are checked once, as a whole.
    #[test]
    fn ascending_texts_changed_in_the_scratch_file_fail_the_spill() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let texts: Vec<String> = (0..100_000).map(|i| format!("é-{i:09}")).collect();
        let chunk = ascending_chunk(&scratch, texts.iter().map(|t| (t.as_str(), 1)));
        let (offset, _) = chunk.pieces[1];
        scratch.file.write_at(&[0xFF], offset + 1).expect("changed");
        let back = read_back(&chunk).len();
        assert!(back > 0 && back < texts.len(), "{back}");
        assert!(spill.failure().is_some_and(|e| e.to_string().contains("not UTF-8")));
    }

    #[test]
    fn past_the_cap_a_chunk_is_refused() {
        let spill = Spill::new(Arc::new(MemoryScratch), 1_000);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut writer = ChunkWriter::new(&scratch);
        for i in 0..1_000 {
            writer.number(NumberKey::float(f64::from(i)), 1).expect("buffered");
        }
        assert_eq!(writer.finish().err(), Some(SpillError::Cap { cap: 1_000 }));
        assert_eq!(spill.written(), 0);
    }
}
