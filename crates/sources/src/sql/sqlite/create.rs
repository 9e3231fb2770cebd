//! Creating an empty SQLite database from a catalog (tables, primary and foreign keys, no rows):
//! the schema-only databases of the retrieval evaluation. The one place schemascope writes a
//! database, and only a new file it was asked to create.

use std::path::Path;

use rusqlite::Connection;
use schemascope_core::{Catalog, TableKind};

use crate::error::SourceError;
use crate::sql::Dialect;

/// `declared` when it is a plain type name (words, then optional numeric parameters:
/// `VARCHAR(40)`, `DOUBLE PRECISION`, `NUMERIC(10, 2)`), else no type: a type is text from
/// a catalog file, and it is written into SQL.
fn plain_type(declared: &str) -> &str {
    let (name, params) = match declared.split_once('(') {
        Some((name, rest)) => (name, Some(rest)),
        None => (declared, None),
    };
    // Words only, none that starts a constraint or a collation (`TEXT COLLATE x` would name
    // a collation SQLite may not have).
    const CLAUSES: &[&str] = &[
        "collate",
        "check",
        "default",
        "references",
        "generated",
        "as",
        "primary",
        "unique",
        "not",
        "null",
        "constraint",
        "on",
    ];
    let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
        && !name.split_whitespace().any(|w| CLAUSES.iter().any(|c| c.eq_ignore_ascii_case(w)));
    let params_ok = params.is_none_or(|p| {
        p.strip_suffix(')')
            .is_some_and(|inner| inner.chars().all(|c| c.is_ascii_digit() || c == ',' || c == ' '))
    });
    if name_ok && params_ok { declared } else { "" }
}

/// `CREATE TABLE` statements for `catalog`'s tables (views are left out: they have no query here;
/// so are SQLite's own `sqlite_*` tables, which SQLite creates itself).
pub fn schema_ddl(catalog: &Catalog) -> String {
    let q = |name: &str| Dialect::Sqlite.quote(name);
    let mut ddl = String::new();
    let own = |name: &str| name.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("sqlite_"));
    for table in catalog.tables.iter().filter(|t| t.kind == TableKind::Table && !own(&t.name)) {
        let mut lines: Vec<String> = table
            .columns
            .iter()
            .map(|c| {
                format!(
                    "  {} {}{}",
                    q(&c.name),
                    plain_type(&c.declared_type),
                    if c.nullable { "" } else { " NOT NULL" }
                )
            })
            .collect();
        if !table.primary_key.is_empty() {
            lines.push(format!(
                "  PRIMARY KEY ({})",
                table.primary_key.iter().map(|c| q(c)).collect::<Vec<_>>().join(", ")
            ));
        }
        for fk in &table.foreign_keys {
            lines.push(format!(
                "  FOREIGN KEY ({}) REFERENCES {} ({})",
                fk.columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(", "),
                q(&fk.referenced_table),
                fk.referenced_columns.iter().map(|c| q(c)).collect::<Vec<_>>().join(", ")
            ));
        }
        ddl.push_str(&format!("CREATE TABLE {} (\n{}\n);\n", q(&table.name), lines.join(",\n")));
    }
    ddl
}

/// Creates a new SQLite file at `path` with `catalog`'s tables and no rows. Refuses to touch an
/// existing file.
pub fn create_schema_only(path: &Path, catalog: &Catalog) -> Result<(), SourceError> {
    let fail =
        |message: String| SourceError::Database { location: path.display().to_string(), message };
    if path.exists() {
        return Err(fail(
            "already exists; schema-only databases are only created as new files".into(),
        ));
    }
    let connection = Connection::open(path).map_err(|e| fail(format!("cannot create: {e}")))?;
    connection
        .execute_batch(&schema_ddl(catalog))
        .map_err(|e| fail(format!("cannot create the tables: {e}")))
}

/// Whether SQLite compiles `sql` against the database at `path` (opened read-only, with none of
/// the source's gates): the engine's plain verdict, which evaluations compare the validator
/// with. `Err` holds SQLite's message.
pub fn sqlite_compiles(path: &Path, sql: &str) -> Result<(), String> {
    let connection = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    connection.prepare(sql).map(drop).map_err(|e| e.to_string())
}

/// Creates a new SQLite file at `path` by running `script` (SQL statements, such as a dump) as
/// `sqlite3` would — only for scripts the user gives and trusts (`eval values`). Refuses to touch
/// an existing file; stops a script that runs past two minutes.
pub fn create_from_script(path: &Path, script: &str) -> Result<(), SourceError> {
    let fail =
        |message: String| SourceError::Database { location: path.display().to_string(), message };
    if path.exists() {
        return Err(fail("already exists; databases are only created as new files".into()));
    }
    let mut connection = Connection::open(path).map_err(|e| fail(format!("cannot create: {e}")))?;
    // A script that never ends (a recursive insert) is stopped.
    let started = std::time::Instant::now();
    connection
        .progress_handler(10_000, Some(move || started.elapsed() > SCRIPT_TIMEOUT))
        .map_err(|e| fail(format!("cannot set a time limit: {e}")))?;
    connection.execute_batch(script).map_err(|e| {
        if started.elapsed() > SCRIPT_TIMEOUT {
            fail(format!("the script ran past {} s and was stopped", SCRIPT_TIMEOUT.as_secs()))
        } else {
            fail(format!("the script failed: {e}"))
        }
    })
}

/// Longest a database-building script may run.
const SCRIPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

#[cfg(test)]
mod tests {
    use super::plain_type;

    #[test]
    fn only_plain_type_names_reach_the_ddl() {
        for plain in ["TEXT", "varchar(40)", "NUMERIC(10, 2)", "DOUBLE PRECISION", "", "int_8"] {
            assert_eq!(plain_type(plain), plain);
        }
        for hostile in [
            "TEXT); ATTACH 'x' AS y; CREATE TABLE y.z(a",
            "TEXT CHECK(load_extension(x))",
            "TEXT) , b INT, c (TEXT",
            "TEXT -- x",
            "'x'",
            "text COLLATE x",
            "INTEGER NOT NULL",
        ] {
            assert_eq!(plain_type(hostile), "", "{hostile}");
        }
    }
}
