//! The stored text values of a source's columns, searchable the way people name them: without
//! case, accents or punctuation ("sao jose dos campos" finds `São José dos Campos`, "AC DC"
//! finds `AC/DC`), by some of their words ("the customer who works at JetBrains" finds
//! `JetBrains s.r.o.`), singular or plural ("beverages"), and with a typo ("Aerosmit").
//!
//! A value matches a text when the text covers most of the value's weight: each word of the
//! value weighs its rarity among all indexed values (so `[Disc 1]` or `Inc.` weigh little and
//! `Zeppelin` much), a word found with a typo counts for less, and single characters and
//! stopwords weigh nothing unless the whole value is written out. Built once per source from its
//! columns' distinct values; every list and loop is bounded.

use std::collections::{HashMap, HashSet};

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::terms::{QUESTION_PHRASING_WEIGHT, is_stopword, question_weight, singular};

/// Longest value matched, in characters: longer text is prose (descriptions, notes), which
/// people do not quote in questions.
pub const MAX_VALUE_CHARS: usize = 120;
/// Longest value kept in a column's list (for [`ValueIndex::complete_values`]); a column with a
/// longer one is not complete.
pub const MAX_LISTED_CHARS: usize = 1_000;
/// Most values indexed per source, all columns together.
pub const MAX_INDEXED_VALUES: usize = 1_000_000;
/// Least share of a value's weight a text must cover for the value to match.
const MIN_COVERAGE: f64 = 0.6;
/// A word in at most this many values, written out in full, says which value is meant even
/// when the value has other words (`mozzarella` → `Mozzarella di Giovanni`).
const DISTINCTIVE_VALUES: usize = 3;
/// Least length of such a word, in characters.
const DISTINCTIVE_CHARS: usize = 5;
/// Least coverage of a value matched by a distinctive word.
const MIN_DISTINCTIVE_COVERAGE: f64 = 0.15;
/// Most words of a text looked up (a question is short; a pasted document is cut).
const MAX_TEXT_WORDS: usize = 200;
/// A word found in more values than this is too common to say which one is meant by itself.
const MAX_POSTINGS_SCANNED: usize = 50_000;

/// One column's distinct values, as the database stores them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnValues {
    /// The table.
    pub table: String,
    /// The column.
    pub column: String,
    /// Its distinct values.
    pub values: Vec<String>,
    /// True when `values` are all of the column's distinct values (nothing left out).
    pub complete: bool,
}

/// A stored value a text names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ValueMatch {
    /// The table.
    pub table: String,
    /// The column.
    pub column: String,
    /// The value exactly as stored.
    pub value: String,
    /// How much of the value's weight the text covers, 0 to 1 (1: every word, no typo).
    pub coverage: f64,
    /// True when the text holds the whole value as a phrase (case, accents and punctuation
    /// aside).
    pub whole: bool,
    /// True when some word of the value that carries meaning is not in the text (the value was
    /// named by its other words): shown as such.
    pub partial: bool,
    /// The text's words that mean the value, when an embedding model matched it by meaning
    /// rather than by its words ("Deutschland" for `Germany`; `coverage` is then the cosine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meant_by: Option<String>,
}

#[derive(Debug)]
struct Indexed {
    column: u32,
    value: String,
    /// Folded words, in order.
    words: Vec<String>,
}

/// The searchable values of one source.
#[derive(Debug, Default)]
pub struct ValueIndex {
    columns: Vec<(String, String)>,
    /// Per column: whether every one of its distinct values is indexed.
    complete: Vec<bool>,
    /// Per column: its values' range in `values`.
    ranges: Vec<std::ops::Range<usize>>,
    values: Vec<Indexed>,
    /// Folded word → the values that have it.
    postings: HashMap<String, Vec<u32>>,
    /// The distinct words, by length in characters, for typo lookups.
    words_by_length: Vec<Vec<String>>,
    /// Words of the schema's own names (tables, columns): a question uses them to say where to
    /// look, so they never single a value out by themselves.
    schema_words: HashSet<String>,
}

