//! The semantic walk of a query: every relation and column resolved against the catalog (with
//! did-you-mean), aggregation rules, literals checked against stored values, joins checked
//! against foreign keys, and the tables scanned for the row-limit rule.
//!
//! **No false rejections.** What the walk cannot be sure of is a warning or nothing: relations
//! whose columns are unknown (table functions, unnamed expressions of derived tables, system
//! catalogs) accept any column, and SQLite's permissive rules (bare columns beside aggregates,
//! double-quoted strings, output aliases in WHERE) are warnings there and errors only where
//! PostgreSQL rejects them.

use schemascope_core::suggest::closest;
use schemascope_core::{Catalog, TableInfo};
use sqlparser::ast::{
    BinaryOperator, Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, OrderBy, OrderByKind,
    Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor,
    TableWithJoins, Value,
};

use super::column_fixes;
use super::expr::{bare_columns, children, contains_aggregate, function_name, is_aggregate};
use super::question::Question;
use super::scope::{ColumnRef, Columns, Resolution, Scope, Source, last_name};
use crate::issue::{IssueKind, Issues, Location, QueryIssue, TableColumn};
use crate::types::ColumnType;
use crate::values::{KnownValues, check_number, check_string};
use crate::{DialectRules, SqlDialect};

/// Implicit columns every SQLite table (rowid) or PostgreSQL table (system columns) has.
const IMPLICIT_COLUMNS: &[&str] =
    &["rowid", "oid", "_rowid_", "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"];

/// Where an expression is, which decides what it may contain.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    /// Which clause, for messages.
    clause: &'static str,
    /// SELECT-list aliases resolve here.
    aliases: bool,
    /// Aggregates are allowed here.
    aggregates: bool,
    /// Inside an aggregate's arguments.
    in_aggregate: bool,
}

/// The closest spellings of a wrong column name among the relations in scope.
struct Close {
    /// Written as the query would write them, closest first.
    names: Vec<String>,
    /// Whether the closest is a derived table's or CTE's column, or a SELECT alias, which the
    /// catalog-wide search does not know.
    derived: bool,
}

/// The walk's state.
pub(super) struct Checker<'a> {
    pub catalog: &'a Catalog,
    pub values: &'a dyn KnownValues,
    pub dialect: SqlDialect,
    pub issues: Issues,
    /// Base tables read, with their row counts when known.
    pub scanned: Vec<(String, Option<u64>)>,
    /// Every table column a name resolved to, in order of appearance.
    pub referenced: Vec<TableColumn>,
    /// The question the query answers, to rank suggestions by meaning.
    pub question: Question,
    /// The SQL text, to read a name that needs quotes where it was written without.
    pub text: &'a str,
    /// `NOT`s around the expression being checked.
    negations: usize,
    /// Whether the children of the expression being checked are top-level conjuncts.
    conjunct: bool,
    /// Whether the expression being checked is a top-level conjunct of its clause.
    node_conjunct: bool,
    /// Queries and set operations around the one being checked.
    nesting: usize,
    /// Whether the outermost query was entered.
    entered: bool,
    /// Wrong names searched for in the whole catalog so far (see
    /// [`column_fixes::MAX_SEARCHED_NAMES`]).
    searched: usize,
}

fn at(id: &Ident) -> Option<Location> {
    Location::at(id.span.start.line, id.span.start.column)
}

impl<'a> Checker<'a> {
    /// A walk over `catalog`.
    pub(super) fn new(
        catalog: &'a Catalog,
        values: &'a dyn KnownValues,
        dialect: SqlDialect,
    ) -> Self {
        Self {
            catalog,
            values,
            dialect,
            issues: Issues::default(),
            scanned: Vec::new(),
            referenced: Vec::new(),
            question: Question::default(),
            text: "",
            negations: 0,
            conjunct: false,
            node_conjunct: false,
            nesting: 0,
            entered: false,
            searched: 0,
        }
    }

