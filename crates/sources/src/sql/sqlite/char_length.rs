//! The length of a text in characters, every one counted. SQLite's own `length()` stops at a
//! text's first NUL (`length('ab' || char(0) || 'cd')` is 2), so a profile's text lengths
//! would understate every value holding one, while the values themselves are read whole.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error};

/// The function's name, as the profile's statements call it and the gate allows it.
pub(crate) const CHAR_LENGTH: &str = "schemascope_char_length";

/// The characters of `bytes` as the bundled SQLite's `length()` counts them (an ASCII byte is
/// one; any other byte starts one and takes the continuation bytes after it), without
/// stopping at a NUL: so valid UTF-8 gives its character count, and a text without a NUL
/// what `length()` gives, invalid UTF-8 included.
fn characters(bytes: &[u8]) -> i64 {
    let mut count = 0i64;
    let mut i = 0;
    while i < bytes.len() {
        let lead = bytes[i];
        i += 1;
        if lead >= 0x80 {
            while i < bytes.len() && bytes[i] & 0xc0 == 0x80 {
                i += 1;
            }
        }
        count += 1;
    }
    count
}

/// Registers [`CHAR_LENGTH`] on `connection`: a text's characters; NULL for anything else
/// (the profile calls it for texts only, and `length()` for the rest).
pub(crate) fn install(connection: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    connection.create_scalar_function(
        CHAR_LENGTH,
        1,
        flags,
        |context: &Context<'_>| -> Result<Option<i64>, Error> {
            Ok(match context.get_raw(0) {
                ValueRef::Text(bytes) => Some(characters(bytes)),
                _ => None,
            })
        },
    )
}

/// The length of `expr` in characters as the profile counts them: [`CHAR_LENGTH`] for a text,
/// SQLite's `length()` for a number (its text's) or a blob (its bytes).
pub(crate) fn length_sql(expr: &str) -> String {
    format!(
        "(CASE WHEN typeof({expr}) = 'text' THEN {CHAR_LENGTH}({expr}) ELSE length({expr}) END)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a NUL it is SQLite's `length()` on every kind of byte sequence, valid UTF-8 or
    /// not; with NULs, it counts past them.
    #[test]
    fn counts_as_sqlite_length_does_and_past_every_nul() {
        let connection = Connection::open_in_memory().expect("open");
        install(&connection).expect("install");
        let mut rng = fastrand::Rng::with_seed(11);
        let pieces: [&[u8]; 9] = [
            b"a",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\x80",
            b"\xc3",
            b"\xff",
            b"\xe2\x82",
            b" ",
        ];
        for _ in 0..3_000 {
            let mut text = Vec::new();
            for _ in 0..rng.usize(0..12) {
                text.extend_from_slice(pieces[rng.usize(..pieces.len())]);
            }
            let (ours, theirs): (i64, i64) = connection
                .query_row(
                    &format!("SELECT {CHAR_LENGTH}(CAST(?1 AS TEXT)), length(CAST(?1 AS TEXT))"),
                    [&text],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .expect("lengths");
            assert_eq!(ours, theirs, "{text:?}");
            assert_eq!(ours, characters(&text));
        }
        let with_nuls: (i64, i64, Option<i64>, i64, i64) = connection
            .query_row(
                &format!(
                    "SELECT {CHAR_LENGTH}(?1), length(?1), {CHAR_LENGTH}(x'00'), {}, {}",
                    length_sql("?2"),
                    length_sql("12.5")
                ),
                rusqlite::params!["ab\0cd\0é", "日\0本"],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
            )
            .expect("lengths");
        assert_eq!(with_nuls, (7, 2, None, 3, 4));
    }
}
