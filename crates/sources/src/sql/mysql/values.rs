//! MySQL and MariaDB values as the binary protocol sends them, read by the column's type and
//! written as the `mysql` client shows them: integers and floats arrive as their bits, `DECIMAL`,
//! `JSON` and strings as text, dates and times as their fields, so nothing is rounded on the way.
//!
//! Integers become JSON integers (past `i64`, a `BIGINT UNSIGNED` keeps all its digits as
//! text), `YEAR` an integer, `BIT(n)` the unsigned integer of its bits, `DECIMAL` and floats
//! JSON numbers when the number written is exactly the server's value (else the exact text, the
//! rule of PostgreSQL's numbers; a `FLOAT` is the exact value of its single-precision float),
//! `JSON` its document (MariaDB's `JSON` columns, stored as text, named by the catalog). Binary strings (`BLOB`,
//! `BINARY`, `VARBINARY`, spatial values) are `0x` and their bytes in hex, as the client shows
//! them with `--binary-as-hex` and as SQL reads them back. Everything else — dates and times as
//! the server writes them (zero dates, `TIME` past 24 hours and fractions included), `ENUM` and
//! `SET` values, text in any character set (converted to UTF-8 by the server) — is its text.

use mysql::Value as Sent;
use mysql::consts::{ColumnFlags, ColumnType};

use crate::sql::SqlValue;
use crate::sql::postgres::text::{json, number};

/// The character set number of binary strings.
const BINARY_CHARSET: u16 = 63;

/// How a result column's values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Whole numbers.
    Integer,
    /// `BIT(n)`: big-endian bytes of an unsigned integer.
    Bits,
    /// `DECIMAL`, `FLOAT`, `DOUBLE`.
    Number,
    /// MySQL's `JSON`.
    Json,
    /// Bytes shown as `0x…`.
    Binary,
    /// Everything else, as text.
    Text,
}

/// How values of a column of type `ty` with `flags` in character set `charset` are read.
pub(crate) fn reading(ty: ColumnType, flags: ColumnFlags, charset: u16) -> Reading {
    use ColumnType as T;
    match ty {
        T::MYSQL_TYPE_TINY
        | T::MYSQL_TYPE_SHORT
        | T::MYSQL_TYPE_INT24
        | T::MYSQL_TYPE_LONG
        | T::MYSQL_TYPE_LONGLONG
        | T::MYSQL_TYPE_YEAR => Reading::Integer,
        T::MYSQL_TYPE_BIT => Reading::Bits,
        T::MYSQL_TYPE_DECIMAL
        | T::MYSQL_TYPE_NEWDECIMAL
        | T::MYSQL_TYPE_FLOAT
        | T::MYSQL_TYPE_DOUBLE => Reading::Number,
        T::MYSQL_TYPE_JSON => Reading::Json,
        T::MYSQL_TYPE_GEOMETRY => Reading::Binary,
        T::MYSQL_TYPE_TINY_BLOB
        | T::MYSQL_TYPE_MEDIUM_BLOB
        | T::MYSQL_TYPE_LONG_BLOB
        | T::MYSQL_TYPE_BLOB
        | T::MYSQL_TYPE_VAR_STRING
        | T::MYSQL_TYPE_STRING
        | T::MYSQL_TYPE_VARCHAR
            if charset == BINARY_CHARSET
                && !flags.intersects(ColumnFlags::ENUM_FLAG | ColumnFlags::SET_FLAG) =>
        {
            Reading::Binary
        }
        _ => Reading::Text,
    }
}

/// How a column's values are read and written: its reading and, for dates and times, its type
/// and fractional digits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnReading {
    /// How its bytes are read.
    pub reading: Reading,
    /// Its type.
    pub ty: ColumnType,
    /// Fractional digits of its times (31: as many as the value has).
    pub decimals: u8,
}

impl ColumnReading {
    /// The reading of a result column; `json` when the catalog says its text is a document.
    pub(crate) fn of(column: &mysql::Column, json: bool) -> Self {
        let by_type = reading(column.column_type(), column.flags(), column.character_set());
        Self {
            reading: if json && by_type == Reading::Text { Reading::Json } else { by_type },
            ty: column.column_type(),
            decimals: column.decimals(),
        }
    }

