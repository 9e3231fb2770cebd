//! What a statement may call, as the database engine itself says: an allow-list of functions,
//! operators and types read from the engine's catalog by the database layer (PostgreSQL's
//! `pg_proc`, `pg_operator`, `pg_cast` and `pg_type`; SQLite's `PRAGMA function_list`), and
//! the lookups the read-only check makes against it, with names resolved as the engine
//! resolves them.
//!
//! Nothing here is a list of dangerous spellings. A name is allowed only when the engine knows
//! it and every object visible under it is allowed; a name the engine does not know is refused
//! too, with a did-you-mean, since it cannot be shown to be harmless.

use std::collections::{HashMap, HashSet};

use crate::SqlDialect;

/// PostgreSQL functions that the catalog marks volatile but that only read a clock, a random
/// source or the size of the database's own files, or that TABLESAMPLE names: they change nothing and reach nothing
/// outside the statement. The database layer adds them to the allow-list in `pg_catalog` only.
pub const HARMLESS_VOLATILE: &[&str] = &[
    "random",
    "random_normal",
    "clock_timestamp",
    "timeofday",
    "gen_random_uuid",
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
    "pg_database_size",
    // TABLESAMPLE's built-in methods: the handler only hands back the method's routines, and
    // its one argument is of type `internal`, which no SQL value has, so no statement calls it.
    "bernoulli",
    "system",
];

/// PostgreSQL keeps the first 63 bytes of an identifier (NAMEDATALEN - 1) and drops the rest.
const POSTGRES_NAME_BYTES: usize = 63;

/// What the engine's catalog says about a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Everything visible under the name may run.
    Allowed,
    /// Something visible under the name may not run.
    Refused,
    /// The engine has nothing of that name.
    Unknown,
}

/// A name as written in SQL: its text and whether it was double-quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written<'a> {
    /// The text between the quotes, or the bare word.
    pub text: &'a str,
    /// True for `"name"`.
    pub quoted: bool,
}

/// One name table: allowed per unqualified name (across every schema) and per schema.
#[derive(Debug, Default, Clone)]
struct Names {
    any_schema: HashMap<String, bool>,
    in_schema: HashMap<(String, String), bool>,
}

impl Names {
    fn add(&mut self, schema: Option<&str>, name: &str, allowed: bool) {
        let entry = self.any_schema.entry(name.to_string()).or_insert(true);
        *entry &= allowed;
        if let Some(schema) = schema {
            let entry =
                self.in_schema.entry((schema.to_string(), name.to_string())).or_insert(true);
            *entry &= allowed;
        }
    }

    fn verdict(&self, schema: Option<&str>, name: &str) -> Verdict {
        let found = match schema {
            // Unqualified, a name resolves along the search path; every schema that has it
            // counts, so a same-named object in any schema cannot slip through.
            None => self.any_schema.get(name),
            Some(schema) => self.in_schema.get(&(schema.to_string(), name.to_string())),
        };
        match found {
            Some(true) => Verdict::Allowed,
            Some(false) => Verdict::Refused,
            None => Verdict::Unknown,
        }
    }
}

/// The allow-list of one database, built by its database layer from the engine's catalog.
///
/// ```
/// use schemascope_query::{Callables, SqlDialect, Verdict, Written};
///
/// let mut callables = Callables::new(SqlDialect::Postgres);
/// callables.add_function(Some("pg_catalog"), "abs", true);
/// callables.add_function(Some("pg_catalog"), "pg_sleep", false);
/// let bare = |text| Written { text, quoted: false };
/// assert_eq!(callables.function(None, bare("ABS")), Verdict::Allowed);
/// assert_eq!(callables.function(None, Written { text: "ABS", quoted: true }), Verdict::Unknown);
/// assert_eq!(callables.function(Some(bare("PG_CATALOG")), bare("pg_sleep")), Verdict::Refused);
/// ```
#[derive(Debug, Clone)]
pub struct Callables {
    dialect: SqlDialect,
    functions: Names,
    operators: Names,
    /// Types whose input, type-modifier or cast functions, or domain constraints, may not run.
    unsafe_types: Names,
    /// Refused functions callable on a row with attribute notation (`t.f` means `f(t)`).
    attribute_calls: HashSet<String>,
    /// SQLite's table-valued functions (eponymous virtual tables: `json_each`, `pragma_*`),
    /// which its engine gate sees as reads.
    table_functions: HashSet<String>,
    /// ClickHouse functions whose name the engine matches in any case (`count`, `COUNT`),
    /// lower-cased; every other ClickHouse name matches only as written.
    case_insensitive: HashSet<String>,
    /// The relations a caller's statement may read (`None`: not judged, for statements that
    /// are not a source's callers').
    relations: Option<super::relations::RelationScope>,
}

