//! Finishing spilled strings that arrived in ascending order, as ids and timestamps do: each of
//! their chunks is a run of distinct texts in order (`ChunkWriter::ascending_strings`), so every
//! distinct value is found by merging the runs by text, with no hashing and no table.
//!
//! Runs that follow one another (a builder's successive chunks, each past the last) form one
//! *chain*, read one run after the other, so the merge compares the heads of a few chains — one
//! per builder that read a part of the input — and adds up equal ones. The cores take shares of
//! the text range, split where the chunks' pieces begin; a share reads each chain from the piece
//! where its range begins and stops at the next share's first text.

use super::spill::{Chunk, RunReader};
use super::string_counts::Tally;

/// A distinct string with its hash and count, as `StringCounts` tallies them.
type Entry<'a> = (u64, &'a str, u64);

/// A run of distinct texts in ascending order: a chunk, or strings left in memory.
#[derive(Clone, Copy)]
enum Run<'a> {
    Chunk(&'a Chunk),
    Memory(&'a [Entry<'a>]),
}

impl<'a> Run<'a> {
    /// The first and last texts (runs are never empty).
    fn bounds(&self) -> (&'a str, &'a str) {
        match self {
            Run::Chunk(chunk) => {
                let texts = chunk.ascending.as_ref();
                let first = texts.and_then(|t| t.firsts.first()).map_or("", String::as_str);
                (first, texts.map_or("", |t| t.last.as_str()))
            }
            Run::Memory(entries) => {
                (entries.first().map_or("", |e| e.1), entries.last().map_or("", |e| e.1))
            }
        }
    }

    /// Texts where a share may begin, each with the number of strings from it to the next:
    /// where each piece of a chunk begins, every `MEMORY_STEP`th string in memory.
    fn split_points(&self, out: &mut Vec<(&'a str, u64)>) {
        match self {
            Run::Chunk(chunk) => {
                let firsts = chunk.ascending.as_ref().map_or(&[][..], |t| &t.firsts[..]);
                let each = chunk.entries / (firsts.len() as u64).max(1);
                out.extend(firsts.iter().map(|first| (first.as_str(), each)));
            }
            Run::Memory(entries) => {
                out.extend(entries.iter().step_by(MEMORY_STEP).map(|e| (e.1, MEMORY_STEP as u64)));
            }
        }
    }

    /// A cursor on the first text not below `low`.
    fn cursor(self, low: &str) -> Cursor<'a> {
        match self {
            Run::Chunk(chunk) => Cursor::Chunk(RunReader::from_text(chunk, low)),
            Run::Memory(entries) => Cursor::Memory(entries, entries.partition_point(|e| e.1 < low)),
        }
    }
}

/// Strings in memory per point a share may begin at.
const MEMORY_STEP: usize = 4096;

/// A position in a run.
enum Cursor<'a> {
    Chunk(RunReader<'a>),
    Memory(&'a [Entry<'a>], usize),
}

impl Cursor<'_> {
    /// Loads what [`Self::head`] shows; false at the run's end.
    fn load(&mut self) -> bool {
        match self {
            Cursor::Chunk(reader) => reader.head().is_some(),
            Cursor::Memory(entries, at) => *at < entries.len(),
        }
    }

    /// The text the cursor stands on and its count, once loaded.
    fn head(&self) -> Option<(&str, u64)> {
        match self {
            Cursor::Chunk(reader) => reader.loaded(),
            Cursor::Memory(entries, at) => entries.get(*at).map(|e| (e.1, e.2)),
        }
    }

    fn advance(&mut self) {
        match self {
            Cursor::Chunk(reader) => reader.skip(),
            Cursor::Memory(_, at) => *at += 1,
        }
    }

    /// Hands the strings from the head on that lie below `bound` (all, when `None`) to `add`,
    /// as far as that needs no comparing: the rest of a chunk's piece when all of it is below,
    /// the strings in memory up to `bound`. False when none were.
    fn add_below(&mut self, bound: Option<&str>, mut add: impl FnMut(&str, u64)) -> bool {
        match self {
            Cursor::Chunk(reader) => {
                let Some((end, inclusive)) = reader.piece_end() else { return false };
                let below = bound.is_none_or(|b| if inclusive { end < b } else { end <= b });
                if below {
                    reader.drain_piece(add);
                }
                below
            }
            Cursor::Memory(entries, at) => {
                let rest = entries.get(*at..).unwrap_or_default();
                let stop = bound.map_or(rest.len(), |b| rest.partition_point(|e| e.1 < b));
                for e in &rest[..stop] {
                    add(e.1, e.2);
                }
                *at += stop;
                stop > 0
            }
        }
    }
}

