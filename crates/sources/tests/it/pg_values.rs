//! Every type PostgreSQL can return comes back as a value, never an error: a value of each type
//! in `pg_type` (base, enum, domain, range, multirange, and arrays of them, with NULLs and two
//! dimensions) is read through the source and compared with PostgreSQL's own text output — for
//! numbers, PostgreSQL itself says whether the JSON number written is its value. A table with a
//! column of each common type and NULLs in every position is profiled and sampled.
//!
//! Objects are made in a schema of their own, dropped at the end. Runs when
//! `SCHEMASCOPE_TEST_POSTGRES` is set (scripts/test sets it).

use postgres::{Client, NoTls, SimpleQueryMessage};
use schemascope_sources::sql::pushdown::profile_table;
use schemascope_sources::sql::rows::sample_pool;
use schemascope_sources::sql::{Database, PostgresDatabase, SqlValue};
use serde_json::Value;

use crate::common;

/// The string statistics of column `name` in `profile`.
fn strings_of(
    profile: &schemascope_core::CollectionProfile,
    name: &str,
) -> schemascope_core::profile::StringProfile {
    profile
        .properties()
        .into_iter()
        .find(|p| p.path.to_string() == name)
        .and_then(|p| p.strings.clone())
        .unwrap_or_else(|| panic!("{name} is text"))
}

/// Literals tried, in order, until one casts to the type.
const CANDIDATES: &[&str] = &[
    "1",
    "1.5",
    "t",
    "2020-01-02",
    "12:34:56.789",
    "2020-01-02 03:04:05.678+02",
    "1 day 02:03:04",
    r#"{"a": [1, 2.5, null], "b": "é"}"#,
    "00000000-0000-0000-0000-000000000001",
    "\\x00ff",
    "101",
    "127.0.0.1/32",
    "08:00:2b:01:02:03",
    "08:00:2b:01:02:03:04:05",
    "(1,2)",
    "((0,0),(1,1))",
    "<(1,2),3>",
    "{1,2,3}",
    "[1,5)",
    "{[1,5)}",
    "[2020-01-01,2020-02-01)",
    "{[2020-01-01,2020-02-01)}",
    "a & b",
    "fat:1 cat:2",
    "<a>x</a>",
    "10:20:",
    "ok",
    "a",
    "{}",
];

/// The schema made for this run, dropped when the test ends.
struct Scratch {
    client: Client,
    schema: String,
}

impl Scratch {
    fn new(uri: &str, name: &str) -> Self {
        let mut client = Client::connect(uri, NoTls).expect("admin connection");
        let schema = format!("schemascope_{name}_{}", std::process::id());
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .expect("schema");
        Self { client, schema }
    }

    /// Whether `sql` runs.
    fn runs(&mut self, sql: &str) -> bool {
        self.client.simple_query(sql).is_ok()
    }

