//! Spilled against in-memory profiles: the same items profiled with every exact counter held in
//! memory and with a budget so small that the counters are spilled after every few thousand
//! items must give the same profile, figure for figure (histograms of every bin count too), on
//! hostile data: all-distinct and all-equal numbers, doubles at the extremes, integers past
//! 2^53, unicode and over-long strings, nulls, types mixed per path, nested arrays.

use std::sync::Arc;

use serde_json::{Value, json};

use super::numeric::{HistogramLayout, MAX_BINS};
use super::spill::{MemoryScratch, ScratchFile, ScratchSpace, Spill, SpillError};
use super::{CollectionProfile, ProfileBuilder, PropertyProfile};

/// Item `i` of the hostile set.
fn item(i: u64, rng: &mut fastrand::Rng) -> Value {
    const EXTREMES: [f64; 10] =
        [f64::MAX, -f64::MAX, f64::MIN_POSITIVE, 5e-324, -5e-324, 1e308, -1e-300, 0.0, 0.5, -7.25];
    let extreme = if rng.u8(..) < 40 {
        EXTREMES[rng.usize(..EXTREMES.len())]
    } else {
        (rng.f64() - 0.5) * 10f64.powi(rng.i32(-30..30))
    };
    let wide = match i % 4 {
        0 => json!((1u64 << 53) + rng.u64(..1_000_000)),
        1 => json!(u64::MAX - rng.u64(..3)),
        2 => json!(i64::MIN + rng.i64(0..3)),
        _ => json!(rng.i64(-1_000..1_000)),
    };
    let unicode = match i % 5 {
        0 => format!("ü-{i}-日本-🦀"),
        1 => format!("{}{i}", "é".repeat(150)),
        2 => "same".to_string(),
        3 => format!("x{}", rng.u32(..200)),
        _ => String::new(),
    };
    let mixed = match i % 7 {
        0 => json!(i),
        1 => json!(format!("s{}", i % 13)),
        2 => json!(i.is_multiple_of(3)),
        3 => Value::Null,
        4 => json!([i, format!("t{}", i % 4)]),
        5 => json!({"k": i % 11}),
        _ => json!(i as f64 / 8.0),
    };
    json!({
        "id": format!("id-{i:08}"),
        "distinct": i as f64 * 0.618_033_988_7 + 0.25,
        "equal": 42,
        "extreme": extreme,
        "wide": wide,
        "unicode": unicode,
        "maybe": if i.is_multiple_of(3) { Value::Null } else { json!(rng.u32(..1_000_000)) },
        "mixed": mixed,
        "when": format!("2024-{:02}-{:02}T{:02}:{:02}:00Z", 1 + i % 12, 1 + i % 28, i % 24, i % 60),
        "nested": [[i % 5, rng.f64()], [format!("n{}", i % 17)], []],
        "level": i % 7,
    })
}

/// The items profiled in memory, or with `spill` and a budget of `budget` bytes fitted every
/// `every` items.
fn profile(n: u64, spill: Option<(Spill, usize, u64)>) -> CollectionProfile {
    let mut rng = fastrand::Rng::with_seed(28);
    let mut builder = ProfileBuilder::new();
    if let Some((spill, _, _)) = &spill {
        builder = builder.spill_to(spill.clone());
    }
    for i in 0..n {
        builder.add_value(&item(i, &mut rng));
        if let Some((_, budget, every)) = &spill
            && i % every == every - 1
        {
            builder.fit_budget(*budget);
        }
    }
    builder.finish(n)
}

/// Every histogram a property's numbers can have (automatic and each bin count), counted.
fn histograms(p: &PropertyProfile) -> Vec<Option<Vec<u64>>> {
    let Some(n) = &p.numbers else { return Vec::new() };
    std::iter::once(None)
        .chain((1..=MAX_BINS).map(Some))
        .map(|bins| {
            let layout = HistogramLayout::for_numbers(n, bins)?;
            match (&n.runs, &n.edge_counts) {
                (Some(runs), _) => Some(layout.count_runs(runs)),
                (None, Some(edges)) => edges.count(&layout),
                (None, None) => None,
            }
        })
        .collect()
}

