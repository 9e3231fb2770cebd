//! Which relations a statement may read: only those of what the source serves. Every relation
//! reference a statement resolves to — in FROM and JOIN, in subqueries, CTEs, `IN (subquery)`,
//! `TABLE name`, and ClickHouse's `IN table` forms — is judged against the source's
//! [`RelationScope`], which the database layer sets from its catalog: the ClickHouse database
//! it serves, PostgreSQL's system schemas (with the names an unqualified reference reaches in
//! `pg_catalog`), SQLite's `main` and `temp`. Like the function allow-list, this decides from
//! what the statement names, resolved as the engine resolves it, not from spellings.
//!
//! The rule works on a list of [`RelationRef`]s, so that any parser can feed it; [`collect`]
//! is sqlparser's.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectName, Query,
    SetExpr, TableFactor, Visit, Visitor,
};

use crate::SqlDialect;
use crate::issue::{IssueKind, QueryIssue};

/// System tables of ClickHouse a statement may read: `system.one` is the one-row, one-column
/// table ClickHouse reads for a SELECT without FROM; it holds a single `0` and tells nothing
/// about the server, other users or other databases. Every other system table does
/// (`processes`, `query_log`: other users' statements; `tables`: every database's DDL;
/// `settings`, `build_options`, `clusters`, `macros`: the server's configuration; `numbers`:
/// rows without end).
pub const CLICKHOUSE_SYSTEM_ALLOWED: &[&str] = &["one"];

/// The ClickHouse functions that read the table named by their second argument
/// (`in(x, db.t)` is `x IN db.t`).
const CLICKHOUSE_IN_FUNCTIONS: &[&str] = &[
    "in",
    "notIn",
    "globalIn",
    "globalNotIn",
    "nullIn",
    "notNullIn",
    "globalNullIn",
    "globalNotNullIn",
    "inIgnoreSet",
    "notInIgnoreSet",
    "globalInIgnoreSet",
    "globalNotInIgnoreSet",
    "nullInIgnoreSet",
    "notNullInIgnoreSet",
    "globalNullInIgnoreSet",
    "globalNotNullInIgnoreSet",
];

/// One part of a relation's name as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationPart {
    /// The text (between the quotes, if quoted).
    pub text: String,
    /// True for a quoted identifier.
    pub quoted: bool,
}

/// One relation a statement names: its qualifiers and name, and whether an unqualified name is
/// a CTE visible where it is named (a CTE shadows every relation of that name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationRef {
    /// Catalog, schema or database parts, then the name.
    pub parts: Vec<RelationPart>,
    /// True when the one-part name is a CTE in scope.
    pub cte: bool,
}

impl RelationRef {
    fn shown(&self) -> String {
        self.parts.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join(".")
    }
}

/// What a source serves, per engine: the rule [`RelationScope::judge`] applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelationScope {
    /// ClickHouse: the tables of one database (`currentDatabase()`), and the system tables of
    /// [`CLICKHOUSE_SYSTEM_ALLOWED`].
    ClickHouse {
        /// The database the source serves, as the server names it.
        database: String,
    },
    /// PostgreSQL: every schema but the system ones (`pg_catalog`, `information_schema`,
    /// `pg_toast`, `pg_temp_*`, any `pg_*`): what the source's catalog lists. An unqualified
    /// name is looked up in `pg_catalog` before the search path, so the names of its relations
    /// are refused unqualified too, unless a CTE of that name is in scope.
    Postgres {
        /// The relations of `pg_catalog`, by name.
        catalog_relations: HashSet<String>,
    },
    /// MySQL and MariaDB: the tables of one database, named bare or qualified by it (exactly,
    /// as the server compares database names on Linux); never `information_schema`, `mysql`,
    /// `performance_schema` or `sys`, which show other users' sessions, grants and settings.
    MySql {
        /// The database the source serves.
        database: String,
    },
    /// SQLite: the file's own schemas, `main` and `temp` (ATTACH is refused, so there is no
    /// other); its schema table (`sqlite_schema`) describes the served file only.
    Sqlite,
    /// An embedded engine whose catalog holds only the tables the operator served (DataFusion):
    /// a relation is one of them by its bare name, or a CTE.
    Served {
        /// The served tables, by the name the engine resolves (unquoted names fold to lower
        /// case, so every name is kept as the engine stores it).
        tables: HashSet<String>,
    },
}

