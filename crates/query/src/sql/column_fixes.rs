//! Where a wrong column name should point: the column the query most likely meant, anywhere in
//! the catalog, with the join that brings its table into scope.
//!
//! Models most often use a column that exists, but in another table (`Segment` on `yearmonth`;
//! it is `customers.Segment`, joinable on `CustomerID`), or misspell one. Candidates are ranked
//! by spelling (the same name, a few edits away, or the same words in another order or case),
//! by meaning (how many of the column's and its table's words the question uses), and by
//! reach (a table already in scope, else one a short foreign-key path away).

use std::collections::{HashMap, HashSet, VecDeque};

use schemascope_core::Catalog;
use schemascope_core::terms::tokenize;

use super::scope::Scope;
use crate::SqlDialect;
use crate::issue::TableColumn;

/// Distinct wrong names of one query that get a catalog-wide search; the rest get the plain
/// in-scope did-you-mean (a query of thousands of wrong names must not cost thousands of
/// catalog scans).
pub(super) const MAX_SEARCHED_NAMES: usize = 32;
/// Most foreign-key hops a suggested join takes.
const MAX_JOIN_HOPS: usize = 3;
/// Spelling similarity from which a name is a typo of another (one edit in about eight letters).
const NEAR_TYPO: f64 = 0.85;
/// How far below the best candidate's score an alternative may be and still be offered.
const ALTERNATIVE_MARGIN: f64 = 0.6;
/// The similarity of two names one of which has all the other's words.
const CONTAINED_SIMILARITY: f64 = 0.7;
/// Least name similarity for a candidate (1 is the same name).
const MIN_SIMILARITY: f64 = 0.6;

/// A column the query may have meant.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Candidate {
    /// The catalog column.
    pub column: TableColumn,
    /// The name that qualifies it in the query: the table's alias or name when in scope.
    pub qualifier: Option<String>,
    /// The join that brings its table into scope, when it is not.
    pub join: Option<String>,
    /// How well it fits: higher is better.
    pub score: f64,
    /// The dialect the names are written for.
    pub dialect: SqlDialect,
}

impl Candidate {
    /// How to write the column in the query.
    pub(super) fn written(&self) -> String {
        let table = self.qualifier.as_deref().unwrap_or(&self.column.table);
        format!("{}.{}", quote_name(table, self.dialect), self.column_written())
    }

    /// The column alone, as written in the query.
    pub(super) fn column_written(&self) -> String {
        quote_name(&self.column.column, self.dialect)
    }

    /// The candidate as a phrase for a message.
    pub(super) fn described(&self) -> String {
        match &self.join {
            Some(join) => format!("{} ({join})", self.written()),
            None if self.qualifier.is_none() => format!(
                "{} (no foreign key links {} to the tables in scope)",
                self.written(),
                self.column.table
            ),
            None => self.written(),
        }
    }
}

/// Words both dialects reserve: a table or column so named must be quoted (`"Order"`).
const RESERVED: &[&str] = &[
    "all",
    "alter",
    "and",
    "as",
    "asc",
    "between",
    "by",
    "case",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "cross",
    "default",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "foreign",
    "from",
    "full",
    "group",
    "having",
    "in",
    "index",
    "inner",
    "insert",
    "intersect",
    "into",
    "is",
    "join",
    "key",
    "left",
    "like",
    "limit",
    "natural",
    "not",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "outer",
    "primary",
    "references",
    "right",
    "select",
    "set",
    "table",
    "then",
    "to",
    "union",
    "unique",
    "update",
    "user",
    "using",
    "values",
    "when",
    "where",
    "with",
];

/// A catalog table's name as `dialect` reads it back (PostgreSQL's `schema.table` quoted
/// part by part).
pub(super) fn quote_table(name: &str, dialect: SqlDialect) -> String {
    match name.split_once('.') {
        Some((schema, table)) if dialect.rules().has_schemas() => {
            format!("{}.{}", quote_name(schema, dialect), quote_name(table, dialect))
        }
        _ => quote_name(name, dialect),
    }
}

