//! The call check on tokens, beside the one on the parsed tree: what PostgreSQL would read as a
//! call whatever sqlparser made of the text around it.
//!
//! - `U&"…"` identifiers (with Unicode escapes, `UESCAPE`) are refused outright: sqlparser
//!   reads them as the operator `&` between `U` and a quoted name, so the name PostgreSQL
//!   decodes is never the one checked.
//! - A word followed by `(` (comments and spaces between do not matter) that names a refused
//!   function is refused even where the tree holds no call, so a construct sqlparser reads
//!   differently from PostgreSQL cannot hide one.
//! - `x.name` calls `name(x)` in PostgreSQL when `x` is a row and `name` a one-argument
//!   function (attribute notation): refused when `name` is a refused function of that shape.
//! - `name 'text'` is a typed literal (it runs the type's input function), as is `::name`:
//!   refused when the type is.

use sqlparser::tokenizer::{Token, Word};

use super::callables::{Callables, Verdict, Written};
use crate::issue::{IssueKind, Issues, QueryIssue};

fn written(word: &Word) -> Written<'_> {
    Written { text: &word.value, quoted: word.quote_style.is_some() }
}

fn is_string(token: &Token) -> bool {
    matches!(
        token,
        Token::SingleQuotedString(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::DollarQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::HexStringLiteral(_)
    )
}

/// The word before a `.` that precedes position `at`, as a schema qualifier.
fn qualifier<'a>(significant: &[&'a Token], at: usize) -> Option<&'a Word> {
    match (at.checked_sub(2).map(|i| significant[i]), at.checked_sub(1).map(|i| significant[i])) {
        (Some(Token::Word(schema)), Some(Token::Period)) => Some(schema),
        _ => None,
    }
}

/// Refusals found on `tokens` (the whole statement, whitespace and comments included).
pub(super) fn check(tokens: &[Token], callables: &Callables, issues: &mut Issues) {
    let rules = callables.dialect().rules();
    let hidden_calls = rules.calls_hide_in_syntax();
    if rules.unicode_escaped_identifiers()
        && tokens.windows(3).any(|w| {
            matches!((&w[0], &w[1], &w[2]), (Token::Word(u), Token::Ampersand, Token::Word(name))
                if u.quote_style.is_none() && u.value.eq_ignore_ascii_case("u") && name.quote_style == Some('"'))
        })
    {
        issues.error(unicode_identifier());
    }
    let significant: Vec<&Token> =
        tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    for (i, token) in significant.iter().enumerate() {
        let next = significant.get(i + 1).copied();
        match token {
            Token::Word(word) if matches!(next, Some(Token::LParen)) => {
                let schema = qualifier(&significant, i);
                if callables.function(schema.map(written), written(word)) == Verdict::Refused {
                    issues.error(QueryIssue::new(
                        IssueKind::ForbiddenFunction,
                        format!(
                            "function {} is not allowed: {}",
                            word.value,
                            refused_why(callables)
                        ),
                    ));
                }
            }
            Token::Word(word) if hidden_calls && next.is_some_and(is_string) => {
                let schema = qualifier(&significant, i);
                if callables.is_unsafe_type(schema.map(written), written(word)) {
                    issues.error(QueryIssue::new(
                        IssueKind::ForbiddenFunction,
                        format!("a literal of type {} is not allowed: {}", word.value, UNSAFE_TYPE),
                    ));
                }
            }
            Token::Period if hidden_calls => {
                if let Some(Token::Word(word)) = next
                    && !matches!(significant.get(i + 2), Some(Token::LParen | Token::Period))
                    && callables.is_attribute_call(written(word))
                {
                    issues.error(attribute_call(&word.value));
                }
            }
            Token::DoubleColon if hidden_calls => {
                let Some(Token::Word(first)) = next else { continue };
                let (schema, name) = match (significant.get(i + 2), significant.get(i + 3)) {
                    (Some(Token::Period), Some(Token::Word(name))) => (Some(first), name),
                    _ => (None, first),
                };
                if callables.is_unsafe_type(schema.map(written), written(name)) {
                    issues.error(QueryIssue::new(
                        IssueKind::ForbiddenFunction,
                        format!("a cast to {} is not allowed: {}", name.value, UNSAFE_TYPE),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// The refusal of `U&"…"` identifiers.
pub(super) fn unicode_identifier() -> QueryIssue {
    QueryIssue::new(
        IssueKind::ForbiddenFunction,
        "identifiers written U&\"…\" (with Unicode escapes) are refused: schemascope cannot be sure which function or column PostgreSQL decodes them to",
    )
    .suggest("write the name plainly, or double-quoted without escapes")
}

/// The refusal of `x.name` where `name` is a refused function PostgreSQL may call on the row
/// `x` (attribute notation).
pub(super) fn attribute_call(name: &str) -> QueryIssue {
    QueryIssue::new(
        IssueKind::ForbiddenFunction,
        format!(
            ".{name} may call function {name} on the row before it (attribute notation), and that function is not allowed"
        ),
    )
}

/// Why a type is refused.
pub(super) const UNSAFE_TYPE: &str = "converting to it runs a function (its input or cast function, or a domain constraint) that the database declares volatile or parallel-unsafe";

/// Why a function is refused, in the engine's terms.
pub(super) fn refused_why(callables: &Callables) -> &'static str {
    callables.dialect().rules().refused_why()
}
