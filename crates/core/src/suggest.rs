//! "Did you mean" suggestions: names close to the one asked for, by spelling.

/// " Did you mean `x`?" for the candidate closest to `wanted`, or an empty string: the hint
/// every unknown-name message ends with.
pub fn did_you_mean<'a, I>(wanted: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(wanted, candidates, 1).first().map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default()
}

/// The edit distance a name of `len` characters may be from a suggestion: one typo in a short
/// name, about one in four characters in a long one. A looser bound (the old "similarity at least
/// 0.5") offered `name` for `type` and anything for a one-letter name.
fn allowed_distance(len: usize) -> usize {
    match len {
        0..=2 => 0,
        3..=5 => 1,
        6..=9 => 2,
        _ => len / 4,
    }
}

/// The segments of a property path (`metrics.cpu.current`, `tags[]`, `items[].name`), lowercase,
/// without their array markers; empty segments dropped.
fn segments(path: &str) -> Vec<String> {
    path.split('.').map(|s| s.trim_end_matches("[]").to_lowercase()).filter(|s| !s.is_empty()).collect()
}

/// Up to `max` candidates closest to `wanted` by spelling, best first. A candidate qualifies when
/// it, or its last path segment, is within a few edits of `wanted` (case-insensitive;
/// transpositions count once), or when one of its path segments is `wanted` itself (`cpu` →
/// `metrics.cpu.current`). Nothing qualifies merely by containing a substring: an empty segment
/// (the `[]` of `tags[]`) used to be "contained" in every name.
pub fn closest<'a, I>(wanted: &str, candidates: I, max: usize) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted_lower = wanted.trim().to_lowercase();
    if wanted_lower.is_empty() {
        return Vec::new();
    }
    let wanted_segments = segments(&wanted_lower);
    let wanted_last = wanted_segments.last().cloned().unwrap_or_default();
    let allowed = allowed_distance(wanted_lower.chars().count());
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            if lower == wanted_lower {
                return Some((0, 0, candidate));
            }
            let parts = segments(&lower);
            let last = parts.last().map(String::as_str).unwrap_or_default();
            let whole = strsim::damerau_levenshtein(&wanted_lower, lower.trim_end_matches("[]"));
            let by_last = if last.is_empty() { usize::MAX } else { strsim::damerau_levenshtein(&wanted_last, last) };
            let distance = whole.min(by_last);
            if distance <= allowed {
                // Rank by distance, then prefer the shorter (less nested) name.
                return Some((distance, lower.len(), candidate));
            }
            (!wanted_last.is_empty() && parts.iter().any(|p| *p == wanted_last)).then_some((allowed + 1, lower.len(), candidate))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored.into_iter().take(max).map(|(_, _, c)| c.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn suggests_near_misses_first() {
        let names = ["type", "name", "region", "metadata.category", "cpu"];
        assert_eq!(closest("tpye", names, 3)[0], "type");
        assert_eq!(closest("category", names, 3), vec!["metadata.category".to_string()]);
        assert!(closest("zzzzzz", names, 3).is_empty());
    }

    #[test]
    fn suggests_only_names_close_by_spelling() {
        let names = ["tags[]", "tags", "type", "name", "cpu", "metrics.cpu.current", "region", "items[].label"];
        // An array marker is not a name every word contains.
        for unknown in ["latency", "pagerank", "x", "zz", "owner", "degree", "a.b"] {
            assert!(closest(unknown, names, 3).is_empty(), "{unknown}: {:?}", closest(unknown, names, 3));
        }
        // Two edits in a four-letter name is a different word.
        assert!(!closest("type", ["name"], 3).contains(&"name".to_string()));
        assert_eq!(closest("tag", names, 1), ["tags"]);
        assert_eq!(closest("Regoin", names, 1), ["region"]);
        assert_eq!(closest("cpu", names, 3), ["cpu", "metrics.cpu.current"]);
        assert_eq!(closest("lable", names, 1), ["items[].label"]);
        assert!(closest("", names, 3).is_empty());
        assert!(closest("ünïcödé", ["unicode"], 3).len() <= 1);
    }
}
