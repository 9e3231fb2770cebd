//! Every type a MariaDB query returns, read by schemascope and by the `mariadb` client
//! (`--batch --raw --binary-as-hex`), value for value: numbers equal to the client's digits,
//! text and dates and times as the client writes them, binary strings as its hex, `BIT` as the
//! number of its hex, JSON as the document it prints.
//!
//! Needs `SCHEMASCOPE_TEST_MARIADB` (scripts/test) and the `mariadb` client (scripts/mariadb
//! installs it); the table is made in the `scratch` database by the owner login.

use std::process::Command;

use schemascope_sources::sql::{Database, MySqlDatabase, SqlValue};
use serde_json::Value;

/// Every column type, with values at their edges (NULL in every column of the last row).
const TABLE: &str = "
CREATE OR REPLACE TABLE every_type (
  id INT PRIMARY KEY,
  ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, i INT, bi BIGINT, bu BIGINT UNSIGNED,
  d_wide DECIMAL(65,30), d_money DECIMAL(10,2), f FLOAT, db DOUBLE, b1 BIT(1), b64 BIT(64),
  y YEAR, dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(3),
  ch CHAR(5), vc VARCHAR(20), latin VARCHAR(20) CHARACTER SET latin1, utf3 VARCHAR(20) CHARACTER SET utf8mb3,
  bn BINARY(4), vb VARBINARY(8), bl BLOB, en ENUM('small','large'), st SET('a','b','c'),
  js JSON, pt POINT, boo BOOLEAN, gen INT AS (i * 2) VIRTUAL
) DEFAULT CHARSET utf8mb4;
SET SESSION sql_mode = '';
INSERT INTO every_type (id, ti, si, mi, i, bi, bu, d_wide, d_money, f, db, b1, b64, y, dt, dtm, ts, tm, ch, vc, latin, utf3, bn, vb, bl, en, st, js, pt, boo) VALUES
 (1, -128, 65535, -8388608, 2147483647, -9223372036854775808, 18446744073709551615,
  12345678901234567890.123456789012345678901234567890, 0.99, 1.1, 2.2250738585072014e-308, b'1', b'1111111111111111111111111111111111111111111111111111111111111111',
  1901, '0000-00-00', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.499', '-838:59:59.000',
  'ab', 'Zoë ', 'Müller', 'naïve', x'00ff10', x'', x'deadbeef', 'large', 'a,c',
  '{\"a\": [1, 2.5, 12345678901234567890], \"b\": null}', ST_GeomFromText('POINT(1 2)'), TRUE),
 (2, 0, 0, 0, 0, 0, 0, 0, -123.45, -3.4028235e38, 1e308, b'0', b'0', 2155, '2024-02-29', '1000-01-01 00:00:00', '1970-01-01 00:00:01', '100:00:00.5',
  '', '', '', '', x'', x'00', x'', 'small', '', '[]', ST_GeomFromText('POINT(0 0)'), FALSE),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
";

fn owner_uri(uri: &str) -> String {
    let owner = uri.replacen("schemascope_ro:", "schemascope:", 1);
    match owner.rsplit_once('/') {
        Some((server, _)) => format!("{server}/scratch"),
        None => owner,
    }
}

/// The `mariadb` client's arguments for the owner login of `uri` (mysql://user:pw@host:port/db).
fn client_args(uri: &str) -> Vec<String> {
    let rest = uri.trim_start_matches("mysql://");
    let (user_info, rest) = rest.split_once('@').expect("user info");
    let (user, password) = user_info.split_once(':').expect("password");
    let (host_port, db) = rest.split_once('/').expect("database");
    let (host, port) = host_port.split_once(':').expect("port");
    vec![
        format!("--host={host}"),
        format!("--port={port}"),
        format!("--user={user}"),
        format!("--password={password}"),
        "--default-character-set=utf8mb4".into(),
        db.to_string(),
    ]
}

fn client(uri: &str, extra: &[&str], sql: &str) -> Option<String> {
    let output = Command::new("mariadb")
        .args(client_args(uri))
        .args(extra)
        .arg("-e")
        .arg(sql)
        .output()
        .ok()?;
    assert!(output.status.success(), "mariadb: {}", String::from_utf8_lossy(&output.stderr));
    Some(String::from_utf8(output.stdout).expect("utf-8"))
}

