//! The memory budget of a streamed profile. After each block of items the loader asks the
//! builder to fit its budget: numbers with few distinct values are folded into counts (exact,
//! and small), then, while the exact counters still need more than the budget, the property
//! needing most switches to sketches (`super::sketch`). What a property needs is what it holds
//! plus what finishing it will allocate (sorting values, folding string logs), so a profile that
//! fits while streaming also fits when finished.

use super::ProfileBuilder;
use super::accumulate::PathNode;

/// A property's counters cheaper than this are never sketched: it would save next to nothing.
const WORTH_SKETCHING: usize = 256 << 10;

/// One kind of exact counter at one path, and what it needs.
struct Heavy {
    bytes: usize,
    /// Child positions from the root (`u32::MAX` for array elements).
    route: Vec<u32>,
    numbers: bool,
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
    // Strings with fewer distinct values than the frequent-value sketch keeps would be held
    // whole by it too: sketching them loses exactness and saves nothing.
    let few_strings = stats.strings.values.len() <= super::sketch::FREQUENT_KEPT;
    for (bytes, numbers) in [(strings, false), (numbers, true)] {
        if bytes >= WORTH_SKETCHING && (numbers || !few_strings) {
            heavy.push(Heavy { bytes, route: route.clone(), numbers });
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

impl ProfileBuilder {
    /// Brings the memory the counters need within `bytes`: see the module docs. Returns what
    /// they need afterwards (more than `bytes` only when what is left is too small to sketch,
    /// such as a profile of thousands of small properties).
    pub fn fit_budget(&mut self, bytes: usize) -> usize {
        let mut heavy = Vec::new();
        let root = self.root_mut();
        let mut total = measure(root, &mut Vec::new(), &mut heavy);
        if total <= bytes {
            return total;
        }
        heavy.sort_by_key(|h| std::cmp::Reverse(h.bytes));
        for candidate in heavy {
            if total <= bytes {
                break;
            }
            let Some(node) = at(root, &candidate.route) else { continue };
            let after = if candidate.numbers {
                node.stats.numbers.switch_to_sketch();
                node.stats.numbers.sketch.as_ref().map_or(0, |s| s.bytes())
            } else {
                node.stats.strings.switch_to_sketch();
                node.stats.strings.sketch.as_ref().map_or(0, |s| s.bytes())
            };
            total = total.saturating_sub(candidate.bytes) + after;
        }
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