/// `text` lowercased, accents dropped, every run of other characters than letters and digits
/// a single space.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = true;
    for c in text.nfd().filter(|c| !is_combining_mark(*c)) {
        if matches!(c, '\'' | '’' | '‘' | '`' | 'ʼ') {
            // People drop apostrophes: "gday" for `G'day`, "90s" for `90’s`.
            continue;
        }
        if let Some(spelled) = spelled_out(c) {
            out.push_str(spelled);
            space = false;
        } else if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// Letters with no accent to drop that people type as other letters (German, Nordic,
/// French ligatures, Polish, Croatian, Icelandic, Turkish).
fn spelled_out(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' | 'ẞ' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        'ø' | 'Ø' => "o",
        'ł' | 'Ł' => "l",
        'đ' | 'Đ' => "d",
        'þ' | 'Þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// The words of `text`, folded, plurals singular.
fn words(text: &str) -> Vec<String> {
    fold(text).split(' ').filter(|w| !w.is_empty()).map(|w| singular(w).into_owned()).collect()
}

/// Whether a word says nothing by itself: a single character or a stopword. Numbers of two
/// digits or more weigh like words: `14 Years` is not named by "per year".
fn weightless(word: &str) -> bool {
    word.chars().count() < 2 || is_stopword(word)
}

/// Edits allowed between a word of the text and a stored word of `len` characters.
fn allowed_typos(len: usize) -> usize {
    match len {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }
}

impl ValueIndex {
    /// Indexes `columns`' values (values longer than [`MAX_VALUE_CHARS`] or past
    /// [`MAX_INDEXED_VALUES`] are left out).
    pub fn new(columns: Vec<ColumnValues>) -> Self {
        let mut index = Self::default();
        for column in columns {
            let id = index.columns.len() as u32;
            index.columns.push((column.table, column.column));
            let start = index.values.len();
            let mut complete = column.complete;
            for value in column.values {
                if index.values.len() >= MAX_INDEXED_VALUES {
                    complete = false;
                    break;
                }
                let chars = value.chars().count();
                if chars > MAX_LISTED_CHARS {
                    complete = false;
                    continue;
                }
                let words = if chars > MAX_VALUE_CHARS { Vec::new() } else { words(&value) };
                if words.is_empty() {
                    // Kept for the column's list, never matched.
                    index.values.push(Indexed { column: id, value, words });
                    continue;
                }
                let value_id = index.values.len() as u32;
                let mut seen = HashSet::new();
                for word in &words {
                    if seen.insert(word.clone()) {
                        index.postings.entry(word.clone()).or_default().push(value_id);
                    }
                }
                index.values.push(Indexed { column: id, value, words });
            }
            index.complete.push(complete);
            index.ranges.push(start..index.values.len());
        }
        for word in index.postings.keys() {
            let len = word.chars().count();
            if index.words_by_length.len() <= len {
                index.words_by_length.resize(len + 1, Vec::new());
            }
            index.words_by_length[len].push(word.clone());
        }
        index
    }

    /// The same index, told the words of the schema's names (see `schema_words`).
    pub fn with_schema_words<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> Self {
        self.schema_words = names.into_iter().flat_map(words).collect();
        self
    }

    /// Whether every word of `text` is a word of the schema's names (see `schema_words`), which
    /// say where to look rather than which value: "customers", "invoice lines".
    pub fn only_schema_words(&self, text: &str) -> bool {
        let words = words(text);
        !words.is_empty() && words.iter().all(|w| self.schema_words.contains(w))
    }

    /// How rare `word` is among the values (inverse document frequency).
    fn weight(&self, word: &str) -> f64 {
        if weightless(word) {
            return 0.0;
        }
        let df = self.postings.get(word).map_or(1, Vec::len) as f64;
        (1.0 + self.values.len() as f64 / df).ln()
    }

    /// The stored words `word` may be, with the credit each gets: itself, and words a typo or
    /// two away (for words long enough that a typo is told from another word).
    fn readings(&self, word: &str, typos_of_known_words: bool) -> Vec<(String, f64)> {
        let known = self.postings.contains_key(word);
        if known && !typos_of_known_words {
            // In a question, a word of the data is that word, not a typo of another ("carlos"
            // is no "carol"). A literal looked up in one column may be a typo of its value
            // ("brasil" in a country column, whatever a song is called).
            return vec![(word.to_string(), 1.0)];
        }
        let mut out = Vec::new();
        if known {
            out.push((word.to_string(), 1.0));
        }
        if weightless(word) || !word.chars().all(char::is_alphabetic) {
            return out;
        }
        let len = word.chars().count();
        for other_len in len.saturating_sub(2)..=len + 2 {
            let Some(candidates) = self.words_by_length.get(other_len) else { continue };
            let allowed = allowed_typos(len.min(other_len));
            if allowed == 0 {
                continue;
            }
            for candidate in candidates {
                if candidate == word {
                    continue;
                }
                let distance = strsim::damerau_levenshtein(word, candidate);
                if distance <= allowed {
                    out.push((candidate.clone(), 1.0 - 0.2 * distance as f64));
                }
            }
        }
        out
    }

    /// The values `text` names, best first, at most `max`; only values in `columns` when given.
    /// With `both_ways`, the text must also be mostly the value (for a literal, not a question).
    fn find(
        &self,
        text: &str,
        max: usize,
        column: Option<&dyn Fn(u32) -> bool>,
        both_ways: bool,
    ) -> Vec<ValueMatch> {
        let mut text_words = words(text);
        text_words.truncate(MAX_TEXT_WORDS);
        // Credit per (value, stored word): the best reading of any word of the text, and the
        // text word it read.
        let mut credit: HashMap<u32, HashMap<&str, (f64, usize)>> = HashMap::new();
        let mut distinct: Vec<&String> = Vec::new();
        for word in &text_words {
            if !distinct.contains(&word) {
                distinct.push(word);
            }
        }
        let readings: Vec<Vec<(String, f64)>> =
            distinct.iter().map(|w| self.readings(w, both_ways)).collect();
        for (position, readings) in readings.iter().enumerate() {
            for (stored, quality) in readings {
                let Some(values) = self.postings.get(stored) else { continue };
                if values.len() > MAX_POSTINGS_SCANNED {
                    continue;
                }
                for &value in values {
                    if column.is_some_and(|keep| !keep(self.values[value as usize].column)) {
                        continue;
                    }
                    let entry = credit
                        .entry(value)
                        .or_default()
                        .entry(stored.as_str())
                        .or_insert((0.0, position));
                    if *quality > entry.0 {
                        *entry = (*quality, position);
                    }
                }
            }
        }
        let folded_text = format!(" {} ", text_words.join(" "));
        let surface_text = format!(" {} ", fold(text));
        let max_weight = (1.0 + self.values.len() as f64).ln();
        let mut found: Vec<(ValueMatch, bool)> = credit
            .into_iter()
            .filter_map(|(value, credits)| {
                let indexed = &self.values[value as usize];
                let whole = folded_text.contains(&format!(" {} ", indexed.words.join(" ")));
                let total: f64 = indexed.words.iter().map(|w| self.weight(w)).sum();
                // In a question, words of degree ("longest", "top") and the schema's own names
                // ("company", "title") say how and where to query, not what.
                let phrasing = |w: &str| {
                    if both_ways {
                        1.0
                    } else if self.schema_words.contains(w) {
                        QUESTION_PHRASING_WEIGHT
                    } else {
                        question_weight(w)
                    }
                };
                let covered: f64 =
                    credits.iter().map(|(w, (q, _))| self.weight(w) * q * phrasing(w)).sum();
                let coverage = if whole {
                    1.0
                } else if total > 0.0 {
                    covered / total
                } else {
                    0.0
                };
                // Numbers alone do not name a value ("year 1999" is no `Rock 1999`).
                let worded = credits.keys().any(|w| w.chars().any(char::is_alphabetic));
                let distinctive = credits.iter().any(|(w, (q, _))| {
                    *q >= 1.0
                        && w.chars().count() >= DISTINCTIVE_CHARS
                        && self.postings.get(*w).is_some_and(|v| v.len() <= DISTINCTIVE_VALUES)
                        && !weightless(w)
                        && !self.schema_words.contains(*w)
                        && question_weight(w) >= 1.0
                });
                let enough = coverage >= MIN_COVERAGE
                    || (distinctive && coverage >= MIN_DISTINCTIVE_COVERAGE);
                // A question's numbers are amounts and years, not names: a value is named by
                // words (a literal may be a number).
                // A value with small words that the question does not spell out is named by
                // two of its words that carry meaning, or a rare one: "live" is no `Live With
                // Me`, "rock" no `We Will Rock You`, but "paralamas do sucesso" is `Os Paralamas
                // Do Sucesso`.
                let has_small_words = indexed.words.iter().any(|w| is_stopword(w));
                let meaningful = credits.keys().filter(|w| !weightless(w)).count();
                let small_words_ok = !has_small_words || meaningful >= 2 || distinctive;
                // Spelled out, it must still say something of its own: `ON`, `Numbers` or
                // `Title` are the question's words, not a value it names.
                let says_something = indexed.words.iter().any(|w| {
                    !weightless(w) && !self.schema_words.contains(w) && question_weight(w) >= 1.0
                });
                let named = if both_ways {
                    whole || (enough && covered > 0.0)
                } else if whole {
                    says_something
                } else {
                    enough && covered > 0.0 && small_words_ok
                };
                let mut keep = (worded || both_ways) && named;
                if keep && both_ways {
                    // The literal's own words must be mostly in the value: "United States" is
                    // not "United Kingdom".
                    let used: HashSet<usize> = credits.values().map(|(_, p)| *p).collect();
                    let weigh = |w: &str| {
                        if weightless(w) {
                            0.0
                        } else if self.postings.contains_key(w) {
                            self.weight(w)
                        } else {
                            max_weight
                        }
                    };
                    let all: f64 = distinct.iter().map(|w| weigh(w)).sum();
                    let read: f64 = distinct
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| used.contains(i))
                        .map(|(_, w)| weigh(w))
                        .sum();
                    keep = all > 0.0 && read / all >= MIN_COVERAGE;
                }
                let surface = surface_text.contains(&format!(" {} ", fold(&indexed.value)));
                let (table, column) = &self.columns[indexed.column as usize];
                keep.then(|| {
                    (
                        ValueMatch {
                            table: table.clone(),
                            column: column.clone(),
                            value: indexed.value.clone(),
                            coverage,
                            whole,
                            meant_by: None,
                            partial: !whole
                                && indexed
                                    .words
                                    .iter()
                                    .any(|w| !weightless(w) && !credits.contains_key(w.as_str())),
                        },
                        surface,
                    )
                })
            })
            .collect();
        // Whole phrases first, written as stored before read through plurals; then coverage,
        // then longer values (more said), then stably.
        found.sort_by(|(a, a_surface), (b, b_surface)| {
            b.whole
                .cmp(&a.whole)
                .then(b_surface.cmp(a_surface))
                .then(b.coverage.total_cmp(&a.coverage))
                .then(b.value.len().cmp(&a.value.len()))
                .then_with(|| (&a.table, &a.column, &a.value).cmp(&(&b.table, &b.column, &b.value)))
        });
        found.truncate(max);
        found.into_iter().map(|(m, _)| m).collect()
    }

    /// The values a question names, best first, at most `max`.
    pub fn matches(&self, text: &str, max: usize) -> Vec<ValueMatch> {
        self.find(text, max, None, false)
    }

    /// Stored values of `table.column` closest to `literal`, best first, at most `max`: the
    /// same matching as [`ValueIndex::matches`], within one column (names compared ASCII
    /// case-insensitively, as SQL compares unquoted names).
    pub fn similar(&self, table: &str, column: &str, literal: &str, max: usize) -> Vec<String> {
        let wanted: HashSet<u32> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, (t, c))| t.eq_ignore_ascii_case(table) && c.eq_ignore_ascii_case(column))
            .map(|(i, _)| i as u32)
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let keep = |c: u32| wanted.contains(&c);
        self.find(literal, max, Some(&keep), true).into_iter().map(|m| m.value).collect()
    }

    /// The position of `table.column`, exact names first, then ASCII case-insensitively.
    fn column_id(&self, table: &str, column: &str) -> Option<usize> {
        self.columns.iter().position(|(t, c)| t == table && c == column).or_else(|| {
            self.columns
                .iter()
                .position(|(t, c)| t.eq_ignore_ascii_case(table) && c.eq_ignore_ascii_case(column))
        })
    }

    /// Each column read, in index order: its table, its name, whether all its distinct values
    /// were indexed, and the values indexed.
    pub fn columns(
        &self,
    ) -> impl Iterator<Item = (&str, &str, bool, impl ExactSizeIterator<Item = &str> + '_)> {
        self.columns.iter().zip(&self.ranges).zip(&self.complete).map(
            |(((table, column), range), complete)| {
                let values = self.values[range.clone()].iter().map(|v| v.value.as_str());
                (table.as_str(), column.as_str(), *complete, values)
            },
        )
    }

    /// Whether `table.column`'s values were read (complete or not).
    pub fn has_column(&self, table: &str, column: &str) -> bool {
        self.column_id(table, column).is_some()
    }

    /// Every distinct value of `table.column`, when all were indexed (`None` when the column
    /// was not read, or some of its values were left out).
    pub fn complete_values(&self, table: &str, column: &str) -> Option<Vec<String>> {
        let id = self.column_id(table, column)?;
        self.complete[id]
            .then(|| self.values[self.ranges[id].clone()].iter().map(|v| v.value.clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> ValueIndex {
        let column = |table: &str, column: &str, values: &[&str]| ColumnValues {
            table: table.into(),
            column: column.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            complete: true,
        };
        ValueIndex::new(vec![
            column(
                "Genre",
                "Name",
                &["Rock", "Bossa Nova", "Jazz", "Heavy Metal", "Rock And Roll"],
            ),
            column("Customer", "City", &["São José dos Campos", "São Paulo", "Paris", "Prague"]),
            column(
                "Customer",
                "Company",
                &[
                    "JetBrains s.r.o.",
                    "Embraer - Empresa Brasileira de Aeronáutica S.A.",
                    "Microsoft Corporation",
                ],
            ),
            column("Artist", "Name", &["AC/DC", "Aerosmith", "Led Zeppelin", "The Who"]),
            column(
                "Album",
                "Title",
                &[
                    "Physical Graffiti [Disc 1]",
                    "Physical Graffiti [Disc 2]",
                    "Greatest Hits",
                    "Let There Be Rock",
                ],
            ),
            column("Categories", "CategoryName", &["Beverages", "Condiments"]),
            column("Products", "ProductName", &["Mozzarella di Giovanni", "Queso Cabrales"]),
        ])
    }

    fn first(text: &str) -> Option<(String, String)> {
        index()
            .matches(text, 5)
            .first()
            .map(|m| (format!("{}.{}", m.table, m.column), m.value.clone()))
    }

    #[test]
    fn values_are_found_as_people_write_them() {
        let cases = [
            ("How many bossa nova tracks?", "Genre.Name", "Bossa Nova"),
            ("customers in Sao Jose dos Campos", "Customer.City", "São José dos Campos"),
            ("the customer who works at JetBrains", "Customer.Company", "JetBrains s.r.o."),
            ("albums by AC DC", "Artist.Name", "AC/DC"),
            ("songs by aerosmit", "Artist.Name", "Aerosmith"),
            ("all beverage products", "Categories.CategoryName", "Beverages"),
            ("tracks of Physical Graffiti", "Album.Title", "Physical Graffiti [Disc 1]"),
        ];
        for (text, column, value) in cases {
            assert_eq!(first(text), Some((column.to_string(), value.to_string())), "{text}");
        }
    }

    #[test]
    fn common_words_and_partial_multiword_values_do_not_match() {
        // "the" alone is no artist; one word of a three-word value is not the value.
        assert!(index().matches("what is the best seller", 5).iter().all(|m| m.value != "The Who"));
        assert!(index().matches("rock music", 5).iter().all(|m| m.value != "Let There Be Rock"));
        assert!(index().matches("", 5).is_empty());
    }

    #[test]
    fn a_rare_word_written_out_names_a_longer_value() {
        assert_eq!(
            first("who bought mozzarella?"),
            Some(("Products.ProductName".into(), "Mozzarella di Giovanni".into()))
        );
    }

    #[test]
    fn the_whole_phrase_ranks_before_a_covering_one() {
        let found = index().matches("rock and roll", 5);
        assert_eq!(found[0].value, "Rock And Roll");
        assert!(found[0].whole);
    }

    #[test]
    fn schema_words_numbers_and_typos_of_real_words_name_nothing_alone() {
        let index = ValueIndex::new(vec![
            ColumnValues {
                table: "Album".into(),
                column: "Title".into(),
                values: vec![
                    "Carried to Dust (Bonus Track Version)".into(),
                    "Rock 1999".into(),
                    "Country Feedback".into(),
                ],
                complete: true,
            },
            ColumnValues {
                table: "Track".into(),
                column: "Name".into(),
                values: vec![
                    "Carol".into(),
                    "Carlos Santana".into(),
                    "Rock".into(),
                    "Rocks".into(),
                ],
                complete: true,
            },
        ])
        .with_schema_words(["Track", "Album", "Country", "Title", "Name"]);
        let shown = |q: &str| index.matches(q, 8).into_iter().map(|m| m.value).collect::<Vec<_>>();
        assert!(
            !shown("the ten longest tracks")
                .contains(&"Carried to Dust (Bonus Track Version)".to_string())
        );
        assert!(shown("revenue per country").is_empty(), "{:?}", shown("revenue per country"));
        assert!(shown("albums of year 1999").is_empty());
        assert!(!shown("songs by carlos").contains(&"Carol".to_string()));
        assert_eq!(shown("rock")[0], "Rock");
    }

    #[test]
    fn similar_values_are_looked_up_within_one_column() {
        assert_eq!(index().similar("customer", "city", "sao paulo", 3), ["São Paulo"]);
        // The literal's own words must be in the value.
        assert!(index().similar("Customer", "Company", "Microsoft Windows", 3).is_empty());
        assert_eq!(index().similar("Genre", "Name", "São Paulo", 3), Vec::<String>::new());
        assert!(index().similar("Nope", "Name", "rock", 3).is_empty());
    }

    #[test]
    fn a_column_is_complete_only_when_nothing_was_left_out() {
        let long = "x".repeat(MAX_LISTED_CHARS + 1);
        let index = ValueIndex::new(vec![
            ColumnValues {
                table: "T".into(),
                column: "a".into(),
                values: vec!["x".into(), "!".into()],
                complete: true,
            },
            ColumnValues {
                table: "T".into(),
                column: "b".into(),
                values: vec!["y".into(), long],
                complete: true,
            },
            ColumnValues {
                table: "T".into(),
                column: "c".into(),
                values: vec!["z".into()],
                complete: false,
            },
        ]);
        assert_eq!(index.complete_values("t", "A"), Some(vec!["x".to_string(), "!".to_string()]));
        assert_eq!(index.complete_values("T", "b"), None);
        assert_eq!(index.complete_values("T", "c"), None);
        assert_eq!(index.complete_values("T", "d"), None);
    }

    #[test]
    fn folding_drops_case_accents_and_punctuation() {
        assert_eq!(fold("  São-José  (dos) CAMPOS! "), "sao jose dos campos");
        assert_eq!(fold("Ærø Süßwaren"), "aero susswaren");
        assert_eq!(fold("G'day, Mate — 90’s"), "gday mate 90s");
        assert_eq!(fold(""), "");
    }
}