/// `name` as `dialect` reads it back: as is when it is a plain identifier (letters, digits
/// and underscores, not starting with a digit — and, for PostgreSQL, which folds unquoted names
/// to lower case, all lower case; ClickHouse keeps case either way), else quoted as the engine quotes.
pub fn quote_name(name: &str, dialect: SqlDialect) -> String {
    if is_plain(name, dialect.rules().folds_unquoted_to_lower()) {
        name.to_string()
    } else {
        dialect.quote(name)
    }
}

/// Whether `name` reads back as itself unquoted: letters, digits and underscores, not starting
/// with a digit, not a reserved word — and all lower case where the engine `folds` unquoted
/// names to lower case.
pub(super) fn is_plain(name: &str, folds: bool) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && (!folds || !name.chars().any(|c| c.is_ascii_uppercase()))
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// Lowercase letters and digits only: `Customer_ID`, `customerId` and `customer id` are one name.
fn folded(name: &str) -> String {
    name.chars().filter(char::is_ascii_alphanumeric).flat_map(char::to_lowercase).collect()
}

/// How alike two names are, 0 to 1: the same folded name is 1; else the better of spelling
/// (normalised edit distance) and shared words (Jaccard of their terms).
fn similarity(wanted: &str, wanted_terms: &HashSet<String>, candidate: &str) -> f64 {
    let (a, b) = (folded(wanted), folded(candidate));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    let spelling = strsim::normalized_damerau_levenshtein(&a, &b);
    let terms: HashSet<String> = tokenize(candidate).into_iter().collect();
    let shared = wanted_terms.intersection(&terms).count() as f64;
    let union = wanted_terms.union(&terms).count() as f64;
    let words = if union == 0.0 { 0.0 } else { shared / union };
    // One name's words all in the other's (`Price` in `UnitPrice`, `TrackName` for `Name`):
    // the same thing, more or less qualified.
    let contained = !wanted_terms.is_empty()
        && !terms.is_empty()
        && (wanted_terms.is_subset(&terms) || terms.is_subset(wanted_terms));
    spelling.max(words).max(if contained { CONTAINED_SIMILARITY } else { 0.0 })
}

/// The share of `name`'s terms the question uses.
fn relevance(name: &str, question: &HashSet<&str>) -> f64 {
    let terms = tokenize(name);
    if terms.is_empty() {
        return 0.0;
    }
    terms.iter().filter(|t| question.contains(t.as_str())).count() as f64 / terms.len() as f64
}

/// How much the question is about `table`: the share of its name's words the question uses.
pub(super) fn table_relevance(
    table: &schemascope_core::TableInfo,
    question: &HashSet<&str>,
) -> f64 {
    relevance(&table.name, question)
}

/// The base tables in scope (this query and the enclosing ones), lowercase name → qualifier.
pub(super) fn tables_in_scope(scope: &Scope<'_>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut level = Some(scope);
    while let Some(s) = level {
        for source in &s.sources {
            if let Some(table) = &source.table {
                out.entry(table.to_lowercase()).or_insert_with(|| source.name.clone());
            }
        }
        level = s.parent;
    }
    out
}

