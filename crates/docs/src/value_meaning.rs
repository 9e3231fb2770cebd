//! Stored values a question names by meaning rather than by their words ("Deutschland" for
//! `Germany`, "the States" for `USA`, "drinks" for `Beverages`): the question's short phrases
//! and the stored values, as vectors of the embedding model, compared by cosine. The value
//! index finds what the question spells; this finds what it means, above a high floor, beside.

use std::collections::HashSet;

use schemascope_core::Catalog;
use schemascope_core::terms::{is_content_term, is_stopword, singular, tokenize};
use schemascope_core::value_index::{ValueIndex, ValueMatch, fold};

use crate::dense::Dense;
#[cfg(test)]
use crate::dense::{Encoder, Vectors};

/// Most stored values encoded per index (the first, in the value index's order, of the
/// columns [`meaning_entries`] takes): a value costs the model a few milliseconds once, and
/// every question compares its phrases with all.
pub const MAX_ENCODED_VALUES: usize = 5_000;
/// Most distinct values of a column whose values are matched by meaning: a vocabulary
/// (countries, genres, categories, titles), not names and titles of things, whose words
/// mean something else ("Money", "Without You" are songs).
pub const MAX_VOCABULARY_VALUES: usize = 100;
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

/// The values matched by meaning, as `(table, column, value)` in the value index's order: those
/// of every column read whole with at most [`MAX_VOCABULARY_VALUES`] values that is no key of
/// its table (an identifier such as `OCEAN` names a customer, not the sea), at most
/// [`MAX_ENCODED_VALUES`] in all.
pub fn meaning_entries<'v>(
    values: &'v ValueIndex,
    catalog: &Catalog,
) -> Vec<(&'v str, &'v str, &'v str)> {
    let is_key = |table: &str, column: &str| {
        catalog.table(table).is_some_and(|t| {
            let same = |c: &String| c.eq_ignore_ascii_case(column);
            t.primary_key.iter().any(same)
                || t.foreign_keys.iter().any(|fk| fk.columns.iter().any(same))
        })
    };
    values
        .columns()
        .filter(|(table, column, complete, values)| {
            *complete && values.len() <= MAX_VOCABULARY_VALUES && !is_key(table, column)
        })
        .flat_map(|(table, column, _, values)| values.map(move |value| (table, column, value)))
        .take(MAX_ENCODED_VALUES)
        .collect()
}

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
/// each of the question's [`phrases`] names the value whose vector (`dense.values`, of the
/// [`meaning_entries`]) is nearest, in every column that stores it, when it is at least
/// [`VALUE_FLOOR`] near and [`VALUE_GAP`] nearer than any other value. A phrase whose nearest
/// value shares a word with it ("artists": `Various Artists`; "Egypt": `Egypt`) is the words'
/// to name, and one that `known` lists is not repeated.
pub(crate) fn meant_values(
    dense: &Dense,
    values: &ValueIndex,
    catalog: &Catalog,
    question: &str,
    known: &[ValueMatch],
    max: usize,
) -> Vec<ValueMatch> {
    let vectors = &dense.values;
    if vectors.is_empty() || max == 0 {
        return Vec::new();
    }
    // A phrase of the schema's own words says where to look, not which value.
    let phrases: Vec<String> =
        phrases(question).into_iter().filter(|p| !values.only_schema_words(p)).collect();
    let Ok(phrase_vectors) = dense.phrase_vectors(&phrases) else { return Vec::new() };
    let entries = meaning_entries(values, catalog);
    if entries.len() != vectors.len() {
        // Not the values encoded (a value index attached after): nothing is matched by meaning.
        return Vec::new();
    }
    // Per value: its best cosine and the phrase that named it.
    let mut best: Vec<(f32, usize)> = vec![(f32::MIN, 0); entries.len()];
    for (p, phrase) in phrases.iter().enumerate() {
        let phrase_words = word_set(phrase);
        let cosines = vectors.similarities(phrase_vectors.get(p));
        // The nearest value's text (stored in one column or several), and the nearest other.
        let Some((top, (_, _, nearest))) =
            cosines.iter().zip(&entries).max_by(|a, b| a.0.total_cmp(b.0))
        else {
            continue;
        };
        let runner_up = cosines
            .iter()
            .zip(&entries)
            .filter(|(_, (_, _, value))| value != nearest)
            .map(|(c, _)| *c)
            .fold(f32::MIN, f32::max);
        if *top < VALUE_FLOOR
            || *top - runner_up < VALUE_GAP
            || !word_set(nearest).is_disjoint(&phrase_words)
        {
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

/// The words of `text` that carry meaning, folded and singular: what a phrase and a value
/// sharing a word share.
fn word_set(text: &str) -> HashSet<String> {
    fold(text)
        .split(' ')
        .filter(|w| w.chars().count() >= 2 && !is_stopword(w))
        .map(|w| singular(w).into_owned())
        .collect()
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
        let catalog = Catalog::default();
        let texts: Vec<String> =
            meaning_entries(&values, &catalog).iter().map(|(_, _, v)| v.to_string()).collect();
        let vectors = Vectors::encode(&Synonyms, &texts).unwrap();
        let dense = Dense::new(
            std::sync::Arc::new(Synonyms),
            Vectors::default(),
            Vectors::default(),
            vectors,
        );
        // Twice: the second time from remembered phrase vectors, the same.
        let first = meant_values(&dense, &values, &catalog, question, known, 8);
        assert_eq!(meant_values(&dense, &values, &catalog, question, known, 8), first);
        first
            .into_iter()
            .map(|m| format!("{}.{}={} ({})", m.table, m.column, m.value, m.meant_by.unwrap()))
            .collect()
    }

    #[test]
    fn only_vocabularies_are_matched_by_meaning() {
        use schemascope_core::{ColumnInfo, ForeignKey, TableInfo, TableKind};
        let column = |table: &str, column: &str, values: Vec<String>| ColumnValues {
            table: table.into(),
            column: column.into(),
            values,
            complete: true,
        };
        let songs: Vec<String> = (0..=MAX_VOCABULARY_VALUES).map(|i| format!("Song {i}")).collect();
        let values = ValueIndex::new(vec![
            column("Customer", "Country", vec!["Germany".into(), "USA".into()]),
            column("Customer", "CustomerID", vec!["OCEAN".into()]),
            column("Track", "Name", songs),
            column("Order", "CustomerID", vec!["OCEAN".into()]),
        ]);
        let table = |name: &str, key: &str, fk: Option<&str>| TableInfo {
            name: name.into(),
            kind: TableKind::Table,
            columns: vec![ColumnInfo {
                name: key.into(),
                declared_type: "TEXT".into(),
                nullable: false,
                comment: None,
                base_type: None,
            }],
            primary_key: if fk.is_none() { vec![key.into()] } else { Vec::new() },
            foreign_keys: fk
                .map(|to| ForeignKey {
                    columns: vec![key.into()],
                    referenced_table: to.into(),
                    referenced_columns: vec![key.into()],
                })
                .into_iter()
                .collect(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        };
        let catalog = Catalog {
            tables: vec![
                table("Customer", "CustomerID", None),
                table("Order", "CustomerID", Some("Customer")),
            ],
        };
        // Keys (primary or foreign) and a column of more than a vocabulary's values are left out.
        assert_eq!(
            meaning_entries(&values, &catalog),
            [("Customer", "Country", "Germany"), ("Customer", "Country", "USA")]
        );
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
        // A value the question spells is the words' to find (and no other is named in its
        // stead), and one already found is not repeated.
        assert!(meant("customers in Germany", &[]).is_empty());
        assert!(meant("customers in Germany Germany", &[]).is_empty());
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