/// Asserts that two profiles agree in every figure.
fn assert_same(spilled: &CollectionProfile, memory: &CollectionProfile) {
    assert_eq!(
        serde_json::to_value(spilled).expect("json"),
        serde_json::to_value(memory).expect("json")
    );
    let (a, b) = (spilled.properties(), memory.properties());
    assert_eq!(a.len(), b.len());
    for (s, m) in a.iter().zip(&b) {
        assert!(s.approximate.is_none(), "{} is exact", s.path);
        if let (Some(x), Some(y)) = (&s.numbers, &m.numbers) {
            assert_eq!(x.quartiles.map(f64::to_bits), y.quartiles.map(f64::to_bits), "{}", s.path);
            assert_eq!(x.exact_median, y.exact_median, "{}", s.path);
            assert_eq!(x.median_key, y.median_key, "{}", s.path);
            assert_eq!(x.median_value(), y.median_value(), "{}", s.path);
            assert_eq!(x.exact_range, y.exact_range, "{}", s.path);
            assert_eq!(x.mean.to_bits(), y.mean.to_bits(), "{}", s.path);
            assert_eq!(x.std_dev.to_bits(), y.std_dev.to_bits(), "{}", s.path);
        }
        assert_eq!(histograms(s), histograms(m), "{}", s.path);
    }
}

/// Counts how many properties a profile holds as spilled (their values not kept).
fn spilled_properties(profile: &CollectionProfile) -> usize {
    profile
        .properties()
        .iter()
        .filter(|p| p.numbers.as_ref().is_some_and(|n| n.edge_counts.is_some()))
        .count()
}

#[test]
fn a_profile_spilled_every_few_thousand_items_is_the_in_memory_profile() {
    let n = 40_000;
    let memory = profile(n, None);
    let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
    let spilled = profile(n, Some((spill.clone(), 1, 3_000)));
    assert!(spill.written() > 0);
    assert!(spill.failure().is_none() && spill.declined().is_none());
    assert!(spilled_properties(&spilled) >= 4, "{}", spilled_properties(&spilled));
    assert_same(&spilled, &memory);
}

#[test]
fn merged_builders_that_spilled_apart_are_the_in_memory_profile() {
    let n = 30_000u64;
    let mut rng = fastrand::Rng::with_seed(28);
    let items: Vec<Value> = (0..n).map(|i| item(i, &mut rng)).collect();
    let mut whole = ProfileBuilder::new();
    for v in &items {
        whole.add_value(v);
    }
    let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
    // Three builders over three parts, each spilling its own chunks, merged in order; one
    // never spills at all.
    let mut parts = items.chunks(12_000).enumerate().map(|(k, part)| {
        let mut b = ProfileBuilder::new().spill_to(spill.clone());
        for (i, v) in part.iter().enumerate() {
            b.add_value(v);
            if k != 1 && i % 2_500 == 2_499 {
                b.fit_budget(1);
            }
        }
        b
    });
    let mut merged = parts.next().expect("a part");
    for b in parts {
        merged.merge(b);
    }
    assert_same(&merged.finish(n), &whole.finish(n));
}

/// Scratch files that take a few writes and then fail, as a full disk does.
struct Failing(std::sync::atomic::AtomicUsize);

struct FailingFile<'a>(&'a std::sync::atomic::AtomicUsize, Box<dyn ScratchFile>);

impl ScratchSpace for &'static Failing {
    fn create(&self) -> std::io::Result<Box<dyn ScratchFile>> {
        Ok(Box::new(FailingFile(&self.0, MemoryScratch.create()?)))
    }
    fn place(&self) -> String {
        "a full disk".to_string()
    }
}