    /// The single text value `sql` returns.
    fn text(&mut self, sql: &str) -> Option<String> {
        self.client.simple_query(sql).expect(sql).into_iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => Some(row.get(0).map(str::to_string)),
            _ => None,
        })?
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ =
            self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
    }
}

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Reads `expr` through the source and checks the value against PostgreSQL's text of it.
fn check(db: &PostgresDatabase, scratch: &mut Scratch, expr: &str) -> SqlValue {
    let sql = format!("SELECT {expr} AS v");
    let result = db
        .run(&sql, &[], Some(10), 30_000)
        .unwrap_or_else(|e| panic!("{sql}: {e} ({:?})", e.class()));
    let [value] = &result.rows[0][..] else { panic!("{sql}: {:?}", result.rows) };
    // The type's output function, as psql shows the value.
    scratch.runs("SET extra_float_digits = 1");
    let text = scratch.text(&sql);
    match (value, &text) {
        (SqlValue::Null, None) => {}
        (SqlValue::Integer(i), Some(t)) => assert_eq!(&i.to_string(), t, "{expr}"),
        (SqlValue::Bool(b), Some(t)) => assert_eq!(if *b { "t" } else { "f" }, t, "{expr}"),
        (SqlValue::Text(s), Some(t)) => assert_eq!(s, t, "{expr}"),
        (SqlValue::Json(Value::Array(items)), Some(t)) if t.starts_with('{') => {
            // A PostgreSQL array (JSON arrays are written `[…]`): its elements were checked as
            // values of their own type; here the shape and the NULLs.
            assert_eq!(items.is_empty(), t == "{}", "{expr}: {t}");
            assert_eq!(
                t.contains(",NULL") || t.contains(";NULL") || t.starts_with("{NULL"),
                items
                    .iter()
                    .flat_map(|i| i.as_array().cloned().unwrap_or_else(|| vec![i.clone()]))
                    .any(|i| i.is_null()),
                "{expr}: {t}"
            );
        }
        (SqlValue::Json(v), Some(t)) => {
            same_json(v, &serde_json::from_str::<Value>(t).expect("json text"), expr)
        }
        (SqlValue::Real(_), Some(t)) => {
            // PostgreSQL reads the JSON number written and says whether it is its value.
            let written = value.to_json().to_string();
            let same = scratch.text(&format!(
                "SELECT ({}::numeric = {}::numeric)::text",
                literal(&written),
                literal(t)
            ));
            assert_eq!(
                same.as_deref(),
                Some("true"),
                "{expr}: shown as {written}, PostgreSQL says {t}"
            );
        }
        _ => panic!("{expr}: read {value:?}, PostgreSQL says {text:?}"),
    }
    value.clone()
}

/// `read` is PostgreSQL's JSON `text` parsed, except that a number a JSON number cannot hold
/// exactly is the string of its digits.
fn same_json(read: &Value, text: &Value, expr: &str) {
    match (read, text) {
        (Value::String(s), Value::Number(n)) => {
            assert_eq!(s.parse::<f64>().ok(), n.as_f64(), "{expr}: {s} vs {n}");
            assert!(
                !s.parse::<f64>().is_ok_and(|f| Value::from(f).to_string().as_str() == s.as_str()),
                "{expr}: {s} is exact, so a number"
            );
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{expr}");
            a.iter().zip(b).for_each(|(x, y)| same_json(x, y, expr));
        }
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(a.len(), b.len(), "{expr}");
            a.iter().for_each(|(k, x)| same_json(x, b.get(k).unwrap_or(&Value::Null), expr));
        }
        _ => assert_eq!(read, text, "{expr}"),
    }
}

