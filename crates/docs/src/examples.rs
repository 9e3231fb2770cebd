//! Verified examples: questions a person confirmed, each with the SQL that answers it (as Vanna
//! keeps them). The most similar ones are shown with a question's context, so that the model
//! sees how this database answers questions like it.
//!
//! Two forms in the docs directory, both read:
//!
//! - [`EXAMPLES_FILE`], TOML:
//!
//!   ```toml
//!   [[example]]
//!   question = "Which artist has the most albums?"
//!   sql = """
//!   SELECT ar.Name, COUNT(*) AS albums FROM Artist ar JOIN Album al USING (ArtistId)
//!   GROUP BY ar.Name ORDER BY albums DESC LIMIT 1
//!   """
//!   ```
//!
//! - [`EXAMPLES_DIR`]`/*.sql`, one example per file, the question in the `--` comment lines it
//!   starts with.
//!
//! An entry may name its `source`: a file of pairs recorded for several sources keeps each for
//! its own. Reading never fails; what cannot be used is a [`DocWarning`] with file and line.
//! Whether an example still runs on the database is the caller's to check
//! ([`crate::SchemaIndex::build`] takes the ones that do).

use schemascope_core::Catalog;
use schemascope_core::terms::{question_weight, tokenize};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::parse::DocWarning;
use crate::toml_file::{read_toml, warning};

/// The examples file's name in a docs directory.
pub const EXAMPLES_FILE: &str = "_examples.toml";
/// The directory of one-example `.sql` files in a docs directory.
pub const EXAMPLES_DIR: &str = "_examples";
/// Examples read for one source at most (the rest are said, not read).
pub const MAX_EXAMPLES: usize = 1_000;
/// Longest question an example may have, in characters: a question is a sentence or two, and
/// each shown example's question goes whole into the model's context.
pub const MAX_QUESTION_CHARS: usize = 500;
/// Examples one context shows at most.
pub const MAX_EXAMPLES_SHOWN: usize = 3;
/// The least similarity (see [`ExampleIndex::similar`]) an example needs to be shown: below it,
/// an example shares little more than phrasing with the question.
const MIN_SIMILARITY: f64 = 0.3;
/// Similarity from which an example's tables are the question's own in a focused context
/// (below it, they are shown beside the retrieved ones).
pub(crate) const STRONG_SIMILARITY: f64 = 0.6;
/// With an embedding model, the cosine of two questions that counts as no likeness: between it
/// and 1 an example's semantic similarity grows linearly (sentence models put questions on one
/// topic near 0.5 and paraphrases above 0.8).
const SEMANTIC_FLOOR: f64 = 0.5;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    example: Vec<Spanned<Entry>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    question: String,
    sql: String,
    #[serde(default)]
    source: Option<String>,
    /// When it was recorded (written by `ask`'s recording; informational).
    #[serde(default)]
    #[allow(dead_code)]
    recorded: Option<toml::Value>,
}

/// A question and the SQL a person confirmed answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// The question, on one line.
    pub question: String,
    /// The SQL, trimmed.
    pub sql: String,
    /// The file it came from.
    pub file: String,
    /// Its line in that file.
    pub line: usize,
    /// The source it is for, when the file names one (else: the source whose docs hold it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Example {
    /// A warning about this example.
    pub fn warning(&self, message: String) -> DocWarning {
        warning(&self.file, self.line, message, false)
    }

    /// True when it is for `source` (it names none, or names that one).
    pub fn is_for(&self, source: &str) -> bool {
        self.source.as_deref().is_none_or(|s| s == source)
    }
}

/// Reads an examples file (TOML, see the module's notes): its examples, and a warning with its
/// line for every entry left out.
pub fn parse_examples(file: &str, text: &str) -> (Vec<Example>, Vec<DocWarning>) {
    let (read, mut warnings) = read_toml::<File>(file, text);
    let Some(read) = read else { return (Vec::new(), warnings) };
    let mut examples = Vec::new();
    for (at, entry) in read.parts.iter().flat_map(|(at, f)| f.example.iter().map(move |e| (*at, e)))
    {
        let line = read.line(at + entry.span().start);
        let entry = entry.get_ref();
        let question = one_line(&entry.question);
        let sql = entry.sql.trim().to_string();
        if question.is_empty() || sql.is_empty() {
            warnings.push(read.warning(line, "example without a question or SQL; left out".into()));
            continue;
        }
        if question.chars().count() > MAX_QUESTION_CHARS {
            warnings.push(read.warning(line, too_long(&question)));
            continue;
        }
        let source = entry.source.as_deref().map(str::trim).filter(|s| !s.is_empty());
        examples.push(Example {
            question,
            sql,
            file: file.to_string(),
            line,
            source: source.map(str::to_string),
        });
    }
    (examples, warnings)
}

