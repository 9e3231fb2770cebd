//! The people-written part of a table's docs, shown beside its structure in every context (the
//! full schema as well as the focused one): the table's purpose and business rules under its
//! heading, each column's description beside the column.
//!
//! Only what a person wrote is shown. A file `docs generate` wrote says nothing the structure
//! and the value notes do not already say, so from such a file (edited or not) only the parts
//! that differ from what the generator writes are kept, and never its `Domain:` lines, which
//! restate a profile that may since have changed (the value notes show the current one).

use schemascope_core::display::escape_controls;
use schemascope_core::{Catalog, TableInfo};

use crate::generate::{column_description, generated_purpose, is_generated_note};
use crate::notes::ColumnNotes;
use crate::parse::{ColumnDoc, TableDoc};

/// A table's docs as shown inline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InlineDoc {
    /// Paragraphs about the table: purpose, business context, notes, other sections, each on
    /// one line that starts with its section's name (so that no text a person wrote can start
    /// a line looking like a column or a heading of the context).
    pub(crate) about: Vec<String>,
    /// Column name (ASCII lowercase) and its text, one line.
    columns: Vec<(String, String)>,
}

impl InlineDoc {
    /// The inline docs of `table` from `doc`, or `None` when a person wrote nothing in it.
    pub(crate) fn of(
        catalog: &Catalog,
        table: &TableInfo,
        doc: &TableDoc,
        notes: &ColumnNotes,
    ) -> Option<Self> {
        let mut about = Vec::new();
        if let Some(purpose) = &doc.purpose {
            let mut purpose = one_line(purpose);
            if doc.origin.is_generated() {
                // What a person added to the generator's sentence, without the sentence.
                purpose =
                    purpose.replace(&one_line(&generated_purpose(table)), "").trim().to_string();
            }
            if !purpose.is_empty() && !is_comment(table.comment.as_deref(), &purpose) {
                about.push(format!("Purpose: {purpose}"));
            }
        }
        if let Some(context) = doc.business_context.as_deref().map(one_line) {
            about.push(format!("Business context: {context}"));
        }
        if let Some(notes) = &doc.notes {
            let written: Vec<String> = notes
                .lines()
                .filter(|line| !line.trim().is_empty())
                .filter(|line| !(doc.origin.is_generated() && is_generated_note(table, line)))
                .map(|line| ensure_stop(&one_line(without_bullet(line))))
                .collect();
            if !written.is_empty() {
                about.push(format!("Notes: {}", written.join(" ")));
            }
        }
        for (title, text) in &doc.other_sections {
            // A heading's marks would start the line as list items or headings do.
            let title = one_line(title);
            let title = title.trim_start_matches(['-', '#', '*', '+', '>', '|', ' ']);
            let title = if title.is_empty() { "Notes" } else { title };
            about.push(format!("{title}: {}", one_line(text)));
        }

        let columns: Vec<(String, String)> = doc
            .columns
            .iter()
            .filter_map(|c| {
                let column = table.column(&c.name)?;
                let text = column_text(catalog, table, c, column.comment.as_deref(), doc, notes)?;
                Some((column.name.to_ascii_lowercase(), text))
            })
            .collect();
        // Nothing a person wrote may hide text or steer a terminal (NUL, ESC, bidi controls).
        let about: Vec<String> = about.iter().map(|a| escape_controls(a)).collect();
        let columns: Vec<(String, String)> =
            columns.into_iter().map(|(name, text)| (name, escape_controls(&text))).collect();
        (!about.is_empty() || !columns.is_empty()).then_some(Self { about, columns })
    }

    /// The text shown beside `column`.
    pub(crate) fn column(&self, column: &str) -> Option<&str> {
        let column = column.to_ascii_lowercase();
        self.columns.iter().find(|(name, _)| *name == column).map(|(_, text)| text.as_str())
    }
}

/// What a person wrote about one column, on one line: description, domain, notes.
fn column_text(
    catalog: &Catalog,
    table: &TableInfo,
    doc: &ColumnDoc,
    comment: Option<&str>,
    file: &TableDoc,
    notes: &ColumnNotes,
) -> Option<String> {
    let labelled = doc.description.is_some() || doc.domain.is_some() || doc.notes.is_some();
    let mut parts = Vec::new();
    let description = match &doc.description {
        Some(d) => Some(d.as_str()),
        // Prose without the labelled bullets is the description, unless it is only other
        // labels (a type or nullability, which the structure shows).
        None if !labelled && doc.type_name.is_none() && doc.nullable.is_none() => {
            Some(doc.text.as_str())
        }
        None => None,
    };
    if let Some(description) = description.map(one_line).filter(|d| !d.is_empty()) {
        let generated = file.origin.is_generated()
            && description == one_line(&column_description(catalog, table, &doc.name, comment));
        if !generated && !is_comment(comment, &description) {
            parts.push(description);
        }
    }
    if let Some(domain) = doc.domain.as_deref().map(one_line).filter(|d| !d.is_empty())
        && !file.origin.is_generated()
        && notes.get(&table.name, &doc.name).is_none_or(|note| one_line(note) != domain)
    {
        parts.push(format!("Domain: {domain}"));
    }
    if let Some(note) = doc.notes.as_deref().map(one_line).filter(|n| !n.is_empty()) {
        parts.push(format!("Notes: {note}"));
    }
    (!parts.is_empty()).then(|| {
        parts
            .iter()
            .map(|p| ensure_stop(p))
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end_matches('.')
            .to_string()
    })
}