#[test]
fn a_value_of_every_type_in_pg_type_reads_as_its_postgresql_text() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_types");
    let s = scratch.schema.clone();
    scratch
        .client
        .batch_execute(&format!(
            "CREATE TYPE {s}.mood AS ENUM ('sad', 'ok', 'héllo wörld'); CREATE DOMAIN {s}.price AS numeric(12, 2) CHECK (VALUE >= 0); \
             CREATE TYPE {s}.pair AS (a int, b text); CREATE TYPE {s}.floatrange AS RANGE (subtype = float8);"
        ))
        .expect("types");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let types: Vec<(String, String, bool)> = scratch
        .client
        .query(
            "SELECT format_type(t.oid, NULL), t.typname::text, t.typarray <> 0 FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace \
             WHERE t.typtype IN ('b', 'e', 'd', 'r', 'm', 'c') AND t.typisdefined AND t.typcategory <> 'A' AND t.typname NOT LIKE '\\_%' \
             AND (n.nspname = 'pg_catalog' OR n.nspname = $1) AND (t.typtype <> 'c' OR n.nspname = $1) ORDER BY t.oid",
            &[&s],
        )
        .expect("pg_type")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let mut read = Vec::new();
    for (ty, name, has_array) in &types {
        // NULL of every type, then the first literal the type accepts.
        check(&db, &mut scratch, &format!("NULL::{ty}"));
        let Some(lit) = CANDIDATES
            .iter()
            .map(|c| literal(c))
            .find(|l| scratch.runs(&format!("SELECT {l}::{ty}")))
        else {
            continue;
        };
        check(&db, &mut scratch, &format!("{lit}::{ty}"));
        if *has_array {
            check(&db, &mut scratch, &format!("ARRAY[{lit}::{ty}, NULL]"));
            check(&db, &mut scratch, &format!("ARRAY[[{lit}::{ty}, NULL], [NULL, {lit}::{ty}]]"));
        }
        read.push(name.clone());
    }
    for wanted in [
        "numeric",
        "date",
        "time",
        "timetz",
        "timestamp",
        "timestamptz",
        "interval",
        "json",
        "jsonb",
        "uuid",
        "bytea",
        "inet",
        "money",
        "bit",
        "varbit",
        "xml",
        "tsvector",
        "int4range",
        "int4multirange",
        "mood",
        "price",
        "pair",
        "floatrange",
        "point",
        "float4",
        "float8",
    ] {
        assert!(read.iter().any(|n| n == wanted), "no value of {wanted} was read: {read:?}");
    }
    // Numbers at the edges: exact ones are numbers, the rest their exact text.
    for (expr, expected) in [
        ("'3.90'::numeric", Value::from(3.9)),
        ("'12345678901234567.89'::numeric", Value::from("12345678901234567.89")),
        ("'9007199254740993'::numeric", Value::from("9007199254740993")),
        ("'1e-400'::numeric", Value::from(format!("0.{}1", "0".repeat(399)))),
        ("'NaN'::numeric", Value::from("NaN")),
        ("'Infinity'::numeric", Value::from("Infinity")),
        ("'-Infinity'::float8", Value::from("-Infinity")),
        ("'NaN'::float4", Value::from("NaN")),
        ("'1.1'::float4", Value::from(1.1)),
        ("'-0'::float8", serde_json::json!(-0.0)),
        ("'1e15'::float8", Value::from(1e15)),
        ("'5e-324'::float8", Value::from(5e-324)),
        ("'2.2250738585072014e-308'::float8", Value::from(2.2250738585072014e-308)),
        ("'1.7976931348623157e308'::float8", Value::from(f64::MAX)),
        ("'-1.7976931348623157e308'::numeric", Value::from(f64::MIN)),
        ("'9223372036854775807'::int8", Value::from(i64::MAX)),
        (
            "'{\"a\": 12345678901234567.89, \"b\": [1.5]}'::jsonb",
            serde_json::json!({"a": "12345678901234567.89", "b": [1.5]}),
        ),
        (
            "ARRAY[1.5, 12345678901234567.89, NULL]::numeric[]",
            serde_json::json!([1.5, "12345678901234567.89", null]),
        ),
        ("'::1'::inet", Value::from("::1")),
        ("'ab'::char(4)", Value::from("ab  ")),
        ("42::oid", Value::from(42)),
        ("'[1, {\"b\": null}]'::json", serde_json::json!([1, {"b": null}])),
        ("'7.5'::pg_values_price", Value::from(7.5)),
    ] {
        let expr = expr.replace("pg_values_price", &format!("{s}.price"));
        assert_eq!(check(&db, &mut scratch, &expr).to_json(), expected, "{expr}");
    }
}

