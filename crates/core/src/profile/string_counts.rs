//! Exact counts of distinct strings, stored without an allocation per string.
//!
//! Every string lives in one arena `String` (or, up to 15 bytes, in its table slot); what is kept
//! per string is its hash and where it is (and a count, where it can exceed one). Two layouts, because the two common kinds of
//! string property behave opposite:
//!
//! - **Few distinct values** (`kind`, `region`): a `hashbrown::HashTable` finds the value's slot
//!   and bumps its count. The table stays small and in cache.
//! - **Mostly distinct values** (ids, timestamps): a hash table of a million entries turns every
//!   value into cache misses, and merging two such tables is as costly again. Once a property
//!   looks like this (past [`LOG_AFTER`] distinct values, more than half of all values), every
//!   occurrence is instead *appended* to a log of 16-byte entries — sequential writes only — and
//!   the logs are sorted by hash and folded into counts once, at the end ([`StringCounts::tally`]).
//!   Merging a log keeps the other builder's counts as a part of their own: nothing is copied.
//!   A log found to repeat its values after all (an estimate at each doubling of its length)
//!   is folded back into a table.
//!
//! Either way the counts are exact. Every table in the process hashes with the same randomly
//! seeded hasher, so hashes computed by one thread stay valid in another's table.

use std::hash::BuildHasher;
use std::sync::OnceLock;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::repeats::distinct_hashes_estimate;

/// Distinct values past which a mostly-distinct property switches to the log layout. Low: a
/// table of tens of thousands of long strings per property (URLs, shas, titles: hundreds of
/// such properties in nested documents) turns every new value into cache misses and rehashes,
/// where a log appends. A property that only looks mostly distinct at first (some 50,000 names
/// repeated over ten million rows) is caught by [`CHECK_LOG_FROM`]'s checks and goes back to a
/// table, which then holds its distinct values rather than its items. Tests exercise the switch
/// at a smaller size: both layouts are exact at any threshold.
#[cfg(not(test))]
const LOG_AFTER: usize = 4_096;
#[cfg(test)]
const LOG_AFTER: usize = 1_024;

/// Distinct values from which a table found mostly distinct when it is spilled goes on as a log
/// (see [`StringCounts::emptied`]); a smaller table is cheap either way.
const LOG_FROM_SPILLED: usize = 256;

/// Average repeats of a log's values up to which it repeats little (at most one value in five
/// a repeat): a spill writes it unfolded ([`StringCounts::repeats_little`]), and the memory
/// budget leaves it a log ([`StringCounts::unlog_if_repeating_now`]).
const LITTLE_REPEATS: f64 = 1.25;

/// Log length from which a log is checked for repeats, at each power of two: by an estimate of
/// its distinct values (a pass over its hashes), it goes back to a table when fewer than a
/// [`REPEATS_TO_UNLOG`]th of its values are distinct.
const CHECK_LOG_FROM: usize = 4 * LOG_AFTER;

/// Average repeats of a log's values past which the log goes back to a table.
const REPEATS_TO_UNLOG: f64 = 4.0;

/// A distinct string with its count (the table layout).
#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    text: SlotText,
    count: u64,
}

/// A slot's string: up to [`INLINE`] bytes held in place, its length in the last byte (so a
/// lookup of a short value — most are — reads the slot's cache line and not the arena's too),
/// else its range in the arena, marked [`IN_ARENA`] there. A string has one form, by its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SlotText([u8; 16]);

/// Longest string held in a slot.
const INLINE: usize = 15;

/// The last byte of a [`SlotText`] that lies in the arena.
const IN_ARENA: u8 = 0xff;

impl SlotText {
    /// `value` in place, if it is short enough.
    ///
    /// Built in two registers from overlapping loads, not copied byte by byte: a copy of a
    /// variable length into a buffer that is then read as words stalls on every lookup.
    #[inline]
    fn inline(value: &str) -> Option<Self> {
        let bytes = value.as_bytes();
        let n = bytes.len();
        let (low, high) = match n {
            0 => (0, 0),
            1..=3 => {
                let byte = |at: usize| u64::from(bytes[at]) << (8 * at);
                (byte(0) | byte(n / 2) | byte(n - 1), 0)
            }
            4..=7 => {
                let load = |at: usize| u64::from(u32::from_le_bytes(word::<4>(bytes, at)));
                // The two words overlap where their bytes are the same: `|` keeps them.
                (load(0) | load(n - 4) << (8 * (n - 4)), 0)
            }
            8..=INLINE => {
                let load = |at: usize| u64::from_le_bytes(word::<8>(bytes, at));
                // The last eight bytes, shifted down to leave bytes 8.. of the value.
                (load(0), load(n - 8).checked_shr(8 * (16 - n as u32)).unwrap_or(0))
            }
            _ => return None,
        };
        let mut text = [0; 16];
        text[..8].copy_from_slice(&low.to_le_bytes());
        text[8..].copy_from_slice(&(high | (n as u64) << 56).to_le_bytes());
        Some(Self(text))
    }

