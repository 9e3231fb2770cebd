//! Writing a starting set of docs in the seed's format from the catalog, the column profiles and a
//! few example rows, for people to enrich. Each generated file carries a marker with a hash of its
//! content, so a caller can overwrite files nobody edited and leave edited ones alone.

use schemascope_core::display::{code, escape_controls};
use schemascope_core::summary::number;
use schemascope_core::{Catalog, CollectionProfile, PropertyProfile, TableInfo};
use serde_json::Value;

use crate::chunk::join_clause;
use crate::fingerprint::hash_text;
use crate::notes::ColumnNotes;
use crate::parse::INDEX_FILE;

/// The start of the first line of every generated file.
const MARKER: &str = "<!-- schemascope:generated fnv1a64=";
/// Distinct values up to which a column's values are all listed.
const DOMAIN_MAX: usize = 10;
/// Example rows shown.
const EXAMPLE_ROWS: usize = 3;
/// Columns shown in the examples table.
const EXAMPLE_COLUMNS: usize = 8;
/// Characters of an example value shown.
const EXAMPLE_VALUE_CHARS: usize = 40;

/// What is known about a table's rows.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableData<'a> {
    /// The profile of its rows, one property per column (paths are column names).
    pub profile: Option<&'a CollectionProfile>,
    /// A few rows as JSON objects keyed by column name.
    pub examples: &'a [Value],
}

/// A generated docs file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// File name inside the docs directory (`_index.md`, `<table>.md`).
    pub name: String,
    /// Its content, marker included.
    pub text: String,
}

/// `_index.md` and one file per table. `data` gives each table's profile and examples.
pub fn generate_docs<'a>(
    catalog: &Catalog,
    database: &str,
    data: impl Fn(&TableInfo) -> TableData<'a>,
) -> Vec<GeneratedFile> {
    let mut files = vec![GeneratedFile {
        name: INDEX_FILE.to_string(),
        text: generate_index(catalog, database),
    }];
    for table in &catalog.tables {
        let mut name = file_name(&table.name);
        while files.iter().any(|f| f.name.eq_ignore_ascii_case(&name)) {
            name = format!("{}_.md", name.trim_end_matches(".md"));
        }
        files.push(GeneratedFile { name, text: generate_table_doc(catalog, table, data(table)) });
    }
    files
}

