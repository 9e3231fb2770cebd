//! Read-only safety: the statement must be one query, and nothing inside it may write, lock,
//! change the session, or call a function with side effects or access to files, processes or
//! other sessions.
//!
//! The check walks the parsed tree, so comments, odd casing and quoting cannot hide a keyword:
//! `"PG_READ_FILE"`, `pg_catalog.pg_read_file` and `/**/pg_read_file` all name the same
//! function once parsed. The deny-lists are per dialect, but a name dangerous in either dialect
//! is refused in both: it costs nothing and protects a query validated under the wrong dialect.
//! The database layer enforces read-only again (read-only connections and transactions); this
//! check exists to give the model a clear reason before anything runs.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, ObjectName, Query, SetExpr, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::issue::{IssueKind, Issues, Location, QueryIssue};

/// SQLite functions that read or write files, load code, or expose raw pages.
const SQLITE_FORBIDDEN: &[&str] = &[
    "load_extension",
    "writefile",
    "readfile",
    "edit",
    "fsdir",
    "lsdir",
    "fts3_tokenizer",
    "zipfile",
    "sqlar_uncompress",
    "sqlite_dbpage",
    "sqlite_dbdata",
    "sqlite_dbptr",
];

/// PostgreSQL functions with side effects or access to files, programs, other sessions or
/// servers. Entries ending in `*` are prefixes.
const POSTGRES_FORBIDDEN: &[&str] = &[
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_*",
    "pg_stat_file",
    "pg_file_*",
    "lo_*",
    "loread",
    "lowrite",
    "set_config",
    "pg_sleep*",
    "dblink*",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_promote",
    "pg_switch_wal",
    "pg_create_*",
    "pg_drop_*",
    "pg_backup_*",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_advisory*",
    "pg_try_advisory*",
    "pg_notify",
    "pg_logical_*",
    "pg_replication_*",
    "pg_stat_reset*",
    "pg_import_system_collations",
    "nextval",
    "setval",
    "query_to_xml*",
    "query_to_xmlschema",
    "cursor_to_xml*",
    "txid_current",
    "pg_current_xact_id",
];

/// Why `name` (a function name, any case, unqualified) is refused, if it is.
pub fn forbidden_function(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    let hit = |list: &[&str]| {
        list.iter().any(|entry| match entry.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *entry,
        })
    };
    if hit(SQLITE_FORBIDDEN) {
        Some("it reads or writes files or loads code in SQLite")
    } else if hit(POSTGRES_FORBIDDEN) {
        Some("it has side effects or reaches files, programs, sequences, locks or other sessions in PostgreSQL")
    } else {
        None
    }
}

/// Refuses any statement that is not a query, with the reason.
pub fn check_statement_kind(statement: &Statement, issues: &mut Issues) -> bool {
    if matches!(statement, Statement::Query(_)) {
        return true;
    }
    let text = statement.to_string();
    let keyword: String = text.split_whitespace().take(1).collect::<Vec<_>>().join(" ").to_ascii_uppercase();
    let why = match statement {
        Statement::Pragma { .. } => "PRAGMA reads or changes database settings",
        Statement::AttachDatabase { .. } | Statement::AttachDuckDBDatabase { .. } => "ATTACH opens another database file",
        Statement::DetachDuckDBDatabase { .. } => "DETACH changes the attached databases",
        Statement::Copy { .. } => "COPY reads or writes files or runs programs",
        Statement::Set(_) => "SET changes the session (role, settings)",
        Statement::Commit { .. } | Statement::Rollback { .. } | Statement::StartTransaction { .. } => {
            "transaction control ends the read-only transaction"
        }
        Statement::Explain { .. } | Statement::ExplainTable { .. } => "EXPLAIN is not a query",
        _ => "it is not a read-only query",
    };
    issues.error(
        QueryIssue::new(
            IssueKind::NotReadOnly,
            format!("only one read-only query (SELECT, WITH … SELECT, VALUES) is allowed; this is a {keyword} statement: {why}"),
        )
        .suggest("write a single SELECT"),
    );
    false
}

/// Walks a query for writes, locks, `SELECT … INTO` and forbidden functions.
pub fn check_query_safety(query: &Query, issues: &mut Issues) {
    let mut walker = SafetyWalker { issues };
    let _ = query.visit(&mut walker);
}

/// True when a SELECT of this body (either side of a UNION, …) has an INTO clause.
fn selects_into(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => select.into.is_some(),
        SetExpr::SetOperation { left, right, .. } => selects_into(left) || selects_into(right),
        _ => false,
    }
}

