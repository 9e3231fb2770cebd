//! "Did you mean" suggestions by edit distance.

/// " Did you mean `x`?" for the candidate closest to `wanted`, or an empty string: the hint
/// every unknown-name message ends with.
pub fn did_you_mean<'a, I>(wanted: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(wanted, candidates, 1).first().map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default()
}

/// Up to `max` candidates closest to `wanted`, best first. A candidate qualifies when its
/// normalised Damerau–Levenshtein similarity is at least 0.5, or when one contains the other
/// case-insensitively (`cpu` → `metrics.cpu.current`).
pub fn closest<'a, I>(wanted: &str, candidates: I, max: usize) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let last = lower.rsplit(['.', ']']).next().unwrap_or(&lower);
            let similarity =
                strsim::normalized_damerau_levenshtein(&wanted_lower, &lower).max(strsim::normalized_damerau_levenshtein(&wanted_lower, last));
            let contains = !wanted_lower.is_empty() && (lower.contains(&wanted_lower) || wanted_lower.contains(last));
            let score = if contains { similarity.max(0.5) } else { similarity };
            (score >= 0.5).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(max).map(|(_, c)| c.to_string()).collect()
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
}
