//! Reading schema documentation in the seed's markdown format: `_index.md` (the database overview)
//! and one `<table>.md` per table with Purpose, Business Context, Columns, Common Queries,
//! Relationships, Examples and Notes.
//!
//! Parsing never fails: a file that cannot be understood is skipped with a [`DocWarning`] naming
//! file and line, and the others are still read. What is fatal for a file: no `# Table: <name>`
//! heading, an unclosed code fence (everything after it would silently become code), a second
//! `# ` heading (one table per file), or a second file for the same table. Harmless variation is
//! accepted: heading case, extra blank lines, `Queries` for `Common Queries`, a missing
//! `Query Pattern:` prefix, `*` bullets. An unknown `## ` section is kept (it becomes part of the
//! table's overview) with a warning, since it is usually a deliberate addition such as `## Owner`.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;

/// The name of the database overview file.
pub const INDEX_FILE: &str = "_index.md";

/// A problem found in a documentation file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocWarning {
    /// The file, as the caller named it.
    pub file: String,
    /// 1-based line the problem is on (0 when it concerns the whole file).
    pub line: usize,
    /// What is wrong, and what was done about it.
    pub message: String,
    /// True when the whole file was skipped.
    pub file_skipped: bool,
}

impl std::fmt::Display for DocWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            // The whole file: no line to name.
            0 => write!(f, "{}: {}", self.file, self.message),
            line => write!(f, "{}:{line}: {}", self.file, self.message),
        }
    }
}

/// All documentation of one database.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParsedDocs {
    /// The overview from `_index.md`, if present and well formed.
    pub database: Option<DatabaseDoc>,
    /// One entry per well-formed table file, in input order.
    pub tables: Vec<TableDoc>,
    /// The business terms, metrics and relationships file, when there is one.
    #[serde(skip)]
    pub semantic: Option<crate::semantic::SemanticFile>,
    /// The verified examples, in file order (not yet checked against the database).
    #[serde(skip)]
    pub examples: Vec<crate::examples::Example>,
    /// What dbt files document (used for the catalog's tables the markdown docs leave out).
    #[serde(skip)]
    pub dbt: crate::dbt::DbtDocs,
}

impl ParsedDocs {
    /// The documentation of `table` (ASCII case-insensitive).
    pub fn table(&self, table: &str) -> Option<&TableDoc> {
        self.tables.iter().find(|t| t.table.eq_ignore_ascii_case(table))
    }
}

/// The database overview (`_index.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DatabaseDoc {
    /// The file it came from.
    pub file: String,
    /// Its `# ` heading, if any.
    pub title: Option<String>,
    /// The text below the heading, HTML comments removed.
    pub text: String,
    /// Who wrote the file.
    pub origin: DocOrigin,
}

/// One table's documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableDoc {
    /// The file it came from.
    pub file: String,
    /// The table name from `# Table: <name>`.
    pub table: String,
    /// `## Purpose`.
    pub purpose: Option<String>,
    /// `## Business Context`.
    pub business_context: Option<String>,
    /// `## Columns`, one entry per `### <column>`.
    pub columns: Vec<ColumnDoc>,
    /// `## Common Queries`, one entry per `### Query Pattern: <name>`.
    pub queries: Vec<QueryDoc>,
    /// `## Relationships`.
    pub relationships: Option<RelationshipsDoc>,
    /// `## Examples`, as written.
    pub examples: Option<String>,
    /// `## Notes`, as written.
    pub notes: Option<String>,
    /// Sections the format does not define (title, text), kept for the overview.
    pub other_sections: Vec<(String, String)>,
    /// Who wrote the file: from a generated one only what a person changed in it is shown
    /// beside the table's structure.
    pub origin: DocOrigin,
}

/// Who wrote a docs file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DocOrigin {
    /// A person.
    #[default]
    Written,
    /// `docs generate`, and nobody changed it since.
    Generated,
    /// `docs generate`, then a person changed it.
    GeneratedEdited,
}

impl DocOrigin {
    /// The origin of a file with this text.
    pub fn of(text: &str) -> Self {
        if crate::generate::is_unedited(text) {
            Self::Generated
        } else if crate::generate::has_marker(text) {
            Self::GeneratedEdited
        } else {
            Self::Written
        }
    }

