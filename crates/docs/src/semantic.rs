//! Business terms, metrics and relationships the schema does not state, from a small TOML file in
//! the docs directory ([`SEMANTIC_FILE`]): which table or column a business word means, how a
//! figure the business quotes is computed, which tables join without a declared key.
//!
//! ```toml
//! [[term]]
//! name = "revenue"
//! synonyms = ["sales", "turnover"]
//! means = ["Invoice.Total"]
//! description = "Money billed to customers, tax included."
//!
//! [[metric]]
//! name = "average basket"
//! sql = "AVG(Invoice.Total)"
//! description = "Mean invoice total."
//!
//! [[relationship]]
//! from = "Customer.SupportRepId"
//! to = "Employee.EmployeeId"
//! description = "The sales support agent who looks after the customer."
//! ```
//!
//! Reading never fails: a file that is not valid TOML, or an entry naming a table or column the
//! database lacks, is a [`DocWarning`] with file and line, and the rest is kept.

use schemascope_core::Catalog;
use serde::Deserialize;
use toml::Spanned;

use crate::parse::DocWarning;
use crate::toml_file::{TomlFile, read_toml, warning};

/// The semantic file's name in a docs directory.
pub const SEMANTIC_FILE: &str = "_semantic.toml";

/// Entries of one kind read from one file at most (a file is meant to be small).
const MAX_ENTRIES: usize = 1_000;

/// The file as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    term: Vec<Spanned<TermEntry>>,
    #[serde(default)]
    metric: Vec<Spanned<MetricEntry>>,
    #[serde(default)]
    relationship: Vec<Spanned<RelationshipEntry>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct TermEntry {
    name: String,
    #[serde(default)]
    synonyms: Vec<String>,
    means: Vec<Spanned<String>>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricEntry {
    name: String,
    sql: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    tables: Vec<Spanned<String>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationshipEntry {
    from: Spanned<String>,
    to: Spanned<String>,
    #[serde(default)]
    description: Option<String>,
}

/// A table, or a column of it, in the catalog's spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The table.
    pub table: String,
    /// The column, when the target is one.
    pub column: Option<String>,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.column {
            Some(column) => write!(f, "{}.{column}", self.table),
            None => f.write_str(&self.table),
        }
    }
}

/// A business word and what it means in the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The word as the business says it.
    pub name: String,
    /// Other words for it.
    pub synonyms: Vec<String>,
    /// The tables or columns it means.
    pub means: Vec<Target>,
    /// What it is.
    pub description: Option<String>,
}

/// A figure the business quotes and the SQL expression that computes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metric {
    /// Its name.
    pub name: String,
    /// The expression, as written.
    pub sql: String,
    /// What it is.
    pub description: Option<String>,
    /// The tables it is computed from (given, or the `Table.column` references of `sql`).
    pub tables: Vec<String>,
}

/// A join the schema does not declare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
    /// The referring column.
    pub from: Target,
    /// The referred-to column.
    pub to: Target,
    /// What it means.
    pub description: Option<String>,
}

/// Everything a semantic file says that the catalog confirms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Semantic {
    /// The file it came from.
    pub file: String,
    /// Business words.
    pub terms: Vec<Term>,
    /// Computed figures.
    pub metrics: Vec<Metric>,
    /// Undeclared joins.
    pub relationships: Vec<Relationship>,
}

impl Semantic {
    /// True when it says nothing.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.metrics.is_empty() && self.relationships.is_empty()
    }
}

/// A semantic file read but not yet checked against a catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SemanticFile(TomlFile<File>);

/// Reads `text` (the file `file`): the file, and a warning with its line for every section that
/// is not valid (an unknown key, a missing or mistyped field), which is left out. A file that is
/// not TOML at all is skipped with a warning.
pub fn parse_semantic(file: &str, text: &str) -> (Option<SemanticFile>, Vec<DocWarning>) {
    let (read, warnings) = read_toml(file, text);
    (read.map(SemanticFile), warnings)
}