/// The client's text of a value and schemascope's value agree, by the rule of the module docs.
/// Two quirks of the client are allowed for: with `--binary-as-hex` it writes a NULL binary
/// string as `0x`, and it writes a FLOAT to 6 significant digits, where schemascope gives the
/// shortest decimal that is the stored float (which those 6 digits are a rounding of).
fn agrees(column: &str, ours: &SqlValue, theirs: &str) -> bool {
    match ours {
        SqlValue::Null => theirs == "NULL" || theirs == "0x",
        SqlValue::Real(f) if column == "f" => {
            theirs.parse::<f64>().ok() == format!("{f:.5e}").parse::<f64>().ok()
        }
        SqlValue::Integer(i) if column.starts_with('b') && theirs.starts_with("0x") => {
            u64::from_str_radix(&theirs[2..], 16).ok() == u64::try_from(*i).ok()
        }
        SqlValue::Integer(i) => i.to_string() == theirs,
        SqlValue::Real(f) => theirs.parse::<f64>().is_ok_and(|t| t == *f),
        SqlValue::Text(t) if column == "b64" => {
            u64::from_str_radix(theirs.trim_start_matches("0x"), 16).ok().map(|n| n.to_string())
                == Some(t.clone())
        }
        SqlValue::Text(t) => t == theirs,
        SqlValue::Json(v) => {
            serde_json::from_str::<Value>(
                &theirs.replace("12345678901234567890", "\"12345678901234567890\""),
            )
            .ok()
                == Some(v.clone())
        }
        SqlValue::Bool(_) => false,
    }
}