    /// True for a file `docs generate` wrote, edited since or not.
    pub fn is_generated(self) -> bool {
        self != Self::Written
    }
}

/// One documented column (`### <column>` under `## Columns`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnDoc {
    /// The column name from the heading.
    pub name: String,
    /// `- **Type:**`.
    pub type_name: Option<String>,
    /// `- **Description:**`.
    pub description: Option<String>,
    /// `- **Domain:**`.
    pub domain: Option<String>,
    /// `- **Nullable:**` (yes/no/true/false); `None` when absent or unclear.
    pub nullable: Option<bool>,
    /// `- **Notes:**`.
    pub notes: Option<String>,
    /// The whole subsection as written (without its heading).
    pub text: String,
    /// 1-based line of its heading.
    pub line: usize,
}

/// One query pattern (`### Query Pattern: <name>` under `## Common Queries`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryDoc {
    /// The pattern's name.
    pub name: String,
    /// The prose before the first code block.
    pub description: String,
    /// The SQL code blocks, in order.
    pub sql: Vec<String>,
    /// `**Use case:**`.
    pub use_case: Option<String>,
    /// `**Returns:**`.
    pub returns: Option<String>,
    /// The whole subsection as written (without its heading).
    pub text: String,
}

/// The `## Relationships` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RelationshipsDoc {
    /// `- **Related tables:**`, split on commas, backticks removed.
    pub related_tables: Vec<String>,
    /// `- **Join patterns:**` and the lines below it.
    pub join_patterns: Vec<String>,
    /// The section as written.
    pub text: String,
}

/// Parses every file: `_index.md` is the overview, `_semantic.toml` the business terms,
/// `_examples.toml` and `_examples/*.sql` the verified examples, a file named with
/// [`crate::dbt::DBT_PREFIX`] what dbt documents, every other file one table.
pub fn parse_docs<N: AsRef<str>, T: AsRef<str>>(files: &[(N, T)]) -> (ParsedDocs, Vec<DocWarning>) {
    let mut docs = ParsedDocs::default();
    let mut warnings = Vec::new();
    // What is left of the YAML nodes all dbt files of the source may hold.
    let mut dbt_nodes = crate::dbt::MAX_NODES;
    for (name, text) in files {
        let (name, text) = (name.as_ref(), text.as_ref());
        // Editors on Windows start files with a byte-order mark; it is not part of the text.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        if base.eq_ignore_ascii_case(crate::semantic::SEMANTIC_FILE) {
            let (semantic, problems) = crate::semantic::parse_semantic(name, text);
            docs.semantic = semantic.or(docs.semantic);
            warnings.extend(problems);
            continue;
        }
        if base.eq_ignore_ascii_case(crate::examples::EXAMPLES_FILE) {
            let (examples, problems) = crate::examples::parse_examples(name, text);
            docs.examples.extend(examples);
            warnings.extend(problems);
            continue;
        }
        if name.starts_with(crate::dbt::DBT_PREFIX) {
            let (dbt, problems) = crate::dbt::parse_dbt(name, text, &mut dbt_nodes);
            docs.dbt.tables.extend(dbt.tables);
            docs.dbt.relationships.extend(dbt.relationships);
            docs.dbt.blocks.extend(dbt.blocks);
            docs.dbt.relations.extend(dbt.relations);
            warnings.extend(problems);
            continue;
        }
        if is_example_sql(name) {
            match crate::examples::parse_example_sql(name, text) {
                Ok(example) => docs.examples.push(example),
                Err(w) => warnings.push(w),
            }
            continue;
        }
        if base.eq_ignore_ascii_case(INDEX_FILE) {
            match parse_index(name, text) {
                Ok(doc) => docs.database = Some(doc),
                Err(w) => warnings.push(w),
            }
            continue;
        }
        let mut file_warnings = Vec::new();
        match parse_table_doc(name, text, &mut file_warnings) {
            Ok(doc) => {
                if let Some(first) = docs.table(&doc.table) {
                    warnings.push(skip(
                        name,
                        1,
                        format!("table `{}` is already documented in {}", doc.table, first.file),
                    ));
                } else {
                    warnings.extend(file_warnings);
                    docs.tables.push(doc);
                }
            }
            Err(w) => warnings.push(w),
        }
    }
    (docs, warnings)
}