impl Callables {
    /// An empty allow-list for `dialect`: every function is unknown until added.
    pub fn new(dialect: SqlDialect) -> Self {
        Self {
            dialect,
            functions: Names::default(),
            operators: Names::default(),
            unsafe_types: Names::default(),
            attribute_calls: HashSet::new(),
            table_functions: HashSet::new(),
            case_insensitive: HashSet::new(),
            relations: None,
        }
    }

    /// Sets what a caller's statement may read: the relations the source serves.
    pub fn set_relation_scope(&mut self, scope: super::relations::RelationScope) {
        self.relations = Some(scope);
    }

    /// What a caller's statement may read, when the database layer said.
    pub fn relation_scope(&self) -> Option<&super::relations::RelationScope> {
        self.relations.as_ref()
    }

    /// The dialect whose names these are.
    pub fn dialect(&self) -> SqlDialect {
        self.dialect
    }

    /// Records one function (one overload) as the engine stores it; a name is allowed only
    /// while every overload added under it is.
    pub fn add_function(&mut self, schema: Option<&str>, name: &str, allowed: bool) {
        let name = self.stored(name);
        self.functions.add(schema, &name, allowed);
    }

    /// Records a function reached only qualified by its schema (MySQL's functions of another
    /// database: an unqualified name resolves in the current database only).
    pub fn add_qualified_function(&mut self, schema: &str, name: &str, allowed: bool) {
        let name = self.stored(name);
        let entry = self.functions.in_schema.entry((schema.to_string(), name)).or_insert(true);
        *entry &= allowed;
    }

    /// Records one operator by its symbol (allowed when the function behind it is).
    pub fn add_operator(&mut self, schema: Option<&str>, symbol: &str, allowed: bool) {
        self.operators.add(schema, symbol, allowed);
    }

    /// Records a type that a cast or a typed literal may not produce.
    pub fn add_unsafe_type(&mut self, schema: Option<&str>, name: &str) {
        self.unsafe_types.add(schema, name, false);
    }

    /// Records a refused function that takes one row-typed argument, so that `t.name` calls it.
    pub fn add_attribute_call(&mut self, name: &str) {
        self.attribute_calls.insert(name.to_string());
    }

    /// Records that ClickHouse matches the function `name` in any case (its
    /// `system.functions.case_insensitive`).
    pub fn add_case_insensitive(&mut self, name: &str) {
        self.case_insensitive.insert(name.to_ascii_lowercase());
    }

    /// Records a table-valued function of SQLite (a virtual table usable in FROM).
    pub fn add_table_function(&mut self, name: &str) {
        let name = self.stored(name);
        self.table_functions.insert(name);
    }

    /// Whether SQLite has a table-valued function of this name (`Unknown` when not; SQLite's
    /// table functions read, so none is refused).
    pub fn table_function(&self, name: Written<'_>) -> Verdict {
        if self.table_functions.contains(&self.resolve(&name)) {
            Verdict::Allowed
        } else {
            Verdict::Unknown
        }
    }

    /// How the engine stores a name it was given: SQLite compares function names ignoring
    /// ASCII case, so they are kept lower-case; PostgreSQL's are kept exactly.
    fn stored(&self, name: &str) -> String {
        self.dialect.rules().stored_function_name(name)
    }

    /// The name the engine looks up for `written` ([`crate::DialectRules::resolve_function`]).
    ///
    /// PostgreSQL folds unquoted identifiers to lower case (ASCII letters only, in UTF-8
    /// databases), keeps quoted ones as written, and truncates both to 63 bytes. SQLite
    /// compares function names ignoring ASCII case, quoted or not. ClickHouse matches a name as
    /// written, quoted or not, and a case-insensitive function's in any case.
    pub fn resolve(&self, written: &Written<'_>) -> String {
        self.dialect.rules().resolve_function(written, self)
    }

    /// Whether a function is listed under exactly this name, in any schema.
    pub(crate) fn lists_exactly(&self, name: &str) -> bool {
        self.functions.any_schema.contains_key(name)
    }

    /// Whether the engine matches the function `lower` (lower-case) in any case.
    pub(crate) fn is_case_insensitive(&self, lower: &str) -> bool {
        self.case_insensitive.contains(lower)
    }

    /// Whether `name` (optionally schema-qualified) may be called as a function.
    pub fn function(&self, schema: Option<Written<'_>>, name: Written<'_>) -> Verdict {
        let schema = schema.map(|s| self.resolve(&s));
        self.functions.verdict(schema.as_deref(), &self.resolve(&name))
    }

