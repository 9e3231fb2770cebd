//! Cutting documentation into retrieval chunks (overview, column, query, relationship, example)
//! with the seed's metadata, and describing undocumented tables and columns from the catalog so
//! that every table can be found even where nobody wrote docs.

use foldhash::{HashMap, HashSet};
use schemascope_core::{Catalog, ColumnInfo, TableInfo, tokens};
use serde::Serialize;

use crate::inline::one_line;
use crate::notes::ColumnNotes;
use crate::parse::{DocOrigin, DocWarning, ParsedDocs, TableDoc};
use crate::semantic::{Metric, Relationship, Semantic, Term};
use schemascope_core::display::{code, escape_controls};
use schemascope_core::terms::{tokenize_into, tokenize_prose_into};

/// What part of a table's documentation a chunk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// Purpose, Business Context, Notes (or, undocumented, the table's name, comment and columns).
    Overview,
    /// One column.
    Column,
    /// One common query pattern.
    Query,
    /// Related tables and join patterns.
    Relationship,
    /// Example rows or value distributions.
    Example,
    /// A business term of the semantic file: what a word means in the schema.
    Term,
    /// A metric of the semantic file: how a figure is computed.
    Metric,
}

impl ChunkKind {
    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Overview => "overview",
            Self::Column => "column",
            Self::Query => "query",
            Self::Relationship => "relationship",
            Self::Example => "example",
            Self::Term => "term",
            Self::Metric => "metric",
        }
    }
}

/// Where a chunk's text came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "type", content = "file")]
pub enum ChunkSource {
    /// A documentation file.
    Docs(String),
    /// The catalog (and column notes): nobody documented this part.
    Catalog,
    /// A documentation file `docs generate` wrote that nobody has changed since.
    Generated(String),
}

/// One retrievable piece of documentation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    /// What it holds.
    pub kind: ChunkKind,
    /// The table it documents (the catalog's spelling when the table exists).
    pub table: String,
    /// The column, for column chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The text shown to the model.
    pub content: String,
    /// o200k tokens of `content`.
    pub tokens: usize,
    /// Tables one FK hop away in either direction, plus tables the text names.
    pub related_tables: Vec<String>,
    /// Index terms from headings, table and column names (identifier parts), without repeats.
    pub keywords: Vec<String>,
    /// Docs file or catalog.
    pub source: ChunkSource,
}

impl Chunk {
    /// The BM25 terms of this chunk: its keywords (names and headings, which say what the chunk
    /// is about) followed by the terms of its text, without the docs' scaffolding words and
    /// numbers (see [`tokenize_prose_into`]).
    pub fn index_terms(&self) -> Vec<String> {
        let mut terms = self.keywords.clone();
        tokenize_prose_into(&self.content, &mut terms);
        terms
    }
}

/// Chunks for every catalog table (from its docs where they exist, from the catalog otherwise),
/// for documented tables the catalog lacks (with a warning: the docs may be stale), and for the
/// semantic file's entries the catalog confirms.
pub fn build_chunks(
    catalog: &Catalog,
    docs: &ParsedDocs,
    notes: &ColumnNotes,
) -> (Vec<Chunk>, Vec<DocWarning>) {
    let (mut chunks, mut warnings) = table_chunks(catalog, docs, notes);
    if let Some(file) = &docs.semantic {
        let (semantic, problems) = file.resolve(catalog);
        warnings.extend(problems);
        add_semantic_chunks(catalog, &semantic, &mut chunks);
    }
    (chunks, warnings)
}

/// [`build_chunks`] without the semantic file's.
pub(crate) fn table_chunks(
    catalog: &Catalog,
    docs: &ParsedDocs,
    notes: &ColumnNotes,
) -> (Vec<Chunk>, Vec<DocWarning>) {
    let names = TableNames::new(catalog);
    let mut chunks = Vec::new();
    let mut warnings = Vec::new();
    for table in &catalog.tables {
        let mut builder =
            Builder { catalog, names: &names, table: &table.name, chunks: &mut chunks };
        match docs.table(&table.name) {
            Some(doc) => {
                for column in doc.columns.iter().filter(|c| table.column(&c.name).is_none()) {
                    warnings.push(DocWarning {
                        file: doc.file.clone(),
                        line: column.line,
                        message: format!(
                            "documents column `{}`, which table `{}` does not have; indexed anyway",
                            column.name, table.name
                        ),
                        file_skipped: false,
                    });
                }
                builder.add_doc_chunks(doc, Some(table), notes);
            }
            None => builder.add_catalog_chunks(table, notes),
        }
    }
    for doc in &docs.tables {
        if catalog.table(&doc.table).is_none() {
            warnings.push(DocWarning {
                file: doc.file.clone(),
                line: 1,
                message: format!(
                    "documents table `{}`, which the database does not have; indexed anyway",
                    doc.table
                ),
                file_skipped: false,
            });
            let mut builder =
                Builder { catalog, names: &names, table: &doc.table, chunks: &mut chunks };
            builder.add_doc_chunks(doc, None, notes);
        }
    }
    (chunks, warnings)
}

