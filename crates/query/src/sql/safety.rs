//! Read-only safety: the statement must be one query, nothing inside it may write, lock or
//! change the session, and everything it calls must be on the engine's allow-list
//! ([`Callables`]): functions, operators and casts, resolved as the engine resolves names.
//!
//! The check walks the parsed tree, so comments, odd casing and quoting cannot hide a keyword
//! or a call: `"PG_SLEEP"`, `pg_catalog.pg_sleep` and `/**/pg_sleep` are each resolved to what
//! PostgreSQL would call (`"PG_SLEEP"` to nothing, hence refused). The same function,
//! [`super::check_read_only`], runs in the validator, in execute_query and in the database layer.

use std::ops::ControlFlow;

use sqlparser::ast::{Query, SetExpr, Statement, Visit, Visitor};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::call_tokens::{self, UNSAFE_TYPE, refused_why};
use super::callables::{Callables, Verdict, Written};
use super::calls::{self, Call, CallKind, MAX_CALL_DEPTH, NamePart};
use crate::TableFunctions;
use crate::issue::{IssueKind, Issues, QueryIssue};

/// Refuses any statement that is not a query, with the reason.
pub(super) fn check_statement_kind(statement: &Statement, issues: &mut Issues) -> bool {
    if matches!(statement, Statement::Query(_)) {
        return true;
    }
    let text = statement.to_string();
    let keyword: String =
        text.split_whitespace().take(1).collect::<Vec<_>>().join(" ").to_ascii_uppercase();
    let why = match statement {
        Statement::Pragma { .. } => "PRAGMA reads or changes database settings",
        Statement::AttachDatabase { .. } | Statement::AttachDuckDBDatabase { .. } => {
            "ATTACH opens another database file"
        }
        Statement::DetachDuckDBDatabase { .. } => "DETACH changes the attached databases",
        Statement::Copy { .. } => "COPY reads or writes files or runs programs",
        Statement::Set(_) => "SET changes the session (role, settings)",
        Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::StartTransaction { .. } => {
            "transaction control ends the read-only transaction"
        }
        Statement::Explain { .. } => "EXPLAIN is not a query",
        Statement::ExplainTable { .. } => {
            "DESCRIBE is not a query (describe_schema shows a table's columns)"
        }
        _ => "it is not a read-only query",
    };
    issues.error(
        QueryIssue::new(
            IssueKind::NotReadOnly,
            format!("only one read-only query (SELECT, WITH … SELECT, VALUES) is allowed; the {keyword} statement is refused: {why}"),
        )
        .suggest("write a single SELECT"),
    );
    false
}

/// Checks one parsed query: nesting within [`MAX_CALL_DEPTH`], no writes, locks or
/// `SELECT … INTO`, and every call allowed by `callables`, on the tree and on the `tokens`.
pub(super) fn check_query(
    query: &Query,
    tokens: &[Token],
    callables: &Callables,
    issues: &mut Issues,
) {
    check_executable_comments(tokens, callables, issues);
    let calls = match calls::collect(query) {
        Ok(calls) => calls,
        Err(depth) => {
            issues.error(
                QueryIssue::new(
                    IssueKind::Syntax,
                    format!("the query nests expressions or subqueries {depth} deep; at most {MAX_CALL_DEPTH} levels are checked"),
                )
                .suggest("use IN (…) instead of long OR chains, or split the query"),
            );
            return;
        }
    };
    let mut walker = WriteWalker { issues };
    let _ = query.visit(&mut walker);
    let before = issues.errors.len();
    for call in &calls {
        judge(call, callables, issues);
    }
    let mut from_tokens = Issues::default();
    call_tokens::check(tokens, callables, &mut from_tokens);
    // A refusal the tree already gave is not repeated from the tokens.
    for issue in from_tokens.errors {
        if !issues.errors[before..].iter().any(|e| e.message == issue.message) {
            issues.error(issue);
        }
    }
}

fn shown(call: &Call) -> String {
    if let Some(written) = &call.written {
        return written.clone();
    }
    let mut parts: Vec<&str> = call.qualifiers.iter().map(|p| p.text.as_str()).collect();
    parts.push(&call.name.text);
    parts.join(".")
}

fn as_written(part: &NamePart) -> Written<'_> {
    Written { text: &part.text, quoted: part.quoted }
}

