//! ClickHouse's rules: names compared exactly (a few functions in any case), backslash escapes
//! in quoted identifiers, table functions refused by construction, relations named inside
//! expressions, no structured queries.

use super::{DialectRules, FunctionFamily, TableFunctions};
use crate::sql::{Callables, Written};

/// ClickHouse.
pub(super) struct ClickHouse;

impl DialectRules for ClickHouse {
    fn name(&self) -> &'static str {
        "ClickHouse"
    }

    fn prompt_name(&self) -> &'static str {
        "clickhouse"
    }

    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect {
        &sqlparser::dialect::ClickHouseDialect {}
    }

    /// The dialect fixes ClickHouse has always been given are PostgreSQL's spellings.
    fn functions(&self) -> FunctionFamily {
        FunctionFamily::Postgres
    }

    fn table_functions(&self) -> TableFunctions {
        TableFunctions::Refused
    }

    fn refused_why(&self) -> &'static str {
        "it reaches files, models or other processes, or waits, outside the statement's data (or it is a user-defined function)"
    }

    /// ClickHouse binds no parameters: the database layer inlines `$n` as a literal.
    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    /// ClickHouse reads backslash escapes inside quoted identifiers. A name holding a double
    /// quote is quoted with backticks instead, so that no escape is needed: sqlparser's
    /// tokenizer (which checks every statement) and ClickHouse then read it alike. Only a name
    /// holding both needs ClickHouse's backslash escapes.
    fn quote(&self, name: &str) -> String {
        if !name.contains('\\') && !name.contains('"') {
            format!("\"{name}\"")
        } else if !name.contains('\\') && !name.contains('`') {
            format!("`{name}`")
        } else {
            format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
        }
    }

    /// ClickHouse compares no number with a string: the column's text is compared.
    fn compared_with_text(&self, expr: &str) -> String {
        format!("toString({expr})")
    }

    fn case_sensitive_names(&self) -> bool {
        true
    }

    /// ClickHouse matches a name as written, quoted or not, and a case-insensitive function's
    /// in any case.
    fn resolve_function(&self, written: &Written<'_>, callables: &Callables) -> String {
        let lower = written.text.to_ascii_lowercase();
        if !callables.lists_exactly(written.text) && callables.is_case_insensitive(&lower) {
            lower
        } else {
            written.text.to_string()
        }
    }

    /// ClickHouse compares CTE names as written.
    fn cte_key(&self, text: &str, _: bool) -> String {
        text.to_string()
    }

    fn relations_in_expressions(&self) -> bool {
        true
    }

    fn aliases_everywhere(&self) -> bool {
        true
    }

    fn compiles_structured(&self) -> bool {
        false
    }
}
