//! PostgreSQL's rules: schemas, unquoted names folded to lower case and cut to 63 bytes,
//! statements read with its own grammar, and functions behind operators, casts, typed literals
//! and attribute notation.

use super::{DialectRules, FunctionFamily, TableFunctions};
use crate::sql::callables::truncate_identifier;
use crate::sql::{Callables, Written};

/// PostgreSQL.
pub(super) struct Postgres;

/// Names PostgreSQL's grammar turns into expressions of its own (`COALESCE`, `CURRENT_DATE`,
/// `ARRAY(subquery)`, the SQL/XML and SQL/JSON forms), which sqlparser shows as function calls
/// but which are not `pg_proc` functions. They count as syntax only unquoted and unqualified:
/// `"coalesce"(…)` is a call of a function of that name, which does not exist.
const SYNTAX_FORMS: &[&str] = &[
    // `x LIKE ALL (array)`, `x = SOME (…)`: sqlparser reads the quantifier as a call; the
    // operator before it is checked on its own.
    "all",
    "any",
    "some",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "current_user",
    "current_role",
    "session_user",
    "user",
    "current_catalog",
    "current_schema",
    "system_user",
    "array",
    "row",
    "grouping",
    "xmlconcat",
    "xmlelement",
    "xmlforest",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmlexists",
    "json",
    "json_object",
    "json_array",
    "json_arrayagg",
    "json_objectagg",
    "json_scalar",
    "json_serialize",
    "json_query",
    "json_value",
    "json_exists",
];

impl DialectRules for Postgres {
    fn name(&self) -> &'static str {
        "PostgreSQL"
    }

    fn prompt_name(&self) -> &'static str {
        "postgresql"
    }

    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect {
        &sqlparser::dialect::PostgreSqlDialect {}
    }

    fn functions(&self) -> FunctionFamily {
        FunctionFamily::Postgres
    }

    fn table_functions(&self) -> TableFunctions {
        TableFunctions::Functions
    }

    fn refused_why(&self) -> &'static str {
        "PostgreSQL declares it volatile or parallel-unsafe, so it may change data or session state, wait, or reach files, programs or other sessions (only immutable or stable, parallel-safe functions run, and a few harmless volatile ones such as random())"
    }

    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    fn has_schemas(&self) -> bool {
        true
    }

    fn folds_unquoted_to_lower(&self) -> bool {
        true
    }

    /// PostgreSQL folds unquoted identifiers to lower case (ASCII letters only, in UTF-8
    /// databases), keeps quoted ones as written, and truncates both to 63 bytes.
    fn resolve_function(&self, written: &Written<'_>, _: &Callables) -> String {
        let folded = if written.quoted {
            written.text.to_string()
        } else {
            written.text.to_ascii_lowercase()
        };
        truncate_identifier(folded)
    }

    /// PostgreSQL folds unquoted CTE names and keeps quoted ones.
    fn cte_key(&self, text: &str, quoted: bool) -> String {
        if quoted { text.to_string() } else { text.to_ascii_lowercase() }
    }

    fn syntax_forms(&self) -> &'static [&'static str] {
        SYNTAX_FORMS
    }

    fn own_grammar(&self) -> bool {
        true
    }

    fn calls_hide_in_syntax(&self) -> bool {
        true
    }

    fn unicode_escaped_identifiers(&self) -> bool {
        true
    }

    /// PostgreSQL types a bare parameter from its context, which a structured query's
    /// comparisons do not always give: the value's JSON type is cast to explicitly.
    fn typed_param(&self, n: usize, cast: &str) -> String {
        format!("CAST(${n} AS {cast})")
    }
}
