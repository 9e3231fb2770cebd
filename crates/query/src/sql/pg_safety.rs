//! The read-only check for PostgreSQL, on PostgreSQL's own parse ([`super::pg_tree`]): the
//! token bounds first (as for every dialect), then libpg_query's tree, each call in it judged
//! against the engine's allow-list by the judge the other dialects' trees use. What PostgreSQL
//! itself does not parse could not run: it is refused on its tokens, with PostgreSQL's message.

use sqlparser::tokenizer::Token;

use super::bounded::check_token_bounds;
use super::call_tokens::{attribute_call, unicode_identifier};
use super::callables::{Callables, Written};
use super::pg_tree::{self, RelationsRead};
use super::safety;
use crate::issue::{IssueKind, Issues, QueryIssue};

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
    let tree = pg_tree::parse(sql)?;
    let mut issues = Issues::default();
    let reading = pg_tree::read(&tree, sql, &mut issues);
    match issues.errors.first() {
        Some(issue) if issue.kind == IssueKind::Syntax => Err(issue.message.clone()),
        _ => Ok(reading.relations),
    }
}