/// True for `_examples/<name>.sql`: one verified example (see [`crate::examples`]).
fn is_example_sql(name: &str) -> bool {
    let Some((dir, file)) = name.rsplit_once(['/', '\\']) else { return false };
    let dir = dir.rsplit(['/', '\\']).next().unwrap_or(dir);
    dir.eq_ignore_ascii_case(crate::examples::EXAMPLES_DIR)
        && file.len() > 4
        && file.get(file.len() - 4..).is_some_and(|ext| ext.eq_ignore_ascii_case(".sql"))
}

/// Parses one table file. Non-fatal findings go to `warnings`; a fatal one is the error.
pub fn parse_table_doc(
    file: &str,
    text: &str,
    warnings: &mut Vec<DocWarning>,
) -> Result<TableDoc, DocWarning> {
    let md = Markdown::read(file, text)?;
    let Some(first) = md.headings.first() else {
        return Err(skip(file, 1, "no `# Table: <name>` heading; file skipped".into()));
    };
    let title_ok = first.level == 1 && strip_prefix_ci(&first.text, "table:").is_some();
    if !title_ok {
        return Err(skip(
            file,
            md.line(first.start),
            format!(
                "expected `# Table: <name>` as the first heading, found `{} {}`; file skipped",
                "#".repeat(first.level),
                first.text
            ),
        ));
    }
    let table = unquoted(strip_prefix_ci(&first.text, "table:").unwrap_or_default().trim());
    if table.is_empty() {
        return Err(skip(
            file,
            md.line(first.start),
            "`# Table:` heading without a table name; file skipped".into(),
        ));
    }
    if let Some(second) = md.headings.iter().skip(1).find(|h| h.level == 1) {
        return Err(skip(
            file,
            md.line(second.start),
            format!("a second `# ` heading (`{}`): one table per file; file skipped", second.text),
        ));
    }
    let mut doc = TableDoc {
        file: file.to_string(),
        table,
        origin: DocOrigin::of(text),
        ..TableDoc::default()
    };
    let h2: Vec<usize> = (1..md.headings.len()).filter(|&i| md.headings[i].level == 2).collect();
    for (n, &i) in h2.iter().enumerate() {
        let heading = &md.headings[i];
        let end = h2.get(n + 1).map_or(text.len(), |&j| md.headings[j].start);
        let body_range = heading.end..end;
        let subs: Vec<&Heading> = md.headings[i + 1..]
            .iter()
            .take_while(|h| h.start < end)
            .filter(|h| h.level == 3)
            .collect();
        let body = clean(&text[body_range.clone()]);
        // A section written twice: both texts are kept, and the repeat is said.
        let mut once = |slot: &mut Option<String>, body: String| {
            if slot.is_some() {
                warnings.push(DocWarning {
                    file: file.to_string(),
                    line: md.line(heading.start),
                    message: format!(
                        "a second `## {}` section; its text is added to the first's",
                        heading.text
                    ),
                    file_skipped: false,
                });
            }
            *slot = match (slot.take(), non_empty(body)) {
                (Some(first), Some(second)) => Some(format!("{first}\n\n{second}")),
                (first, second) => first.or(second),
            };
        };
        match section_kind(&heading.text) {
            Some(Section::Purpose) => once(&mut doc.purpose, body),
            Some(Section::BusinessContext) => once(&mut doc.business_context, body),
            Some(Section::Examples) => once(&mut doc.examples, body),
            Some(Section::Notes) => once(&mut doc.notes, body),
            Some(Section::Relationships) => doc.relationships = Some(parse_relationships(&body)),
            Some(Section::Columns) => {
                for (k, sub) in subs.iter().enumerate() {
                    let sub_end = subs.get(k + 1).map_or(end, |s| s.start);
                    let mut column = parse_column(&sub.text, &clean(&text[sub.end..sub_end]));
                    column.line = md.line(sub.start);
                    if doc.columns.iter().any(|c| c.name.eq_ignore_ascii_case(&column.name)) {
                        warnings.push(DocWarning {
                            file: file.to_string(),
                            line: md.line(sub.start),
                            message: format!(
                                "column `{}` is documented a second time; this one is skipped",
                                column.name
                            ),
                            file_skipped: false,
                        });
                        continue;
                    }
                    doc.columns.push(column);
                }
            }
            Some(Section::Queries) => {
                for (k, sub) in subs.iter().enumerate() {
                    let sub_end = subs.get(k + 1).map_or(end, |s| s.start);
                    let code: Vec<String> = md
                        .code_blocks
                        .iter()
                        .filter(|c| c.start >= sub.end && c.start < sub_end)
                        .map(|c| c.content.trim_end().to_string())
                        .collect();
                    doc.queries.push(parse_query(&sub.text, &clean(&text[sub.end..sub_end]), code));
                }
            }
            None => {
                warnings.push(DocWarning {
                    file: file.to_string(),
                    line: md.line(heading.start),
                    message: format!(
                        "unknown section `## {}` (expected Purpose, Business Context, Columns, Common Queries, Relationships, Examples, Notes); kept as part of the overview",
                        heading.text
                    ),
                    file_skipped: false,
                });
                if let Some(body) = non_empty(body) {
                    doc.other_sections.push((heading.text.clone(), body));
                }
            }
        }
    }
    Ok(doc)
}

