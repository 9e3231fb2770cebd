//! How a SQLite value reads as text, in rows and in the profile's statements alike: a text
//! decoded as UTF-8, any byte sequence that is not UTF-8 read as U+FFFD (as Rust's lossy
//! decoding does); a blob described by its size and a digest of its bytes, so two different
//! blobs never read alike (nor count as one distinct value).
//!
//! SQLite's own `length()` stops at a text's first NUL (`length('ab' || char(0) || 'cd')` is 2)
//! and counts invalid UTF-8 its own way, so the profile's statements measure texts with
//! [`CHAR_LENGTH`], which counts the characters of the text as it is read here; and describe
//! blobs with [`BLOB_DESCRIPTION`], the same description rows get. A value lookup compares a
//! value as it is shown too ([`shown_value_predicate`]): a blob by its description, a number
//! as a number.

use std::borrow::Cow;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Error};
use sha2::Digest;

/// The profile's function measuring a text, as its statements call it and the gate allows it.
pub(crate) const CHAR_LENGTH: &str = "schemascope_char_length";

/// The profile's function describing a blob.
pub(crate) const BLOB_DESCRIPTION: &str = "schemascope_blob_description";

/// A text's bytes as read: invalid UTF-8 replaced, each maximal invalid sequence by one U+FFFD.
pub(crate) fn decoded(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// How a blob's description starts.
const BLOB_START: &str = "<blob: ";

/// A blob as read: `<blob: N bytes, sha256 H>` with the first 16 hex digits of its SHA-256.
pub(crate) fn blob_description(bytes: &[u8]) -> String {
    let digest = sha2::Sha256::digest(bytes);
    let head: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{BLOB_START}{} bytes, sha256 {head}>", bytes.len())
}

/// The predicate "column `quoted` holds the value `param` (whose text is `value`)": the plain
/// comparison, which keeps the column's affinity (an INTEGER column finds `'5'`); where `value`
/// is a number, the number too (a column without numeric affinity compares `'5'` with 5 as
/// texts, unequal); where it reads as a blob's description, the blobs by theirs; where it is
/// `Infinity` or `-Infinity`, that double.
pub(crate) fn shown_value_predicate(quoted: &str, param: &str, value: &str) -> String {
    // By bytes, as the profile counts values: a NOCASE column's `'abc'` is not its `'ABC'`, and
    // a collation of the application that made the file (which this connection lacks) is
    // never needed.
    let bytes = format!("{quoted} COLLATE BINARY");
    let mut alternatives = vec![format!("{bytes} = {param}")];
    if let Some(number) = number_literal(value) {
        // Numbers only: a TEXT column turns the literal into its text, so `1.00` would find
        // the text '1.0'.
        alternatives
            .push(format!("(typeof({quoted}) IN ('integer', 'real') AND {bytes} = {number})"));
    }
    if value.starts_with(BLOB_START) {
        alternatives.push(format!(
            "(typeof({quoted}) = 'blob' AND {BLOB_DESCRIPTION}({quoted}) = {param})"
        ));
    }
    // An infinite double reads as these texts ([`view_sql`]); 9e999 is SQLite's infinity.
    match value {
        "Infinity" => alternatives.push(format!("{bytes} = 9e999")),
        "-Infinity" => alternatives.push(format!("{bytes} = -9e999")),
        _ => {}
    }
    format!("({})", alternatives.join(" OR "))
}

/// `value` as a SQL number literal, when it is a finite number: an integer as itself, another
/// number as the shortest decimal that reads back as its double.
fn number_literal(value: &str) -> Option<String> {
    let value = value.trim();
    if let Ok(integer) = value.parse::<i64>() {
        return Some(integer.to_string());
    }
    let number = value.parse::<f64>().ok().filter(|n| n.is_finite())?;
    // `{:?}` never writes `inf` or `NaN` here, and writes an exponent SQLite reads (`1e300`).
    Some(format!("{number:?}"))
}

/// The characters of [`decoded`]`(bytes)`, without making it.
fn characters(bytes: &[u8]) -> i64 {
    let mut count = 0usize;
    for chunk in bytes.utf8_chunks() {
        count += chunk.valid().chars().count() + usize::from(!chunk.invalid().is_empty());
    }
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Registers [`CHAR_LENGTH`] (a text's characters; NULL for anything else) and
/// [`BLOB_DESCRIPTION`] (a blob's description; NULL for anything else) on `connection`.
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
    )?;
    connection.create_scalar_function(
        BLOB_DESCRIPTION,
        1,
        flags,
        |context: &Context<'_>| -> Result<Option<String>, Error> {
            Ok(match context.get_raw(0) {
                ValueRef::Blob(bytes) => Some(blob_description(bytes)),
                _ => None,
            })
        },
    )
}

/// The length of `expr` in characters as the profile counts them: [`CHAR_LENGTH`] for a text,
/// SQLite's `length()` for a number (its text's).
pub(crate) fn length_sql(expr: &str) -> String {
    format!(
        "(CASE WHEN typeof({expr}) = 'text' THEN {CHAR_LENGTH}({expr}) ELSE length({expr}) END)"
    )
}

/// Column `quoted` as the profile reads it: a blob described, an infinite double as the text
/// rows show it ("Infinity", "-Infinity": JSON has no such number; SQLite stores no NaN), anything
/// else as it is.
pub(crate) fn view_sql(quoted: &str) -> String {
    format!(
        "CASE WHEN typeof({quoted}) = 'blob' THEN {BLOB_DESCRIPTION}({quoted}) \
         WHEN typeof({quoted}) = 'real' AND abs({quoted}) > 1.7976931348623157e308 \
         THEN CASE WHEN {quoted} COLLATE BINARY > 0 THEN 'Infinity' ELSE '-Infinity' END \
         ELSE {quoted} END"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a NUL, valid UTF-8 measures as SQLite's `length()` does; every text, valid or
    /// not, NULs or not, measures as the text it reads as.
    #[test]
    fn texts_measure_as_they_read() {
        let connection = Connection::open_in_memory().expect("open");
        install(&connection).expect("install");
        let mut rng = fastrand::Rng::with_seed(11);
        let pieces: [&[u8]; 11] = [
            b"a",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\x80",
            b"\xc3",
            b"\xff",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\0",
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
            assert_eq!(ours as usize, decoded(&text).chars().count(), "{text:?}");
            if std::str::from_utf8(&text).is_ok() && !text.contains(&0) {
                assert_eq!(ours, theirs, "{text:?}");
            }
        }
        let lengths: (i64, i64, Option<i64>, i64, i64) = connection
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
        assert_eq!(lengths, (7, 2, None, 3, 4));
    }

    /// Different blobs read differently, equal ones alike, in SQL as in rows; other values are
    /// left as they are.
    #[test]
    fn blobs_are_described_by_size_and_digest() {
        let connection = Connection::open_in_memory().expect("open");
        install(&connection).expect("install");
        let described: (String, String, String, String) = connection
            .query_row(
                &format!(
                    "SELECT {}, {}, {}, {}",
                    view_sql("x'010203'"),
                    view_sql("x'010204'"),
                    view_sql("zeroblob(0)"),
                    view_sql("'<blob: 3 bytes>'")
                ),
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .expect("described");
        assert_eq!(described.0, blob_description(&[1, 2, 3]));
        assert_eq!(described.0, "<blob: 3 bytes, sha256 039058c6f2c0cb49>");
        assert_ne!(described.0, described.1);
        assert_eq!(described.2, "<blob: 0 bytes, sha256 e3b0c44298fc1c14>");
        assert_eq!(described.3, "<blob: 3 bytes>", "a text stays itself");
    }
}
