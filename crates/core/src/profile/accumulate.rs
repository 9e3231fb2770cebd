//! The accumulating side of profiling: a tree of per-path counters fed by a serde visitor.
//!
//! Items are pushed into a [`ProfileBuilder`] one at a time, as JSON text or as a parsed value.
//! Text is scanned into a token tape by [`super::tape`] and walked; what that scanner declines,
//! and parsed values, go through a serde visitor that updates the same counters the same way.
//! Neither path materialises a value tree: every scalar lands directly in its counters.
//! Builders are mergeable, which is how loaders use every core: each thread profiles a slice of the
//! items and the partial builders are merged before [`ProfileBuilder::finish`].

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use foldhash::fast::RandomState;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::CollectionProfile;
use super::exact::{F64_EXACT_INTEGER, NumberKey};
use super::formats::StringFormat;
use super::numeric::ValueRuns;
use super::path_limit::{self, MAX_REMEMBERED, Refused};
use super::repeats::{self, RepeatCounts};
use super::sketch::{NumberSketch, StringSketch};
use super::skip::{KeySeed, ObjectOrder, Skip};
use super::spill::{Chunk, ChunkWriter, Scratch, Spill, SpillError};
use super::string_counts::{StringCounts, same_text};
use super::tape::{self, Token};
use crate::collection::ItemId;

type Map<K, V> = std::collections::HashMap<K, V, RandomState>;

/// Longest string kept verbatim as a value-count key. Longer strings are counted under their
/// prefix plus a hash of the whole, which keeps distinct counts exact (up to a 64-bit hash
/// collision) without letting a file of huge unique strings hold them all twice in memory.
pub(crate) const MAX_KEY_LEN: usize = 256;

/// Limits that keep hostile input from exhausting memory.
#[derive(Debug, Clone, Copy)]
pub struct ProfileLimits {
    /// Most distinct property paths profiled per collection; keys past it are counted, not profiled.
    pub max_paths: usize,
    /// Deepest nesting profiled; deeper values are counted by type but not descended into.
    pub max_depth: usize,
}

impl Default for ProfileLimits {
    fn default() -> Self {
        Self { max_paths: 10_000, max_depth: 64 }
    }
}

/// How many lengths were seen, and their minimum, maximum and sum.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Lengths {
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub sum: u64,
}

impl Lengths {
    /// Counts `n` more lengths of `len`.
    pub(super) fn add(&mut self, len: u64, n: u64) {
        if n == 0 {
            return;
        }
        if self.count == 0 || len < self.min {
            self.min = len;
        }
        self.max = self.max.max(len);
        self.sum += len * n;
        self.count += n;
    }

    /// Adds every length of `other`.
    pub(super) fn merge(&mut self, other: Lengths) {
        if other.count > 0 {
            self.min = if self.count == 0 { other.min } else { self.min.min(other.min) };
            self.max = self.max.max(other.max);
            self.sum += other.sum;
            self.count += other.count;
        }
    }

    /// The mean length; 0 when none were seen.
    pub(super) fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum as f64 / self.count as f64 }
    }
}

#[derive(Debug, Default)]
pub(crate) struct StringStats {
    pub count: u64,
    pub values: StringCounts,
    /// Lengths (in characters) of the strings longer than `MAX_KEY_LEN` bytes, which are
    /// counted under a shortened key. The others are measured once per distinct value when the
    /// profile is finished, not once per occurrence.
    pub long: Lengths,
    /// Values per format of those strings, read from the whole string (their shortened keys
    /// have none): a signed URL of a thousand characters is a `uri`.
    pub long_formats: Vec<(StringFormat, u64)>,
    /// The earliest and latest of those strings while every one is a date or time, read from
    /// the whole string (their shortened keys name no moment; every range leaves the keys out
    /// and adds this).
    pub long_range: super::formats::Extremes,
    /// Once the exact counts outgrew the memory budget: the sketches that replaced them
    /// (`values` and `long` are then empty).
    pub sketch: Option<Box<StringSketch>>,
    /// Counts written to scratch files when the budget was reached, each chunk by hash bucket
    /// or an ascending run (see [`super::spill`]); `values` holds what came after.
    pub spilled: Vec<Chunk>,
    /// True once a spill found the strings did not arrive in ascending order.
    unordered: bool,
}

impl StringStats {
    /// A string longer than `MAX_KEY_LEN` bytes, `n` times: counted under its shortened key,
    /// measured and checked for a format whole.
    fn add_long(&mut self, value: &str, n: u64) {
        self.long.add(value.chars().count() as u64, n);
        super::formats::add_format_and_moment(
            &mut self.long_formats,
            &mut self.long_range,
            value,
            n,
        );
        self.values.add(&long_string_key(value), n);
    }

    /// Bytes the exact counts hold and will need to be finished (see [`super::budget`]).
    pub(super) fn exact_bytes(&self) -> usize {
        self.values.heap_bytes()
    }

    /// Replaces the exact counts with sketches fed with them.
    pub(super) fn switch_to_sketch(&mut self) {
        if self.sketch.is_some() {
            return;
        }
        let mut sketch = Box::<StringSketch>::default();
        // Long strings' lengths were counted apart, under their shortened keys.
        let mut add = |key: &str, n| {
            let chars = (key.len() <= MAX_KEY_LEN).then(|| key.chars().count() as u64);
            sketch.add_key(key, chars, super::formats::detect_key(key), key, n);
        };
        // A table's tally comes in the order of the process's randomly seeded hash, and the
        // frequent-value sketch keeps what it is fed last best: fed in one order, rarest first,
        // the most frequent values lose least and every run gives the same estimates.
        let mut tally = self.values.tally();
        tally.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        for (key, n) in tally {
            add(key, n);
        }
        super::spilled::each_string(&std::mem::take(&mut self.spilled), add);
        sketch.lengths.merge(self.long);
        super::formats::add_counts(&mut sketch.formats, std::mem::take(&mut self.long_formats));
        sketch.extremes.merge(&std::mem::take(&mut self.long_range));
        self.values = StringCounts::default();
        self.long = Lengths::default();
        self.sketch = Some(sketch);
    }

    fn merge(&mut self, mut other: StringStats) {
        self.count += other.count;
        if self.sketch.is_some() || other.sketch.is_some() {
            self.switch_to_sketch();
            other.switch_to_sketch();
            if let (Some(mine), Some(theirs)) = (&mut self.sketch, &other.sketch) {
                mine.merge(theirs);
            }
            return;
        }
        self.long.merge(other.long);
        super::formats::add_counts(&mut self.long_formats, other.long_formats);
        self.long_range.merge(&other.long_range);
        self.unordered |= other.unordered;
        self.values.merge(other.values);
        self.spilled.extend(other.spilled);
    }

    /// Writes each builder's counts as an ascending chunk, where every builder's strings arrived
    /// in ascending order (finishing then merges the chunks by text, with no hashing: see
    /// `spilled_ascending.rs`); `None` where one did not, which is remembered: a property found
    /// out of order is not tried again, so a mostly ordered one wastes at most one chunk's
    /// writing (the pieces written before the first string out of order are left unread).
    fn spill_ascending(
        &mut self,
        scratch: &Arc<Scratch>,
    ) -> Option<Result<Vec<Chunk>, SpillError>> {
        let parts: Vec<&StringCounts> = self.values.logged_parts().collect();
        if self.unordered || parts.is_empty() {
            return None;
        }
        let out_of_order = std::cell::Cell::new(false);
        let mut chunks = Vec::new();
        for part in parts {
            let mut writer = ChunkWriter::new(scratch);
            let chunk = writer
                .ascending_strings(
                    part.ascending_folded(&out_of_order).map(|(_, text, n)| (text, n)),
                )
                .and_then(|()| writer.finish());
            if out_of_order.get() {
                self.unordered = true;
                return None;
            }
            match chunk {
                Ok(chunk) if chunk.entries == 0 => {}
                Ok(chunk) => chunks.push(chunk),
                Err(error) => return Some(Err(error)),
            }
        }
        Some(Ok(chunks))
    }