/// The file name for a table's docs: the name with characters unsafe in file names replaced.
pub fn file_name(table: &str) -> String {
    let safe: String = table
        .chars()
        .map(|c| if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
        .collect();
    format!("{safe}.md")
}

/// True when `text` is a generated file nobody changed since (its marker's hash still matches).
pub fn is_unedited(text: &str) -> bool {
    let Some((first, rest)) = text.split_once('\n') else { return false };
    let Some(hex) = first.strip_prefix(MARKER).and_then(|r| r.strip_suffix(" -->")) else {
        return false;
    };
    u64::from_str_radix(hex, 16).is_ok_and(|recorded| recorded == hash_text(rest))
}

fn with_marker(body: String) -> String {
    format!("{MARKER}{:016x} -->\n{body}", hash_text(&body))
}

/// `_index.md`: the database, its tables and how they connect.
pub fn generate_index(catalog: &Catalog, database: &str) -> String {
    let mut out = format!("# Database: {database}\n\n");
    out.push_str(
        "<!-- Describe what this database is for, who uses it and how current it is. -->\n\n",
    );
    out.push_str(&format!("{} tables.\n\n## Tables\n\n", catalog.tables.len()));
    for t in &catalog.tables {
        let mut facts = vec![format!("{} columns", t.columns.len())];
        if let Some(rows) = t.row_count {
            facts.push(format!("{rows} rows"));
        }
        let neighbours = catalog.neighbours(&t.name);
        if !neighbours.is_empty() {
            facts.push(format!("joins {}", neighbours.join(", ")));
        }
        out.push_str(&format!("- **{}** — {}\n", t.name, facts.join("; ")));
    }
    with_marker(out)
}

/// One table's docs in the seed's format.
pub fn generate_table_doc(catalog: &Catalog, table: &TableInfo, data: TableData<'_>) -> String {
    let mut out = format!("# Table: {}\n\n## Purpose\n\n", heading_name(&table.name));
    let rows = table.row_count.or(data.profile.map(|p| p.item_count));
    out.push_str(&format!("{}\n\n", generated_purpose(table)));
    out.push_str("<!-- What does one row represent? Who creates and reads these rows? -->\n\n");
    out.push_str("## Business Context\n\n<!-- Business rules, ownership, data sensitivity. -->\n\n## Columns\n\n");
    for column in &table.columns {
        let profile = data.profile.and_then(|p| p.column(&column.name));
        out.push_str(&format!("### {}\n\n", heading_name(&column.name)));
        let declared = if column.declared_type.is_empty() {
            "(none declared)"
        } else {
            column.declared_type.as_str()
        };
        out.push_str(&format!("- **Type:** {declared}\n"));
        out.push_str(&format!(
            "- **Description:** {}\n",
            column_description(catalog, table, &column.name, column.comment.as_deref())
        ));
        if let Some(domain) =
            profile.and_then(|p| domain(p, data.profile.map_or(0, |c| c.item_count)))
        {
            out.push_str(&format!("- **Domain:** {domain}\n"));
        }
        let nullable = match (column.nullable, profile) {
            (false, _) => "no".to_string(),
            (true, Some(p)) if p.total > 0 => {
                let nulls = p.nulls + p.missing();
                format!("yes ({} of {} null)", nulls, p.total)
            }
            (true, _) => "yes".to_string(),
        };
        out.push_str(&format!("- **Nullable:** {nullable}\n\n"));
    }
    let joins = joins(catalog, table);
    if !joins.is_empty() {
        out.push_str("## Common Queries\n\n");
        for join in &joins {
            out.push_str(&format!(
                "### Query Pattern: {} with {}\n\n{}\n\n```sql\nSELECT *\nFROM {}\n{};\n```\n\n**Use case:** {}\n**Returns:** {}\n\n",
                table.name, join.other, join.description, table.name, join.clause, join.use_case, join.returns
            ));
        }
        out.push_str("## Relationships\n\n");
        let mut related: Vec<&str> = joins.iter().map(|j| j.other.as_str()).collect();
        related.dedup();
        out.push_str(&format!(
            "- **Related tables:** {}\n- **Join patterns:**\n",
            related.join(", ")
        ));
        for join in &joins {
            out.push_str(&format!("  - {}\n", code(&join.clause)));
        }
        out.push('\n');
    }
    if !data.examples.is_empty() {
        out.push_str("## Examples\n\n");
        out.push_str(&examples_table(table, data.examples));
        out.push('\n');
    }
    out.push_str("## Notes\n\n");
    out.push_str(&format!("{}\n", primary_key_note(table)));
    if let Some(rows) = rows {
        out.push_str(&format!("- {rows}{ROWS_NOTE_END}\n"));
    }
    with_marker(out)
}

/// The end of the generated note giving the row count when the docs were written.
const ROWS_NOTE_END: &str = " rows when these docs were generated.";

/// The purpose a generated file starts with: the table's comment, else its kind and size.
pub(crate) fn generated_purpose(table: &TableInfo) -> String {
    match &table.comment {
        Some(comment) => comment.trim().to_string(),
        None => format!("{} of the database, {} columns.", kind_phrase(table), table.columns.len()),
    }
}

/// The generated note naming the primary key.
fn primary_key_note(table: &TableInfo) -> String {
    if table.primary_key.is_empty() {
        "- No primary key.".to_string()
    } else {
        format!("- Primary key: {}.", table.primary_key.join(", "))
    }
}

/// True when `line` of a table's Notes is one the generator writes (the key, the row count
/// then), which says nothing the structure does not.
pub(crate) fn is_generated_note(table: &TableInfo, line: &str) -> bool {
    let line = line.trim();
    line == primary_key_note(table)
        || line
            .strip_prefix("- ")
            .and_then(|rest| rest.strip_suffix(ROWS_NOTE_END))
            .is_some_and(|rows| rows.bytes().all(|b| b.is_ascii_digit()))
}

/// True when `text` starts with the generator's marker, edited since or not.
pub(crate) fn has_marker(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// Value-domain notes for every profiled column of `table` (for [`ColumnNotes`], so that the
/// schema context shows them even without docs).
pub fn column_notes(table: &TableInfo, profile: &CollectionProfile, notes: &mut ColumnNotes) {
    for column in &table.columns {
        if let Some(p) = profile.column(&column.name)
            && let Some(text) = domain(p, profile.item_count)
        {
            notes.insert(&table.name, &column.name, text);
        }
    }
}

/// A FK join seen from one table.
struct Join {
    other: String,
    clause: String,
    description: String,
    use_case: String,
    returns: String,
}

fn joins(catalog: &Catalog, table: &TableInfo) -> Vec<Join> {
    let mut out = Vec::new();
    for fk in &table.foreign_keys {
        if fk.referenced_table == table.name {
            continue;
        }
        let cols = fk.columns.join(", ");
        out.push(Join {
            other: fk.referenced_table.clone(),
            clause: join_clause(
                &fk.referenced_table,
                &table.name,
                &fk.columns,
                &fk.referenced_table,
                &fk.referenced_columns,
            ),
            description: format!(
                "Each {} row with the {} row its {cols} refers to.",
                table.name, fk.referenced_table
            ),
            use_case: format!("details of the {} of a {}", fk.referenced_table, table.name),
            returns: format!("one row per {} row that has a {}", table.name, fk.referenced_table),
        });
    }
    for incoming in catalog.referenced_by(&table.name) {
        let other = &incoming.table.name;
        if *other == table.name {
            continue;
        }
        let key = incoming.key;
        out.push(Join {
            other: other.clone(),
            clause: join_clause(other, other, &key.columns, &table.name, &key.referenced_columns),
            description: format!(
                "Each {} row with the {other} rows that refer to it through {}.",
                table.name,
                key.columns.join(", ")
            ),
            use_case: format!("the {other} rows of a {}", table.name),
            returns: format!("one row per matching {other} row"),
        });
    }
    out
}

pub(crate) fn column_description(
    catalog: &Catalog,
    table: &TableInfo,
    column: &str,
    comment: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if let Some(c) = comment {
        parts.push(c.trim().to_string());
    }
    if table.is_primary_key(column) {
        parts.push(format!("Primary key of {}.", table.name));
    }
    if let Some(fk) = table.foreign_key_of(column) {
        let at = fk.columns.iter().position(|c| c.eq_ignore_ascii_case(column)).unwrap_or(0);
        let target = fk.referenced_columns.get(at).map_or(String::new(), |c| format!(".{c}"));
        parts.push(format!("References {}{target}.", fk.referenced_table));
    }
    let referenced: Vec<String> = catalog
        .referenced_by(&table.name)
        .iter()
        .filter(|i| i.key.referenced_columns.iter().any(|c| c.eq_ignore_ascii_case(column)))
        .map(|i| format!("{}.{}", i.table.name, i.key.columns.join(", ")))
        .collect();
    if !referenced.is_empty() {
        parts.push(format!("Referenced by {}.", referenced.join(", ")));
    }
    if parts.is_empty() {
        // A placeholder the reader sees in the file but retrieval never indexes.
        return "<!-- What does this column mean? Units? -->".to_string();
    }
    parts.join(" ")
}

/// The values a column holds, in one phrase: all of them when few, else range, format or samples.
pub fn domain(p: &PropertyProfile, rows: u64) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(s) = &p.strings {
        if (s.distinct as usize) <= DOMAIN_MAX && !s.top.is_empty() {
            let shown = quoted_list(s.top.iter().map(|v| &v.value));
            let values: Vec<String> = s
                .top
                .iter()
                .zip(shown)
                .map(|(v, shown)| format!("{shown} ({})", v.count))
                .collect();
            parts.push(format!("one of {}", values.join(", ")));
        } else if let (Some(format), Some(min), Some(max)) = (s.format, &s.min, &s.max) {
            if format.is_temporal() {
                parts.push(format!("{} from {min} to {max}", format.name()));
            } else {
                parts.push(format!("{} values", format.name()));
            }
        } else {
            let samples = quoted_list(s.top.iter().take(3).map(|v| &v.value));
            parts.push(format!(
                "{} distinct texts, {}–{} characters, e.g. {}",
                s.distinct,
                s.min_length,
                s.max_length,
                samples.join(", ")
            ));
        }
    }
    if let Some(n) = &p.numbers {
        let kind = if n.all_integers() { "integers" } else { "numbers" };
        if (n.distinct as usize) <= DOMAIN_MAX && !n.top.is_empty() {
            let values: Vec<String> = n.top.iter().map(|v| v.value.to_string()).collect();
            parts.push(format!("{kind} {}", values.join(", ")));
        } else {
            parts.push(format!(
                "{kind} from {} to {} ({} distinct)",
                number(n.min),
                number(n.max),
                n.distinct
            ));
        }
    }
    if let Some(b) = &p.booleans {
        parts.push(format!("true {}, false {}", b.true_count, b.false_count));
    }
    if parts.is_empty() {
        return None;
    }
    if rows > 0 && p.distinct == rows && p.nulls == 0 {
        parts.push("unique per row".to_string());
    }
    Some(parts.join("; "))
}

/// Counted values quoted as a domain lists them: cut as schemascope_core's lists cut them
/// (values that differ never read alike, an over-long one by its start and length), control
/// characters escaped (`\u{000A}`: as spaces, `a\nb` and `a b` read alike), quotes doubled.
fn quoted_list<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    schemascope_core::display::shorten_value_list(values, EXAMPLE_VALUE_CHARS)
        .into_iter()
        .map(|value| match value {
            // Quotes doubled as SQL writes them: `a' (2), 'b` is one value, not two.
            Value::String(s) => format!("'{}'", escape_controls(&s).replace('\'', "''")),
            other => other.to_string(),
        })
        .collect()
}

