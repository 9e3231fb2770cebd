//! Parsing with a bound on work. sqlparser backtracks through function arguments, so a few
//! dozen unclosed or deeply nested parentheses take it exponential time (found by fuzzing: 245
//! bytes ran for minutes). Brackets are counted on the tokens first, in linear time, and SQL
//! that could not be a query we accept is refused before the parser sees it.

use sqlparser::ast::Statement;
use sqlparser::dialect::Dialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

/// Deepest parenthesis nesting parsed. Real queries stay far below (Spider's gold queries nest 2
/// deep at most). A query that fails to parse inside nested calls costs the parser about twice
/// as much per level: 24 levels took 32 s, 16 take about a tenth of a second.
pub const MAX_NESTING: usize = 16;

/// The parsing cost allowed, in units where a bracket opened at depth `d` costs `2^d`: one chain
/// nested [`MAX_NESTING`] deep fits (about 0.1 s), many such chains side by side do not, and
/// thousands of shallow brackets cost next to nothing.
pub const WORK_BUDGET: u64 = 1 << (MAX_NESTING + 1);

/// The parsing cost allowed where the database layer checks what it runs: its own profiling
/// SQL is wide (about 215 units per column: 344,000 for a table of 1,600 columns, PostgreSQL's
/// most), and a statement that reached it without the validator's check takes at most about
/// 1.6 s to refuse.
pub const EXECUTION_WORK_BUDGET: u64 = 1 << (MAX_NESTING + 5);

/// Parses `sql` unless its brackets are unbalanced, nested deeper than [`MAX_NESTING`], or would
/// cost more than [`WORK_BUDGET`].
pub fn parse_bounded(dialect: &dyn Dialect, sql: &str) -> Result<Vec<Statement>, ParserError> {
    parse_within(dialect, sql, WORK_BUDGET)
}

/// [`parse_bounded`] with another cost budget.
pub fn parse_within(dialect: &dyn Dialect, sql: &str, budget: u64) -> Result<Vec<Statement>, ParserError> {
    // Text that does not tokenize fails the parser at once, with the tokenizer's message.
    if let Ok(tokens) = Tokenizer::new(dialect, sql).tokenize() {
        check_brackets(&tokens, budget)?;
    }
    Parser::parse_sql(dialect, sql)
}

fn check_brackets(tokens: &[Token], budget: u64) -> Result<(), ParserError> {
    let (mut depth, mut deepest, mut opened, mut closed) = (0usize, 0usize, 0usize, 0usize);
    let mut work = 0u64;
    for token in tokens {
        match token {
            Token::LParen => {
                opened += 1;
                depth += 1;
                deepest = deepest.max(depth);
                work = work.saturating_add(1 << depth.min(62));
            }
            Token::RParen => {
                closed += 1;
                if depth == 0 {
                    return Err(ParserError::ParserError(format!("a `)` closes nothing (closing parenthesis {closed})")));
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(ParserError::ParserError(format!("unbalanced parentheses: {opened} `(` but {closed} `)`")));
    }
    if deepest > MAX_NESTING {
        return Err(ParserError::ParserError(format!("parentheses nest {deepest} deep; at most {MAX_NESTING} are accepted")));
    }
    if work > budget {
        return Err(ParserError::ParserError(format!(
            "{opened} parentheses, many nested deep, would take too long to parse; simplify the query or split it"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::{PostgreSqlDialect, SQLiteDialect};

    use super::*;

    /// The fuzzer's input: minutes in sqlparser, refused here before parsing.
    const SLOW: &str = "select max(caftma(fcay) ,tmax(capax(cap(c&SEL(cqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq1qqqqqqqqqqqa(fqqqqa(fcay) ,tmax(capax(cap(cqqqqqaft%max(capaqqqqqqqqqqqa(fqqqqa(fcay) ,tmax(capax(ca(fqqqqa(fcay) ,tmax(capax(cap(cqqqqqaft%max(caap(cqqqqqaft%max(capa";

    #[test]
    fn unbalanced_parentheses_are_refused_before_parsing() {
        for dialect in [&SQLiteDialect {} as &dyn Dialect, &PostgreSqlDialect {}] {
            let error = parse_bounded(dialect, SLOW).expect_err("refused").to_string();
            assert!(error.contains("unbalanced parentheses") && error.contains("`(` but 4 `)`"), "{error}");
            let error = parse_bounded(dialect, "SELECT 1) + (2").expect_err("refused").to_string();
            assert!(error.contains("closes nothing"), "{error}");
        }
    }

    #[test]
    fn nesting_is_bounded_and_brackets_in_strings_do_not_count() {
        let deep = format!("SELECT {}1{}", "(".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1));
        let error = parse_bounded(&SQLiteDialect {}, &deep).expect_err("refused").to_string();
        assert!(error.contains(&format!("nest {} deep", MAX_NESTING + 1)), "{error}");
        let fine = format!("SELECT {}1{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(parse_bounded(&SQLiteDialect {}, &fine).is_ok());
        assert!(parse_bounded(&SQLiteDialect {}, "SELECT '(((' AS a, \"x)\" FROM t -- )").is_ok());
    }

    #[test]
    fn many_deep_chains_are_refused_and_many_shallow_brackets_are_not() {
        let chain = format!("{}1{}", "abs(".repeat(MAX_NESTING - 1), ")".repeat(MAX_NESTING - 1));
        let one = format!("SELECT {chain}");
        assert!(parse_bounded(&PostgreSqlDialect {}, &one).is_ok());
        let three = format!("SELECT {chain}, {chain}, {chain}");
        let error = parse_bounded(&PostgreSqlDialect {}, &three).expect_err("refused").to_string();
        assert!(error.contains("would take too long to parse"), "{error}");
        let shallow = format!("SELECT {} FROM t", vec!["coalesce(lower(a), (b + 1))"; 2_000].join(", "));
        assert!(parse_bounded(&SQLiteDialect {}, &shallow).is_ok());
    }
}