    /// The value the server sent for this column.
    pub(crate) fn value(&self, sent: &Sent) -> SqlValue {
        match sent {
            Sent::NULL => SqlValue::Null,
            Sent::Int(i) => SqlValue::Integer(*i),
            Sent::UInt(u) => {
                i64::try_from(*u).map_or_else(|_| SqlValue::Text(u.to_string()), SqlValue::Integer)
            }
            // A FLOAT is the exact value of its single-precision float (the client rounds it to
            // six digits), as the profiles computed in the server read it.
            Sent::Float(f) => number(&format!("{:e}", f64::from(*f))),
            Sent::Double(f) => number(&format!("{f:e}")),
            Sent::Bytes(bytes) => value(self.reading, Some(bytes)),
            Sent::Date(year, month, day, hour, minute, second, micros) => {
                let date = format!("{year:04}-{month:02}-{day:02}");
                if matches!(self.ty, ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE) {
                    SqlValue::Text(date)
                } else {
                    SqlValue::Text(format!(
                        "{date} {hour:02}:{minute:02}:{second:02}{}",
                        fraction(*micros, self.decimals)
                    ))
                }
            }
            Sent::Time(negative, days, hours, minutes, seconds, micros) => {
                let hours = u64::from(*days) * 24 + u64::from(*hours);
                SqlValue::Text(format!(
                    "{}{hours:02}:{minutes:02}:{seconds:02}{}",
                    if *negative { "-" } else { "" },
                    fraction(*micros, self.decimals)
                ))
            }
        }
    }
}

/// The fraction of a second as the server writes it for a column of `decimals` digits: that
/// many (none for 0), or for a column that does not say (31), six when there is a fraction.
fn fraction(micros: u32, decimals: u8) -> String {
    let six = format!("{micros:06}");
    match decimals {
        0 => String::new(),
        1..=6 => format!(".{}", &six[..usize::from(decimals)]),
        _ if micros == 0 => String::new(),
        _ => format!(".{six}"),
    }
}

/// The value read as `reading` says from the bytes the server sent (`None`: NULL).
pub(crate) fn value(reading: Reading, bytes: Option<&[u8]>) -> SqlValue {
    let Some(bytes) = bytes else { return SqlValue::Null };
    match reading {
        Reading::Binary => SqlValue::Text(hex(bytes)),
        Reading::Bits => {
            // At most 64 bits; more bytes than that would be no BIT value.
            if bytes.len() > 8 {
                return SqlValue::Text(hex(bytes));
            }
            let bits = bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            i64::try_from(bits).map_or_else(|_| SqlValue::Text(bits.to_string()), SqlValue::Integer)
        }
        _ => {
            let text = String::from_utf8_lossy(bytes);
            match reading {
                Reading::Integer => text
                    .parse::<i64>()
                    .map_or_else(|_| SqlValue::Text(text.into_owned()), SqlValue::Integer),
                Reading::Number => number(&text),
                Reading::Json => json(&text),
                _ => SqlValue::Text(text.into_owned()),
            }
        }
    }
}

/// Bytes as `0x` and upper-case hex digits, as MySQL writes a hex literal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("0x");
    for b in bytes {
        out.push_str(&format!("{b:02X}"));
    }
    out
}

