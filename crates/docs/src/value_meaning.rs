//! Stored values a question names by meaning rather than by their words ("Deutschland" for
//! `Germany`, "the States" for `USA`, "drinks" for `Beverages`): the question's short phrases
//! and the stored values, as vectors of the embedding model, compared by cosine. The value
//! index finds what the question spells; this finds what it means, above a high floor, beside.

use schemascope_core::terms::{is_content_term, tokenize};
use schemascope_core::value_index::{ValueIndex, ValueMatch, fold};

use crate::dense::{Encoder, Vectors};

/// Most stored values encoded per index (the value index's first, in its order): a value costs
/// the model a few milliseconds once, and every question compares its phrases with all.
pub const MAX_ENCODED_VALUES: usize = 5_000;
/// Most phrases of one question encoded (one to three words each, shortest first).
const MAX_PHRASES: usize = 32;
/// Longest phrase, in words.
const MAX_PHRASE_WORDS: usize = 3;
/// Least cosine between a phrase and the value it names ("Deutschland" and `Germany` are at
/// 0.84, "US" and `USA` 0.86, "French" and `France` 0.74).
pub const VALUE_FLOOR: f32 = 0.7;
/// How much nearer the phrase its value must be than any other value: a country's adjective is
/// near every country ("US": `USA` 0.86, `Canada` 0.74), so the nearest is named only when it
/// stands out.
pub const VALUE_GAP: f32 = 0.1;

/// The phrases of `question` a stored value may be named by: runs of one to three words that
/// start and end with a word that carries meaning (a stopword or question phrasing inside is
/// kept: "rhythm and blues"), or an acronym ("US", "IT"); one-word phrases first.
pub fn phrases(question: &str) -> Vec<String> {
    let words: Vec<&str> = question
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.trim_matches(['\'', '’']))
        .filter(|w| !w.is_empty())
        .collect();
    let meaningful = |word: &str| {
        let acronym = word.chars().count() >= 2 && word.chars().all(|c| c.is_uppercase());
        acronym || tokenize(word).iter().any(|t| is_content_term(t))
    };
    let ends: Vec<bool> = words.iter().map(|w| meaningful(w)).collect();
    let mut out: Vec<String> = Vec::new();
    for n in 1..=MAX_PHRASE_WORDS {
        for start in 0..words.len().saturating_sub(n - 1) {
            let end = start + n - 1;
            if !(ends[start] && ends[end]) {
                continue;
            }
            let phrase = words[start..=end].join(" ");
            if !out.contains(&phrase) {
                out.push(phrase);
            }
            if out.len() == MAX_PHRASES {
                return out;
            }
        }
    }
    out
}

/// The stored values `question` names by meaning and not by words, best first, at most `max`:
/// each of the question's [`phrases`] names the value whose vector (of `vectors`, the first
/// [`MAX_ENCODED_VALUES`] of `values`) is nearest, in every column that stores it, when it is
/// at least [`VALUE_FLOOR`] near and [`VALUE_GAP`] nearer than any other value. A value whose
/// words the phrase already has, or that `known` lists, is left to the words.
pub(crate) fn meant_values(
    encoder: &dyn Encoder,
    vectors: &Vectors,
    values: &ValueIndex,
    question: &str,
    known: &[ValueMatch],
    max: usize,
) -> Vec<ValueMatch> {
    if vectors.is_empty() || max == 0 {
        return Vec::new();
    }
    let phrases = phrases(question);
    let Ok(phrase_vectors) = Vectors::encode(encoder, &phrases) else { return Vec::new() };
    let entries: Vec<(&str, &str, &str)> = values.entries().take(vectors.len()).collect();
    // Per value: its best cosine and the phrase that named it.
    let mut best: Vec<(f32, usize)> = vec![(f32::MIN, 0); entries.len()];
    for (p, phrase) in phrases.iter().enumerate() {
        let folded_phrase = fold(phrase);
        let phrase_words: Vec<&str> = folded_phrase.split(' ').collect();
        let cosines = vectors.similarities(phrase_vectors.get(p));
        let candidates = || {
            cosines
                .iter()
                .zip(&entries)
                .filter(|(_, (_, _, value))| !spelled_in(value, &phrase_words))
        };
        // The nearest value's text (stored in one column or several), and the nearest other.
        let Some((top, (_, _, nearest))) = candidates().max_by(|a, b| a.0.total_cmp(b.0)) else {
            continue;
        };
        let runner_up = candidates()
            .filter(|(_, (_, _, value))| value != nearest)
            .map(|(c, _)| *c)
            .fold(f32::MIN, f32::max);
        if *top < VALUE_FLOOR || *top - runner_up < VALUE_GAP {
            continue;
        }
        for (i, (_, _, value)) in entries.iter().enumerate() {
            if value == nearest && *top > best[i].0 {
                best[i] = (*top, p);
            }
        }
    }
    let mut found: Vec<ValueMatch> = best
        .iter()
        .zip(&entries)
        .filter(|((cosine, _), _)| *cosine >= VALUE_FLOOR)
        .filter(|(_, (table, column, value))| {
            !known.iter().any(|k| k.table == *table && k.column == *column && k.value == *value)
        })
        .map(|((cosine, p), (table, column, value))| ValueMatch {
            table: table.to_string(),
            column: column.to_string(),
            value: value.to_string(),
            coverage: f64::from(*cosine),
            whole: false,
            partial: false,
            meant_by: Some(phrases[*p].clone()),
        })
        .collect();
    found.sort_by(|a, b| {
        b.coverage
            .total_cmp(&a.coverage)
            .then_with(|| (&a.table, &a.column, &a.value).cmp(&(&b.table, &b.column, &b.value)))
    });
    found.truncate(max);
    found
}

