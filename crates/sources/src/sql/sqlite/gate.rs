//! SQLite's own gate on what a statement may do: an authorizer, called by the engine while it
//! compiles each statement, that allows reading the file's own schemas (`main`, `temp`: tables,
//! views, the schema table `sqlite_schema`, virtual tables such as
//! `json_each` and the read-only `pragma_*` tables, recursive CTEs) and calls of functions on
//! an allow-list, and denies everything else — writes, ATTACH, PRAGMA, transactions, schema
//! changes and any other function.
//!
//! While a statement runs (after it was compiled), the engine's own virtual tables compile
//! statements of their own — the `pragma_*` tables run their PRAGMA — and those are let
//! through: SQLite gives table-valued forms only to pragmas without side effects.
//!
//! The allow-list is what the engine reports in `PRAGMA function_list`, minus the functions it
//! marks direct-only (SQLITE_DIRECTONLY: `load_extension`, `fts3_tokenizer`, `sqlite_log`,
//! which load code or reach files and logs) — and `load_extension` by name, in case a build
//! ever drops the flag.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use schemascope_core::sync::lock;
use schemascope_query::sql::relations::RelationScope;
use schemascope_query::{Callables, SqlDialect};

/// The engine's flag for functions that must not run from triggers, views or schema code:
/// those that load code or reach files.
const DIRECTONLY: i64 = rusqlite::ffi::SQLITE_DIRECTONLY as i64;

/// Functions refused whatever their flags say.
const NEVER: &[&str] = &["load_extension"];

/// Table-valued functions SQLite registers only when a statement first names them (besides
/// the `pragma_*` ones).
const LAZY_MODULES: &[&str] = &["json_each", "json_tree"];

/// The function names the authorizer lets a statement call: those on the allow-list, and names
/// the engine does not have at all.
///
/// A name SQLite does not have cannot run: a statement calling it fails at name resolution
/// ("no such function"), before the authorizer is asked. SQLite asks about such a name only
/// when it walks a column's DEFAULT expression — which a SELECT of that column does (3.54),
/// for rows written before the column was added — and evaluates a default only when it is a
/// constant of functions it has. A table whose DEFAULT calls a function of the application that
/// made the file is therefore readable; one calling a refused function (`load_extension`) is not.
#[derive(Debug, Clone, Default)]
pub(crate) struct FunctionNames {
    /// Functions the engine has that a statement may call (lower-case).
    allowed: HashSet<String>,
    /// Every function the engine has, allowed or not (lower-case).
    known: HashSet<String>,
}

impl FunctionNames {
    /// Adds a function of our own (registered on every connection), allowed.
    pub(crate) fn allow(&mut self, name: &str) {
        self.allowed.insert(name.to_ascii_lowercase());
        self.known.insert(name.to_ascii_lowercase());
    }

    /// Whether the authorizer lets a call of `name` through.
    fn lets_through(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.allowed.contains(&name) || !self.known.contains(&name)
    }
}

/// The functions this SQLite build has, by name (lower-case), each allowed unless the engine
/// marks one of its overloads direct-only: the engine's answer, as the validator's
/// [`Callables`] and as the names the authorizer lets through.
pub(crate) fn function_list(
    connection: &Connection,
) -> rusqlite::Result<(Callables, FunctionNames)> {
    let mut statement = connection.prepare("SELECT name, flags FROM pragma_function_list")?;
    let rows =
        statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
    let mut callables = Callables::new(SqlDialect::Sqlite);
    callables.set_relation_scope(RelationScope::Sqlite);
    let (mut all, mut refused) = (HashSet::new(), HashSet::new());
    for row in rows {
        let (name, flags) = row?;
        let name = name.to_ascii_lowercase();
        let allowed = flags & DIRECTONLY == 0 && !NEVER.contains(&name.as_str());
        callables.add_function(None, &name, allowed);
        if !allowed {
            refused.insert(name.clone());
        }
        all.insert(name);
    }
    // Table-valued functions: the eponymous virtual tables, and one `pragma_<name>` per pragma
    // (SQLite makes those only for pragmas without side effects). SQLite registers its JSON
    // tables only when a statement first names them: naming them once here makes the module
    // list show them when this build has them.
    for lazy in LAZY_MODULES {
        let _ = connection.prepare(&format!("SELECT 1 FROM {lazy}('[]') LIMIT 0"));
    }
    let mut modules = connection.prepare("SELECT name FROM pragma_module_list")?;
    for name in modules.query_map([], |row| row.get::<_, String>(0))? {
        callables.add_table_function(&name?);
    }
    let mut pragmas = connection.prepare("SELECT name FROM pragma_pragma_list")?;
    for name in pragmas.query_map([], |row| row.get::<_, String>(0))? {
        callables.add_table_function(&format!("pragma_{}", name?));
    }
    let allowed = all.difference(&refused).cloned().collect();
    Ok((callables, FunctionNames { allowed, known: all }))
}

/// The gate's state on one connection.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    /// What the authorizer last denied, for the error message.
    denied: Mutex<Option<String>>,
    /// True while a statement runs (compiled and authorized already).
    running: AtomicBool,
}

impl Gate {
    /// What was last denied, taken.
    pub(crate) fn denied(&self) -> Option<String> {
        lock(&self.denied).take()
    }

    /// Marks the connection's statement as running (or done).
    pub(crate) fn running(&self, running: bool) {
        self.running.store(running, Ordering::Relaxed);
    }
}

