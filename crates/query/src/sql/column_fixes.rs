//! Where a wrong column name should point: the column the query most likely meant, anywhere in
//! the catalog, with the join that brings its table into scope.
//!
//! Models most often use a column that exists, but in another table (`Segment` on `yearmonth`;
//! it is `customers.Segment`, joinable on `CustomerID`), or misspell one, or write what the
//! column means rather than its name (`uric_acid` for `UA`). Candidates are ranked by name
//! (the same name, a few edits away, or the same words in another order or case — or the words
//! of the column's description: a database comment or the user's docs), by the question (how
//! many of the column's and its table's words it uses), and by reach: a table already in scope,
//! else one a short foreign-key path away — and, of those, the one nearest the table the name
//! was written against (`expense.link_to_event` is `budget`'s, one hop from `expense`, not
//! `attendance`'s, two hops away).

use std::collections::{HashMap, HashSet, VecDeque};

use schemascope_core::Catalog;
use schemascope_core::terms::tokenize;

use super::question::Question;
use super::scope::Scope;
use crate::SqlDialect;
use crate::issue::TableColumn;

/// Distinct wrong names of one query that get a catalog-wide search; the rest get the plain
/// in-scope did-you-mean (a query of thousands of wrong names must not cost thousands of
/// catalog scans).
pub(super) const MAX_SEARCHED_NAMES: usize = 32;
/// Foreign-key hops past which a table counts as far (its reach costs no more).
const FAR_HOPS: usize = 4;
/// What reaching a candidate's table costs when no foreign-key path links it to the tables in
/// scope: more than the exact name's bonus, so that a close name in scope comes first.
const UNLINKED_COST: f64 = 0.7;
/// What each foreign-key hop between a candidate's table and the tables the name was written
/// against costs (see [`anchor_tables`]), up to [`FAR_HOPS`]; a table no foreign-key path
/// reaches pays [`UNLINKED_COST`] instead.
const ANCHOR_HOP_COST: f64 = 0.2;
/// Spelling similarity from which a name is a typo of another (one edit in about eight letters).
const NEAR_TYPO: f64 = 0.85;
/// How far below the best candidate's score an alternative may be and still be offered.
const ALTERNATIVE_MARGIN: f64 = 0.6;
/// The similarity of two names one of which has all the other's words.
const CONTAINED_SIMILARITY: f64 = 0.7;
/// The similarity of the first column the question's definition of the name writes
/// ("age = year(now) - year(Birthday)"), and of the others it writes.
const DEFINED_FIRST: f64 = 0.9;
const DEFINED_OTHER: f64 = 0.75;
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
    let matched = |word: &String, among: &HashSet<String>| among.iter().any(|t| same_word(word, t));
    let shared = wanted_terms.iter().filter(|w| matched(w, &terms)).count();
    let union = (wanted_terms.len() + terms.len()).saturating_sub(shared);
    let words = if union == 0 { 0.0 } else { shared as f64 / union as f64 };
    // One name's words all in the other's (`Price` in `UnitPrice`, `TrackName` for `Name`):
    // the same thing, more or less qualified.
    let contained = !wanted_terms.is_empty()
        && !terms.is_empty()
        && (wanted_terms.iter().all(|w| matched(w, &terms))
            || terms.iter().all(|t| matched(t, wanted_terms)));
    spelling.max(words).max(if contained { CONTAINED_SIMILARITY } else { 0.0 })
}

/// Whether two words of names are one: the same, or one the other's abbreviation by its first
/// letters (`exam` for `examination`, `num` for `number`; not `count` for `country`).
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.len() >= 3 && long.len() >= short.len() + 3 && long.starts_with(short))
}

/// How well a column's description (a database comment or the user's docs) says what the
/// wanted name says, 0 to 1: the better of the whole description and its first phrase (up to
/// the first `.`, `,`, `;` or `(`: "Amount billed, the sum of…" names the column in two words).
fn described_as(wanted: &str, wanted_terms: &HashSet<String>, description: &str) -> f64 {
    let whole = phrase_says(wanted, wanted_terms, description);
    match description.split(['.', ',', ';', '(']).next() {
        Some(first) if first.len() < description.len() => {
            whole.max(phrase_says(wanted, wanted_terms, first))
        }
        _ => whole,
    }
}

