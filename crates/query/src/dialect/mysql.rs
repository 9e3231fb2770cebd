//! MySQL's and MariaDB's rules: backtick-quoted names, double-quoted strings (the default
//! `sql_mode`, without `ANSI_QUOTES`), `?` parameters, function names compared ignoring case,
//! lenient grouping, and no table functions. The two servers share the grammar and differ in
//! their functions and settings, which the database layer reads from the server it reaches.

use super::{DialectRules, FunctionFamily, TableFunctions};
use crate::sql::{Callables, Written};

/// Which of the two servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    /// Oracle's MySQL.
    MySql,
    /// MariaDB.
    MariaDb,
}

/// MySQL or MariaDB.
pub(super) struct MySql(pub(super) Flavor);

impl DialectRules for MySql {
    fn name(&self) -> &'static str {
        match self.0 {
            Flavor::MySql => "MySQL",
            Flavor::MariaDb => "MariaDB",
        }
    }

    fn prompt_name(&self) -> &'static str {
        match self.0 {
            Flavor::MySql => "mysql",
            Flavor::MariaDb => "mariadb",
        }
    }

    fn parser(&self) -> &'static dyn sqlparser::dialect::Dialect {
        &sqlparser::dialect::MySqlDialect {}
    }

    fn functions(&self) -> FunctionFamily {
        FunctionFamily::MySql
    }

    /// `JSON_TABLE(…)` is MySQL's only table function; it reads a document of the statement,
    /// and is judged as any other function.
    fn table_functions(&self) -> TableFunctions {
        TableFunctions::Functions
    }

    fn refused_why(&self) -> &'static str {
        "it waits, takes locks, reads server files, changes session state or modifies data (a stored function runs only when it is declared DETERMINISTIC or READS SQL DATA and not MODIFIES SQL DATA)"
    }

    /// Parameters are positional: the `n`-th `?` takes the `n`-th value.
    fn param(&self, _: usize) -> String {
        "?".into()
    }

    /// A function or table may be qualified by its database (`shop.net_price(…)`).
    fn has_schemas(&self) -> bool {
        true
    }

    fn quote(&self, name: &str) -> String {
        format!("`{}`", name.replace('`', "``"))
    }

    /// A source's tables are those of one database, named without it: a dot is part of the
    /// name (`` `sales.2024` ``).
    fn quote_table(&self, name: &str) -> String {
        self.quote(name)
    }

    /// Function names are compared ignoring case, quoted or not.
    fn stored_function_name(&self, name: &str) -> String {
        name.to_ascii_lowercase()
    }

    fn resolve_function(&self, written: &Written<'_>, _: &Callables) -> String {
        written.text.to_ascii_lowercase()
    }

    /// Names MySQL's grammar reads as expressions of its own rather than calls of its
    /// function list.
    fn syntax_forms(&self) -> &'static [&'static str] {
        &[
            "current_date",
            "current_time",
            "current_timestamp",
            "localtime",
            "localtimestamp",
            "current_user",
            "all",
            "any",
            "some",
            "row",
            "interval",
        ]
    }

    /// MySQL runs a bare column beside aggregates unless `ONLY_FULL_GROUP_BY` is set, and
    /// compares text with numbers.
    fn lenient(&self) -> bool {
        true
    }

    fn double_quoted_strings(&self) -> bool {
        true
    }

    fn relation_name_is_row(&self) -> bool {
        false
    }

    /// The value's text compared code point by code point, trailing spaces included (the
    /// columns' own collations ignore case and pad): its binary collation without padding.
    fn compared_with_text(&self, expr: &str) -> String {
        let collation = match self.0 {
            Flavor::MariaDb => "utf8mb4_nopad_bin",
            Flavor::MySql => "utf8mb4_0900_bin",
        };
        format!("(CONVERT({expr} USING utf8mb4) COLLATE {collation})")
    }

    fn executable_comments(&self) -> bool {
        true
    }

    fn compiles_structured(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_backquoted_whole_and_text_compared_without_collation() {
        let rules = MySql(Flavor::MariaDb);
        assert_eq!(rules.quote_table("sales.2024"), "`sales.2024`", "a dot is part of the name");
        assert_eq!(rules.quote("we`ird"), "`we``ird`");
        assert_eq!(
            rules.compared_with_text("`Country`"),
            "(CONVERT(`Country` USING utf8mb4) COLLATE utf8mb4_nopad_bin)"
        );
        assert!(MySql(Flavor::MySql).compared_with_text("c").contains("utf8mb4_0900_bin"));
    }
}