/// The one decision per call: allowed, refused (with why), or unknown (with a did-you-mean).
pub(super) fn judge(call: &Call, callables: &Callables, issues: &mut Issues) {
    let rules = callables.dialect().rules();
    let name = shown(call);
    let refuse =
        |issues: &mut Issues, kind: IssueKind, message: String, suggestion: Option<String>| {
            let mut issue = QueryIssue::new(kind, message).at(call.location.clone());
            if let Some(s) = suggestion {
                issue = issue.suggest(s);
            }
            issues.error(issue);
        };
    match call.kind {
        CallKind::Function | CallKind::TableFunction => {
            // SQLite's functions in FROM are virtual tables, which its engine gate (the
            // authorizer) sees as reads: only whether SQLite has one is checked.
            if call.kind == CallKind::TableFunction
                && rules.table_functions() == TableFunctions::Refused
            {
                // By construction, not by name: ClickHouse's table functions read files, URLs
                // and other servers (`file`, `url`, `s3`, `remote`, `mysql`, …), take an
                // INSERT's data (`input`) or make rows out of nothing; none is a table of this
                // database, so none runs.
                return refuse(
                    issues,
                    IssueKind::ForbiddenFunction,
                    format!(
                        "table function {name} is not allowed: {}'s table functions reach files, URLs or other servers, or generate rows; only the tables this source serves are read",
                        rules.name()
                    ),
                    Some("read a table this source serves (list_sources, describe_schema)".into()),
                );
            }
            if call.kind == CallKind::TableFunction
                && rules.table_functions() == TableFunctions::VirtualTables
            {
                if !call.qualifiers.is_empty()
                    || callables.table_function(as_written(&call.name)) == Verdict::Unknown
                {
                    refuse(
                        issues,
                        IssueKind::UnknownFunction,
                        format!("table function {name} does not exist in this SQLite database"),
                        None,
                    );
                }
                return;
            }
            let schema = match call.qualifiers.as_slice() {
                [] => None,
                [schema] if rules.has_schemas() => Some(as_written(schema)),
                _ => {
                    return refuse(
                        issues,
                        IssueKind::ForbiddenFunction,
                        format!("function {name}: a function name has at most a schema before it"),
                        None,
                    );
                }
            };
            if callables.is_syntax_form(schema.as_ref(), &as_written(&call.name)) {
                return;
            }
            match callables.function(schema, as_written(&call.name)) {
                Verdict::Allowed => {}
                Verdict::Refused => refuse(
                    issues,
                    IssueKind::ForbiddenFunction,
                    format!("function {name} is not allowed: {}", refused_why(callables)),
                    None,
                ),
                Verdict::Unknown => {
                    let wanted = callables.resolve(&as_written(&call.name));
                    let similar = callables.similar_function(&wanted);
                    let hint = similar
                        .as_ref()
                        .map(|s| format!(" Did you mean `{s}`?"))
                        .unwrap_or_default();
                    refuse(
                        issues,
                        IssueKind::UnknownFunction,
                        format!(
                            "function {name} does not exist in this {} database, so it cannot be shown to be harmless.{hint}",
                            callables.dialect()
                        ),
                        similar,
                    );
                }
            }
        }
        // SQLite's engine gate checks the functions behind its operators; its types run none.
        // A ClickHouse operator is one of its built-in functions, a cast converts to a built-in
        // type, and the rest of its syntax calls nothing the tree does not show.
        _ if !rules.calls_hide_in_syntax() => {}
        CallKind::Operator => {
            let schema = match call.qualifiers.as_slice() {
                [] => None,
                [schema] => Some(as_written(schema)),
                _ => {
                    return refuse(
                        issues,
                        IssueKind::ForbiddenFunction,
                        format!("operator {name}: an operator name has at most a schema before it"),
                        None,
                    );
                }
            };
            match callables.operator(schema, &call.name.text) {
                Verdict::Allowed => {}
                Verdict::Refused => refuse(
                    issues,
                    IssueKind::ForbiddenFunction,
                    format!(
                        "operator {name} is not allowed: a function behind it is declared volatile or parallel-unsafe"
                    ),
                    None,
                ),
                Verdict::Unknown => refuse(
                    issues,
                    IssueKind::UnknownFunction,
                    format!("operator {name} does not exist in this PostgreSQL database"),
                    None,
                ),
            }
        }
        CallKind::Type => {
            let schema = call.qualifiers.last().map(as_written);
            if callables.is_unsafe_type(schema, as_written(&call.name)) {
                refuse(
                    issues,
                    IssueKind::ForbiddenFunction,
                    format!("a cast to {name} is not allowed: {UNSAFE_TYPE}"),
                    None,
                );
            }
        }
        CallKind::Foreign => refuse(
            issues,
            IssueKind::Syntax,
            format!(
                "{name} is not PostgreSQL syntax; schemascope checks only what PostgreSQL would run"
            ),
            Some("write it in PostgreSQL's own syntax".into()),
        ),
    }
}

/// True when a SELECT of this body (either side of a UNION, …) has an INTO clause. Iterative:
/// a chain of set operations is as deep as it is long.
fn selects_into(body: &SetExpr) -> bool {
    let mut pending = vec![body];
    while let Some(body) = pending.pop() {
        match body {
            SetExpr::Select(select) if select.into.is_some() => return true,
            SetExpr::SetOperation { left, right, .. } => pending.extend([&**left, &**right]),
            _ => {}
        }
    }
    false
}

/// Words a read-only statement may start with (after comments and opening parentheses).
const READ_ONLY_STARTS: &[Keyword] =
    &[Keyword::SELECT, Keyword::WITH, Keyword::VALUES, Keyword::TABLE];