    /// Writes the exact counts to a chunk of `scratch` and empties them; when that fails, the
    /// property switches to sketches (holding every count) and the error says why.
    pub(super) fn spill(&mut self, scratch: &Arc<Scratch>) -> Result<(), SpillError> {
        let written = match self.spill_ascending(scratch) {
            Some(written) => written,
            None => {
                let mut writer = ChunkWriter::new(scratch);
                let written = if self.values.repeats_little() {
                    // Folding the repeats first would cost more than writing the few there are.
                    writer.hashed_strings_by_bucket(|| self.values.entries())
                } else {
                    let tally = self.values.tally_unordered();
                    writer.hashed_strings_by_bucket(|| tally.iter().copied())
                };
                written.and_then(|()| writer.finish()).map(|c| vec![c])
            }
        };
        match written {
            Ok(chunks) => {
                self.spilled.extend(chunks);
                self.values = self.values.emptied();
                Ok(())
            }
            Err(error) => {
                self.switch_to_sketch();
                Err(error)
            }
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct NumberStats {
    pub integers: u64,
    pub floats: u64,
    /// Every value, so medians, histograms and distinct counts are exact. Pushing is the
    /// cheapest thing to do per value; finishing counts or sorts them (see [`ValueRuns`]).
    ///
    /// [`ValueRuns`]: super::numeric::ValueRuns
    pub values: Vec<f64>,
    /// The values of merged builders, kept apart: finishing reads all parts, so merging copies
    /// nothing.
    pub parts: Vec<Vec<f64>>,
    /// Integers past 2^53, exactly, each with how often it was seen: a double cannot tell
    /// neighbouring ones apart. `values` holds every other number (exact as a double); these
    /// are rare, so keeping them apart costs the common case nothing. Folded by value as they
    /// grow (see [`NumberStats::compact`]).
    pub wide: Vec<(i128, u64)>,
    /// How many entries `wide` had when it was last folded.
    wide_folded: usize,
    /// Values folded into distinct values with counts by [`NumberStats::compact`] (a streamed
    /// profile of a property with few distinct numbers then costs their number, not the items').
    pub counted: Vec<(f64, u64)>,
    /// True once compacting found too many distinct values to be worth it.
    many: bool,
    /// How many values were pushed when they were last checked for repeats (see
    /// [`NumberStats::compact`]).
    checked: usize,
    /// Once a spill found the values repeat: the values since, counted as they come (moved to
    /// `counted` wherever that is read).
    repeats: Option<RepeatCounts>,
    /// Once the exact values outgrew the memory budget: the sketches that replaced them.
    pub sketch: Option<Box<NumberSketch>>,
    /// Values written to scratch files when the budget was reached, each chunk in ascending
    /// order (see [`super::spill`]); the fields above hold what came after.
    pub spilled: Vec<Chunk>,
}

/// A property's numbers as finishing takes them: the doubles in parts, the integers past 2^53,
/// and the values already counted.
pub(super) type NumberParts = (Vec<Vec<f64>>, Vec<(i128, u64)>, Vec<(f64, u64)>);

/// Values pushed before [`NumberStats::compact`] tries to fold them.
const COMPACT_FROM: usize = 4_096;

impl NumberStats {
    /// True when no number was seen.
    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
            && self.parts.iter().all(Vec::is_empty)
            && self.wide.is_empty()
            && self.counted.is_empty()
            && self.repeats.as_ref().is_none_or(|r| r.len() == 0)
            && self.spilled.is_empty()
            && self.sketch.as_ref().is_none_or(|s| s.count == 0)
    }

    /// The values held in memory as runs (emptying them).
    pub(super) fn take_runs(&mut self) -> ValueRuns {
        self.settle_repeats();
        let mut parts = std::mem::take(&mut self.parts);
        parts.insert(0, std::mem::take(&mut self.values));
        let counted = std::mem::take(&mut self.counted);
        ValueRuns::from_parts_counted(parts, counted).with_wide(std::mem::take(&mut self.wide))
    }

    /// Writes the values held to a chunk of `scratch` and empties them; when that fails, the
    /// property switches to sketches (holding every value) and the error says why.
    pub(super) fn spill(&mut self, scratch: &Arc<Scratch>) -> Result<(), SpillError> {
        self.settle_repeats();
        if self.parts.is_empty() && self.counted.is_empty() && self.wide.is_empty() {
            return self.spill_in_place(scratch);
        }
        let runs = self.take_runs();
        let mut writer = ChunkWriter::new(scratch);
        let written = runs
            .iter()
            .try_for_each(|(key, n)| writer.number(key, n))
            .and_then(|()| writer.finish());
        match written {
            Ok(chunk) => {
                self.spilled.push(chunk);
                Ok(())
            }
            Err(error) => {
                self.switch_to_sketch();
                if let Some(sketch) = &mut self.sketch {
                    for (key, n) in runs.iter() {
                        sketch.add(key, n);
                    }
                }
                Err(error)
            }
        }
    }

    /// [`Self::spill`] of the pushed values alone (while a builder reads, before any merge):
    /// sorted where they lie and written as runs, their memory kept for the values that follow.
    /// Pushing into a fresh vector after each spill faulted in and zeroed its pages again — a
    /// tenth of the profile of a column of ten million ids.
    fn spill_in_place(&mut self, scratch: &Arc<Scratch>) -> Result<(), SpillError> {
        let mut writer = ChunkWriter::new(scratch);
        let mut write = |(value, n)| writer.number(NumberKey::float(value), n);
        let written = match repeats::counted_if_repeating(std::slice::from_ref(&self.values)) {
            Some(distinct) => distinct.into_iter().try_for_each(&mut write),
            None => {
                super::numeric::sort_values(&mut self.values);
                super::numeric::sorted_runs(&self.values).try_for_each(&mut write)
            }
        }
        .and_then(|()| writer.finish());
        match written {
            Ok(chunk) => {
                if repeats::worth_counting(self.values.len(), chunk.entries as usize) {
                    self.repeats = Some(RepeatCounts::with_capacity(chunk.entries as usize));
                    // Only a block's values are pushed from now on.
                    self.values = Vec::new();
                } else {
                    self.values.clear();
                }
                self.spilled.push(chunk);
                Ok(())
            }
            Err(error) => {
                self.switch_to_sketch();
                Err(error)
            }
        }
    }

    /// Every value: the doubles in parts, the integers past 2^53, and the counted values.
    pub(super) fn into_parts(mut self) -> NumberParts {
        self.settle_repeats();
        self.parts.insert(0, self.values);
        (self.parts, self.wide, self.counted)
    }

    /// Bytes the exact values hold and will need to be finished: each kept value once more as
    /// a run when sorted (see [`super::budget`]). By length, not capacity: a large vector's spare
    /// capacity is address space never written.
    pub(super) fn exact_bytes(&self) -> usize {
        let values = self.values.len() + self.parts.iter().map(Vec::len).sum::<usize>();
        let counted = self.counted.len() + self.repeats.as_ref().map_or(0, RepeatCounts::len);
        values * 8 * 3 + self.wide.len() * 32 * 2 + counted * 16 * 3
    }

    /// Moves the values counted as they came onto `counted`, where every reader of the counts
    /// looks; counting goes on.
    fn settle_repeats(&mut self) {
        if let Some(repeats) = &mut self.repeats {
            repeats.drain_into(&mut self.counted);
        }
    }

    /// Folds the pushed values into distinct values with counts while there are few distinct
    /// ones; once there are many, stops trying.
    pub(super) fn compact(&mut self) {
        self.fold_wide();
        if let Some(repeats) = &mut self.repeats {
            if !repeats.add_all(&self.values) {
                // Too many distinct values after all: back to pushing them.
                self.settle_repeats();
                self.repeats = None;
            }
            self.values.clear();
            return;
        }
        if self.sketch.is_some() || self.values.len() < COMPACT_FROM {
            return;
        }
        if self.many {
            // Many distinct values can still repeat (fifty thousand prices over millions of
            // rows): checked at each doubling, as a spill checks, they are counted from then on,
            // and the property holds its distinct values instead of growing with the rows.
            if self.values.len() >= repeats::ESTIMATE_FROM.max(2 * self.checked) {
                self.checked = self.values.len();
                self.count_if_repeating(repeats::LEAST_REPEATS);
            }
            return;
        }
        let pushed = self.values.iter().map(|&v| (v, 1));
        match super::numeric::count_few(self.counted.iter().copied().chain(pushed)) {
            Some(counted) => {
                self.counted = counted;
                // Kept for the values that follow (a fresh vector's pages are faulted in again).
                self.values.clear();
            }
            None => self.many = true,
        }
    }

    /// Counts the pushed values from now on, if an estimate says they repeat `repeats` times
    /// on average; returns whether it did. The memory budget asks before it sketches them: the
    /// counts grow with the distinct values, not with every item.
    pub(super) fn count_if_repeating(&mut self, repeats: usize) -> bool {
        if self.repeats.is_some() || self.sketch.is_some() {
            return false;
        }
        let Some(mut table) = repeats::table_if_repeating(&self.values, repeats) else {
            return false;
        };
        // The values folded before join the table, so each distinct value is held once.
        for (value, n) in self.counted.drain(..) {
            table.add(value, n);
        }
        self.repeats = Some(table);
        // Only a block's values are pushed from now on.
        self.values = Vec::new();
        true
    }

    /// Folds the integers past 2^53 into one entry per value, once they have doubled since the
    /// last fold: a few such values repeated over a file then cost their number, not the items'.
    fn fold_wide(&mut self) {
        if self.wide.len() < COMPACT_FROM.max(2 * self.wide_folded) {
            return;
        }
        self.wide.sort_unstable_by_key(|&(w, _)| w);
        let mut folded: Vec<(i128, u64)> = Vec::new();
        for &(w, n) in &self.wide {
            match folded.last_mut() {
                Some((last, count)) if *last == w => *count += n,
                _ => folded.push((w, n)),
            }
        }
        self.wide = folded;
        self.wide_folded = self.wide.len();
    }

    /// Replaces the exact values with sketches fed with them.
    pub(super) fn switch_to_sketch(&mut self) {
        if self.sketch.is_some() {
            return;
        }
        self.settle_repeats();
        self.repeats = None;
        let mut sketch = Box::<NumberSketch>::default();
        for &v in self.values.iter().chain(self.parts.iter().flatten()) {
            sketch.add(NumberKey::float(v), 1);
        }
        for &(v, n) in &self.counted {
            sketch.add(NumberKey::float(v), n);
        }
        for &(w, n) in &self.wide {
            sketch.add(NumberKey::integer(w), n);
        }
        super::spilled::each_number(&std::mem::take(&mut self.spilled), |key, n| {
            sketch.add(key, n)
        });
        self.values = Vec::new();
        self.parts = Vec::new();
        self.counted = Vec::new();
        self.wide = Vec::new();
        self.sketch = Some(sketch);
    }

    fn merge(&mut self, mut other: NumberStats) {
        // Merged builders are finished, not fed: what was counted joins the counts.
        self.settle_repeats();
        self.repeats = None;
        other.settle_repeats();
        self.integers += other.integers;
        self.floats += other.floats;
        if self.sketch.is_some() || other.sketch.is_some() {
            self.switch_to_sketch();
            other.switch_to_sketch();
            if let (Some(mine), Some(theirs)) = (&mut self.sketch, other.sketch) {
                mine.merge(*theirs);
            }
            return;
        }
        self.parts.push(other.values);
        self.parts.extend(other.parts);
        self.wide.extend(other.wide);
        self.counted.extend(other.counted);
        self.spilled.extend(other.spilled);
        self.many |= other.many;
    }
}

#[derive(Debug, Default)]
pub(crate) struct ArrayStats {
    pub lengths: Lengths,
    pub empty: u64,
}

/// Counters for the values seen at one path.
#[derive(Debug, Default)]
pub(crate) struct ValueStats {
    pub present: u64,
    pub nulls: u64,
    pub trues: u64,
    pub falses: u64,
    pub strings: StringStats,
    pub numbers: NumberStats,
    pub arrays: ArrayStats,
    pub objects: u64,
    /// Object/array values past the depth limit: counted, not descended into.
    pub depth_limited: u64,
}

impl ValueStats {
    pub(super) fn add_str(&mut self, value: &str) {
        self.present += 1;
        let s = &mut self.strings;
        s.count += 1;
        if let Some(sketch) = &mut s.sketch {
            sketch.add(value);
        } else if value.len() <= MAX_KEY_LEN {
            s.values.add(value, 1);
        } else {
            s.add_long(value, 1);
        }
    }

    /// `value`, `n` times: counted once with its count, as a merge adds it.
    pub(super) fn add_str_n(&mut self, value: &str, n: u64) {
        if n == 0 {
            return;
        }
        self.present += n;
        let s = &mut self.strings;
        s.count += n;
        if let Some(sketch) = &mut s.sketch {
            sketch.add_n(value, n);
        } else if value.len() <= MAX_KEY_LEN {
            s.values.add(value, n);
        } else {
            s.add_long(value, n);
        }
    }

    /// The integer `value`, `n` times: one counted entry, not `n` pushed values.
    pub(super) fn add_integer_n(&mut self, value: i128, n: u64) {
        if n == 0 {
            return;
        }
        self.present += n;
        self.numbers.integers += n;
        let key = if value.abs() <= F64_EXACT_INTEGER {
            NumberKey::float(value as i64 as f64)
        } else {
            NumberKey::integer(value)
        };
        match &mut self.numbers.sketch {
            Some(sketch) => sketch.add(key, n),
            None if value.abs() <= F64_EXACT_INTEGER => {
                self.numbers.counted.push((value as i64 as f64, n))
            }
            None => self.numbers.wide.push((value, n)),
        }
    }

    pub(super) fn add_number(&mut self, value: f64, integer: bool) {
        self.present += 1;
        if integer {
            self.numbers.integers += 1;
        } else {
            self.numbers.floats += 1;
        }
        match &mut self.numbers.sketch {
            Some(sketch) => sketch.add(NumberKey::float(value), 1),
            None => self.numbers.values.push(value),
        }
    }

    /// Many numbers with a fraction or exponent at once.
    pub(super) fn add_floats(&mut self, values: &[f64]) {
        let n = values.len() as u64;
        self.present += n;
        self.numbers.floats += n;
        match &mut self.numbers.sketch {
            Some(sketch) => values.iter().for_each(|v| sketch.add(NumberKey::float(*v), 1)),
            None => self.numbers.values.extend_from_slice(values),
        }
    }

    pub(super) fn add_integer(&mut self, value: i128) {
        if value.abs() <= F64_EXACT_INTEGER {
            // Through i64: converting an i128 to a double is a library call.
            self.add_number(value as i64 as f64, true);
        } else {
            self.present += 1;
            self.numbers.integers += 1;
            match &mut self.numbers.sketch {
                Some(sketch) => sketch.add(NumberKey::integer(value), 1),
                None => self.numbers.wide.push((value, 1)),
            }
        }
    }

    pub(super) fn add_bool(&mut self, value: bool) {
        self.present += 1;
        if value {
            self.trues += 1;
        } else {
            self.falses += 1;
        }
    }

    fn add_null(&mut self) {
        self.present += 1;
        self.nulls += 1;
    }

    pub(super) fn add_array(&mut self, len: u64) {
        self.present += 1;
        self.arrays.lengths.add(len, 1);
        if len == 0 {
            self.arrays.empty += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: ValueStats) {
        self.present += other.present;
        self.nulls += other.nulls;
        self.trues += other.trues;
        self.falses += other.falses;
        self.objects += other.objects;
        self.depth_limited += other.depth_limited;
        self.strings.merge(other.strings);
        self.numbers.merge(other.numbers);
        self.arrays.lengths.merge(other.arrays.lengths);
        self.arrays.empty += other.arrays.empty;
    }
}

/// What a path's counters do with each value the walk meets: the full profile's exact counters
/// ([`ValueStats`]) or a schema's few facts (`super::schema_counters`). The walks over a tape
/// and over serde values are generic over it, so both kinds of builder read items the same way.
pub(crate) trait Counters: Default {
    /// An object (its members are walked into the children).
    fn add_object(&mut self);
    /// An object or array past the depth limit, counted but not descended into.
    fn add_depth_limited(&mut self);
    /// A string.
    fn add_str(&mut self, value: &str);
    /// A number read as a double (`integer`: written without a fraction or exponent).
    fn add_number(&mut self, value: f64, integer: bool);
    /// An integer, exactly.
    fn add_integer(&mut self, value: i128);
    /// A boolean.
    fn add_bool(&mut self, value: bool);
    /// A null.
    fn add_null(&mut self);
    /// An array of `len` elements (its elements are walked into the items).
    fn add_array(&mut self, len: u64);
    /// Values counted here, nulls included.
    fn present(&self) -> u64;
    /// Adds the counts of `other`.
    fn merge(&mut self, other: Self);
}

impl Counters for ValueStats {
    #[inline]
    fn add_object(&mut self) {
        self.present += 1;
        self.objects += 1;
    }
    #[inline]
    fn add_depth_limited(&mut self) {
        self.depth_limited += 1;
    }
    #[inline]
    fn add_str(&mut self, value: &str) {
        ValueStats::add_str(self, value);
    }
    #[inline]
    fn add_number(&mut self, value: f64, integer: bool) {
        ValueStats::add_number(self, value, integer);
    }
    #[inline]
    fn add_integer(&mut self, value: i128) {
        ValueStats::add_integer(self, value);
    }
    #[inline]
    fn add_bool(&mut self, value: bool) {
        ValueStats::add_bool(self, value);
    }
    #[inline]
    fn add_null(&mut self) {
        ValueStats::add_null(self);
    }
    #[inline]
    fn add_array(&mut self, len: u64) {
        ValueStats::add_array(self, len);
    }
    #[inline]
    fn present(&self) -> u64 {
        self.present
    }
    #[inline]
    fn merge(&mut self, other: Self) {
        ValueStats::merge(self, other);
    }
}

/// The key under which `value` is counted among a property's values: the value itself, or for
/// one longer than 256 bytes, the shortened key of `long_string_key`. Sources that count values
/// elsewhere (a database) report them under the same keys.
pub fn value_key(value: &str) -> std::borrow::Cow<'_, str> {
    if value.len() <= MAX_KEY_LEN {
        std::borrow::Cow::Borrowed(value)
    } else {
        std::borrow::Cow::Owned(long_string_key(value).into())
    }
}

/// The key under which an over-long string is counted: a prefix, an ellipsis, and a hash of the
/// whole string (so two long strings sharing a prefix still count as distinct).
pub(crate) fn long_string_key(value: &str) -> Box<str> {
    let mut cut = MAX_KEY_LEN.min(value.len());
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut hasher = foldhash::fast::FixedState::with_seed(0x5c4e_3a5c).build_hasher();
    hasher.write(value.as_bytes());
    format!("{}…[{} chars, #{:016x}]", &value[..cut], value.chars().count(), hasher.finish()).into()
}

/// The start of the string and its true length in characters, when `key` is the key of an
/// over-long string (see `long_string_key`); `None` for a value counted as itself. Real values
/// are counted as themselves only up to `MAX_KEY_LEN` bytes and every long key is longer, so a
/// value that merely looks like a long key is never taken for one.
pub fn long_key_parts(key: &str) -> Option<(&str, u64)> {
    if key.len() <= MAX_KEY_LEN {
        return None;
    }
    let at = key.rfind("…[")?;
    let inner = key[at + "…[".len()..].strip_suffix(']')?;
    let (chars, hash) = inner.split_once(" chars, #")?;
    (hash.len() == 16).then_some(())?;
    Some((&key[..at], chars.parse().ok()?))
}

/// The counters of one path plus its children: object members by key, array elements as `items`.
/// `S` is what each path counts ([`Counters`]): the full profile's counters unless named.
#[derive(Debug, Default)]
pub(crate) struct PathNode<S = ValueStats> {
    pub stats: S,
    pub keys: Vec<(Box<str>, PathNode<S>)>,
    key_index: Option<Map<Box<str>, usize>>,
    pub items: Option<Box<PathNode<S>>>,
    /// Counters of merged builders, not yet folded into `stats` (see [`PathNode::merge`]).
    pub deferred: Vec<S>,
    /// Members not profiled because the path limit was reached.
    pub dropped_keys: u64,
    /// The distinct keys behind `dropped_keys` (see [`super::path_limit`]).
    pub refused: Option<Box<Refused>>,
    /// Where the key was first seen ([`ProfileBuilder::set_position`]): builders that profiled
    /// blocks of a file out of order are merged into the file's first-seen order by it.
    /// The position, then how many keys the builder had met before it: within one position
    /// that is the order a front-to-back pass meets them, at any depth (a key's place among
    /// its siblings is not: `[{"b": 1}, {"a": 1}]` has both first).
    pub first_seen: (u64, usize),
    /// The last check of an object's members that met this key ([`shadow_repeated`]): meeting
    /// it again in the same check means the key is repeated there.
    stamp: u64,
}

/// Past this many members, key lookup switches from a scan to a hash map.
const SCAN_LIMIT: usize = 16;

impl<S: Counters> PathNode<S> {
    /// Finds or creates the child for `key`. `ordinal` is the key's position in the current
    /// object: records of one collection usually list keys in the same order, so that slot is
    /// checked first.
    #[inline]
    pub(super) fn child_index(
        &mut self,
        key: &str,
        ordinal: usize,
        ctx: &mut Ctx,
    ) -> Option<usize> {
        if let Some((k, _)) = self.keys.get(ordinal)
            && same_text(k, key)
        {
            return Some(ordinal);
        }
        self.child_index_searched(key, ctx)
    }

    /// [`Self::child_index`] when the key is not in its usual slot.
    #[inline(never)]
    fn child_index_searched(&mut self, key: &str, ctx: &mut Ctx) -> Option<usize> {
        let found = match &self.key_index {
            Some(index) => index.get(key).copied(),
            None => self.keys.iter().position(|(k, _)| same_text(k, key)),
        };
        if found.is_some() {
            return found;
        }
        if ctx.paths >= ctx.limits.max_paths {
            self.refuse(key, ctx);
            return None;
        }
        ctx.paths += 1;
        let position = self.keys.len();
        let first_seen = (ctx.position, ctx.created);
        ctx.created += 1;
        self.keys.push((key.into(), PathNode { first_seen, ..PathNode::default() }));
        if let Some(index) = &mut self.key_index {
            index.insert(key.into(), position);
        } else if self.keys.len() > SCAN_LIMIT {
            self.key_index =
                Some(self.keys.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect());
        }
        Some(position)
    }

    /// Lists the members, and theirs below, in the order they were first seen (their depth is
    /// bounded by the profile's depth limit).
    pub(super) fn order_by_first_seen(&mut self) {
        self.keys.sort_by_key(|(_, child)| child.first_seen);
        if let Some(index) = &mut self.key_index {
            for (i, (key, _)) in self.keys.iter().enumerate() {
                index.insert(key.clone(), i);
            }
        }
        for (_, child) in &mut self.keys {
            child.order_by_first_seen();
        }
        if let Some(items) = &mut self.items {
            items.order_by_first_seen();
        }
    }

    /// Remembers that `key` was refused here (up to [`MAX_REMEMBERED`] keys per collection).
    fn refuse(&mut self, key: &str, ctx: &mut Ctx) {
        ctx.refused_any = true;
        if ctx.remembered >= MAX_REMEMBERED {
            ctx.forgot = true;
            return;
        }
        if self.refused.get_or_insert_with(Box::default).insert(path_limit::key_hash(key)) {
            ctx.remembered += 1;
        }
    }

    /// Merges the structure now and the counters later: `other`'s counters are queued in
    /// `deferred` and folded in by `finish`, on all cores, path by path. Merging a million
    /// distinct strings is the costly part of a merge, and it parallelises by path.
    pub(super) fn merge(&mut self, mut other: PathNode<S>, ctx: &mut Ctx) {
        self.deferred.push(other.stats);
        self.deferred.append(&mut other.deferred);
        self.dropped_keys += other.dropped_keys;
        // Keys `other` refused: under a key refused below, they vanish with it (counted once).
        ctx.forgot |=
            path_limit::merge_refused(&mut self.refused, other.refused.take(), &mut ctx.remembered);
        for (ordinal, (key, child)) in other.keys.into_iter().enumerate() {
            let known = self.keys.len();
            match self.child_index(&key, ordinal, ctx) {
                Some(i) => {
                    // A key made just now was first seen where `other` saw it, not at this
                    // builder's current position.
                    let first = if i >= known {
                        child.first_seen
                    } else {
                        self.keys[i].1.first_seen.min(child.first_seen)
                    };
                    self.keys[i].1.merge(child, ctx);
                    self.keys[i].1.first_seen = first;
                }
                None => self.dropped_keys += child.stats.present(),
            }
        }
        if let Some(items) = other.items {
            match &mut self.items {
                Some(mine) => mine.merge(*items, ctx),
                None => {
                    // Merged member by member, so its paths count against this builder's
                    // limit (moved whole, a slice's array elements brought paths past it).
                    ctx.paths += 1;
                    let mut mine =
                        Box::new(PathNode { first_seen: items.first_seen, ..PathNode::default() });
                    mine.merge(*items, ctx);
                    self.items = Some(mine);
                }
            }
        }
    }
}

#[derive(Debug)]
pub(super) struct Ctx {
    limits: ProfileLimits,
    paths: usize,
    /// Set while visiting the value of the top-level `id` member, when ids are wanted.
    capture_id: bool,
    captured_id: Option<ItemId>,
    /// True once any key was refused for the path limit.
    refused_any: bool,
    /// Refused keys remembered in all nodes (see [`PathNode::refuse`]).
    remembered: usize,
    /// Where the items being added lie ([`ProfileBuilder::set_position`]).
    position: u64,
    /// True once a position was set: keys are then listed by where they were first seen.
    positioned: bool,
    /// How many keys this builder has made (the second part of each key's `first_seen`).
    created: usize,
    /// True when a refused key could not be remembered.
    forgot: bool,
    /// The last stamp given to a check for repeated keys ([`PathNode::stamp`]).
    object_stamp: u64,
    /// The members of the objects being walked, innermost last ([`TapeWalk::value`]).
    members: Vec<Member>,
    /// The objects of the item going through serde_json, and its repeated keys.
    objects: ObjectOrder,
}

impl Ctx {
    /// The state of a builder that has read nothing.
    pub(super) fn new(limits: ProfileLimits) -> Self {
        Self {
            limits,
            paths: 0,
            capture_id: false,
            captured_id: None,
            refused_any: false,
            remembered: 0,
            forgot: false,
            position: 0,
            positioned: false,
            created: 0,
            object_stamp: 0,
            members: Vec::new(),
            objects: ObjectOrder::default(),
        }
    }

    /// A stamp no node carries yet.
    fn next_object_stamp(&mut self) -> u64 {
        self.object_stamp += 1;
        self.object_stamp
    }

    /// Says where the next items lie (see [`ProfileBuilder::set_position`]).
    pub(super) fn set_position(&mut self, position: u64) {
        self.position = position;
        self.positioned = true;
    }

    /// How deep values are profiled.
    pub(super) fn max_depth(&self) -> usize {
        self.limits.max_depth
    }

    /// The elements node of `node`'s arrays, made (and counted as a path) on first use.
    pub(super) fn items_of<'n, S: Counters>(
        &mut self,
        node: &'n mut PathNode<S>,
    ) -> &'n mut PathNode<S> {
        node.items.get_or_insert_with(|| {
            self.paths += 1;
            Box::default()
        })
    }