#[test]
fn a_value_of_every_type_reads_as_the_mariadb_client_shows_it() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let owner = owner_uri(&uri);
    if client(&owner, &[], TABLE).is_none() {
        eprintln!("the mariadb client is not installed (scripts/mariadb installs it)");
        return;
    }
    let db = MySqlDatabase::connect(&owner).expect("connect");
    let result = db.run("SELECT * FROM every_type ORDER BY id", &[], None, 30_000).expect("select");
    let text = client(
        &owner,
        &["--batch", "--raw", "--binary-as-hex", "--skip-column-names"],
        "SET time_zone = '+00:00'; SELECT * FROM every_type ORDER BY id",
    )
    .expect("client");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), result.rows.len());
    let mut wrong = Vec::new();
    for (row, line) in result.rows.iter().zip(&lines) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), result.columns.len(), "{line}");
        for ((column, ours), theirs) in result.columns.iter().zip(row).zip(&fields) {
            // The client writes a point as its binary form; ours is the same bytes in hex.
            if !agrees(column, ours, theirs) {
                wrong.push(format!("{column}: ours {ours:?}, the client's {theirs:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Values past what a JSON number holds keep every digit.
    assert_eq!(result.rows[0][6], SqlValue::Text("18446744073709551615".into()));
    assert_eq!(
        result.rows[0][7],
        SqlValue::Text("12345678901234567890.123456789012345678901234567890".into())
    );
    assert_eq!(result.rows[0][8], SqlValue::Real(0.99));
    let at = |row: usize, name: &str| {
        let column = result.columns.iter().position(|c| c == name).expect("column");
        result.rows[row][column].clone()
    };
    assert_eq!(at(0, "vb"), SqlValue::Text("0x".into()), "an empty binary string is no NULL");
    assert_eq!(at(0, "bl"), SqlValue::Text("0xDEADBEEF".into()));
    assert_eq!(at(0, "b64"), SqlValue::Text("18446744073709551615".into()));
    assert_eq!(at(0, "tm"), SqlValue::Text("-838:59:59.000".into()));
    assert_eq!(at(1, "tm"), SqlValue::Text("100:00:00.500".into()));
    assert_eq!(at(0, "dt"), SqlValue::Text("0000-00-00".into()));
    assert_eq!(at(0, "ts"), SqlValue::Text("2038-01-19 03:14:07.499".into()));
    // The generated INT is clipped to its range, as the server stores it.
    assert_eq!(at(0, "gen"), SqlValue::Integer(2_147_483_647));
    assert_eq!(at(0, "y"), SqlValue::Integer(1901));
    assert_eq!(at(0, "ch"), SqlValue::Text("ab".into()));
    assert_eq!(at(0, "vc"), SqlValue::Text("Zoë ".into()), "trailing spaces kept");
    assert_eq!(at(2, "bl"), SqlValue::Null);
    // Profiled inside the server, the table is what its rows say.
    let catalog = db.catalog().expect("catalog");
    crate::common::assert_table_matches_memory(&db, catalog.table("every_type").expect("table"));
}

/// Zero dates (`0000-00-00`, `2010-00-00`) among hundreds of real dates, in a column too varied
/// for its values to be listed: profiled inside the server, the column is what its rows say —
/// counts, distinct values, lengths and the format counts, which leave the zero dates out.
#[test]
fn zero_dates_in_a_large_date_column_are_profiled_as_their_rows_say() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let owner = owner_uri(&uri);
    let table = "
CREATE OR REPLACE TABLE zero_dates (id INT PRIMARY KEY AUTO_INCREMENT, d DATE, dt DATETIME(3), ts TIMESTAMP NULL);
SET SESSION sql_mode = '';
INSERT INTO zero_dates (d, dt, ts) SELECT DATE_ADD('2000-01-01', INTERVAL seq DAY),
  DATE_ADD('2000-01-01 00:00:00.123', INTERVAL seq HOUR), FROM_UNIXTIME(seq * 86400) FROM seq_1_to_400;
INSERT INTO zero_dates (d, dt, ts) VALUES ('0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
  ('0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'), ('2010-00-00', '2010-00-00 00:00:00', NULL),
  ('2030-05-00', '2030-05-00 12:00:00', NULL), (NULL, NULL, NULL);
";
    if client(&owner, &[], table).is_none() {
        eprintln!("the mariadb client is not installed (scripts/mariadb installs it)");
        return;
    }
    let db = MySqlDatabase::connect(&owner).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let info = catalog.table("zero_dates").expect("table");
    crate::common::assert_table_matches_memory(&db, info);
    let profile = schemascope_sources::sql::pushdown::profile_table(&db, info).expect("profile");
    for (column, dates, distinct) in [("d", 400, 403), ("dt", 400, 403), ("ts", 400, 401)] {
        let strings = profile
            .property(&schemascope_core::PropertyPath::root().child(column))
            .and_then(|p| p.strings.as_ref())
            .expect("strings");
        assert_eq!(strings.distinct, distinct, "{column}");
        let formats: u64 = strings.format_counts.iter().map(|(_, n)| n).sum();
        assert_eq!(formats, dates, "{column}: only the 400 real dates have a date's format");
        assert_eq!(strings.format, None, "{column}: not every value is a date");
    }
}

/// Doubles whose squares underflow (1e-300) or whose sum passes the doubles' range (1e307, whose
/// `AVG` MariaDB answers 0 with a warning, or an error inside an expression) get their true mean
/// and deviation, as in memory; a lone value near the end of the range is its own mean, and so
/// are the largest double and subnormal ones (1e-310).
#[test]
fn doubles_at_the_ends_of_their_range_profile_in_the_server_as_in_memory() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let owner = owner_uri(&uri);
    let table = "
CREATE OR REPLACE TABLE extreme_doubles (id INT PRIMARY KEY, tiny DOUBLE, sign DOUBLE,
  huge DOUBLE, one_huge DOUBLE, largest DOUBLE, subnormal DOUBLE);
INSERT INTO extreme_doubles SELECT seq, (1 + seq % 9) * 1e-300, IF(seq % 2 = 0, 1e-300, -1e-300),
  (1 + seq % 17) * 1e307, IF(seq = 7, -1.5e308, NULL),
  IF(seq % 3 = 0, 1.7976931348623157e308, IF(seq % 3 = 1, -1.7976931348623157e308, NULL)),
  (1 + seq % 3) * 1e-310
  FROM seq_1_to_300;
";
    if client(&owner, &[], table).is_none() {
        eprintln!("the mariadb client is not installed (scripts/mariadb installs it)");
        return;
    }
    let db = MySqlDatabase::connect(&owner).expect("connect");
    let catalog = db.catalog().expect("catalog");
    crate::common::assert_table_matches_memory(
        &db,
        catalog.table("extreme_doubles").expect("table"),
    );
}