/// Words a read-only statement may start with (after comments and opening parentheses).
const READ_ONLY_STARTS: &[Keyword] = &[Keyword::SELECT, Keyword::WITH, Keyword::VALUES, Keyword::TABLE];

/// The safety check on tokens alone, for SQL that does not parse: the statement must start with
/// SELECT, WITH, VALUES or TABLE, hold one statement, name no forbidden function before a `(`,
/// and have no INTO. The tokenizer handles comments, quotes and dollar-quoting as the databases
/// do, so nothing inside a string or a comment counts and nothing can hide in one. Text that
/// does not even tokenize is refused: a string the tokenizer cannot delimit might hide anything.
pub fn check_tokens(sql: &str, dialect: &dyn Dialect, issues: &mut Issues) {
    let tokens = match Tokenizer::new(dialect, sql).tokenize() {
        Ok(tokens) => tokens,
        Err(e) => {
            issues.error(QueryIssue::new(IssueKind::Syntax, format!("the SQL does not tokenize: {e}")).suggest("check quotes and comments"));
            return;
        }
    };
    let significant: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF)).collect();
    let first = significant.iter().find(|t| !matches!(t, Token::LParen));
    match first {
        Some(Token::Word(w)) if w.quote_style.is_none() && READ_ONLY_STARTS.contains(&w.keyword) => {}
        Some(other) => issues.error(
            QueryIssue::new(
                IssueKind::NotReadOnly,
                format!("only one read-only query (SELECT, WITH … SELECT, VALUES) is allowed; this starts with {other}"),
            )
            .suggest("write a single SELECT"),
        ),
        None => issues.error(QueryIssue::new(IssueKind::MultipleStatements, "there is no statement").suggest("write a single SELECT")),
    }
    if let Some(at) = significant.iter().position(|t| matches!(t, Token::SemiColon))
        && significant[at + 1..].iter().any(|t| !matches!(t, Token::SemiColon))
    {
        issues.error(
            QueryIssue::new(IssueKind::MultipleStatements, "exactly one statement is allowed; found text after a `;`")
                .suggest("send a single SELECT without other statements"),
        );
    }
    for pair in significant.windows(2) {
        let (Token::Word(w), Token::LParen) = (pair[0], pair[1]) else { continue };
        if let Some(why) = forbidden_function(&w.value) {
            issues.error(QueryIssue::new(IssueKind::ForbiddenFunction, format!("function {} is not allowed: {why}", w.value)));
        }
    }
    if significant.iter().any(|t| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::INTO)) {
        issues.error(QueryIssue::new(IssueKind::NotReadOnly, "SELECT … INTO creates a table").suggest("remove the INTO clause"));
    }
}

struct SafetyWalker<'a> {
    issues: &'a mut Issues,
}

impl SafetyWalker<'_> {
    fn function(&mut self, name: &ObjectName) {
        let Some(last) = name.0.last().and_then(|p| p.as_ident()) else { return };
        if let Some(why) = forbidden_function(&last.value) {
            let at = Location::at(last.span.start.line, last.span.start.column);
            self.issues.error(QueryIssue::new(IssueKind::ForbiddenFunction, format!("function {} is not allowed: {why}", last.value)).at(at));
        }
    }
}

impl Visitor for SafetyWalker<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if !query.locks.is_empty() {
            self.issues.error(
                QueryIssue::new(IssueKind::NotReadOnly, "FOR UPDATE/FOR SHARE locks rows; a read-only query may not lock")
                    .suggest("remove the FOR UPDATE/SHARE clause"),
            );
        }
        if selects_into(&query.body) {
            self.issues.error(QueryIssue::new(IssueKind::NotReadOnly, "SELECT … INTO creates a table").suggest("remove the INTO clause"));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        // The top-level query is visited as a `Query`; any statement met inside it is nested
        // (`WITH x AS (DELETE … RETURNING …)`).
        let keyword = statement.to_string().split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        self.issues
            .error(QueryIssue::new(IssueKind::NotReadOnly, format!("a {keyword} statement inside the query (in a CTE or subquery) writes data")));
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = expr {
            self.function(&f.name);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        match factor {
            TableFactor::Table { name, args: Some(_), .. } | TableFactor::Function { name, .. } => self.function(name),
            _ => {}
        }
        ControlFlow::Continue(())
    }
}