    /// Takes in what another builder's reading left: refused keys, positions.
    pub(super) fn absorb(&mut self, other: &Ctx) {
        self.refused_any |= other.refused_any;
        self.positioned |= other.positioned;
        self.forgot |= other.forgot;
        // Nodes merged in keep `other`'s stamps: later visits must get larger ones.
        self.object_stamp = self.object_stamp.max(other.object_stamp);
    }

    /// The path limit as finishing reports it, whether any key was refused, and whether keys
    /// are to be listed by where they were first seen.
    pub(super) fn outcome(&self) -> (super::path_limit::PathLimit, bool, bool) {
        // Hit only when a key was refused: reaching the limit exactly leaves nothing out.
        let limit = super::path_limit::PathLimit::new(self.limits.max_paths, self.forgot);
        (limit, self.refused_any, self.positioned)
    }
}

/// Walks the item whose tape [`tape::scan`] just wrote from `json` into `root`.
fn walk_tape<S: Counters>(
    root: &mut PathNode<S>,
    ctx: &mut Ctx,
    tape: &[Token],
    unescaped: &str,
    want_id: bool,
    json: &str,
) -> Option<ItemId> {
    ctx.captured_id = None;
    let mut walk = TapeWalk { tape, text: json, unescaped, ctx, want_id, omit: &[] };
    walk.value(0, root, 0, false);
    walk.ctx.captured_id.take()
}