fn shorten(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

fn examples_table(table: &TableInfo, rows: &[Value]) -> String {
    let columns: Vec<&str> =
        table.columns.iter().take(EXAMPLE_COLUMNS).map(|c| c.name.as_str()).collect();
    let cell = |text: String| text.replace('|', "\\|").replace('`', "'");
    let mut out = format!(
        "| {} |\n|{}\n",
        columns.iter().map(|c| cell(c.to_string())).collect::<Vec<_>>().join(" | "),
        " --- |".repeat(columns.len())
    );
    for row in rows.iter().take(EXAMPLE_ROWS) {
        let values: Vec<String> = columns
            .iter()
            .map(|c| match row.get(*c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => cell(shorten(s, EXAMPLE_VALUE_CHARS)),
                Some(other) => cell(shorten(&other.to_string(), EXAMPLE_VALUE_CHARS)),
            })
            .collect();
        out.push_str(&format!("| {} |\n", values.join(" | ")));
    }
    out
}

fn kind_phrase(table: &TableInfo) -> String {
    match table.kind {
        schemascope_core::TableKind::Table => format!("The {} table", code(&table.name)),
        schemascope_core::TableKind::View => format!("The {} view", code(&table.name)),
    }
}

/// A name as a heading: plain when markdown leaves it alone, in backticks otherwise.
fn heading_name(name: &str) -> String {
    let plain = name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | ' ' | '.' | '-'))
        && !name.starts_with(['_', '-', ' '])
        && !name.ends_with(['_', ' ']);
    if plain { name.to_string() } else { code(name) }
}