impl RelationScope {
    /// Why `relation` is outside what the source serves, if it is.
    pub fn judge(&self, relation: &RelationRef) -> Option<String> {
        let shown = relation.shown();
        match self {
            Self::ClickHouse { database } => {
                let (schema, name) = match relation.parts.as_slice() {
                    [name] => (database.as_str(), name.text.as_str()),
                    [schema, name] => (schema.text.as_str(), name.text.as_str()),
                    _ => {
                        return Some(format!(
                            "{shown}: a table name has at most a database before it"
                        ));
                    }
                };
                // Database and table names are case-sensitive in ClickHouse, quoted or not.
                if schema == "system" {
                    if CLICKHOUSE_SYSTEM_ALLOWED.contains(&name) {
                        return None;
                    }
                    return Some(format!(
                        "system.{name} is a ClickHouse system table: they show other users' queries, every database's tables and the server's settings; only the tables of the database `{database}` this source serves are read (and system.one)"
                    ));
                }
                (schema != database).then(|| {
                    format!(
                        "{shown} is in the database `{schema}`, which this source does not serve; only the tables of `{database}` are read"
                    )
                })
            }
            Self::Postgres { catalog_relations } => {
                let folded: Vec<String> = relation
                    .parts
                    .iter()
                    .map(|p| {
                        // PostgreSQL folds unquoted names to lower case and keeps 63 bytes.
                        let text =
                            if p.quoted { p.text.clone() } else { p.text.to_ascii_lowercase() };
                        super::callables::truncate_identifier(text)
                    })
                    .collect();
                match folded.as_slice() {
                    [name] if !relation.cte && catalog_relations.contains(name) => Some(format!(
                        "{shown} is pg_catalog.{name}, a PostgreSQL system relation (an unqualified name is looked up in pg_catalog first); this source serves its own schemas' tables and views, not the server's catalog or statistics"
                    )),
                    [_] => None,
                    [.., schema, _] if is_postgres_system_schema(schema) => Some(format!(
                        "{shown} is in the system schema {schema}; this source serves its own schemas' tables and views, not the server's catalog or statistics"
                    )),
                    [_, _] | [_, _, _] => None,
                    _ => Some(format!(
                        "{shown}: a relation name has at most a database and a schema before it"
                    )),
                }
            }
            Self::MySql { database } => match relation.parts.as_slice() {
                [_] => None,
                [schema, _] if schema.text == *database => None,
                [schema, _] => Some(format!(
                    "{shown} is in the database `{}`, which this source does not serve; only the tables of `{database}` are read (the server's own databases show other users' sessions, grants and settings)",
                    schema.text
                )),
                _ => Some(format!("{shown}: a table name has at most a database before it")),
            },
            Self::Sqlite => match relation.parts.as_slice() {
                [_] => None,
                [schema, _]
                    if ["main", "temp"].contains(&schema.text.to_ascii_lowercase().as_str()) =>
                {
                    None
                }
                [schema, _] => Some(format!(
                    "{shown} is in the schema {}, which is not this database file (only main and temp are read; ATTACH is refused)",
                    schema.text
                )),
                _ => Some(format!("{shown}: a table name has at most a schema before it")),
            },
            Self::Served { tables } => match relation.parts.as_slice() {
                _ if relation.cte => None,
                [name] => {
                    let resolved = if name.quoted {
                        name.text.clone()
                    } else {
                        name.text.to_ascii_lowercase()
                    };
                    (!tables.contains(&resolved))
                        .then(|| format!("{shown}, which is not a table this source serves"))
                }
                _ => Some(format!(
                    "{shown}: the tables this source serves are named without a schema"
                )),
            },
        }
    }
}