    fn rules(&self) -> &'static dyn DialectRules {
        self.dialect.rules()
    }

    /// Checks a query; returns its output columns.
    pub(super) fn query(&mut self, q: &Query, parent: Option<&Scope<'_>>) -> Columns {
        if self.entered {
            return self.nested_query(q, parent);
        }
        self.entered = true;
        self.query_here(q, parent)
    }

    /// [`Checker::query`] at the current level.
    fn query_here(&mut self, q: &Query, parent: Option<&Scope<'_>>) -> Columns {
        let mut with_scope = Scope::inside(parent);
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let alias_columns: Vec<String> =
                    cte.alias.columns.iter().map(|c| c.name.value.clone()).collect();
                if with.recursive {
                    let early = if alias_columns.is_empty() {
                        Columns::open()
                    } else {
                        Columns::known(alias_columns.clone())
                    };
                    with_scope.ctes.push((cte.alias.name.value.clone(), early));
                }
                let columns = self.query(&cte.query, Some(&with_scope));
                let columns =
                    if alias_columns.is_empty() { columns } else { Columns::known(alias_columns) };
                // Pushed, not replaced: the latest entry of a name wins (`Scope::cte` looks from
                // the end), and removing the earlier one made 40,000 CTEs take 20 s.
                with_scope.ctes.push((cte.alias.name.value.clone(), columns));
            }
        }
        let scope = if q.with.is_some() { Some(&with_scope) } else { parent };
        self.set_expr(&q.body, scope, q.order_by.as_ref())
    }

    /// Checks a query one level deeper (a CTE, subquery or derived table): how its rows are
    /// used — under `NOT EXISTS`, `NOT IN`, `EXCEPT` — is not known inside it.
    fn nested_query(&mut self, q: &Query, parent: Option<&Scope<'_>>) -> Columns {
        let conjunct = std::mem::replace(&mut self.conjunct, false);
        self.nesting += 1;
        let columns = self.query_here(q, parent);
        self.nesting -= 1;
        self.conjunct = conjunct;
        columns
    }

    fn set_expr(
        &mut self,
        body: &SetExpr,
        parent: Option<&Scope<'_>>,
        order_by: Option<&OrderBy>,
    ) -> Columns {
        match body {
            SetExpr::Select(select) => self.select(select, parent, order_by),
            SetExpr::Query(q) => {
                let columns = self.query(q, parent);
                self.compound_order_by(order_by, &columns, parent);
                columns
            }
            SetExpr::SetOperation { left, right, .. } => {
                // Either side's rows may be taken away (`EXCEPT`): no filter is sure to matter.
                self.nesting += 1;
                let columns = self.set_expr(left, parent, None);
                self.set_expr(right, parent, None);
                self.nesting -= 1;
                self.compound_order_by(order_by, &columns, parent);
                columns
            }
            SetExpr::Values(values) => {
                let scope = Scope::inside(parent);
                let ctx = Ctx {
                    clause: "VALUES",
                    aliases: false,
                    aggregates: false,
                    in_aggregate: false,
                };
                for row in &values.rows {
                    for e in row {
                        self.expr(e, &scope, ctx);
                    }
                }
                Columns::open()
            }
            SetExpr::Table(t) => {
                match t.table_name.as_deref().and_then(|n| self.catalog.table(n)) {
                    Some(info) => {
                        Columns::known(info.columns.iter().map(|c| c.name.clone()).collect())
                    }
                    None => Columns::open(),
                }
            }
            // Writes are refused by the safety walk.
            _ => Columns::open(),
        }
    }

    /// ORDER BY of a compound query names output columns (or ordinals); unknown names are only
    /// warned about, since dialects differ in what they accept here.
    fn compound_order_by(
        &mut self,
        order_by: Option<&OrderBy>,
        columns: &Columns,
        parent: Option<&Scope<'_>>,
    ) {
        let Some(OrderBy { kind: OrderByKind::Expressions(items), .. }) = order_by else { return };
        let mut scope = Scope::inside(parent);
        scope.sources.push(Source {
            name: String::new(),
            table: None,
            aliased: false,
            columns: columns.clone(),
        });
        let ctx = Ctx { clause: "ORDER BY", aliases: true, aggregates: true, in_aggregate: false };
        let mut probe = Checker::new(self.catalog, self.values, self.dialect);
        for item in items {
            probe.expr(&item.expr, &scope, ctx);
        }
        for mut issue in probe.issues.errors.into_iter().chain(probe.issues.warnings) {
            issue.message = format!(
                "{} (ORDER BY of a compound query should name its output columns)",
                issue.message
            );
            self.issues.warn(issue);
        }
    }

    fn select(
        &mut self,
        s: &Select,
        parent: Option<&Scope<'_>>,
        order_by: Option<&OrderBy>,
    ) -> Columns {
        let mut scope = Scope::inside(parent);
        let mut on: Vec<&Expr> = Vec::new();
        for twj in &s.from {
            self.relation_item(twj, &mut scope, parent, &mut on);
        }
        // Aliases first, so ORDER BY/GROUP BY/HAVING can name them.
        for item in &s.projection {
            if let SelectItem::ExprWithAlias { alias, .. } = item {
                scope.aliases.push(alias.value.clone());
            }
        }
        let plain = Ctx { clause: "ON", aliases: false, aggregates: false, in_aggregate: false };
        for e in &on {
            self.expr(e, &scope, plain);
            self.join_keys(e, &scope);
        }
        let mut output = Columns::default();
        for item in &s.projection {
            let ctx =
                Ctx { clause: "SELECT", aliases: false, aggregates: true, in_aggregate: false };
            match item {
                SelectItem::UnnamedExpr(e) => {
                    self.expr(e, &scope, ctx);
                    match e {
                        Expr::Identifier(id) => output.names.push(id.value.clone()),
                        Expr::CompoundIdentifier(ids) => {
                            output.names.push(last_name(ids).to_string())
                        }
                        other => {
                            output.names.push(other.to_string());
                            output.open = true;
                        }
                    }
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    self.expr(expr, &scope, ctx);
                    output.names.push(alias.value.clone());
                }
                SelectItem::Wildcard(_) => {
                    for src in &scope.sources {
                        output.names.extend(src.columns.names.iter().cloned());
                        output.open |= src.columns.open;
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    let qualifier = match kind {
                        SelectItemQualifiedWildcardKind::ObjectName(name) => {
                            name.0.last().and_then(|p| p.as_ident()).cloned()
                        }
                        SelectItemQualifiedWildcardKind::Expr(_) => None,
                    };
                    match qualifier
                        .as_ref()
                        .and_then(|q| scope.source(&q.value).map(|src| (q, src)))
                    {
                        Some((_, src)) => {
                            output.names.extend(src.columns.names.iter().cloned());
                            output.open |= src.columns.open;
                        }
                        None => {
                            output.open = true;
                            if let Some(q) = qualifier {
                                self.unknown_qualifier(&q, &scope);
                            }
                        }
                    }
                }
            }
        }
        if let Some(selection) = &s.selection {
            self.conjunct = true;
            self.expr(
                selection,
                &scope,
                Ctx { clause: "WHERE", aliases: true, aggregates: false, in_aggregate: false },
            );
            self.conjunct = false;
        }
        let group_exprs: &[Expr] = match &s.group_by {
            GroupByExpr::Expressions(exprs, _) => exprs,
            GroupByExpr::All(_) => &[],
        };
        for e in group_exprs {
            self.expr(
                e,
                &scope,
                Ctx { clause: "GROUP BY", aliases: true, aggregates: false, in_aggregate: false },
            );
        }
        if let Some(having) = &s.having {
            self.conjunct = true;
            self.expr(
                having,
                &scope,
                Ctx { clause: "HAVING", aliases: true, aggregates: true, in_aggregate: false },
            );
            self.conjunct = false;
        }
        if let Some(OrderBy { kind: OrderByKind::Expressions(items), .. }) = order_by {
            for item in items {
                self.expr(
                    &item.expr,
                    &scope,
                    Ctx {
                        clause: "ORDER BY",
                        aliases: true,
                        aggregates: true,
                        in_aggregate: false,
                    },
                );
            }
        }
        let aggregated = !group_exprs.is_empty()
            || s.projection.iter().any(|item| match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    contains_aggregate(e)
                }
                _ => false,
            })
            || s.having.as_ref().is_some_and(contains_aggregate);
        if aggregated {
            self.grouping(s, group_exprs, &scope);
        }
        output
    }

    /// Selected columns neither grouped nor aggregated: an error in PostgreSQL, a warning in
    /// SQLite (which returns a value from an arbitrary row of the group).
    fn grouping(&mut self, s: &Select, group_exprs: &[Expr], scope: &Scope<'_>) {
        let mut grouped_texts: Vec<String> = Vec::new();
        let mut grouped: Vec<ColumnRef> = Vec::new();
        for e in group_exprs {
            let target = match e {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| i.checked_sub(1))
                        .and_then(|i| s.projection.get(i))
                        .and_then(item_expr),
                    _ => None,
                },
                Expr::Identifier(id)
                    if matches!(scope.resolve(&id.value, false), Resolution::Unknown) =>
                {
                    s.projection.iter().find_map(|item| match item {
                        SelectItem::ExprWithAlias { expr, alias }
                            if alias.value.eq_ignore_ascii_case(&id.value) =>
                        {
                            Some(expr)
                        }
                        _ => None,
                    })
                }
                _ => None,
            };
            let e = target.unwrap_or(e);
            grouped_texts.push(e.to_string().to_ascii_lowercase());
            let mut cols = Vec::new();
            bare_columns(e, &mut cols);
            for ids in cols {
                if let Resolution::Column(c) = resolve_ids(scope, &ids) {
                    grouped.push(c);
                }
            }
        }
        let is_grouped = |c: &ColumnRef| {
            c.depth > 0
                || grouped.iter().any(|g| g.depth == 0 && g.source == c.source && g.column.eq_ignore_ascii_case(&c.column))
                // Grouping by a table's primary key determines its other columns (PostgreSQL).
                || c.table.as_deref().and_then(|t| self.catalog.table(t)).is_some_and(|t: &TableInfo| {
                    !t.primary_key.is_empty()
                        && t.primary_key.iter().all(|k| grouped.iter().any(|g| g.depth == 0 && g.source == c.source && g.column.eq_ignore_ascii_case(k)))
                })
        };
        for item in &s.projection {
            let Some(e) = item_expr(item) else { continue };
            if grouped_texts.contains(&e.to_string().to_ascii_lowercase()) {
                continue;
            }
            let mut cols = Vec::new();
            bare_columns(e, &mut cols);
            for ids in cols {
                let Resolution::Column(c) = resolve_ids(scope, &ids) else { continue };
                if is_grouped(&c) {
                    continue;
                }
                let name = ids.iter().map(|i| i.value.as_str()).collect::<Vec<_>>().join(".");
                let issue = QueryIssue::new(
                    IssueKind::GroupBy,
                    format!(
                        "{name} is selected but neither aggregated nor in GROUP BY{}",
                        if self.rules().lenient() {
                            " (SQLite returns it from an arbitrary row of each group)"
                        } else {
                            ""
                        }
                    ),
                )
                .at(ids.last().and_then(at))
                .suggest(format!(
                    "add {name} to GROUP BY or wrap it in an aggregate such as MAX({name})"
                ));
                if self.rules().lenient() {
                    self.issues.warn(issue)
                } else {
                    self.issues.error(issue)
                }
            }
        }
    }

    fn relation_item<'s>(
        &mut self,
        twj: &'s TableWithJoins,
        scope: &mut Scope<'_>,
        parent: Option<&Scope<'_>>,
        on: &mut Vec<&'s Expr>,
    ) {
        self.factor(&twj.relation, scope, parent, on);
        for join in &twj.joins {
            self.factor(&join.relation, scope, parent, on);
            let constraint = match &join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c)
                | JoinOperator::Semi(c)
                | JoinOperator::LeftSemi(c)
                | JoinOperator::RightSemi(c)
                | JoinOperator::Anti(c)
                | JoinOperator::LeftAnti(c)
                | JoinOperator::RightAnti(c)
                | JoinOperator::StraightJoin(c) => Some(c),
                JoinOperator::AsOf { constraint, .. } => Some(constraint),
                _ => None,
            };
            match constraint {
                Some(JoinConstraint::On(e)) => on.push(e),
                Some(JoinConstraint::Using(names)) => {
                    scope.merged.extend(names.iter().filter_map(|n| {
                        n.0.last().and_then(|p| p.as_ident()).map(|i| i.value.clone())
                    }));
                }
                Some(JoinConstraint::Natural) => scope.natural = true,
                _ => {}
            }
        }
    }

    fn factor<'s>(
        &mut self,
        factor: &'s TableFactor,
        scope: &mut Scope<'_>,
        parent: Option<&Scope<'_>>,
        on: &mut Vec<&'s Expr>,
    ) {
        match factor {
            TableFactor::Table { name, alias, args, .. } => {
                let ids: Vec<&Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
                let Some(last) = ids.last().copied() else { return };
                if args.is_some() {
                    scope.sources.push(open_source(alias, &last.value));
                    return;
                }
                let full = ids.iter().map(|i| i.value.as_str()).collect::<Vec<_>>().join(".");
                let cte = if ids.len() == 1 { scope.cte(&last.value).cloned() } else { None };
                let (table, columns) = if let Some(columns) = cte {
                    (None, columns)
                } else if let Some(info) =
                    self.catalog.table(&full).or_else(|| self.catalog.table(&last.value))
                {
                    self.folded_name(
                        last,
                        info.name.rsplit('.').next().unwrap_or(&info.name),
                        IssueKind::UnknownTable,
                    );
                    let rows = self.values.row_count(&info.name).or(info.row_count);
                    self.scanned.push((info.name.clone(), rows));
                    (
                        Some(info.name.clone()),
                        Columns::known(info.columns.iter().map(|c| c.name.clone()).collect()),
                    )
                } else if is_system_relation(&ids) {
                    (None, Columns::open())
                } else {
                    let mut candidates: Vec<String> =
                        self.catalog.table_names().into_iter().map(str::to_string).collect();
                    candidates.extend(scope.cte_names());
                    let close: Vec<String> =
                        closest(&last.value, candidates.iter().map(String::as_str), 3)
                            .iter()
                            .map(|t| column_fixes::quote_table(t, self.dialect))
                            .collect();
                    let hint = if close.is_empty() {
                        String::new()
                    } else {
                        format!("; did you mean {}?", close.join(", "))
                    };
                    self.issues.error(
                        QueryIssue::new(
                            IssueKind::UnknownTable,
                            format!("no table called {full}{hint}"),
                        )
                        .at(at(last))
                        .suggest_first(&close),
                    );
                    (None, Columns::open())
                };
                let mut src = Source { name: last.value.clone(), table, aliased: false, columns };
                apply_alias(&mut src, alias);
                scope.sources.push(src);
            }
            TableFactor::Derived { lateral, subquery, alias } => {
                let columns = if *lateral {
                    let mut sibling = Scope::inside(parent);
                    sibling.sources = scope.sources.clone();
                    self.query(subquery, Some(&sibling))
                } else {
                    self.query(subquery, parent)
                };
                let mut src = Source { name: String::new(), table: None, aliased: false, columns };
                apply_alias(&mut src, alias);
                scope.sources.push(src);
            }
            TableFactor::NestedJoin { table_with_joins, alias } => {
                self.relation_item(table_with_joins, scope, parent, on);
                if let Some(a) = alias {
                    scope.sources.push(Source {
                        name: a.name.value.clone(),
                        table: None,
                        aliased: true,
                        columns: Columns::open(),
                    });
                }
            }
            TableFactor::Function { name, alias, .. } => {
                scope.sources.push(open_source(
                    alias,
                    name.0.last().and_then(|p| p.as_ident()).map_or("", |i| i.value.as_str()),
                ));
            }
            TableFactor::TableFunction { alias, .. }
            | TableFactor::UNNEST { alias, .. }
            | TableFactor::JsonTable { alias, .. } => {
                scope.sources.push(open_source(alias, ""));
            }
            _ => scope.sources.push(Source {
                name: String::new(),
                table: None,
                aliased: false,
                columns: Columns::open(),
            }),
        }
    }

    fn unknown_qualifier(&mut self, q: &Ident, scope: &Scope<'_>) {
        let sources = scope.visible_sources();
        let close = closest(&q.value, sources.iter().map(String::as_str), 3);
        let in_catalog = self.catalog.table(&q.value).is_some();
        let message = if in_catalog {
            format!(
                "table {} is not in the FROM clause (in scope: {})",
                q.value,
                sources.join(", ")
            )
        } else {
            format!(
                "no table or alias called {} in scope (in scope: {})",
                q.value,
                sources.join(", ")
            )
        };
        self.issues.error(
            QueryIssue::new(IssueKind::UnknownTable, message).at(at(q)).suggest_first(&close),
        );
    }

    /// Checks one expression in `ctx`.
    fn expr(&mut self, e: &Expr, scope: &Scope<'_>, ctx: Ctx) {
        // `e` is a top-level conjunct of its clause when its parent is one and joins it by
        // AND (or parentheses): only then does a comparison in it decide the result alone.
        let outer = self.conjunct;
        self.node_conjunct = outer;
        self.conjunct =
            outer && matches!(e, Expr::BinaryOp { op: BinaryOperator::And, .. } | Expr::Nested(_));
        self.expr_here(e, scope, ctx);
        self.conjunct = outer;
    }

    /// [`Checker::expr`] for the node itself.
    fn expr_here(&mut self, e: &Expr, scope: &Scope<'_>, ctx: Ctx) {
        match e {
            Expr::Identifier(id) => self.identifier(id, scope, ctx),
            Expr::CompoundIdentifier(ids) => self.compound(ids, scope),
            Expr::Function(f) => {
                let aggregate = is_aggregate(f);
                let mut inner = ctx;
                if aggregate {
                    let name = function_name(f);
                    if ctx.in_aggregate {
                        self.issues.error(
                            QueryIssue::new(
                                IssueKind::NestedAggregate,
                                format!("aggregate {name}() inside another aggregate"),
                            )
                            .at(f.name.0.last().and_then(|p| p.as_ident()).and_then(at))
                            .suggest("compute the inner aggregate in a subquery"),
                        );
                    } else if !ctx.aggregates {
                        self.issues.error(
                            QueryIssue::new(
                                IssueKind::Aggregation,
                                format!("aggregate {name}() is not allowed in {}", ctx.clause),
                            )
                            .at(f.name.0.last().and_then(|p| p.as_ident()).and_then(at))
                            .suggest(if ctx.clause == "WHERE" {
                                "move the condition to HAVING"
                            } else {
                                "use a subquery"
                            }),
                        );
                    }
                    inner.in_aggregate = true;
                    self.aggregate_types(f, &name, scope);
                }
                self.children(e, scope, inner);
            }
            Expr::BinaryOp { left, op, right } => {
                if matches!(op, BinaryOperator::Eq | BinaryOperator::NotEq) {
                    // Only an unnegated `=` in a filter keeps the rows out when no row has the
                    // value; `<>`, `NOT`, a CASE or a flag in SELECT are fine with any value.
                    let filters = *op == BinaryOperator::Eq && self.filters(ctx);
                    self.literal(left, right, scope, filters);
                    self.literal(right, left, scope, filters);
                }
                self.children(e, scope, ctx);
            }
            Expr::InList { expr, list, negated } => {
                let filters = !negated && self.filters(ctx);
                for item in list {
                    self.literal(expr, item, scope, filters);
                }
                self.children(e, scope, ctx);
            }
            Expr::UnaryOp { op: sqlparser::ast::UnaryOperator::Not, .. } => {
                self.negations += 1;
                self.children(e, scope, ctx);
                self.negations -= 1;
            }
            // A lambda's body (ClickHouse's `x -> x * 2`) names its own parameters, which no
            // scope here has: what cannot be resolved for sure is accepted.
            Expr::Lambda(_) => {}
            _ => self.children(e, scope, ctx),
        }
    }

    fn children(&mut self, e: &Expr, scope: &Scope<'_>, ctx: Ctx) {
        let (exprs, queries) = children(e);
        for child in &exprs {
            self.expr(child, scope, ctx);
        }
        for q in &queries {
            self.query(q, Some(scope));
        }
    }

    fn identifier(&mut self, id: &Ident, scope: &Scope<'_>, ctx: Ctx) {
        let aliases_here = ctx.aliases
            && (self.rules().aliases_everywhere() || matches!(ctx.clause, "ORDER BY" | "GROUP BY"));
        match scope.resolve(&id.value, aliases_here) {
            Resolution::Column(column) => {
                if column.table.is_some() {
                    self.folded_name(id, &column.column, IssueKind::UnknownColumn);
                }
                self.refer(&column)
            }
            Resolution::Open | Resolution::Alias => {}
            Resolution::Ambiguous(options) => self.ambiguous(id, options),
            _ => {
                if id.quote_style == Some('"') && self.rules().double_quoted_strings() {
                    let mut message = format!(
                        "\"{}\" is no column, so SQLite reads it as a string literal",
                        id.value
                    );
                    // The very name (or a near typo) in another table: the column was likely
                    // meant, and is named with its join.
                    if let Some(column) = self.same_name_elsewhere(&id.value, scope) {
                        message.push_str(&format!("; if a column was meant: {column}"));
                    }
                    self.issues.warn(
                        QueryIssue::new(IssueKind::Portability, message)
                            .at(at(id))
                            .suggest(format!("'{}'", id.value.replace('\'', "''"))),
                    );
                    return;
                }
                if IMPLICIT_COLUMNS.iter().any(|c| c.eq_ignore_ascii_case(&id.value)) {
                    return;
                }
                // PostgreSQL reads a relation's name as its whole row (`SELECT g FROM "Genre" g`).
                if self.rules().relation_name_is_row() && scope.source(&id.value).is_some() {
                    return;
                }
                if ctx.aliases
                    && !aliases_here
                    && scope.aliases.iter().any(|a| a.eq_ignore_ascii_case(&id.value))
                {
                    self.issues.error(
                        QueryIssue::new(
                            IssueKind::UnknownColumn,
                            format!(
                                "{} is a SELECT alias, which PostgreSQL does not allow in {}",
                                id.value, ctx.clause
                            ),
                        )
                        .at(at(id))
                        .suggest("repeat the aliased expression"),
                    );
                    return;
                }
                let visible = scope.visible_columns();
                let close = closest(&id.value, visible.iter().map(String::as_str), 3);
                let derived = close.first().is_some_and(|n| scope.is_derived_column(n));
                let close = Close {
                    names: close
                        .iter()
                        .map(|n| column_fixes::quote_name(n, self.dialect))
                        .collect(),
                    derived,
                };
                let issue = QueryIssue::new(
                    IssueKind::UnknownColumn,
                    format!("no column called {} in scope", id.value),
                )
                .at(at(id));
                self.unknown_column(issue, &id.value, None, close, scope);
            }
        }
    }

    /// Reports an unknown column with the best candidates: a catalog column (in scope, or
    /// with the join that brings its table in) or, for names of derived tables and CTEs, the
    /// closest spelling in scope (`close`; also the answer when the catalog has no candidate).
    fn unknown_column(
        &mut self,
        issue: QueryIssue,
        wanted: &str,
        qualified: Option<Option<&str>>,
        close: Close,
        scope: &Scope<'_>,
    ) {
        // `qualified`: written with a qualifier, of this base table when it is one.
        let preferred = qualified.flatten();
        let found = self.search_catalog(wanted, preferred, scope, 3);
        if let Some((qualifier, column)) = self.unquoted_name_at(issue.location.as_ref(), scope) {
            let written = format!(
                "{}.{}",
                column_fixes::quote_name(&qualifier, self.dialect),
                column_fixes::quote_name(&column.column, self.dialect)
            );
            let mut issue = issue.suggest(written.clone());
            issue.message.push_str(&format!(
                "; {} has a column {:?}, whose name must be quoted: {written}",
                column.table, column.column
            ));
            self.issues.error(issue.fixed_by(column));
            return;
        }
        let best_in_scope = found.first().is_some_and(|c| c.qualifier.is_some());
        // A close spelling among derived columns beats a table out of scope; a base table's
        // columns are among the catalog's candidates, ranked with the rest.
        if !best_in_scope && close.derived || found.is_empty() {
            let close = close.names;
            let hint = if close.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", close.join(", "))
            };
            let mut issue = issue.suggest_first(&close);
            issue.message.push_str(&hint);
            self.issues.error(issue);
            return;
        }
        // One relation in scope: its columns need no qualifier.
        let single = qualified.is_none() && scope.parent.is_none() && scope.sources.len() == 1;
        let shown = |c: &column_fixes::Candidate| {
            if single && c.qualifier.is_some() { c.column_written() } else { c.written() }
        };
        let phrases: Vec<String> = found
            .iter()
            .map(|c| if single && c.qualifier.is_some() { shown(c) } else { c.described() })
            .collect();
        let best = &found[0];
        let mut issue = issue.suggest(shown(best)).fixed_by(best.column.clone());
        issue.message.push_str(&format!("; did you mean {}?", phrases.join(", or ")));
        self.issues.error(issue);
    }

    /// The best catalog column named `wanted` (or a near typo of it), described with its join,
    /// when there is one.
    fn same_name_elsewhere(&mut self, wanted: &str, scope: &Scope<'_>) -> Option<String> {
        let found = self.search_catalog(wanted, None, scope, 1);
        let best = found.first()?;
        column_fixes::is_near_name(wanted, &best.column.column).then(|| best.described())
    }

    /// The best `max` catalog columns for a wrong name (see [`column_fixes::candidates`]); none
    /// once [`column_fixes::MAX_SEARCHED_NAMES`] names of this query were searched.
    fn search_catalog(
        &mut self,
        wanted: &str,
        preferred: Option<&str>,
        scope: &Scope<'_>,
        max: usize,
    ) -> Vec<column_fixes::Candidate> {
        if self.searched >= column_fixes::MAX_SEARCHED_NAMES {
            return Vec::new();
        }
        self.searched += 1;
        column_fixes::candidates(
            wanted,
            preferred,
            scope,
            self.catalog,
            &self.question,
            max,
            self.dialect,
        )
    }

    /// A column of a table in scope whose name is no plain identifier (`T-BIL`, `Order Date`)
    /// and that the text at `location` starts with: written unquoted, the parser read it as
    /// several names (`T - BIL`). With the qualifier that reaches its table.
    fn unquoted_name_at(
        &self,
        location: Option<&Location>,
        scope: &Scope<'_>,
    ) -> Option<(String, TableColumn)> {
        let Some(Location::Position { line, column }) = location else { return None };
        let text = self.text.lines().nth(usize::try_from(*line).ok()?.checked_sub(1)?)?;
        let rest: String =
            text.chars().skip(usize::try_from(*column).ok()?.saturating_sub(1)).collect();
        let rest = rest.to_lowercase();
        for (table, qualifier) in column_fixes::tables_in_scope(scope) {
            let Some(info) = self.catalog.table(&table) else { continue };
            for c in &info.columns {
                let name = c.name.to_lowercase();
                let plain = column_fixes::is_plain(&c.name, false);
                let written_here = rest.strip_prefix(name.as_str()).is_some_and(|after| {
                    after.chars().next().is_none_or(|next| !next.is_alphanumeric() && next != '_')
                });
                if !plain && written_here {
                    let column = TableColumn { table: info.name.clone(), column: c.name.clone() };
                    return Some((qualifier, column));
                }
            }
        }
        None
    }

    /// Reports an unqualified column several relations have, candidates ranked by how much
    /// the question says about their table.
    fn ambiguous(&mut self, id: &Ident, mut options: Vec<(String, Option<String>, String)>) {
        let question = self.question.term_set();
        let weight = |table: &Option<String>| {
            table
                .as_deref()
                .and_then(|t| self.catalog.table(t))
                .map_or(0.0, |t| column_fixes::table_relevance(t, &question))
        };
        // Stable: equal weights keep the order of FROM.
        options.sort_by(|(_, a, _), (_, b, _)| weight(b).total_cmp(&weight(a)));
        let quote = |name: &str| column_fixes::quote_name(name, self.dialect);
        let written: Vec<String> = options
            .iter()
            .map(|(source, _, column)| format!("{}.{}", quote(source), quote(column)))
            .collect();
        let mut issue = QueryIssue::new(
            IssueKind::AmbiguousColumn,
            format!("column {} is in several tables: {}; qualify it", id.value, written.join(", ")),
        )
        .at(at(id))
        .suggest_first(&written);
        if let Some((_, Some(table), column)) = options.first() {
            issue = issue.fixed_by(TableColumn { table: table.clone(), column: column.clone() });
        }
        self.issues.error(issue);
    }

    /// PostgreSQL folds an unquoted name to lower case: written `Name` for a catalog name
    /// `Name`, it names `name`, which does not exist. An error with the quoted name.
    /// ClickHouse folds nothing: any other case names nothing.
    fn folded_name(&mut self, written: &Ident, stored: &str, kind: IssueKind) {
        if self.rules().case_sensitive_names() {
            if written.value != stored && written.value.eq_ignore_ascii_case(stored) {
                let quoted = column_fixes::quote_name(stored, self.dialect);
                self.issues.error(
                    QueryIssue::new(
                        kind,
                        format!(
                            "{} names are case-sensitive: {} does not exist; the name is {quoted}",
                            self.dialect, written.value
                        ),
                    )
                    .at(at(written))
                    .suggest(quoted),
                );
            }
            return;
        }
        if !self.rules().folds_unquoted_to_lower() || written.quote_style.is_some() {
            return;
        }
        let folded = written.value.to_lowercase();
        if folded == stored || !folded.eq_ignore_ascii_case(stored) {
            return;
        }
        let quoted = column_fixes::quote_name(stored, self.dialect);
        self.issues.error(
            QueryIssue::new(
                kind,
                format!(
                    "{} reads the unquoted {} as {folded}, which does not exist; the name is {quoted}",
                    self.dialect, written.value
                ),
            )
            .at(at(written))
            .suggest(quoted),
        );
    }

    fn refer(&mut self, column: &ColumnRef) {
        if let Some(table) = &column.table {
            self.referenced
                .push(TableColumn { table: table.clone(), column: column.column.clone() });
        }
    }

    fn compound(&mut self, ids: &[Ident], scope: &Scope<'_>) {
        let [.., q, c] = ids else { return };
        match scope.resolve_qualified(&q.value, &c.value) {
            Resolution::Column(column) => {
                if column.table.is_some() {
                    self.folded_name(c, &column.column, IssueKind::UnknownColumn);
                }
                self.refer(&column)
            }
            Resolution::Unknown => {
                let source = scope.source(&q.value);
                let names = source.map(|s| s.columns.names.clone()).unwrap_or_default();
                let names: Vec<String> = closest(&c.value, names.iter().map(String::as_str), 3)
                    .into_iter()
                    .map(|n| {
                        let quote = |name: &str| column_fixes::quote_name(name, self.dialect);
                        format!("{}.{}", quote(&q.value), quote(&n))
                    })
                    .collect();
                let base = source.and_then(|s| s.table.clone());
                let close = Close { names, derived: base.is_none() };
                let table = base.clone().unwrap_or_else(|| q.value.clone());
                let issue = QueryIssue::new(
                    IssueKind::UnknownColumn,
                    format!("{} ({table}) has no column {}", q.value, c.value),
                )
                .at(at(c));
                self.unknown_column(issue, &c.value, Some(base.as_deref()), close, scope);
            }
            Resolution::ShadowedByAlias(alias) => {
                let issue = QueryIssue::new(
                    IssueKind::UnknownTable,
                    format!(
                        "table {} has the alias {alias}; qualify its columns with the alias",
                        q.value
                    ),
                )
                .at(at(q))
                .suggest(format!("{alias}.{}", c.value));
                if self.rules().lenient() {
                    self.issues.warn(issue)
                } else {
                    self.issues.error(issue)
                }
            }
            Resolution::UnknownQualifier => {
                // `schema.table.column` with a table not in FROM, or `table.column` of a table
                // outside FROM.
                self.unknown_qualifier(q, scope);
            }
            _ => {}
        }
    }

    /// Whether a comparison here surely filters the result: a top-level conjunct of the
    /// outermost query's WHERE or HAVING (an outer join's ON, a subquery or a side of `EXCEPT`
    /// may keep the rows whatever it says), under no `NOT`.
    fn filters(&self, ctx: Ctx) -> bool {
        self.negations == 0
            && self.nesting == 0
            && self.node_conjunct
            && matches!(ctx.clause, "WHERE" | "HAVING")
    }

    /// `column = literal` (or `IN`): the literal checked against the column's stored values —
    /// an error when the comparison `filters` rows (no row would pass), else a warning.
    fn literal(&mut self, column: &Expr, literal: &Expr, scope: &Scope<'_>, filters: bool) {
        let Some(c) = base_column(column, scope) else { return };
        let Some(table) = c.table.as_deref() else { return };
        let issue = match literal {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(s) => {
                    check_string(self.values, table, &c.column, s).map(|i| (i, true))
                }
                Value::Number(n, _) => n
                    .parse::<f64>()
                    .ok()
                    .and_then(|n| check_number(self.values, table, &c.column, n))
                    .map(|i| (i, false)),
                _ => None,
            },
            Expr::Identifier(id)
                if id.quote_style == Some('"')
                    && self.rules().double_quoted_strings()
                    && matches!(scope.resolve(&id.value, false), Resolution::Unknown) =>
            {
                check_string(self.values, table, &c.column, &id.value).map(|i| (i, true))
            }
            Expr::UnaryOp { op: sqlparser::ast::UnaryOperator::Minus, expr } => match expr.as_ref()
            {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n
                        .parse::<f64>()
                        .ok()
                        .and_then(|n| check_number(self.values, table, &c.column, -n))
                        .map(|i| (i, false)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        match issue {
            Some((i, true)) if filters => self.issues.error(i),
            Some((i, _)) => self.issues.warn(i),
            None => {}
        }
    }

    /// SUM/AVG of a text column: an error in PostgreSQL, a warning in SQLite (which reads text
    /// as 0 or its numeric prefix).
    fn aggregate_types(&mut self, f: &sqlparser::ast::Function, name: &str, scope: &Scope<'_>) {
        if !matches!(name, "sum" | "avg" | "total") {
            return;
        }
        let sqlparser::ast::FunctionArguments::List(list) = &f.args else { return };
        let [sqlparser::ast::FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(arg))] =
            list.args.as_slice()
        else {
            return;
        };
        let Some(c) = base_column(arg, scope) else { return };
        let Some(info) = c
            .table
            .as_deref()
            .and_then(|t| self.catalog.table(t))
            .and_then(|t| t.column(&c.column))
        else {
            return;
        };
        if ColumnType::of(info) == ColumnType::Text {
            let issue = QueryIssue::new(
                IssueKind::Aggregation,
                format!("{name}() of {} , a text column ({})", c.column, info.declared_type),
            )
            .suggest(format!("COUNT({}) or a numeric column", c.column));
            if self.rules().lenient() { self.issues.warn(issue) } else { self.issues.error(issue) }
        }
    }

    /// A join's ON condition should equate columns along a foreign key (either direction).
    fn join_keys(&mut self, on: &Expr, scope: &Scope<'_>) {
        let mut pairs = Vec::new();
        equalities(on, &mut pairs);
        let mut resolved = Vec::new();
        for (l, r) in pairs {
            if let (Some(a), Some(b)) = (base_column(l, scope), base_column(r, scope))
                && a.depth == 0
                && b.depth == 0
                && a.source != b.source
                && let (Some(ta), Some(tb)) = (a.table.clone(), b.table.clone())
            {
                resolved.push((ta, a.column, tb, b.column));
            }
        }
        if resolved.is_empty() {
            return;
        }
        let follows =
            |ta: &str, ca: &str, tb: &str, cb: &str| {
                self.catalog.table(ta).is_some_and(|t| {
                    t.foreign_keys.iter().any(|fk| {
                        fk.referenced_table.eq_ignore_ascii_case(tb)
                            && fk.columns.iter().zip(&fk.referenced_columns).any(|(x, y)| {
                                x.eq_ignore_ascii_case(ca) && y.eq_ignore_ascii_case(cb)
                            })
                    })
                })
            };
        if !resolved
            .iter()
            .any(|(ta, ca, tb, cb)| follows(ta, ca, tb, cb) || follows(tb, cb, ta, ca))
        {
            let (ta, ca, tb, cb) = &resolved[0];
            self.issues.warn(QueryIssue::new(
                IssueKind::JoinWithoutForeignKey,
                format!("the join {ta}.{ca} = {tb}.{cb} follows no foreign key; check that it relates the right rows"),
            ));
        }
    }
}