/// Installs the gate on `connection`: from then on every statement it compiles is checked.
pub(crate) fn install(
    connection: &mut Connection,
    allowed: Arc<FunctionNames>,
) -> rusqlite::Result<Arc<Gate>> {
    let gate = Arc::new(Gate::default());
    let state = Arc::clone(&gate);
    connection.authorizer(Some(move |context: AuthContext<'_>| {
        let refusal = match context.action {
            // Only the file's own schemas are read: `main`, and `temp` (empty: nothing can be
            // created in it). ATTACH is denied below, so no other can exist; this holds if one
            // ever did.
            AuthAction::Read { table_name, .. }
                if !context.database_name.is_none_or(|db| {
                    db.eq_ignore_ascii_case("main") || db.eq_ignore_ascii_case("temp")
                }) =>
            {
                format!(
                    "reading {}.{table_name}: only this database file (main, temp) is read",
                    context.database_name.unwrap_or_default()
                )
            }
            AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
                return Authorization::Allow;
            }
            // A pragma_* table running its (side-effect-free) PRAGMA while the statement runs.
            AuthAction::Pragma { .. } if state.running.load(Ordering::Relaxed) => {
                return Authorization::Allow;
            }
            AuthAction::Function { function_name } if allowed.lets_through(function_name) => {
                return Authorization::Allow;
            }
            AuthAction::Function { function_name } => {
                format!("function {function_name} is not on the allow-list")
            }
            AuthAction::Pragma { pragma_name, .. } => format!("PRAGMA {pragma_name}"),
            AuthAction::Attach { .. } => "ATTACH".to_string(),
            // A virtual table's module (rtree) prepares writes to its own tables on connecting.
            AuthAction::Insert { table_name }
            | AuthAction::Delete { table_name }
            | AuthAction::Update { table_name, .. } => format!("writing to {table_name}"),
            other => format!("{other:?}"),
        };
        *lock(&state.denied) = Some(refusal);
        Authorization::Deny
    }))?;
    Ok(gate)
}

#[cfg(test)]
mod tests {
    use rusqlite::OpenFlags;

    use super::*;

    fn gated() -> (Connection, Arc<Gate>) {
        let mut connection =
            Connection::open_with_flags(":memory:", OpenFlags::SQLITE_OPEN_READ_WRITE)
                .expect("open");
        connection
            .execute_batch("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);")
            .expect("setup");
        let allowed = Arc::new(function_list(&connection).expect("function list").1);
        let denied = install(&mut connection, allowed).expect("install");
        (connection, denied)
    }

    #[test]
    fn reads_and_listed_functions_pass_everything_else_is_denied_by_the_engine() {
        let (connection, denied) = gated();
        for sql in [
            "SELECT abs(a), upper('x'), a LIKE 'x', json('[1]') -> 0 FROM t",
            "SELECT value FROM json_each('[1,2]')",
            "SELECT name FROM pragma_table_info(?1)",
            "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3) SELECT count(*) FROM r",
        ] {
            assert!(connection.prepare(sql).is_ok(), "{sql}");
        }
        for (sql, why) in [
            ("SELECT load_extension('x')", "load_extension"),
            ("SELECT \"LOAD_EXTENSION\"('x')", "LOAD_EXTENSION"),
            ("SELECT fts3_tokenizer('x')", "fts3_tokenizer"),
            ("SELECT sqlite_log(1, 'x')", "sqlite_log"),
            ("PRAGMA query_only = 0", "PRAGMA query_only"),
            ("PRAGMA user_version", "PRAGMA user_version"),
            ("ATTACH ':memory:' AS x", "ATTACH"),
            ("INSERT INTO t VALUES (2)", "writing to t"),
            ("DELETE FROM t", "writing to t"),
            ("CREATE TEMP TABLE u (b)", "writing to sqlite_temp_master"),
            ("BEGIN", "Transaction"),
        ] {
            let error = connection.prepare(sql).map(|_| ()).expect_err(sql).to_string();
            assert!(error.contains("not authorized"), "{sql}: {error}");
            let recorded = denied.denied().unwrap_or_default();
            assert!(recorded.to_lowercase().contains(&why.to_lowercase()), "{sql}: {recorded}");
        }
    }

    #[test]
    fn pragma_tables_run_their_pragma_only_once_the_statement_runs() {
        let (connection, gate) = gated();
        let mut statement =
            connection.prepare("SELECT name FROM pragma_table_info(?1)").expect("compiles");
        assert!(
            statement.query_row(["t"], |r| r.get::<_, String>(0)).is_err(),
            "stepping outside a run is refused"
        );
        gate.running(true);
        assert_eq!(statement.query_row(["t"], |r| r.get::<_, String>(0)).expect("runs"), "a");
        assert!(
            connection.prepare("PRAGMA query_only = 0").is_ok(),
            "only while running: the caller never compiles then"
        );
        gate.running(false);
        assert!(connection.prepare("PRAGMA query_only = 0").is_err());
    }

    #[test]
    fn the_allow_list_is_what_the_engine_lists_minus_direct_only() {
        let connection = Connection::open_in_memory().expect("open");
        let (callables, _) = function_list(&connection).expect("function list");
        use schemascope_query::{Verdict, Written};
        let bare = |text| Written { text, quoted: false };
        assert_eq!(callables.function(None, bare("ABS")), Verdict::Allowed);
        assert_eq!(callables.function(None, bare("load_extension")), Verdict::Refused);
        assert_eq!(callables.function(None, bare("sqlite_log")), Verdict::Refused);
        assert_eq!(
            callables.function(None, bare("readfile")),
            Verdict::Unknown,
            "the CLI's file functions are not in the library"
        );
        assert!(callables.function_count() > 100);
        assert_eq!(callables.table_function(bare("JSON_EACH")), Verdict::Allowed);
        assert_eq!(callables.table_function(bare("pragma_table_info")), Verdict::Allowed);
        assert_eq!(
            callables.table_function(bare("fsdir")),
            Verdict::Unknown,
            "the CLI's file listing is not in the library"
        );
    }
}