/// Reads one `.sql` example: the `--` comment lines it starts with are the question (a leading
/// `question:` is dropped), the rest is the SQL.
pub fn parse_example_sql(file: &str, text: &str) -> Result<Example, DocWarning> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut question = Vec::new();
    let mut sql_start = text.len();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if let Some(comment) = trimmed.strip_prefix("--") {
            question.push(comment.trim());
        } else if !trimmed.is_empty() {
            sql_start = at;
            break;
        }
        at += line.len();
    }
    let question = one_line(&question.join(" "));
    let question = strip_label(&question);
    let sql = text[sql_start..].trim();
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(warning(file, 1, format!("{}; file skipped", too_long(question)), true));
    }
    let problem = match (question.is_empty(), sql.is_empty()) {
        (true, _) => "no question: start the file with the question as `--` comment lines",
        (false, true) => "no SQL after the question",
        (false, false) => {
            return Ok(Example {
                question: question.to_string(),
                sql: sql.to_string(),
                file: file.to_string(),
                line: 1,
                source: None,
            });
        }
    };
    Err(warning(file, 1, format!("{problem}; file skipped"), true))
}

/// Why a question too long to be shown is left out.
fn too_long(question: &str) -> String {
    format!(
        "question of {} characters, more than the {MAX_QUESTION_CHARS} an example may have; left out",
        question.chars().count()
    )
}

/// The text of one `[[example]]` entry recording `question` answered by `sql` for `source` at
/// `recorded` (an RFC 3339 time), to append to an examples file.
pub fn example_entry(source: &str, question: &str, sql: &str, recorded: &str) -> String {
    let recorded = match recorded.parse::<toml::value::Datetime>() {
        Ok(when) => when.to_string(),
        Err(_) => basic_string(recorded),
    };
    format!(
        "\n[[example]]\nsource = {}\nquestion = {}\nrecorded = {recorded}\nsql = \"\"\"\n{}\"\"\"\n",
        basic_string(source),
        basic_string(&one_line(question)),
        escaped(&format!("{}\n", sql.trim()), true)
    )
}

/// `text` as a TOML basic string.
fn basic_string(text: &str) -> String {
    format!("\"{}\"", escaped(text, false))
}

/// `text` escaped for a TOML basic string (multi-line when `multiline`: newlines and tabs
/// kept as they are). Every quote is escaped, so no run of them can close the string.
fn escaped(text: &str, multiline: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' | '\t' if multiline => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `question:` (any case) at the start of `text`, dropped.
fn strip_label(text: &str) -> &str {
    match text.get(..9) {
        Some(head) if head.eq_ignore_ascii_case("question:") => text[9..].trim_start(),
        _ => text,
    }
}

fn one_line(text: &str) -> String {
    crate::inline::one_line(text)
}

/// The verified examples of a source with what finds them: each one's terms, weighted by how
/// rare they are among the examples, and the tables its SQL names.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExampleIndex {
    examples: Vec<Example>,
    /// Per example, its distinct question terms.
    terms: Vec<Vec<String>>,
    /// Per example, the catalog tables its SQL names.
    tables: Vec<Vec<String>>,
    /// Examples holding each term.
    counts: foldhash::HashMap<String, usize>,
}

/// An example similar to a question.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScoredExample<'a> {
    /// The example.
    pub example: &'a Example,
    /// How similar its question is, 0–1.
    pub similarity: f64,
    /// The catalog tables its SQL names.
    pub tables: &'a [String],
}

impl ExampleIndex {
    /// Indexes `examples` (at most [`MAX_EXAMPLES`]) over `catalog`'s tables.
    pub(crate) fn build(mut examples: Vec<Example>, catalog: &Catalog) -> Self {
        examples.truncate(MAX_EXAMPLES);
        let mut counts: foldhash::HashMap<String, usize> = Default::default();
        let terms: Vec<Vec<String>> = examples
            .iter()
            .map(|e| {
                let mut terms = tokenize(&e.question);
                terms.sort();
                terms.dedup();
                for t in &terms {
                    *counts.entry(t.clone()).or_default() += 1;
                }
                terms
            })
            .collect();
        let tables = examples.iter().map(|e| mentioned_tables(catalog, &e.sql)).collect();
        Self { examples, terms, tables, counts }
    }

