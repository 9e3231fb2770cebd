//! The memory budget of a streamed profile. After each block of items the loader asks the
//! builder to fit its budget: numbers with few distinct values are folded into counts (exact,
//! and small), then, while the exact counters still need more than the budget, the property
//! needing most is spilled to scratch files and stays exact (`super::spill`, when the builder
//! may spill: down to half the budget, so each spill writes a sizeable chunk), or else switches
//! to sketches (`super::sketch`). What a property needs is what it holds
//! plus what finishing it will allocate (sorting values, folding string logs), so a profile that
//! fits while streaming also fits when finished.
//!
//! A streamed file's size is known, so the loader also says how far through its part it is
//! ([`ProfileBuilder::fit_budget_growing`]): a property whose counters grew since the last fit
//! and would, at that rate, outgrow the budget by the end is switched then, not after its exact
//! counters have filled the budget. The rate is each property's own since the last fit, not its
//! size over the share read: a property of a few thousand values met in the first block has
//! stopped growing, however large it is then. So what is switched early is what the end of the
//! file would have switched (the same rule, applied to the sizes the part will reach); only the
//! memory held on the way differs.

use std::collections::HashMap;
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

/// What the last fit that was told the growth to come measured, for the next to project from.
#[derive(Debug, Default)]
pub(super) struct LastFit {
    /// The share of its part the input had reached.
    done: f64,
    /// The bytes of each property's strings (`false`) or numbers (`true`), by route.
    bytes: HashMap<(Vec<u32>, bool), usize>,
}

impl LastFit {
    /// What `heavy` will have added by the end of the part, now `done` of the way through it,
    /// at the rate it grew since this fit; nothing when there is no rate to go by yet.
    fn more(&self, heavy: &Heavy, done: f64) -> usize {
        if done <= self.done || done >= 1.0 {
            return 0;
        }
        let before = self.bytes.get(&(heavy.route.clone(), heavy.numbers)).copied().unwrap_or(0);
        let rate = heavy.bytes.saturating_sub(before) as f64 / (done - self.done);
        (rate * (1.0 - done)) as usize
    }
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
/// cap, a failed write) is sketched instead, and the spill remembers why. Spilling frees
/// what it writes, so no projection is needed: the counters never hold much more than `bytes`.
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
                sketch(node, candidate.numbers)
            }
        };
        total = total.saturating_sub(candidate.bytes) + after;
    }
    total
}

impl ProfileBuilder {
    /// Brings the memory the counters need within `bytes`: see the module docs. Returns what
    /// they need afterwards (more than `bytes` only when what is left is too small to sketch,
    /// such as a profile of thousands of small properties).
    pub fn fit_budget(&mut self, bytes: usize) -> usize {
        self.fit_budget_growing(bytes, 1.0)
    }