/// The safety check on tokens alone, for SQL that does not parse: the statement must start with
/// SELECT, WITH, VALUES or TABLE, hold one statement, call no refused function and have no
/// INTO. The tokenizer handles comments, quotes and dollar-quoting as the databases do, so
/// nothing inside a string or a comment counts and nothing can hide in one. PostgreSQL SQL
/// that does not parse is refused in any case: what it calls cannot be resolved, and
/// PostgreSQL runs functions inside a read-only transaction.
pub(super) fn check_tokens(
    tokens: &[Token],
    callables: &Callables,
    parse_error: &str,
    issues: &mut Issues,
) {
    let significant: Vec<&Token> =
        tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF)).collect();
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
            QueryIssue::new(
                IssueKind::MultipleStatements,
                "exactly one statement is allowed; found text after a `;`",
            )
            .suggest("send a single SELECT without other statements"),
        );
    }
    call_tokens::check(tokens, callables, issues);
    check_executable_comments(tokens, callables, issues);
    if significant.iter().any(
        |t| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::INTO),
    ) {
        issues.error(
            QueryIssue::new(IssueKind::NotReadOnly, "SELECT … INTO creates a table")
                .suggest("remove the INTO clause"),
        );
    }
    if !callables.dialect().rules().engine_decides_unparsed() && issues.errors.is_empty() {
        let dialect = callables.dialect();
        issues.error(
            QueryIssue::new(
                IssueKind::Syntax,
                format!(
                    "the statement does not parse ({parse_error}), so what it calls cannot be checked; {dialect} statements run only once every function, operator and cast in them is known to be harmless"
                ),
            )
            .suggest("write it in plainer SQL (for example SELECT * FROM t for TABLE t)"),
        );
    }
}

/// Refuses comments the engine runs as SQL (MySQL's `/*! … */` and `/*!50700 … */`, MariaDB's
/// `/*M! … */`): what they hold is not read by the parser, so it could call anything.
fn check_executable_comments(tokens: &[Token], callables: &Callables, issues: &mut Issues) {
    use sqlparser::tokenizer::Whitespace;
    if !callables.dialect().rules().executable_comments() {
        return;
    }
    let runs = tokens.iter().any(|t| {
        matches!(t, Token::Whitespace(Whitespace::MultiLineComment(text))
            if text.starts_with('!') || text.starts_with("M!"))
    });
    if runs {
        issues.error(
            QueryIssue::new(
                IssueKind::NotReadOnly,
                "a /*! … */ comment is run by the server as SQL, unchecked",
            )
            .suggest("write what the comment holds as plain SQL, or remove it"),
        );
    }
}

/// Finds writes, locks and `SELECT … INTO` inside a query (calls are judged separately).
struct WriteWalker<'a> {
    issues: &'a mut Issues,
}

impl Visitor for WriteWalker<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if !query.locks.is_empty() {
            self.issues.error(
                QueryIssue::new(
                    IssueKind::NotReadOnly,
                    "FOR UPDATE/FOR SHARE locks rows; a read-only query may not lock",
                )
                .suggest("remove the FOR UPDATE/SHARE clause"),
            );
        }
        // ClickHouse's `SETTINGS …` would change the limits the statement runs under (and
        // `readonly` itself), and `FORMAT …` the shape of the answer schemascope reads.
        if query.settings.is_some() {
            self.issues.error(
                QueryIssue::new(
                    IssueKind::NotReadOnly,
                    "a SETTINGS clause changes the limits and the read-only setting the query runs under",
                )
                .suggest("remove the SETTINGS clause"),
            );
        }
        if query.format_clause.is_some() {
            self.issues.error(
                QueryIssue::new(
                    IssueKind::NotReadOnly,
                    "a FORMAT clause changes how the result is sent; schemascope chooses it",
                )
                .suggest("remove the FORMAT clause"),
            );
        }
        if selects_into(&query.body) {
            self.issues.error(
                QueryIssue::new(IssueKind::NotReadOnly, "SELECT … INTO creates a table")
                    .suggest("remove the INTO clause"),
            );
        }
        ControlFlow::Continue(())
    }

    /// MySQL's `@name := value` sets a variable of the session, which outlives the statement.
    fn pre_visit_expr(&mut self, expr: &sqlparser::ast::Expr) -> ControlFlow<()> {
        if let sqlparser::ast::Expr::BinaryOp {
            op: sqlparser::ast::BinaryOperator::Assignment,
            ..
        } = expr
        {
            self.issues.error(
                QueryIssue::new(
                    IssueKind::NotReadOnly,
                    "`:=` assigns a session variable, which outlives the query",
                )
                .suggest("compute the value in the query (a CTE or a subquery) instead"),
            );
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        // The top-level query is visited as a `Query`; any statement met inside it is nested
        // (`WITH x AS (DELETE … RETURNING …)`).
        let keyword =
            statement.to_string().split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        self.issues.error(QueryIssue::new(
            IssueKind::NotReadOnly,
            format!("a {keyword} statement inside the query (in a CTE or subquery) writes data"),
        ));
        ControlFlow::Continue(())
    }
}
