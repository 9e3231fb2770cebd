//! The read-only check for PostgreSQL, on PostgreSQL's own parse ([`super::pg_tree`]): the
//! token bounds first (as for every dialect), then libpg_query's tree, each call in it judged
//! against the engine's allow-list by the judge the other dialects' trees use. What PostgreSQL
//! itself does not parse could not run: it is refused on its tokens, with PostgreSQL's message.

use sqlparser::tokenizer::Token;

use super::bounded::{BEYOND_BOUNDS, check_token_bounds};
use super::call_tokens::{attribute_call, unicode_identifier};
use super::callables::{Callables, Written};
use super::pg_tree::{self, RelationsRead};
use super::safety;
use crate::issue::{IssueKind, Issues, QueryIssue};

/// The most tokens (words, literals, operators, punctuation) of a statement given to
/// PostgreSQL's parser by the validator and execute_query: libpg_query holds about 2 KB per
/// token while it parses and serializes its tree (a 140 KB statement of 15,000 `VALUES` rows
/// peaked at 130 MB), so the statement's length bounds the memory. Real queries hold hundreds.
pub const MAX_POSTGRES_TOKENS: usize = 50_000;

/// The same bound where the database layer checks what it runs with its larger parsing budget
/// ([`super::EXECUTION_WORK_BUDGET`]): its own profiling SQL for a 1,600-column table holds
/// about 72,000 tokens.
pub const EXECUTION_POSTGRES_TOKENS: usize = 2 * MAX_POSTGRES_TOKENS;

/// Checks `sql` as PostgreSQL reads it; refusals go to `issues`. Returns what the statement
/// reads when PostgreSQL's grammar parsed it. `tokens` are sqlparser's (for the token bounds
/// and, when PostgreSQL does not parse the text, the token check), when it tokenizes.
pub(super) fn check(
    sql: &str,
    tokens: Option<&[Token]>,
    callables: &Callables,
    budget: u64,
    issues: &mut Issues,
) -> Option<RelationsRead> {
    if let Some(tokens) = tokens
        && let Err(e) = check_token_bounds(tokens, budget)
    {
        safety::check_tokens(tokens, callables, &e.to_string(), issues);
        return None;
    }
    let most =
        if budget > super::WORK_BUDGET { EXECUTION_POSTGRES_TOKENS } else { MAX_POSTGRES_TOKENS };
    // Text sqlparser cannot tokenize is bounded by its length: a token is at least a byte or so
    // in real SQL, so four bytes a token is generous.
    let count = match tokens {
        Some(tokens) => tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).count(),
        None => sql.len() / 4,
    };
    if count > most {
        issues.error(
            QueryIssue::new(
                IssueKind::Syntax,
                format!("{BEYOND_BOUNDS}the statement holds {count} tokens; PostgreSQL's parser is given at most {most} (it holds about 2 KB per token while it parses)"),
            )
            .suggest("split the query, or read the values from a table instead of writing them out"),
        );
        return None;
    }
    let tree = match pg_tree::parse(sql) {
        Ok(tree) => tree,
        Err(message) => {
            let message = format!("PostgreSQL: {message}");
            match tokens {
                Some(tokens) => safety::check_tokens(tokens, callables, &message, issues),
                None => issues.error(
                    QueryIssue::new(
                        IssueKind::Syntax,
                        format!("the statement does not parse ({message})"),
                    )
                    .suggest("check quotes and comments"),
                ),
            }
            return None;
        }
    };
    if pg_tree::has_unicode_identifier(sql) {
        issues.error(unicode_identifier());
    }
    let reading = pg_tree::read(&tree, sql, issues);
    for call in &reading.calls {
        safety::judge(call, callables, issues);
    }
    for (name, written) in &reading.attributes {
        if callables.is_attribute_call(Written { text: name, quoted: true }) {
            issues.error(attribute_call(written));
        }
    }
    Some(reading.relations)
}

/// What `sql` reads, from PostgreSQL's own parse (see [`RelationsRead`]); `Err` with
/// PostgreSQL's message when it does not parse, or with the bound passed.
pub(super) fn relations(sql: &str) -> Result<RelationsRead, String> {
    if sql.len() / 4 > EXECUTION_POSTGRES_TOKENS {
        return Err(format!("{BEYOND_BOUNDS}the statement is {} bytes long", sql.len()));
    }
    let tree = pg_tree::parse(sql)?;
    let mut issues = Issues::default();
    let reading = pg_tree::read(&tree, sql, &mut issues);
    match issues.errors.first() {
        Some(issue) if issue.kind == IssueKind::Syntax => Err(issue.message.clone()),
        _ => Ok(reading.relations),
    }
}