    /// The examples.
    pub(crate) fn examples(&self) -> &[Example] {
        &self.examples
    }

    /// The examples most similar to `question`, best first, at most `k`, each at least
    /// [`MIN_SIMILARITY`]: the weighted Dice overlap of their terms, a term weighing its
    /// [`question_weight`] (phrasing counts a quarter) times its rarity among the examples
    /// (`ln(1 + (n + 1) / (held + 0.5))`). With `cosines` (each example question's with the
    /// question, from an embedding model), an example is as similar as the better of the two
    /// measures says, the cosine rescaled from [`SEMANTIC_FLOOR`]–1 to 0–1: a paraphrase in
    /// other words is found.
    pub(crate) fn similar(
        &self,
        question: &str,
        cosines: Option<&[f32]>,
        k: usize,
    ) -> Vec<ScoredExample<'_>> {
        if self.examples.is_empty() || k == 0 {
            return Vec::new();
        }
        let mut asked = tokenize(question);
        asked.truncate(crate::retrieve::MAX_QUESTION_TERMS);
        asked.sort();
        asked.dedup();
        let n = self.examples.len() as f64;
        // A term no example holds weighs as the rarest one held: it says how the question
        // differs from every example alike, not from one more than another.
        let weight = |term: &str| {
            let held = self.counts.get(term).copied().unwrap_or(1).max(1) as f64;
            question_weight(term) * (1.0 + (n + 1.0) / (held + 0.5)).ln()
        };
        let asked_weight: f64 = asked.iter().map(|t| weight(t)).sum();
        let mut scored: Vec<ScoredExample<'_>> = Vec::new();
        for (i, terms) in self.terms.iter().enumerate() {
            let own: f64 = terms.iter().map(|t| weight(t)).sum();
            let shared: f64 =
                terms.iter().filter(|t| asked.binary_search(t).is_ok()).map(|t| weight(t)).sum();
            let total = own + asked_weight;
            let mut similarity = if total > 0.0 { 2.0 * shared / total } else { 0.0 };
            if let Some(&cosine) = cosines.and_then(|c| c.get(i)) {
                let semantic = (f64::from(cosine) - SEMANTIC_FLOOR) / (1.0 - SEMANTIC_FLOOR);
                similarity = similarity.max(semantic.min(1.0));
            }
            if similarity >= MIN_SIMILARITY {
                scored.push(ScoredExample {
                    example: &self.examples[i],
                    similarity,
                    tables: &self.tables[i],
                });
            }
        }
        scored.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        scored.truncate(k);
        scored
    }
}