/// Reads one item given as JSON text into `root`, leaving the counters untouched when it is not
/// valid JSON (see [`ProfileBuilder::add_json_whole`]); `tape` and `unescaped` are scratch space.
pub(super) fn add_json_whole<S: Counters>(
    root: &mut PathNode<S>,
    ctx: &mut Ctx,
    tape: &mut Vec<Token>,
    unescaped: &mut String,
    want_id: bool,
    json: &str,
) -> Result<Option<ItemId>, serde_json::Error> {
    if tape::scan(json, tape, unescaped) {
        return Ok(walk_tape(root, ctx, tape, unescaped, want_id, json));
    }
    if let Err(checked) = check(ctx, json) {
        // The error as a whole load reports it (the profiling visitor's, not the checker's),
        // from a scratch builder; bad lines are rare.
        let error = ProfileBuilder::new().add_json_by_serde(json).err();
        return Err(error.unwrap_or(checked));
    }
    profile_checked(root, ctx, want_id, json)
}

/// Checks that `json` is one value that profiling accepts, and finds its repeated keys.
fn check(ctx: &mut Ctx, json: &str) -> Result<(), serde_json::Error> {
    ctx.objects.start_check();
    let skip = Skip { depth: 0, max_depth: ctx.limits.max_depth, order: &mut ctx.objects };
    let mut de = serde_json::Deserializer::from_str(json);
    skip.deserialize(&mut de).and_then(|()| de.end())
}