/// Whether every word of `value` is among `phrase_words` (folded): then the phrase spells the
/// value, and whether it names it is the value index's call.
fn spelled_in(value: &str, phrase_words: &[&str]) -> bool {
    let folded = fold(value);
    folded.split(' ').filter(|w| !w.is_empty()).all(|w| phrase_words.contains(&w))
}

#[cfg(test)]
mod tests {
    use schemascope_core::value_index::ColumnValues;

    use super::*;

    #[test]
    fn phrases_start_and_end_with_meaning() {
        let p = phrases("How many customers live in the US or in Deutschland?");
        assert!(p.contains(&"US".to_string()), "{p:?}");
        assert!(p.contains(&"Deutschland".to_string()), "{p:?}");
        assert!(p.contains(&"customers live".to_string()), "{p:?}");
        assert!(!p.iter().any(|x| x == "How" || x == "the US" || x.starts_with("in ")), "{p:?}");
        let p = phrases("tracks in the rhythm and blues genre");
        assert!(p.contains(&"rhythm and blues".to_string()), "{p:?}");
        assert!(phrases("").is_empty());
        assert!(phrases(&"word ".repeat(1000)).len() <= MAX_PHRASES);
    }

    /// A model that knows a few synonyms (each concept one axis); any other word is a fixed
    /// pseudo-random direction of its own, so that unrelated words are far apart.
    #[derive(Debug)]
    struct Synonyms;

    impl Encoder for Synonyms {
        fn encode(&self, text: &str) -> Vec<f32> {
            let concepts: [&[&str]; 3] =
                [&["germany", "deutschland"], &["usa", "us", "states"], &["beverages", "drinks"]];
            let text = text.to_lowercase();
            let mut v = vec![0f32; 3 + 64];
            for word in text.split(' ') {
                match concepts.iter().position(|c| c.contains(&word)) {
                    Some(axis) => v[axis] += 1.0,
                    None => {
                        let mut seed = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                        });
                        for x in &mut v[3..] {
                            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                            *x += ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2;
                        }
                    }
                }
            }
            v
        }
    }

    fn index() -> ValueIndex {
        let column = |table: &str, column: &str, values: &[&str]| ColumnValues {
            table: table.into(),
            column: column.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            complete: true,
        };
        ValueIndex::new(vec![
            column("Customer", "Country", &["Germany", "USA", "France"]),
            column("Invoice", "BillingCountry", &["Germany", "USA"]),
            column("Category", "Name", &["Beverages", "Seafood"]),
        ])
    }

    fn meant(question: &str, known: &[ValueMatch]) -> Vec<String> {
        let values = index();
        let texts: Vec<String> = values.entries().map(|(_, _, v)| v.to_string()).collect();
        let vectors = Vectors::encode(&Synonyms, &texts).unwrap();
        meant_values(&Synonyms, &vectors, &values, question, known, 8)
            .into_iter()
            .map(|m| format!("{}.{}={} ({})", m.table, m.column, m.value, m.meant_by.unwrap()))
            .collect()
    }

    #[test]
    fn values_named_by_meaning_are_found_in_every_column_that_stores_them() {
        assert_eq!(
            meant("invoices billed to Deutschland", &[]),
            [
                "Customer.Country=Germany (Deutschland)",
                "Invoice.BillingCountry=Germany (Deutschland)"
            ]
        );
        assert_eq!(meant("list the drinks", &[]), ["Category.Name=Beverages (drinks)"]);
        // Nothing meant: nothing named.
        assert!(meant("list the seafood dishes of France", &[]).is_empty());
        // A value the question spells is the words' to find, and one already found is not
        // repeated.
        assert!(meant("customers in Germany", &[]).is_empty());
        let known = ValueMatch {
            table: "Category".into(),
            column: "Name".into(),
            value: "Beverages".into(),
            coverage: 1.0,
            whole: true,
            partial: false,
            meant_by: None,
        };
        assert!(meant("list the drinks", &[known]).is_empty());
    }
}
