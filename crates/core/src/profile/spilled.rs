//! Finishing a property whose exact counters were spilled (`spill.rs`): its chunks and what is
//! left in memory merged, every figure computed as `finalize.rs` computes it in memory, so the
//! two agree figure for figure.
//!
//! Numbers: the chunks are merged in order a batch at a time, with no heap: each chunk is read a
//! few thousand numbers ahead, every chunk's numbers up to the smallest of the last ones read
//! are taken (all that can come before it is then in memory), and those sorted runs are merged
//! by one sort, which finds and merges runs (of integer keys when every number of the batch is a
//! plain double, as nearly all are).
//! The merge is written out once more as one chunk (unless the sources' ranges are disjoint and
//! are read one after another again), which one more pass reads: the exact sum is taken during
//! the merge, the deviation from the mean and the histograms' edge counts after it. A spilled
//! property keeps no values: its profile holds the count below every edge any of its histograms can have
//! ([`EdgeCounts`]), so histograms of any bin count stay exact after the files are gone.
//!
//! Strings need no order, only each distinct value once: chunks are written by the top
//! [`BUCKET_BITS`] bits of each value's hash, so one bucket of every chunk at a time is folded
//! in a small table that stays in cache, and texts are compared only where hashes are equal (the
//! same value, or a collision, which stays two values). One pass gives the distinct count,
//! lengths, top values, formats (every distinct value checked) and the text range; a large
//! property's buckets are shared out among the cores in ranges, each read from the piece of
//! every chunk where its range begins, and the shares' figures added up. Strings that arrived
//! in ascending order (ids, timestamps) were written as sorted runs instead, and are merged by
//! text (`spilled_ascending.rs`): no hashing at all.

use std::cmp::Ordering;
use std::sync::Arc;

use hashbrown::HashTable;
use serde_json::Value;

use super::TOP_VALUES;
use super::accumulate::{Lengths, MAX_KEY_LEN, NumberStats, StringStats};
use super::exact::{NumberKey, interpolate, median_key, quarter_ranks};
use super::formats;
use super::histogram::{EdgeCounts, HistogramLayout};
use super::model::{NumberProfile, StringProfile, ValueCount};
use super::numeric::{ExactTotal, MAX_BINS, NUMBER_TOP_DISTINCT, Spread, ValueRuns, top_numbers};
use super::spill::{Chunk, ChunkReader, ChunkWriter, RunReader, from_order_key, order_key};

/// A run of ascending numbers read a piece at a time: a chunk, or the values left in memory.
struct Run<'a> {
    source: RunSource<'a>,
    piece: Vec<(NumberKey, u64)>,
    at: usize,
    done: bool,
}

enum RunSource<'a> {
    Chunk(ChunkReader<'a>),
    Memory(Box<dyn Iterator<Item = (NumberKey, u64)> + 'a>),
}

/// Numbers a run reads ahead.
const READ_AHEAD: usize = 4 << 10;

impl Run<'_> {
    /// The entries not taken yet, reading ahead when the last ones are used up.
    fn rest(&mut self) -> &[(NumberKey, u64)] {
        while self.at == self.piece.len() && !self.done {
            self.piece.clear();
            self.at = 0;
            self.done = match &mut self.source {
                RunSource::Chunk(reader) => !reader.numbers(&mut self.piece, READ_AHEAD),
                RunSource::Memory(values) => {
                    self.piece.extend(values.by_ref().take(READ_AHEAD));
                    self.piece.is_empty()
                }
            };
        }
        &self.piece[self.at..]
    }
}

/// Ascending distinct numbers with their counts, over chunks and runs in memory.
struct NumberMerge<'a> {
    runs: Vec<Run<'a>>,
    /// The merged batch being handed out, equal numbers folded.
    batch: Vec<(NumberKey, u64)>,
    at: usize,
    /// How many entries of each run the batch being merged takes.
    taken: Vec<usize>,
    /// The batch as plain doubles' [`sort_key`]s with their counts, while merged.
    keyed: Vec<(u64, u64)>,
    /// When the sources hold disjoint ranges (ascending values, such as ids): the order to read
    /// them in, one after another, with no merging (see [`disjoint`]).
    sequence: Option<std::vec::IntoIter<usize>>,
    current: Option<usize>,
}

