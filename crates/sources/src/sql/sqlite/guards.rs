//! SQLite functions whose work grows as the product of their arguments' lengths, guarded.
//!
//! One function call runs inside one step of the engine, where the progress handler (the
//! statement deadline) cannot stop it. `instr`, `replace`, `trim`, `ltrim`, `rtrim` and
//! `unhex` compare every position of one argument with the whole of another: at the length
//! limit (16 MiB) a single call could run for hours (`trim` of 200 KB by a 100 KB set already
//! takes a minute). Each is replaced, on every pooled connection, by a guard that estimates
//! the work from the argument sizes and refuses a call over [`MAX_WORK`]; a call within it is
//! computed by SQLite's own function on a private in-memory connection, so results are the
//! engine's to the byte.

use std::sync::Mutex;

use schemascope_core::sync::lock;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, Error};

use super::SQLITE_MAX_LENGTH;

/// Byte comparisons one guarded call may make at most: well under a second.
pub(super) const MAX_WORK: u128 = 1_000_000_000;

/// The guarded functions: name, argument count, and which two arguments' lengths multiply.
const GUARDED: &[(&str, i32, usize, usize)] = &[
    ("instr", 2, 0, 1),
    ("replace", 3, 0, 1),
    ("trim", 2, 0, 1),
    ("ltrim", 2, 0, 1),
    ("rtrim", 2, 0, 1),
    ("unhex", 2, 0, 1),
];

/// The bytes SQLite works through for one argument (numbers become short texts).
fn size(value: ValueRef<'_>) -> u128 {
    match value {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => bytes.len() as u128,
        ValueRef::Integer(_) | ValueRef::Real(_) => 32,
        ValueRef::Null => 0,
    }
}

/// Installs the guards on `connection`.
pub(crate) fn install(connection: &Connection) -> rusqlite::Result<()> {
    for &(name, args, a, b) in GUARDED {
        let engine = Connection::open_in_memory()?;
        engine.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, SQLITE_MAX_LENGTH)?;
        let placeholders: Vec<String> = (1..=args).map(|i| format!("?{i}")).collect();
        let sql = format!("SELECT {name}({})", placeholders.join(", "));
        let engine = Mutex::new(engine);
        let flags = FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS;
        connection.create_scalar_function(name, args, flags, move |context: &Context<'_>| -> rusqlite::Result<Value> {
            let (left, right) = (size(context.get_raw(a)), size(context.get_raw(b)));
            if left.saturating_mul(right) > MAX_WORK {
                return Err(Error::UserFunctionError(
                    format!(
                        "{name}() over {left} and {right} bytes would make more than {MAX_WORK} comparisons inside one step of SQLite, where the statement timeout cannot stop it; narrow the values"
                    )
                    .into(),
                ));
            }
            // Each call runs one whole statement on the engine, and a statement dropped while
            // unwinding is reset: a call that panicked leaves the engine as usable as before.
            let engine = lock(&engine);
            let mut statement = engine.prepare_cached(&sql)?;
            let values: Vec<ToSqlOutput<'_>> = (0..context.len()).map(|i| ToSqlOutput::Borrowed(context.get_raw(i))).collect();
            statement.query_row(rusqlite::params_from_iter(values.iter()), |row| row.get::<_, Value>(0))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_functions_give_the_engines_results_and_refuse_quadratic_calls() {
        let connection = Connection::open_in_memory().expect("open");
        let plain = Connection::open_in_memory().expect("open");
        install(&connection).expect("install");
        for sql in [
            "SELECT instr('hello', 'l'), instr(x'0102', x'02'), instr(12345, 34), instr('é-é', '-'), instr(NULL, 'a'), instr('a', '')",
            "SELECT replace('aXbX', 'X', 'yy'), replace(1.5, '5', '6'), replace(x'4142', 'B', 'C'), replace('a', '', 'z'), replace(NULL, 'a', 'b'), replace(1e100, 'e', 'E')",
            "SELECT trim('xxaxx', 'x'), ltrim('  a'), rtrim('ayy', 'y'), ltrim(123, 1), unhex('41-42', '-'), typeof(replace(1, 1, 2))",
        ] {
            let read = |c: &Connection| -> Vec<Value> {
                c.query_row(sql, [], |row| {
                    (0..6).map(|i| row.get::<_, Value>(i)).collect::<rusqlite::Result<Vec<_>>>()
                })
                .expect(sql)
            };
            assert_eq!(read(&connection), read(&plain), "{sql}");
        }
        let error = connection
            .query_row(
                "SELECT trim(printf('%.*c', 200000, 'a'), printf('%.*c', 100000, 'b') || 'a')",
                [],
                |row| row.get::<_, Value>(0),
            )
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("trim() over 200000 and 100001 bytes")
                && error.contains("statement timeout cannot stop it"),
            "{error}"
        );
        let within = connection
            .query_row(
                "SELECT instr(printf('%.*c', 1000000, 'a'), printf('%.*c', 900, 'a') || 'b')",
                [],
                |row| row.get::<_, i64>(0),
            )
            .expect("within the budget");
        assert_eq!(within, 0);
    }
}
