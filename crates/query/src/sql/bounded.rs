//! Parsing with a bound on work and depth. sqlparser backtracks through function arguments, so
//! a few dozen unclosed or deeply nested parentheses take it exponential time (found by fuzzing:
//! 245 bytes ran for minutes). Brackets are counted on the tokens first, in linear time, and SQL
//! that could not be a query we accept is refused before the parser sees it.
//!
//! Depth: sqlparser parses `1 + 1 + … + 1` in a loop but builds a tree one level per operator,
//! and every walk of that tree — its `Visit`, our checks, `Display`, `Clone`, even `Drop` —
//! recurses once per level: 3,000 terms overflowed the stack and aborted the server. So the
//! tokens give an upper bound of the depth first (operators and keywords in one expression,
//! [`MAX_EXPRESSION_TOKENS`]), which keeps what the parser builds within what a deep stack
//! holds; then the parsed tree's real depth is measured, visiting no further than
//! [`MAX_EXPRESSION_DEPTH`] levels, and deeper statements are refused. The callers
//! ([`crate::validate_sql`], [`crate::check_read_only`]) do all of it, the parse and the drop
//! included, on a thread with a large known stack ([`schemascope_core::deep_stack`]).

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Query, SetExpr, Statement, Visit, Visitor};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

/// How the message of a refusal for passing one of the bounds here begins: such SQL is refused
/// unread, whatever the engine would make of it.
pub const BEYOND_BOUNDS: &str = "beyond the checked bounds: ";

/// A refusal for passing a bound.
fn beyond(message: String) -> ParserError {
    ParserError::ParserError(format!("{BEYOND_BOUNDS}{message}"))
}

/// Deepest parenthesis nesting parsed. Real queries stay far below (Spider's gold queries nest 2
/// deep at most). A query that fails to parse inside nested calls costs the parser about twice
/// as much per level: 24 levels took 32 s, 16 take about a tenth of a second.
pub const MAX_NESTING: usize = 16;

/// The deepest expression tree accepted: operators, `CASE`, `NOT`, casts and calls nested in
/// each other (`a AND b AND c` is three levels, `1 + 1 + … + 1` one per `+`), or set operations
/// chained (`… UNION … UNION …`). Real queries stay far below: Spider's deepest gold query has 9.
pub const MAX_EXPRESSION_DEPTH: usize = 128;

/// An upper bound of the depth read from the tokens before parsing: operators and keywords in
/// one expression (between commas, at one parenthesis level, added up over the enclosing
/// levels). It overcounts (`SELECT … FROM … WHERE` count too), so it is far above
/// [`MAX_EXPRESSION_DEPTH`]; what it guarantees is that no tree the parser builds is deeper than
/// this, which the deep stack holds with room to spare.
pub const MAX_EXPRESSION_TOKENS: usize = 10_000;

/// The most queries one statement may hold (the statement, its CTEs and subqueries): real
/// queries hold a handful (Spider's gold queries at most 5), while PostgreSQL's planner takes
/// ever longer per CTE of a chain — 3,000 planned for minutes and past its own statement
/// timeout, cancel and terminate requests.
pub const MAX_QUERIES: usize = 100;

/// The parser's own recursion limit: above what [`MAX_EXPRESSION_DEPTH`] levels need (a level
/// can take a few of the parser's), below what the deep stack holds.
const PARSER_RECURSION_LIMIT: usize = 4 * MAX_EXPRESSION_DEPTH;

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
/// cost more than [`WORK_BUDGET`], or its expressions nest deeper than [`MAX_EXPRESSION_DEPTH`].
/// sqlparser's parser and the `Drop` of the statements recurse: run this, and drop what it
/// returns, on a deep stack, as the validators do.
pub fn parse_bounded(dialect: &dyn Dialect, sql: &str) -> Result<Vec<Statement>, ParserError> {
    parse_within(dialect, sql, WORK_BUDGET)
}