#[cfg(test)]
mod tests {
    use schemascope_core::{ColumnInfo, ForeignKey, ProfileBuilder, TableKind};
    use serde_json::json;

    use super::*;
    use crate::parse::parse_docs;

    fn catalog() -> Catalog {
        let col = |name: &str, ty: &str, nullable: bool| ColumnInfo {
            name: name.into(),
            declared_type: ty.into(),
            nullable,
            comment: None,
            base_type: None,
        };
        Catalog {
            tables: vec![
                TableInfo {
                    name: "Genre".into(),
                    kind: TableKind::Table,
                    columns: vec![
                        col("GenreId", "INTEGER", false),
                        col("Name", "NVARCHAR(120)", true),
                    ],
                    primary_key: vec!["GenreId".into()],
                    foreign_keys: vec![],
                    row_count: Some(3),
                    row_count_estimated: false,
                    comment: None,
                },
                TableInfo {
                    name: "Track".into(),
                    kind: TableKind::Table,
                    columns: vec![
                        col("TrackId", "INTEGER", false),
                        col("GenreId", "INTEGER", true),
                        col("_weird*name", "", true),
                    ],
                    primary_key: vec!["TrackId".into()],
                    foreign_keys: vec![ForeignKey {
                        columns: vec!["GenreId".into()],
                        referenced_table: "Genre".into(),
                        referenced_columns: vec!["GenreId".into()],
                    }],
                    row_count: Some(2),
                    row_count_estimated: false,
                    comment: Some("One row per track | song.".into()),
                },
            ],
        }
    }

