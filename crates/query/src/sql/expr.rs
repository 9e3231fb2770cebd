//! Expression helpers over sqlparser's tree: the immediate children of an expression (without
//! matching each of its ~70 variants), aggregate detection, and the column references an
//! expression uses outside aggregates.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Function, FunctionArguments, Ident, Query, Visit, Visitor};

/// Aggregate functions of SQLite and PostgreSQL (lowercase). `min`/`max` are aggregates only
/// with one argument: with more, SQLite's are scalar.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "string_agg",
    "array_agg",
    "json_group_array",
    "json_group_object",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "bool_and",
    "bool_or",
    "every",
    "bit_and",
    "bit_or",
    "bit_xor",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "percentile_cont",
    "percentile_disc",
    "mode",
    "median",
    "corr",
    "covar_pop",
    "covar_samp",
    "regr_slope",
    "regr_intercept",
    "regr_count",
    "regr_r2",
    "xmlagg",
];

/// The immediate sub-expressions and subqueries of `expr` (clones: the visitor API does not lend
/// references that outlive a call).
pub(super) fn children(expr: &Expr) -> (Vec<Expr>, Vec<Query>) {
    let mut c = Children { depth: 0, query_depth: 0, exprs: Vec::new(), queries: Vec::new() };
    let _ = expr.visit(&mut c);
    (c.exprs, c.queries)
}

struct Children {
    depth: usize,
    query_depth: usize,
    exprs: Vec<Expr>,
    queries: Vec<Query>,
}

impl Visitor for Children {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if self.query_depth == 0 && self.depth == 1 {
            self.queries.push(query.clone());
        }
        self.query_depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<()> {
        self.query_depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.query_depth == 0 && self.depth == 1 {
            self.exprs.push(expr.clone());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

/// The number of arguments of a call.
fn arg_count(f: &Function) -> usize {
    match &f.args {
        FunctionArguments::List(list) => list.args.len(),
        FunctionArguments::Subquery(_) => 1,
        FunctionArguments::None => 0,
    }
}

/// The unqualified, lowercase name of a function.
pub(super) fn function_name(f: &Function) -> String {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.to_ascii_lowercase())
        .unwrap_or_default()
}

/// True when `f` is an aggregate call (not a window function).
pub(super) fn is_aggregate(f: &Function) -> bool {
    if f.over.is_some() {
        return false;
    }
    let name = function_name(f);
    if name == "min" || name == "max" {
        return arg_count(f) == 1;
    }
    AGGREGATES.contains(&name.as_str())
}

/// True when `expr` contains an aggregate call outside subqueries.
pub(super) fn contains_aggregate(expr: &Expr) -> bool {
    if let Expr::Function(f) = expr
        && is_aggregate(f)
    {
        return true;
    }
    children(expr).0.iter().any(contains_aggregate)
}

/// Column references (`Identifier`, `CompoundIdentifier`) in `expr` outside aggregate calls and
/// subqueries, as identifier lists.
pub(super) fn bare_columns(expr: &Expr, out: &mut Vec<Vec<Ident>>) {
    match expr {
        Expr::Identifier(id) => out.push(vec![id.clone()]),
        Expr::CompoundIdentifier(ids) => out.push(ids.clone()),
        Expr::Function(f) if is_aggregate(f) => {}
        _ => {
            for child in children(expr).0 {
                bare_columns(&child, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::SQLiteDialect;
    use sqlparser::parser::Parser;

    fn expr(text: &str) -> Expr {
        Parser::new(&SQLiteDialect {})
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .expect("expr")
    }

    #[test]
    fn children_are_immediate_and_subqueries_are_kept_whole() {
        let (exprs, queries) = children(&expr("a + (b * c)"));
        assert_eq!(exprs.iter().map(|e| e.to_string()).collect::<Vec<_>>(), vec!["a", "(b * c)"]);
        assert!(queries.is_empty());
        let (exprs, queries) = children(&expr("x IN (SELECT y FROM t WHERE z = 1)"));
        assert_eq!(exprs.len(), 1);
        assert_eq!(queries.len(), 1);
    }

    #[test]
    fn aggregates_are_found_outside_subqueries_only() {
        assert!(contains_aggregate(&expr("count(*) + 1")));
        assert!(!contains_aggregate(&expr("max(a, b)")));
        assert!(!contains_aggregate(&expr("sum(a) OVER ()")));
        assert!(!contains_aggregate(&expr("a > (SELECT avg(b) FROM t)")));
        let mut cols = Vec::new();
        bare_columns(&expr("T1.a + sum(b) - c"), &mut cols);
        assert_eq!(cols.len(), 2);
    }
}
