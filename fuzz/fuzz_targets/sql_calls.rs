//! Fuzzes the read-only call check — the one decision validate_query, execute_query and the
//! PostgreSQL database layer share — on arbitrary text against the PostgreSQL stand-in
//! allow-list: every input gets an answer (never a panic, and never a stack overflow: the walk
//! of the parsed tree is bounded by `MAX_CALL_DEPTH`), and nothing it accepts calls a refused
//! function. The last is checked independently of the checker, on sqlparser's tokens: a refused
//! name (folded as PostgreSQL folds it) directly before `(` is a call PostgreSQL would make.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_fuzz::{POSTGRES_REFUSED, callables};
use schemascope_query::{SqlDialect, check_read_only};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else { return };
    if check_read_only(sql, callables(SqlDialect::Postgres)).is_err() {
        return;
    }
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() else { return };
    let significant: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    for pair in significant.windows(2) {
        if let (Token::Word(word), Token::LParen) = (pair[0], pair[1]) {
            let folded = if word.quote_style.is_some() { word.value.clone() } else { word.value.to_ascii_lowercase() };
            assert!(!POSTGRES_REFUSED.contains(&folded.as_str()), "accepted a call of {folded}: {sql:?}");
        }
    }
});