    fn genre_rows() -> Vec<Value> {
        vec![
            json!({"GenreId": 1, "Name": "Rock"}),
            json!({"GenreId": 2, "Name": "Jazz"}),
            json!({"GenreId": 3, "Name": null}),
        ]
    }

    #[test]
    fn a_domain_never_lists_two_values_alike() {
        // Values sharing more than the 40 characters a domain shows, and over-long ones (counted
        // by their start, length and a hash: never shown).
        let head = "a".repeat(100);
        let long = "b".repeat(300);
        let values =
            [format!("{head}X1"), format!("{head}X1"), format!("{head}Y2"), format!("{long}1")];
        let mut builder = ProfileBuilder::new();
        for v in &values {
            builder.add_value(&json!({ "v": v }));
        }
        let profile = builder.finish(values.len() as u64);
        let p = profile.property(&"v".parse().expect("path")).expect("v");
        let text = domain(p, values.len() as u64).expect("domain");
        assert_eq!(
            text,
            format!(
                "one of '{head}X1' (2), '{head}Y2' (1), '{}… [truncated: 301 chars]' (1)",
                "b".repeat(40)
            )
        );
        assert!(!text.contains('#'), "{text}");
        // A quote in a value cannot make it read as two (tester helper-70).
        let mut builder = ProfileBuilder::new();
        for v in ["a' (2), 'b", "a' (2), 'b"] {
            builder.add_value(&json!({ "v": v }));
        }
        let profile = builder.finish(2);
        let p = profile.property(&"v".parse().expect("path")).expect("v");
        assert_eq!(domain(p, 2).as_deref(), Some("one of 'a'' (2), ''b' (2)"));
        let mut builder = ProfileBuilder::new();
        for v in ["a\nb", "a b"] {
            builder.add_value(&json!({ "v": v }));
        }
        let profile = builder.finish(2);
        let p = profile.property(&"v".parse().expect("path")).expect("v");
        assert_eq!(
            domain(p, 2).as_deref(),
            Some("one of 'a\\u{000A}b' (1), 'a b' (1); unique per row")
        );
    }