fn item_expr(item: &SelectItem) -> Option<&Expr> {
    match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
        _ => None,
    }
}

fn resolve_ids(scope: &Scope<'_>, ids: &[Ident]) -> Resolution {
    match ids {
        [id] => scope.resolve(&id.value, false),
        [.., q, c] => scope.resolve_qualified(&q.value, &c.value),
        [] => Resolution::Unknown,
    }
}

/// The column an expression is, when it is a plain column reference.
fn base_column(e: &Expr, scope: &Scope<'_>) -> Option<ColumnRef> {
    let e = match e {
        Expr::Nested(inner) => inner.as_ref(),
        other => other,
    };
    let resolution = match e {
        Expr::Identifier(id) => scope.resolve(&id.value, false),
        Expr::CompoundIdentifier(ids) => resolve_ids(scope, ids),
        _ => return None,
    };
    match resolution {
        Resolution::Column(c) => Some(c),
        _ => None,
    }
}

/// `a = b` pairs joined by AND.
fn equalities<'e>(e: &'e Expr, out: &mut Vec<(&'e Expr, &'e Expr)>) {
    match e {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            equalities(left, out);
            equalities(right, out);
        }
        Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => out.push((left, right)),
        Expr::Nested(inner) => equalities(inner, out),
        _ => {}
    }
}

fn open_source(alias: &Option<TableAlias>, name: &str) -> Source {
    let mut src =
        Source { name: name.to_string(), table: None, aliased: false, columns: Columns::open() };
    apply_alias(&mut src, alias);
    src
}

fn apply_alias(src: &mut Source, alias: &Option<TableAlias>) {
    if let Some(a) = alias {
        src.name = a.name.value.clone();
        src.aliased = true;
        if !a.columns.is_empty() {
            src.columns = Columns::known(a.columns.iter().map(|c| c.name.value.clone()).collect());
        }
    }
}

/// System catalogs: not in the catalog, readable, columns unknown.
fn is_system_relation(ids: &[&Ident]) -> bool {
    let first = ids.first().map_or(String::new(), |i| i.value.to_ascii_lowercase());
    let last = ids.last().map_or(String::new(), |i| i.value.to_ascii_lowercase());
    ids.len() > 1 && (first == "pg_catalog" || first == "information_schema")
        || last.starts_with("pg_")
        || last.starts_with("sqlite_")
        || last.starts_with("pragma_")
}