/// How well one phrase says what the wanted name says: the same words are 1 (`uric acid`,
/// `Red_blood_cell`); all the wanted words in a longer phrase count by their share of it
/// (`inhabitants` in `number of inhabitants`); else the shared words' Jaccard.
fn phrase_says(wanted: &str, wanted_terms: &HashSet<String>, description: &str) -> f64 {
    if wanted_terms.is_empty() {
        return 0.0;
    }
    let terms: HashSet<String> = tokenize(description).into_iter().collect();
    if terms.is_empty() {
        return 0.0;
    }
    if folded(wanted) == folded(description) || *wanted_terms == terms {
        return 1.0;
    }
    let shared = wanted_terms.intersection(&terms).count() as f64;
    if wanted_terms.is_subset(&terms) {
        // Half for having every word, half for how much of the description they are: a long
        // description that mentions the word in passing does not reach MIN_SIMILARITY.
        return 0.5 + 0.5 * shared / terms.len() as f64;
    }
    shared / wanted_terms.union(&terms).count() as f64
}

/// Whether `candidate` is `wanted` or a near typo of it (case, spaces and underscores aside).
pub(super) fn is_near_name(wanted: &str, candidate: &str) -> bool {
    let (a, b) = (folded(wanted), folded(candidate));
    !a.is_empty() && strsim::normalized_damerau_levenshtein(&a, &b) >= NEAR_TYPO
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
    question: &Question,
    max: usize,
    dialect: SqlDialect,
) -> Vec<Candidate> {
    let in_scope = tables_in_scope(scope);
    let defined = question.defined_as(wanted, catalog);
    let question = question.term_set();
    let wanted_terms: HashSet<String> = tokenize(wanted).into_iter().collect();
    let graph = ForeignKeys::of(catalog);
    let anchor_hops = graph.distances(&anchor_tables(preferred, scope));
    let mut found: Vec<Candidate> = Vec::new();
    for table in &catalog.tables {
        let key = table.name.to_lowercase();
        let qualifier = in_scope.get(&key).cloned();
        let table_relevance = table_relevance(table, &question);
        for column in &table.columns {
            let named = similarity(wanted, &wanted_terms, &column.name);
            let described = column
                .comment
                .as_deref()
                .map_or(0.0, |text| described_as(wanted, &wanted_terms, text));
            // What the question says the name stands for, first named first.
            let defined = defined
                .iter()
                .position(|d| d.table == table.name && d.column == column.name)
                .map_or(0.0, |i| if i == 0 { DEFINED_FIRST } else { DEFINED_OTHER });
            let alike = named.max(described).max(defined);
            if alike < MIN_SIMILARITY {
                continue;
            }
            // The very name elsewhere is strong evidence: models mostly pick the wrong table,
            // not a wrong name (`Laboratory.KCT` is Examination's `KCT`, two joins away, not
            // Laboratory's `HCT`).
            let exact = if alike >= 1.0 { 0.6 } else { 0.0 };
            let mut score = 2.0 * alike
                + exact
                + 0.5 * relevance(&column.name, &question)
                + 0.25 * table_relevance;
            if qualifier.is_some() {
                score += 0.6;
            }
            // Written with this table's qualifier: a near-typo of one of its own columns is
            // what was meant, before the same name elsewhere. (Its other columns are nearest
            // the qualifier: see ANCHOR_HOP_COST.)
            if preferred.is_some_and(|p| p.eq_ignore_ascii_case(&table.name)) && alike >= NEAR_TYPO
            {
                score += 0.6;
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
    // Tables out of scope: the join path, and a cost per hop (none found: a larger one, which
    // stands for the distance from where the name was written too).
    for candidate in &mut found {
        let from_anchor = |hops: Option<&usize>| {
            ANCHOR_HOP_COST * hops.map_or(FAR_HOPS, |h| (*h).min(FAR_HOPS)) as f64
        };
        let anchor = anchor_hops.get(&candidate.column.table.to_lowercase());
        if candidate.qualifier.is_some() {
            candidate.score -= from_anchor(anchor);
            continue;
        }
        match graph.join_path(&candidate.column.table, &in_scope, catalog, dialect) {
            Some((join, hops)) => {
                candidate.join = Some(join);
                candidate.score -= 0.1 * hops as f64 + from_anchor(anchor);
            }
            None => candidate.score -= UNLINKED_COST,
        }
    }
    found.sort_by(|a, b| b.score.total_cmp(&a.score));
    // Alternatives only while they are nearly as good as the best.
    let floor = found.first().map_or(0.0, |best| best.score - ALTERNATIVE_MARGIN);
    found.retain(|c| c.score >= floor);
    found.truncate(max);
    found
}

/// The tables a wrong name was written against: the qualifier's table, else the base tables
/// of the query level the name is in (lowercase). Empty when that level reads no base table.
fn anchor_tables(preferred: Option<&str>, scope: &Scope<'_>) -> Vec<String> {
    match preferred {
        Some(table) => vec![table.to_lowercase()],
        None => {
            scope.sources.iter().filter_map(|s| s.table.as_deref()).map(str::to_lowercase).collect()
        }
    }
}

/// One foreign-key edge: `from.from_columns = to.to_columns`.
struct Edge<'c> {
    to: &'c str,
    from_columns: &'c [String],
    to_columns: &'c [String],
}

/// The catalog's foreign keys as an undirected graph of tables (lowercase names).
struct ForeignKeys<'c> {
    edges: HashMap<String, Vec<Edge<'c>>>,
}

impl<'c> ForeignKeys<'c> {
    fn of(catalog: &'c Catalog) -> Self {
        let mut edges: HashMap<String, Vec<Edge<'c>>> = HashMap::new();
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
        Self { edges }
    }

    /// Hops from the nearest of `start` to every table a foreign-key path reaches (each table
    /// is visited once).
    fn distances(&self, start: &[String]) -> HashMap<String, usize> {
        let mut hops: HashMap<String, usize> = start.iter().map(|t| (t.clone(), 0)).collect();
        let mut queue: VecDeque<String> = start.iter().cloned().collect();
        while let Some(table) = queue.pop_front() {
            let next_hops = hops[&table] + 1;
            for edge in self.edges.get(&table).into_iter().flatten() {
                let next = edge.to.to_lowercase();
                if !hops.contains_key(&next) {
                    hops.insert(next.clone(), next_hops);
                    queue.push_back(next);
                }
            }
        }
        hops
    }

    /// `JOIN target ON …` (through intermediate tables when needed) from the nearest table in
    /// scope, and its number of hops, by breadth-first search over foreign keys in both
    /// directions (each table visited once); `None` when no path links them.
    fn join_path(
        &self,
        target: &str,
        in_scope: &HashMap<String, String>,
        catalog: &Catalog,
        dialect: SqlDialect,
    ) -> Option<(String, usize)> {
        if in_scope.is_empty() {
            return None;
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
            for edge in self.edges.get(&table.to_lowercase()).into_iter().flatten() {
                if seen.insert(edge.to.to_lowercase()) {
                    came_from.insert(edge.to.to_lowercase(), (table.clone(), edge));
                    queue.push_back((edge.to.to_string(), hops + 1));
                }
            }
        }
        None
    }
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
pub(super) mod tests {
    use schemascope_core::{ColumnInfo, ForeignKey, TableInfo, TableKind};

    use super::super::scope::{Columns, Source};
    use super::*;

    /// A table of TEXT columns with `fks` as (column, table, column).
    pub(in crate::sql) fn table(
        name: &str,
        columns: &[&str],
        fks: &[(&str, &str, &str)],
    ) -> TableInfo {
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
        let question = Question::of("Which customer in segment LAM consumed the least?");
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

    /// Student clubs' tables: an expense is linked to its event through its budget, and a
    /// member attends events.
    fn club() -> Catalog {
        Catalog {
            tables: vec![
                table(
                    "attendance",
                    &["link_to_event", "link_to_member"],
                    &[
                        ("link_to_event", "event", "event_id"),
                        ("link_to_member", "member", "member_id"),
                    ],
                ),
                table(
                    "budget",
                    &["budget_id", "link_to_event"],
                    &[("link_to_event", "event", "event_id")],
                ),
                table("event", &["event_id", "event_name"], &[]),
                table(
                    "expense",
                    &["expense_id", "link_to_budget", "link_to_member"],
                    &[
                        ("link_to_budget", "budget", "budget_id"),
                        ("link_to_member", "member", "member_id"),
                    ],
                ),
                table("member", &["member_id"], &[]),
            ],
        }
    }

    fn scope_in(catalog: &Catalog, tables: &[&str]) -> Scope<'static> {
        let mut scope = Scope::inside(None);
        for name in tables {
            let t = catalog.table(name).unwrap();
            scope.sources.push(Source {
                name: (*name).into(),
                table: Some((*name).into()),
                aliased: false,
                columns: Columns::known(t.columns.iter().map(|c| c.name.clone()).collect()),
            });
        }
        scope
    }

    #[test]
    fn the_column_nearest_the_table_it_was_written_against_comes_first() {
        let catalog = club();
        let scope = scope_in(&catalog, &["expense", "event"]);
        // `expense.link_to_event`: budget's is one hop from expense, attendance's two; both are
        // one hop from event.
        let found = candidates(
            "link_to_event",
            Some("expense"),
            &scope,
            &catalog,
            &Question::default(),
            2,
            SqlDialect::Sqlite,
        );
        assert_eq!(found[0].column.table, "budget", "{found:?}");
        assert_eq!(found[1].column.table, "attendance", "{found:?}");
        // Written bare in a subquery over expense inside one over event: the same.
        let outer = scope_in(&catalog, &["event"]);
        let mut inner = scope_in(&catalog, &["expense"]);
        inner.parent = Some(&outer);
        let found = candidates(
            "link_to_event",
            None,
            &inner,
            &catalog,
            &Question::default(),
            1,
            SqlDialect::Sqlite,
        );
        assert_eq!(found[0].column.table, "budget", "{found:?}");
    }

    #[test]
    fn a_far_table_gets_its_whole_join_and_only_an_unlinked_one_is_said_unlinked() {
        let catalog = Catalog {
            tables: vec![
                table("c", &["id", "d_id"], &[("d_id", "d", "id")]),
                table("d", &["id", "e_id"], &[("e_id", "e", "id")]),
                table("e", &["id", "f_id"], &[("f_id", "f", "id")]),
                table("f", &["id", "g_id"], &[("g_id", "g", "id")]),
                table("g", &["id", "label"], &[]),
                table("h", &["id", "title"], &[]),
            ],
        };
        let scope = scope_in(&catalog, &["c"]);
        let best = |wanted: &str| {
            candidates(wanted, None, &scope, &catalog, &Question::default(), 1, SqlDialect::Sqlite)
                .remove(0)
        };
        let far = best("label");
        assert_eq!(far.column.table, "g");
        let join = far.join.clone().unwrap_or_default();
        assert_eq!(join.matches("JOIN ").count(), 4, "{join}");
        assert!(!far.described().contains("no foreign key"), "{}", far.described());
        let unlinked = best("title");
        assert!(
            unlinked.described().contains("no foreign key links h"),
            "{}",
            unlinked.described()
        );
    }

    #[test]
    fn descriptions_abbreviations_and_the_questions_definitions_name_columns() {
        let mut lab = table("Laboratory", &["ID", "UA", "LDH", "Date"], &[]);
        lab.columns[1].comment = Some("uric acid".into());
        lab.columns[2].comment = Some("Lactate dehydrogenase, in U/L (normal below 500)".into());
        let patient = table("Patient", &["ID", "Birthday", "Examination Date"], &[]);
        let catalog = Catalog { tables: vec![lab, patient] };
        let scope = scope_in(&catalog, &["Laboratory", "Patient"]);
        let best = |wanted: &str, question: &str| {
            let found = candidates(
                wanted,
                None,
                &scope,
                &catalog,
                &Question::of(question),
                1,
                SqlDialect::Sqlite,
            );
            found.first().map(|c| format!("{}.{}", c.column.table, c.column.column))
        };
        assert_eq!(best("uric_acid", "").as_deref(), Some("Laboratory.UA"));
        // The description's first phrase is the column's name in words.
        assert_eq!(best("lactate dehydrogenase", "").as_deref(), Some("Laboratory.LDH"));
        assert_eq!(best("ExamDate", "").as_deref(), Some("Patient.Examination Date"));
        assert_eq!(
            best("age", "Patients older than 50; age = year(now) - year(Birthday)").as_deref(),
            Some("Patient.Birthday")
        );
        // Nothing says what `age` is: no guess.
        assert_eq!(best("age", "Patients older than 50"), None);
        // `count` is no abbreviation of `country`.
        assert!(!same_word("count", "country"));
        assert!(same_word("num", "number"));
    }

    #[test]
    fn in_scope_and_meaning_rank_first() {
        let scope = scope_of(&[("customers", "c"), ("yearmonth", "y")]);
        let found = candidates(
            "Consumptoin",
            None,
            &scope,
            &catalog(),
            &Question::default(),
            1,
            SqlDialect::Sqlite,
        );
        assert_eq!(found[0].written(), "y.Consumption");
        let found = candidates(
            "customer_id",
            Some("yearmonth"),
            &scope,
            &catalog(),
            &Question::default(),
            1,
            SqlDialect::Sqlite,
        );
        assert_eq!(found[0].written(), "y.CustomerID");
    }
}