impl ScratchFile for FailingFile<'static> {
    fn write_at(&self, bytes: &[u8], offset: u64) -> std::io::Result<()> {
        use std::sync::atomic::Ordering;
        if self.0.fetch_sub(1, Ordering::Relaxed) == 0 {
            self.0.store(0, Ordering::Relaxed);
            return Err(std::io::Error::other("no space left on device"));
        }
        self.1.write_at(bytes, offset)
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.1.read_exact_at(buf, offset)
    }
}

#[test]
fn past_the_cap_or_a_failed_write_properties_are_estimated_and_the_spill_says_why() {
    let n = 40_000;
    let memory = profile(n, None);
    // A cap that holds a few chunks: the properties that spilled first stay exact, the rest
    // are estimated, and the estimates cover the values spilled before.
    let capped = Spill::new(Arc::new(MemoryScratch), 200_000);
    let profile_capped = profile(n, Some((capped.clone(), 1, 3_000)));
    assert_eq!(capped.declined(), Some(SpillError::Cap { cap: 200_000 }));
    assert!(capped.written() <= 200_000);
    let failing: &'static Failing =
        Box::leak(Box::new(Failing(std::sync::atomic::AtomicUsize::new(3))));
    let full = Spill::new(Arc::new(failing), u64::MAX);
    let profile_full = profile(n, Some((full.clone(), 1, 3_000)));
    assert!(matches!(full.declined(), Some(SpillError::Io { .. })), "{:?}", full.declined());
    for got in [&profile_capped, &profile_full] {
        assert!(!got.is_exact());
        for (g, m) in got.properties().iter().zip(memory.properties()) {
            // Counts stay exact either way; an estimated property says so.
            assert_eq!((g.present, g.nulls, g.types), (m.present, m.nulls, m.types), "{}", g.path);
            if let (Some(a), Some(b)) = (&g.numbers, &m.numbers) {
                assert_eq!((a.count, a.min, a.max), (b.count, b.min, b.max), "{}", g.path);
            }
            if g.approximate.is_none() {
                assert_eq!(
                    serde_json::to_value(g).expect("json"),
                    serde_json::to_value(m).expect("json"),
                    "{}",
                    g.path
                );
            }
        }
    }
}

/// A string of the hostile set for hashed chunks: shared long prefixes, unicode, over-long
/// values, the empty string, values that differ in one byte at either end, repeats.
fn hostile_string(i: u64, rng: &mut fastrand::Rng) -> String {
    let prefix = "p".repeat(200);
    match i % 9 {
        0 => format!("{prefix}{:06}", rng.u64(..50_000)),
        1 => format!("日本語-{}-🦀", rng.u64(..3_000)),
        2 => format!("{}{}", "é".repeat(140), rng.u64(..1_000)),
        3 => String::new(),
        4 => format!("{:06}{prefix}", rng.u64(..20_000)),
        5 => "z".repeat(257 + rng.usize(..5)),
        6 => format!("{}x", "a".repeat(rng.usize(..40))),
        7 => format!("2024-01-{:02}", 1 + rng.u64(..28)),
        _ => format!("id-{i:08}"),
    }
}

/// Items carrying hostile strings and numbers with repeats across chunks (the two zeros among
/// them), fed in `order`.
fn ordered_items(n: u64, order: &str) -> Vec<Value> {
    let mut rng = fastrand::Rng::with_seed(2808);
    let mut items: Vec<(String, Value)> = (0..n)
        .map(|i| {
            let s = hostile_string(i, &mut rng);
            let number = match i % 6 {
                0 => json!(-0.0),
                1 => json!(0.0),
                2 => json!(rng.u64(..100) as f64 / 4.0),
                3 => json!(i),
                4 => json!((1u64 << 60) + rng.u64(..50)),
                _ => json!(rng.f64() * 1e6),
            };
            let id = format!("k-{:09}", rng.u64(..4_000) * 250_000);
            (s.clone(), json!({"s": s, "x": number, "id": id, "pair": [s, id]}))
        })
        .collect();
    match order {
        "ascending" => items.sort_by(|a, b| a.0.cmp(&b.0)),
        "descending" => items.sort_by(|a, b| b.0.cmp(&a.0)),
        _ => {}
    }
    items.into_iter().map(|(_, v)| v).collect()
}