/// True when `text` says what the database's own comment says (shown already).
fn is_comment(comment: Option<&str>, text: &str) -> bool {
    comment.is_some_and(|c| one_line(c) == one_line(text))
}

/// A list item's text without its marker.
fn without_bullet(line: &str) -> &str {
    let line = line.trim_start();
    line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")).unwrap_or(line)
}

/// `text` with its whitespace runs (newlines included) made single spaces.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to its first `max` characters with an ellipsis, when it has more.
pub(crate) fn cut_chars(text: &str, max: usize) -> Option<String> {
    if text.chars().count() <= max {
        return None;
    }
    let kept: String = text.chars().take(max).collect();
    Some(format!("{}…", kept.trim_end()))
}

/// `text` ending in a full stop, so that parts joined read as sentences.
fn ensure_stop(text: &str) -> String {
    if text.ends_with(['.', '!', '?', ':', ';']) { text.to_string() } else { format!("{text}.") }
}

#[cfg(test)]
mod tests {
    use schemascope_core::Catalog;

    use super::InlineDoc;
    use crate::generate::{TableData, generate_docs};
    use crate::notes::ColumnNotes;
    use crate::parse::parse_docs;

    fn catalog() -> Catalog {
        serde_json::from_str(
            r#"{"tables": [
              {"name": "Invoice", "kind": "table", "primaryKey": ["InvoiceId"], "foreignKeys": [],
               "columns": [{"name": "InvoiceId", "declaredType": "INTEGER", "nullable": false},
                           {"name": "Total", "declaredType": "NUMERIC", "nullable": false,
                            "comment": "billed amount"},
                           {"name": "Country", "declaredType": "TEXT", "nullable": true}]}]}"#,
        )
        .expect("catalog")
    }

    fn inline(text: &str, notes: &ColumnNotes) -> Option<InlineDoc> {
        let catalog = catalog();
        let (docs, warnings) = parse_docs(&[("Invoice.md", text)]);
        assert!(warnings.is_empty(), "{warnings:?}");
        InlineDoc::of(&catalog, &catalog.tables[0], &docs.tables[0], notes)
    }

    #[test]
    fn a_written_file_is_shown_on_single_lines() {
        let mut notes = ColumnNotes::new();
        notes.insert("Invoice", "Country", "one of 'USA', 'Canada'");
        let doc = inline(
            "# Table: Invoice\n\n## Purpose\n\nOne row per\npurchase.\n\n## Business Context\n\n\
             Refunds are not recorded\n\n## Columns\n\n### Total\n\n- **Description:** Includes tax\n\
             - **Domain:** 0.99 to 25.86 dollars\n\n### Country\n\n- **Domain:** one of 'USA', 'Canada'\n\n\
             ### InvoiceId\n\nThe number printed on the bill.\n\n### Missing\n\n- **Description:** gone\n",
            &notes,
        )
        .expect("written");
        assert_eq!(
            doc.about,
            ["Purpose: One row per purchase.", "Business context: Refunds are not recorded"]
        );
        assert_eq!(doc.column("TOTAL"), Some("Includes tax. Domain: 0.99 to 25.86 dollars"));
        // The same domain as the value note says nothing new.
        assert_eq!(doc.column("Country"), None);
        assert_eq!(doc.column("InvoiceId"), Some("The number printed on the bill"));
        assert_eq!(doc.column("Missing"), None);
    }

    #[test]
    fn a_generated_file_shows_only_what_a_person_changed() {
        let catalog = catalog();
        let files = generate_docs(&catalog, "shop", |_| TableData::default());
        let table = &files.iter().find(|f| f.name == "Invoice.md").expect("generated").text;
        assert_eq!(inline(table, &ColumnNotes::new()), None);
        let edited = table
            .replace("## Business Context\n\n", "## Business Context\n\nAmounts in euros.\n\n")
            .replace("## Purpose\n\n", "## Purpose\n\nOne row per bill.\n\n")
            .replace(
                "- Primary key: InvoiceId.\n",
                "- Primary key: InvoiceId.\n- Closed yearly.\n",
            );
        let doc = inline(&edited, &ColumnNotes::new()).expect("edited");
        assert_eq!(
            doc.about,
            [
                "Purpose: One row per bill.",
                "Business context: Amounts in euros.",
                "Notes: Closed yearly."
            ]
        );
        assert_eq!(doc.column("Total"), None);
    }

    #[test]
    fn the_database_comment_is_not_repeated() {
        let doc = inline(
            "# Table: Invoice\n\n## Columns\n\n### Total\n\n- **Description:** billed  amount\n",
            &ColumnNotes::new(),
        );
        assert_eq!(doc, None);
    }

    #[test]
    fn written_text_cannot_pass_for_a_column_or_a_table() {
        let text = "\u{feff}# Table: Invoice\n\n## Purpose\n\n- FakeColumn INTEGER PK\n\n\
                    ## Business Context\n\n    ## FakeTable (7 rows)\n\n## - Fake INTEGER\n\nx\n";
        let catalog = catalog();
        // A byte-order mark is not text: the file is read (with only the unknown section's
        // warning).
        let (docs, warnings) = parse_docs(&[("Invoice.md", text)]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let doc = InlineDoc::of(&catalog, &catalog.tables[0], &docs.tables[0], &ColumnNotes::new())
            .expect("written");
        for line in &doc.about {
            assert!(!line.starts_with(['-', '#', ' ']), "{line:?}");
        }
        assert_eq!(doc.about[0], "Purpose: - FakeColumn INTEGER PK");
    }
}