/// Parses `_index.md`: an optional `# ` title and free text.
pub fn parse_index(file: &str, text: &str) -> Result<DatabaseDoc, DocWarning> {
    let md = Markdown::read(file, text)?;
    let title = md.headings.iter().find(|h| h.level == 1);
    let body = match title {
        Some(h) => clean(&format!("{}{}", &text[..h.start], &text[h.end..])),
        None => clean(text),
    };
    Ok(DatabaseDoc {
        file: file.to_string(),
        title: title.map(|h| h.text.clone()),
        text: body,
        origin: DocOrigin::of(text),
    })
}

/// The sections the format defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Purpose,
    BusinessContext,
    Columns,
    Queries,
    Relationships,
    Examples,
    Notes,
}

fn section_kind(title: &str) -> Option<Section> {
    let t = title.trim().trim_end_matches(':').trim().to_ascii_lowercase();
    Some(match t.as_str() {
        "purpose" => Section::Purpose,
        "business context" => Section::BusinessContext,
        "columns" => Section::Columns,
        "common queries" | "queries" | "query patterns" => Section::Queries,
        "relationships" => Section::Relationships,
        "examples" | "example" => Section::Examples,
        "notes" => Section::Notes,
        _ => return None,
    })
}

fn parse_column(heading: &str, body: &str) -> ColumnDoc {
    let mut col =
        ColumnDoc { name: unquoted(heading.trim()), text: body.to_string(), ..Default::default() };
    for (key, value) in labelled_lines(body) {
        match key.as_str() {
            "type" => col.type_name = Some(value.trim_matches('`').to_string()),
            "description" => col.description = Some(value),
            "domain" => col.domain = Some(value),
            "nullable" => {
                let v = value.to_ascii_lowercase();
                col.nullable = if v.starts_with("yes") || v.starts_with("true") {
                    Some(true)
                } else if v.starts_with("no") || v.starts_with("false") {
                    Some(false)
                } else {
                    None
                };
            }
            "notes" | "note" => col.notes = Some(value),
            _ => {}
        }
    }
    col
}

fn parse_query(heading: &str, body: &str, sql: Vec<String>) -> QueryDoc {
    let name =
        strip_prefix_ci(heading.trim(), "query pattern:").unwrap_or(heading).trim().to_string();
    let mut q = QueryDoc { name, sql, text: body.to_string(), ..Default::default() };
    let mut description = Vec::new();
    let mut in_code = false;
    let mut seen_code = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            seen_code = true;
            continue;
        }
        if in_code {
            continue;
        }
        if let Some((key, value)) = labelled(t) {
            match key.as_str() {
                "use case" => q.use_case = Some(value),
                "returns" => q.returns = Some(value),
                _ => {}
            }
        } else if !seen_code && !t.is_empty() {
            description.push(t.to_string());
        }
    }
    q.description = description.join(" ");
    q
}