/// The catalog tables `sql` names, in catalog order: each table's name found as a whole word,
/// ASCII case-insensitively (a name with spaces or dots is found whole).
pub(crate) fn mentioned_tables(catalog: &Catalog, sql: &str) -> Vec<String> {
    let sql = sql.to_ascii_lowercase();
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    catalog
        .tables
        .iter()
        .filter(|t| {
            let name = t.name.to_ascii_lowercase();
            !name.is_empty()
                && sql.match_indices(&name).any(|(at, _)| {
                    let before = sql[..at].chars().next_back();
                    let after = sql[at + name.len()..].chars().next();
                    !before.is_some_and(is_word) && !after.is_some_and(is_word)
                })
        })
        .map(|t| t.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use schemascope_core::Catalog;

    use super::{ExampleIndex, ScoredExample, example_entry, parse_example_sql, parse_examples};

    impl ExampleIndex {
        fn similar_words(&self, question: &str, k: usize) -> Vec<ScoredExample<'_>> {
            self.similar(question, None, k)
        }
    }

    fn catalog() -> Catalog {
        serde_json::from_str(
            r#"{"tables": [
              {"name": "Artist", "kind": "table", "primaryKey": ["ArtistId"], "foreignKeys": [],
               "columns": [{"name": "ArtistId", "declaredType": "INTEGER", "nullable": false}]},
              {"name": "Album", "kind": "table", "primaryKey": ["AlbumId"], "foreignKeys": [],
               "columns": [{"name": "AlbumId", "declaredType": "INTEGER", "nullable": false}]},
              {"name": "Order Details", "kind": "table", "primaryKey": [], "foreignKeys": [],
               "columns": [{"name": "Qty", "declaredType": "INTEGER", "nullable": false}]}]}"#,
        )
        .expect("catalog")
    }

    #[test]
    fn the_toml_form_keeps_good_entries_and_says_the_others_by_line() {
        let text = "[[example]]\nquestion = \"Which artist has\\nthe most albums?\"\n\
                    sql = \"\"\"\nSELECT 1 FROM Artist\n\"\"\"\n\n\
                    [[example]]\nquestion = \"  \"\nsql = \"SELECT 2\"\n\n\
                    [[example]]\nquestion = \"q\"\nquery = \"SELECT 3\"\n";
        let (examples, warnings) = parse_examples("_examples.toml", text);
        assert_eq!(examples.len(), 1);
        assert_eq!(examples[0].question, "Which artist has the most albums?");
        assert_eq!(examples[0].sql, "SELECT 1 FROM Artist");
        assert_eq!(examples[0].line, 1);
        let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("_examples.toml:13:"), "{said:?}");
        assert!(said[0].contains("query"), "{said:?}");
        assert_eq!(said[1], "_examples.toml:7: example without a question or SQL; left out");
    }

    #[test]
    fn the_sql_form_takes_its_question_from_the_leading_comments() {
        let text = "\u{feff}-- Question: Which artist\n--   has the most albums?\n\nSELECT *\nFROM Artist -- all\n";
        let example = parse_example_sql("_examples/top.sql", text).expect("read");
        assert_eq!(example.question, "Which artist has the most albums?");
        assert_eq!(example.sql, "SELECT *\nFROM Artist -- all");
        let no_question = parse_example_sql("_examples/x.sql", "SELECT 1").expect_err("skipped");
        assert!(no_question.file_skipped && no_question.message.contains("no question"));
        assert!(parse_example_sql("_examples/x.sql", "-- q\n\n").is_err());
    }

    #[test]
    fn a_recorded_entry_reads_back_as_written() {
        let text = example_entry(
            "music",
            "Who sang \"Hey\"?\n",
            "SELECT 'a''b' -- \"\"\"\n",
            "2026-11-30T05:00:00Z",
        );
        let (examples, warnings) = parse_examples("rec.toml", &(text.clone() + &text));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(examples.len(), 2);
        assert_eq!(examples[0].question, "Who sang \"Hey\"?");
        assert_eq!(examples[0].sql, "SELECT 'a''b' -- \"\"\"");
        assert!(examples[0].is_for("music") && !examples[0].is_for("other"));
    }

    #[test]
    fn similar_questions_find_their_example_and_its_tables() {
        let (examples, _) = parse_examples(
            "e.toml",
            "[[example]]\nquestion = \"Which artist has the most albums?\"\nsql = \"SELECT * FROM Artist JOIN Album USING (ArtistId)\"\n\
             [[example]]\nquestion = \"Total quantity ordered\"\nsql = \"SELECT SUM(Qty) FROM \\\"Order Details\\\"\"\n",
        );
        let index = ExampleIndex::build(examples, &catalog());
        let found = index.similar_words("which artists have the most albums", 3);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].tables, ["Artist", "Album"]);
        assert!(found[0].similarity > 0.9, "{found:?}");
        let by_meaning = index.similar("top performer by number of records", Some(&[0.9, 0.1]), 3);
        assert_eq!(by_meaning.len(), 1, "{by_meaning:?}");
        assert!((by_meaning[0].similarity - 0.8).abs() < 1e-6, "{by_meaning:?}");
        assert_eq!(
            index.similar_words("quantity ordered per month", 3)[0].tables,
            ["Order Details"]
        );
        assert!(index.similar_words("how many employees are there", 3).is_empty());
        assert!(index.similar_words("the most", 3).is_empty(), "phrasing alone is no likeness");
        let long = "why ".repeat(200);
        let (examples, warnings) = parse_examples(
            "e.toml",
            &format!("[[example]]\nquestion = \"{long}\"\nsql = \"SELECT 1\"\n"),
        );
        assert!(examples.is_empty());
        assert!(warnings[0].to_string().contains("more than the 500 an example may have"));
        let skipped = parse_example_sql("long.sql", &format!("-- {long}\nSELECT 1\n")).unwrap_err();
        assert!(skipped.to_string().contains("more than the 500"), "{skipped}");
    }
}