/// [`parse_bounded`] with another cost budget.
pub fn parse_within(
    dialect: &dyn Dialect,
    sql: &str,
    budget: u64,
) -> Result<Vec<Statement>, ParserError> {
    // ClickHouse's `GLOBAL IN` is checked as `IN` (see `global_in.rs`).
    let sql = if dialect.is::<sqlparser::dialect::ClickHouseDialect>() {
        super::global_in::blanked(dialect, sql)
    } else {
        std::borrow::Cow::Borrowed(sql)
    };
    let sql = sql.as_ref();
    // Text that does not tokenize fails the parser at once, with the tokenizer's message.
    if let Ok(tokens) = Tokenizer::new(dialect, sql).tokenize() {
        check_token_bounds(&tokens, budget)?;
    }
    // sqlparser's default recursion limit (50) refuses nesting the checks here accept, with a
    // message that does not say why; the deep stack holds this many levels with room to spare.
    let statements = Parser::new(dialect)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)?
        .parse_statements()?;
    for statement in &statements {
        if let ControlFlow::Break(message) = statement.visit(&mut Depth::default()) {
            return Err(beyond(message));
        }
    }
    Ok(statements)
}

/// The bounds checked on the tokens before any parser reads them (sqlparser, or PostgreSQL's
/// own grammar): parentheses nested at most [`MAX_NESTING`] deep within the cost `budget`, and
/// expressions within [`MAX_EXPRESSION_TOKENS`] and [`MAX_EXPRESSION_DEPTH`] (see
/// [`check_expression_tokens`]).
pub(super) fn check_token_bounds(tokens: &[Token], budget: u64) -> Result<(), ParserError> {
    check_brackets(tokens, budget)?;
    check_expression_tokens(tokens)
}

/// Refuses SQL whose tokens show nesting past the bounds: more than [`MAX_EXPRESSION_TOKENS`]
/// operators and keywords in one expression (what bounds the tree's depth), or nesting that
/// needs no parenthesis deeper than [`MAX_EXPRESSION_DEPTH`] — a run of prefix operators
/// (`NOT NOT …`, `- - …`), `CASE` inside `CASE`, `[` inside `[`. The parser reads those
/// recursively, and refuses past its recursion limit with a message that does not say why.
fn check_expression_tokens(tokens: &[Token]) -> Result<(), ParserError> {
    // Operators and keywords so far in the current expression at each open parenthesis level,
    // and their sum: the depth a tree could have at this token.
    let (mut enclosing, mut above, mut current) = (Vec::new(), 0usize, 0usize);
    // Operators and keywords in a row, open CASEs, open brackets.
    let (mut run, mut cases, mut brackets) = (0usize, 0usize, 0usize);
    for token in tokens {
        if matches!(token, Token::Whitespace(_)) {
            continue;
        }
        let counted = operator_or_keyword(token);
        match token {
            Token::LParen => {
                enclosing.push(current);
                above += current;
                current = 0;
            }
            Token::RParen => {
                current = enclosing.pop().unwrap_or(0);
                above = above.saturating_sub(current);
            }
            // A comma or a `;` starts a sibling, not a child.
            Token::Comma | Token::SemiColon => current = 0,
            _ if counted => {
                current += 1;
                if above + current > MAX_EXPRESSION_TOKENS {
                    return Err(beyond(format!(
                        "more than {MAX_EXPRESSION_TOKENS} operators and keywords in one expression; split the query, or use IN (…) instead of a chain of OR"
                    )));
                }
            }
            _ => {}
        }
        // Literals spelled as keywords end a run; CASE's words are counted by nesting instead.
        let prefix_like = counted
            && !matches!(token, Token::Word(word) if matches!(word.keyword, Keyword::TRUE | Keyword::FALSE | Keyword::NULL | Keyword::CASE | Keyword::WHEN | Keyword::THEN | Keyword::ELSE | Keyword::END));
        run = if prefix_like { run + 1 } else { 0 };
        match token {
            Token::Word(word) if word.quote_style.is_none() && word.keyword == Keyword::CASE => {
                cases += 1
            }
            Token::Word(word) if word.quote_style.is_none() && word.keyword == Keyword::END => {
                cases = cases.saturating_sub(1)
            }
            Token::LBracket => brackets += 1,
            Token::RBracket => brackets = brackets.saturating_sub(1),
            _ => {}
        }
        if run > MAX_EXPRESSION_DEPTH
            || cases > MAX_EXPRESSION_DEPTH
            || brackets > MAX_EXPRESSION_DEPTH
        {
            return Err(beyond(format!(
                "expressions nest deeper than {MAX_EXPRESSION_DEPTH} levels ({}); split the query",
                if cases > MAX_EXPRESSION_DEPTH {
                    "CASE inside CASE"
                } else if brackets > MAX_EXPRESSION_DEPTH {
                    "`[` inside `[`"
                } else {
                    "operators and keywords in a row"
                }
            )));
        }
    }
    Ok(())
}