impl SemanticFile {
    /// What the file says that `catalog` confirms, and a warning with its line for the rest.
    pub fn resolve(&self, catalog: &Catalog) -> (Semantic, Vec<DocWarning>) {
        let read = &self.0;
        let file = read.file.as_str();
        let mut warnings = Vec::new();
        let mut semantic = Semantic { file: file.to_string(), ..Semantic::default() };
        let terms: Vec<(usize, &Spanned<TermEntry>)> =
            read.parts.iter().flat_map(|(at, f)| f.term.iter().map(move |e| (*at, e))).collect();
        let metrics: Vec<(usize, &Spanned<MetricEntry>)> =
            read.parts.iter().flat_map(|(at, f)| f.metric.iter().map(move |e| (*at, e))).collect();
        let relationships: Vec<(usize, &Spanned<RelationshipEntry>)> = self
            .0
            .parts
            .iter()
            .flat_map(|(at, f)| f.relationship.iter().map(move |e| (*at, e)))
            .collect();
        let mut confirm = |at: usize, name: &Spanned<String>, what: &str| -> Option<Target> {
            let target = find_target(catalog, name.get_ref());
            if target.is_none() {
                warnings.push(warning(
                    file,
                    read.line(at + name.span().start),
                    format!(
                        "{what} `{}` is not a table or column of the database; left out",
                        name.get_ref()
                    ),
                    false,
                ));
            }
            target
        };
        let mut named: Vec<String> = Vec::new();
        let mut metric_names: Vec<String> = Vec::new();
        // What the entries' checks find, said after the targets' (the closure above holds
        // `warnings` meanwhile).
        let mut repeated = Vec::new();
        for &(at, entry) in terms.iter().take(MAX_ENTRIES) {
            let term = entry.get_ref();
            let mut means: Vec<Target> = Vec::new();
            for target in term.means.iter().filter_map(|m| confirm(at, m, "term means")) {
                if !means.contains(&target) {
                    means.push(target);
                }
            }
            let key = term.name.trim().to_lowercase();
            if named.contains(&key) {
                repeated.push(warning(
                    file,
                    read.line(at + entry.span().start),
                    format!("term `{}` is defined again; this one is left out", term.name.trim()),
                    false,
                ));
                continue;
            }
            if !means.is_empty() && !key.is_empty() {
                named.push(key);
                semantic.terms.push(Term {
                    name: term.name.trim().to_string(),
                    synonyms: term
                        .synonyms
                        .iter()
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                    means,
                    description: capped(
                        term.description.as_deref(),
                        file,
                        read.line(at + entry.span().start),
                        &mut repeated,
                    ),
                });
            }
        }
        for &(at, entry) in metrics.iter().take(MAX_ENTRIES) {
            let metric = entry.get_ref();
            let tables: Vec<String> = if metric.tables.is_empty() {
                crate::examples::mentioned_tables(catalog, &metric.sql)
            } else {
                metric
                    .tables
                    .iter()
                    .filter_map(|t| confirm(at, t, "metric table"))
                    .map(|t| t.table)
                    .collect()
            };
            let line = read.line(at + entry.span().start);
            let name = metric.name.trim();
            let problem = if name.is_empty() || metric.sql.trim().is_empty() {
                Some("a metric needs a name and its SQL".to_string())
            } else if name.chars().count() > MAX_NAME_CHARS {
                Some(format!("a metric's name is at most {MAX_NAME_CHARS} characters"))
            } else if metric_names.contains(&name.to_lowercase()) {
                Some(format!("metric `{name}` is defined again"))
            } else if catalog_column(catalog, name) {
                Some(format!(
                    "metric `{name}` is named like a column of the database, which a query naming it gets"
                ))
            } else if tables.is_empty() {
                Some(format!("metric `{name}` names no table of the database"))
            } else {
                expression_problem(&metric.sql)
            };
            if let Some(problem) = problem {
                repeated.push(warning(file, line, format!("{problem}; left out"), false));
                continue;
            }
            metric_names.push(name.to_lowercase());
            semantic.metrics.push(Metric {
                name: name.to_string(),
                sql: metric.sql.trim().to_string(),
                description: capped(metric.description.as_deref(), file, line, &mut repeated),
                tables,
            });
        }
        for &(at, entry) in relationships.iter().take(MAX_ENTRIES) {
            let relationship = entry.get_ref();
            let from = confirm(at, &relationship.from, "relationship from");
            let to = confirm(at, &relationship.to, "relationship to");
            if let (Some(from), Some(to)) = (from, to) {
                semantic.relationships.push(Relationship {
                    from,
                    to,
                    description: capped(
                        relationship.description.as_deref(),
                        file,
                        read.line(at + entry.span().start),
                        &mut repeated,
                    ),
                });
            }
        }
        warnings.extend(repeated);
        let first_unread = |at: usize, span: std::ops::Range<usize>| at + span.start;
        for (count, what, first) in [
            (
                terms.len(),
                "term",
                terms.get(MAX_ENTRIES).map(|(at, e)| first_unread(*at, e.span())),
            ),
            (
                metrics.len(),
                "metric",
                metrics.get(MAX_ENTRIES).map(|(at, e)| first_unread(*at, e.span())),
            ),
            (
                relationships.len(),
                "relationship",
                relationships.get(MAX_ENTRIES).map(|(at, e)| first_unread(*at, e.span())),
            ),
        ] {
            if let Some(offset) = first {
                warnings.push(warning(
                    file,
                    read.line(offset),
                    format!("only the first {MAX_ENTRIES} of {count} [[{what}]] entries are read"),
                    false,
                ));
            }
        }
        (semantic, warnings)
    }
}