fn parse_relationships(body: &str) -> RelationshipsDoc {
    let mut rel = RelationshipsDoc { text: body.to_string(), ..Default::default() };
    let mut in_joins = false;
    for line in body.lines() {
        let t = line.trim();
        if let Some((key, value)) = labelled(t) {
            in_joins = false;
            match key.as_str() {
                "related tables" => {
                    rel.related_tables = value
                        .split([',', ';'])
                        .map(|s| s.trim().trim_matches('`').trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                }
                "join patterns" | "join pattern" => {
                    in_joins = true;
                    if !value.is_empty() {
                        rel.join_patterns.extend(
                            value
                                .split(';')
                                .map(|s| s.trim().trim_matches('`').to_string())
                                .filter(|s| !s.is_empty()),
                        );
                    }
                }
                _ => {}
            }
        } else if in_joins && !t.is_empty() {
            // Join patterns written as a nested list below the label.
            let item = t.trim_start_matches(['-', '*']).trim().trim_matches('`');
            if !item.is_empty() {
                rel.join_patterns.push(item.to_string());
            }
        }
    }
    rel
}

/// `(key, value)` of every `- **Key:** value` line, keys lowercase; continuation lines (indented,
/// not bullets) are appended to the value.
fn labelled_lines(body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let t = line.trim_start();
        if let Some(pair) = labelled(t) {
            out.push(pair);
        } else if !t.is_empty()
            && line.starts_with([' ', '\t'])
            && !t.starts_with(['-', '*'])
            && let Some(last) = out.last_mut()
        {
            last.1.push(' ');
            last.1.push_str(t);
        }
    }
    out
}

/// `**Key:** value`, optionally as a bullet; the colon may sit inside or after the bold.
fn labelled(line: &str) -> Option<(String, String)> {
    let t = line.trim_start_matches(['-', '*', '+']).trim_start();
    let t = if line.starts_with("**") { line } else { t };
    let rest = t.strip_prefix("**")?;
    let close = rest.find("**")?;
    let key = rest[..close].trim().trim_end_matches(':').trim().to_ascii_lowercase();
    let value = rest[close + 2..].trim_start().trim_start_matches(':').trim().to_string();
    (!key.is_empty()).then_some((key, value))
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let t = text.trim_start();
    (t.len() >= prefix.len()
        && t.is_char_boundary(prefix.len())
        && t[..prefix.len()].eq_ignore_ascii_case(prefix))
    .then(|| &t[prefix.len()..])
}

/// A name as written in a heading, without the quotes SQL or markdown put around it (`` `x` ``,
/// `"x"`, `[x]`).
fn unquoted(name: &str) -> String {
    for (open, close) in [('`', '`'), ('"', '"'), ('[', ']'), ('\'', '\'')] {
        if let Some(inner) = name.strip_prefix(open).and_then(|n| n.strip_suffix(close))
            && !inner.is_empty()
        {
            return inner.to_string();
        }
    }
    name.to_string()
}

fn non_empty(text: String) -> Option<String> {
    (!text.trim().is_empty()).then_some(text)
}

/// Text without HTML comments (the generator's placeholders and markers), trimmed, with runs of
/// blank lines collapsed to one.
pub fn clean(text: &str) -> String {
    let mut without = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        without.push_str(&rest[..open]);
        match rest[open..].find("-->") {
            Some(close) => rest = &rest[open + close + 3..],
            None => {
                rest = "";
            }
        }
    }
    without.push_str(rest);
    let mut out = String::with_capacity(without.len());
    let mut blank = 0;
    for line in without.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim_end().to_string()
}

fn skip(file: &str, line: usize, message: String) -> DocWarning {
    DocWarning { file: file.to_string(), line, message, file_skipped: true }
}

/// A heading: level, plain text, and the byte range of the whole heading line.
#[derive(Debug)]
struct Heading {
    level: usize,
    text: String,
    start: usize,
    end: usize,
}

/// A fenced or indented code block.
#[derive(Debug)]
struct CodeBlock {
    start: usize,
    content: String,
}

/// The headings and code blocks of a markdown file, found by a CommonMark parser so that a `#`
/// inside a code block is not a heading.
struct Markdown {
    headings: Vec<Heading>,
    code_blocks: Vec<CodeBlock>,
    line_starts: Vec<usize>,
}