    #[test]
    fn generated_docs_parse_back_without_warnings_and_carry_profile_facts() {
        let catalog = catalog();
        let rows = genre_rows();
        let mut builder = ProfileBuilder::new();
        for row in &rows {
            builder.add_value(row);
        }
        let profile = builder.finish(rows.len() as u64);
        let files = generate_docs(&catalog, "music", |t| {
            if t.name == "Genre" {
                TableData { profile: Some(&profile), examples: &rows }
            } else {
                TableData::default()
            }
        });
        assert_eq!(
            files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            vec!["_index.md", "Genre.md", "Track.md"]
        );
        let pairs: Vec<(&str, &str)> =
            files.iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
        let (docs, warnings) = parse_docs(&pairs);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            docs.database.as_ref().and_then(|d| d.title.as_deref()),
            Some("Database: music")
        );
        let genre = docs.table("Genre").expect("genre");
        assert_eq!(genre.columns.len(), 2);
        let name = &genre.columns[1];
        assert_eq!(name.domain.as_deref(), Some("one of 'Jazz' (1), 'Rock' (1)"));
        assert_eq!(name.nullable, Some(true));
        assert!(name.text.contains("yes (1 of 3 null)"), "{}", name.text);
        assert_eq!(genre.columns[0].domain.as_deref(), Some("integers 1, 2, 3; unique per row"));
        assert_eq!(
            genre.queries[0].sql,
            vec!["SELECT *\nFROM Genre\nJOIN Track ON Track.GenreId = Genre.GenreId;"]
        );
        assert_eq!(
            genre.relationships.as_ref().map(|r| r.related_tables.clone()),
            Some(vec!["Track".to_string()])
        );
        assert!(genre.examples.as_deref().is_some_and(|e| e.contains("| 2 | Jazz |")));
        let track = docs.table("Track").expect("track");
        assert_eq!(track.purpose.as_deref(), Some("One row per track | song."));
        assert_eq!(track.columns[2].name, "_weird*name");
        assert_eq!(track.columns[1].description.as_deref(), Some("References Genre.GenreId."));
        // The placeholder comment of an undescribed column is not indexed.
        assert_eq!(track.columns[2].description.as_deref(), Some(""));
        // The same value domains can be shown beside the columns in the schema context.
        let mut notes = ColumnNotes::new();
        column_notes(&catalog.tables[0], &profile, &mut notes);
        assert_eq!(notes.get("genre", "name"), Some("one of 'Jazz' (1), 'Rock' (1)"));
    }

    #[test]
    fn names_with_backticks_stay_whole_in_code_spans() {
        let mut catalog = catalog();
        catalog.tables[1].name = "we`ird".into();
        catalog.tables[1].columns[2].name = "col``x".into();
        let text = generate_table_doc(&catalog, &catalog.tables[1], TableData::default());
        assert!(text.contains("\n# Table: ``we`ird``\n"), "{text}");
        assert_eq!(kind_phrase(&catalog.tables[1]), "The ``we`ird`` table");
        assert!(text.contains("### ```col``x```"), "{text}");
        let (docs, warnings) = parse_docs(&[("we`ird.md", text.as_str())]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let table = docs.table("we`ird").expect("the name reads back whole");
        assert_eq!(table.columns[2].name, "col``x");
    }

    #[test]
    fn only_untouched_generated_files_count_as_unedited() {
        let text = generate_table_doc(&catalog(), &catalog().tables[0], TableData::default());
        assert!(is_unedited(&text));
        assert!(!is_unedited(&text.replace("## Purpose\n\n", "## Purpose\n\nSongs' genres.\n\n")));
        assert!(!is_unedited("# Table: Genre\n"));
        assert!(!is_unedited(&text.replacen("fnv1a64=", "fnv1a64=x", 1)));
    }
}
