//! What a parsed statement calls: every function name (in expressions and in FROM), every
//! operator (written, or implied by `IN`, `BETWEEN`, `LIKE`, `CASE x WHEN`, `IS DISTINCT FROM`),
//! every cast and typed-literal target type, and every form PostgreSQL does not have — collected
//! by one walk of sqlparser's tree, with an explicit bound on its depth.
//!
//! Each expression form is named in an exhaustive match, so a form added to sqlparser must be
//! classified here before this compiles: nothing is allowed by being overlooked.

use std::ops::ControlFlow;

use sqlparser::ast::{
    ArrayElemTypeDef, BinaryOperator, CastKind, DataType, Expr, Ident, JsonTableColumn, ObjectName,
    Query, SetExpr, TableFactor, UnaryOperator, Visit, Visitor, XmlTableColumnOption,
};

use crate::issue::Location;

/// Deepest nesting of expressions and subqueries walked. Real queries stay far below (a chain
/// of 200 `OR`s is 200 deep); deeper input is refused rather than walked, so the walk's own
/// recursion stays within any thread's stack.
pub const MAX_CALL_DEPTH: usize = 256;

/// What a collected name is used as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallKind {
    /// A function call in an expression.
    Function,
    /// A function in FROM (in SQLite, a virtual table such as `json_each`).
    TableFunction,
    /// An operator, by its symbol.
    Operator,
    /// The target type of a cast or a typed literal (its input and cast functions run).
    Type,
    /// A form PostgreSQL does not have (other dialects' syntax sqlparser also reads).
    Foreign,
}

/// One name as written: its text and whether it was double-quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NamePart {
    /// The text (between the quotes, if quoted).
    pub text: String,
    /// True for `"name"`.
    pub quoted: bool,
}

impl NamePart {
    fn bare(text: impl Into<String>) -> Self {
        Self { text: text.into(), quoted: false }
    }

    fn of(ident: &Ident) -> Self {
        Self { text: ident.value.clone(), quoted: ident.quote_style.is_some() }
    }
}

/// One thing the statement calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Call {
    /// What it is used as.
    pub kind: CallKind,
    /// The qualifying parts before the name (schema; more parts are refused by the judge).
    pub qualifiers: Vec<NamePart>,
    /// The name (an operator's symbol, a foreign form's description).
    pub name: NamePart,
    /// Where it is, when the parser recorded it.
    pub location: Option<Location>,
    /// The whole name as the statement wrote it, when it differs from the parts (which
    /// PostgreSQL's parser gives already folded).
    pub written: Option<String>,
}

/// Every call in `query`, or `Err` with the depth reached when the query nests deeper than
/// [`MAX_CALL_DEPTH`].
pub(super) fn collect(query: &Query) -> Result<Vec<Call>, usize> {
    let mut collector = Collector { calls: Vec::new(), depth: 0 };
    match query.visit(&mut collector) {
        ControlFlow::Continue(()) => Ok(collector.calls),
        ControlFlow::Break(()) => Err(collector.depth),
    }
}

struct Collector {
    calls: Vec<Call>,
    depth: usize,
}

fn location_of(span: sqlparser::tokenizer::Span) -> Option<Location> {
    Location::at(span.start.line, span.start.column)
}

/// PostgreSQL's operator characters: an operator name is made of these only.
fn is_operator_symbol(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| "+-*/<>=~!@#%^&|`?".contains(c))
}

impl Collector {
    fn push(
        &mut self,
        kind: CallKind,
        qualifiers: Vec<NamePart>,
        name: NamePart,
        location: Option<Location>,
    ) {
        self.calls.push(Call { kind, qualifiers, name, location, written: None });
    }

    fn foreign(&mut self, what: &str, location: Option<Location>) {
        self.push(CallKind::Foreign, Vec::new(), NamePart::bare(what), location);
    }

    fn operator(&mut self, symbol: &str, location: Option<Location>) {
        self.push(CallKind::Operator, Vec::new(), NamePart::bare(symbol), location);
    }

