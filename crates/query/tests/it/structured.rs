//! Structured queries: parse errors with JSON paths, validation, compiled SQL in both dialects,
//! and the same rows from Chinook in SQLite and PostgreSQL.

use chrono::NaiveDate;
use schemascope_core::Catalog;
use schemascope_query::{
    IssueKind, Location, NoValues, Query, SqlDialect, StaticValues, compile, validate,
};
use schemascope_sources::sql::{Database, PostgresDatabase, SqlValue, SqliteDatabase};
use serde_json::{Value, json};

fn sqlite() -> SqliteDatabase {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    SqliteDatabase::open(&path).expect("open")
}

fn catalog() -> Catalog {
    sqlite().catalog().expect("catalog")
}

fn structured(v: Value) -> Query {
    Query::from_json(v).expect("structured query")
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 22).expect("date")
}

fn tracks_per_genre_top5() -> Value {
    json!({"fields": [{"fieldCaption": "Genre.Name"}, {"fieldCaption": "Track.TrackId", "function": "COUNT", "fieldAlias": "tracks", "sortDirection": "DESC", "sortPriority": 1}],
           "filters": [{"filterType": "TOP", "field": {"fieldCaption": "Genre.Name"}, "howMany": 5, "direction": "TOP", "fieldToMeasure": {"fieldCaption": "Track.TrackId", "function": "COUNT"}}]})
}

fn cases() -> Vec<Value> {
    vec![
        tracks_per_genre_top5(),
        json!({"fields": [{"fieldCaption": "Invoice.BillingCountry", "sortPriority": 1}, {"fieldCaption": "Invoice.Total", "function": "SUM", "fieldAlias": "total"}],
               "filters": [{"filterType": "SET", "field": {"fieldCaption": "BillingCountry"}, "values": ["USA", "Canada", "France"]}]}),
        json!({"fields": [{"fieldCaption": "Invoice.InvoiceDate", "function": "YEAR", "sortPriority": 1}, {"fieldCaption": "Invoice.Total", "function": "SUM"}, {"fieldCaption": "Invoice.Total", "function": "AVG"}]}),
        json!({"fields": [{"fieldCaption": "Artist.Name", "sortPriority": 1}, {"fieldCaption": "Album.Title", "sortPriority": 2}],
               "filters": [{"filterType": "MATCH", "field": {"fieldCaption": "Artist.Name"}, "startsWith": "led"}]}),
        json!({"fields": [{"fieldCaption": "Track.Name", "sortPriority": 1}, {"fieldCaption": "Track.UnitPrice"}, {"fieldCaption": "Track.Milliseconds"}],
               "filters": [{"filterType": "QUANTITATIVE_NUMERICAL", "field": {"fieldCaption": "Track.Milliseconds"}, "quantitativeFilterType": "RANGE", "min": 1000000, "max": 1100000}]}),
        json!({"fields": [{"fieldCaption": "Invoice.InvoiceDate", "function": "TRUNC_QUARTER", "sortPriority": 1}, {"fieldCaption": "Invoice.InvoiceId", "function": "COUNTD"}],
               "filters": [{"filterType": "DATE", "field": {"fieldCaption": "Invoice.InvoiceDate"}, "periodType": "YEARS", "dateRangeType": "LASTN", "rangeN": 2, "anchorDate": "2024-06-30"}]}),
        json!({"fields": [{"fieldCaption": "Invoice.InvoiceDate", "function": "TRUNC_WEEK", "sortPriority": 1}, {"fieldCaption": "Invoice.Total", "function": "MAX"}],
               "filters": [{"filterType": "QUANTITATIVE_DATE", "field": {"fieldCaption": "Invoice.InvoiceDate"}, "minDate": "2022-01-01", "maxDate": "2022-02-28"}]}),
        json!({"fields": [{"fieldCaption": "MediaType.Name", "sortPriority": 1}, {"fieldCaption": "Track.Milliseconds", "function": "VAR"}, {"fieldCaption": "InvoiceLine.Quantity", "function": "SUM"}]}),
    ]
}

#[test]
fn parse_errors_name_the_json_path() {
    let err =
        Query::from_json(json!({"fields": [{"fieldCaption": "Genre.Name"}, {"fieldCaption": "x", "function": "SUMM"}]})).expect_err("bad function");
    assert_eq!(err.path.as_deref(), Some("fields[1].function"));
    let err = Query::from_json(json!({"fields": [], "filters": [{"filterType": "SET", "field": {"fieldCaption": "a"}, "values": [], "colour": 1}]}))
        .expect_err("unknown");
    assert!(err.message.contains("colour"), "{}", err.message);
    assert!(matches!(Query::from_json(json!("SELECT 1")), Ok(Query::Sql(s)) if s == "SELECT 1"));
    let q: Query = serde_json::from_value(tracks_per_genre_top5()).expect("deserialize");
    assert!(matches!(q, Query::Structured(_)));
}