/// `Table` or `Table.column` in the catalog (ASCII case-insensitive; a table name may itself
/// contain dots, so the whole name is tried as a table first).
fn find_target(catalog: &Catalog, name: &str) -> Option<Target> {
    let name = name.trim();
    if let Some(table) = catalog.table(name) {
        return Some(Target { table: table.name.clone(), column: None });
    }
    let (table, column) = name.rsplit_once('.')?;
    let table = catalog.table(table.trim())?;
    let column = table.column(column.trim())?;
    Some(Target { table: table.name.clone(), column: Some(column.name.clone()) })
}

/// The most characters of a name (a term's, a metric's).
const MAX_NAME_CHARS: usize = 100;
/// The most characters of a description shown: an entry is a line of the context, and one
/// long one would push the rest of the context out of a budget.
const MAX_DESCRIPTION_CHARS: usize = 400;
/// The most characters of a metric's SQL.
const MAX_SQL_CHARS: usize = 1_000;

/// `text` trimmed, `None` when empty, cut to [`MAX_DESCRIPTION_CHARS`] with a warning.
fn capped(
    text: Option<&str>,
    file: &str,
    line: usize,
    warnings: &mut Vec<DocWarning>,
) -> Option<String> {
    let text = text.map(str::trim).filter(|t| !t.is_empty())?;
    let Some(cut) = crate::inline::cut_chars(text, MAX_DESCRIPTION_CHARS) else {
        return Some(text.to_string());
    };
    warnings.push(warning(
        file,
        line,
        format!("a description is shown up to {MAX_DESCRIPTION_CHARS} characters; the rest is cut"),
        false,
    ));
    Some(cut)
}

/// True when some table of `catalog` has a column named `name`.
fn catalog_column(catalog: &Catalog, name: &str) -> bool {
    catalog.tables.iter().any(|t| t.column(name).is_some())
}