/// Reads one item given as JSON text into `root` through serde_json alone.
fn add_json_by_serde<S: Counters>(
    root: &mut PathNode<S>,
    ctx: &mut Ctx,
    want_id: bool,
    json: &str,
) -> Result<Option<ItemId>, serde_json::Error> {
    // Invalid text fails profiling too, with the error profiling reports.
    let _ = check(ctx, json);
    profile_checked(root, ctx, want_id, json)
}

/// Reads one item given as JSON text into `root` through serde_json, once [`check`] ran on it.
fn profile_checked<S: Counters>(
    root: &mut PathNode<S>,
    ctx: &mut Ctx,
    want_id: bool,
    json: &str,
) -> Result<Option<ItemId>, serde_json::Error> {
    ctx.objects.start_profile();
    ctx.captured_id = None;
    // An earlier item that failed inside its `id` member left the flag set.
    ctx.capture_id = false;
    let mut de = serde_json::Deserializer::from_str(json);
    NodeSeed { node: root, ctx, depth: 0, want_id }.deserialize(&mut de)?;
    de.end()?;
    Ok(ctx.captured_id.take())
}

/// Reads one item given as a parsed value into `root`.
pub(super) fn add_value<S: Counters>(root: &mut PathNode<S>, ctx: &mut Ctx, value: &Value) {
    ctx.objects.start_unchecked();
    // A Value always deserializes: the visitor accepts every JSON shape.
    let _ = NodeSeed { node: root, ctx, depth: 0, want_id: false }.deserialize(value);
}