/// Schemas of PostgreSQL's own: its catalog, the SQL-standard views over it, TOAST storage and
/// every session's temporary schema.
fn is_postgres_system_schema(schema: &str) -> bool {
    schema == "information_schema" || schema.starts_with("pg_")
}

/// One refusal per relation in `relations` that `scope` does not serve.
pub fn judge_relations(relations: &[RelationRef], scope: &RelationScope) -> Vec<QueryIssue> {
    let mut refused = HashSet::new();
    relations
        .iter()
        .filter_map(|relation| scope.judge(relation))
        .filter(|why| refused.insert(why.clone()))
        .map(|why| {
            QueryIssue::new(IssueKind::OutsideSource, format!("reading {why}"))
                .suggest("read the tables this source lists (list_sources, describe_schema)")
        })
        .collect()
}

/// Every relation reference in `query`, CTE names resolved by scope (a non-recursive WITH sees
/// only the CTEs before each one; WITH RECURSIVE sees all of them).
pub fn collect(query: &Query, dialect: SqlDialect) -> Vec<RelationRef> {
    let mut collector = Collector { dialect, frames: Vec::new(), found: Vec::new() };
    let _ = query.visit(&mut collector);
    collector.found
}

/// The CTEs of one query level.
struct Frame {
    /// The query this frame is for.
    query: *const Query,
    names: Vec<String>,
    bodies: Vec<*const Query>,
    recursive: bool,
    /// How many of `names` are visible now (all, except inside a non-recursive CTE's body).
    visible: usize,
}

struct Collector {
    dialect: SqlDialect,
    frames: Vec<Frame>,
    found: Vec<RelationRef>,
}

impl Collector {
    /// How the engine compares a CTE name: PostgreSQL folds unquoted names, SQLite and
    /// ClickHouse compare them ignoring case or as written.
    fn cte_key(&self, text: &str, quoted: bool) -> String {
        self.dialect.rules().cte_key(text, quoted)
    }

    fn is_cte(&self, part: &RelationPart) -> bool {
        let key = self.cte_key(&part.text, part.quoted);
        self.frames.iter().any(|f| f.names[..f.visible].contains(&key))
    }

    fn push(&mut self, parts: Vec<RelationPart>) {
        let cte = matches!(parts.as_slice(), [one] if self.is_cte(one));
        self.found.push(RelationRef { parts, cte });
    }

    fn push_name(&mut self, name: &ObjectName) {
        let parts = name
            .0
            .iter()
            .map(|p| match p.as_ident() {
                Some(ident) => part(ident),
                None => RelationPart { text: p.to_string(), quoted: false },
            })
            .collect();
        self.push(parts);
    }

    /// ClickHouse reads `x IN (db.t)`, `x IN ((t))` and `in(x, db.t)` as a set from a table.
    fn clickhouse_in_table(&mut self, expr: &Expr) {
        let mut expr = expr;
        while let Expr::Nested(inner) = expr {
            expr = inner;
        }
        match expr {
            Expr::Identifier(ident) => self.push(vec![part(ident)]),
            Expr::CompoundIdentifier(idents) => self.push(idents.iter().map(part).collect()),
            _ => {}
        }
    }

    fn clickhouse_function(&mut self, function: &Function) {
        let name = function.name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.as_str());
        if !name.is_some_and(|n| CLICKHOUSE_IN_FUNCTIONS.contains(&n)) {
            return;
        }
        if let FunctionArguments::List(list) = &function.args
            && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(set))) = list.args.get(1)
        {
            self.clickhouse_in_table(set);
        }
    }
}