/// Spilled chunks of hashed strings and batched number merges agree with memory, formats
/// included (both count them over every distinct value).
#[test]
fn hashed_string_chunks_and_batched_number_merges_agree_with_memory_in_every_order() {
    let n = 9_000u64;
    for order in ["ascending", "descending", "random"] {
        let items = ordered_items(n, order);
        let mut whole = ProfileBuilder::new();
        for v in &items {
            whole.add_value(v);
        }
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        // Two builders, each spilling every 300 items: dozens of chunks per property.
        let mut parts = items.chunks(4_500).map(|part| {
            let mut b = ProfileBuilder::new().spill_to(spill.clone());
            for (i, v) in part.iter().enumerate() {
                b.add_value(v);
                if i % 300 == 299 {
                    b.fit_budget(1);
                }
            }
            b
        });
        let mut merged = parts.next().expect("a part");
        for b in parts {
            merged.merge(b);
        }
        assert!(spill.written() > 0 && spill.failure().is_none(), "{order}");
        assert_same(&merged.finish(n), &whole.finish(n));
    }
}

/// Strings nearly all distinct, in no order, every tenth a repeat of one a few items before:
/// spilled as logged (their repeats unfolded within a chunk and across chunks) and folded when
/// finishing, they agree with memory.
#[test]
fn nearly_distinct_strings_spilled_unfolded_agree_with_memory() {
    let n = 20_000u64;
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let v = if i % 10 == 9 { i - 5 } else { i };
            json!({"s": format!("value-{}", v * 7_919 % 100_003)})
        })
        .collect();
    let mut whole = ProfileBuilder::new();
    let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
    let mut spilled = ProfileBuilder::new().spill_to(spill.clone());
    for (i, v) in items.iter().enumerate() {
        whole.add_value(v);
        spilled.add_value(v);
        if i % 2_000 == 1_999 {
            spilled.fit_budget(1);
        }
    }
    assert!(spill.written() > 0 && spill.failure().is_none());
    let (spilled, whole) = (spilled.finish(n), whole.finish(n));
    assert_same(&spilled, &whole);
}

/// Strings that arrive in ascending order are spilled as runs and merged by text: builders over
/// interleaved blocks (as a Parquet file's row groups are read) leave overlapping runs, a
/// property that stops ascending half-way (or late in a spill, after pieces of its run were
/// written) has its runs written again by bucket, and every profile agrees with memory.
#[test]
fn ascending_strings_spilled_as_runs_agree_with_memory() {
    let n = 48_000u64;
    let mut rng = fastrand::Rng::with_seed(3030);
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let second = i - i / 6;
            json!({
                "id": format!("ORD-{i:010}"),
                "when": format!("2024-01-01T{:02}:{:02}:{:02}Z", second / 3600, second / 60 % 60, second % 60),
                "turns": if i < n / 2 { format!("t-{i:08}") } else { format!("t-{:08}", rng.u64(..n)) },
                "unicode": format!("é日-{:07}-🦀", i - i / 5),
                "shared": format!("s-{:06}", i % 20_000),
                // Sorted parts that restart (runs that overlap, or logs that are not in order).
                "restarts": format!("r-{:06}", i % 5_000),
                // Long texts in order but for one late in each spill: pieces of an ascending
                // chunk are written before the text out of order is met, then left unread.
                "late": format!("{:0>100}", if i % 5_000 == 4_500 { 0 } else { i }),
            })
        })
        .collect();
    let mut whole = ProfileBuilder::new();
    for v in &items {
        whole.add_value(v);
    }
    let whole = whole.finish(n);
    for builders in [1usize, 2, 3] {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let mut parts: Vec<ProfileBuilder> =
            (0..builders).map(|_| ProfileBuilder::new().spill_to(spill.clone())).collect();
        for (b, block) in items.chunks(7_000).enumerate() {
            let builder = &mut parts[b % builders];
            for (i, v) in block.iter().enumerate() {
                builder.add_value(v);
                if i % 5_000 == 4_999 {
                    builder.fit_budget(1);
                }
            }
        }
        let mut parts = parts.into_iter();
        let mut merged = parts.next().expect("a builder");
        for b in parts {
            merged.merge(b);
        }
        assert!(spill.written() > 0 && spill.failure().is_none(), "{builders} builders");
        assert_same(&merged.finish(n), &whole);
    }
}