/// Runs each past the last, read one after another from a share's first text.
struct Chain<'a> {
    runs: Vec<Run<'a>>,
    next: usize,
    cursor: Option<Cursor<'a>>,
}

impl<'a> Chain<'a> {
    /// The chain from its first text not below `low`.
    fn from(runs: &[Run<'a>], low: &str) -> Self {
        let next = runs.partition_point(|run| run.bounds().1 < low);
        let mut chain = Chain { runs: runs.to_vec(), next, cursor: None };
        chain.cursor = chain.runs.get(next).map(|run| run.cursor(low));
        chain.next += 1;
        chain
    }

    /// Loads the head; false when the chain is read to its end.
    fn load(&mut self) -> bool {
        loop {
            let Some(cursor) = &mut self.cursor else { return false };
            if cursor.load() {
                return true;
            }
            self.cursor = self.runs.get(self.next).map(|run| run.cursor(""));
            self.next += 1;
        }
    }

    fn head(&self) -> Option<(&str, u64)> {
        self.cursor.as_ref().and_then(Cursor::head)
    }

    fn advance(&mut self) {
        if let Some(cursor) = &mut self.cursor {
            cursor.advance();
        }
    }

    /// [`Cursor::add_below`] on the loaded head.
    fn add_below(&mut self, bound: Option<&str>, add: impl FnMut(&str, u64)) -> bool {
        self.cursor.as_mut().is_some_and(|cursor| cursor.add_below(bound, add))
    }
}

/// The runs grouped into chains: sorted by first text, each run goes after the chain whose last
/// text is the greatest below its first, or starts a new chain.
fn chains<'a>(mut runs: Vec<Run<'a>>) -> Vec<Vec<Run<'a>>> {
    runs.sort_by(|a, b| a.bounds().0.cmp(b.bounds().0));
    let mut chains: Vec<Vec<Run<'a>>> = Vec::new();
    for run in runs {
        let first = run.bounds().0;
        let last = |chain: &Vec<Run<'a>>| chain.last().map(|r| r.bounds().1);
        let follows = (0..chains.len())
            .filter(|&k| last(&chains[k]).is_some_and(|last| last < first))
            .max_by_key(|&k| last(&chains[k]));
        match follows {
            Some(k) => chains[k].push(run),
            None => chains.push(vec![run]),
        }
    }
    chains
}

/// Where each of `shares` shares of the text range begins after the first (which begins at the
/// start): texts where about as many strings lie between one and the next.
fn share_starts<'a>(runs: &[Run<'a>], shares: usize) -> Vec<&'a str> {
    let mut points = Vec::new();
    for run in runs {
        run.split_points(&mut points);
    }
    points.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let total: u64 = points.iter().map(|p| p.1).sum();
    let mut starts: Vec<&'a str> = Vec::with_capacity(shares);
    let mut seen = 0u64;
    for (text, n) in points {
        let share = (u128::from(seen) * shares as u128 / u128::from(total.max(1))) as usize;
        if share > starts.len() && starts.last().is_none_or(|&last| last < text) {
            starts.push(text);
        }
        seen += n;
    }
    starts
}

/// Chains past which a merge by text gives way to hashing: the merge compares every chain's
/// head for each string, and runs that overlap this much (sorted parts restarting again and
/// again) gain nothing from their order.
const MAX_CHAINS: usize = 16;