/// One chunk per term and metric of the semantic file (under the first table each names, its
/// words as keywords) and one per relationship (under its referring table).
pub(crate) fn add_semantic_chunks(catalog: &Catalog, semantic: &Semantic, chunks: &mut Vec<Chunk>) {
    let names = &TableNames::new(catalog);
    let source = || ChunkSource::Docs(semantic.file.clone());
    for term in &semantic.terms {
        let Some(first) = term.means.first() else { continue };
        let mut builder = Builder { catalog, names, table: &first.table, chunks: &mut *chunks };
        let mut words: Vec<&str> = vec![term.name.as_str()];
        words.extend(term.synonyms.iter().map(String::as_str));
        let column = first.column.as_deref().filter(|_| term.means.len() == 1);
        builder.push(ChunkKind::Term, column, term_text(term), &words, source());
    }
    for metric in &semantic.metrics {
        let Some(table) = metric.tables.first() else { continue };
        let mut builder = Builder { catalog, names, table, chunks: &mut *chunks };
        builder.push(ChunkKind::Metric, None, metric_text(metric), &[&metric.name], source());
    }
    for relationship in &semantic.relationships {
        let table = relationship.from.table.as_str();
        let mut builder = Builder { catalog, names, table, chunks: &mut *chunks };
        let text = relationship_text(relationship);
        builder.push(ChunkKind::Relationship, None, text, &[], source());
    }
}

/// `text` on one line with hidden control characters escaped: what a person wrote in the
/// semantic file cannot start a heading or a list item of the context, or hide text.
fn inline_text(text: &str) -> String {
    escape_controls(&one_line(text))
}

/// A term as the context shows it, on one line.
pub(crate) fn term_text(term: &Term) -> String {
    let mut out = format!("**{}**", inline_text(&term.name));
    if !term.synonyms.is_empty() {
        let synonyms: Vec<String> = term.synonyms.iter().map(|s| inline_text(s)).collect();
        out.push_str(&format!(" (also: {})", synonyms.join(", ")));
    }
    let means: Vec<String> = term.means.iter().map(ToString::to_string).collect();
    out.push_str(&format!(" means {}", means.join(", ")));
    if let Some(description) = &term.description {
        out.push_str(&format!(": {}", inline_text(description)));
    }
    out
}

/// A metric as the context shows it, on one line (its SQL in a code span fenced past any
/// backticks it holds).
pub(crate) fn metric_text(metric: &Metric) -> String {
    let sql = code(&one_line(&metric.sql));
    let mut out = format!("**{}** = {sql}", inline_text(&metric.name));
    if let Some(description) = &metric.description {
        out.push_str(&format!(": {}", inline_text(description)));
    }
    out
}

/// A relationship as the context shows it, on one line.
pub(crate) fn relationship_text(relationship: &Relationship) -> String {
    let mut out =
        format!("{} → {} (not declared in the schema)", relationship.from, relationship.to);
    if let Some(description) = &relationship.description {
        out.push_str(&format!(": {}", inline_text(description)));
    }
    out
}

/// Lowercase table name → catalog spelling, to find table names mentioned in text.
struct TableNames<'a> {
    by_lower: HashMap<String, &'a str>,
}

impl<'a> TableNames<'a> {
    fn new(catalog: &'a Catalog) -> Self {
        let mut by_lower = HashMap::default();
        for t in &catalog.tables {
            by_lower.insert(t.name.to_ascii_lowercase(), t.name.as_str());
            // `db.table` and `schema.table` are also mentioned by their last part.
            if let Some((_, last)) = t.name.rsplit_once('.') {
                by_lower.entry(last.to_ascii_lowercase()).or_insert(t.name.as_str());
            }
        }
        Self { by_lower }
    }