/// A builder's spill and its scratch file (made on first use), as the memory budget takes them.
pub(super) type SpillSlot<'a> = (&'a Spill, &'a mut Option<Arc<Scratch>>);

/// Pushes items into per-path counters; see the module docs.
#[derive(Debug)]
pub struct ProfileBuilder {
    pub(super) root: PathNode,
    pub(super) ctx: Ctx,
    want_id: bool,
    /// The token tape of the item being added, kept to reuse its memory.
    pub(super) tape: Vec<Token>,
    /// Its strings that had escapes, decoded (see [`Token::Unescaped`]).
    pub(super) unescaped: String,
    /// Where counters past the memory budget go, when they may ([`ProfileBuilder::spill_to`]).
    spill: Option<Spill>,
    /// This builder's scratch file, made at its first spill.
    scratch: Option<Arc<Scratch>>,
}

impl Default for ProfileBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ProfileBuilder {
    /// A builder with the default [`ProfileLimits`].
    pub fn new() -> Self {
        Self::with_limits(ProfileLimits::default())
    }

    /// A builder with explicit limits.
    pub fn with_limits(limits: ProfileLimits) -> Self {
        Self {
            root: PathNode::default(),
            ctx: Ctx::new(limits),
            want_id: false,
            spill: None,
            scratch: None,
            tape: Vec::new(),
            unescaped: String::new(),
        }
    }

    /// Makes [`ProfileBuilder::add_json`] return each item's top-level scalar `id` member.
    pub fn capture_ids(mut self) -> Self {
        self.want_id = true;
        self
    }

    /// Profiles one item given as JSON text. Returns the item's top-level `id` when
    /// [`ProfileBuilder::capture_ids`] was set and the item has a scalar one; an
    /// [`ItemId::InText`] is a span of `json` (shift it to where `json` lies in a larger text).
    ///
    /// On a parse error the counters may hold part of the bad item: callers that keep going
    /// must rebuild without it (loaders re-profile the affected slice; see `sources`).
    pub fn add_json(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        if tape::scan(json, &mut self.tape, &mut self.unescaped) {
            return Ok(self.walk_tape(json));
        }
        self.add_json_by_serde(json)
    }

    /// Profiles the item whose tape [`tape::scan`] just wrote from `json`.
    fn walk_tape(&mut self, json: &str) -> Option<ItemId> {
        walk_tape(&mut self.root, &mut self.ctx, &self.tape, &self.unescaped, self.want_id, json)
    }

    /// [`ProfileBuilder::add_json`], leaving the counters untouched when `json` is not valid
    /// JSON (what the tape scanner declines is checked whole before serde_json profiles it): a
    /// streamed profile cannot go back and profile a block again without its bad lines.
    pub fn add_json_whole(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        let Self { root, ctx, tape, unescaped, want_id, .. } = self;
        add_json_whole(root, ctx, tape, unescaped, *want_id, json)
    }

    /// [`ProfileBuilder::add_json`] through serde_json alone, as it goes for what the tape
    /// scanner declines: the reference the fast path is checked against (tests, fuzzing).
    #[doc(hidden)]
    pub fn add_json_by_serde(&mut self, json: &str) -> Result<Option<ItemId>, serde_json::Error> {
        add_json_by_serde(&mut self.root, &mut self.ctx, self.want_id, json)
    }

    /// Profiles one item given as a parsed value.
    pub fn add_value(&mut self, value: &Value) {
        add_value(&mut self.root, &mut self.ctx, value);
    }

    /// Says where the next items lie (any order-preserving number, such as a block and line):
    /// properties first seen there are listed by it when builders are merged, so a file
    /// profiled block by block in any order lists them as a front-to-back load does.
    pub fn set_position(&mut self, position: u64) {
        self.ctx.set_position(position);
    }

    /// The counters' root and the reading state, for adding columns (`super::columns`).
    pub(super) fn root_and_ctx(&mut self) -> (&mut PathNode, &mut Ctx) {
        (&mut self.root, &mut self.ctx)
    }

    /// The counters' root, for the memory budget (`super::budget`).
    pub(super) fn root_mut(&mut self) -> &mut PathNode {
        &mut self.root
    }

    /// Lets the memory budget spill exact counters to scratch files of `spill` instead of
    /// switching them to sketches (see [`super::spill`]).
    pub fn spill_to(mut self, spill: Spill) -> Self {
        self.spill = Some(spill);
        self
    }

    /// The counters' root and the builder's spill, for the memory budget: its scratch file,
    /// made on first use (`None` when the builder may not spill; `Err` when the file could not
    /// be made).
    pub(super) fn root_and_scratch(&mut self) -> (&mut PathNode, Option<SpillSlot<'_>>) {
        (&mut self.root, self.spill.as_ref().map(|spill| (spill, &mut self.scratch)))
    }

    /// Adds another builder's counts to this one.
    pub fn merge(&mut self, other: ProfileBuilder) {
        self.ctx.absorb(&other.ctx);
        if self.spill.is_none() {
            self.spill = other.spill;
        }
        self.root.merge(other.root, &mut self.ctx);
    }