/// The type's name as the server's metadata says it (for `columnTypes`).
pub(crate) fn type_name(ty: ColumnType, flags: ColumnFlags, charset: u16) -> String {
    use ColumnType as T;
    let unsigned = flags.contains(ColumnFlags::UNSIGNED_FLAG);
    let binary = charset == BINARY_CHARSET;
    let name = match ty {
        T::MYSQL_TYPE_TINY => "tinyint",
        T::MYSQL_TYPE_SHORT => "smallint",
        T::MYSQL_TYPE_INT24 => "mediumint",
        T::MYSQL_TYPE_LONG => "int",
        T::MYSQL_TYPE_LONGLONG => "bigint",
        T::MYSQL_TYPE_YEAR => "year",
        T::MYSQL_TYPE_BIT => "bit",
        T::MYSQL_TYPE_DECIMAL | T::MYSQL_TYPE_NEWDECIMAL => "decimal",
        T::MYSQL_TYPE_FLOAT => "float",
        T::MYSQL_TYPE_DOUBLE => "double",
        T::MYSQL_TYPE_JSON => "json",
        T::MYSQL_TYPE_GEOMETRY => "geometry",
        T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => "date",
        T::MYSQL_TYPE_DATETIME | T::MYSQL_TYPE_DATETIME2 => "datetime",
        T::MYSQL_TYPE_TIMESTAMP | T::MYSQL_TYPE_TIMESTAMP2 => "timestamp",
        T::MYSQL_TYPE_TIME | T::MYSQL_TYPE_TIME2 => "time",
        T::MYSQL_TYPE_NULL => "null",
        _ if flags.contains(ColumnFlags::ENUM_FLAG) => "enum",
        _ if flags.contains(ColumnFlags::SET_FLAG) => "set",
        T::MYSQL_TYPE_TINY_BLOB
        | T::MYSQL_TYPE_MEDIUM_BLOB
        | T::MYSQL_TYPE_LONG_BLOB
        | T::MYSQL_TYPE_BLOB => {
            if binary {
                "blob"
            } else {
                "text"
            }
        }
        T::MYSQL_TYPE_STRING => {
            if binary {
                "binary"
            } else {
                "char"
            }
        }
        _ => {
            if binary {
                "varbinary"
            } else {
                "varchar"
            }
        }
    };
    if unsigned { format!("{name} unsigned") } else { name.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(ty: ColumnType, flags: ColumnFlags, charset: u16, bytes: &[u8]) -> SqlValue {
        value(reading(ty, flags, charset), Some(bytes))
    }

    #[test]
    fn values_are_read_by_type_exactly() {
        let none = ColumnFlags::empty();
        let utf8 = 45;
        use ColumnType as T;
        assert_eq!(read(T::MYSQL_TYPE_LONGLONG, none, 63, b"-42"), SqlValue::Integer(-42));
        assert_eq!(
            read(T::MYSQL_TYPE_LONGLONG, ColumnFlags::UNSIGNED_FLAG, 63, b"18446744073709551615"),
            SqlValue::Text("18446744073709551615".into()),
            "BIGINT UNSIGNED past i64 keeps every digit"
        );
        assert_eq!(read(T::MYSQL_TYPE_YEAR, none, 63, b"2024"), SqlValue::Integer(2024));
        assert_eq!(read(T::MYSQL_TYPE_BIT, none, 63, &[0x01, 0x02]), SqlValue::Integer(258));
        assert_eq!(
            read(T::MYSQL_TYPE_BIT, none, 63, &[0xFF; 8]),
            SqlValue::Text("18446744073709551615".into())
        );
        assert_eq!(read(T::MYSQL_TYPE_NEWDECIMAL, none, 63, b"0.99"), SqlValue::Real(0.99));
        assert_eq!(
            read(T::MYSQL_TYPE_NEWDECIMAL, none, 63, b"12345678901234567890.12"),
            SqlValue::Text("12345678901234567890.12".into())
        );
        assert_eq!(read(T::MYSQL_TYPE_FLOAT, none, 63, b"1.1"), SqlValue::Real(1.1));
        assert_eq!(
            read(T::MYSQL_TYPE_BLOB, ColumnFlags::BINARY_FLAG, 63, &[0, 0xAB]),
            SqlValue::Text("0x00AB".into())
        );
        assert_eq!(
            read(T::MYSQL_TYPE_BLOB, none, utf8, "é".as_bytes()),
            SqlValue::Text("é".into()),
            "TEXT is a BLOB in another character set"
        );
        assert_eq!(
            read(T::MYSQL_TYPE_STRING, ColumnFlags::ENUM_FLAG, 63, b"small"),
            SqlValue::Text("small".into())
        );
        assert_eq!(
            read(T::MYSQL_TYPE_DATETIME, none, 63, b"0000-00-00 00:00:00"),
            SqlValue::Text("0000-00-00 00:00:00".into())
        );
        assert_eq!(
            read(T::MYSQL_TYPE_TIME, none, 63, b"838:59:59"),
            SqlValue::Text("838:59:59".into())
        );
        assert_eq!(
            read(T::MYSQL_TYPE_JSON, none, 63, br#"{"a": [1, 2.5]}"#),
            SqlValue::Json(serde_json::json!({"a": [1, 2.5]}))
        );
        assert_eq!(value(Reading::Text, None), SqlValue::Null);
    }
}