    /// `value` in place, or appended to `arena`.
    fn stored(value: &str, arena: &mut String) -> Self {
        Self::inline(value).unwrap_or_else(|| {
            let mut text = [0; 16];
            text[..8].copy_from_slice(&(arena.len() as u64).to_le_bytes());
            text[8..INLINE].copy_from_slice(&(value.len() as u64).to_le_bytes()[..7]);
            text[INLINE] = IN_ARENA;
            arena.push_str(value);
            Self(text)
        })
    }

    /// The string, from the slot or from `arena`.
    fn get<'a>(&'a self, arena: &'a str) -> &'a str {
        let len = usize::from(self.0[INLINE]);
        if self.0[INLINE] != IN_ARENA {
            // Copied from a `str` whole.
            return std::str::from_utf8(&self.0[..len.min(INLINE)]).unwrap_or_default();
        }
        let word = |range: std::ops::Range<usize>| {
            let mut bytes = [0; 8];
            bytes[..range.len()].copy_from_slice(&self.0[range]);
            u64::from_le_bytes(bytes) as usize
        };
        let start = word(0..8);
        arena.get(start..start.saturating_add(word(8..INLINE))).unwrap_or_default()
    }
}

/// One occurrence in the log layout: a hash and the arena range, packed as `start << 16 | len`
/// (logged strings are at most a few hundred bytes: longer ones are counted under a short key).
#[derive(Debug, Clone, Copy)]
struct Logged {
    hash: u64,
    place: u64,
}

/// Longest string the log layout can hold; [`StringCounts::add`] callers stay far below it.
const MAX_LOGGED_LEN: usize = u16::MAX as usize;

impl Logged {
    fn range(self) -> std::ops::Range<usize> {
        let start = (self.place >> 16) as usize;
        start..start + (self.place & 0xffff) as usize
    }
}

/// String equality without a call to `memcmp` for short strings: every key and every repeated
/// value of every item is compared once, and most are a few bytes long, shorter than the call.
/// Up to 16 bytes, two overlapping word loads from each end cover every byte.
#[inline]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The `N` bytes of `bytes` at `at` (in bounds: callers check the length).
#[inline]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut word = [0; N];
    word.copy_from_slice(&bytes[at..at + N]);
    word
}

/// The process-wide hasher: seeded once at random, so crafted inputs cannot predict collisions.
pub(crate) fn hasher() -> &'static FixedState {
    static HASHER: OnceLock<FixedState> = OnceLock::new();
    HASHER.get_or_init(|| {
        FixedState::with_seed(foldhash::fast::RandomState::default().hash_one(0x5c4e_u64))
    })
}

/// Distinct strings, each with its hash and count.
pub(super) type Tally<'a> = Vec<(u64, &'a str, u64)>;

/// Distinct strings with their counts.
#[derive(Debug, Default)]
pub(crate) struct StringCounts {
    table: HashTable<Slot>,
    /// In the log layout: the table's slots when logging began, then every occurrence since.
    counted: Vec<Slot>,
    log: Vec<Logged>,
    logging: bool,
    /// Distinct values a table holds before it may switch to the log layout: [`LOG_AFTER`],
    /// raised each time a log goes back to a table (so a property cannot switch back and forth
    /// at every check).
    log_after: usize,
    arena: String,
    total: u64,
    /// Logs merged in from other builders, in item order after this one's.
    parts: Vec<StringCounts>,
}

impl StringCounts {
    /// Number of distinct strings; an upper bound until [`StringCounts::tally`] folds the logs.
    pub(super) fn len(&self) -> usize {
        self.table.len()
            + self.counted.len()
            + self.log.len()
            + self.parts.iter().map(StringCounts::len).sum::<usize>()
    }