    /// Computes the final statistics. `item_count` is the number of items pushed.
    pub fn finish(self, item_count: u64) -> CollectionProfile {
        let (limit, refused_any, positioned) = self.ctx.outcome();
        let mut root = self.root;
        if positioned {
            // Merged builders may have met the keys in another order than the file holds them.
            root.order_by_first_seen();
        }
        super::finalize::finish(root, item_count, refused_any, limit)
    }
}

/// Walks a scanned item's tape into the counters, exactly as [`NodeSeed`] visits the same item.
pub(super) struct TapeWalk<'a> {
    pub(super) tape: &'a [Token],
    pub(super) text: &'a str,
    /// The decoded strings [`Token::Unescaped`] points into.
    pub(super) unescaped: &'a str,
    pub(super) ctx: &'a mut Ctx,
    pub(super) want_id: bool,
    /// Top-level members left out, as if the item did not have them (`super::split`).
    pub(super) omit: &'a [&'a str],
}

/// An object member found by [`TapeWalk::value`] before its value is walked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    /// The index of its key among the node's children; [`SHADOWED`] when a later member of
    /// the same object has the same key.
    child: u32,
    /// Where its value starts on the tape.
    value_at: u32,
}

/// [`Member::child`] of a member whose key comes again later in its object.
const SHADOWED: u32 = u32::MAX;

/// Marks every member but the last of each repeated key as [`SHADOWED`]. `stamp` is fresh:
/// walking backwards, a child already carrying it has a later member.
#[inline(never)]
fn shadow_repeated<S: Counters>(members: &mut [Member], node: &mut PathNode<S>, stamp: u64) {
    for member in members.iter_mut().rev() {
        let Some((_, child)) = node.keys.get_mut(member.child as usize) else { continue };
        if child.stamp == stamp {
            member.child = SHADOWED;
        } else {
            child.stamp = stamp;
        }
    }
}

/// The text of a key or string token.
#[inline]
fn token_text(text: &str, start: u32, len: u32) -> &str {
    let start = start as usize;
    text.get(start..start + len as usize).unwrap_or_default()
}

impl TapeWalk<'_> {
    /// Adds the value at `at` to `node`; returns the index after it. `capture` marks the value of
    /// a top-level `id` member.
    pub(super) fn value<S: Counters>(
        &mut self,
        at: usize,
        node: &mut PathNode<S>,
        depth: usize,
        capture: bool,
    ) -> usize {
        let Some(&token) = self.tape.get(at) else { return at + 1 };
        let stats = &mut node.stats;
        match token {
            Token::Object { end } => {
                let end = end as usize;
                stats.add_object();
                if depth >= self.ctx.limits.max_depth {
                    stats.add_depth_limited();
                    return end;
                }
                // Members are found first and walked after, so that of a key repeated in the
                // object only the last value is counted, as JSON parsers read it.
                let base = self.ctx.members.len();
                // The children met so far, by index up to 63 (past it, every member is checked
                // after): a repeated key is found in registers, with no write to the children.
                let mut met = 0u64;
                let mut check = false;
                let mut i = at + 1;
                let mut ordinal = 0;
                while i < end {
                    let Some(&Token::Key { start, len }) = self.tape.get(i) else { break };
                    let key = token_text(self.text, start, len);
                    i += 1;
                    if depth == 0 && self.omit.contains(&key) {
                        i = tape::skip(self.tape, i);
                        continue;
                    }
                    let Some(index) = node.child_index(key, ordinal, self.ctx) else {
                        node.dropped_keys += 1;
                        i = tape::skip(self.tape, i);
                        continue;
                    };
                    match 1u64.checked_shl(index as u32) {
                        Some(bit) => {
                            check |= met & bit != 0;
                            met |= bit;
                        }
                        None => check = true,
                    }
                    self.ctx.members.push(Member { child: index as u32, value_at: i as u32 });
                    i = tape::skip(self.tape, i);
                    ordinal += 1;
                }
                if check {
                    let stamp = self.ctx.next_object_stamp();
                    shadow_repeated(&mut self.ctx.members[base..], node, stamp);
                }
                for m in base..self.ctx.members.len() {
                    let Member { child, value_at } = self.ctx.members[m];
                    let Some((key, child)) = node.keys.get_mut(child as usize) else { continue };
                    let capture = self.want_id && depth == 0 && &**key == "id";
                    self.value(value_at as usize, child, depth + 1, capture);
                }
                self.ctx.members.truncate(base);
                end
            }
            Token::Array { end, len } => {
                let end = end as usize;
                if depth < self.ctx.limits.max_depth {
                    let items = self.ctx.items_of(node);
                    let mut i = at + 1;
                    while i < end {
                        i = self.value(i, items, depth + 1, false);
                    }
                } else {
                    node.stats.add_depth_limited();
                }
                node.stats.add_array(u64::from(len));
                end
            }
            scalar => {
                // A scalar's text, when it is the top-level `id`, becomes the item's id.
                let id = match scalar {
                    Token::Str { start, len } => {
                        stats.add_str(token_text(self.text, start, len));
                        capture.then_some(ItemId::InText { start: start as usize, len })
                    }
                    Token::Unescaped { start, len } => {
                        let value = token_text(self.unescaped, start, len);
                        stats.add_str(value);
                        // Not a span of the text: the id is the decoded string.
                        capture.then(|| value.to_string().into())
                    }
                    Token::Unsigned(v) => {
                        stats.add_integer(i128::from(v));
                        capture.then(|| v.to_string().into())
                    }
                    Token::Signed(v) => {
                        stats.add_integer(i128::from(v));
                        capture.then(|| v.to_string().into())
                    }
                    Token::Float(v) => {
                        stats.add_number(v, false);
                        capture.then(|| v.to_string().into())
                    }
                    Token::Bool(v) => {
                        stats.add_bool(v);
                        capture.then(|| v.to_string().into())
                    }
                    Token::Null => {
                        stats.add_null();
                        None
                    }
                    // Containers are handled above; a key is only ever read by its object.
                    Token::Object { .. } | Token::Array { .. } | Token::Key { .. } => None,
                };
                if id.is_some() {
                    self.ctx.captured_id = id;
                }
                at + 1
            }
        }
    }
}

pub(super) struct NodeSeed<'a, S: Counters = ValueStats> {
    node: &'a mut PathNode<S>,
    ctx: &'a mut Ctx,
    depth: usize,
    want_id: bool,
}

impl<S: Counters> NodeSeed<'_, S> {
    fn capture(&mut self, value: impl FnOnce() -> String) {
        if self.ctx.capture_id && self.depth == 1 {
            self.ctx.captured_id = Some(value().into());
        }
    }
}