    /// True when `name` is one of PostgreSQL's syntax forms shown as a call (`COALESCE(…)`).
    pub fn is_syntax_form(&self, schema: Option<&Written<'_>>, name: &Written<'_>) -> bool {
        schema.is_none()
            && !name.quoted
            && self
                .dialect
                .rules()
                .syntax_forms()
                .contains(&name.text.to_ascii_lowercase().as_str())
    }

    /// Whether the operator `symbol` (optionally schema-qualified) may run.
    pub fn operator(&self, schema: Option<Written<'_>>, symbol: &str) -> Verdict {
        let schema = schema.map(|s| self.resolve(&s));
        self.operators.verdict(schema.as_deref(), symbol)
    }

    /// True when a cast or typed literal to this type may not run (a type not in the catalog
    /// is not refused here: PostgreSQL then fails on its own, having run nothing).
    pub fn is_unsafe_type(&self, schema: Option<Written<'_>>, name: Written<'_>) -> bool {
        let schema = schema.map(|s| self.resolve(&s));
        self.unsafe_types.verdict(schema.as_deref(), &self.resolve(&name)) == Verdict::Refused
    }

    /// True when `t.name` may call a refused function by attribute notation.
    pub fn is_attribute_call(&self, name: Written<'_>) -> bool {
        self.attribute_calls.contains(&self.resolve(&name))
    }

    /// An allowed function spelled like `wanted`, for a did-you-mean.
    pub fn similar_function(&self, wanted: &str) -> Option<String> {
        let allowed =
            self.functions.any_schema.iter().filter(|(_, ok)| **ok).map(|(name, _)| name.as_str());
        schemascope_core::suggest::closest(wanted, allowed, 1).into_iter().next()
    }

    /// How many function names the allow-list knows (allowed or not), for messages and tests.
    pub fn function_count(&self) -> usize {
        self.functions.any_schema.len()
    }
}

/// `name` cut to PostgreSQL's 63 bytes, at a character boundary as PostgreSQL cuts it.
pub(crate) fn truncate_identifier(mut name: String) -> String {
    if name.len() > POSTGRES_NAME_BYTES {
        let mut end = POSTGRES_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare(text: &str) -> Written<'_> {
        Written { text, quoted: false }
    }

    #[test]
    fn a_name_is_allowed_only_when_every_overload_in_every_schema_is() {
        let mut c = Callables::new(SqlDialect::Postgres);
        c.add_function(Some("pg_catalog"), "ts_rewrite", true);
        c.add_function(Some("pg_catalog"), "ts_rewrite", false);
        c.add_function(Some("pg_catalog"), "lower", true);
        c.add_function(Some("public"), "lower", false);
        assert_eq!(c.function(None, bare("ts_rewrite")), Verdict::Refused);
        assert_eq!(
            c.function(None, bare("lower")),
            Verdict::Refused,
            "a same-named function elsewhere taints the bare name"
        );
        assert_eq!(c.function(Some(bare("pg_catalog")), bare("lower")), Verdict::Allowed);
        assert_eq!(c.function(Some(bare("public")), bare("lower")), Verdict::Refused);
        assert_eq!(c.function(Some(bare("nowhere")), bare("lower")), Verdict::Unknown);
    }

    #[test]
    fn postgres_folds_unquoted_names_and_truncates_to_63_bytes() {
        let mut c = Callables::new(SqlDialect::Postgres);
        let long = "f".repeat(63);
        c.add_function(Some("public"), &long, false);
        c.add_function(Some("public"), "MixedCase", true);
        assert_eq!(c.function(None, bare(&format!("{long}_ignored_tail"))), Verdict::Refused);
        assert_eq!(
            c.function(None, Written { text: &format!("{}é", "F".repeat(62)), quoted: true }),
            Verdict::Unknown
        );
        assert_eq!(
            c.function(None, bare("MixedCase")),
            Verdict::Unknown,
            "unquoted folds to mixedcase"
        );
        assert_eq!(c.function(None, Written { text: "MixedCase", quoted: true }), Verdict::Allowed);
        assert_eq!(
            truncate_identifier(format!("{}é", "a".repeat(62))),
            "a".repeat(62),
            "never inside a character"
        );
    }

    #[test]
    fn sqlite_ignores_case_quoted_or_not() {
        let mut c = Callables::new(SqlDialect::Sqlite);
        c.add_function(None, "load_extension", false);
        c.add_function(None, "abs", true);
        assert_eq!(
            c.function(None, Written { text: "LOAD_EXTENSION", quoted: true }),
            Verdict::Refused
        );
        assert_eq!(c.function(None, bare("Abs")), Verdict::Allowed);
        assert!(
            !c.is_syntax_form(None, &bare("coalesce")),
            "SQLite's coalesce is a function in its list"
        );
    }
}