/// The best candidates for a column written `wanted` (qualified by a relation of `preferred`
/// table, when it was), best first, at most `max`.
pub(super) fn candidates(
    wanted: &str,
    preferred: Option<&str>,
    scope: &Scope<'_>,
    catalog: &Catalog,
    question: &[String],
    max: usize,
    dialect: SqlDialect,
) -> Vec<Candidate> {
    let in_scope = tables_in_scope(scope);
    let question: HashSet<&str> = question.iter().map(String::as_str).collect();
    let wanted_terms: HashSet<String> = tokenize(wanted).into_iter().collect();
    let mut found: Vec<Candidate> = Vec::new();
    for table in &catalog.tables {
        let key = table.name.to_lowercase();
        let qualifier = in_scope.get(&key).cloned();
        let table_relevance = table_relevance(table, &question);
        for column in &table.columns {
            let alike = similarity(wanted, &wanted_terms, &column.name);
            if alike < MIN_SIMILARITY {
                continue;
            }
            // The very name elsewhere is strong evidence: models mostly pick the wrong table,
            // not a wrong name.
            let exact = if alike >= 1.0 { 0.4 } else { 0.0 };
            let mut score = 2.0 * alike
                + exact
                + 0.5 * relevance(&column.name, &question)
                + 0.25 * table_relevance;
            if qualifier.is_some() {
                score += 0.6;
            }
            // Written with this table's qualifier: a near-typo of one of its own columns is
            // what was meant, before the same name elsewhere.
            if preferred.is_some_and(|p| p.eq_ignore_ascii_case(&table.name)) {
                score += if alike >= NEAR_TYPO { 0.6 } else { 0.2 };
            }
            found.push(Candidate {
                column: TableColumn { table: table.name.clone(), column: column.name.clone() },
                qualifier: qualifier.clone(),
                join: None,
                score,
                dialect,
            });
        }
    }
    found.sort_by(|a, b| b.score.total_cmp(&a.score));
    found.truncate(max.max(1) * 4);
    // Tables out of scope: the join path, and a cost per hop (none found: a larger one).
    for candidate in &mut found {
        if candidate.qualifier.is_some() {
            continue;
        }
        match join_path(&candidate.column.table, &in_scope, catalog, dialect) {
            Some((join, hops)) => {
                candidate.join = Some(join);
                candidate.score -= 0.1 * hops as f64;
            }
            None => candidate.score -= 0.5,
        }
    }
    found.sort_by(|a, b| b.score.total_cmp(&a.score));
    // Alternatives only while they are nearly as good as the best.
    let floor = found.first().map_or(0.0, |best| best.score - ALTERNATIVE_MARGIN);
    found.retain(|c| c.score >= floor);
    found.truncate(max);
    found
}

/// One foreign-key edge: `from.from_columns = to.to_columns`.
struct Edge<'c> {
    to: &'c str,
    from_columns: &'c [String],
    to_columns: &'c [String],
}