    fn function(&mut self, name: &ObjectName, kind: CallKind) {
        let mut parts = Vec::with_capacity(name.0.len());
        for part in &name.0 {
            match part.as_ident() {
                Some(ident) => parts.push(NamePart::of(ident)),
                None => return self.foreign(&format!("the function name {name}"), None),
            }
        }
        let Some(last) = parts.pop() else { return };
        let location = name.0.last().and_then(|p| p.as_ident()).and_then(|i| location_of(i.span));
        self.push(kind, parts, last, location);
    }

    fn binary(&mut self, op: &BinaryOperator, location: Option<Location>) {
        match op {
            // Logic and OVERLAPS are grammar (OVERLAPS becomes pg_catalog.overlaps).
            BinaryOperator::And | BinaryOperator::Or | BinaryOperator::Overlaps => {}
            BinaryOperator::PGCustomBinaryOperator(parts) => {
                let mut parts: Vec<NamePart> = parts.iter().map(NamePart::bare).collect();
                if let Some(symbol) = parts.pop() {
                    self.push(CallKind::Operator, parts, symbol, location);
                }
            }
            other => {
                let text = other.to_string();
                if is_operator_symbol(&text) {
                    self.operator(&text, location)
                } else {
                    self.foreign(&format!("the operator {text}"), location)
                }
            }
        }
    }

    fn unary(&mut self, op: &UnaryOperator, location: Option<Location>) {
        let text = op.to_string();
        if matches!(op, UnaryOperator::Not) {
        } else if is_operator_symbol(&text) {
            self.operator(&text, location);
        } else {
            self.foreign(&format!("the operator {text}"), location);
        }
    }

    fn data_type(&mut self, data_type: &DataType, location: Option<Location>) {
        match data_type {
            DataType::Custom(name, _) => {
                let mut parts: Vec<NamePart> =
                    name.0.iter().filter_map(|p| p.as_ident()).map(NamePart::of).collect();
                if let Some(last) = parts.pop() {
                    self.push(CallKind::Type, parts, last, location);
                }
            }
            DataType::Array(
                ArrayElemTypeDef::SquareBracket(inner, _)
                | ArrayElemTypeDef::AngleBracket(inner)
                | ArrayElemTypeDef::Parenthesis(inner),
            ) => self.data_type(inner, location),
            // A built-in type named by keywords (`integer`, `double precision`, `varchar(3)`):
            // PostgreSQL's grammar binds it to pg_catalog. Its name without modifiers.
            other => {
                let text = other.to_string().to_ascii_lowercase();
                let name = text.split('(').next().unwrap_or_default().trim().to_string();
                self.push(CallKind::Type, Vec::new(), NamePart::bare(name), location);
            }
        }
    }