/// An independent tester's column, `i % 100` for the first million items and `i` after: its
/// deviation keeps the fifteen digits shown, in memory and spilled (summed plainly, the squared
/// distances lost four of them).
#[test]
fn the_deviation_of_two_million_integers_keeps_fifteen_digits() {
    let n: i64 = 2_000_000;
    let value = |i: i64| if i < n / 2 { i % 100 } else { i };
    let (sum, squares) =
        (0..n).map(|i| i128::from(value(i))).fold((0i128, 0i128), |(s, q), v| (s + v, q + v * v));
    // The exact variance, n Σx² − (Σx)² over n (n − 1), as a fraction of integers.
    let (n128, total) = (i128::from(n), sum);
    let (top, bottom) = (n128 * squares - total * total, n128 * (n128 - 1));
    let expected = ((top / bottom) as f64 + (top % bottom) as f64 / bottom as f64).sqrt();
    // In one builder and in two merged (as two threads read halves), in memory and spilled.
    for (builders, spilled) in [(1, false), (1, true), (2, false), (2, true)] {
        let mut parts: Vec<ProfileBuilder> = (0..builders)
            .map(|_| match spilled {
                true => {
                    ProfileBuilder::new().spill_to(Spill::new(Arc::new(MemoryScratch), u64::MAX))
                }
                false => ProfileBuilder::new(),
            })
            .collect();
        for i in 0..n {
            let builder = &mut parts[(i * builders / n) as usize];
            builder.add_value(&json!({ "late": value(i) }));
            // Fitted as a stream is, after each block: few-valued numbers are compacted.
            if i % 65_536 == 65_535 {
                builder.fit_budget(if spilled { 1 } else { usize::MAX });
            }
        }
        let mut parts = parts.into_iter();
        let mut builder = parts.next().expect("a builder");
        for part in parts {
            builder.merge(part);
        }
        let profile = builder.finish(n as u64);
        let late =
            profile.properties().into_iter().find(|p| p.path.to_string() == "late").expect("late");
        let std = late.numbers.as_ref().expect("numbers").std_dev;
        assert!(
            ((std - expected) / expected).abs() < 1e-14,
            "{builders} builders, spilled {spilled}: {std} against {expected}"
        );
    }
}

/// A median that is one of the values is shown with all its digits, as min and max are (an
/// integer past 2^53 among fractions too), in memory and spilled; a midpoint of two is a
/// computed figure, rounded to 15 digits.
#[test]
fn a_median_that_is_a_value_keeps_its_digits_and_a_midpoint_is_rounded() {
    let median = |values: &[Value], spilled: bool| {
        let mut builder = ProfileBuilder::new();
        if spilled {
            builder = builder.spill_to(Spill::new(Arc::new(MemoryScratch), u64::MAX));
        }
        for v in values {
            builder.add_value(&json!({ "x": v }));
            if spilled {
                builder.fit_budget(1);
            }
        }
        let profile = builder.finish(values.len() as u64);
        let x = profile.properties().into_iter().find(|p| p.path.to_string() == "x");
        x.and_then(|p| p.numbers.as_ref().map(|n| n.median_value())).expect("numbers")
    };
    let past_doubles = 9_007_199_254_740_993u64;
    for spilled in [false, true] {
        let cases = [
            (
                vec![json!(0.7), json!(0.1), json!(0.300_000_000_000_000_04)],
                json!(0.300_000_000_000_000_04),
            ),
            (
                vec![json!(0.5), json!(1.234_567_890_123_456_7e17), json!(1e30)],
                json!(1.234_567_890_123_456_7e17),
            ),
            (vec![json!(0.1), json!(1.0 / 3.0), json!(1.0 / 3.0), json!(0.9)], json!(1.0 / 3.0)),
            // Not the double next to it: the integer, as the maximum shows it.
            (vec![json!(past_doubles), json!(past_doubles), json!(0.5)], json!(past_doubles)),
            // The midpoint of 0.1 and 0.2 is 0.15000000000000002 in doubles: a computed figure.
            (vec![json!(0.1), json!(0.2)], json!(0.15)),
        ];
        for (values, expected) in cases {
            assert_eq!(median(&values, spilled), expected, "{values:?}, spilled: {spilled}");
        }
    }
}