    /// Catalog tables named in `text` as whole identifiers.
    fn mentioned(&self, text: &str) -> Vec<&'a str> {
        let mut out = Vec::new();
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            let word = word.trim_matches('.');
            if word.is_empty() {
                continue;
            }
            let lower = word.to_ascii_lowercase();
            let hit = self
                .by_lower
                .get(&lower)
                .or_else(|| lower.split_once('.').and_then(|(t, _)| self.by_lower.get(t)));
            if let Some(name) = hit
                && !out.contains(name)
            {
                out.push(*name);
            }
        }
        out
    }
}

struct Builder<'a, 'b> {
    catalog: &'a Catalog,
    names: &'a TableNames<'a>,
    table: &'a str,
    chunks: &'b mut Vec<Chunk>,
}

impl Builder<'_, '_> {
    fn push(
        &mut self,
        kind: ChunkKind,
        column: Option<&str>,
        content: String,
        headings: &[&str],
        source: ChunkSource,
    ) {
        let mut related: Vec<String> =
            self.catalog.neighbours(self.table).into_iter().map(str::to_string).collect();
        for name in self.names.mentioned(&content) {
            if !name.eq_ignore_ascii_case(self.table) && !related.iter().any(|r| r == name) {
                related.push(name.to_string());
            }
        }
        let mut keywords = Vec::new();
        tokenize_into(self.table, &mut keywords);
        if let Some(column) = column {
            tokenize_into(column, &mut keywords);
        }
        for heading in headings {
            tokenize_into(heading, &mut keywords);
        }
        let mut seen = HashSet::default();
        keywords.retain(|k| seen.insert(k.clone()));
        self.chunks.push(Chunk {
            kind,
            table: self.table.to_string(),
            column: column.map(str::to_string),
            tokens: tokens::count(&content),
            content,
            related_tables: related,
            keywords,
            source,
        });
    }

    fn add_doc_chunks(&mut self, doc: &TableDoc, table: Option<&TableInfo>, notes: &ColumnNotes) {
        let source = || match doc.origin {
            DocOrigin::Generated => ChunkSource::Generated(doc.file.clone()),
            DocOrigin::Written | DocOrigin::GeneratedEdited => ChunkSource::Docs(doc.file.clone()),
        };
        let mut overview = Vec::new();
        for (title, text) in [
            ("Purpose", &doc.purpose),
            ("Business Context", &doc.business_context),
            ("Notes", &doc.notes),
        ] {
            if let Some(text) = text {
                overview.push(format!("**{title}:** {text}"));
            }
        }
        for (title, text) in &doc.other_sections {
            overview.push(format!("**{title}:** {text}"));
        }
        // The overview is the table-level chunk: its keywords carry every column name so that a
        // question naming a table by its columns still finds the table.
        let column_names: Vec<&str> = match table {
            Some(t) => t.columns.iter().map(|c| c.name.as_str()).collect(),
            None => doc.columns.iter().map(|c| c.name.as_str()).collect(),
        };
        if overview.is_empty() {
            overview.push(match table {
                Some(t) => describe_table(t),
                None => format!("Table `{}`.", doc.table),
            });
        }
        self.push(ChunkKind::Overview, None, overview.join("\n\n"), &column_names, source());
        for col in &doc.columns {
            let name = table
                .and_then(|t| t.column(&col.name))
                .map_or(col.name.as_str(), |c| c.name.as_str());
            let mut content = col.text.clone();
            if let Some(note) = notes.get(self.table, name)
                && !content.contains(note)
            {
                content.push_str(&format!("\n- **Profile:** {note}"));
            }
            self.push(ChunkKind::Column, Some(name), content, &[], source());
        }
        if let Some(t) = table {
            for column in t
                .columns
                .iter()
                .filter(|c| !doc.columns.iter().any(|d| d.name.eq_ignore_ascii_case(&c.name)))
            {
                self.push(
                    ChunkKind::Column,
                    Some(&column.name),
                    describe_column(t, column, notes),
                    &[],
                    ChunkSource::Catalog,
                );
            }
        }
        for q in &doc.queries {
            let content = format!("**Query pattern: {}**\n\n{}", q.name, q.text);
            self.push(ChunkKind::Query, None, content, &[q.name.as_str()], source());
        }
        match (&doc.relationships, table) {
            (Some(rel), _) => {
                self.push(ChunkKind::Relationship, None, rel.text.clone(), &[], source())
            }
            (None, Some(t)) => {
                if let Some(text) = describe_relationships(self.catalog, t) {
                    self.push(ChunkKind::Relationship, None, text, &[], ChunkSource::Catalog);
                }
            }
            (None, None) => {}
        }
        if let Some(examples) = &doc.examples {
            self.push(ChunkKind::Example, None, examples.clone(), &[], source());
        }
    }

