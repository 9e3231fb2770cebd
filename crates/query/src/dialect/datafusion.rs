//! Apache DataFusion's rules (the engine schemascope embeds for SQL over files and in-memory
//! collections): PostgreSQL's spellings, unquoted names folded to lower case, no schemas (every
//! served table is one bare name), and no table functions: a name in FROM is a served table or
//! nothing, so no statement can reach a file or a generator the operator did not serve.

use super::{DialectRules, FunctionFamily, TableFunctions};
use crate::sql::{Callables, Written};

/// Apache DataFusion.
pub(super) struct DataFusion;

impl DialectRules for DataFusion {
    fn name(&self) -> &'static str {
        "DataFusion"
    }

    fn prompt_name(&self) -> &'static str {
        "datafusion"
    }

    /// DataFusion reads statements with sqlparser's generic dialect by default.
    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect {
        &sqlparser::dialect::GenericDialect {}
    }

    /// DataFusion follows PostgreSQL's spellings: `EXTRACT`, `date_trunc`, `to_char`,
    /// `strpos`, `ILIKE`.
    fn functions(&self) -> FunctionFamily {
        FunctionFamily::Postgres
    }

    fn table_functions(&self) -> TableFunctions {
        TableFunctions::Refused
    }

    fn refused_why(&self) -> &'static str {
        "DataFusion has no such function in this server's registry"
    }

    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    fn folds_unquoted_to_lower(&self) -> bool {
        true
    }

    /// DataFusion folds unquoted identifiers to lower case and keeps quoted ones as written;
    /// its registry holds lower-case names.
    fn resolve_function(&self, written: &Written<'_>, _: &Callables) -> String {
        if written.quoted { written.text.to_string() } else { written.text.to_ascii_lowercase() }
    }

    fn cte_key(&self, text: &str, quoted: bool) -> String {
        if quoted { text.to_string() } else { text.to_ascii_lowercase() }
    }

    /// Grammar forms sqlparser shows as calls but DataFusion plans as expressions of its own.
    fn syntax_forms(&self) -> &'static [&'static str] {
        &["all", "any", "some", "current_date", "current_time", "current_timestamp", "array", "row"]
    }

    fn to_char_takes_strftime(&self) -> bool {
        true
    }

    fn relation_name_is_row(&self) -> bool {
        false
    }

    /// DataFusion types a bare parameter from its context, which a structured query's
    /// comparisons do not always give: the value's JSON type is cast to explicitly.
    fn typed_param(&self, n: usize, cast: &str) -> String {
        format!("CAST(${n} AS {cast})")
    }
}
