//! What the validator, the structured-query compiler and the database layer need to know about
//! one SQL engine, asked through one trait, [`DialectRules`], instead of matched on its name.
//!
//! [`SqlDialect`] is the engine's identity (configuration, serde, display); [`SqlDialect::rules`]
//! is the one place that maps it to the engine's rules, one line per engine. Each engine's rules
//! are one file here (`sqlite.rs`, `postgres.rs`, `clickhouse.rs`, `datafusion.rs`): its quoting, parameters,
//! how it resolves names, which of its calls hide in syntax, and how lenient it is. They live in
//! this crate, not beside the engine's connection code in `schemascope_sources`, because the
//! validator is pure and below the database layer, and is also used without a database (a
//! dialect named by the caller, the evaluation, the fuzz targets); the database layer reaches
//! them through the same [`SqlDialect`].

mod clickhouse;
mod datafusion;
mod mysql;
mod postgres;
mod sqlite;

use serde::Deserialize;

use crate::sql::{Callables, Written};

/// The SQL dialect a query is validated for or compiled to: the engine's name. What the engine
/// does is asked of its [`DialectRules`] ([`SqlDialect::rules`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqlDialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// ClickHouse.
    #[serde(rename = "clickhouse")]
    ClickHouse,
    /// Apache DataFusion, embedded: SQL over files and in-memory collections.
    #[serde(rename = "datafusion")]
    DataFusion,
    /// MySQL.
    #[serde(rename = "mysql")]
    MySql,
    /// MariaDB.
    #[serde(rename = "mariadb")]
    MariaDb,
}

impl SqlDialect {
    /// The engine's rules: the one registration of each engine.
    pub fn rules(self) -> &'static dyn DialectRules {
        match self {
            Self::Sqlite => &sqlite::Sqlite,
            Self::Postgres => &postgres::Postgres,
            Self::ClickHouse => &clickhouse::ClickHouse,
            Self::DataFusion => &datafusion::DataFusion,
            Self::MySql => &mysql::MySql(mysql::Flavor::MySql),
            Self::MariaDb => &mysql::MySql(mysql::Flavor::MariaDb),
        }
    }

    /// `name` as a quoted identifier ([`DialectRules::quote`]).
    pub fn quote(self, name: &str) -> String {
        self.rules().quote(name)
    }

    /// A table name as a quoted, possibly schema-qualified identifier
    /// ([`DialectRules::quote_table`]).
    pub fn quote_table(self, name: &str) -> String {
        self.rules().quote_table(name)
    }

    /// The `n`-th bound parameter, 1-based ([`DialectRules::param`]).
    pub fn param(self, n: usize) -> String {
        self.rules().param(n)
    }
}

impl std::fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rules().name())
    }
}

/// Whose built-in functions the SQL that schemascope writes for an engine uses (dialect fixes,
/// the structured-query compiler). A family, not an engine: an engine that reads PostgreSQL's
/// spellings (`EXTRACT`, `to_char`, `ILIKE`, `percentile_cont`) shares its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionFamily {
    /// SQLite's core functions: `strftime`, `julianday`, `instr`, `||`, no `ILIKE`.
    Sqlite,
    /// PostgreSQL's: `EXTRACT`, `date_trunc`, `to_char`, `strpos`, `ILIKE`.
    Postgres,
    /// MySQL's and MariaDB's: `DATE_FORMAT`, `IFNULL`, `LOCATE`, `LIKE` under the column's
    /// collation.
    MySql,
}

/// How an engine treats a function named in FROM (a table function).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFunctions {
    /// Judged as any other function, against the allow-list (PostgreSQL's set-returning
    /// functions).
    Functions,
    /// Virtual tables the engine's own gate sees as reads: only whether the engine has one is
    /// checked (SQLite's `json_each`, `pragma_*`).
    VirtualTables,
    /// Refused by construction, whatever the name: none is a table of the database (ClickHouse's
    /// `file`, `url`, `remote`, …).
    Refused,
}

/// One engine's SQL, as the validator and the database layer need it. The required methods are
/// the facts every engine differs on; the provided ones hold for most engines and are
/// overridden where one does not.
pub trait DialectRules: Send + Sync {
    /// The engine's name as users write it ("PostgreSQL"), in messages.
    fn name(&self) -> &'static str;

    /// The engine's name as the `ask` pipeline's prompts and answers give it ("postgresql").
    fn prompt_name(&self) -> &'static str;

    /// The sqlparser dialect that reads this engine's statements.
    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect;

    /// Whose functions the SQL written for this engine uses.
    fn functions(&self) -> FunctionFamily;

    /// How a function named in FROM is judged.
    fn table_functions(&self) -> TableFunctions;