    fn expr(&mut self, expr: &Expr) {
        // No location for operators, casts and other forms: sqlparser computes an
        // expression's span from its whole subtree, which is as deep as a chain of `+` is long.
        let at = || None;
        match expr {
            Expr::Function(f) => self.function(&f.name, CallKind::Function),
            Expr::BinaryOp { op, .. } => self.binary(op, at()),
            Expr::AnyOp { compare_op, .. } | Expr::AllOp { compare_op, .. } => {
                self.binary(compare_op, at())
            }
            Expr::UnaryOp { op, .. } => self.unary(op, at()),
            // `LIKE ANY (array)` is PostgreSQL's too: the same operator, applied per element.
            Expr::Like { negated, .. } => self.operator(if *negated { "!~~" } else { "~~" }, at()),
            Expr::ILike { negated, .. } => {
                self.operator(if *negated { "!~~*" } else { "~~*" }, at())
            }
            Expr::SimilarTo { negated, .. } => {
                self.operator(if *negated { "!~" } else { "~" }, at())
            }
            Expr::InList { negated, .. }
            | Expr::InSubquery { negated, .. }
            | Expr::InUnnest { negated, .. } => {
                self.operator(if *negated { "<>" } else { "=" }, at());
            }
            Expr::Between { negated, .. } => {
                self.operator(if *negated { "<" } else { ">=" }, at());
                self.operator(if *negated { ">" } else { "<=" }, at());
            }
            Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) => self.operator("=", at()),
            Expr::Case { operand: Some(_), .. } => self.operator("=", at()),
            Expr::Cast { kind, data_type, .. } => {
                if matches!(kind, CastKind::TryCast | CastKind::SafeCast) {
                    self.foreign(&format!("{kind:?}"), at());
                }
                self.data_type(data_type, at());
            }
            Expr::TypedString(typed) => self.data_type(&typed.data_type, at()),
            Expr::RLike { .. } => self.foreign("RLIKE/REGEXP", at()),
            Expr::Convert { .. } => self.foreign("CONVERT(…)", at()),
            Expr::Prefixed { .. } => self.foreign("a character set introducer", at()),
            Expr::JsonAccess { .. } => self.foreign("`:` JSON access", at()),
            Expr::Struct { .. } => self.foreign("STRUCT", at()),
            Expr::Named { .. } => self.foreign("named expressions", at()),
            Expr::Dictionary(_) | Expr::Map(_) => self.foreign("dictionary literals", at()),
            Expr::MatchAgainst { .. } => self.foreign("MATCH … AGAINST", at()),
            Expr::OuterJoin(_) => self.foreign("(+) outer joins", at()),
            Expr::Prior(_) => self.foreign("PRIOR", at()),
            Expr::Lambda(_) => self.foreign("lambdas", at()),
            Expr::MemberOf(_) => self.foreign("MEMBER OF", at()),
            // Syntax that calls nothing, or only built-in pg_catalog functions by a fixed
            // qualified name (EXTRACT, SUBSTRING, AT TIME ZONE, …); nested expressions are
            // walked on their own.
            Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::CompoundFieldAccess { .. }
            | Expr::IsFalse(_)
            | Expr::IsNotFalse(_)
            | Expr::IsTrue(_)
            | Expr::IsNotTrue(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsUnknown(_)
            | Expr::IsNotUnknown(_)
            | Expr::IsNormalized { .. }
            | Expr::AtTimeZone { .. }
            | Expr::Extract { .. }
            | Expr::Ceil { .. }
            | Expr::Floor { .. }
            | Expr::Position { .. }
            | Expr::Substring { .. }
            | Expr::Trim { .. }
            | Expr::Overlay { .. }
            | Expr::Collate { .. }
            | Expr::Nested(_)
            | Expr::Value(_)
            | Expr::Case { operand: None, .. }
            | Expr::Exists { .. }
            | Expr::Subquery(_)
            | Expr::GroupingSets(_)
            | Expr::Cube(_)
            | Expr::Rollup(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Interval(_)
            | Expr::Wildcard(_)
            | Expr::QualifiedWildcard(..) => {}
        }
    }

    fn table_factor(&mut self, factor: &TableFactor) {
        // As for expressions: a table factor's span walks its whole subtree.
        let at = || None;
        match factor {
            TableFactor::Table { name, args: Some(_), .. } | TableFactor::Function { name, .. } => {
                self.function(name, CallKind::TableFunction)
            }
            TableFactor::UNNEST { .. } => {
                self.push(CallKind::TableFunction, Vec::new(), NamePart::bare("unnest"), at())
            }
            TableFactor::XmlTable { columns, .. } => {
                for column in columns {
                    if let XmlTableColumnOption::NamedInfo { r#type, .. } = &column.option {
                        self.data_type(r#type, at());
                    }
                }
            }
            TableFactor::JsonTable { columns, .. } => {
                for column in columns {
                    if let JsonTableColumn::Named(named) = column {
                        self.data_type(&named.r#type, at());
                    }
                }
            }
            TableFactor::Table { args: None, .. }
            | TableFactor::Derived { .. }
            | TableFactor::NestedJoin { .. } => {}
            TableFactor::TableFunction { .. } => self.foreign("TABLE(…) in FROM", at()),
            TableFactor::OpenJsonTable { .. } => self.foreign("OPENJSON", at()),
            TableFactor::Pivot { .. } | TableFactor::Unpivot { .. } => {
                self.foreign("PIVOT/UNPIVOT", at())
            }
            TableFactor::MatchRecognize { .. } => self.foreign("MATCH_RECOGNIZE", at()),
            TableFactor::SemanticView { .. } => self.foreign("SEMANTIC_VIEW", at()),
        }
    }

    fn enter(&mut self) -> ControlFlow<()> {
        self.depth += 1;
        if self.depth > MAX_CALL_DEPTH { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    }

    fn leave(&mut self) -> ControlFlow<()> {
        self.depth = self.depth.saturating_sub(1);
        ControlFlow::Continue(())
    }
}

/// How deep set operations nest in `body`, counted without recursion.
fn set_operation_depth(body: &SetExpr) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(body, 0usize)];
    while let Some((body, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        if let SetExpr::SetOperation { left, right, .. } = body {
            pending.push((left, depth + 1));
            pending.push((right, depth + 1));
        }
    }
    deepest
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        self.enter()?;
        // A chain of UNIONs is parsed without recursion into a tree as deep as it is long, and
        // no hook sees its levels before the walk descends them: measured here, without
        // recursion, before it does.
        if self.depth + set_operation_depth(&query.body) > MAX_CALL_DEPTH {
            self.depth += set_operation_depth(&query.body);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<()> {
        self.leave()
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        self.enter()?;
        self.expr(expr);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<()> {
        self.leave()
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        self.table_factor(factor);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    use super::*;

    fn calls(sql: &str) -> Vec<(CallKind, String)> {
        let statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
        let Some(Statement::Query(query)) = statements.first() else { panic!("not a query") };
        let mut found: Vec<(CallKind, String)> = collect(query)
            .expect("shallow")
            .into_iter()
            .map(|c| {
                let mut parts: Vec<String> = c.qualifiers.iter().map(|p| p.text.clone()).collect();
                parts.push(c.name.text);
                (c.kind, parts.join("."))
            })
            .collect();
        found.sort_by(|a, b| a.1.cmp(&b.1));
        found
    }

    #[test]
    fn functions_are_found_everywhere_a_query_can_hold_them() {
        use CallKind::{Function as F, TableFunction as T};
        let sql = "WITH c AS (SELECT f1(x) FROM t) SELECT f2(a) FROM c, LATERAL f3(c.a) AS l, pg_catalog.f4('x') AS r
                   WHERE EXISTS (SELECT f5(1)) ORDER BY f6(a) LIMIT (SELECT f7())";
        let found = calls(sql);
        for name in ["f1", "f2", "f5", "f6", "f7"] {
            assert!(found.contains(&(F, name.to_string())), "{name} in {found:?}");
        }
        for name in ["f3", "pg_catalog.f4"] {
            assert!(found.contains(&(T, name.to_string())), "{name} in {found:?}");
        }
    }

    #[test]
    fn operators_casts_and_implied_comparisons_are_found() {
        let found = calls(
            "SELECT a OPERATOR(myschema.+) b, c OPERATOR(s.#@#) d, e #@# f, x::mytype, 'v'::public.t2[], a IN (1), b BETWEEN 1 AND 2, c LIKE 'x', -d FROM t",
        );
        let want = [
            (CallKind::Operator, "myschema.+"),
            (CallKind::Operator, "s.#@#"),
            (CallKind::Operator, "#@#"),
            (CallKind::Type, "mytype"),
            (CallKind::Type, "public.t2"),
            (CallKind::Operator, "="),
            (CallKind::Operator, ">="),
            (CallKind::Operator, "<="),
            (CallKind::Operator, "~~"),
            (CallKind::Operator, "-"),
        ];
        for (kind, name) in want {
            assert!(found.contains(&(kind, name.to_string())), "{name} in {found:?}");
        }
    }

    #[test]
    fn nesting_past_the_bound_is_reported_not_walked() {
        // A chain of `+` is parsed without recursion, into a tree as deep as the chain is long.
        let deep = format!("SELECT 1{}", "+1".repeat(MAX_CALL_DEPTH + 10));
        let statements = Parser::parse_sql(&PostgreSqlDialect {}, &deep).expect("parses");
        let Some(Statement::Query(query)) = statements.first() else { panic!("not a query") };
        assert_eq!(collect(query).expect_err("too deep"), MAX_CALL_DEPTH + 1);
        let unions = format!("SELECT 1{}", " UNION SELECT 1".repeat(MAX_CALL_DEPTH + 10));
        let statements = Parser::parse_sql(&PostgreSqlDialect {}, &unions).expect("parses");
        let Some(Statement::Query(query)) = statements.first() else { panic!("not a query") };
        assert!(collect(query).is_err(), "a long UNION chain is refused before it is walked");
    }
}