/// Every distinct string of `chunks` (each an ascending run: `Chunk::ascending`) and of
/// `memory` (runs in ascending order) with its count, merged, in up to `shares` shares of the
/// text range on all cores: each share's strings go to `add` on a state `make` gives it, and
/// the shares' states are returned. `None` when the runs overlap in more than [`MAX_CHAINS`]
/// chains.
pub(super) fn fold_shares<T: Send>(
    chunks: &[Chunk],
    memory: &[Tally<'_>],
    shares: usize,
    make: impl Fn() -> T + Sync,
    add: impl Fn(&mut T, &str, u64) + Sync,
) -> Option<Vec<T>> {
    let runs: Vec<Run<'_>> = chunks
        .iter()
        .map(Run::Chunk)
        .chain(memory.iter().filter(|m| !m.is_empty()).map(|m| Run::Memory(m)))
        .collect();
    let starts = share_starts(&runs, shares.max(1));
    let chains = chains(runs);
    if chains.len() > MAX_CHAINS {
        return None;
    }
    Some(crate::parallel::on_all_cores(starts.len() + 1, |share| {
        let low = if share == 0 { "" } else { starts[share - 1] };
        let high = starts.get(share).copied();
        let mut state = make();
        let mut readers: Vec<Chain<'_>> =
            chains.iter().map(|runs| Chain::from(runs, low)).collect();
        // The chains standing on the least head.
        let mut equal: Vec<usize> = Vec::with_capacity(readers.len());
        loop {
            readers.retain_mut(Chain::load);
            let mut least: Option<&str> = None;
            equal.clear();
            for (i, reader) in readers.iter().enumerate() {
                let Some((text, _)) = reader.head() else { continue };
                match least {
                    Some(best) if text > best => {}
                    Some(best) if text == best => equal.push(i),
                    _ => {
                        least = Some(text);
                        equal.clear();
                        equal.push(i);
                    }
                }
            }
            let Some(text) = least else { break };
            if high.is_some_and(|high| text >= high) {
                break;
            }
            if let &[i] = &equal[..] {
                // One chain is below all the others (as in each block of rows a builder read):
                // what of it lies below their heads and the share's end is added unmerged.
                let (before, rest) = readers.split_at_mut(i);
                if let Some((alone, after)) = rest.split_first_mut() {
                    let others = before.iter().chain(after.iter()).filter_map(|c| c.head());
                    let bound = others.map(|(text, _)| text).chain(high).min();
                    if alone.add_below(bound, |text, n| add(&mut state, text, n)) {
                        continue;
                    }
                }
            }
            let heads = equal.iter().filter_map(|&i| readers[i].head());
            let Some((text, n)) = heads.reduce(|a, b| (a.0, a.1 + b.1)) else { break };
            add(&mut state, text, n);
            for &i in &equal {
                readers[i].advance();
            }
        }
        state
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::profile::accumulate::StringStats;
    use crate::profile::spill::{ChunkWriter, MemoryScratch, Scratch, Spill};

    /// A chunk of `texts` (ascending) written as an ascending run, each seen `n(text)` times.
    fn run_chunk(scratch: &Arc<Scratch>, texts: &[String], n: impl Fn(&str) -> u64) -> Chunk {
        let mut writer = ChunkWriter::new(scratch);
        writer.ascending_strings(texts.iter().map(|t| (t.as_str(), n(t)))).expect("written");
        writer.finish().expect("finished")
    }

    #[test]
    fn a_reader_from_any_text_starts_at_the_first_text_not_below_it() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let texts: Vec<String> = (0..150_000).map(|i| format!("ü-{:07}", i * 3)).collect();
        let chunk = run_chunk(&scratch, &texts, |_| 1);
        let run = chunk.ascending.as_ref().expect("an ascending chunk");
        assert!(run.firsts.len() > 3, "several pieces");
        assert_eq!(run.last, texts[texts.len() - 1]);
        // Each piece's first text, its neighbours, texts between two written, before and after all.
        let mut lows: Vec<String> = run.firsts.clone();
        lows.extend(run.firsts.iter().map(|f| format!("{f}~")));
        lows.extend(["", "ü-0000001", "ü-0059999", "ü-9", "z"].map(String::from));
        for low in &lows {
            let mut reader = RunReader::from_text(&chunk, low);
            let expected = texts.iter().position(|t| t >= low);
            let got = reader.head().map(|(t, _)| t.to_string());
            assert_eq!(got, expected.map(|k| texts[k].clone()), "from {low}");
            // And on to the end, every text once.
            let mut rest = 0;
            while reader.head().is_some() {
                rest += 1;
                reader.skip();
            }
            assert_eq!(rest, expected.map_or(0, |k| texts.len() - k), "from {low}");
        }
    }

    #[test]
    fn overlapping_and_following_runs_merge_into_every_distinct_text_once_in_any_shares() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut rng = fastrand::Rng::with_seed(31);
        // Three builders' successive chunks over interleaved blocks (as a Parquet file's row
        // groups are read), with texts shared between builders, and two runs left in memory.
        let mut chunks = Vec::new();
        let mut expected: BTreeMap<String, u64> = BTreeMap::new();
        let count = |t: &str| 1 + t.len() as u64 % 3;
        for builder in 0..3u64 {
            for block in 0..4u64 {
                let mut texts: Vec<String> = (0..rng.u64(1..6_000))
                    .map(|_| format!("k-{:06}", (block * 3 + builder) * 10_000 + rng.u64(..12_000)))
                    .collect();
                texts.sort_unstable();
                texts.dedup();
                for t in &texts {
                    *expected.entry(t.clone()).or_default() += count(t);
                }
                chunks.push(run_chunk(&scratch, &texts, count));
            }
        }
        let memory_texts: Vec<Vec<String>> = (0..2)
            .map(|_| {
                let mut texts: Vec<String> =
                    (0..9_000).map(|_| format!("k-{:06}", rng.u64(..130_000))).collect();
                texts.push("日本".to_string());
                texts.sort_unstable();
                texts.dedup();
                texts
            })
            .collect();
        let memory: Vec<Vec<(u64, &str, u64)>> = memory_texts
            .iter()
            .map(|texts| texts.iter().map(|t| (0, t.as_str(), 2)).collect())
            .collect();
        for t in memory_texts.iter().flatten() {
            *expected.entry(t.clone()).or_default() += 2;
        }
        for shares in [1, 2, 5, 16, 200] {
            let mut seen = Vec::new();
            let folds = fold_shares(&chunks, &memory, shares, Vec::new, |v, t, n| {
                v.push((t.to_string(), n));
            })
            .expect("five chains at most");
            assert!(folds.len() <= shares.max(1));
            for fold in folds {
                // Each share's texts ascend.
                assert!(fold.windows(2).all(|w| w[0].0 < w[1].0), "{shares} shares");
                seen.extend(fold);
            }
            seen.sort_unstable();
            let expected: Vec<(String, u64)> = expected.clone().into_iter().collect();
            assert_eq!(seen, expected, "{shares} shares");
        }
        assert!(spill.failure().is_none());
    }

    #[test]
    fn runs_that_overlap_in_too_many_chains_are_left_to_hashing() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        // Sorted parts that restart: every run covers the same texts.
        let texts: Vec<String> = (0..500).map(|i| format!("r-{i:04}")).collect();
        let runs = |k: usize| -> Vec<Chunk> {
            (0..k).map(|_| run_chunk(&scratch, &texts, |_| 1)).collect()
        };
        let merge = |chunks: &[Chunk]| {
            fold_shares(chunks, &[], 3, Vec::new, |v, t, n| v.push((t.to_string(), n)))
        };
        let within = merge(&runs(MAX_CHAINS)).expect("as many chains as allowed merge");
        let folded: Vec<(String, u64)> = within.into_iter().flatten().collect();
        let expected: Vec<(String, u64)> =
            texts.iter().map(|t| (t.clone(), MAX_CHAINS as u64)).collect();
        assert_eq!(folded, expected);
        assert!(merge(&runs(MAX_CHAINS + 1)).is_none());
    }

    #[test]
    fn ascending_values_spill_as_runs_and_others_by_bucket() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let feed = |stats: &mut StringStats, texts: &mut dyn Iterator<Item = String>| {
            for t in texts {
                stats.count += 1;
                stats.values.add(&t, 1);
            }
            stats.spill(&scratch).expect("spilled");
        };
        let mut ids = StringStats::default();
        feed(&mut ids, &mut (0..10_000).map(|i| format!("id-{i:06}")));
        feed(&mut ids, &mut (10_000..20_000).map(|i| format!("id-{i:06}")));
        assert_eq!(ids.spilled.len(), 2);
        assert!(ids.spilled.iter().all(|c| c.ascending.is_some() && c.entries == 10_000));
        let mut shuffled = StringStats::default();
        feed(&mut shuffled, &mut (0..10_000).rev().map(|i| format!("id-{i:06}")));
        assert!(shuffled.spilled[0].ascending.is_none());
        // Few distinct values stay a table, spilled by bucket however they arrived.
        let mut few = StringStats::default();
        feed(&mut few, &mut (0..10_000).map(|i| format!("v{}", i / 1_000)));
        assert!(few.spilled[0].ascending.is_none());
    }
}