    /// Bytes held, plus what [`StringCounts::tally`] will need to fold them: an index entry per
    /// logged value and an entry per distinct value in its result. Vectors count by length, not
    /// capacity: the spare capacity of a large vector is address space never written, not
    /// memory; a hash table's slots are spread over all of it.
    pub(super) fn heap_bytes(&self) -> usize {
        let tally = 24;
        let own = self.arena.len()
            + self.table.capacity() * (std::mem::size_of::<Slot>() + tally)
            + self.counted.len() * (std::mem::size_of::<Slot>() + tally)
            + self.log.len() * (std::mem::size_of::<Logged>() + 16 + tally);
        own + self.parts.iter().map(StringCounts::heap_bytes).sum::<usize>()
    }

    /// Counts `value` `n` more times.
    pub(super) fn add(&mut self, value: &str, n: u64) {
        let hash = hasher().hash_one(value);
        self.add_hashed(hash, value, n);
    }

    fn add_hashed(&mut self, hash: u64, value: &str, n: u64) {
        self.total += n;
        if self.logging && n == 1 && value.len() <= MAX_LOGGED_LEN {
            self.log
                .push(Logged { hash, place: (self.arena.len() as u64) << 16 | value.len() as u64 });
            self.arena.push_str(value);
            if self.log.len() >= CHECK_LOG_FROM && self.log.len().is_power_of_two() {
                self.unlog_if_repeating();
            }
            return;
        }
        if self.logging {
            // Only merges count more than one at a time, and only callers past the key limit
            // hand in long strings: both are rare enough for a slot of their own.
            let text = SlotText::stored(value, &mut self.arena);
            self.counted.push(Slot { hash, text, count: n });
            return;
        }
        let arena = &mut self.arena;
        let short = SlotText::inline(value);
        let same = |s: &Slot| {
            s.hash == hash
                && match short {
                    Some(short) => s.text == short,
                    None => same_text(s.text.get(arena), value),
                }
        };
        match self.table.entry(hash, same, |s| s.hash) {
            hashbrown::hash_table::Entry::Occupied(mut slot) => slot.get_mut().count += n,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                let text = short.unwrap_or_else(|| SlotText::stored(value, arena));
                vacant.insert(Slot { hash, text, count: n });
                if self.table.len() > self.log_after.max(LOG_AFTER)
                    && self.table.len() as u64 * 2 > self.total
                {
                    self.start_logging();
                }
            }
        }
    }

    /// Empty counts in this one's layout: a property whose counts were just spilled goes on as
    /// it was (a log stays a log, rather than growing a table to [`LOG_AFTER`] again each time).
    /// A table that was mostly distinct values goes on as a log: a property seen a few thousand
    /// times between spills (a pull request's URLs in a file of all kinds of events) never
    /// reaches [`LOG_AFTER`], and was otherwise inserted into a new table each time.
    pub(super) fn emptied(&mut self) -> Self {
        let mostly_distinct = self.table.len() >= LOG_FROM_SPILLED
            && self.table.len() as u64 * 2 > self.total
            // Not one that went back to a table: its repeats are known.
            && self.log_after == 0;
        let (mut log, mut arena) = (std::mem::take(&mut self.log), std::mem::take(&mut self.arena));
        log.clear();
        arena.clear();
        Self {
            logging: self.logging || mostly_distinct,
            log_after: self.log_after,
            log,
            arena,
            ..Self::default()
        }
    }

    /// Goes back to the table layout if this builder's log repeats its values (see
    /// [`CHECK_LOG_FROM`]). Logs merged from other builders are left as they are.
    fn unlog_if_repeating(&mut self) {
        self.unlog_if_repeating_by(REPEATS_TO_UNLOG);
    }

    /// Goes back to the table layout now if this builder's log repeats its values more than a
    /// little (one value in five a repeat, by estimate); returns whether it did. The memory
    /// budget asks before it sketches a log: the table is smaller, and grows with the distinct
    /// values, not with every item as the log does.
    pub(super) fn unlog_if_repeating_now(&mut self) -> bool {
        self.logging
            && self.log.len() >= CHECK_LOG_FROM
            && self.unlog_if_repeating_by(LITTLE_REPEATS)
    }

    /// [`Self::unlog_if_repeating`] past `repeats` average repeats; returns whether it went
    /// back to a table.
    fn unlog_if_repeating_by(&mut self, repeats: f64) -> bool {
        if !self.parts.is_empty() || self.logged_distinct() * repeats > self.log.len() as f64 {
            return false;
        }
        let mut table = StringCounts {
            log_after: self.log_after.max(LOG_AFTER).saturating_mul(8),
            ..StringCounts::default()
        };
        for (hash, text, n) in self.tally_hashed() {
            table.add_hashed(hash, text, n);
        }
        *self = table;
        true
    }

    fn start_logging(&mut self) {
        self.logging = true;
        self.counted.extend(self.table.drain());
    }

    /// Adds every count of `other`. A log is kept as a part (no copy); a table is folded in.
    pub(super) fn merge(&mut self, mut other: StringCounts) {
        if self.logging || other.logging {
            for side in [&mut *self, &mut other] {
                if !side.logging {
                    side.start_logging();
                }
            }
            self.total += other.total;
            let mut nested = std::mem::take(&mut other.parts);
            self.parts.push(other);
            self.parts.append(&mut nested);
            return;
        }
        if other.len() > self.len() {
            std::mem::swap(self, &mut other);
        }
        for slot in other.table.iter() {
            self.add_hashed(slot.hash, slot.text.get(&other.arena), slot.count);
        }
    }

    /// Every distinct string with its count: a table's in no particular order, logs' in order of
    /// first appearance (so later passes over the values read the arenas front to back).
    pub(super) fn tally(&self) -> Vec<(&str, u64)> {
        self.tally_hashed().into_iter().map(|(_, text, n)| (text, n)).collect()
    }

    /// [`Self::tally`] with each string's hash (the process-wide [`hasher`]'s), which spilling
    /// orders its chunks by.
    ///
    /// Folding the logs sorts only a small index of (hash, position) pairs: hashes are uniform,
    /// so a two-pass radix sort on their top 16 bits leaves runs of a few pairs to finish. Texts
    /// are compared only within a run of equal hashes (the same string, or a rare collision);
    /// each repeat's count goes to the first occurrence and the repeat is dropped.
    pub(super) fn tally_hashed(&self) -> Vec<(u64, &str, u64)> {
        self.tally_hashed_trying(true)
    }

    /// [`Self::tally_hashed`] where [`Self::ascending_runs`] already found a builder's values
    /// out of order: the one-pass fold of ascending logs is not tried again.
    pub(super) fn tally_unordered(&self) -> Vec<(u64, &str, u64)> {
        self.tally_hashed_trying(false)
    }

    fn tally_hashed_trying(&self, ascending: bool) -> Vec<(u64, &str, u64)> {
        if !self.logging {
            return self.table.iter().map(|s| (s.hash, s.text.get(&self.arena), s.count)).collect();
        }
        let sources: Vec<&StringCounts> = std::iter::once(self).chain(&self.parts).collect();
        if ascending && let Some(tally) = tally_sorted(&sources) {
            return tally;
        }
        // Entries are numbered across sources in item order: each source's counted slots (seen
        // first), then its log. `firsts[k]` is the number of the first entry of source `k`.
        let mut firsts = Vec::with_capacity(sources.len() + 1);
        let mut n = 0;
        for part in &sources {
            firsts.push(n);
            n += part.counted.len() + part.log.len();
        }
        firsts.push(n);
        let text_of = |i: usize| -> &str {
            let k = firsts.partition_point(|&f| f <= i) - 1;
            sources[k].entry_text(i - firsts[k])
        };
        let mut order: Vec<(u64, usize)> = Vec::with_capacity(n);
        let mut counts: Vec<u64> = Vec::with_capacity(n);
        for (i, (hash, _, count)) in sources.iter().flat_map(|part| part.entries()).enumerate() {
            order.push((hash, i));
            counts.push(count);
        }
        radsort::sort_by_key(&mut order, |&(hash, _)| (hash >> 48) as u16);
        for run in order.chunk_by_mut(|a, b| a.0 >> 48 == b.0 >> 48) {
            run.sort_unstable();
        }
        for run in order.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1) {
            // Positions ascend within a run, so the first of equal texts is the earliest.
            for (k, &(_, later)) in run.iter().enumerate().skip(1) {
                let text = text_of(later);
                let first = run[..k]
                    .iter()
                    .map(|&(_, i)| i)
                    .find(|&i| counts[i] != 0 && text_of(i) == text);
                if let Some(first) = first {
                    counts[first] += counts[later];
                    counts[later] = 0;
                }
            }
        }
        drop(order);
        let entries = sources.iter().flat_map(|part| part.entries());
        entries
            .zip(counts)
            .filter(|&(_, n)| n != 0)
            .map(|((hash, text, _), n)| (hash, text, n))
            .collect()
    }

    /// Each builder's logged strings as a run of distinct strings in ascending order with their
    /// counts, where every builder's values arrived in ascending order (as ids and timestamps
    /// do); `None` in the table layout or when one did not.
    pub(super) fn ascending_runs(&self) -> Option<Vec<Tally<'_>>> {
        if !self.logging {
            return None;
        }
        std::iter::once(self).chain(&self.parts).map(|part| tally_sorted(&[part])).collect()
    }

    /// The builders whose logs [`Self::ascending_folded`] reads, in item order: this one and
    /// the parts merged into it; none in the table layout (its order says nothing).
    pub(super) fn logged_parts(&self) -> impl Iterator<Item = &StringCounts> {
        let parts = if self.logging { &self.parts[..] } else { &[] };
        self.logging.then_some(self).into_iter().chain(parts)
    }

    /// This builder's strings as distinct strings in ascending order with their hashes and
    /// counts, read from its log as long as they arrived in ascending order (as ids and
    /// timestamps do); the iterator ends early, with `out_of_order` set, at the first string
    /// that did not. Equal strings are then neighbours, so one pass folds them: no hashing, no
    /// sorting, and nothing gathered (a spill writes them as they are read).
    pub(super) fn ascending_folded<'a>(
        &'a self,
        out_of_order: &std::cell::Cell<bool>,
    ) -> impl Iterator<Item = (u64, &'a str, u64)> {
        // The counted slots are the distinct values seen before logging began, in table order;
        // sorted, they are in the order they arrived if the values ascended at all.
        let mut entries = self.entries();
        let mut counted: Vec<(u64, &str, u64)> =
            entries.by_ref().take(self.counted.len()).collect();
        counted.sort_unstable_by(|a, b| a.1.cmp(b.1));
        let mut entries = counted.into_iter().chain(entries).peekable();
        std::iter::from_fn(move || {
            let (hash, text, mut n) = entries.next()?;
            while let Some(&(_, next, m)) = entries.peek() {
                match next.cmp(text) {
                    std::cmp::Ordering::Equal => n += m,
                    std::cmp::Ordering::Greater => break,
                    std::cmp::Ordering::Less => {
                        out_of_order.set(true);
                        return None;
                    }
                }
                entries.next();
            }
            Some((hash, text, n))
        })
    }

    /// Every builder's strings as runs of distinct strings in ascending order with their counts:
    /// [`Self::ascending_runs`] where they arrived in order, else sorted.
    pub(super) fn sorted_runs(&self) -> Vec<Tally<'_>> {
        if let Some(runs) = self.ascending_runs() {
            return runs;
        }
        let mut tally = self.tally_hashed();
        tally.sort_unstable_by(|a, b| a.1.cmp(b.1));
        vec![tally]
    }

    /// The text of entry `local` of this source in the log layout: its counted slots first, then
    /// its log.
    fn entry_text(&self, local: usize) -> &str {
        match self.counted.get(local) {
            Some(s) => s.text.get(&self.arena),
            None => &self.arena[self.log[local - self.counted.len()].range()],
        }
    }

    /// True for a log of this builder's alone whose values are nearly all distinct (by an
    /// estimate over their hashes): spilling writes its entries as they are ([`Self::entries`])
    /// rather than folding repeats first, which takes a sort.
    pub(super) fn repeats_little(&self) -> bool {
        if !self.logging || !self.parts.is_empty() || self.log.len() < LOG_FROM_SPILLED {
            return false;
        }
        self.logged_distinct() * LITTLE_REPEATS >= self.log.len() as f64
    }

    /// About how many distinct values this builder's log holds, estimated over their hashes
    /// with a bitmap of four bits per value, at most 128 KiB: within a few percent for the
    /// distinct counts its callers compare, well below the log's length.
    fn logged_distinct(&self) -> f64 {
        let bits = (self.log.len() * 4).next_power_of_two().trailing_zeros().clamp(16, 20);
        distinct_hashes_estimate(self.log.iter().map(|l| l.hash), bits)
    }

    /// Every entry of this source in the log layout, in the order of [`Self::entry_text`]:
    /// `(hash, text, count)`, repeats not folded.
    pub(super) fn entries(&self) -> impl Iterator<Item = (u64, &str, u64)> {
        let counted = self.counted.iter().map(|s| (s.hash, s.text.get(&self.arena), s.count));
        counted.chain(self.log.iter().map(|l| (l.hash, &self.arena[l.range()], 1)))
    }

    /// True when every string counted is ASCII (so its length in characters is its length in
    /// bytes).
    pub(super) fn is_ascii(&self) -> bool {
        // Strings held in their slots are not in the arena.
        let slots = self.table.iter().chain(&self.counted);
        self.arena.is_ascii()
            && slots.into_iter().all(|s| s.text.get("").is_ascii())
            && self.parts.iter().all(StringCounts::is_ascii)
    }
}