#[test]
fn a_table_of_every_common_type_with_nulls_everywhere_is_profiled_and_sampled() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_table");
    let s = scratch.schema.clone();
    let columns = [
        ("n", "numeric", "12345678901234567.89"),
        ("r", "real", "1.1"),
        ("d", "double precision", "NaN"),
        ("dt", "date", "2020-02-29"),
        ("ts", "timestamptz", "2020-01-02 03:04:05+02"),
        ("iv", "interval", "1 day 02:00:00"),
        ("j", "jsonb", r#"{"a": [1, null]}"#),
        ("u", "uuid", "00000000-0000-0000-0000-000000000001"),
        ("b", "bytea", "\\x00ff"),
        ("a", "int[]", "{{1,NULL},{3,4}}"),
        ("ip", "inet", "::1"),
        ("m", "money", "12.34"),
        ("bits", "bit(3)", "101"),
        ("e", "mood", "héllo wörld"),
        ("p", "price", "7.50"),
    ];
    let mut ddl = format!(
        "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; CREATE TYPE {s}.mood AS ENUM ('sad', 'héllo wörld'); \
         CREATE DOMAIN {s}.price AS numeric(12, 2); CREATE TABLE {s}.everything (id int PRIMARY KEY"
    );
    for (name, ty, _) in &columns {
        let ty =
            if matches!(*ty, "mood" | "price") { format!("{s}.{ty}") } else { (*ty).to_string() };
        ddl.push_str(&format!(", {name} {ty}"));
    }
    ddl.push_str(");");
    // Row k has NULL in column k (and row 0 in none); one more row is all NULL.
    for k in 0..=columns.len() + 1 {
        let values: Vec<String> = columns
            .iter()
            .enumerate()
            .map(
                |(i, (_, _, v))| {
                    if i + 1 == k || k == columns.len() + 1 { "NULL".into() } else { literal(v) }
                },
            )
            .collect();
        ddl.push_str(&format!("INSERT INTO {s}.everything VALUES ({k}, {});", values.join(", ")));
    }
    scratch.client.batch_execute(&ddl).expect("table");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.everything")).expect("the table");
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    assert_eq!(profile.item_count, columns.len() as u64 + 2);
    let memory = common::in_memory(&db, table);
    let mut json = serde_json::to_value(&profile).expect("json");
    // Every non-null `n` is past float8's precision: queries return it as its exact text.
    let n_numbers =
        json["root"]["children"][1]["profile"]["numbers"].as_object_mut().expect("n numbers");
    assert_eq!(n_numbers.remove("exactTextCount"), Some(serde_json::json!(columns.len())));
    common::assert_same(
        &json,
        &serde_json::to_value(memory.profile()).expect("json"),
        "everything",
    );
    let pool = sample_pool(&db, table, profile.item_count, 7, None)
        .unwrap_or_else(|e| panic!("sample: {e}"));
    assert_eq!(pool.len(), columns.len() + 2);
}

/// One numeric value past float8's exactness among ordinary ones (an independent tester's case):
/// the column stays a number column whose range and mean include it, as PostgreSQL computes them.
#[test]
fn one_long_numeric_keeps_its_column_numeric_with_the_true_range_and_mean() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_long_numeric");
    let s = scratch.schema.clone();
    scratch
        .client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; CREATE TABLE {s}.amounts (id int PRIMARY KEY, amt numeric(30, 2), f float8);\
             INSERT INTO {s}.amounts SELECT g, g * 1.5, g FROM generate_series(1, 100) g;\
             INSERT INTO {s}.amounts VALUES (101, 98765432109876543.21, 'NaN'), (102, NULL, NULL);"
        ))
        .expect("table");
    let truth = scratch
        .client
        .query_one(&format!("SELECT max(amt)::float8, avg(amt)::float8 FROM {s}.amounts"), &[])
        .expect("truth");
    let (max, avg): (f64, f64) = (truth.get(0), truth.get(1));
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.amounts")).expect("the table");
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    let mut json = serde_json::to_value(&profile).expect("json");
    // The long value is counted as a number, and as one that queries return as its exact text
    // (which the rows read for the in-memory profile cannot say).
    let amt_numbers =
        json["root"]["children"][1]["profile"]["numbers"].as_object_mut().expect("amt numbers");
    assert_eq!(amt_numbers.remove("exactTextCount"), Some(serde_json::json!(1)));
    let memory = common::in_memory(&db, table);
    common::assert_same(&json, &serde_json::to_value(memory.profile()).expect("json"), "amounts");
    let amt = json["root"]["children"]
        .as_array()
        .expect("children")
        .iter()
        .find(|c| c.to_string().contains("\"amt\""))
        .unwrap_or_else(|| panic!("amt in {json}"))
        .clone();
    assert_eq!(amt["profile"]["types"]["string"], 0, "no value of amt is counted as text: {amt}");
    assert_eq!(amt["profile"]["types"]["number"], 101, "{amt}");
    let numbers = &amt["profile"]["numbers"];
    let (got_max, got_mean) =
        (numbers["max"].as_f64().expect("max"), numbers["mean"].as_f64().expect("mean"));
    assert!((got_max - max).abs() <= max * 1e-14, "max {got_max} vs PostgreSQL {max}: {numbers}");
    assert!(
        (got_mean - avg).abs() <= avg * 1e-12,
        "mean {got_mean} vs PostgreSQL {avg}: {numbers}"
    );
}