    fn add_catalog_chunks(&mut self, table: &TableInfo, notes: &ColumnNotes) {
        let column_names: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
        self.push(
            ChunkKind::Overview,
            None,
            describe_table(table),
            &column_names,
            ChunkSource::Catalog,
        );
        for column in &table.columns {
            self.push(
                ChunkKind::Column,
                Some(&column.name),
                describe_column(table, column, notes),
                &[],
                ChunkSource::Catalog,
            );
        }
        if let Some(text) = describe_relationships(self.catalog, table) {
            self.push(ChunkKind::Relationship, None, text, &[], ChunkSource::Catalog);
        }
    }
}

/// One paragraph about an undocumented table: kind, size, comment and column names.
pub fn describe_table(table: &TableInfo) -> String {
    let kind = match table.kind {
        schemascope_core::TableKind::Table => "Table",
        schemascope_core::TableKind::View => "View",
    };
    let mut text = format!("{kind} `{}`", table.name);
    if let Some(rows) = table.row_count {
        text.push_str(&format!(" ({rows} rows)"));
    }
    text.push('.');
    if let Some(comment) = &table.comment {
        text.push(' ');
        text.push_str(comment.trim());
    }
    let columns: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    text.push_str(&format!(" Columns: {}.", columns.join(", ")));
    text
}

/// One line about an undocumented column: type, keys, nullability, comment and caller's note.
pub fn describe_column(table: &TableInfo, column: &ColumnInfo, notes: &ColumnNotes) -> String {
    let mut text = format!("`{}.{}`", table.name, column.name);
    if !column.declared_type.is_empty() {
        text.push_str(&format!(" {}", column.declared_type));
    }
    if table.is_primary_key(&column.name) {
        text.push_str(", primary key");
    }
    if let Some(fk) = table.foreign_key_of(&column.name) {
        text.push_str(&format!(
            ", references {}({})",
            fk.referenced_table,
            fk.referenced_columns.join(", ")
        ));
    }
    text.push_str(if column.nullable { ", nullable" } else { ", not null" });
    text.push('.');
    if let Some(comment) = &column.comment {
        text.push(' ');
        text.push_str(comment.trim());
    }
    if let Some(note) = notes.get(&table.name, &column.name) {
        text.push(' ');
        text.push_str(note);
    }
    text
}

/// The FK joins of a table in both directions, or `None` when it has none.
pub fn describe_relationships(catalog: &Catalog, table: &TableInfo) -> Option<String> {
    let mut lines = Vec::new();
    for fk in &table.foreign_keys {
        lines.push(format!(
            "- `{}`",
            join_clause(
                &fk.referenced_table,
                &table.name,
                &fk.columns,
                &fk.referenced_table,
                &fk.referenced_columns
            )
        ));
    }
    for incoming in catalog.referenced_by(&table.name) {
        if incoming.table.name == table.name {
            continue;
        }
        let key = incoming.key;
        let from = &incoming.table.name;
        lines.push(format!(
            "- `{}`",
            join_clause(from, from, &key.columns, &table.name, &key.referenced_columns)
        ));
    }
    (!lines.is_empty()).then(|| format!("Joins of `{}`:\n{}", table.name, lines.join("\n")))
}

/// `JOIN <joined> ON <fk_table>.<a> = <ref_table>.<b> [AND …]`, for a foreign key of `fk_table`
/// (`columns`) referencing `ref_table` (`referenced`); `joined` is whichever side is being added.
pub fn join_clause(
    joined: &str,
    fk_table: &str,
    columns: &[String],
    ref_table: &str,
    referenced: &[String],
) -> String {
    let conditions: Vec<String> = columns
        .iter()
        .zip(referenced)
        .map(|(a, b)| format!("{fk_table}.{a} = {ref_table}.{b}"))
        .collect();
    format!("JOIN {joined} ON {}", conditions.join(" AND "))
}

#[cfg(test)]
mod tests {
    use schemascope_core::{ForeignKey, TableKind};

    use super::*;
    use crate::parse::parse_docs;