    /// Why a function the allow-list refuses is refused, in this engine's terms.
    fn refused_why(&self) -> &'static str;

    /// The `n`-th bound parameter (1-based), as the database layer sends it.
    fn param(&self, n: usize) -> String;

    /// `name` as a quoted identifier, always quoted, read back by the engine as exactly `name`.
    fn quote(&self, name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    /// A table name as a quoted identifier; `schema.table` is quoted part by part where the
    /// engine has schemas ([`DialectRules::has_schemas`]).
    fn quote_table(&self, name: &str) -> String {
        match name.split_once('.') {
            Some((schema, table)) if self.has_schemas() => {
                format!("{}.{}", self.quote(schema), self.quote(table))
            }
            _ => self.quote(name),
        }
    }

    /// Whether names may be qualified by a schema (`schema.table`, `schema.function`): a
    /// catalog name with a dot is then a schema and a name.
    fn has_schemas(&self) -> bool {
        false
    }

    /// Whether unquoted identifiers are folded to lower case (and so a name with capitals must
    /// be quoted to be reached).
    fn folds_unquoted_to_lower(&self) -> bool {
        false
    }

    /// Whether names compare exactly, case included, quoted or not.
    fn case_sensitive_names(&self) -> bool {
        false
    }

    /// How the allow-list stores a function name the engine reported.
    fn stored_function_name(&self, name: &str) -> String {
        name.to_string()
    }

    /// The function name the engine looks up for `written`, given the allow-list.
    fn resolve_function(&self, written: &Written<'_>, callables: &Callables) -> String;

    /// The key a CTE name is compared by.
    fn cte_key(&self, text: &str, quoted: bool) -> String {
        let _ = quoted;
        text.to_ascii_lowercase()
    }

    /// Names this engine's grammar turns into expressions of its own, which sqlparser shows as
    /// calls (`COALESCE(…)`); they count as syntax only unquoted and unqualified.
    fn syntax_forms(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether statements are read with the engine's own grammar (PostgreSQL's, through
    /// libpg_query) for the read-only check, rather than sqlparser's.
    fn own_grammar(&self) -> bool {
        false
    }

    /// Whether operators, casts, typed literals (`type 'x'`) and attribute notation (`t.f`)
    /// run functions of the engine's catalog, so that the read-only check must find them.
    fn calls_hide_in_syntax(&self) -> bool {
        false
    }

    /// Whether `U&"…"` identifiers (with Unicode escapes) exist, refused because what they
    /// decode to cannot be checked.
    fn unicode_escaped_identifiers(&self) -> bool {
        false
    }

    /// Whether a relation is also named inside expressions (`x IN t`, `joinGet('t', …)`).
    fn relations_in_expressions(&self) -> bool {
        false
    }

    /// Whether the engine's own gate decides statements sqlparser cannot read: then such a
    /// statement is compiled by the engine rather than refused.
    fn engine_decides_unparsed(&self) -> bool {
        false
    }

    /// Whether the engine runs what stricter engines reject (a bare column beside aggregates,
    /// an ambiguous name, `SUM` of text): such issues are then warnings, not errors.
    fn lenient(&self) -> bool {
        false
    }

    /// Whether a double-quoted name that is no column is read as a string literal.
    fn double_quoted_strings(&self) -> bool {
        false
    }

    /// Whether a relation's name alone stands for its whole row (`SELECT g FROM "Genre" g`).
    fn relation_name_is_row(&self) -> bool {
        true
    }

    /// Whether select-list aliases may be used in every clause (not only ORDER BY and GROUP BY).
    fn aliases_everywhere(&self) -> bool {
        false
    }

    /// Whether the engine's `to_char` reads strftime's directives (`'%Y-%m'`, as DataFusion's
    /// does) rather than PostgreSQL's patterns (`'YYYY-MM'`).
    fn to_char_takes_strftime(&self) -> bool {
        false
    }

    /// `expr` made comparable with a text parameter (the value as a user wrote it).
    fn compared_with_text(&self, expr: &str) -> String {
        expr.to_string()
    }

    /// Whether comments of the form `/*! … */` are run as SQL (MySQL's and MariaDB's
    /// executable comments), so that a statement holding one cannot be checked.
    fn executable_comments(&self) -> bool {
        false
    }

    /// Whether structured queries compile to this engine.
    fn compiles_structured(&self) -> bool {
        true
    }

    /// A bound parameter of the structured-query compiler, carrying `cast` (the SQL type of its
    /// JSON value) where the engine needs one to type it.
    fn typed_param(&self, n: usize, cast: &str) -> String {
        let _ = cast;
        self.param(n)
    }
}