#[test]
fn validation_reports_kinds_paths_and_suggestions() {
    let values = StaticValues {
        values: vec![(
            "Invoice".into(),
            "BillingCountry".into(),
            vec!["USA".into(), "Canada".into(), "France".into()],
        )],
        row_counts: vec![("InvoiceLine".into(), 22_000)],
        ..StaticValues::default()
    };
    let q = structured(
        json!({"fields": [{"fieldCaption": "Genre.Nmae"}, {"fieldCaption": "Track.Name", "function": "SUM"}, {"fieldCaption": "Track.Milliseconds", "function": "YEAR"}, {"fieldCaption": "Name"}],
        "filters": [{"filterType": "SET", "field": {"fieldCaption": "Invoice.BillingCountry"}, "values": ["Frnace"]},
                    {"filterType": "TOP", "field": {"fieldCaption": "Genre.Name"}, "howMany": 3, "fieldToMeasure": {"fieldCaption": "Track.TrackId"}}],
        "options": {"rowLimit": 0}}),
    );
    let r = validate(&q, &catalog(), &values, &sqlite().callables().expect("callables"));
    assert!(!r.valid);
    let got: Vec<(IssueKind, Option<Location>, Option<String>)> =
        r.errors.iter().map(|e| (e.kind, e.location.clone(), e.suggestion.clone())).collect();
    let path = |p: &str| Some(Location::Path(p.into()));
    assert_eq!(
        got,
        vec![
            (IssueKind::UnknownField, path("fields[0].fieldCaption"), Some("Genre.Name".into())),
            (IssueKind::Aggregation, path("fields[1].function"), Some("COUNT or COUNTD".into())),
            (
                IssueKind::Aggregation,
                path("fields[2].function"),
                Some("no function, or COUNT/COUNTD".into())
            ),
            (
                IssueKind::AmbiguousColumn,
                path("fields[3].fieldCaption"),
                Some("Artist.Name".into())
            ),
            (IssueKind::FilterValue, path("filters[0].values[0]"), Some("France".into())),
            (
                IssueKind::Aggregation,
                path("filters[1].fieldToMeasure.function"),
                Some("SUM".into())
            ),
            (IssueKind::InvalidOption, path("options.rowLimit"), None),
        ]
    );
    let big = structured(json!({"fields": [{"fieldCaption": "InvoiceLine.UnitPrice"}]}));
    let r = validate(&big, &catalog(), &values, &sqlite().callables().expect("callables"));
    assert!(r.valid);
    assert_eq!(r.warnings[0].kind, IssueKind::RowLimit);
    assert_eq!(
        r.rewritten_query.as_deref(),
        Some(
            r#"{"fields":[{"fieldCaption":"InvoiceLine.UnitPrice"}],"options":{"rowLimit":10000}}"#
        )
    );
    for case in cases() {
        let r = validate(
            &structured(case.clone()),
            &catalog(),
            &NoValues,
            &sqlite().callables().expect("callables"),
        );
        assert!(r.valid, "{case}: {:?}", r.errors);
    }
}

