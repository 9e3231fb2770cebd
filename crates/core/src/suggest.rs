//! "Did you mean" suggestions: names close to the one asked for, by spelling.

/// " Did you mean `x`?" for the candidate closest to `wanted`, or an empty string: the hint
/// every unknown-name message ends with.
pub fn did_you_mean<'a, I>(wanted: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(wanted, candidates, 1)
        .first()
        .map(|s| format!(" Did you mean `{s}`?"))
        .unwrap_or_default()
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
    path.split('.')
        .map(|s| s.trim_end_matches("[]").to_lowercase())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether `wanted`'s segments occur in `parts` in order, the last ones equal (`schemascope.rank`
/// in `algorithmResults.schemascope.pagerank.rank`): a path written with segments left out.
fn is_shortened_form(wanted: &[String], parts: &[String]) -> bool {
    if wanted.len() >= parts.len() || wanted.last() != parts.last() {
        return false;
    }
    let mut rest = parts.iter();
    wanted.iter().all(|w| rest.any(|p| p == w))
}

/// Up to `max` candidates closest to `wanted` by spelling, best first. A candidate qualifies when
/// it is within a few edits of `wanted` (case-insensitive; transpositions count once). For a bare
/// name, a candidate also qualifies by its last path segment (`tpye` → `meta.type`) or when one of
/// its segments is the name itself (`cpu` → `metrics.cpu.current`). For a dotted path, by its
/// trailing segments (`pagerank.rank` → `algorithmResults.schemascope.pagerank.rank`), or when
/// the path is the candidate with segments left out — never by its last segment alone, whose
/// allowance would be that of the whole path (`…betweeness.score` once offered `cpu`). Nothing
/// qualifies merely by containing a substring.
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
    let dotted = wanted_segments.len() > 1;
    let wanted_joined = wanted_segments.join(".");
    let allowed = allowed_distance(wanted_lower.chars().count());
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            // A key that is not an identifier is shown quoted (`"a.b"`, `"e[0]"`); asked for as
            // written in the data, without the quotes, it is the same name.
            let plain = unquoted(&lower);
            // `arr.k` for `arr[].k`: the same names without the array marker.
            let bare = plain.as_deref().unwrap_or(&lower).replace("[]", "");
            if lower == wanted_lower
                || plain.as_deref() == Some(wanted_lower.as_str())
                || (bare == wanted_lower && bare.contains('.'))
            {
                return Some((0, 0, candidate));
            }
            let parts = segments(&lower);
            let last = parts.last().map(String::as_str).unwrap_or_default();
            let whole = strsim::damerau_levenshtein(&wanted_lower, lower.trim_end_matches("[]"))
                .min(plain.as_deref().map_or(usize::MAX, |p| {
                    strsim::damerau_levenshtein(&wanted_lower, p.trim_end_matches("[]"))
                }));
            let by_part = if dotted {
                // The candidate's trailing segments, as many as the wanted path has.
                match parts.len().checked_sub(wanted_segments.len()).filter(|&skip| skip > 0) {
                    Some(skip) => {
                        strsim::damerau_levenshtein(&wanted_joined, &parts[skip..].join("."))
                    }
                    None => usize::MAX,
                }
            } else if last.is_empty() {
                usize::MAX
            } else {
                strsim::damerau_levenshtein(&wanted_last, last)
            };
            let distance = whole.min(by_part);
            if distance <= allowed {
                // Rank by distance, then prefer the shorter (less nested) name.
                return Some((distance, lower.len(), candidate));
            }
            let related = if dotted {
                is_shortened_form(&wanted_segments, &parts)
            } else {
                !wanted_last.is_empty() && parts.contains(&wanted_last)
            };
            related.then_some((allowed + 1, lower.len(), candidate))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored.into_iter().take(max).map(|(_, _, c)| c.to_string()).collect()
}

/// A displayed path with its keys' quotes taken off (`"a.b".c` → `a.b.c`), or `None` when it has
/// none.
fn unquoted(path: &str) -> Option<String> {
    if !path.contains('"') {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '"' => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn keys_shown_quoted_are_found_by_their_plain_spelling() {
        let names = [r#""a.b""#, r#""e[0]""#, r#"meta."content-type""#, "plain", r#""say \"hi\"""#];
        assert_eq!(closest("a.b", names, 1), [r#""a.b""#]);
        assert_eq!(closest("e[0]", names, 1), [r#""e[0]""#]);
        assert_eq!(closest("meta.content-type", names, 1), [r#"meta."content-type""#]);
        assert_eq!(closest("A.B", names, 1), [r#""a.b""#]);
        assert_eq!(closest(r#"say "hi""#, names, 1), [r#""say \"hi\"""#]);
        // An array marker left out.
        assert_eq!(closest("arr.k", ["arr[].k", "arrk"], 1), ["arr[].k"]);
        // A typo in the plain spelling still finds it.
        assert_eq!(closest("meta.contnt-type", names, 1), [r#"meta."content-type""#]);
    }

    #[test]
    fn suggests_near_misses_first() {
        let names = ["type", "name", "region", "metadata.category", "cpu"];
        assert_eq!(closest("tpye", names, 3)[0], "type");
        assert_eq!(closest("category", names, 3), vec!["metadata.category".to_string()]);
        assert!(closest("zzzzzz", names, 3).is_empty());
    }

    #[test]
    fn suggests_only_names_close_by_spelling() {
        let names = [
            "tags[]",
            "tags",
            "type",
            "name",
            "cpu",
            "metrics.cpu.current",
            "region",
            "items[].label",
        ];
        // An array marker is not a name every word contains.
        for unknown in ["latency", "pagerank", "x", "zz", "owner", "degree", "a.b"] {
            assert!(
                closest(unknown, names, 3).is_empty(),
                "{unknown}: {:?}",
                closest(unknown, names, 3)
            );
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

    #[test]
    fn dotted_paths_suggest_by_their_own_segments_not_a_shared_last_name() {
        let names = [
            "type",
            "name",
            "cpu",
            "tags",
            "algorithmResults.schemascope.betweenness.score",
            "algorithmResults.schemascope.betweenness.scorePct",
            "algorithmResults.schemascope.pagerank.rank",
            "metrics.cpu.peak",
        ];
        let score = "algorithmResults.schemascope.betweenness.score";
        // A near miss of a long path offered `cpu`, `name` and `type` after the right one.
        assert_eq!(
            closest("algorithmResults.schemascope.betweeness.score", names, 5),
            [score, "algorithmResults.schemascope.betweenness.scorePct"]
        );
        let ranks = closest("algorithmResults.schemascope.pagerank.ranks", names, 5);
        assert_eq!(ranks[0], "algorithmResults.schemascope.pagerank.rank");
        assert!(ranks.iter().all(|n| n.starts_with("algorithmResults.schemascope.")), "{ranks:?}");
        assert_eq!(
            closest("pagerank.rank", names, 5),
            ["algorithmResults.schemascope.pagerank.rank"]
        );
        assert_eq!(closest("betweeness.score", names, 5)[0], score);
        assert_eq!(closest("algorithmResults.betweenness.score", names, 5), [score]);
        assert_eq!(closest("schemascope.betweenness.score", names, 5)[0], score);
        // Bare names keep matching by their last segment.
        assert_eq!(closest("score", names, 1), [score]);
        assert_eq!(closest("peak", names, 1), ["metrics.cpu.peak"]);
        // A dotted path sharing only its last segment is not close.
        assert!(closest("deep.a.a.a.a.leaf.a", ["deep.a", "x.a", "a"], 3).is_empty());
    }
}