/// The tally of logs whose values arrived in ascending order, as ids and timestamps usually do
/// (each source folded by [`StringCounts::ascending_folded`], the sources one after another);
/// `None` as soon as a value is out of order (the general tally then runs).
fn tally_sorted<'a>(sources: &[&'a StringCounts]) -> Option<Vec<(u64, &'a str, u64)>> {
    let out_of_order = std::cell::Cell::new(false);
    let mut tally: Vec<(u64, &'a str, u64)> = Vec::new();
    for part in sources {
        for (hash, text, count) in part.ascending_folded(&out_of_order) {
            match tally.last_mut() {
                Some(last) if last.1 == text => last.2 += count,
                Some(last) if last.1 > text => return None,
                _ => {
                    if tally.is_empty() {
                        // Sized once the first values look ordered; every log entry may be new.
                        tally.reserve(sources.iter().map(|p| p.counted.len() + p.log.len()).sum());
                    }
                    tally.push((hash, text, count));
                }
            }
        }
        if out_of_order.get() {
            return None;
        }
    }
    Some(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(counts: &mut StringCounts) -> Vec<(String, u64)> {
        let mut all: Vec<(String, u64)> =
            counts.tally().into_iter().map(|(s, n)| (s.to_string(), n)).collect();
        all.sort();
        all
    }

    #[test]
    fn same_text_compares_every_byte_at_every_length() {
        let base: String = ('a'..='z').collect();
        for len in 0..=base.len() {
            let a = &base[..len];
            assert!(same_text(a, a));
            for at in 0..len {
                let mut b = a.as_bytes().to_vec();
                b[at] = b'#';
                assert!(!same_text(a, std::str::from_utf8(&b).unwrap_or_default()), "{a} at {at}");
            }
            assert!(!same_text(a, &base[..len.saturating_sub(1)]) || len == 0);
        }
    }

    #[test]
    fn a_slot_holds_every_short_string_byte_for_byte() {
        let text = "héllo, wörld! 0123456789";
        for start in 0..4 {
            for end in start..text.len() {
                let Some(value) = text.get(start..end) else { continue };
                let Some(slot) = SlotText::inline(value) else {
                    assert!(value.len() > INLINE);
                    continue;
                };
                let mut expected = [0; 16];
                expected[..value.len()].copy_from_slice(value.as_bytes());
                expected[INLINE] = value.len() as u8;
                assert_eq!(slot.0, expected, "{value:?}");
                assert_eq!(slot.get(""), value);
            }
        }
    }

    #[test]
    fn short_strings_stay_in_their_slots_and_long_ones_in_the_arena_alike() {
        // Every length around the 15 bytes a slot holds, ASCII and two-byte characters.
        let values: Vec<String> = (0..40)
            .flat_map(|len| {
                ["x".repeat(len), format!("{}{}", "é".repeat(len / 2), "y".repeat(len % 2))]
            })
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        let mut counts = StringCounts::default();
        for (i, v) in values.iter().enumerate() {
            counts.add(v, i as u64 + 1);
            counts.add(v, 1);
        }
        let expected: Vec<(String, u64)> =
            values.iter().enumerate().map(|(i, v)| (v.clone(), i as u64 + 2)).collect();
        assert_eq!(sorted(&mut counts), expected);
        let long: usize = values.iter().map(String::len).filter(|&n| n > INLINE).sum();
        assert_eq!(counts.arena.len(), long, "only strings past 15 bytes are in the arena");
        assert!(!counts.is_ascii());
        let mut ascii = StringCounts::default();
        for v in ["", "short", &"x".repeat(15), &"y".repeat(16)] {
            ascii.add(v, 1);
        }
        assert!(ascii.is_ascii());
        ascii.add("né", 1);
        assert!(!ascii.is_ascii(), "a short non-ASCII string held in its slot counts");
    }

    #[test]
    fn counts_and_merges_exactly() {
        let mut a = StringCounts::default();
        for s in ["x", "y", "x", "", "x"] {
            a.add(s, 1);
        }
        let mut b = StringCounts::default();
        b.add("y", 2);
        b.add("z", 1);
        a.merge(b);
        let expected: Vec<(String, u64)> = [("", 1), ("x", 3), ("y", 3), ("z", 1)]
            .iter()
            .map(|(s, n)| (s.to_string(), *n))
            .collect();
        assert_eq!(sorted(&mut a), expected);
    }

    #[test]
    fn mostly_distinct_values_switch_to_the_log_and_stay_exact() {
        let mut a = StringCounts::default();
        let mut b = StringCounts::default();
        for i in 0..10_000 {
            a.add(&format!("id-{i}"), 1);
            b.add(&format!("id-{}", i + 5_000), 1);
        }
        b.add("id-1", 1);
        assert!(a.logging && b.logging);
        a.merge(b);
        let all = sorted(&mut a);
        assert_eq!(all.len(), 15_000);
        assert_eq!(all.iter().map(|(_, n)| n).sum::<u64>(), 20_001);
        assert_eq!(all.iter().find(|(s, _)| s == "id-1").map(|(_, n)| *n), Some(2));
        assert_eq!(all.iter().find(|(s, _)| s == "id-7000").map(|(_, n)| *n), Some(2));
    }

    #[test]
    fn a_log_that_repeats_goes_back_to_a_table_and_stays_exact() {
        // 3,000 names in a scattered order: mostly distinct for their first thousands, then
        // each seen about 33 times.
        let mut counts = StringCounts::default();
        let name = |i: u64| format!("customer name {:05}", (i * 7_919) % 3_000);
        for i in 0..100_000 {
            counts.add(&name(i), 1);
            if i == 2_500 {
                assert!(counts.logging, "mostly distinct so far: logged");
            }
        }
        assert!(!counts.logging, "the log's repeats sent it back to a table");
        assert_eq!(counts.table.len(), 3_000);
        let all = sorted(&mut counts);
        assert_eq!(all.len(), 3_000);
        assert_eq!(all.iter().map(|(_, n)| n).sum::<u64>(), 100_000);
        for (text, n) in &all {
            let k: u64 = text["customer name ".len()..].parse().expect("a number");
            // Value k is name(i) for the i below 100,000 with i * 7,919 = k (mod 3,000).
            let expected = (0..100_000u64).filter(|i| (i * 7_919) % 3_000 == k).count() as u64;
            assert_eq!(*n, expected, "{text}");
        }
    }

    #[test]
    fn a_log_of_distinct_values_stays_a_log() {
        let mut counts = StringCounts::default();
        for i in 0..100_000 {
            counts.add(&format!("order {i}"), 1);
        }
        assert!(counts.logging);
        assert_eq!(sorted(&mut counts).len(), 100_000);
    }

    #[test]
    fn texts_under_one_hash_stay_apart_in_a_log() {
        let mut counts = StringCounts::default();
        counts.start_logging();
        // Every value under the same hash, repeats interleaved with other texts.
        for value in ["a", "b", "a", "b", "c", "a", "b", "a"] {
            counts.add_hashed(7, value, 1);
        }
        assert_eq!(
            sorted(&mut counts),
            [("a".to_string(), 4), ("b".to_string(), 3), ("c".to_string(), 1)]
        );
    }

    #[test]
    fn logs_merged_from_many_builders_fold_repeats_in_first_appearance_order() {
        let builder = |range: std::ops::Range<i32>, extra: &[(&str, u64)]| {
            let mut counts = StringCounts::default();
            for i in range {
                counts.add(&format!("v{i}"), 1);
            }
            for (value, n) in extra {
                counts.add(value, *n);
            }
            counts
        };
        let mut a = builder(0..6_000, &[]);
        let mut b = builder(5_000..12_000, &[("v1", 3)]);
        b.merge(builder(11_000..13_000, &[]));
        // A builder that stayed a table merges into the logs too.
        let small = builder(0..3, &[("only-here", 2)]);
        a.merge(b);
        a.merge(small);
        let tally = a.tally();
        assert_eq!(tally.len(), 13_001);
        assert_eq!(tally.iter().map(|(_, n)| n).sum::<u64>(), 6_000 + 7_000 + 3 + 2_000 + 3 + 2);
        let count = |v: &str| tally.iter().find(|(s, _)| *s == v).map(|(_, n)| *n);
        assert_eq!(
            (count("v0"), count("v1"), count("v5500"), count("v11500"), count("only-here")),
            (Some(2), Some(5), Some(2), Some(2), Some(2))
        );
        // Builders in merge order (within one, the values seen before it began to log come
        // first, in table order): a's values, then b's new ones, the nested part's, the table's.
        let mut first: Vec<&str> = tally[..6_000].iter().map(|(s, _)| *s).collect();
        first.sort_unstable();
        let mut expected: Vec<String> = (0..6_000).map(|i| format!("v{i}")).collect();
        expected.sort_unstable();
        assert_eq!(first, expected);
        assert_eq!(count("v12999"), Some(1));
        assert_eq!(tally[13_000].0, "only-here");
    }

    #[test]
    fn ascending_and_shuffled_logs_tally_alike() {
        let values: Vec<String> = (0..20_000)
            .map(|i| format!("2024-01-01T{:02}:{:02}:{:02}Z", i / 3600 % 24, i / 60 % 60, i % 60))
            .collect();
        let feed = |order: &[usize]| {
            let (mut a, mut b) = (StringCounts::default(), StringCounts::default());
            for (k, &i) in order.iter().enumerate() {
                // Every tenth value twice, as timestamps of the same second.
                let target = if k < order.len() / 2 { &mut a } else { &mut b };
                target.add(&values[i], 1);
                if i % 10 == 0 {
                    target.add(&values[i], 1);
                }
            }
            a.merge(b);
            a
        };
        let ascending: Vec<usize> = (0..values.len()).collect();
        let mut shuffled = ascending.clone();
        fastrand::Rng::with_seed(3).shuffle(&mut shuffled);
        let mut sorted_counts = feed(&ascending);
        let mut shuffled_counts = feed(&shuffled);
        assert!(
            tally_sorted(&[&sorted_counts, &sorted_counts.parts[0]]).is_some(),
            "ascending logs take the one-pass fold"
        );
        assert!(tally_sorted(&[&shuffled_counts, &shuffled_counts.parts[0]]).is_none());
        let a = sorted(&mut sorted_counts);
        assert_eq!(a, sorted(&mut shuffled_counts));
        assert_eq!(a.len(), 20_000);
        assert_eq!(a.iter().map(|(_, n)| n).sum::<u64>(), 22_000);
        assert_eq!(
            sorted_counts.tally()[..3].iter().map(|(s, n)| (s.to_string(), *n)).collect::<Vec<_>>(),
            [
                ("2024-01-01T00:00:00Z".to_string(), 2),
                ("2024-01-01T00:00:01Z".to_string(), 1),
                ("2024-01-01T00:00:02Z".to_string(), 1)
            ]
        );
    }

    #[test]
    fn a_spilled_table_of_mostly_distinct_values_goes_on_as_a_log() {
        let filled = |distinct: usize, total: usize| {
            let mut counts = StringCounts::default();
            for i in 0..total {
                counts.add(&format!("https://example.com/pulls/{}", i % distinct), 1);
            }
            assert!(!counts.logging, "below LOG_AFTER: a table");
            counts
        };
        assert!(filled(1_000, 1_000).emptied().logging, "all distinct");
        assert!(!filled(300, 3_000).emptied().logging, "each seen ten times");
        assert!(!filled(100, 100).emptied().logging, "a small table");
        let mut log = filled(1_000, 1_000).emptied();
        log.add("https://example.com/pulls/1", 1);
        log.add("https://example.com/pulls/1", 1);
        assert_eq!(sorted(&mut log), [("https://example.com/pulls/1".to_string(), 2)]);
    }

    #[test]
    fn a_table_merges_into_a_log() {
        let mut small = StringCounts::default();
        small.add("id-3", 4);
        let mut big = StringCounts::default();
        for i in 0..10_000 {
            big.add(&format!("id-{i}"), 1);
        }
        small.merge(big);
        let all = sorted(&mut small);
        assert_eq!(all.len(), 10_000);
        assert_eq!(all.iter().find(|(s, _)| s == "id-3").map(|(_, n)| *n), Some(5));
    }
}
