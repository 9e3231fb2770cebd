//! validate_query knows the engine: functions borrowed from other dialects get the engine's
//! own spelling (which then compiles), whatever the local checks miss the engine's compiler
//! finds without running anything, and a column of another table is named with its join —
//! on SQLite and, when `SCHEMASCOPE_TEST_POSTGRES` is set, on PostgreSQL.

use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{chinooks, ok, registry};

fn validate(services: &Services, source: &str, sql: &str, question: Option<&str>) -> Value {
    ok(validate_query(
        &services.docs,
        ValidateQueryParams {
            source: Some(source.into()),
            query: json!(sql),
            question: question.map(str::to_string),
        },
    ))
}

#[test]
fn borrowed_functions_get_a_fix_that_the_engine_then_accepts() {
    let (services, sources) = chinooks();
    let cases = [
        ("SELECT YEAR(\"InvoiceDate\") AS y FROM \"Invoice\" WHERE \"InvoiceId\" = 1", "YEAR"),
        ("SELECT MONTH(\"InvoiceDate\") AS m FROM \"Invoice\" WHERE \"InvoiceId\" = 1", "MONTH"),
        ("SELECT DIVIDE(\"Total\", 2) AS d FROM \"Invoice\" WHERE \"InvoiceId\" = 1", "DIVIDE"),
        ("SELECT SUBTRACT(\"Total\", 1) AS d FROM \"Invoice\" WHERE \"InvoiceId\" = 1", "SUBTRACT"),
        (
            "SELECT DATEDIFF(\"InvoiceDate\", \"InvoiceDate\") AS d FROM \"Invoice\" WHERE \"InvoiceId\" = 1",
            "DATEDIFF",
        ),
    ];
    // SQLite 3.48 and later have IF (as IIF); PostgreSQL has neither.
    let postgres_only = [(
        "SELECT IF(\"Total\" > 5, 'big', 'small') AS s FROM \"Invoice\" WHERE \"InvoiceId\" = 1",
        "IF",
    )];
    for (source, postgres) in &sources {
        let extra = if *postgres { &postgres_only[..] } else { &[] };
        for &(sql, function) in cases.iter().chain(extra) {
            let report = validate(&services, source, sql, None);
            let error = &report["errors"][0];
            assert_eq!(error["kind"], "unknown_function", "{source}: {sql}: {report}");
            let fix = error["suggestion"].as_str().unwrap_or_default();
            assert!(!fix.is_empty(), "{source}: {sql}: {report}");
            // The fix replaces the call: the whole call's text is the name up to its `)`.
            let start = sql.find(function).unwrap_or(0);
            let end = start + sql[start..].find(") AS").unwrap_or(0) + 1;
            let fixed = format!("{}{fix}{}", &sql[..start], &sql[end..]);
            let again = validate(&services, source, &fixed, None);
            assert_eq!(again["valid"], true, "{source} ({postgres}): {fixed}: {again}");
        }
    }
}

#[test]
fn what_only_the_engine_knows_is_found_before_anything_runs() {
    let (services, sources) = chinooks();
    for (source, postgres) in &sources {
        // The local checks do not count arguments; the engine's compiler does.
        let report = validate(&services, source, "SELECT substr() FROM \"Album\"", None);
        assert_eq!(report["valid"], false, "{source}: {report}");
        let message = report["errors"][0]["message"].as_str().unwrap_or_default();
        let engine = if *postgres { "PostgreSQL" } else { "SQLite" };
        assert!(
            message.starts_with(&format!("{engine} rejects the query when compiling it")),
            "{message}"
        );
        // Compiling runs nothing: a query that would fail only when run is valid.
        let report = validate(
            &services,
            source,
            "SELECT CAST(\"Title\" AS INTEGER) / 0 FROM \"Album\" WHERE \"AlbumId\" = 1",
            None,
        );
        assert_eq!(report["valid"], true, "{source}: {report}");
    }
}

