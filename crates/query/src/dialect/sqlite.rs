//! SQLite's rules: dynamic typing and lenient checks, function names compared ignoring case,
//! table functions as virtual tables behind its own gate (the authorizer), which also decides
//! what sqlparser cannot read.

use super::{DialectRules, FunctionFamily, TableFunctions};
use crate::sql::{Callables, Written};

/// SQLite.
pub(super) struct Sqlite;

impl DialectRules for Sqlite {
    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn prompt_name(&self) -> &'static str {
        "sqlite"
    }

    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect {
        &sqlparser::dialect::SQLiteDialect {}
    }

    fn functions(&self) -> FunctionFamily {
        FunctionFamily::Sqlite
    }

    fn table_functions(&self) -> TableFunctions {
        TableFunctions::VirtualTables
    }

    fn refused_why(&self) -> &'static str {
        "SQLite marks it direct-only (it loads code, reaches files or writes logs)"
    }

    fn param(&self, n: usize) -> String {
        format!("?{n}")
    }

    /// SQLite compares function names ignoring ASCII case, so they are kept lower-case.
    fn stored_function_name(&self, name: &str) -> String {
        name.to_ascii_lowercase()
    }

    /// SQLite compares function names ignoring ASCII case, quoted or not.
    fn resolve_function(&self, written: &Written<'_>, _: &Callables) -> String {
        written.text.to_ascii_lowercase()
    }

    fn engine_decides_unparsed(&self) -> bool {
        true
    }

    fn lenient(&self) -> bool {
        true
    }

    fn double_quoted_strings(&self) -> bool {
        true
    }

    fn relation_name_is_row(&self) -> bool {
        false
    }

    fn aliases_everywhere(&self) -> bool {
        true
    }
}