/// A row reads the same through `execute_query` and as a sample, and the profile counts each
/// column's values by the JSON types those reads have (an independent tester found json, jsonb,
/// domains over integers, oid, `char(n)` padding and inet shown one way in results and another
/// in samples and profiles).
#[test]
fn samples_and_profiles_see_every_value_as_execute_query_returns_it() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_same");
    let s = scratch.schema.clone();
    let columns = [
        ("dd", "d2", vec!["7", "-2147483648", "NULL"]),
        ("o", "oid", vec!["4294967295", "0", "NULL"]),
        ("ch", "char(4)", vec!["ab", "", "NULL"]),
        ("ip", "inet", vec!["::1", "10.0.0.0/8", "NULL"]),
        ("cidr", "cidr", vec!["10.0.0.0/8", "::/0", "NULL"]),
        ("js", "json", vec![r#"{"a": 1, "b": [true, null]}"#, "null", r#""text""#]),
        ("jb", "jsonb", vec![r#"{"a": 12345678901234567.89, "b": {"c": 1}}"#, "3", "NULL"]),
        ("ia", "int[]", vec!["{1,NULL,3}", "{}", "NULL"]),
        ("ta", "text[]", vec![r#"{"a,b","NULL",NULL}"#, r#"{"{x}"}"#, "NULL"]),
        ("na", "numeric[]", vec!["{1.5,12345678901234567.89}", "{{1,2},{3,4}}", "NULL"]),
        ("da", "d1[]", vec!["{5}", "{}", "NULL"]),
        ("dj", "dj", vec![r#"[1, "x"]"#, "{}", "NULL"]),
        ("tiny", "float8", vec!["5e-324", "1.7976931348623157e308", "NULL"]),
        ("edge", "numeric", vec!["1e-320", "-1.7976931348623157e308", "1.234567e-320"]),
    ];
    let mut ddl = format!(
        "DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; CREATE DOMAIN {s}.d1 AS int4; CREATE DOMAIN {s}.d2 AS {s}.d1 CHECK (VALUE IS NULL OR VALUE > -2147483649); \
         CREATE DOMAIN {s}.dj AS jsonb; CREATE TABLE {s}.mixed (id int PRIMARY KEY"
    );
    for (name, ty, _) in &columns {
        let ty = if matches!(*ty, "d2" | "d1[]" | "dj") {
            format!("{s}.{ty}")
        } else {
            (*ty).to_string()
        };
        ddl.push_str(&format!(", {name} {ty}"));
    }
    ddl.push_str(");");
    for row in 0..3 {
        let values: Vec<String> = columns
            .iter()
            .map(|(_, _, v)| if v[row] == "NULL" { "NULL".into() } else { literal(v[row]) })
            .collect();
        ddl.push_str(&format!("INSERT INTO {s}.mixed VALUES ({row}, {});", values.join(", ")));
    }
    scratch.client.batch_execute(&ddl).expect("table");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.mixed")).expect("the table");
    let executed = db
        .run(&format!("SELECT * FROM {s}.mixed ORDER BY id"), &[], None, 30_000)
        .expect("execute");
    let executed: Vec<Value> = executed
        .rows
        .iter()
        .map(|r| schemascope_sources::sql::rows::row_object(table, r))
        .collect();
    assert_eq!(executed[0]["dd"], Value::from(7));
    assert_eq!(executed[0]["o"], Value::from(4_294_967_295_u32));
    assert_eq!(executed[0]["ch"], Value::from("ab  "));
    assert_eq!(executed[0]["ip"], Value::from("::1"));
    assert_eq!(executed[0]["jb"], serde_json::json!({"a": "12345678901234567.89", "b": {"c": 1}}));
    assert_eq!(executed[0]["ta"], serde_json::json!(["a,b", "NULL", null]));
    assert_eq!(executed[1]["na"], serde_json::json!([[1.0, 2.0], [3.0, 4.0]]));
    assert_eq!(executed[0]["da"], serde_json::json!([5]));
    assert_eq!(executed[0]["dj"], serde_json::json!([1, "x"]));
    let pool = sample_pool(&db, table, 3, 7, None).unwrap_or_else(|e| panic!("sample: {e}"));
    let mut sampled: Vec<Value> =
        pool.items().map(|item| item.value().expect("sample row")).collect();
    sampled.sort_by_key(|row| row["id"].as_i64());
    assert_eq!(sampled, executed, "samples show what execute_query returns");
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    let memory = schemascope_core::Collection::from_values(
        "mixed",
        schemascope_core::CollectionKind::Table,
        executed
            .iter()
            .enumerate()
            .map(|(i, v)| schemascope_core::OwnedItem::new(i.to_string(), v.clone())),
    );
    for (name, _, _) in &columns {
        let path = schemascope_core::path::PropertyPath::root().child(name);
        let (pushed, seen) = (
            profile.property(&path).expect("profiled"),
            memory.profile().property(&path).expect("in memory"),
        );
        if *name == "edge" {
            // A subnormal numeric no double holds exactly: queries return its text, the profile
            // counts it as a number (its nearest double) and says so.
            assert_eq!(
                (pushed.types.number, pushed.numbers.as_ref().map(|n| n.exact_text_count)),
                (3, Some(1)),
                "edge"
            );
            continue;
        }
        assert_eq!(
            serde_json::to_value(pushed.types).expect("json"),
            serde_json::to_value(seen.types).expect("json"),
            "{name}: types"
        );
    }
    // Nested members of document columns are profiled, counted over the whole table.
    let nested = profile
        .property(&schemascope_core::path::PropertyPath::root().child("jb").child("b").child("c"))
        .expect("jb.b.c is profiled");
    assert_eq!((nested.total, nested.present), (3, 1));
}

/// Dates, times and uuids counted, ranked and bounded on their stored values agree with the
/// in-memory profile of their text in every case the stored order can differ from the text's: BC
/// years, five-digit years and ±infinity (where the text's own extremes are read), all values
/// distinct (the smallest ones are the top values) and a few repeated (grouped), with NULLs.
#[test]
fn dates_times_and_uuids_profiled_on_stored_values_equal_the_in_memory_profile() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_stored_order");
    let s = scratch.schema.clone();
    scratch
        .client
        .batch_execute(&format!(
            "CREATE TABLE {s}.moments (id int PRIMARY KEY, plain timestamp, odd timestamp, day date, odd_day date, at time(3), zoned timestamptz, u uuid, few timestamp, fine timestamp, fine_time time);\
             INSERT INTO {s}.moments SELECT g, timestamp '2024-01-01' + g * interval '90 minutes 0.25 seconds', \
               timestamp '2024-01-01' + g * interval '7 days', date '2020-02-28' + g, date '1999-12-31' + g * 1000, \
               time '00:00' + g * interval '17 minutes 0.125 seconds', timestamptz '2024-03-30 23:00+00' + g * interval '1 hour', \
               ('00000000-0000-0000-0000-' || lpad(to_hex(g * 7919), 12, '0'))::uuid, timestamp '2024-01-01' + (g % 3) * interval '1 day', \
               timestamp '2024-01-01' + g * interval '1 second' + ((g % 9) * power(10, g % 6))::int * interval '1 microsecond', \
               time '00:00' + g * interval '1 second' + ((g % 9) * power(10, g % 6))::int * interval '1 microsecond' \
             FROM generate_series(1, 300) g;\
             UPDATE {s}.moments SET odd = '0044-03-15 BC', odd_day = '10000-01-01' WHERE id = 5;\
             UPDATE {s}.moments SET odd = 'infinity', odd_day = '-infinity' WHERE id = 6;\
             INSERT INTO {s}.moments (id) VALUES (301), (302);\
             ANALYZE {s}.moments;"
        ))
        .expect("table");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.moments")).expect("the table");
    common::assert_table_matches_memory(&db, table);
    // The profile read the text's extremes where the stored ones are not the text's.
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    let odd = strings_of(&profile, "odd");
    assert_eq!(odd.distinct, 300, "{odd:?}");
    assert_eq!(
        odd.top.first().map(|v| v.value.clone()),
        Some(Value::from("0044-03-15 00:00:00 BC"))
    );
}

/// Formats of columns with more distinct values than are fetched to check each: a `timestamp`
/// (one fixed shape, checked on its smallest and largest value) keeps its format and its
/// earliest and latest, and so does one whose last value is `infinity` lose them; the same times
/// as `text` are counted over a sample of the first rows, said to be one, and claim nothing.
#[test]
fn timestamps_past_the_fetched_distinct_values_keep_their_format_and_range() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_many_times");
    let s = scratch.schema.clone();
    scratch
        .client
        .batch_execute(&format!(
            "CREATE TABLE {s}.readings (id int PRIMARY KEY, at timestamp, ends timestamp, at_text text);\
             INSERT INTO {s}.readings SELECT g, timestamp '2025-01-01' + g * interval '3 seconds', \
               timestamp '2025-01-01' + g * interval '3 seconds', \
               to_char(timestamp '2025-01-01' + g * interval '3 seconds', 'YYYY-MM-DD HH24:MI:SS') \
             FROM generate_series(1, 260000) g;\
             UPDATE {s}.readings SET ends = 'infinity' WHERE id = 260000;\
             ANALYZE {s}.readings;"
        ))
        .expect("table");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.readings")).expect("the table");
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    let strings = |name: &str| strings_of(&profile, name);
    use schemascope_core::profile::formats::StringFormat;
    let at = strings("at");
    assert_eq!(at.distinct, 260_000);
    assert_eq!((at.format, at.format_sample), (Some(StringFormat::LocalDateTime), None));
    assert_eq!(at.format_counts, vec![(StringFormat::LocalDateTime, 260_000)]);
    assert_eq!(
        (at.min.as_deref(), at.max.as_deref()),
        (Some("2025-01-01 00:00:03"), Some("2025-01-10 00:40:00"))
    );
    let ends = strings("ends");
    assert_eq!((ends.format, ends.min, ends.max), (None, None, None), "{:?}", ends.format_counts);
    assert_eq!(ends.format_sample, Some(100_000));
    let text = strings("at_text");
    assert_eq!((text.format, text.min, text.max), (None, None, None));
    assert_eq!(text.format_sample, Some(100_000));
    assert_eq!(text.format_counts, vec![(StringFormat::LocalDateTime, 100_000)]);
}

/// An independent tester's column under a collation that holds full-width digits equal to
/// ASCII ones: its formats are counted on each value's own text (150 addresses, not a claim
/// for all 300 values), after `ANALYZE` too. (Its distinct count and top values are still
/// counted under the collation, as are the formats of a column of no more distinct values
/// than the top values list.)
#[test]
fn formats_under_a_nondeterministic_collation_are_each_values_own() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let mut scratch = Scratch::new(&uri, "pg_collated_formats");
    let s = scratch.schema.clone();
    if !scratch.runs(&format!(
        "CREATE COLLATION {s}.loose (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"
    )) {
        eprintln!("this PostgreSQL has no ICU collations: nothing to test");
        return;
    }
    scratch
        .client
        .batch_execute(&format!(
            "CREATE TABLE {s}.hosts (id int PRIMARY KEY, t text COLLATE {s}.loose);\
             INSERT INTO {s}.hosts SELECT g, '10.0.0.' || g FROM generate_series(1, 150) g;\
             INSERT INTO {s}.hosts SELECT 1000 + g, translate('10.0.0.' || g, '0123456789', '０１２３４５６７８９') FROM generate_series(1, 150) g;\
             ANALYZE {s}.hosts;"
        ))
        .expect("table");
    let db = PostgresDatabase::connect(&uri).expect("connect");
    let catalog = db.catalog().expect("catalog");
    let table = catalog.table(&format!("{s}.hosts")).expect("the table");
    let profile = profile_table(&db, table).unwrap_or_else(|e| panic!("profile: {e}"));
    let t = strings_of(&profile, "t");
    use schemascope_core::profile::formats::StringFormat;
    assert_eq!((t.format, t.format_counts), (None, vec![(StringFormat::Ipv4, 150)]));
}