/// The order of sources whose ranges (`first`, `last`, by `order`) do not overlap, each after
/// the one before; `None` when some do (or a range is unknown).
fn disjoint<K>(
    ranges: Vec<Option<(K, K)>>,
    order: impl Fn(&K, &K) -> Ordering,
) -> Option<Vec<usize>> {
    let mut known: Vec<(usize, (K, K))> = Vec::with_capacity(ranges.len());
    for (i, range) in ranges.into_iter().enumerate() {
        known.push((i, range?));
    }
    known.sort_by(|a, b| order(&a.1.0, &b.1.0));
    let apart = known.windows(2).all(|w| order(&w[0].1.1, &w[1].1.0) == Ordering::Less);
    apart.then(|| known.into_iter().map(|(i, _)| i).collect())
}

impl<'a> NumberMerge<'a> {
    fn new(chunks: &'a [Chunk], memory: Option<&'a ValueRuns>) -> Self {
        let mut sources: Vec<RunSource<'a>> =
            chunks.iter().map(|c| RunSource::Chunk(ChunkReader::new(c))).collect();
        let mut ranges: Vec<Option<(NumberKey, NumberKey)>> =
            chunks.iter().map(|c| c.numbers).collect();
        if let Some(runs) = memory.filter(|runs| runs.count() > 0) {
            sources.push(RunSource::Memory(Box::new(runs.iter())));
            ranges.push(runs.first_key().zip(runs.last_key()));
        }
        let sequence = disjoint(ranges, |a, b| NumberKey::order(*a, *b)).map(Vec::into_iter);
        let runs = sources
            .into_iter()
            .map(|source| Run { source, piece: Vec::new(), at: 0, done: false })
            .collect();
        Self {
            runs,
            batch: Vec::new(),
            at: 0,
            taken: Vec::new(),
            keyed: Vec::new(),
            sequence,
            current: None,
        }
    }

    /// The next of the sources read one after another.
    fn next_in_sequence(&mut self) -> Option<(NumberKey, u64)> {
        loop {
            let source = match self.current {
                Some(source) => source,
                None => {
                    let next = self.sequence.as_mut()?.next()?;
                    *self.current.insert(next)
                }
            };
            let run = &mut self.runs[source];
            if let Some(&entry) = run.rest().first() {
                run.at += 1;
                return Some(entry);
            }
            self.current = None;
        }
    }

    /// Merges the next batch: every run's entries up to the smallest last entry read ahead
    /// (every entry up to it is then in memory), equal numbers folded. False at the end.
    fn next_batch(&mut self) -> bool {
        self.batch.clear();
        self.at = 0;
        let mut bound: Option<NumberKey> = None;
        for run in &mut self.runs {
            if let Some(&(last, _)) = run.rest().last()
                && bound.is_none_or(|b| last.order(b) == Ordering::Less)
            {
                bound = Some(last);
            }
        }
        let Some(bound) = bound else { return false };
        self.taken.clear();
        let mut plain = true;
        for run in &mut self.runs {
            let rest = run.rest();
            let upto = rest.partition_point(|e| e.0.order(bound) != Ordering::Greater);
            plain &= rest[..upto].iter().all(|e| sort_key(e.0).is_some());
            self.taken.push(upto);
        }
        if plain {
            self.merge_plain();
            return true;
        }
        for (run, &upto) in self.runs.iter_mut().zip(&self.taken) {
            self.batch.extend_from_slice(&run.rest()[..upto]);
            run.at += upto;
        }
        // Sorted runs one after another, in source order: the stable sort merges them, and
        // equal numbers keep the first source's first, as they are folded.
        self.batch.sort_by(|a, b| a.0.order(b.0));
        self.batch.dedup_by(|later, kept| {
            let same = later.0.order(kept.0) == Ordering::Equal;
            if same {
                kept.1 += later.1;
            }
            same
        });
        true
    }

    /// [`Self::next_batch`] for a batch of plain doubles (nearly every one): merged by their
    /// integer [`sort_key`]s, half the bytes an entry and one comparison instead of a branch
    /// on equal doubles, which made the merge the largest cost of finishing spilled numbers.
    fn merge_plain(&mut self) {
        self.keyed.clear();
        for (run, &upto) in self.runs.iter_mut().zip(&self.taken) {
            let rest = run.rest();
            self.keyed
                .extend(rest[..upto].iter().filter_map(|&(key, n)| Some((sort_key(key)?, n))));
            run.at += upto;
        }
        // Equal keys are equal doubles: which source's comes first does not matter.
        self.keyed.sort_by_key(|e| e.0);
        self.keyed.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 += later.1;
            }
            same
        });
        self.batch
            .extend(self.keyed.iter().map(|&(key, n)| (NumberKey::float(from_order_key(key)), n)));
    }
}

