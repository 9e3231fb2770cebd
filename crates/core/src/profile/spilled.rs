//! Finishing a property whose exact counters were spilled (`spill.rs`): its chunks and what is
//! left in memory merged in one ordered pass, every figure computed as `finalize.rs` computes it
//! in memory, so the two agree figure for figure.
//!
//! Numbers: the merge is written out once more as one chunk, which the later passes read in
//! order (the exact mean and deviation need two or three passes, the histogram one). A spilled
//! property keeps no values: its profile holds the count below every edge any of its histograms
//! can have ([`EdgeCounts`]), so histograms of any bin count stay exact after the files are gone.
//! Strings: one pass gives the distinct count, lengths, top values, formats (every distinct value
//! checked) and the text range.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use serde_json::Value;

use super::TOP_VALUES;
use super::accumulate::{MAX_KEY_LEN, NumberStats, StringStats};
use super::exact::{NumberKey, interpolate, quarter_ranks};
use super::formats;
use super::histogram::{EdgeCounts, HistogramLayout};
use super::model::{NumberProfile, StringProfile, ValueCount};
use super::numeric::{MAX_BINS, NUMBER_TOP_DISTINCT, ValueRuns, mean_std_of, top_numbers};
use super::spill::{Chunk, ChunkReader, ChunkWriter};

