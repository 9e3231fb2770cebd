//! ClickHouse's `GLOBAL IN`, read as `IN` by the checks.
//!
//! `x GLOBAL IN (SELECT … FROM d)` reads the subquery once, on the coordinator of a cluster, and
//! sends its result to the shards: the form ClickHouse asks for when the subquery reads a
//! `Distributed` table too (a plain `IN` is refused there). It reads and calls what `x IN (…)`
//! does, which sqlparser reads (`GLOBAL JOIN` it reads itself); the server is sent the statement
//! as written.

use std::borrow::Cow;

use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::source_offsets::{line_starts, offset};

/// `sql` with each `GLOBAL` before `IN` or `NOT IN` blanked out (spaces of its length, so every
/// position a message names stays where it was). A statement that does not tokenize is
/// returned as it is, for the parser to refuse.
pub(crate) fn blanked<'s>(dialect: &dyn Dialect, sql: &'s str) -> Cow<'s, str> {
    let Ok(tokens) = Tokenizer::new(dialect, sql).tokenize_with_location() else {
        return Cow::Borrowed(sql);
    };
    let word = |token: &Token, keyword: Keyword| matches!(token, Token::Word(w) if w.keyword == keyword && w.quote_style.is_none());
    let lines = line_starts(sql);
    let mut out: Option<String> = None;
    for (k, token) in tokens.iter().enumerate() {
        if !word(&token.token, Keyword::GLOBAL) {
            continue;
        }
        let mut next = tokens[k + 1..].iter().filter(|t| !matches!(t.token, Token::Whitespace(_)));
        let before_in = match next.next() {
            Some(t) if word(&t.token, Keyword::IN) => true,
            Some(t) if word(&t.token, Keyword::NOT) => {
                next.next().is_some_and(|t| word(&t.token, Keyword::IN))
            }
            _ => false,
        };
        let (Some(start), Some(end)) =
            (offset(sql, &lines, token.span.start), offset(sql, &lines, token.span.end))
        else {
            continue;
        };
        if before_in {
            out.get_or_insert_with(|| sql.to_string())
                .replace_range(start..end, &" ".repeat(end - start));
        }
    }
    out.map_or(Cow::Borrowed(sql), Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::ClickHouseDialect;

    #[test]
    fn global_in_is_read_as_in_in_place() {
        let d = ClickHouseDialect {};
        assert_eq!(
            blanked(
                &d,
                "SELECT 1 FROM t WHERE a GLOBAL IN (SELECT a FROM d) AND b global not in (1)"
            ),
            "SELECT 1 FROM t WHERE a        IN (SELECT a FROM d) AND b        not in (1)"
        );
        assert_eq!(
            blanked(&d, "SELECT 1 FROM t\nWHERE a GLOBAL /* c */ IN (1)"),
            "SELECT 1 FROM t\nWHERE a        /* c */ IN (1)"
        );
        for kept in [
            "SELECT 1 FROM t GLOBAL JOIN d ON t.a = d.a",
            "SELECT 'GLOBAL IN' FROM t",
            "SELECT `GLOBAL` IN (1) FROM t",
            "SELECT global FROM t",
        ] {
            assert_eq!(blanked(&d, kept), kept);
        }
    }
}