/// An independent tester's times: written in four offsets, with and without fractions, their
/// earliest and latest are the first and last instants, not the smallest and largest text, in
/// memory, spilled (ascending as written, or not) and sketched.
#[test]
fn the_earliest_and_latest_times_are_instants_however_written() {
    let n = 40_000u64;
    let epoch = chrono::DateTime::parse_from_rfc3339("2024-01-01T00:00:00Z").expect("epoch");
    // The first written ahead of its time, the last behind it.
    let zones = ["+09:00", "-08:00", "Z", "+05:00"];
    let written: Vec<String> = (0..n)
        .map(|i| {
            let at = epoch + chrono::Duration::seconds(7 * i as i64);
            let zone = zones[(i * 7919 % 4) as usize];
            let offset = chrono::FixedOffset::east_opt(match zone {
                "-08:00" => -8 * 3600,
                "+05:00" => 5 * 3600,
                "+09:00" => 9 * 3600,
                _ => 0,
            })
            .expect("offset");
            let local = at.with_timezone(&offset).format("%Y-%m-%dT%H:%M:%S").to_string();
            let fraction = if i % 3 == 0 { ".5" } else { "" };
            format!("{local}{fraction}{zone}")
        })
        .collect();
    let expected = (written.first().cloned(), written.last().cloned());
    let by_text = (written.iter().min().cloned(), written.iter().max().cloned());
    assert!(by_text.0 != expected.0 && by_text.1 != expected.1, "{by_text:?}");
    let items: Vec<Value> = written.iter().map(|t| json!({ "at": t })).collect();
    let at = crate::path::PropertyPath::root().child("at");
    let range = |profile: &CollectionProfile| {
        let strings = profile.property(&at).and_then(|p| p.strings.clone()).expect("strings");
        assert_eq!(strings.format, Some(super::StringFormat::DateTime));
        (strings.min, strings.max)
    };
    let mut whole = ProfileBuilder::new();
    items.iter().for_each(|v| whole.add_value(v));
    assert_eq!(range(&whole.finish(n)), expected, "in memory");
    for spilled in [true, false] {
        let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
        let mut builder = ProfileBuilder::new();
        if spilled {
            builder = builder.spill_to(spill.clone());
        }
        for (i, v) in items.iter().enumerate() {
            builder.add_value(v);
            if i % 5_000 == 4_999 {
                builder.fit_budget(1);
            }
        }
        let profile = builder.finish(n);
        assert_eq!(spill.written() > 0, spilled);
        assert_eq!(range(&profile), expected, "spilled: {spilled}");
    }
}

/// An independent tester's long URLs: strings past the key length are counted under shortened
/// keys, but their format is their whole text's, in memory, spilled and sketched.
#[test]
fn long_urls_are_urls_however_they_are_counted() {
    let n = 20_000u64;
    let items: Vec<Value> = (0..n)
        .map(|i| json!({ "url": format!("https://example.com/{}?sig={i}", "a".repeat(300)) }))
        .collect();
    let url = crate::path::PropertyPath::root().child("url");
    let formats = |profile: &CollectionProfile| {
        let strings = profile.property(&url).and_then(|p| p.strings.clone()).expect("strings");
        (strings.format, strings.format_counts)
    };
    let expected = (Some(super::StringFormat::Uri), vec![(super::StringFormat::Uri, n)]);
    let mut whole = ProfileBuilder::new();
    items.iter().for_each(|v| whole.add_value(v));
    assert_eq!(formats(&whole.finish(n)), expected, "in memory");
    for spilled in [true, false] {
        let profile = in_two_builders(&items, spilled, |i| i % 2);
        assert_eq!(formats(&profile), expected, "spilled: {spilled}");
    }
}