    /// [`ProfileBuilder::fit_budget`] for input that will grow to `growth` times what was added
    /// so far (at least 1; the loader's part of a file over what it has read): the heaviest
    /// properties are switched to sketches while the counters, each growing on at its rate since
    /// the last such fit (none at the first), would need more than `bytes` by then. A growth of
    /// 1 is [`ProfileBuilder::fit_budget`]. Returns what the counters need now.
    pub fn fit_budget_growing(&mut self, bytes: usize, growth: f64) -> usize {
        let growth = if growth.is_finite() { growth.max(1.0) } else { 1.0 };
        let last = self.last_fit.take();
        let mut heavy = Vec::new();
        let (root, spill) = self.root_and_scratch();
        let mut total = measure(root, &mut Vec::new(), &mut heavy);
        if let Some((spill, scratch)) = spill {
            return spill_heaviest(root, heavy, total, bytes, spill, scratch);
        }
        let done = 1.0 / growth;
        let mut sizes: HashMap<_, _> =
            heavy.iter().map(|h| ((h.route.clone(), h.numbers), h.bytes)).collect();
        // Each sketchable property with what it will have added by the end, at its rate since
        // the last fit.
        let mut heavy: Vec<(Heavy, usize)> = heavy
            .into_iter()
            .filter(|h| h.sketchable)
            .map(|h| {
                let more = last.as_ref().map_or(0, |last| last.more(&h, done));
                (h, more)
            })
            .collect();
        let mut projected = total + heavy.iter().map(|(_, more)| more).sum::<usize>();
        heavy.sort_by_key(|(h, more)| std::cmp::Reverse(h.bytes + more));
        for (candidate, more) in heavy {
            if projected <= bytes {
                break;
            }
            let Some(node) = at(root, &candidate.route) else { continue };
            let key = (candidate.route, candidate.numbers);
            // A log of repeating strings is the table it becomes, not an item-by-item growth.
            if !candidate.numbers && node.stats.strings.values.unlog_if_repeating_now() {
                let now = node.stats.strings.exact_bytes();
                total = total.saturating_sub(candidate.bytes) + now;
                projected = projected.saturating_sub(candidate.bytes + more) + now;
                sizes.insert(key, now);
                continue;
            }
            let after = sketch(node, candidate.numbers);
            total = total.saturating_sub(candidate.bytes) + after;
            projected = projected.saturating_sub(candidate.bytes + more) + after;
            sizes.remove(&key);
        }
        self.last_fit = Some(LastFit { done, bytes: sizes });
        total
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

    #[test]
    fn told_the_growth_to_come_the_budget_switches_early_what_the_end_switches_and_holds_less() {
        let n = 200_000;
        let budget = 4 << 20;
        let run = |project: bool| {
            let mut builder = ProfileBuilder::new();
            let mut peak = 0;
            for i in 0..n {
                builder.add_json(&item(i)).expect("valid");
                if i % 10_000 == 9_999 {
                    let growth = if project { n as f64 / (i + 1) as f64 } else { 1.0 };
                    peak = peak.max(builder.fit_budget_growing(budget, growth));
                }
            }
            (builder.finish(n as u64), peak)
        };
        let (plain, plain_peak) = run(false);
        let (early, early_peak) = run(true);
        assert_eq!(estimated(&plain), estimated(&early));
        assert_eq!(estimated(&early), ["id", "price"]);
        assert!(early_peak * 2 < plain_peak, "{early_peak} vs {plain_peak}");
        // A growth of 1 is the plain fit.
        let mut a = ProfileBuilder::new();
        let mut b = ProfileBuilder::new();
        for i in 0..30_000 {
            a.add_json(&item(i)).expect("valid");
            b.add_json(&item(i)).expect("valid");
        }
        assert_eq!(a.fit_budget(1 << 20), b.fit_budget_growing(1 << 20, 1.0));
    }

    /// Profiles 200,000 items of six string properties of 20,000 distinct values each (more
    /// than a sketch is worth at), drawn at random, fitting a 32 MiB budget told the growth to
    /// come: each property is a log of every item at first (past the test's threshold), then
    /// found repeating; the exact counts need about 8 MiB in the end.
    #[test]
    fn repeating_strings_are_projected_by_their_growth_since_the_last_fit() {
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
                let size = builder.fit_budget_growing(32 << 20, n as f64 / (i + 1) as f64);
                first.get_or_insert(size);
            }
        }
        // The first size, times the growth still to come, was far past the budget.
        assert!(first.unwrap_or_default() * 19 > 32 << 20, "{first:?}");
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
        let p0 = profile.property(&"p0".parse::<PropertyPath>().expect("path")).expect("p0");
        assert_eq!(p0.strings.as_ref().map(|s| s.distinct), Some(seen.len() as u64));
    }

    /// Sixteen properties of 5,000 distinct strings, met only in the last tenth of the items:
    /// their growth then projects far past the budget, but sketches would need about as much.
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
                builder.fit_budget_growing(1 << 20, n as f64 / (i + 1) as f64);
            }
        }
        let profile = builder.finish(n as u64);
        assert!(profile.is_exact(), "estimated: {:?}", estimated(&profile));
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
