//! What validation reports: issues with a kind, a place, a message and a suggestion, gathered
//! into a [`ValidationReport`] that a retry prompt can quote as is.

use std::collections::HashSet;

use serde::Serialize;

/// What kind of problem an issue is. Serialised in snake_case (`unknown_column`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    /// The text does not parse, or a structured query is not well-formed JSON of its shape.
    Syntax,
    /// More than one statement (or none).
    MultipleStatements,
    /// A statement or clause that writes, locks, or changes the session.
    NotReadOnly,
    /// A function, operator or cast the database does not allow to run (it may have side
    /// effects or reach files, processes or other sessions).
    ForbiddenFunction,
    /// A function or operator the database does not have.
    UnknownFunction,
    /// A table (or alias, or CTE) that does not exist.
    UnknownTable,
    /// A relation outside what the source serves: a system table or view, another database
    /// or a system schema.
    OutsideSource,
    /// A column that no table in scope has.
    UnknownColumn,
    /// An unqualified column that several tables in scope have.
    AmbiguousColumn,
    /// An aggregate where none is allowed, or a function that does not fit the column's type.
    Aggregation,
    /// A selected column that is neither aggregated nor grouped.
    GroupBy,
    /// An aggregate inside another aggregate.
    NestedAggregate,
    /// A structured-query field that does not resolve.
    UnknownField,
    /// A filter literal that no row has (or out of the column's range).
    FilterValue,
    /// A join whose condition follows no foreign key.
    JoinWithoutForeignKey,
    /// A query that may return more rows than allowed without a limit.
    RowLimit,
    /// A structured-query option or combination that is not valid.
    InvalidOption,
    /// The same field (and function) selected twice.
    DuplicateField,
    /// A portability or style note (a double-quoted string literal in SQLite, …).
    Portability,
}

/// Where an issue is: a position in SQL text, or a JSON path in a structured query.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum Location {
    /// 1-based line and column in the SQL text.
    Position {
        /// Line, from 1.
        line: u64,
        /// Column, from 1.
        column: u64,
    },
    /// A JSON path such as `fields[2].function`.
    Path(String),
}

impl Location {
    /// A position, or `None` when sqlparser did not record one (line 0).
    pub fn at(line: u64, column: u64) -> Option<Self> {
        (line > 0).then_some(Self::Position { line, column })
    }
}

/// One problem found in a query.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct QueryIssue {
    /// What kind of problem.
    pub kind: IssueKind,
    /// What is wrong, naming the input at fault.
    pub message: String,
    /// Where, when known.
    pub location: Option<Location>,
    /// What to write instead, when there is a good guess.
    pub suggestion: Option<String>,
    /// The table column the suggestion names, when it names one (for programs: the retry
    /// prompt quotes `suggestion`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_column: Option<Box<TableColumn>>,
}

/// A column of a catalog table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TableColumn {
    /// The table, as the catalog names it.
    pub table: String,
    /// The column, as the catalog spells it.
    pub column: String,
}

impl QueryIssue {
    /// An issue without location or suggestion.
    pub fn new(kind: IssueKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), location: None, suggestion: None, fix_column: None }
    }

    /// The same issue at `location`.
    pub fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }

    /// The same issue at a JSON path.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        self.location = Some(Location::Path(path.into()));
        self
    }

    /// The same issue with a suggestion.
    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// The same issue naming the table column its suggestion points to.
    pub fn fixed_by(mut self, column: TableColumn) -> Self {
        self.fix_column = Some(Box::new(column));
        self
    }

    /// The same issue with the first of `candidates` as suggestion, if any.
    pub fn suggest_first(mut self, candidates: &[String]) -> Self {
        if let Some(first) = candidates.first() {
            self.suggestion = Some(first.clone());
        }
        self
    }
}

/// The outcome of validating one query: `{valid, errors, warnings, rewritten_query}`.
///
/// `valid` is true exactly when `errors` is empty; warnings never make a query invalid. When the
/// validator changed the query (a row limit added), `rewritten_query` holds the query to run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ValidationReport {
    /// No errors.
    pub valid: bool,
    /// Problems that make the query wrong or unsafe.
    pub errors: Vec<QueryIssue>,
    /// Problems worth knowing that do not stop the query.
    pub warnings: Vec<QueryIssue>,
    /// The query to run instead of the one given, when the validator changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewritten_query: Option<String>,
}

impl ValidationReport {
    /// True when the only error is that the parser could not read the SQL: nothing else was
    /// found, and nothing else could be checked (the engine may still accept it).
    pub fn only_unparsed(&self) -> bool {
        matches!(self.errors.as_slice(), [only]
            if only.kind == IssueKind::Syntax && only.message.starts_with(crate::sql::PARSE_FAILURE))
    }

    /// A report from issues; `valid` follows from `errors`.
    pub fn new(
        errors: Vec<QueryIssue>,
        warnings: Vec<QueryIssue>,
        rewritten_query: Option<String>,
    ) -> Self {
        Self { valid: errors.is_empty(), errors, warnings, rewritten_query }
    }
}

/// Errors and warnings gathered while walking a query, each kept once. The issues already seen
/// are hashed: a query with 150,000 literals in an `IN` list gives as many issues, and a scan of
/// the list for each would make validation quadratic (24 s).
#[derive(Debug, Default)]
pub(crate) struct Issues {
    pub errors: Vec<QueryIssue>,
    pub warnings: Vec<QueryIssue>,
    seen_errors: HashSet<QueryIssue>,
    seen_warnings: HashSet<QueryIssue>,
}

impl Issues {
    pub(crate) fn error(&mut self, issue: QueryIssue) {
        if !self.seen_errors.contains(&issue) {
            self.seen_errors.insert(issue.clone());
            self.errors.push(issue);
        }
    }

    pub(crate) fn warn(&mut self, issue: QueryIssue) {
        if !self.seen_warnings.contains(&issue) {
            self.seen_warnings.insert(issue.clone());
            self.warnings.push(issue);
        }
    }

    pub(crate) fn into_report(self, rewritten_query: Option<String>) -> ValidationReport {
        ValidationReport::new(self.errors, self.warnings, rewritten_query)
    }
}
