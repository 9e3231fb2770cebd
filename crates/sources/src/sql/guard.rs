//! The database layer's own statement check: whatever reaches a [`super::Database`] must start
//! with SELECT, WITH, VALUES or TABLE. The validator refuses far more, with better reasons; this
//! check is here so that a caller that skipped it (or a validator bug) still cannot run
//! `COPY … TO PROGRAM`, `DO`, `CALL`, `SET`, `PRAGMA`, `ATTACH`, `VACUUM INTO`, `PREPARE`,
//! `LISTEN` or transaction control, none of which a read-only transaction or connection
//! refuses on its own. Writes inside a query (`WITH x AS (DELETE …)`) are left to the read-only
//! connection or transaction, which refuses them.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use super::Dialect;

/// Words a read-only statement may start with (after comments and opening parentheses).
const STARTS: &[Keyword] = &[Keyword::SELECT, Keyword::WITH, Keyword::VALUES, Keyword::TABLE];

/// Why `sql` may not run, if it may not: the statement's first word, read as the database
/// reads it (comments, quotes and dollar-quoting handled by sqlparser's tokenizer).
pub fn refusal(sql: &str, dialect: Dialect) -> Option<String> {
    let parser_dialect = dialect.rules().parser();
    let tokens = match Tokenizer::new(parser_dialect, sql).tokenize() {
        Ok(tokens) => tokens,
        Err(e) => {
            return Some(format!(
                "refused: the statement does not tokenize ({e}); check quotes and comments"
            ));
        }
    };
    let first = tokens.iter().find(|t| !matches!(t, Token::Whitespace(_) | Token::LParen));
    match first {
        Some(Token::Word(w)) if w.quote_style.is_none() && STARTS.contains(&w.keyword) => None,
        Some(Token::EOF) | None => Some("refused: there is no statement (send one SELECT)".into()),
        Some(other) => Some(format!(
            "refused: only read-only queries (SELECT, WITH … SELECT, VALUES, TABLE) run on a source; this statement starts with {other}"
        )),
    }
}

/// Why `sql` may not run by the shared read-only check against the engine's own `callables`,
/// as one message (`refused: …; …`), within the work budget of the database layer (whose own
/// profiling statements are wide, and read the engine's catalog, so relations are not judged).
pub(crate) fn read_only_refusal(
    sql: &str,
    callables: &schemascope_query::Callables,
) -> Result<(), String> {
    schemascope_query::check_read_only_within(
        sql,
        callables,
        schemascope_query::sql::EXECUTION_WORK_BUDGET,
    )
    .map_err(|issues| refusal_message(&issues))
}

/// The read-only check's issues as one refusal message (`refused: …; …`).
pub(crate) fn refusal_message(issues: &[schemascope_query::QueryIssue]) -> String {
    let reasons: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    format!("refused: {}", reasons.join("; "))
}

/// `sql` without the semicolons (and the spaces and comments around them) that end it, so that
/// it can be written inside a larger statement. Text that does not tokenize is returned as is
/// (it fails to prepare on its own first).
pub fn trim_trailing_semicolons(sql: &str, dialect: Dialect) -> &str {
    let parser_dialect = dialect.rules().parser();
    let Ok(tokens) = Tokenizer::new(parser_dialect, sql).tokenize_with_location() else {
        return sql;
    };
    let mut first_trailing = None;
    for token in tokens.iter().rev() {
        match token.token {
            Token::Whitespace(_) | Token::EOF => {}
            Token::SemiColon => first_trailing = Some(token.span.start),
            _ => break,
        }
    }
    match first_trailing.and_then(|at| byte_offset(sql, at)) {
        Some(offset) => &sql[..offset],
        None => sql,
    }
}

/// The byte offset of a tokenizer location (1-based line and column, columns in characters).
fn byte_offset(sql: &str, at: Location) -> Option<usize> {
    let (mut line, mut column) = (1u64, 1u64);
    for (offset, ch) in sql.char_indices() {
        if (line, column) == (at.line, at.column) {
            return Some(offset);
        }
        if ch == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_semicolons_go_and_nothing_else_does() {
        for (sql, want) in [
            ("SELECT 1;", "SELECT 1"),
            ("SELECT 'é;';  ;\n-- done\n", "SELECT 'é;'"),
            ("SELECT\n  'a;' ; /* x */", "SELECT\n  'a;' "),
            ("SELECT 1 -- ;", "SELECT 1 -- ;"),
            ("SELECT $$;$$", "SELECT $$;$$"),
        ] {
            assert_eq!(trim_trailing_semicolons(sql, Dialect::Postgres), want, "{sql:?}");
        }
    }

    #[test]
    fn only_queries_pass_whatever_the_comments_and_casing() {
        for sql in [
            "SELECT 1",
            " /* DELETE */ select 1",
            "-- x\n(SELECT 1) UNION SELECT 2",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "VALUES (1)",
            "TABLE t",
        ] {
            assert_eq!(refusal(sql, Dialect::Postgres), None, "{sql}");
        }
        for sql in [
            "COPY t TO PROGRAM 'x'",
            "/* SELECT */ DO $$ BEGIN END $$",
            "\"SELECT\" 1",
            "PRAGMA query_only = 0",
            "",
            "-- only a comment",
        ] {
            let why = refusal(sql, Dialect::Postgres).unwrap_or_default();
            assert!(why.starts_with("refused:"), "{sql}: {why}");
        }
        assert!(
            refusal("VACUUM INTO '/tmp/x'", Dialect::Sqlite)
                .is_some_and(|w| w.contains("starts with VACUUM"))
        );
    }
}