/// Whether a token may make a level of an expression tree: an operator or a keyword, not a
/// name, a literal or punctuation.
fn operator_or_keyword(token: &Token) -> bool {
    match token {
        Token::Whitespace(_)
        | Token::LParen
        | Token::RParen
        | Token::Comma
        | Token::SemiColon
        | Token::Period
        | Token::EOF
        | Token::Number(..)
        | Token::Placeholder(_)
        | Token::SingleQuotedString(_) => false,
        Token::Word(word) => word.keyword != Keyword::NoKeyword && word.quote_style.is_none(),
        _ => true,
    }
}

/// Measures the depth of expressions and of set-operation chains while visiting, and stops the
/// visit past [`MAX_EXPRESSION_DEPTH`] — before it goes any deeper.
#[derive(Default)]
struct Depth {
    exprs: usize,
    /// Queries seen: the statement, its CTEs and subqueries.
    queries: usize,
}

impl Depth {
    fn too_deep(what: &str) -> ControlFlow<String> {
        ControlFlow::Break(format!(
            "{what} nest deeper than {MAX_EXPRESSION_DEPTH} levels; split the query, or use IN (…) instead of a long chain of OR or AND"
        ))
    }
}

impl Visitor for Depth {
    type Break = String;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        self.queries += 1;
        if self.queries > MAX_QUERIES {
            return ControlFlow::Break(format!(
                "the statement holds more than {MAX_QUERIES} queries (CTEs and subqueries); a database's planner takes ever longer on each — split it"
            ));
        }
        // `… UNION … UNION …` is a chain of set operations the visitor would descend without a
        // hook on the way: measure it here, without recursion, before the visit goes in.
        let mut pending = vec![(query.body.as_ref(), 1usize)];
        while let Some((body, depth)) = pending.pop() {
            if depth > MAX_EXPRESSION_DEPTH {
                return Self::too_deep("set operations (UNION, INTERSECT, EXCEPT)");
            }
            if let SetExpr::SetOperation { left, right, .. } = body {
                pending.push((left, depth + 1));
                pending.push((right, depth + 1));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<String> {
        self.exprs += 1;
        if self.exprs > MAX_EXPRESSION_DEPTH {
            Self::too_deep("expressions")
        } else {
            ControlFlow::Continue(())
        }
    }

    fn post_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<String> {
        self.exprs -= 1;
        ControlFlow::Continue(())
    }
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
                // Brackets one or two deep (a VALUES row, a call's arguments) cost the parser
                // no backtracking worth counting: 150,000 VALUES rows parse at once.
                if depth > 2 {
                    work = work.saturating_add(1 << depth.min(62));
                }
            }
            Token::RParen => {
                closed += 1;
                if depth == 0 {
                    return Err(ParserError::ParserError(format!(
                        "a `)` closes nothing (closing parenthesis {closed})"
                    )));
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(ParserError::ParserError(format!(
            "unbalanced parentheses: {opened} `(` but {closed} `)`"
        )));
    }
    if deepest > MAX_NESTING {
        return Err(beyond(format!(
            "parentheses nest {deepest} deep; at most {MAX_NESTING} are accepted"
        )));
    }
    if work > budget {
        return Err(beyond(format!(
            "too many parentheses nested three or more deep, side by side ({opened} parentheses in all), would take too long to parse; simplify the query or split it"
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
            assert!(
                error.contains("unbalanced parentheses") && error.contains("`(` but 4 `)`"),
                "{error}"
            );
            let error = parse_bounded(dialect, "SELECT 1) + (2").expect_err("refused").to_string();
            assert!(error.contains("closes nothing"), "{error}");
        }
    }

    #[test]
    fn nesting_is_bounded_and_brackets_in_strings_do_not_count() {
        let deep =
            format!("SELECT {}1{}", "(".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1));
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
        let shallow =
            format!("SELECT {} FROM t", vec!["coalesce(lower(a), (b + 1))"; 2_000].join(", "));
        assert!(parse_bounded(&SQLiteDialect {}, &shallow).is_ok());
    }
}
