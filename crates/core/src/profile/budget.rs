//! The memory budget of a streamed profile. After each block of items the loader asks the
//! builder to fit its budget: numbers with few distinct values are folded into counts (exact,
//! and small), then, while the exact counters still need more than the budget, the property
//! needing most is spilled to scratch files and stays exact (`super::spill`, when the builder
//! may spill: down to half the budget, so each spill writes a sizeable chunk), or else switches
//! to sketches (`super::sketch`). What a property needs is what it holds
//! plus what finishing it will allocate (sorting values, folding string logs), so a profile that
//! fits while streaming also fits when finished.
//!
//! There is no projection of the growth to come: distinct values saturate (a day's user ids
//! repeat), so a property growing fast early may fit at the end, and switching it to sketches
//! on a projection lost exactness the budget allowed. Fitted after each block, the counters
//! never hold much more than the budget anyway.

use std::sync::Arc;

use super::ProfileBuilder;
use super::accumulate::PathNode;
use super::spill::{Scratch, Spill};

/// A property's counters cheaper than this are never sketched: it would save next to nothing.
const WORTH_SKETCHING: usize = 256 << 10;

/// Distinct strings from which a property may be sketched. The frequent-value sketch holds up
/// to [`super::sketch::FREQUENT_KEPT`] values with their texts: below several times that, a
/// sketch saves little memory (16 properties of 5,000 values each needed more as sketches than
/// exact) and loses exactness.
const SKETCH_STRINGS_FROM: usize = 4 * super::sketch::FREQUENT_KEPT;

/// A property's counters cheaper than this are never spilled (a chunk of a few entries).
const WORTH_SPILLING: usize = 4 << 10;

/// One kind of exact counter at one path, and what it needs.
struct Heavy {
    bytes: usize,
    /// Child positions from the root (`u32::MAX` for array elements).
    route: Vec<u32>,
    numbers: bool,
    /// Worth switching to sketches (spilling takes any heavy property).
    sketchable: bool,
}

/// Bytes the counters of `node` and below need; compacts numbers on the way and lists what
/// could be sketched.
fn measure(node: &mut PathNode, route: &mut Vec<u32>, heavy: &mut Vec<Heavy>) -> usize {
    let stats = &mut node.stats;
    stats.numbers.compact();
    let strings = stats.strings.exact_bytes();
    let numbers = stats.numbers.exact_bytes();
    let sketches = stats.strings.sketch.as_ref().map_or(0, |s| s.bytes())
        + stats.numbers.sketch.as_ref().map_or(0, |s| s.bytes());
    let few_strings = stats.strings.values.len() < SKETCH_STRINGS_FROM;
    for (bytes, numbers) in [(strings, false), (numbers, true)] {
        if bytes >= WORTH_SPILLING {
            let sketchable = bytes >= WORTH_SKETCHING && (numbers || !few_strings);
            heavy.push(Heavy { bytes, route: route.clone(), numbers, sketchable });
        }
    }
    let mut total = strings + numbers + sketches + std::mem::size_of::<PathNode>();
    for (i, (key, child)) in node.keys.iter_mut().enumerate() {
        route.push(i as u32);
        total += key.len() + measure(child, route, heavy);
        route.pop();
    }
    if let Some(items) = &mut node.items {
        route.push(u32::MAX);
        total += measure(items, route, heavy);
        route.pop();
    }
    total
}

/// The node `route` leads to.
fn at<'a>(mut node: &'a mut PathNode, route: &[u32]) -> Option<&'a mut PathNode> {
    for &step in route {
        node = match step {
            u32::MAX => node.items.as_deref_mut()?,
            i => &mut node.keys.get_mut(i as usize)?.1,
        };
    }
    Some(node)
}

/// Switches a property's strings or numbers to sketches; returns the bytes they hold then.
fn sketch(node: &mut PathNode, numbers: bool) -> usize {
    if numbers {
        node.stats.numbers.switch_to_sketch();
        node.stats.numbers.sketch.as_ref().map_or(0, |s| s.bytes())
    } else {
        node.stats.strings.switch_to_sketch();
        node.stats.strings.sketch.as_ref().map_or(0, |s| s.bytes())
    }
}