    fn column(name: &str, ty: &str) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            declared_type: ty.into(),
            nullable: false,
            comment: None,
            base_type: None,
        }
    }

    fn catalog() -> Catalog {
        Catalog {
            tables: vec![
                TableInfo {
                    name: "Customer".into(),
                    kind: TableKind::Table,
                    columns: vec![
                        column("CustomerId", "INTEGER"),
                        column("Email", "NVARCHAR(60)"),
                        column("Country", "NVARCHAR(40)"),
                    ],
                    primary_key: vec!["CustomerId".into()],
                    foreign_keys: vec![],
                    row_count: Some(59),
                    row_count_estimated: false,
                    comment: None,
                },
                TableInfo {
                    name: "Invoice".into(),
                    kind: TableKind::Table,
                    columns: vec![column("InvoiceId", "INTEGER"), column("CustomerId", "INTEGER")],
                    primary_key: vec!["InvoiceId".into()],
                    foreign_keys: vec![ForeignKey {
                        columns: vec!["CustomerId".into()],
                        referenced_table: "Customer".into(),
                        referenced_columns: vec!["CustomerId".into()],
                    }],
                    row_count: None,
                    row_count_estimated: false,
                    comment: Some("One row per sale.".into()),
                },
            ],
        }
    }

    #[test]
    fn documented_tables_get_doc_chunks_and_catalog_chunks_for_undocumented_columns() {
        let doc = "# Table: Customer\n\n## Purpose\n\nPeople who buy tracks.\n\n## Columns\n\n### Email\n\n- **Type:** NVARCHAR(60)\n- **Description:** Contact address.\n\n## Common Queries\n\n### Query Pattern: Invoices per customer\n\n```sql\nSELECT c.Email, COUNT(*) FROM Customer c JOIN Invoice i ON i.CustomerId = c.CustomerId GROUP BY c.Email;\n```\n";
        let (docs, _) = parse_docs(&[("Customer.md", doc)]);
        let mut notes = ColumnNotes::new();
        notes.insert("Customer", "Country", "24 distinct values, most often USA");
        let (chunks, warnings) = build_chunks(&catalog(), &docs, &notes);
        assert!(warnings.is_empty());
        let kinds: Vec<(ChunkKind, &str, Option<&str>)> =
            chunks.iter().map(|c| (c.kind, c.table.as_str(), c.column.as_deref())).collect();
        assert_eq!(
            kinds,
            vec![
                (ChunkKind::Overview, "Customer", None),
                (ChunkKind::Column, "Customer", Some("Email")),
                (ChunkKind::Column, "Customer", Some("CustomerId")),
                (ChunkKind::Column, "Customer", Some("Country")),
                (ChunkKind::Query, "Customer", None),
                (ChunkKind::Relationship, "Customer", None),
                (ChunkKind::Overview, "Invoice", None),
                (ChunkKind::Column, "Invoice", Some("InvoiceId")),
                (ChunkKind::Column, "Invoice", Some("CustomerId")),
                (ChunkKind::Relationship, "Invoice", None),
            ]
        );
        let overview = &chunks[0];
        assert_eq!(overview.content, "**Purpose:** People who buy tracks.");
        assert_eq!(overview.keywords, vec!["customer", "id", "email", "country"]);
        assert_eq!(overview.related_tables, vec!["Invoice"]);
        assert!(overview.tokens > 3);
        assert_eq!(chunks[1].source, ChunkSource::Docs("Customer.md".into()));
        assert_eq!(chunks[3].source, ChunkSource::Catalog);
        assert!(chunks[3].content.contains("24 distinct values"), "{}", chunks[3].content);
        assert_eq!(chunks[4].keywords, vec!["customer", "invoice"]);
        assert_eq!(
            chunks[5].content,
            "Joins of `Customer`:\n- `JOIN Invoice ON Invoice.CustomerId = Customer.CustomerId`"
        );
        assert!(chunks[6].content.contains("One row per sale."));
        assert_eq!(
            chunks[8].content,
            "`Invoice.CustomerId` INTEGER, references Customer(CustomerId), not null."
        );
    }

    #[test]
    fn semantic_entries_are_shown_on_one_line_with_their_sql_fenced() {
        use crate::semantic::{Metric, Target, Term};
        let term = Term {
            name: "rep\n## FakeTable (9 rows)".into(),
            synonyms: vec!["a\n\n# Database schema: hacked\u{202e}".into()],
            means: vec![Target { table: "Employee".into(), column: None }],
            description: Some("one\n- Fake INTEGER".into()),
        };
        let text = super::term_text(&term);
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains("\\u{202E}"), "{text}");
        let metric = Metric {
            name: "m".into(),
            sql: "SELECT `x`\n```\n-- ## Fake".into(),
            description: None,
            tables: vec![],
        };
        assert_eq!(super::metric_text(&metric), "**m** = ````SELECT `x` ``` -- ## Fake````");
    }
}