#[test]
fn a_column_of_another_table_is_named_with_its_join() {
    let (services, sources) = chinooks();
    for (source, postgres) in &sources {
        // Unquoted on SQLite (a double-quoted unknown name is a string there); quoted on
        // PostgreSQL (its unquoted names fold to lower case).
        let sql = if *postgres {
            "SELECT \"FirstName\", \"Total\" FROM \"Invoice\""
        } else {
            "SELECT FirstName, Total FROM Invoice"
        };
        let report = validate(&services, source, sql, None);
        let error = &report["errors"][0];
        assert_eq!(error["kind"], "unknown_column", "{report}");
        // Written as the dialect reads it back: PostgreSQL folds unquoted names to lower case.
        let (suggestion, join) = if *postgres {
            (
                "\"Customer\".\"FirstName\"",
                "JOIN \"Customer\" ON \"Customer\".\"CustomerId\" = \"Invoice\".\"CustomerId\"",
            )
        } else {
            ("Customer.FirstName", "JOIN Customer ON Customer.CustomerId = Invoice.CustomerId")
        };
        assert_eq!(error["suggestion"], suggestion, "{report}");
        assert_eq!(error["fix_column"], json!({"table": "Customer", "column": "FirstName"}));
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains(join), "{message}");
        // Qualified with the wrong table: the one in scope that has it.
        let sql = if *postgres {
            "SELECT i.\"FirstName\" FROM \"Invoice\" i JOIN \"Customer\" c ON c.\"CustomerId\" = i.\"CustomerId\""
        } else {
            "SELECT i.FirstName FROM Invoice i JOIN Customer c ON c.CustomerId = i.CustomerId"
        };
        let report = validate(&services, source, sql, None);
        let expected = if *postgres { "c.\"FirstName\"" } else { "c.FirstName" };
        assert_eq!(report["errors"][0]["suggestion"], expected, "{report}");
    }
}

#[test]
fn ambiguous_and_misspelt_columns_follow_the_question() {
    let (services, _) = chinooks();
    let sql = "SELECT Name FROM Track JOIN Genre ON Track.GenreId = Genre.GenreId";
    let by_genre = validate(&services, "chinook", sql, Some("Name every genre"));
    assert_eq!(by_genre["errors"][0]["kind"], "ambiguous_column");
    assert_eq!(by_genre["errors"][0]["suggestion"], "Genre.Name", "{by_genre}");
    let by_track = validate(&services, "chinook", sql, Some("List the track names"));
    assert_eq!(by_track["errors"][0]["suggestion"], "Track.Name", "{by_track}");
    // Without a question, the order of FROM.
    let plain = validate(&services, "chinook", sql, None);
    assert_eq!(plain["errors"][0]["suggestion"], "Track.Name", "{plain}");
}

#[test]
fn a_fix_computes_what_the_call_meant() {
    // Spliced in place of the call, an unparenthesised fix would change the arithmetic around
    // it (`DIVIDE(Total + 1, Total - 1)` as `Total + 1 * 1.0 / Total - 1`).
    let (services, sources) = chinooks();
    for (source, _) in &sources {
        let sql = "SELECT DIVIDE(\"Total\" + 1, \"Total\" - 1) * 2 AS v FROM \"Invoice\" WHERE \"InvoiceId\" = 1";
        let report = validate(&services, source, sql, None);
        let fix = report["errors"][0]["suggestion"].as_str().unwrap_or_default().to_string();
        let fixed = sql.replace("DIVIDE(\"Total\" + 1, \"Total\" - 1)", &fix);
        let rows = ok(execute_query(
            &services.sources,
            ExecuteQueryParams {
                source: Some(source.to_string()),
                query: json!(fixed),
                ..Default::default()
            },
        ));
        // Invoice 1 totals 1.98: (2.98 / 0.98) * 2.
        // PostgreSQL's numeric comes back as its exact text.
        let cell = &rows["rows"][0][0];
        let value = cell
            .as_f64()
            .or_else(|| cell.as_str().and_then(|t| t.parse().ok()))
            .unwrap_or_default();
        assert!((value - 2.98 / 0.98 * 2.0).abs() < 1e-6, "{source}: {fixed} gave {value}");
    }
}

