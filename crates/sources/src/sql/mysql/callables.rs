//! What a MySQL or MariaDB statement may call, from the server's own lists: its built-in
//! functions (MariaDB's `information_schema.SQL_FUNCTIONS`; the function words of its grammar,
//! `information_schema.KEYWORDS`; the functions its help tables document, `mysql.help_topic`,
//! which is MySQL's only list) and its stored functions with what their definers declared
//! (`information_schema.ROUTINES`).
//!
//! Neither server says what a built-in touches, so the allow-list is every built-in the server
//! lists, less those MySQL and MariaDB document as waiting, locking, reading server files or
//! changing session or sequence state ([`REACHES_OUTSIDE`]). A stored function runs only when
//! its definer declared it `DETERMINISTIC` or `READS SQL DATA`, and never `MODIFIES SQL DATA`;
//! the read-only transaction every statement runs in is the layer under this one (it refuses
//! the writes of a function whose declaration lies). Loadable functions (`CREATE FUNCTION …
//! SONAME`, native code) are in no list read here, and so are refused.

use schemascope_query::{Callables, SqlDialect};

/// Built-ins that wait (`SLEEP`, `BENCHMARK`, the replication waits), take or inspect named
/// locks, read files of the server host (`LOAD_FILE`; `DES_ENCRYPT`/`DES_DECRYPT` read the
/// key file; `BINLOG_GTID_POS` the binary logs), or change session or sequence state
/// (`LAST_INSERT_ID(x)`, `NEXTVAL`, `SETVAL`, `LASTVAL`).
pub(super) const REACHES_OUTSIDE: &[&str] = &[
    "sleep",
    "benchmark",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "is_free_lock",
    "is_used_lock",
    "load_file",
    "master_pos_wait",
    "master_gtid_wait",
    "source_pos_wait",
    "wait_for_executed_gtid_set",
    "wait_until_sql_thread_after_gtids",
    "wsrep_sync_wait_upto_gtid",
    "binlog_gtid_pos",
    "des_encrypt",
    "des_decrypt",
    "last_insert_id",
    "nextval",
    "setval",
    "lastval",
];

/// One stored function as `information_schema.ROUTINES` describes it.
pub(super) struct StoredFunction {
    /// Its database.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// `NO SQL`, `CONTAINS SQL`, `READS SQL DATA` or `MODIFIES SQL DATA`.
    pub data_access: String,
    /// Declared `DETERMINISTIC`.
    pub deterministic: bool,
}

/// Whether a stored function of the served `database` may run, by what its definer declared.
/// A function of another database never runs: it would read that database's tables with its
/// definer's rights, past the tables the source serves.
pub(super) fn stored_function_allowed(function: &StoredFunction, database: &str) -> bool {
    let access = function.data_access.to_ascii_uppercase();
    function.schema == database
        && access != "MODIFIES SQL DATA"
        && (function.deterministic || access == "READS SQL DATA")
}

/// Whether a name a server lists could be a function's (help topics also name statements,
/// `SELECT`, `ALTER TABLE`, and operators, `<=>`).
fn function_like(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The allow-list from the built-in names a server lists and its stored functions, for a
/// source serving `database`.
pub(super) fn allow_list(
    dialect: SqlDialect,
    database: &str,
    built_ins: &[String],
    stored: &[StoredFunction],
) -> Callables {
    let mut callables = Callables::new(dialect);
    for name in built_ins.iter().filter(|n| function_like(n)) {
        let lower = name.to_ascii_lowercase();
        let allowed = !REACHES_OUTSIDE.contains(&lower.as_str());
        callables.add_function(None, &lower, allowed);
    }
    for function in stored {
        let allowed = stored_function_allowed(function, database);
        let lower = function.name.to_ascii_lowercase();
        // Qualifiers are looked up in lower case, as function names are.
        let schema = function.schema.to_ascii_lowercase();
        if function.schema == database {
            callables.add_function(Some(&schema), &lower, allowed);
        } else {
            // Unqualified, a name reaches the served database's functions only.
            callables.add_qualified_function(&schema, &lower, allowed);
        }
    }
    callables
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemascope_query::{Verdict, Written};

    fn bare(text: &str) -> Written<'_> {
        Written { text, quoted: false }
    }

    #[test]
    fn built_ins_that_wait_lock_or_read_files_are_refused_and_the_rest_allowed() {
        let names: Vec<String> =
            ["SLEEP", "ABS", "LOAD_FILE", "DATE_FORMAT", "SELECT", "ALTER TABLE", "<=>"]
                .map(String::from)
                .to_vec();
        let c = allow_list(SqlDialect::MariaDb, "shop", &names, &[]);
        assert_eq!(c.function(None, bare("abs")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("Date_Format")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("sleep")), Verdict::Refused);
        assert_eq!(c.function(None, bare("load_file")), Verdict::Refused);
        assert_eq!(c.function(None, bare("sys_exec")), Verdict::Unknown);
    }

    #[test]
    fn stored_functions_run_only_as_their_definers_declared_them_harmless() {
        let f = |name: &str, access: &str, deterministic: bool| StoredFunction {
            schema: "shop".into(),
            name: name.into(),
            data_access: access.into(),
            deterministic,
        };
        let c = allow_list(
            SqlDialect::MySql,
            "shop",
            &[],
            &[
                f("net_price", "NO SQL", true),
                f("customer_name", "READS SQL DATA", false),
                f("bump", "MODIFIES SQL DATA", true),
                f("noisy", "CONTAINS SQL", false),
                StoredFunction { schema: "other".into(), ..f("elsewhere", "NO SQL", true) },
            ],
        );
        assert_eq!(c.function(None, bare("net_price")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("customer_name")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("bump")), Verdict::Refused);
        assert_eq!(c.function(None, bare("noisy")), Verdict::Refused);
        assert_eq!(
            c.function(Some(bare("other")), bare("elsewhere")),
            Verdict::Refused,
            "another database's function reads past the served tables"
        );
        assert_eq!(c.function(Some(bare("shop")), bare("net_price")), Verdict::Allowed);
        assert_eq!(c.function(None, bare("elsewhere")), Verdict::Unknown, "not reached bare");
    }
}
