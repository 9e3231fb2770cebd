//! The question a query answers, as the suggestions for a wrong name read it: its words (which
//! tables and columns it is about) and what it says a name stands for ("age = year(now) -
//! year(Birthday)", "salary appears in A11").

use std::collections::HashSet;

use schemascope_core::Catalog;
use schemascope_core::terms::tokenize;

use crate::issue::TableColumn;

/// Longest question read, in bytes: the rest is not searched for definitions.
const MAX_QUESTION_BYTES: usize = 4_000;
/// How far after a name its definition is looked for, in characters.
const DEFINITION_WINDOW: usize = 160;
/// Most columns one definition yields.
const MAX_DEFINED_COLUMNS: usize = 3;
/// What may stand between a name and the text that defines it.
const DEFINING_WORDS: &[&str] = &[
    "=",
    ":",
    "(",
    "refers to",
    "refer to",
    "means",
    "is",
    "stands for",
    "appears in",
    "is in",
    "can be acquired by",
    "is calculated as",
    "is computed as",
];

/// The question of a query, for suggestions.
#[derive(Debug, Clone, Default)]
pub(super) struct Question {
    /// Its index terms.
    pub terms: Vec<String>,
    /// Its text, lowercase, at most [`MAX_QUESTION_BYTES`].
    lower: String,
}

impl Question {
    /// `text`'s terms and, for definitions, its first [`MAX_QUESTION_BYTES`].
    pub(super) fn of(text: &str) -> Self {
        let mut end = text.len().min(MAX_QUESTION_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Self { terms: tokenize(text), lower: text[..end].to_lowercase() }
    }

    /// The question's terms as a set.
    pub(super) fn term_set(&self) -> HashSet<&str> {
        self.terms.iter().map(String::as_str).collect()
    }

    /// The catalog columns the question names where it says what `wanted` stands for ("age =
    /// SUBTRACT(year(now), year(Birthday))": `Birthday`), in the order it names them: where
    /// `wanted` (or its words, `_` read as a space) is followed by `=`, `:`, `(`, "refers to",
    /// "means" and the like, the columns written in the rest of that clause.
    pub(super) fn defined_as(&self, wanted: &str, catalog: &Catalog) -> Vec<TableColumn> {
        let wanted = wanted.trim().to_lowercase();
        if wanted.chars().count() < 2 || self.lower.is_empty() {
            return Vec::new();
        }
        let spellings: Vec<String> = {
            let spaced = wanted.replace('_', " ");
            if spaced == wanted { vec![wanted] } else { vec![wanted, spaced] }
        };
        let mut found: Vec<TableColumn> = Vec::new();
        for spelling in &spellings {
            for start in word_occurrences(&self.lower, spelling) {
                let Some(clause) = definition_after(&self.lower[start + spelling.len()..]) else {
                    continue;
                };
                for column in columns_named(clause, catalog) {
                    if found.len() < MAX_DEFINED_COLUMNS && !found.contains(&column) {
                        found.push(column);
                    }
                }
            }
        }
        found
    }
}

/// Byte offsets where `word` occurs in `text` between non-word characters.
fn word_occurrences<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    text.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The clause that defines a name, when `rest` (the text right after it) starts with a
/// defining word: up to the end of the sentence or clause, at most [`DEFINITION_WINDOW`]
/// characters.
fn definition_after(rest: &str) -> Option<&str> {
    let trimmed = rest.trim_start();
    let marker = DEFINING_WORDS.iter().find(|w| {
        trimmed.strip_prefix(**w).is_some_and(|after| {
            // A word marker ends at a word boundary ("is" is not "island").
            !w.chars().all(char::is_alphabetic) || !after.starts_with(is_word_char)
        })
    })?;
    let clause = trimmed[marker.len()..].trim_start();
    // `preferred_foot = 'left'` compares with a value; it defines nothing.
    if clause.starts_with(['\'', '"']) || clause.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    // The clause ends with its sentence, or where a parenthesis closes that opened before it
    // (`SUM(preferred_foot = x), COUNT(id)`: the definition is `x`).
    let mut depth = 0usize;
    let mut end = clause.len();
    for (n, (i, c)) in clause.char_indices().enumerate() {
        let closes_outer = c == ')' && depth == 0;
        let sentence_ends = c == ';' || (c == '.' && clause[i + 1..].starts_with([' ', '\n']));
        if n == DEFINITION_WINDOW || closes_outer || sentence_ends {
            end = i;
            break;
        }
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    Some(&clause[..end])
}

/// The catalog columns whose names `clause` writes as whole words, in the order written.
fn columns_named(clause: &str, catalog: &Catalog) -> Vec<TableColumn> {
    let mut named: Vec<(usize, TableColumn)> = Vec::new();
    for table in &catalog.tables {
        for column in &table.columns {
            let name = column.name.to_lowercase();
            // One- and two-letter names (`id`, `a`) are in every formula.
            if name.chars().count() < 3 {
                continue;
            }
            if let Some(at) = word_occurrences(clause, &name).next() {
                named.push((
                    at,
                    TableColumn { table: table.name.clone(), column: column.name.clone() },
                ));
            }
        }
    }
    named.sort_by_key(|(at, _)| *at);
    named.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::super::column_fixes::tests::table;
    use super::*;

    fn catalog() -> Catalog {
        Catalog {
            tables: vec![
                table("Patient", &["ID", "Birthday", "SEX"], &[]),
                table("frpm", &["Enrollment (K-12)", "Free Meal Count (K-12)"], &[]),
            ],
        }
    }

    fn named(question: &str, wanted: &str) -> Vec<String> {
        Question::of(question)
            .defined_as(wanted, &catalog())
            .into_iter()
            .map(|c| format!("{}.{}", c.table, c.column))
            .collect()
    }

    #[test]
    fn a_definition_names_its_columns() {
        let q = "Name the ID and age of each patient. age = SUBTRACT(year(current_timestamp), year(Birthday)); sex refers to SEX";
        assert_eq!(named(q, "age"), ["Patient.Birthday"]);
        // The definition ends at its clause: SEX belongs to the next one.
        assert_eq!(named(q, "patient_age"), Vec::<String>::new());
        let q = "Percent eligible = Free Meal Count (K-12) / Total (Enrollment (K-12)";
        assert_eq!(named(q, "Total"), ["frpm.Enrollment (K-12)"]);
        assert_eq!(
            named(q, "percent_eligible"),
            ["frpm.Free Meal Count (K-12)", "frpm.Enrollment (K-12)"]
        );
    }

    #[test]
    fn mentions_without_a_definition_name_nothing() {
        // "age" is a word of "average", and "birthday age" has no defining word after it.
        assert!(named("the average Birthday", "age").is_empty());
        assert!(named("sort by age Birthday first", "age").is_empty());
        assert!(named("", "age").is_empty());
        assert!(named("age = year(Birthday)", "").is_empty());
        // A comparison with a value, inside a formula, is no definition.
        assert!(named("share = DIVIDE(SUM(SEX = 'M'), COUNT(Birthday))", "SEX").is_empty());
        assert!(named("DIVIDE(SUM(age = x), COUNT(Birthday))", "age").is_empty());
    }
}