/// Why `sql` cannot stand for a metric, if it cannot: a metric is one SQL expression (pasted
/// in a query's place, in parentheses), so it must read as one whole expression — not close the
/// parentheses, end the statement or hold a query of its own.
fn expression_problem(sql: &str) -> Option<String> {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::keywords::Keyword;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::{Token, Tokenizer};
    if sql.chars().count() > MAX_SQL_CHARS {
        return Some(format!("a metric's SQL is at most {MAX_SQL_CHARS} characters"));
    }
    let dialect = GenericDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize() {
        Ok(tokens) => tokens,
        Err(error) => return Some(format!("its SQL does not read: {error}")),
    };
    if tokens.iter().any(|t| matches!(t, Token::Word(w) if w.keyword == Keyword::SELECT)) {
        return Some("its SQL holds a query; a metric is an expression over columns".into());
    }
    let mut parser = match Parser::new(&dialect).try_with_sql(sql) {
        Ok(parser) => parser,
        Err(error) => return Some(format!("its SQL does not read: {error}")),
    };
    match parser.parse_expr() {
        Ok(_) if parser.peek_token().token == Token::EOF => None,
        Ok(_) => Some("its SQL is more than one expression".into()),
        Err(error) => Some(format!("its SQL is not an expression: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use schemascope_core::Catalog;

    use super::{Target, parse_semantic};

    fn catalog() -> Catalog {
        serde_json::from_str(
            r#"{"tables": [
              {"name": "Invoice", "kind": "table", "primaryKey": ["InvoiceId"], "foreignKeys": [],
               "columns": [{"name": "InvoiceId", "declaredType": "INTEGER", "nullable": false},
                           {"name": "Total", "declaredType": "NUMERIC", "nullable": false}]},
              {"name": "Customer", "kind": "table", "primaryKey": ["CustomerId"], "foreignKeys": [],
               "columns": [{"name": "CustomerId", "declaredType": "INTEGER", "nullable": false}]}]}"#,
        )
        .expect("catalog")
    }

    #[test]
    fn entries_are_resolved_against_the_catalog_and_the_rest_reported_by_line() {
        let text = "[[term]]\nname = \"revenue\"\nsynonyms = [\"sales\", \" \"]\n\
                    means = [\"invoice.total\", \"Invoice.Tax\"]\n\n\
                    [[metric]]\nname = \"average basket\"\nsql = \"AVG(Invoice.Total)\"\n\n\
                    [[relationship]]\nfrom = \"Invoice.InvoiceId\"\nto = \"Client.Id\"\n";
        let (file, warnings) = parse_semantic("_semantic.toml", text);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (semantic, warnings) = file.expect("parsed").resolve(&catalog());
        assert_eq!(semantic.terms.len(), 1);
        assert_eq!(semantic.terms[0].synonyms, ["sales"]);
        assert_eq!(
            semantic.terms[0].means,
            [Target { table: "Invoice".into(), column: Some("Total".into()) }]
        );
        assert_eq!(semantic.metrics[0].tables, ["Invoice"]);
        assert!(semantic.relationships.is_empty());
        let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "_semantic.toml:4: term means `Invoice.Tax` is not a table or column of the database; left out",
                "_semantic.toml:12: relationship to `Client.Id` is not a table or column of the database; left out",
            ]
        );
    }

    #[test]
    fn a_file_that_is_not_toml_or_has_unknown_keys_is_reported_not_fatal() {
        let (file, warnings) =
            parse_semantic("_semantic.toml", "[[term]]\nname = \"x\"\nmeans = [\n");
        assert!(file.is_none());
        assert!(warnings[0].file_skipped && warnings[0].line > 0, "{warnings:?}");
        let (_, warnings) = parse_semantic(
            "_semantic.toml",
            "[[metric]]\nname = \"m\"\nsql = \"1\"\nformula = \"2\"\n",
        );
        assert_eq!(warnings[0].line, 4, "{warnings:?}");
        assert!(warnings[0].message.contains("formula"), "{warnings:?}");
    }

    #[test]
    fn a_wrong_section_is_left_out_and_the_others_kept() {
        let text = "[[term]]\nname = \"revenue\"\nmeans = [\"Invoice.Total\"]\ncolour = \"red\"\n\n\
                    [[term]]\nname = \"client\"\nmeans = [\"Customer\", \"customer\"]\n\n\
                    [[term]]\nname = \"Client\"\nmeans = [\"Invoice\"]\n\n\
                    [[metric]]\nname = \"basket\"\n\n[[bogus]]\nx = 1\n";
        let (file, warnings) = parse_semantic("_semantic.toml", text);
        let said: Vec<(usize, bool)> =
            warnings.iter().map(|w| (w.line, w.message.contains("left out"))).collect();
        // The unknown key, the metric without SQL, the unknown section.
        assert_eq!(said, [(4, true), (14, true), (17, true)], "{warnings:?}");
        let (semantic, warnings) = file.expect("kept").resolve(&catalog());
        assert_eq!(semantic.terms.len(), 1, "{semantic:?}");
        assert_eq!(semantic.terms[0].means.len(), 1, "a repeated target once");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].line, 10, "the second `client`: {warnings:?}");
    }

    #[test]
    fn a_metric_must_be_one_expression_over_known_tables_and_long_text_is_cut() {
        let long = "x".repeat(5_000);
        let text = format!(
            "[[metric]]\nname = \"evil\"\nsql = \"1); DROP TABLE Invoice; --\"\ntables = [\"Invoice\"]\n\n\
             [[metric]]\nname = \"breakout\"\nsql = \"COUNT(*)) AS n, (Invoice.Total\"\n\n\
             [[metric]]\nname = \"sub\"\nsql = \"(SELECT MAX(Total) FROM Invoice)\"\n\n\
             [[metric]]\nname = \"ghost\"\nsql = \"SUM(Nope.Amount)\"\n\n\
             [[metric]]\nname = \"Total\"\nsql = \"SUM(Invoice.Total)\"\n\n\
             [[metric]]\nname = \"basket\"\nsql = \"AVG(Invoice.Total) -- per invoice\"\ndescription = \"{long}\"\n\n\
             [[metric]]\nname = \"Basket\"\nsql = \"SUM(Invoice.Total)\"\n\n\
             [[metric]]\nname = \" \"\nsql = \"1\"\n"
        );
        let (file, warnings) = parse_semantic("_semantic.toml", &text);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (semantic, warnings) = file.expect("read").resolve(&catalog());
        let kept: Vec<&str> = semantic.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(kept, ["basket"]);
        let description = semantic.metrics[0].description.as_deref().unwrap_or_default();
        assert_eq!(description.chars().count(), 401, "cut, with an ellipsis");
        let said: Vec<(usize, bool)> =
            warnings.iter().map(|w| (w.line, w.message.contains("left out"))).collect();
        assert_eq!(
            said,
            [
                (1, true),
                (6, true),
                (10, true),
                (14, true),
                (18, true),
                (22, false),
                (27, true),
                (31, true)
            ],
            "{warnings:?}"
        );
    }
}