/// The [`order_key`] of a plain double (no offset, not -0, which [`NumberKey::order`] counts
/// with 0 and keeps as it came): ordered as its number is.
fn sort_key(key: NumberKey) -> Option<u64> {
    let plain = key.offset() == 0 && key.double().to_bits() != (-0.0f64).to_bits();
    plain.then(|| order_key(key.double()))
}

impl Iterator for NumberMerge<'_> {
    type Item = (NumberKey, u64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.sequence.is_some() {
            return self.next_in_sequence();
        }
        if self.at == self.batch.len() && !self.next_batch() {
            return None;
        }
        let (key, mut n) = self.batch[self.at];
        self.at += 1;
        if self.at == self.batch.len() && self.next_batch() {
            // A number equal to the batch's last may open the next one (the two zeros).
            while let Some(&(next, more)) = self.batch.get(self.at)
                && next.order(key) == Ordering::Equal
            {
                n += more;
                self.at += 1;
            }
        }
        Some((key, n))
    }
}

/// Bits of a string's hash that pick its bucket: chunks of strings are written bucket by
/// bucket, and finishing folds one bucket of every chunk at a time.
pub(super) const BUCKET_BITS: u32 = 12;

/// The bucket of a string with hash `hash`.
pub(super) fn bucket_of(hash: u64) -> u16 {
    (hash >> (64 - BUCKET_BITS)) as u16
}