impl Markdown {
    fn read(file: &str, text: &str) -> Result<Self, DocWarning> {
        let line_starts: Vec<usize> =
            std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let mut md = Markdown { headings: Vec::new(), code_blocks: Vec::new(), line_starts };
        let mut heading: Option<Heading> = None;
        let mut code: Option<CodeBlock> = None;
        for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
            match event {
                Event::Start(Tag::Heading { level, .. }) => {
                    heading = Some(Heading {
                        level: level_number(level),
                        text: String::new(),
                        start: range.start,
                        end: range.end,
                    });
                }
                Event::End(TagEnd::Heading(_)) => {
                    if let Some(mut h) = heading.take() {
                        h.text = h.text.trim().to_string();
                        md.headings.push(h);
                    }
                }
                Event::Start(Tag::CodeBlock(kind)) => {
                    if let CodeBlockKind::Fenced(_) = kind
                        && !fence_closed(&text[range.clone()])
                    {
                        return Err(skip(
                            file,
                            md.line(range.start),
                            "code fence opened here is never closed; file skipped".into(),
                        ));
                    }
                    code = Some(CodeBlock { start: range.start, content: String::new() });
                }
                Event::End(TagEnd::CodeBlock) => {
                    if let Some(c) = code.take() {
                        md.code_blocks.push(c);
                    }
                }
                Event::Text(t) | Event::Code(t) => {
                    if let Some(h) = heading.as_mut() {
                        h.text.push_str(&t);
                    } else if let Some(c) = code.as_mut() {
                        c.content.push_str(&t);
                    }
                }
                _ => {}
            }
        }
        Ok(md)
    }

    /// 1-based line of a byte offset.
    fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset)
    }
}

/// True when a fenced block's source ends with a closing fence of the same character, at least as
/// long as the opening one.
fn fence_closed(block: &str) -> bool {
    let mut lines = block.trim_end_matches(['\n', '\r']).lines();
    let Some(open) = lines.next() else { return false };
    let open = open.trim_start();
    let Some(fence_char) = open.chars().next() else { return false };
    let open_len = open.chars().take_while(|&c| c == fence_char).count();
    match lines.last() {
        Some(close) => {
            let close = close.trim();
            let n = close.chars().take_while(|&c| c == fence_char).count();
            n >= open_len && n == close.chars().count()
        }
        None => false,
    }
}