#[test]
fn sqlite_syntax_the_parser_cannot_read_is_left_to_sqlite() {
    let (services, _) = chinooks();
    for sql in [
        "SELECT Name FROM Genre WHERE Name IS 'Rock'",
        "SELECT Name FROM Genre WHERE Name GLOB 'R*'",
        "SELECT Name FROM Genre NOT INDEXED",
    ] {
        let report = validate(&services, "chinook", sql, None);
        assert_eq!(report["valid"], true, "{sql}: {report}");
        assert_eq!(report["warnings"][0]["kind"], "portability", "{sql}: {report}");
    }
    // SQLite's own reason when it refuses; writes and other statements stay refused unread.
    let bad = validate(&services, "chinook", "SELECT Nme FROM Genre WHERE Name GLOB 'R*'", None);
    let message = bad["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no such column: Nme"), "{bad}");
    let write = validate(&services, "chinook", "SELECT 1; DELETE FROM Genre", None);
    assert_eq!(write["valid"], false, "{write}");
}

#[test]
fn a_value_no_row_has_is_an_error_only_where_it_filters_rows() {
    let (services, _) = chinooks();
    let check = |sql: &str| validate(&services, "chinook", sql, None);
    assert_eq!(check("SELECT * FROM Genre WHERE Name = 'rock'")["valid"], false);
    for sql in [
        "SELECT * FROM Genre WHERE Name <> '' AND Name NOT IN ('rock') AND NOT Name = 'rockk'",
        "SELECT SUM(Name = 'rock'), CASE WHEN Name = 'rock' THEN 1 END FROM Genre",
    ] {
        let report = check(sql);
        assert_eq!(report["valid"], true, "{sql}: {report}");
        assert_eq!(report["warnings"][0]["kind"], "filter_value", "{sql}: {report}");
    }
    // The closest value must share the literal's words: 'United States' is not 'United Kingdom'.
    let country = check("SELECT * FROM Customer WHERE Country = 'United States'");
    assert_eq!(country["errors"][0]["kind"], "filter_value", "{country}");
    assert!(country["errors"][0]["suggestion"].is_null(), "{country}");
}

#[test]
fn the_engine_decides_whether_a_value_is_stored() {
    // A NOCASE or RTRIM column matches values the stored list spells otherwise.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("collations.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    connection
        .execute_batch(
            "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, padded TEXT COLLATE RTRIM);
             INSERT INTO people (name, padded) VALUES ('Alice', 'abc  '), ('Bob', 'x');",
        )
        .expect("fill");
    drop(connection);
    let services = registry(&[&format!("people={}", path.display())]);
    for sql in [
        "SELECT * FROM people WHERE name = 'alice'",
        "SELECT * FROM people WHERE name IN ('alice', 'BOB')",
        "SELECT * FROM people WHERE padded = 'abc'",
    ] {
        assert_eq!(validate(&services, "people", sql, None)["valid"], true, "{sql}");
    }
    assert_eq!(
        validate(&services, "people", "SELECT * FROM people WHERE name = 'carol'", None)["valid"],
        false
    );
}

#[test]
fn postgresql_forms_the_engine_accepts_are_not_rejected() {
    let (services, sources) = chinooks();
    if !sources.iter().any(|(_, postgres)| *postgres) {
        return;
    }
    for sql in [
        "SELECT \"Name\" FROM \"Genre\" WHERE \"Name\" LIKE ANY (ARRAY['R%', 'J%'])",
        "SELECT \"Name\" FROM \"Genre\" WHERE \"Name\" NOT LIKE ALL (ARRAY['R%', 'J%'])",
        "SELECT \"Name\" FROM \"Genre\" WHERE \"Name\" ILIKE SOME (ARRAY['r%'])",
        "SELECT g FROM \"Genre\" g",
        "SELECT \"Name\" FROM \"Genre\" g WHERE g IS NOT NULL",
    ] {
        let report = validate(&services, "pg", sql, None);
        assert_eq!(report["valid"], true, "{sql}: {report}");
    }
}