/// `items` profiled by two builders (item `i` by builder `builder(i)`) fitted to a budget of
/// nothing every 3,000 items, spilling (`spilled`) or sketching, then merged.
fn in_two_builders(
    items: &[Value],
    spilled: bool,
    builder: impl Fn(usize) -> usize,
) -> CollectionProfile {
    let spill = Spill::new(Arc::new(MemoryScratch), u64::MAX);
    let mut parts: Vec<ProfileBuilder> = (0..2)
        .map(|_| match spilled {
            true => ProfileBuilder::new().spill_to(spill.clone()),
            false => ProfileBuilder::new(),
        })
        .collect();
    for (i, v) in items.iter().enumerate() {
        let part = &mut parts[builder(i)];
        part.add_value(v);
        if i % 3_000 == 2_999 {
            part.fit_budget(1);
        }
    }
    let mut parts = parts.into_iter();
    let mut merged = parts.next().expect("a builder");
    parts.for_each(|b| merged.merge(b));
    assert_eq!(spill.written() > 0, spilled);
    merged.finish(items.len() as u64)
}

/// An independent tester's long times: a date-time past the key length (a fraction of 250
/// digits) is counted under a shortened key, but its moment is its whole text's: the earliest and
/// latest stay shown and right, in memory, spilled and sketched, whether the long one is an
/// extreme or not.
#[test]
fn long_times_keep_their_range_however_they_are_counted() {
    let n = 40_000u64;
    let epoch = chrono::DateTime::parse_from_rfc3339("2024-01-01T00:00:00Z").expect("epoch");
    let short = |i: u64| {
        (epoch + chrono::Duration::seconds(i as i64)).format("%Y-%m-%dT%H:%M:%SZ").to_string()
    };
    let long =
        |base: &str, digit: char| format!("{}.{}Z", &base[..19], digit.to_string().repeat(250));
    // Just after the first second, and half-way: neither is an extreme.
    let inner = [long(&short(0), '1'), long(&short(n / 2), '7')];
    // Before every other time: the earliest.
    let earliest = long("2023-12-31T23:59:59Z", '9');
    let at = crate::path::PropertyPath::root().child("at");
    let range = |profile: &CollectionProfile| {
        let strings = profile.property(&at).and_then(|p| p.strings.clone()).expect("strings");
        assert_eq!(strings.format_counts, vec![(super::StringFormat::DateTime, strings.count)]);
        (strings.min, strings.max)
    };
    for with_earliest in [false, true] {
        let mut written: Vec<String> = (0..n).map(short).collect();
        written.insert(1, inner[0].clone());
        written.insert(n as usize / 2, inner[1].clone());
        if with_earliest {
            written.insert(n as usize / 3, earliest.clone());
        }
        let expected = match with_earliest {
            true => (Some(earliest.clone()), Some(short(n - 1))),
            false => (Some(short(0)), Some(short(n - 1))),
        };
        let items: Vec<Value> = written.iter().map(|t| json!({ "at": t })).collect();
        let count = items.len() as u64;
        let mut whole = ProfileBuilder::new();
        items.iter().for_each(|v| whole.add_value(v));
        assert_eq!(range(&whole.finish(count)), expected, "in memory, {with_earliest}");
        for spilled in [true, false] {
            let profile = in_two_builders(&items, spilled, |i| i * 2 / items.len());
            let case = format!("spilled: {spilled}, earliest long: {with_earliest}");
            assert_eq!(range(&profile), expected, "{case}");
        }
    }
}