/// The positions of `tally`'s strings in the order of their buckets (a counting sort: an index
/// of 8 bytes a string, where sorting the tally itself would copy its 32 whole).
fn by_bucket(tally: &[(u64, &str, u64)]) -> Vec<usize> {
    let mut starts = vec![0usize; (1 << BUCKET_BITS) + 1];
    for e in tally {
        starts[usize::from(bucket_of(e.0)) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut order = vec![0usize; tally.len()];
    for (i, e) in tally.iter().enumerate() {
        let at = &mut starts[usize::from(bucket_of(e.0))];
        order[*at] = i;
        *at += 1;
    }
    order
}

/// A distinct string of the bucket being folded: its hash, its range in the bucket's text,
/// and its count.
#[derive(Clone, Copy)]
struct Folded {
    hash: u64,
    start: usize,
    len: usize,
    n: u64,
}

/// One bucket's distinct strings, folded; reused from bucket to bucket.
#[derive(Default)]
struct Bucket {
    texts: String,
    folded: Vec<Folded>,
    table: HashTable<usize>,
}

impl Bucket {
    fn clear(&mut self) {
        self.texts.clear();
        self.folded.clear();
        self.table.clear();
    }

    /// Counts `text` (hash `hash`) `n` more times.
    fn add(&mut self, hash: u64, text: &str, n: u64) {
        // Every hash in a bucket shares its top bits, which the table reads for its tags: turned
        // to the middle, where a table of a bucket's size reads nothing (turned to the bottom,
        // they would start every probe at one place).
        let spread = |hash: u64| hash.rotate_right(BUCKET_BITS);
        let (texts, folded) = (&mut self.texts, &mut self.folded);
        let same = |&i: &usize| {
            let f: Folded = folded[i];
            f.hash == hash && texts[f.start..f.start + f.len] == *text
        };
        match self.table.find(spread(hash), same) {
            Some(&i) => folded[i].n += n,
            None => {
                let i = folded.len();
                folded.push(Folded { hash, start: texts.len(), len: text.len(), n });
                texts.push_str(text);
                self.table.insert_unique(spread(hash), i, |&i| spread(folded[i].hash));
            }
        }
    }

    /// The bucket's distinct strings with their counts, in the order they first came.
    fn each(&self, mut f: impl FnMut(&str, u64)) {
        for e in &self.folded {
            f(&self.texts[e.start..e.start + e.len], e.n);
        }
    }
}

/// Every distinct string of `chunks` and of `memory` (a tally with hashes, in the order of
/// their buckets: [`in_bucket_order`]) whose bucket is in `buckets`, with its count, handed to
/// `each` one bucket after another (see the module docs).
fn each_merged_string(
    chunks: &[Chunk],
    memory: &[(u64, &str, u64)],
    buckets: std::ops::Range<u32>,
    mut each: impl FnMut(&str, u64),
) {
    let in_range = |hash: u64| buckets.contains(&u32::from(bucket_of(hash)));
    let first = memory.partition_point(|e| u32::from(bucket_of(e.0)) < buckets.start);
    let mut memory = memory[first..].iter().copied().take_while(|e| in_range(e.0)).peekable();
    let start = u16::try_from(buckets.start).unwrap_or(u16::MAX);
    let mut readers: Vec<ChunkReader<'_>> =
        chunks.iter().map(|c| ChunkReader::from_bucket(c, start)).collect();
    let mut bucket = Bucket::default();
    for b in buckets.clone() {
        let b = b as u16;
        bucket.clear();
        for reader in &mut readers {
            while reader.peek_hash().is_some_and(|h| bucket_of(h) == b) {
                let Some((hash, text, n)) = reader.hashed_string() else { break };
                bucket.add(hash, text, n);
            }
        }
        while let Some((hash, text, n)) = memory.next_if(|e| bucket_of(e.0) == b) {
            bucket.add(hash, text, n);
        }
        bucket.each(&mut each);
    }
}

/// `tally` in the order of its strings' buckets.
fn in_bucket_order(tally: Vec<(u64, &str, u64)>) -> Vec<(u64, &str, u64)> {
    by_bucket(&tally).into_iter().map(|i| tally[i]).collect()
}

/// The number statistics of a property with spilled chunks (see the module docs).
pub(super) fn spilled_numbers(mut stats: NumberStats) -> NumberProfile {
    let (integer_count, float_count) = (stats.integers, stats.floats);
    let chunks = std::mem::take(&mut stats.spilled);
    let memory = stats.take_runs();
    drop(stats);
    let count = chunks.iter().map(|c| c.values).sum::<u64>() + memory.count();
    // Pass one: the merge, written out for the pass after it; the exact sum; the ranks the
    // quartiles read, the extremes, the distinct count, and the runs themselves when few.
    let ranks: Vec<(u64, u64, u64)> = (0..=4).map(|k| quarter_ranks(count, k)).collect();
    let mut wanted: Vec<u64> = ranks.iter().flat_map(|&(low, high, _)| [low, high]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut at_rank: Vec<(u64, NumberKey)> = Vec::with_capacity(wanted.len());
    let (mut first, mut last) = (None, None);
    let mut distinct = 0u64;
    let mut few: Vec<(NumberKey, u64)> = Vec::new();
    let mut before = 0u64;
    let merge = NumberMerge::new(&chunks, Some(&memory));
    // Sources with disjoint ranges are read again one after another as cheaply as one merged
    // chunk would be.
    let mut merged =
        chunks.first().filter(|_| merge.sequence.is_none()).map(|c| ChunkWriter::new(c.scratch()));
    let mut total = ExactTotal::default();
    for (key, n) in merge {
        total.add(key, n);
        first.get_or_insert(key);
        last = Some(key);
        distinct += 1;
        if few.len() as u64 <= NUMBER_TOP_DISTINCT {
            few.push((key, n));
        }
        while at_rank.len() < wanted.len() && wanted[at_rank.len()] < before + n {
            at_rank.push((wanted[at_rank.len()], key));
        }
        before += n;
        if let Some(writer) = &mut merged
            && writer.number(key, n).is_err()
        {
            // Past the cap (or a failed write): the later passes merge the chunks again.
            merged = None;
        }
    }
    let merged = merged.and_then(|w| w.finish().ok());
    // The pass after the first reads the merged chunk, or merges again.
    let runs = || -> Box<dyn Iterator<Item = (NumberKey, u64)> + '_> {
        match &merged {
            Some(chunk) => {
                let mut reader = ChunkReader::new(chunk);
                Box::new(std::iter::from_fn(move || reader.number()))
            }
            None => Box::new(NumberMerge::new(&chunks, Some(&memory))),
        }
    };
    let key_at = |rank: u64| {
        at_rank.iter().find(|(r, _)| *r == rank).map_or(NumberKey::float(0.0), |&(_, key)| key)
    };
    let quarter = |k: usize| match ranks.get(k) {
        Some(&(low, high, weight)) if count > 0 => interpolate(key_at(low), key_at(high), weight),
        _ => (0.0, None),
    };
    let (min, max) = (first.map_or(0.0, NumberKey::double), last.map_or(0.0, NumberKey::double));
    let centre = total.centre(min, max, runs);
    let integers = float_count == 0;
    let (median, exact_median) = quarter(2);
    let mut profile = NumberProfile {
        count,
        integer_count,
        float_count,
        min,
        max,
        mean: centre.mean(),
        exact_sum: total.whole_sum_past_doubles(),
        median,
        median_key: median_key(count, |rank| Some(key_at(rank))),
        std_dev: 0.0,
        distinct,
        top: if distinct <= NUMBER_TOP_DISTINCT { top_numbers(few, integers) } else { Vec::new() },
        quartiles: [quarter(1).0, quarter(3).0],
        exact_median: exact_median.filter(|_| integers),
        exact_range: first.zip(last),
        runs: None,
        edge_counts: None,
        exact_text_count: 0,
    };
    // Pass two: the deviation and the histograms' edge counts (which need only the range and
    // quartiles of pass one).
    let mut spread = Spread::default();
    let mut edges = EdgeCounter::new(&profile);
    for (key, n) in runs() {
        spread.add(&centre, key, n);
        edges.add(key, n);
    }
    profile.std_dev = spread.std_dev(&centre, count);
    profile.edge_counts = Some(Arc::new(edges.finish()));
    profile
}

/// The count below every edge of every histogram [`HistogramLayout::for_numbers`] can lay out
/// for a profile (the automatic one and each bin count), from its runs in ascending order.
struct EdgeCounter {
    edges: Vec<f64>,
    below: Vec<u64>,
    seen: u64,
}

impl EdgeCounter {
    fn new(profile: &NumberProfile) -> Self {
        let mut edges: Vec<f64> = std::iter::once(None)
            .chain((1..=MAX_BINS).map(Some))
            .filter_map(|bins| HistogramLayout::for_numbers(profile, bins))
            .flat_map(|layout| layout.edges)
            .collect();
        edges.sort_by(f64::total_cmp);
        edges.dedup_by(|a, b| a.to_bits() == b.to_bits());
        let below = Vec::with_capacity(edges.len());
        Self { edges, below, seen: 0 }
    }

    /// The next value in ascending order, seen `n` times.
    fn add(&mut self, key: NumberKey, n: u64) {
        // Every edge this value is not below has all the values before it below.
        while self.below.len() < self.edges.len() && !key.below(self.edges[self.below.len()]) {
            self.below.push(self.seen);
        }
        self.seen += n;
    }

    fn finish(mut self) -> EdgeCounts {
        self.below.resize(self.edges.len(), self.seen);
        EdgeCounts::new(self.edges, self.below, self.seen)
    }
}

/// What one pass over distinct strings gathers: a share of the buckets, merged with the others
/// after (each figure as `finalize.rs` computes it from a whole tally).
struct StringFold {
    distinct: u64,
    lengths: Lengths,
    format_counts: Vec<(formats::StringFormat, u64)>,
    /// The earliest and latest, shown only for dates and times: kept while every value is one.
    range: formats::Extremes,
    /// The best `TOP_VALUES` so far, as `finalize::top_values` keeps them.
    best: Vec<(String, u64)>,
}

/// Whether `a` (a text and its count) comes before `b` among the top values.
fn ranks_before(a: (&str, u64), b: (&str, u64)) -> bool {
    a.1 > b.1 || (a.1 == b.1 && a.0 < b.0)
}

impl StringFold {
    fn new() -> Self {
        Self {
            distinct: 0,
            lengths: Lengths::default(),
            format_counts: Vec::new(),
            range: formats::Extremes::default(),
            best: Vec::with_capacity(TOP_VALUES + 1),
        }
    }

    fn rank(&mut self, text: &str, n: u64) {
        let full = self.best.len() == TOP_VALUES;
        if full && !self.best.last().is_some_and(|w| ranks_before((text, n), (&w.0, w.1))) {
            return;
        }
        let at = self.best.partition_point(|b| ranks_before((&b.0, b.1), (text, n)));
        self.best.insert(at, (text.to_string(), n));
        self.best.truncate(TOP_VALUES);
    }

    /// One distinct string seen `n` times.
    fn add(&mut self, text: &str, n: u64) {
        self.distinct += 1;
        if text.len() <= MAX_KEY_LEN {
            let chars = if text.is_ascii() { text.len() } else { text.chars().count() };
            self.lengths.add(chars as u64, n);
        }
        // A shortened key's format and moment were read from its whole string as it came.
        if super::long_key_parts(text).is_none() {
            formats::add_format_and_moment(&mut self.format_counts, &mut self.range, text, n);
        }
        self.rank(text, n);
    }

    /// Adds another share's strings (none of them in this one).
    fn merge(&mut self, other: StringFold) {
        self.distinct += other.distinct;
        self.lengths.merge(other.lengths);
        formats::add_counts(&mut self.format_counts, other.format_counts);
        self.range.merge(&other.range);
        for (text, n) in &other.best {
            self.rank(text, *n);
        }
    }
}

/// Shares of the buckets a spilled property's strings are finished in at most, on all cores:
/// several per core, so a core that also finishes other properties is not waited for.
const MAX_SHARES: u32 = 16;

/// Spilled bytes a share is worth: each share reads a piece of every chunk to find where it
/// starts, which a small property's shares would spend more on than they save.
const SHARE_BYTES: u64 = 8 << 20;

/// The string statistics of a property with spilled chunks (see the module docs).
pub(super) fn spilled_strings(mut stats: StringStats) -> StringProfile {
    let mut chunks = std::mem::take(&mut stats.spilled);
    let bytes: u64 = chunks.iter().map(Chunk::bytes).sum();
    let count = u32::try_from(bytes / SHARE_BYTES).unwrap_or(MAX_SHARES).clamp(1, MAX_SHARES);
    let merged = chunks.iter().all(|c| c.ascending.is_some()).then(|| {
        let memory = stats.values.sorted_runs();
        let add = |fold: &mut StringFold, text: &str, n| fold.add(text, n);
        super::spilled_ascending::fold_shares(
            &chunks,
            &memory,
            count as usize,
            StringFold::new,
            add,
        )
    });
    let shares = if let Some(Some(shares)) = merged {
        shares
    } else {
        chunks = chunks
            .into_iter()
            .filter_map(|c| if c.ascending.is_some() { by_bucket_again(&c) } else { Some(c) })
            .collect();
        let memory = in_bucket_order(stats.values.tally_hashed());
        let buckets = 1u32 << BUCKET_BITS;
        crate::parallel::on_all_cores(count as usize, |share| {
            let share = share as u32;
            let range = buckets * share / count..buckets * (share + 1) / count;
            let mut fold = StringFold::new();
            each_merged_string(&chunks, &memory, range, |text, n| fold.add(text, n));
            fold
        })
    };
    let mut fold = StringFold::new();
    fold.lengths = stats.long;
    for share in shares {
        fold.merge(share);
    }
    let format_counts = formats::with_counts(fold.format_counts, stats.long_formats);
    let format = format_counts.first().filter(|(_, n)| *n == stats.count).map(|(f, _)| *f);
    // A share that met a value of no temporal format has no range, and then neither has the fold.
    let dated = format.is_some_and(formats::StringFormat::is_temporal);
    fold.range.merge(&stats.long_range);
    let (min, max) = if dated { fold.range.into_range() } else { (None, None) };
    StringProfile {
        count: stats.count,
        distinct: fold.distinct,
        top: fold
            .best
            .into_iter()
            .map(|(v, count)| ValueCount { value: Value::String(v), count })
            .collect(),
        min_length: fold.lengths.min,
        max_length: fold.lengths.max,
        avg_length: fold.lengths.mean(),
        min,
        max,
        format,
        format_counts,
        format_sample: None,
    }
}

/// Feeds every number of `chunks` to `add` (a property switched to sketches after spilling).
pub(super) fn each_number(chunks: &[Chunk], mut add: impl FnMut(NumberKey, u64)) {
    for chunk in chunks {
        let mut reader = ChunkReader::new(chunk);
        while let Some((key, n)) = reader.number() {
            add(key, n);
        }
    }
}

/// Feeds every string of `chunks` to `add`.
pub(super) fn each_string(chunks: &[Chunk], mut add: impl FnMut(&str, u64)) {
    for chunk in chunks {
        if chunk.ascending.is_some() {
            let mut reader = RunReader::from_text(chunk, "");
            while let Some((text, n)) = reader.head() {
                add(text, n);
                reader.skip();
            }
        } else {
            let mut reader = ChunkReader::new(chunk);
            while let Some((_, text, n)) = reader.hashed_string() {
                add(text, n);
            }
        }
    }
}

/// An ascending chunk of strings written again by bucket, for a property whose other chunks
/// are: its values stopped arriving in order after it was written. A chunk that cannot be
/// written again is recorded as the spill's failure (its strings are then missing): `None`.
fn by_bucket_again(chunk: &Chunk) -> Option<Chunk> {
    let mut texts = String::new();
    let mut places: Vec<(usize, usize, u64)> = Vec::new();
    each_string(std::slice::from_ref(chunk), |text, n| {
        places.push((texts.len(), text.len(), n));
        texts.push_str(text);
    });
    let hasher = super::string_counts::hasher();
    let tally: Vec<(u64, &str, u64)> = places
        .iter()
        .map(|&(start, len, n)| {
            let text = &texts[start..start + len];
            (std::hash::BuildHasher::hash_one(hasher, text), text, n)
        })
        .collect();
    let mut writer = ChunkWriter::new(chunk.scratch());
    let written =
        writer.hashed_strings_by_bucket(|| tally.iter().copied()).and_then(|()| writer.finish());
    written.map_err(|error| chunk.scratch().fail(error)).ok()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::profile::spill::{MemoryScratch, Scratch, Spill};

    #[test]
    fn strings_with_one_hash_stay_apart_and_equal_ones_fold_across_chunks() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        // Every string of a chunk under one of two hashes, as if they all collided; a bucket
        // boundary between them.
        let collide = 0x0123_4567_89ab_cdef_u64;
        let later = u64::MAX - 5;
        let chunk = |texts: &[(&str, u64, u64)]| {
            let mut writer = ChunkWriter::new(&scratch);
            for &(text, hash, n) in texts {
                writer.hashed_string(hash, text, n).expect("write");
            }
            writer.finish().expect("chunk")
        };
        let chunks = [
            chunk(&[("a", collide, 1), ("b", collide, 2), ("", collide, 1), ("é", later, 1)]),
            chunk(&[("b", collide, 3), ("ab", collide, 1), ("é", later, 4)]),
            chunk(&[("a", collide, 5)]),
        ];
        let memory = in_bucket_order(vec![(later, "é", 2), (collide, "c", 1), (collide, "a", 1)]);
        let mut got = BTreeMap::new();
        // Every bucket at once, and in shares that split the two buckets apart.
        let all = 0..1u32 << BUCKET_BITS;
        each_merged_string(&chunks, &memory, all.clone(), |text, n| {
            assert!(got.insert(text.to_string(), n).is_none(), "{text} handed out twice");
        });
        let split = u32::from(bucket_of(later));
        let mut shared = BTreeMap::new();
        for range in [0..split, split..all.end] {
            each_merged_string(&chunks, &memory, range, |text, n| {
                assert!(shared.insert(text.to_string(), n).is_none(), "{text} handed out twice");
            });
        }
        assert_eq!(shared, got);
        let expected: BTreeMap<String, u64> =
            [("a", 7), ("b", 5), ("", 1), ("ab", 1), ("c", 1), ("é", 7)]
                .iter()
                .map(|&(t, n)| (t.to_string(), n))
                .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn any_share_of_the_buckets_reads_its_strings_once_where_buckets_span_pieces() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut rng = fastrand::Rng::with_seed(3017);
        // Hashes in a few buckets only, so each bucket spans several pieces of a chunk.
        let buckets = [3u64, 4, 900, 4095];
        let mut chunks = Vec::new();
        let mut memory = Vec::new();
        for _ in 0..3 {
            let mut entries: Vec<(u64, String, u64)> = (0..40_000)
                .map(|_| {
                    let bucket = buckets[rng.usize(..buckets.len())];
                    let low = rng.u64(..1 << 20);
                    let hash = (bucket << (64 - BUCKET_BITS)) | low;
                    (hash, format!("v{hash:x}"), rng.u64(1..3))
                })
                .collect();
            // A chunk holds each string once.
            entries.sort_by_key(|e| (bucket_of(e.0), e.0));
            entries.dedup_by_key(|e| e.0);
            let mut writer = ChunkWriter::new(&scratch);
            for (hash, text, n) in &entries {
                writer.hashed_string(*hash, text, *n).expect("write");
            }
            chunks.push(writer.finish().expect("chunk"));
            memory.extend(entries.into_iter().take(500));
        }
        let memory: Vec<(u64, &str, u64)> =
            memory.iter().map(|(h, t, n)| (*h, t.as_str(), *n)).collect();
        let memory = in_bucket_order(memory);
        let read = |range: std::ops::Range<u32>| {
            let mut got = BTreeMap::new();
            each_merged_string(&chunks, &memory, range, |text, n| {
                assert!(got.insert(text.to_string(), n).is_none(), "{text} handed out twice");
            });
            got
        };
        let whole = read(0..1 << BUCKET_BITS);
        let total: u64 = whole.values().sum();
        let written: u64 =
            chunks.iter().map(|c| c.values).sum::<u64>() + memory.iter().map(|e| e.2).sum::<u64>();
        assert_eq!(total, written);
        for split in [1, 4, 5, 899, 900, 901, 4095] {
            let mut parts = read(0..split);
            parts.extend(read(split..1 << BUCKET_BITS));
            assert_eq!(parts, whole, "split at bucket {split}");
        }
    }

    #[test]
    fn batched_number_merges_equal_a_sorted_count_over_overlapping_chunks() {
        // Zeros of both signs and integers past 2^53 in most batches.
        merges_equal_a_sorted_count(2811, 10);
        // Plain doubles in most batches (merged by their integer keys), a -0 or an offset now
        // and then.
        merges_equal_a_sorted_count(2812, 20_000);
    }

    /// Merges 23 overlapping chunks, one value in `rare` a zero of either sign and one an
    /// integer past 2^53, and compares with a sorted count.
    fn merges_equal_a_sorted_count(seed: u64, rare: u32) {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut reference: BTreeMap<(u64, i64), u64> = BTreeMap::new();
        let mut chunks = Vec::new();
        for c in 0..23 {
            // Overlapping ranges, each chunk spanning several pieces; -0 in some, 0 in others.
            let mut values: BTreeMap<(u64, i64), (NumberKey, u64)> = BTreeMap::new();
            for _ in 0..rng.usize(1..30_000) {
                let roll = rng.u32(..rare);
                let key = match roll {
                    0 => NumberKey::float(if c % 2 == 0 { -0.0 } else { 0.0 }),
                    1 => NumberKey::integer((1 << 60) + i128::from(rng.i64(-3..3))),
                    _ if roll.is_multiple_of(2) => {
                        NumberKey::float(f64::from(rng.i32(-5_000..5_000)) / 8.0)
                    }
                    _ => NumberKey::float(rng.f64() * 2e6 - 1e6),
                };
                let sortable = (key.double() + 0.0).to_bits() ^ (1 << 63);
                let n = rng.u64(1..4);
                values.entry((sortable, key.offset())).or_insert((key, 0)).1 += n;
            }
            let mut ordered: Vec<(NumberKey, u64)> = values.into_values().collect();
            ordered.sort_by(|a, b| a.0.order(b.0));
            let mut writer = ChunkWriter::new(&scratch);
            for &(key, n) in &ordered {
                writer.number(key, n).expect("write");
                let k = (key.double() + 0.0, key.offset());
                *reference.entry((k.0.to_bits(), k.1)).or_default() += n;
            }
            chunks.push(writer.finish().expect("chunk"));
        }
        let merged: Vec<(NumberKey, u64)> = NumberMerge::new(&chunks, None).collect();
        assert!(merged.windows(2).all(|w| w[0].0.order(w[1].0) == Ordering::Less));
        let mut expected: Vec<(f64, i64, u64)> = reference
            .into_iter()
            .map(|((bits, offset), n)| (f64::from_bits(bits), offset, n))
            .collect();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let got: Vec<(f64, i64, u64)> =
            merged.iter().map(|(k, n)| (k.double() + 0.0, k.offset(), *n)).collect();
        assert_eq!(got, expected);
    }
}