fn part(ident: &Ident) -> RelationPart {
    RelationPart { text: ident.value.clone(), quoted: ident.quote_style.is_some() }
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let me: *const Query = query;
        // Entering the body of a CTE of the enclosing level: only the CTEs before it are
        // visible there, unless the WITH is recursive.
        if let Some(frame) = self.frames.last_mut()
            && let Some(at) = frame.bodies.iter().position(|b| *b == me)
        {
            frame.visible = if frame.recursive { frame.names.len() } else { at };
        }
        let (names, bodies, recursive) = match &query.with {
            Some(with) => (
                with.cte_tables
                    .iter()
                    .map(|c| self.cte_key(&c.alias.name.value, c.alias.name.quote_style.is_some()))
                    .collect::<Vec<_>>(),
                with.cte_tables.iter().map(|c| &*c.query as *const Query).collect(),
                with.recursive,
            ),
            None => (Vec::new(), Vec::new(), false),
        };
        let visible = names.len();
        self.frames.push(Frame { query: me, names, bodies, recursive, visible });
        // `TABLE name` is a query body naming a relation.
        let mut pending = vec![query.body.as_ref()];
        while let Some(body) = pending.pop() {
            match body {
                SetExpr::Table(table) => {
                    let mut parts = Vec::new();
                    for text in [&table.schema_name, &table.table_name].into_iter().flatten() {
                        parts.push(RelationPart { text: text.clone(), quoted: false });
                    }
                    self.push(parts);
                }
                SetExpr::SetOperation { left, right, .. } => pending.extend([&**left, &**right]),
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let me: *const Query = query;
        if self.frames.last().is_some_and(|f| f.query == me) {
            self.frames.pop();
        }
        // Leaving a CTE's body: the enclosing query's own body sees all its CTEs.
        if let Some(frame) = self.frames.last_mut()
            && frame.bodies.contains(&me)
        {
            frame.visible = frame.names.len();
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        // A name with arguments is a table function, judged with the functions.
        if let TableFactor::Table { name, args: None, .. } = factor {
            self.push_name(name);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.dialect.rules().relations_in_expressions() {
            match expr {
                Expr::InList { list, .. } if list.len() == 1 => self.clickhouse_in_table(&list[0]),
                Expr::Function(function) => self.clickhouse_function(function),
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn refused(sql: &str, dialect: SqlDialect, scope: &RelationScope) -> Vec<String> {
        let statements = Parser::parse_sql(dialect.rules().parser(), sql).expect(sql);
        let sqlparser::ast::Statement::Query(query) = &statements[0] else { panic!("{sql}") };
        collect(query, dialect).iter().filter_map(|r| scope.judge(r)).collect()
    }

    #[test]
    fn a_served_scope_reads_its_tables_by_their_bare_names_and_ctes_only() {
        let scope = RelationScope::Served {
            tables: ["orders".to_string(), "Mixed Case".to_string()].into_iter().collect(),
        };
        let df = |sql| refused(sql, SqlDialect::DataFusion, &scope);
        assert!(df("SELECT * FROM orders").is_empty());
        assert!(df("SELECT * FROM ORDERS").is_empty(), "unquoted names fold to lower case");
        assert!(df("SELECT * FROM \"Mixed Case\"").is_empty());
        assert_eq!(df("SELECT * FROM \"ORDERS\"").len(), 1, "quoted names keep their case");
        assert!(df("WITH x AS (SELECT 1) SELECT * FROM x").is_empty());
        assert_eq!(df("SELECT * FROM other").len(), 1);
        assert_eq!(df("SELECT * FROM public.orders").len(), 1);
        assert_eq!(df("SELECT * FROM datafusion.public.orders").len(), 1);
        assert_eq!(df("SELECT * FROM information_schema.tables").len(), 1);
        assert_eq!(df("SELECT (SELECT COUNT(*) FROM secrets) FROM orders").len(), 1);
    }

    fn postgres() -> RelationScope {
        RelationScope::Postgres {
            catalog_relations: ["pg_stat_activity", "pg_roles", "pg_class"]
                .map(String::from)
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn clickhouse_reads_only_its_database_and_system_one() {
        let scope = RelationScope::ClickHouse { database: "chinook".into() };
        let ch = |sql| refused(sql, SqlDialect::ClickHouse, &scope);
        for sql in [
            "SELECT * FROM Genre",
            "SELECT * FROM chinook.Genre g JOIN \"chinook\".`Track` t ON g.GenreId = t.GenreId",
            "SELECT dummy FROM system.one",
            "WITH g AS (SELECT * FROM Genre) SELECT * FROM g",
            "SELECT 1 IN (1)",
            "SELECT GenreId IN (SELECT GenreId FROM Genre) FROM Genre",
        ] {
            assert_eq!(ch(sql), Vec::<String>::new(), "{sql}");
        }
        for sql in [
            "SELECT query FROM system.processes",
            "SELECT query FROM `system`.`processes`",
            "SELECT query FROM \"system\".\"processes\"",
            "SELECT * FROM SYSTEM.processes",
            "SELECT * FROM other.t",
            "SELECT * FROM Genre WHERE Name IN (SELECT query FROM system.processes)",
            "WITH p AS (SELECT * FROM system.settings) SELECT * FROM p",
            "SELECT * FROM Genre g JOIN system.tables t ON g.Name = t.name",
            "SELECT (SELECT count() FROM system.build_options) AS n",
            "SELECT 1 IN (system.processes)",
            "SELECT 1 IN ((system.processes))",
            "SELECT in(1, system.processes)",
            "SELECT * FROM (SELECT * FROM (SELECT * FROM system.numbers))",
            "SELECT * FROM a.b.c",
        ] {
            assert_eq!(ch(sql).len(), 1, "{sql}");
        }
        let served_system = RelationScope::ClickHouse { database: "system".into() };
        assert_eq!(
            refused("SELECT * FROM processes", SqlDialect::ClickHouse, &served_system).len(),
            1
        );
    }

    #[test]
    fn postgres_reads_no_system_schema_and_resolves_ctes_by_scope() {
        let scope = postgres();
        let pg = |sql| refused(sql, SqlDialect::Postgres, &scope);
        for sql in [
            "SELECT * FROM \"Genre\"",
            "SELECT * FROM public.\"Genre\", other_schema.t",
            "WITH pg_roles AS (SELECT 1 AS a) SELECT * FROM pg_roles",
            "WITH RECURSIVE a AS (SELECT * FROM pg_class), pg_class AS (SELECT 1) SELECT * FROM a",
            "SELECT * FROM \"PG_ROLES\"",
            "SELECT * FROM generate_series(1, 3)",
        ] {
            assert_eq!(pg(sql), Vec::<String>::new(), "{sql}");
        }
        for sql in [
            "SELECT query FROM pg_stat_activity",
            "SELECT query FROM PG_STAT_ACTIVITY",
            "SELECT * FROM pg_catalog.pg_roles",
            "SELECT * FROM \"pg_catalog\".\"pg_roles\"",
            "SELECT * FROM information_schema.tables",
            "SELECT * FROM chinook.pg_catalog.pg_class",
            "SELECT * FROM pg_toast.x",
            "SELECT * FROM pg_temp.x",
            "SELECT 1 UNION ALL (SELECT 1 FROM pg_roles)",
            "SELECT 1 WHERE 1 IN (SELECT 1 FROM pg_roles)",
            "SELECT * FROM \"Genre\" JOIN LATERAL (SELECT * FROM pg_class) c ON true",
            "WITH a AS (SELECT * FROM pg_class), pg_class AS (SELECT 1) SELECT * FROM a",
            "SELECT * FROM (WITH pg_roles AS (SELECT 1) SELECT * FROM pg_roles) a, pg_roles",
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity)",
        ] {
            assert_eq!(pg(sql).len(), 1, "{sql}: {:?}", pg(sql));
        }
    }

    #[test]
    fn sqlite_reads_main_and_temp() {
        let lite = |sql| refused(sql, SqlDialect::Sqlite, &RelationScope::Sqlite);
        assert!(
            lite("SELECT * FROM main.t, temp.u, TEMP.sqlite_temp_master, sqlite_schema").is_empty()
        );
        assert_eq!(lite("SELECT * FROM other.t").len(), 1);
    }
}