fn level_number(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUSTOMER: &str = "# Table: Customer\n\n## Purpose\n\nOne row per customer.\n\n\n\n## columns\n\n### CustomerId\n\n- **Type:** INTEGER\n- **Description:** Surrogate key.\n- **Nullable:** no\n\n### Email\n* **Type:** `NVARCHAR(60)`\n* **Domain:** e-mail addresses\n  unique per customer\n\n## Common Queries\n\n### Query Pattern: Customers by country\n\nCount customers per country.\n\n```sql\nSELECT Country, COUNT(*)\nFROM Customer\nGROUP BY Country;\n```\n\n**Use case:** market sizing\n**Returns:** one row per country\n\n### Top spenders\n\n```sql\nSELECT 1;\n```\n\n## Relationships\n\n- **Related tables:** Invoice, `Employee`\n- **Join patterns:**\n  - `JOIN Invoice ON Invoice.CustomerId = Customer.CustomerId`\n";

    #[test]
    fn parses_every_section_of_a_table_doc_tolerating_case_and_blank_lines() {
        let mut warnings = Vec::new();
        let doc = parse_table_doc("Customer.md", CUSTOMER, &mut warnings).expect("parses");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(doc.table, "Customer");
        assert_eq!(doc.purpose.as_deref(), Some("One row per customer."));
        assert_eq!(doc.columns.len(), 2);
        assert_eq!(doc.columns[0].type_name.as_deref(), Some("INTEGER"));
        assert_eq!(doc.columns[0].nullable, Some(false));
        assert_eq!(doc.columns[1].type_name.as_deref(), Some("NVARCHAR(60)"));
        assert_eq!(doc.columns[1].domain.as_deref(), Some("e-mail addresses unique per customer"));
        assert_eq!(doc.queries.len(), 2);
        assert_eq!(doc.queries[0].name, "Customers by country");
        assert_eq!(doc.queries[0].description, "Count customers per country.");
        assert_eq!(
            doc.queries[0].sql,
            vec!["SELECT Country, COUNT(*)\nFROM Customer\nGROUP BY Country;"]
        );
        assert_eq!(doc.queries[0].use_case.as_deref(), Some("market sizing"));
        assert_eq!(doc.queries[0].returns.as_deref(), Some("one row per country"));
        assert_eq!(doc.queries[1].name, "Top spenders");
        let rel = doc.relationships.expect("relationships");
        assert_eq!(rel.related_tables, vec!["Invoice", "Employee"]);
        assert_eq!(
            rel.join_patterns,
            vec!["JOIN Invoice ON Invoice.CustomerId = Customer.CustomerId"]
        );
    }

    #[test]
    fn malformed_files_are_skipped_with_file_and_line() {
        let files = [
            ("a.md", "Some intro\n\n## Purpose\n\nNo title.\n"),
            ("b.md", "# Table: B\n\n## Common Queries\n\n### Q\n\n```sql\nSELECT 1;\n"),
            ("c.md", "# Table: C\n\n## Purpose\n\nok\n\n# Table: D\n"),
            ("d.md", "# Table: Customer\n\n## Purpose\n\nFirst.\n"),
            ("e.md", "# TABLE: customer\n\n## Purpose\n\nDuplicate.\n"),
            ("f.md", "# Table: F\n\n## Owner\n\nFinance team.\n"),
        ];
        let (docs, warnings) = parse_docs(&files);
        let summary: Vec<(&str, usize, bool)> =
            warnings.iter().map(|w| (w.file.as_str(), w.line, w.file_skipped)).collect();
        assert_eq!(
            summary,
            vec![
                ("a.md", 3, true),
                ("b.md", 7, true),
                ("c.md", 7, true),
                ("e.md", 1, true),
                ("f.md", 3, false)
            ]
        );
        assert!(warnings[1].message.contains("never closed"), "{}", warnings[1].message);
        assert_eq!(
            docs.tables.iter().map(|t| t.table.as_str()).collect::<Vec<_>>(),
            vec!["Customer", "F"]
        );
        assert_eq!(
            docs.tables[1].other_sections,
            vec![("Owner".to_string(), "Finance team.".to_string())]
        );
    }

    #[test]
    fn index_file_is_the_database_overview_without_comments() {
        let (docs, warnings) = parse_docs(&[(
            "docs/_index.md",
            "<!-- schemascope:generated -->\n# Chinook\n\nA digital media store.\n",
        )]);
        assert!(warnings.is_empty());
        let db = docs.database.expect("index");
        assert_eq!(db.title.as_deref(), Some("Chinook"));
        assert_eq!(db.text, "A digital media store.");
    }

    #[test]
    fn hash_inside_code_is_not_a_heading() {
        let text = "# Table: T\n\n## Examples\n\n```\n# Table: not a heading\n## Nope\n```\n";
        let mut warnings = Vec::new();
        let doc = parse_table_doc("t.md", text, &mut warnings).expect("parses");
        assert!(warnings.is_empty());
        assert!(doc.examples.expect("examples").contains("## Nope"));
    }

    #[test]
    fn repeats_are_said_and_quoted_names_unquoted() {
        let mut warnings = Vec::new();
        let text = "# Table: \"Shippers\"\n\n## Purpose\n\nFirst.\n\n## Purpose\n\nSecond.\n\n\
                    ## Columns\n\n### [Phone]\n\nA phone.\n\n### phone\n\nAgain.\n";
        let doc = parse_table_doc("Shippers.md", text, &mut warnings).expect("parses");
        assert_eq!(doc.table, "Shippers");
        assert_eq!(doc.purpose.as_deref(), Some("First.\n\nSecond."));
        assert_eq!(doc.columns.len(), 1);
        assert_eq!((doc.columns[0].name.as_str(), doc.columns[0].line), ("Phone", 13));
        let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "Shippers.md:7: a second `## Purpose` section; its text is added to the first's",
                "Shippers.md:17: column `phone` is documented a second time; this one is skipped",
            ]
        );
        let whole = DocWarning {
            file: "x.md".into(),
            line: 0,
            message: "not UTF-8".into(),
            file_skipped: true,
        };
        assert_eq!(whole.to_string(), "x.md: not UTF-8");
    }
}