#[test]
fn compiled_sql_quotes_identifiers_joins_on_keys_and_binds_parameters() {
    let Query::Structured(q) = structured(cases()[1].clone()) else { unreachable!() };
    let lite = compile(&q, &catalog(), SqlDialect::Sqlite, today()).expect("compile");
    assert_eq!(
        lite.sql,
        r#"SELECT "Invoice"."BillingCountry" AS "Invoice.BillingCountry", SUM("Invoice"."Total") AS "total" FROM "Invoice" WHERE "Invoice"."BillingCountry" IN (?1, ?2, ?3) GROUP BY "Invoice"."BillingCountry" ORDER BY "Invoice"."BillingCountry" ASC"#
    );
    assert_eq!(lite.params, vec![json!("USA"), json!("Canada"), json!("France")]);
    let pg = compile(&q, &catalog(), SqlDialect::Postgres, today()).expect("compile");
    assert!(pg.sql.contains(r#"CAST(SUM("Invoice"."Total") AS DOUBLE PRECISION)"#), "{}", pg.sql);
    assert!(
        pg.sql.contains("IN (CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS TEXT))"),
        "{}",
        pg.sql
    );

    let Query::Structured(q) = structured(tracks_per_genre_top5()) else { unreachable!() };
    let lite = compile(&q, &catalog(), SqlDialect::Sqlite, today()).expect("compile");
    assert_eq!(
        lite.sql,
        r#"SELECT "Genre"."Name" AS "Genre.Name", COUNT("Track"."TrackId") AS "tracks" FROM "Genre" JOIN "Track" ON "Track"."GenreId" = "Genre"."GenreId" WHERE "Genre"."Name" IN (SELECT "Genre"."Name" FROM "Genre" JOIN "Track" ON "Track"."GenreId" = "Genre"."GenreId" GROUP BY "Genre"."Name" ORDER BY COUNT("Track"."TrackId") DESC, "Genre"."Name" ASC LIMIT 5) GROUP BY "Genre"."Name" ORDER BY COUNT("Track"."TrackId") DESC"#
    );
    // Two hops: Artist → Album → Track → Genre.
    let Query::Structured(q) = structured(
        json!({"fields": [{"fieldCaption": "Artist.Name"}, {"fieldCaption": "Genre.Name"}]}),
    ) else {
        unreachable!()
    };
    let sql = compile(&q, &catalog(), SqlDialect::Postgres, today()).expect("compile").sql;
    assert!(sql.ends_with(r#"FROM "Artist" JOIN "Album" ON "Album"."ArtistId" = "Artist"."ArtistId" JOIN "Track" ON "Track"."AlbumId" = "Album"."AlbumId" JOIN "Genre" ON "Track"."GenreId" = "Genre"."GenreId""#), "{sql}");
    // Relative dates use the anchor the caller passes.
    let Query::Structured(q) = structured(
        json!({"fields": [{"fieldCaption": "Invoice.InvoiceId"}], "filters": [{"filterType": "DATE", "field": {"fieldCaption": "Invoice.InvoiceDate"}, "periodType": "MONTHS", "dateRangeType": "LAST"}]}),
    ) else {
        unreachable!()
    };
    let c = compile(&q, &catalog(), SqlDialect::Sqlite, today()).expect("compile");
    assert_eq!(c.params, vec![json!("2026-10-01"), json!("2026-11-01")]);
}

fn bind(params: &[Value]) -> Vec<SqlValue> {
    params
        .iter()
        .map(|v| match v {
            Value::Number(n) if n.is_i64() => SqlValue::Integer(n.as_i64().unwrap_or_default()),
            Value::Number(n) => SqlValue::Real(n.as_f64().unwrap_or_default()),
            Value::String(s) => SqlValue::Text(s.clone()),
            Value::Bool(b) => SqlValue::Bool(*b),
            _ => SqlValue::Null,
        })
        .collect()
}

fn normalise(rows: Vec<Vec<SqlValue>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|row| {
            row.into_iter()
                .map(|v| match v {
                    // Nine significant digits: the dialects sum floats in different orders.
                    SqlValue::Real(f) => format!("{f:.8e}"),
                    SqlValue::Integer(i) => format!("{i}"),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn compiled_queries_run_on_chinook_sqlite_and_match_postgres() {
    let lite = sqlite();
    let catalog = catalog();
    let pg = std::env::var("SCHEMASCOPE_TEST_POSTGRES")
        .ok()
        .map(|uri| PostgresDatabase::connect(&uri).expect("connect"));
    if pg.is_none() {
        eprintln!("SCHEMASCOPE_TEST_POSTGRES unset: comparing with PostgreSQL skipped");
    }
    for case in cases() {
        let Query::Structured(q) = structured(case.clone()) else { unreachable!() };
        let a = compile(&q, &catalog, SqlDialect::Sqlite, today()).expect("compile");
        let rows = lite
            .query(&a.sql, &bind(&a.params))
            .unwrap_or_else(|e| panic!("{case}\n{}\n{e}", a.sql));
        assert!(!rows.is_empty(), "{case}: no rows");
        if let Some(pg) = &pg {
            let b = compile(&q, &catalog, SqlDialect::Postgres, today()).expect("compile");
            let other = pg
                .query(&b.sql, &bind(&b.params))
                .unwrap_or_else(|e| panic!("{case}\n{}\n{e}", b.sql));
            assert_eq!(normalise(rows.clone()), normalise(other), "{case}\n{}\n{}", a.sql, b.sql);
        }
        if case == tracks_per_genre_top5() {
            let top: Vec<(String, i64)> = rows
                .iter()
                .map(|r| {
                    (r[0].as_str().unwrap_or("").to_string(), r[1].as_f64().unwrap_or(0.0) as i64)
                })
                .collect();
            assert_eq!(top[0], ("Rock".to_string(), 1297));
            assert_eq!(top.len(), 5);
        }
    }
}