/// One ordered input of a merge.
enum Source<'a, T> {
    Chunk(ChunkReader<'a>),
    Memory(Box<dyn Iterator<Item = T> + 'a>),
}

/// The smallest head first; equal ones by source, so the merge is deterministic.
struct Head<K> {
    key: K,
    n: u64,
    source: usize,
}

/// How merged keys are ordered.
trait MergeKey {
    fn order(&self, other: &Self) -> Ordering;
}

impl MergeKey for NumberKey {
    fn order(&self, other: &Self) -> Ordering {
        NumberKey::order(*self, *other)
    }
}

impl MergeKey for String {
    fn order(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl<K: MergeKey> PartialEq for Head<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<K: MergeKey> Eq for Head<K> {}
impl<K: MergeKey> PartialOrd for Head<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: MergeKey> Ord for Head<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` pops the largest.
        other.key.order(&self.key).then(other.source.cmp(&self.source))
    }
}

/// Ascending distinct numbers with their counts, over chunks and runs in memory.
struct NumberMerge<'a> {
    sources: Vec<Source<'a, (NumberKey, u64)>>,
    heap: BinaryHeap<Head<NumberKey>>,
    /// When the sources hold disjoint ranges (ascending values, such as ids): the order to read
    /// them in, one after another, with no heap (see [`disjoint`]).
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
        let mut sources: Vec<Source<'a, (NumberKey, u64)>> =
            chunks.iter().map(|c| Source::Chunk(ChunkReader::new(c))).collect();
        let mut ranges: Vec<Option<(NumberKey, NumberKey)>> =
            chunks.iter().map(|c| c.numbers).collect();
        if let Some(runs) = memory.filter(|runs| runs.count() > 0) {
            sources.push(Source::Memory(Box::new(runs.iter())));
            ranges.push(runs.first_key().zip(runs.last_key()));
        }
        let sequence = disjoint(ranges, |a, b| NumberKey::order(*a, *b)).map(Vec::into_iter);
        let mut merge = Self { sources, heap: BinaryHeap::new(), sequence, current: None };
        if merge.sequence.is_none() {
            for source in 0..merge.sources.len() {
                merge.refill(source);
            }
        }
        merge
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
            let next = match &mut self.sources[source] {
                Source::Chunk(reader) => reader.number(),
                Source::Memory(runs) => runs.next(),
            };
            match next {
                Some(entry) => return Some(entry),
                None => self.current = None,
            }
        }
    }

    fn refill(&mut self, source: usize) {
        let next = match &mut self.sources[source] {
            Source::Chunk(reader) => reader.number(),
            Source::Memory(runs) => runs.next(),
        };
        if let Some((key, n)) = next {
            self.heap.push(Head { key, n, source });
        }
    }
}

impl Iterator for NumberMerge<'_> {
    type Item = (NumberKey, u64);

    fn next(&mut self) -> Option<Self::Item> {
        if self.sequence.is_some() {
            return self.next_in_sequence();
        }
        let first = self.heap.pop()?;
        self.refill(first.source);
        let mut n = first.n;
        while self.heap.peek().is_some_and(|h| h.key.order(first.key) == Ordering::Equal) {
            let Some(head) = self.heap.pop() else { break };
            n += head.n;
            self.refill(head.source);
        }
        Some((first.key, n))
    }
}

/// Ascending distinct strings with their counts, over chunks and a tally in memory.
struct StringMerge<'a> {
    sources: Vec<Source<'a, (&'a str, u64)>>,
    heap: BinaryHeap<Head<String>>,
    /// As [`NumberMerge`]'s: disjoint sources read one after another.
    sequence: Option<std::vec::IntoIter<usize>>,
    current: Option<usize>,
    /// The text handed out last, whose buffer the next head reuses.
    spare: String,
}

impl<'a> StringMerge<'a> {
    fn new(chunks: &'a [Chunk], memory: Vec<(&'a str, u64)>) -> Self {
        let mut sources: Vec<Source<'a, (&'a str, u64)>> =
            chunks.iter().map(|c| Source::Chunk(ChunkReader::new(c))).collect();
        let mut ranges: Vec<Option<(&str, &str)>> =
            chunks.iter().map(|c| c.texts.as_ref().map(|(a, b)| (&**a, &**b))).collect();
        if let (Some(first), Some(last)) = (memory.first(), memory.last()) {
            ranges.push(Some((first.0, last.0)));
            sources.push(Source::Memory(Box::new(memory.into_iter())));
        }
        let sequence = disjoint(ranges, |a, b| a.cmp(b)).map(Vec::into_iter);
        let mut merge = Self {
            sources,
            heap: BinaryHeap::new(),
            spare: String::new(),
            sequence,
            current: None,
        };
        if merge.sequence.is_none() {
            for source in 0..merge.sources.len() {
                merge.refill(source, String::new());
            }
        }
        merge
    }

    fn refill(&mut self, source: usize, mut key: String) {
        let next = match &mut self.sources[source] {
            Source::Chunk(reader) => reader.string().map(|(text, n)| {
                key.clear();
                key.push_str(text);
                n
            }),
            Source::Memory(tally) => tally.next().map(|(text, n)| {
                key.clear();
                key.push_str(text);
                n
            }),
        };
        if let Some(n) = next {
            self.heap.push(Head { key, n, source });
        }
    }

    /// The next distinct string and its count (borrowed until the next call).
    fn next(&mut self) -> Option<(&str, u64)> {
        if self.sequence.is_some() {
            loop {
                let source = match self.current {
                    Some(source) => source,
                    None => {
                        let next = self.sequence.as_mut()?.next()?;
                        *self.current.insert(next)
                    }
                };
                let n = match &mut self.sources[source] {
                    Source::Chunk(reader) => reader.string().map(|(text, n)| {
                        self.spare.clear();
                        self.spare.push_str(text);
                        n
                    }),
                    Source::Memory(tally) => tally.next().map(|(text, n)| {
                        self.spare.clear();
                        self.spare.push_str(text);
                        n
                    }),
                };
                match n {
                    Some(n) => return Some((&self.spare, n)),
                    None => self.current = None,
                }
            }
        }
        let first = self.heap.pop()?;
        let spare = std::mem::take(&mut self.spare);
        self.refill(first.source, spare);
        let mut n = first.n;
        while self.heap.peek().is_some_and(|h| h.key == first.key) {
            let Some(head) = self.heap.pop() else { break };
            n += head.n;
            self.refill(head.source, head.key);
        }
        self.spare = first.key;
        Some((&self.spare, n))
    }
}

/// The number statistics of a property with spilled chunks (see the module docs).
pub(super) fn spilled_numbers(mut stats: NumberStats) -> NumberProfile {
    let (integer_count, float_count) = (stats.integers, stats.floats);
    let chunks = std::mem::take(&mut stats.spilled);
    let memory = stats.take_runs();
    drop(stats);
    let count = chunks.iter().map(|c| c.values).sum::<u64>() + memory.count();
    // Pass one: the merge, written out for the passes after it; the ranks the quartiles read,
    // the extremes, the distinct count, and the runs themselves when they are few.
    let ranks: Vec<(u64, u64, u64)> = (0..=4).map(|k| quarter_ranks(count, k)).collect();
    let mut wanted: Vec<u64> = ranks.iter().flat_map(|&(low, high, _)| [low, high]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut at_rank: Vec<(u64, NumberKey)> = Vec::with_capacity(wanted.len());
    let (mut first, mut last) = (None, None);
    let mut distinct = 0u64;
    let mut few: Vec<(NumberKey, u64)> = Vec::new();
    let mut before = 0u64;
    let mut merged = chunks.first().map(|c| ChunkWriter::new(c.scratch()));
    for (key, n) in NumberMerge::new(&chunks, Some(&memory)) {
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
    // Every pass after the first reads the merged chunk, or merges again.
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
    let (mean, std_dev) = mean_std_of(runs, count, min, max);
    let integers = float_count == 0;
    let (median, exact_median) = quarter(2);
    let mut profile = NumberProfile {
        count,
        integer_count,
        float_count,
        min,
        max,
        mean,
        median,
        std_dev,
        distinct,
        top: if distinct <= NUMBER_TOP_DISTINCT { top_numbers(few, integers) } else { Vec::new() },
        quartiles: [quarter(1).0, quarter(3).0],
        exact_median: exact_median.filter(|_| integers),
        exact_range: first.zip(last),
        runs: None,
        edge_counts: None,
        exact_text_count: 0,
    };
    profile.edge_counts = Some(Arc::new(edge_counts(&profile, runs())));
    profile
}

/// The count below every edge of every histogram [`HistogramLayout::for_numbers`] can lay out
/// for `profile` (the automatic one and each bin count), from its runs in ascending order.
fn edge_counts(
    profile: &NumberProfile,
    runs: impl Iterator<Item = (NumberKey, u64)>,
) -> EdgeCounts {
    let mut edges: Vec<f64> = std::iter::once(None)
        .chain((1..=MAX_BINS).map(Some))
        .filter_map(|bins| HistogramLayout::for_numbers(profile, bins))
        .flat_map(|layout| layout.edges)
        .collect();
    edges.sort_by(f64::total_cmp);
    edges.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let mut below = Vec::with_capacity(edges.len());
    let mut seen = 0u64;
    for (key, n) in runs {
        // Every edge this value is not below has all the values before it below.
        while below.len() < edges.len() && !key.below(edges[below.len()]) {
            below.push(seen);
        }
        seen += n;
    }
    below.resize(edges.len(), seen);
    EdgeCounts::new(edges, below, seen)
}

/// The string statistics of a property with spilled chunks (see the module docs).
pub(super) fn spilled_strings(mut stats: StringStats) -> StringProfile {
    let chunks = std::mem::take(&mut stats.spilled);
    let mut tally = stats.values.tally();
    tally.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut merge = StringMerge::new(&chunks, tally);
    let mut lengths = stats.long;
    let mut distinct = 0u64;
    let mut format_counts: Vec<(formats::StringFormat, u64)> = Vec::new();
    let (mut min, mut max): (Option<String>, Option<String>) = (None, None);
    let mut best: Vec<(String, u64)> = Vec::with_capacity(TOP_VALUES + 1);
    let ranks_before = |a: (&str, u64), b: (&str, u64)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
    while let Some((text, n)) = merge.next() {
        distinct += 1;
        if text.len() <= MAX_KEY_LEN {
            lengths.add(text.chars().count() as u64, n);
        }
        if let Some(format) = formats::detect(text) {
            match format_counts.iter_mut().find(|(f, _)| *f == format) {
                Some((_, total)) => *total += n,
                None => format_counts.push((format, n)),
            }
        }
        if min.is_none() {
            min = Some(text.to_string());
        }
        // In text order: the last is the largest.
        match &mut max {
            Some(m) => {
                m.clear();
                m.push_str(text);
            }
            None => max = Some(text.to_string()),
        }
        // The best `TOP_VALUES` so far, as `finalize::top_values` keeps them.
        let full = best.len() == TOP_VALUES;
        if full && !best.last().is_some_and(|w| ranks_before((text, n), (&w.0, w.1))) {
            continue;
        }
        let at = best.partition_point(|b| ranks_before((&b.0, b.1), (text, n)));
        best.insert(at, (text.to_string(), n));
        best.truncate(TOP_VALUES);
    }
    format_counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let format = format_counts.first().filter(|(_, n)| *n == stats.count).map(|(f, _)| *f);
    let dated =
        matches!(format, Some(formats::StringFormat::Date | formats::StringFormat::DateTime));
    StringProfile {
        count: stats.count,
        distinct,
        top: best
            .into_iter()
            .map(|(v, count)| ValueCount { value: Value::String(v), count })
            .collect(),
        min_length: lengths.min,
        max_length: lengths.max,
        avg_length: lengths.mean(),
        min: min.filter(|_| dated),
        max: max.filter(|_| dated),
        format,
        format_counts,
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
        let mut reader = ChunkReader::new(chunk);
        while let Some((text, n)) = reader.string() {
            add(text, n);
        }
    }
}