/// Share of the budget the counters are brought down to when they spill: each spill then
/// writes a sizeable chunk, not a sliver every block.
const SPILL_DOWN_TO: usize = 2;

/// Once the counters need more than `bytes`, writes the heaviest properties' counters to
/// scratch files until they need half of it. A property that cannot be spilled (the files'
/// cap, a failed write) is sketched instead when worth it, and the spill remembers why.
/// Spilling frees what it writes: the counters never hold much more than `bytes`.
fn spill_heaviest(
    root: &mut PathNode,
    mut heavy: Vec<Heavy>,
    mut total: usize,
    bytes: usize,
    spill: &Spill,
    scratch: &mut Option<Arc<Scratch>>,
) -> usize {
    if total <= bytes {
        return total;
    }
    heavy.sort_by_key(|h| std::cmp::Reverse(h.bytes));
    for candidate in heavy {
        if total <= bytes / SPILL_DOWN_TO {
            break;
        }
        let Some(node) = at(root, &candidate.route) else { continue };
        let file = match scratch {
            Some(file) => Ok(file.clone()),
            None => Scratch::create(spill).inspect(|file| *scratch = Some(file.clone())),
        };
        let spilled = file.and_then(|file| {
            if candidate.numbers {
                node.stats.numbers.spill(&file)
            } else {
                node.stats.strings.spill(&file)
            }
        });
        let after = match spilled {
            Ok(()) => 0,
            Err(error) => {
                spill.decline(error);
                // As without spilling: a few-valued property would need about as much as a
                // sketch, and would lose its exactness for nothing.
                if candidate.sketchable { sketch(node, candidate.numbers) } else { candidate.bytes }
            }
        };
        total = total.saturating_sub(candidate.bytes) + after;
    }
    total
}

/// Counts a property's strings or numbers in a table of distinct values where they repeat
/// enough for it to be smaller than what holds them now (repeating values are the table they
/// become, not an item-by-item growth); returns the bytes they need then, or `None`.
fn counted_instead(node: &mut PathNode, numbers: bool) -> Option<usize> {
    if numbers {
        let stats = &mut node.stats.numbers;
        stats.count_if_repeating(super::repeats::REPEATS_TO_FIT).then(|| stats.exact_bytes())
    } else {
        let stats = &mut node.stats.strings;
        stats.values.unlog_if_repeating_now().then(|| stats.exact_bytes())
    }
}

/// Once the counters need more than `bytes`, switches the heaviest properties worth it to
/// sketches until they fit (counting repeating values instead where that is enough); returns
/// what they need then.
fn sketch_heaviest(
    root: &mut PathNode,
    heavy: Vec<Heavy>,
    mut total: usize,
    bytes: usize,
) -> usize {
    let mut heavy: Vec<Heavy> = heavy.into_iter().filter(|h| h.sketchable).collect();
    heavy.sort_by_key(|h| std::cmp::Reverse(h.bytes));
    // Properties whose repeating values were counted instead: sketched after all if the
    // counters still need more than the budget (a table of a million distinct values is
    // smaller than their log, yet no smaller than the budget).
    let mut counted = Vec::new();
    for candidate in heavy {
        if total <= bytes {
            break;
        }
        let Some(node) = at(root, &candidate.route) else { continue };
        if let Some(now) = counted_instead(node, candidate.numbers) {
            total = total.saturating_sub(candidate.bytes) + now;
            counted.push(Heavy { bytes: now, ..candidate });
            continue;
        }
        let after = sketch(node, candidate.numbers);
        total = total.saturating_sub(candidate.bytes) + after;
    }
    counted.sort_by_key(|h| std::cmp::Reverse(h.bytes));
    for candidate in counted {
        if total <= bytes {
            break;
        }
        let Some(node) = at(root, &candidate.route) else { continue };
        let after = sketch(node, candidate.numbers);
        total = total.saturating_sub(candidate.bytes) + after;
    }
    total
}