/// `JOIN target ON …` (through intermediate tables when needed) from the nearest table in
/// scope, and its number of hops, by breadth-first search over foreign keys in both directions.
fn join_path(
    target: &str,
    in_scope: &HashMap<String, String>,
    catalog: &Catalog,
    dialect: SqlDialect,
) -> Option<(String, usize)> {
    if in_scope.is_empty() {
        return None;
    }
    let mut edges: HashMap<String, Vec<Edge<'_>>> = HashMap::new();
    for table in &catalog.tables {
        for fk in &table.foreign_keys {
            let (a, b) = (table.name.as_str(), fk.referenced_table.as_str());
            edges.entry(a.to_lowercase()).or_default().push(Edge {
                to: b,
                from_columns: &fk.columns,
                to_columns: &fk.referenced_columns,
            });
            edges.entry(b.to_lowercase()).or_default().push(Edge {
                to: a,
                from_columns: &fk.referenced_columns,
                to_columns: &fk.columns,
            });
        }
    }
    // From the target outwards, so the path found ends at the nearest table in scope.
    let target_name = catalog.table(target).map_or(target, |t| t.name.as_str());
    let mut came_from: HashMap<String, (String, &Edge<'_>)> = HashMap::new();
    let mut queue = VecDeque::from([(target_name.to_string(), 0usize)]);
    let mut seen = HashSet::from([target_name.to_lowercase()]);
    while let Some((table, hops)) = queue.pop_front() {
        if let Some(qualifier) = in_scope.get(&table.to_lowercase()) {
            return Some((joins_from(&table, qualifier, &came_from, in_scope, dialect), hops));
        }
        if hops == MAX_JOIN_HOPS {
            continue;
        }
        for edge in edges.get(&table.to_lowercase()).into_iter().flatten() {
            if seen.insert(edge.to.to_lowercase()) {
                came_from.insert(edge.to.to_lowercase(), (table.clone(), edge));
                queue.push_back((edge.to.to_string(), hops + 1));
            }
        }
    }
    None
}

/// The JOIN clauses from the table in scope back to the target.
fn joins_from(
    start: &str,
    qualifier: &str,
    came_from: &HashMap<String, (String, &Edge<'_>)>,
    in_scope: &HashMap<String, String>,
    dialect: SqlDialect,
) -> String {
    let q = |name: &str| quote_name(name, dialect);
    let mut clauses = Vec::new();
    let mut current = (start.to_string(), qualifier.to_string());
    while let Some((next, edge)) = came_from.get(&current.0.to_lowercase()) {
        // `edge` goes from `next` to `current`: its columns are next's, then current's.
        let next_qualifier =
            in_scope.get(&next.to_lowercase()).cloned().unwrap_or_else(|| next.clone());
        let on: Vec<String> = edge
            .from_columns
            .iter()
            .zip(edge.to_columns)
            .map(|(a, b)| format!("{}.{} = {}.{}", q(&next_qualifier), q(a), q(&current.1), q(b)))
            .collect();
        clauses.push(format!("JOIN {} ON {}", q(next), on.join(" AND ")));
        current = (next.clone(), next_qualifier);
    }
    clauses.join(" ")
}

#[cfg(test)]
mod tests {
    use schemascope_core::{ColumnInfo, ForeignKey, TableInfo, TableKind};

    use super::super::scope::{Columns, Source};
    use super::*;

    fn table(name: &str, columns: &[&str], fks: &[(&str, &str, &str)]) -> TableInfo {
        TableInfo {
            name: name.into(),
            kind: TableKind::Table,
            columns: columns
                .iter()
                .map(|c| ColumnInfo {
                    name: (*c).into(),
                    declared_type: "TEXT".into(),
                    nullable: true,
                    comment: None,
                    base_type: None,
                })
                .collect(),
            primary_key: Vec::new(),
            foreign_keys: fks
                .iter()
                .map(|(col, to, to_col)| ForeignKey {
                    columns: vec![(*col).into()],
                    referenced_table: (*to).into(),
                    referenced_columns: vec![(*to_col).into()],
                })
                .collect(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        }
    }

    fn catalog() -> Catalog {
        Catalog {
            tables: vec![
                table("customers", &["CustomerID", "Segment", "Currency"], &[]),
                table(
                    "yearmonth",
                    &["CustomerID", "Date", "Consumption"],
                    &[("CustomerID", "customers", "CustomerID")],
                ),
                table("gasstations", &["GasStationID", "Segment", "Country"], &[]),
            ],
        }
    }

    fn scope_of(tables: &[(&str, &str)]) -> Scope<'static> {
        let catalog = catalog();
        let mut scope = Scope::inside(None);
        for (name, alias) in tables {
            let t = catalog.table(name).unwrap();
            scope.sources.push(Source {
                name: (*alias).into(),
                table: Some((*name).into()),
                aliased: name != alias,
                columns: Columns::known(t.columns.iter().map(|c| c.name.clone()).collect()),
            });
        }
        scope
    }

    #[test]
    fn a_column_of_another_table_comes_with_its_join() {
        let scope = scope_of(&[("yearmonth", "T1")]);
        let question = tokenize("Which customer in segment LAM consumed the least?");
        let found =
            candidates("Segment", None, &scope, &catalog(), &question, 3, SqlDialect::Sqlite);
        assert_eq!(found[0].column.table, "customers");
        assert_eq!(
            found[0].join.as_deref(),
            Some("JOIN customers ON customers.CustomerID = T1.CustomerID")
        );
        // gasstations has Segment too, but nothing joins it to yearmonth: not offered before.
        assert!(found.iter().skip(1).all(|c| c.column.table == "gasstations"));
        let found =
            candidates("Country", None, &scope, &catalog(), &question, 3, SqlDialect::Sqlite);
        assert_eq!(found[0].column.table, "gasstations");
        assert!(found[0].described().contains("no foreign key links gasstations"));
    }

    #[test]
    fn in_scope_and_meaning_rank_first() {
        let scope = scope_of(&[("customers", "c"), ("yearmonth", "y")]);
        let found = candidates("Consumptoin", None, &scope, &catalog(), &[], 1, SqlDialect::Sqlite);
        assert_eq!(found[0].written(), "y.Consumption");
        let found = candidates(
            "customer_id",
            Some("yearmonth"),
            &scope,
            &catalog(),
            &[],
            1,
            SqlDialect::Sqlite,
        );
        assert_eq!(found[0].written(), "y.CustomerID");
    }
}