impl<'de, S: Counters> DeserializeSeed<'de> for NodeSeed<'_, S> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, S: Counters> Visitor<'de> for NodeSeed<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(mut self, v: bool) -> Result<(), E> {
        self.capture(|| v.to_string());
        self.node.stats.add_bool(v);
        Ok(())
    }

    fn visit_i64<E>(mut self, v: i64) -> Result<(), E> {
        self.capture(|| v.to_string());
        self.node.stats.add_integer(i128::from(v));
        Ok(())
    }

    fn visit_u64<E>(mut self, v: u64) -> Result<(), E> {
        self.capture(|| v.to_string());
        self.node.stats.add_integer(i128::from(v));
        Ok(())
    }

    fn visit_f64<E>(mut self, v: f64) -> Result<(), E> {
        self.capture(|| v.to_string());
        self.node.stats.add_number(v, false);
        Ok(())
    }

    fn visit_str<E>(mut self, v: &str) -> Result<(), E> {
        self.capture(|| v.to_string());
        self.node.stats.add_str(v);
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.node.stats.add_null();
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.node.stats.add_null();
        Ok(())
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut len = 0u64;
        if self.depth >= self.ctx.limits.max_depth {
            while seq.next_element::<IgnoredAny>()?.is_some() {
                len += 1;
            }
            self.node.stats.add_depth_limited();
        } else {
            let items = self.ctx.items_of(self.node);
            while seq
                .next_element_seed(NodeSeed {
                    node: items,
                    ctx: self.ctx,
                    depth: self.depth + 1,
                    want_id: false,
                })?
                .is_some()
            {
                len += 1;
            }
        }
        self.node.stats.add_array(len);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.node.stats.add_object();
        if self.depth >= self.ctx.limits.max_depth {
            self.node.stats.add_depth_limited();
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let object = self.ctx.objects.next_object();
        let mut ordinal = 0;
        let mut member = 0;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let at = member;
            member += 1;
            let found = self.node.child_index(&key, ordinal, self.ctx);
            if found.is_none() {
                self.node.dropped_keys += 1;
            }
            let Some(index) = found.filter(|_| !self.ctx.objects.is_shadowed(object, at)) else {
                let max_depth = self.ctx.limits.max_depth;
                let order = &mut self.ctx.objects;
                map.next_value_seed(Skip { depth: self.depth + 1, max_depth, order })?;
                continue;
            };
            self.ctx.capture_id = self.want_id && self.depth == 0 && key == "id";
            let child = &mut self.node.keys[index].1;
            map.next_value_seed(NodeSeed {
                node: child,
                ctx: self.ctx,
                depth: self.depth + 1,
                want_id: false,
            })?;
            self.ctx.capture_id = false;
            ordinal += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::spill::{MemoryScratch, Spill};

    /// Pushed values spilled where they lie read back as the runs they were, and the vector
    /// they were pushed into keeps its memory for the values that follow.
    #[test]
    fn numbers_spilled_in_place_read_back_as_their_runs_and_keep_their_memory() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut rng = fastrand::Rng::with_seed(4242);
        let mut stats = NumberStats::default();
        let mut all = Vec::new();
        for round in 0..3 {
            for i in 0..5_000 {
                // Mostly distinct values (repeating ones are counted instead: see below).
                let v = match (round, i % 50) {
                    (0, _) => rng.i64(-5_000_000..5_000_000) as f64 / 4.0,
                    (1, 0) => [0.0, -0.0, 1e300, -1e-300][rng.usize(..4)],
                    _ => rng.f64() * 1e6,
                };
                stats.values.push(v);
                all.push(v);
            }
            let capacity = stats.values.capacity();
            stats.spill(&scratch).expect("spilled");
            assert!(stats.values.is_empty());
            assert!(stats.repeats.is_none(), "round {round}: distinct values are not counted");
            assert_eq!(stats.values.capacity(), capacity, "round {round}: the memory is kept");
        }
        assert_holds_exactly(stats, all);
    }

    /// Every value `stats` holds, spilled or in memory, is `all`'s runs.
    fn assert_holds_exactly(mut stats: NumberStats, all: Vec<f64>) {
        let mut read = Vec::new();
        super::super::spilled::each_number(&std::mem::take(&mut stats.spilled), |key, n| {
            read.push((key, n))
        });
        let (parts, wide, counted) = stats.into_parts();
        assert!(wide.is_empty());
        read.extend(ValueRuns::from_parts_counted(parts, counted).iter());
        read.sort_by(|a, b| a.0.order(b.0));
        let mut merged: Vec<(NumberKey, u64)> = Vec::new();
        for (key, n) in read {
            match merged.last_mut() {
                Some(last) if last.0.order(key).is_eq() => last.1 += n,
                _ => merged.push((key, n)),
            }
        }
        let expected: Vec<(NumberKey, u64)> = ValueRuns::from_values(all).iter().collect();
        assert_eq!(merged.len(), expected.len());
        for ((a, n), (b, m)) in merged.iter().zip(&expected) {
            assert!(a.order(*b).is_eq() && n == m, "{a:?}x{n} against {b:?}x{m}");
        }
    }

    /// Without a spill to find it (under `--no-spill`, or before a first spill), values that
    /// repeat among more distinct ones than compacting folds are found at a doubling of those
    /// pushed and counted from then on; mostly distinct ones are left pushed.
    #[test]
    fn many_repeating_numbers_are_found_at_a_doubling_and_counted_exactly() {
        let mut rng = fastrand::Rng::with_seed(23);
        let (mut stats, mut all) = (NumberStats::default(), Vec::new());
        let mut held = Vec::new();
        for _ in 0..40 {
            for _ in 0..5_000 {
                let v = match rng.usize(..1_000) {
                    0 => -0.0,
                    _ => f64::from(rng.u32(..30_000)) / 8.0,
                };
                stats.values.push(v);
                all.push(v);
            }
            stats.compact();
            held.push(stats.values.len());
        }
        assert!(stats.repeats.is_some(), "found repeating: values held {held:?}");
        assert!(stats.values.is_empty() && stats.counted.is_empty());
        assert!(held.iter().all(|&n| n < 140_000), "{held:?}");
        assert_holds_exactly(stats, all);

        let mut distinct = NumberStats::default();
        for block in 0..40 {
            distinct.values.extend((0..5_000).map(|i| f64::from(block * 5_000 + i) + 0.5));
            distinct.compact();
        }
        assert!(distinct.repeats.is_none());
        assert_eq!(distinct.values.len() + distinct.counted.len(), 200_000);
    }

    #[test]
    fn numbers_found_repeating_by_a_spill_are_counted_as_they_come_and_stay_exact() {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let scratch = Scratch::create(&spill).expect("scratch");
        let mut rng = fastrand::Rng::with_seed(99);
        let mut stats = NumberStats::default();
        let mut all = Vec::new();
        let mut push = |stats: &mut NumberStats, v: f64| {
            stats.values.push(v);
            all.push(v);
        };
        // Prices: 2,000 distinct values, each repeated about ten times, with both zeros.
        let price = |rng: &mut fastrand::Rng| match rng.usize(..1_000) {
            0 => 0.0,
            1 => -0.0,
            _ => rng.i64(0..2_000) as f64 / 100.0,
        };
        for _ in 0..20_000 {
            push(&mut stats, price(&mut rng));
        }
        stats.spill(&scratch).expect("spilled");
        assert!(stats.repeats.is_some(), "the spill found the values repeat");
        assert_eq!(stats.values.capacity(), 0, "the pushed values' memory is given back");
        for block in 0..5 {
            for _ in 0..3_000 {
                push(&mut stats, price(&mut rng));
            }
            stats.compact();
            assert!(stats.values.is_empty(), "block {block}: counted as they came");
            if block == 2 {
                // A spill writes the counts and counting goes on.
                stats.spill(&scratch).expect("spilled");
                assert!(stats.counted.is_empty() && stats.repeats.is_some());
            }
        }
        assert!(stats.exact_bytes() > 0);
        // Past the bound on distinct values, values are pushed again, still exactly.
        for i in 0..(1 << 18) + 10 {
            push(&mut stats, i as f64 + 0.5);
        }
        stats.compact();
        assert!(stats.repeats.is_none(), "too many distinct values to count");
        assert!(!stats.counted.is_empty(), "what was counted is kept");
        push(&mut stats, 7.25);
        push(&mut stats, 7.25);
        assert_holds_exactly(stats, all);
    }
}