/// What the counters needed when [`ProfileBuilder::fit_budget_measured`] fitted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fitted {
    /// Bytes they needed before: what they held at the end of the items added since the last fit.
    pub before: usize,
    /// Bytes they need after.
    pub after: usize,
}

impl ProfileBuilder {
    /// Brings the memory the counters need within `bytes`: see the module docs. Returns what
    /// they need afterwards (more than `bytes` only when what is left is too small to sketch,
    /// such as a profile of thousands of small properties).
    pub fn fit_budget(&mut self, bytes: usize) -> usize {
        self.fit_budget_measured(bytes).after
    }

    /// [`Self::fit_budget`], saying what the counters needed before as well as after.
    pub fn fit_budget_measured(&mut self, bytes: usize) -> Fitted {
        let mut heavy = Vec::new();
        let (root, spill) = self.root_and_scratch();
        let before = measure(root, &mut Vec::new(), &mut heavy);
        let after = match spill {
            Some((spill, scratch)) => spill_heaviest(root, heavy, before, bytes, spill, scratch),
            None => sketch_heaviest(root, heavy, before, bytes),
        };
        Fitted { before, after }
    }

    /// What the counters need now (see [`ProfileBuilder::fit_budget`]), compacting numbers.
    pub fn needed_bytes(&mut self) -> usize {
        measure(self.root_mut(), &mut Vec::new(), &mut Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::ProfileBuilder;
    use crate::path::PropertyPath;

    /// Item `i`: a unique id, two few-valued properties, a many-valued number, an array.
    fn item(i: usize) -> String {
        json!({
            "id": format!("item-{i:08}"),
            "kind": (["a", "b", "c"][i % 3]),
            "level": i % 7,
            "price": (i as f64 * 0.618_033_988_7).fract() * 1000.0,
            "tags": [format!("t{}", i % 5)],
        })
        .to_string()
    }

    fn build(n: usize, budget: Option<usize>) -> crate::CollectionProfile {
        let mut builder = ProfileBuilder::new();
        for i in 0..n {
            builder.add_json(&item(i)).expect("valid");
            if let Some(bytes) = budget
                && i % 10_000 == 9_999
            {
                builder.fit_budget(bytes);
            }
        }
        builder.finish(n as u64)
    }

    #[test]
    fn within_budget_the_profile_is_exact_and_the_same() {
        let plain = build(50_000, None);
        let budgeted = build(50_000, Some(1 << 30));
        assert!(budgeted.is_exact());
        assert_eq!(
            serde_json::to_value(&plain).expect("json"),
            serde_json::to_value(&budgeted).expect("json")
        );
    }

    /// The paths a profile estimated.
    fn estimated(profile: &crate::CollectionProfile) -> Vec<String> {
        profile
            .properties()
            .into_iter()
            .filter(|p| p.approximate.is_some())
            .map(|p| p.path.to_string())
            .collect()
    }

    /// Profiles 200,000 items of six string properties of 20,000 distinct values each (more
    /// than a sketch is worth at), drawn at random, fitting a 32 MiB budget: each property is a
    /// log of every item at first (past the test's threshold), growing as fast as the items
    /// come, then found repeating; the exact counts need about 8 MiB in the end.
    #[test]
    fn repeating_strings_growing_fast_at_first_stay_exact_within_the_budget() {
        let (n, distinct) = (200_000, 20_000);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut builder = ProfileBuilder::new();
        let mut first = None;
        let mut seen = std::collections::HashSet::new();
        for i in 0..n {
            let item: serde_json::Map<String, serde_json::Value> = (0..6)
                .map(|p| {
                    (format!("p{p}"), json!(format!("value of p{p}: {:05}", rng.u32(..distinct))))
                })
                .collect();
            seen.insert(item["p0"].to_string());
            builder.add_json(&serde_json::Value::Object(item).to_string()).expect("valid");
            if i % 10_000 == 9_999 {
                let size = builder.fit_budget(32 << 20);
                first.get_or_insert(size);
            }
        }
        // The first size, times the items still to come, was far past the budget: a projection
        // of that growth sketched properties whose exact counts fit.
        assert!(first.unwrap_or_default() * 19 > 32 << 20, "{first:?}");
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
        let p0 = profile.property(&"p0".parse::<PropertyPath>().expect("path")).expect("p0");
        assert_eq!(p0.strings.as_ref().map(|s| s.distinct), Some(seen.len() as u64));
    }

    /// Sixteen properties of 5,000 distinct strings, met only in the last tenth of the items,
    /// past the budget: sketches would need about as much.
    #[test]
    fn strings_of_a_few_thousand_values_stay_exact_even_past_the_budget() {
        let n = 100_000;
        let mut rng = fastrand::Rng::with_seed(9);
        let mut builder = ProfileBuilder::new();
        for i in 0..n {
            let distinct = if i < n * 9 / 10 { 50 } else { 5_000 };
            let item: serde_json::Map<String, serde_json::Value> = (0..16)
                .map(|p| (format!("p{p}"), json!(format!("{p}: value {:05}", rng.u32(..distinct)))))
                .collect();
            builder.add_json(&serde_json::Value::Object(item).to_string()).expect("valid");
            if i % 5_000 == 4_999 {
                builder.fit_budget(1 << 20);
            }
        }
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
    }

    /// 30,000 distinct prices over 400,000 items, past a 2 MiB budget without spilling: pushed
    /// one by one they would need 9 MiB, counted they need under 2 MiB, so they are counted,
    /// exactly, not sketched (as a log of repeating strings goes back to a table).
    #[test]
    fn many_repeating_numbers_are_counted_not_sketched_past_the_budget() {
        let (n, distinct) = (400_000, 30_000);
        let mut rng = fastrand::Rng::with_seed(11);
        let mut builder = ProfileBuilder::new();
        let mut values = Vec::new();
        for i in 0..n {
            let cents = rng.u32(..distinct) * 7 + 1;
            values.push(cents);
            builder
                .add_json(&format!("{{\"price\":{}.{:02}}}", cents / 100, cents % 100))
                .expect("valid");
            if i % 10_000 == 9_999 {
                builder.fit_budget(2 << 20);
            }
        }
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
        let price =
            profile.property(&"price".parse::<PropertyPath>().expect("path")).expect("price");
        let numbers = price.numbers.as_ref().expect("numbers");
        values.sort_unstable();
        let mut unique = values.clone();
        unique.dedup();
        assert_eq!(numbers.distinct, unique.len() as u64);
        assert_eq!(numbers.min, f64::from(values[0]) / 100.0);
        assert_eq!(numbers.max, f64::from(values[n - 1]) / 100.0);
        // The median of an even count: the midpoint of the two middle values.
        let middle = f64::from(values[n / 2 - 1] + values[n / 2]) / 200.0;
        assert!((numbers.median - middle).abs() < 1e-9, "{} vs {middle}", numbers.median);
    }

    /// Strings that repeat enough to go back from a log to a table (40 % of a hundred values,
    /// 60 % unique) but whose table is still far past the budget: sketched, not kept exact
    /// at a table's size of every distinct value.
    #[test]
    fn counted_values_still_past_the_budget_are_sketched() {
        let n = 300_000;
        let mut rng = fastrand::Rng::with_seed(13);
        let mut builder = ProfileBuilder::new();
        let mut needed = 0;
        for i in 0..n {
            let s = if rng.u8(..10) < 4 { format!("h{}", rng.u8(..100)) } else { format!("u{i}") };
            builder.add_json(&json!({ "s": s }).to_string()).expect("valid");
            if i % 10_000 == 9_999 {
                needed = needed.max(builder.fit_budget(1 << 20));
            }
        }
        assert!(needed <= 1 << 20, "needed {needed} bytes");
        let profile = builder.finish(n as u64);
        assert_eq!(estimated(&profile), ["s"]);
    }

    /// Integers past 2^53 (not doubles) with a few values over many items are folded into
    /// counts, as doubles are, and stay exact under a small budget.
    #[test]
    fn a_few_integers_past_doubles_are_counted_not_kept_each() {
        let n = 200_000;
        let mut rng = fastrand::Rng::with_seed(1);
        let mut builder = ProfileBuilder::new();
        let mut values = Vec::new();
        for i in 0..n {
            let v = (1i128 << 62) + i128::from(rng.i8(-3..=3));
            values.push(v);
            builder.add_json(&format!("{{\"v\":{v}}}")).expect("valid");
            if i % 10_000 == 9_999 {
                builder.fit_budget(1 << 20);
            }
        }
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
        let v = profile.property(&"v".parse::<PropertyPath>().expect("path")).expect("v");
        let numbers = v.numbers.as_ref().expect("numbers");
        assert_eq!(numbers.distinct, 7);
        // The deviation from the exact values (a double holds none of them apart).
        let mean = values.iter().map(|&v| (v - (1 << 62)) as f64).sum::<f64>() / n as f64;
        let var = values.iter().map(|&v| ((v - (1 << 62)) as f64 - mean).powi(2)).sum::<f64>()
            / (n - 1) as f64;
        assert!(
            (numbers.std_dev - var.sqrt()).abs() < 1e-9,
            "{} vs {}",
            numbers.std_dev,
            var.sqrt()
        );
    }

    #[test]
    fn past_the_budget_heavy_properties_are_sketched_and_say_so_and_few_valued_stay_exact() {
        let n = 200_000;
        let mut builder = ProfileBuilder::new();
        let mut needed = Vec::new();
        for i in 0..n {
            builder.add_json(&item(i)).expect("valid");
            if i % 10_000 == 9_999 {
                needed.push(builder.fit_budget(2 << 20));
            }
        }
        assert!(needed.iter().all(|&b| b <= 2 << 20), "{needed:?}");
        let profile = builder.finish(n as u64);
        assert!(!profile.is_exact());
        let get = |p: &str| profile.property(&p.parse::<PropertyPath>().expect("path")).expect(p);
        let id = get("id");
        let approx = id.approximate.expect("id is sketched");
        let strings = id.strings.as_ref().expect("strings");
        let error = (strings.distinct as f64 - n as f64).abs() / n as f64;
        assert!(error <= 3.0 * approx.distinct_relative_error.expect("hll"), "{error}");
        assert_eq!(strings.count, n as u64);
        assert_eq!((strings.min_length, strings.max_length), (13, 13));
        // Few-valued properties keep their exact figures.
        for exact in ["kind", "level"] {
            assert!(get(exact).approximate.is_none(), "{exact}");
        }
        let level = get("level").numbers.as_ref().expect("numbers");
        assert_eq!((level.distinct, level.median, level.top.len()), (7, 3.0, 7));
        // The sketched price: exact extremes, mean and count; quantiles within the stated bound.
        let price = get("price");
        let alpha = price.approximate.and_then(|a| a.value_relative_error).expect("quantiles");
        let numbers = price.numbers.as_ref().expect("numbers");
        let mut values: Vec<f64> =
            (0..n).map(|i| (i as f64 * 0.618_033_988_7).fract() * 1000.0).collect();
        values.sort_by(f64::total_cmp);
        assert_eq!(numbers.count, n as u64);
        assert_eq!((numbers.min, numbers.max), (values[0], values[n - 1]));
        let mean = values.iter().sum::<f64>() / n as f64;
        assert!((numbers.mean - mean).abs() < 1e-9 * mean);
        let median = (values[n / 2 - 1] + values[n / 2]) / 2.0;
        assert!((numbers.median - median).abs() <= alpha * median * 1.01, "{}", numbers.median);
    }
}
