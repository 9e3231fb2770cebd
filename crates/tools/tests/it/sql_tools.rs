//! The discovery tools on database tables: Chinook (SQLite, and PostgreSQL when
//! `SCHEMASCOPE_TEST_POSTGRES` is set) and a generated table large enough for sampled pools.

use schemascope_tools::*;
use serde_json::Value;

use crate::common::{chinook_spec, ok, registry};

fn chinook() -> Option<String> {
    Some("chinook".into())
}

fn table(name: &str) -> Option<String> {
    Some(name.into())
}

#[test]
fn describe_schema_reports_tables_with_keys_types_and_column_statistics() {
    let registry = registry(&[&chinook_spec()]);
    let data = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: chinook(), ..Default::default() },
    ));
    let collections = data["collections"].as_array().expect("collections");
    assert_eq!(collections.len(), 11);
    let track = collections.iter().find(|c| c["name"] == "Track").expect("Track");
    assert_eq!(track["kind"], "table");
    assert_eq!(track["count"], 3503);
    assert_eq!(track["table"]["primaryKey"], serde_json::json!(["TrackId"]));
    let column = |name: &str| {
        track["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .find(|p| p["path"] == name)
            .cloned()
            .expect("column")
    };
    assert_eq!(column("GenreId")["column"]["references"], "Genre.GenreId");
    assert_eq!(column("Composer")["column"]["nullable"], true);
    assert_eq!(column("Composer")["nullCount"], 977);
    assert_eq!(column("UnitPrice")["range"]["max"], 1.99);
    let genre = collections.iter().find(|c| c["name"] == "Genre").expect("Genre");
    assert_eq!(
        genre["table"]["referencedBy"],
        serde_json::json!([{"table": "Track", "columns": ["GenreId"], "referencedColumns": ["GenreId"]}])
    );
    let markdown = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: chinook(),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        },
    ));
    let text = markdown["markdown"].as_str().expect("markdown");
    assert!(text.contains("**Table `Track`** (3503 rows):"), "{text}");
    assert!(text.contains("- `GenreId` `INTEGER` → `Genre.GenreId` (integer): 1 - 25"), "{text}");
}

#[test]
fn describe_property_on_a_column_gives_database_histograms_and_values() {
    let registry = registry(&[&chinook_spec()]);
    let total = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: chinook(),
            collection: table("Invoice"),
            property: "Total".into(),
            bins: Some(5),
            ..Default::default()
        },
    ));
    assert_eq!(total["median"], 3.96);
    let histogram = total["histogram"].as_array().expect("histogram");
    assert_eq!(histogram.iter().map(|b| b["count"].as_u64().unwrap_or(0)).sum::<u64>(), 412);
    // Five bins asked, five given: round edges would give 3 or 6 here, so equal widths
    // (25.86 - 0.99) / 5 = 4.974 from the minimum.
    assert_eq!(histogram.len(), 5);
    assert_eq!(histogram[0]["range"], "0.99-5.964");
    let country = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: chinook(),
            collection: table("Customer"),
            property: "Country".into(),
            limit: Some(3),
            ..Default::default()
        },
    ));
    assert_eq!(country["values"][0]["value"], "USA");
    assert_eq!(country["values"][0]["count"], 13);
    let missing = describe_property(
        &registry,
        DescribePropertyParams {
            source: chinook(),
            collection: table("Customer"),
            property: "Contry".into(),
            ..Default::default()
        },
    );
    assert_eq!(missing.data["exists"], false);
    assert!(missing.message.contains("Country"), "{}", missing.message);
}

/// A table's histogram is counted in its database for the profile it is shown with, and kept
/// with it: a later call on the property (another value looked up, another limit) shows the bins
/// of the rows the profile counted, not of rows written since (a new scan would count those,
/// beside a profile that does not).
#[test]
fn a_tables_histogram_is_kept_with_its_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("numbers.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch(
        "CREATE TABLE t (n INTEGER);
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 100)
         INSERT INTO t SELECT i FROM k;",
    )
    .expect("fill");
    let registry = registry(&[&format!("numbers={}", path.display())]);
    // The table's profile, computed now (until it is, a call profiles its column afresh).
    let schema = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("numbers".into()), ..Default::default() },
    ));
    assert_eq!(schema["collections"][0]["count"], 100, "{schema}");
    let described = |value: Option<&str>, limit: Option<usize>| {
        ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: Some("numbers".into()),
                collection: table("t"),
                property: "n".into(),
                bins: Some(4),
                value: value.map(str::to_string),
                limit,
                ..Default::default()
            },
        ))
    };
    let counts = |data: &Value| -> Vec<u64> {
        let bins = data["histogram"].as_array().expect("histogram");
        bins.iter().map(|b| b["count"].as_u64().expect("count")).collect()
    };
    let first = counts(&described(None, None));
    assert_eq!((first.len(), first.iter().sum::<u64>()), (4, 100), "{first:?}");
    db.execute_batch(
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
         INSERT INTO t SELECT 3 FROM k;",
    )
    .expect("more rows");
    let looked_up = described(Some("50"), None);
    assert_eq!(looked_up["numberCount"], 100, "{looked_up}");
    assert_eq!(counts(&looked_up), first, "{looked_up}");
    assert_eq!(counts(&described(Some("7"), Some(3))), first);
}

#[test]
fn samples_of_rows_are_reproducible_stratified_and_representative() {
    let registry = registry(&[&chinook_spec()]);
    let params = |strategy, seed| SampleDataParams {
        source: chinook(),
        collection: table("Track"),
        count: Some(4),
        seed: Some(seed),
        strategy,
        ..Default::default()
    };
    let a = ok(sample_data(&registry.sources, params(None, 11)));
    let b = ok(sample_data(&registry.sources, params(None, 11)));
    assert_eq!(a["Track"], b["Track"]);
    assert_ne!(a["Track"], ok(sample_data(&registry.sources, params(None, 12)))["Track"]);
    let stratified = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            stratify_by: Some("MediaTypeId".into()),
            count: Some(5),
            ..params(None, 3)
        },
    ));
    let mut media: Vec<i64> = stratified["Track"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["MediaTypeId"].as_i64())
        .collect();
    media.sort_unstable();
    media.dedup();
    assert_eq!(media, [1, 2, 3, 4, 5], "one row per media type");
    let representative =
        ok(sample_data(&registry.sources, params(Some(StrategyParam::Representative), 1)));
    assert!(
        representative["Track"].as_array().expect("rows").iter().any(|r| r["Composer"].is_string()),
        "covers the nullable column"
    );
}

#[test]
fn query_schema_of_a_table_is_the_json_schema_of_a_row() {
    let registry = registry(&[&chinook_spec()]);
    let data = ok(query_schema(
        &registry,
        QuerySchemaParams { source: chinook(), collection: table("Track"), ..Default::default() },
    ));
    let schema = &data["schema"];
    assert_eq!(schema["properties"]["TrackId"]["type"], "integer");
    assert_eq!(schema["properties"]["UnitPrice"]["type"], "number");
    assert_eq!(schema["properties"]["Composer"]["type"], serde_json::json!(["string", "null"]));
    assert_eq!(data["example"]["TrackId"], 1);
    assert_eq!(data["metadata"]["primary_key"], serde_json::json!(["TrackId"]));
    let valid = ok(validate_value(
        &registry,
        ValidateValueParams {
            source: chinook(),
            collection: table("Genre"),
            record_name: None,
            value: serde_json::json!({"GenreId": 26, "Name": "Polka"}),
            ..Default::default()
        },
    ));
    assert_eq!(valid["valid"], true);
    let invalid = validate_value(
        &registry,
        ValidateValueParams {
            source: chinook(),
            collection: table("Genre"),
            record_name: None,
            value: serde_json::json!({"GenreId": "x"}),
            ..Default::default()
        },
    );
    assert_eq!(invalid.data["valid"], false);
}

#[test]
fn find_items_on_a_table_explains_what_to_use_instead() {
    let registry = registry(&[&chinook_spec()]);
    let result = find_items(
        &registry.sources,
        FindItemsParams {
            source: chinook(),
            collection: table("Track"),
            selector: "GenreId == `1`".into(),
            ..Default::default()
        },
    );
    assert!(!result.success);
    assert!(result.message.contains("database table"), "{}", result.message);
}

/// A looked-up value holding controls is written with them escaped in the sentence (three NULs
/// read as three spaces there), and exactly in the data.
#[test]
fn a_looked_up_value_with_controls_is_told_apart_from_spaces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("controls.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch("CREATE TABLE t (s TEXT)").expect("table");
    for value in ["\0\0\0", "   ", "a\tb"] {
        db.execute("INSERT INTO t VALUES (?1)", [value]).expect("insert");
    }
    drop(db);
    let registry = registry(&[&format!("controls={}", path.display())]);
    let looked = |value: &str| {
        describe_property(
            &registry,
            DescribePropertyParams {
                source: Some("controls".into()),
                collection: table("t"),
                property: "s".into(),
                value: Some(value.into()),
                ..Default::default()
            },
        )
    };
    let nuls = looked("\0\0\0");
    assert!(
        nuls.message.contains("'\\u{0000}\\u{0000}\\u{0000}' is a stored value of s"),
        "{}",
        nuls.message
    );
    assert_eq!(nuls.data["valueLookup"]["value"], "\0\0\0");
    let tab = looked("a\tc");
    assert!(tab.message.contains("No item has s = 'a\\u{0009}c'"), "{}", tab.message);
}

/// A blob is found by the description it is listed as; a text merely like one is not; a number
/// written as text is found in a number column, and in a column without a type (where SQLite
/// compares a text with a number as texts).
#[test]
fn a_blob_is_looked_up_by_the_description_it_is_listed_as() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("blobs.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch(
        "CREATE TABLE t (b, n INTEGER, u); INSERT INTO t VALUES (x'736f6d65', 5, 7), ('plain', 6, 8.5);",
    )
    .expect("fill");
    drop(db);
    let registry = registry(&[&format!("blobs={}", path.display())]);
    let looked = |property: &str, value: &str| {
        let data = ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: Some("blobs".into()),
                collection: table("t"),
                property: property.into(),
                value: Some(value.into()),
                ..Default::default()
            },
        ));
        data["valueLookup"]["stored"].clone()
    };
    let listed = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: Some("blobs".into()),
            collection: table("t"),
            property: "b".into(),
            ..Default::default()
        },
    ));
    let described = "<blob: 4 bytes, sha256 a6b46dd0d1ae5e86>";
    assert!(
        listed["values"].as_array().expect("values").iter().any(|v| v["value"] == described),
        "{listed}"
    );
    assert_eq!(looked("b", described), true);
    assert_eq!(looked("b", "<blob: 4 bytes, sha256 0000000000000000>"), false);
    assert_eq!(looked("b", "plain"), true);
    assert_eq!(looked("n", "5"), true);
    assert_eq!(looked("n", "7"), false);
    for (value, stored) in [("7", true), ("8.5", true), ("7.0", true), ("9", false), ("abc", false)]
    {
        assert_eq!(looked("u", value), stored, "{value}");
    }
}

/// A SQLite view that cannot be compiled here (it calls a function of the application that
/// made the file) is no false fact anywhere: looking in it is an error saying why, its schema
/// is "failed", not "try again", and generated docs cover the file, the view without a row
/// count.
#[test]
fn a_view_that_cannot_be_read_is_said_so_by_every_tool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("app.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch(
        "CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO b (v) VALUES ('x');
         CREATE VIEW shown AS SELECT app_format(v) AS f FROM b;",
    )
    .expect("fill");
    drop(db);
    let registry = registry(&[&format!("app={}", path.display())]);
    let property = describe_property(
        &registry,
        DescribePropertyParams {
            source: Some("app".into()),
            collection: table("shown"),
            property: "f".into(),
            ..Default::default()
        },
    );
    assert!(!property.success);
    assert_eq!(property.data["error"], "profile_failed", "{}", property.message);
    assert!(property.message.contains("no such function: app_format"), "{}", property.message);
    let schema = query_schema(
        &registry,
        QuerySchemaParams {
            source: Some("app".into()),
            collection: table("shown"),
            ..Default::default()
        },
    );
    assert_eq!(schema.data["error"], "profile_failed", "{}", schema.message);
    let described = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("app".into()), ..Default::default() },
    ));
    assert!(described.to_string().contains("no such function: app_format"), "{described}");
    let docs = tempfile::tempdir().expect("docs");
    ok(generate_schema_docs(
        &registry.docs,
        GenerateDocsParams {
            source: Some("app".into()),
            dir: Some(docs.path().display().to_string()),
            force: false,
        },
    ));
    let view = std::fs::read_to_string(docs.path().join("shown.md")).expect("the view's doc");
    assert!(view.contains("no such function: app_format"), "{view}");
    assert!(!view.contains("rows when these docs were generated"), "{view}");
    let table_doc = std::fs::read_to_string(docs.path().join("b.md")).expect("the table's doc");
    assert!(table_doc.contains("1 rows when these docs were generated"), "{table_doc}");
    // Sampling every collection samples the table and names the view with its reason; asked
    // for by name, the view is an error.
    let every = sample_data(
        &registry.sources,
        SampleDataParams { source: Some("app".into()), ..Default::default() },
    );
    assert!(every.success, "{}", every.message);
    assert_eq!(every.data["b"][0]["v"], "x", "{}", every.data);
    let reason = every.data["sampling"]["shown"]["error"].as_str().unwrap_or_default();
    assert!(reason.contains("no such function: app_format"), "{}", every.data);
    assert!(every.message.contains("no rows of shown"), "{}", every.message);
    let named = sample_data(
        &registry.sources,
        SampleDataParams {
            source: Some("app".into()),
            collection: Some("shown".into()),
            ..Default::default()
        },
    );
    assert!(!named.success, "{}", named.message);
}

#[test]
fn large_tables_are_sampled_from_a_pool_without_reading_every_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch(
        "CREATE TABLE reading (id INTEGER PRIMARY KEY, sensor TEXT NOT NULL, value REAL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
         INSERT INTO reading SELECT i, CASE WHEN i % 1000 = 0 THEN 'rare' ELSE 'common-' || (i % 3) END, i * 0.5 FROM n;",
    )
    .expect("fill");
    drop(db);
    let registry = registry(&[&format!("big={}", path.display())]);
    let params = |seed| SampleDataParams {
        source: Some("big".into()),
        collection: table("reading"),
        count: Some(3),
        seed: Some(seed),
        ..Default::default()
    };
    let first = ok(sample_data(&registry.sources, params(5)));
    assert_eq!(first, ok(sample_data(&registry.sources, params(5))), "same seed, same rows");
    let ids: Vec<i64> = first["reading"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().any(|&id| id > 1000), "random rows come from the whole table: {ids:?}");
    let stratified = ok(sample_data(
        &registry.sources,
        SampleDataParams { stratify_by: Some("sensor".into()), count: Some(4), ..params(9) },
    ));
    let sensors: Vec<&str> = stratified["reading"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["sensor"].as_str())
        .collect();
    assert!(
        sensors.contains(&"rare"),
        "the rare stratum (20 of 20,000 rows) is represented: {sensors:?}"
    );
    let value = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: Some("big".into()),
            collection: table("reading"),
            property: "value".into(),
            ..Default::default()
        },
    ));
    assert_eq!(
        value["histogram"]
            .as_array()
            .expect("bins")
            .iter()
            .map(|b| b["count"].as_u64().unwrap_or(0))
            .sum::<u64>(),
        20_000
    );
    assert_eq!(value["median"], Value::from(5000.25));
}

/// What every database holding Chinook answers alike about `Invoice.Total`: its median and
/// its first bin of five.
fn assert_invoice_totals(registry: &schemascope_tools::Services, source: &Option<String>) {
    let total = ok(describe_property(
        registry,
        DescribePropertyParams {
            source: source.clone(),
            collection: table("Invoice"),
            property: "Total".into(),
            bins: Some(5),
            ..Default::default()
        },
    ));
    assert_eq!(total["median"], 3.96);
    assert_eq!(total["histogram"][0]["range"], "0.99-5.964");
    assert_eq!(total["histogram"].as_array().map(Vec::len), Some(5));
}

/// One value longer than what is read of a row under the byte cap: the message states the bytes
/// received of that row and the limit that applied, not the cap.
#[test]
fn a_clickhouse_row_cut_inside_says_how_much_of_it_was_read() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") else {
        eprintln!(
            "SCHEMASCOPE_TEST_CLICKHOUSE is not set: run through scripts/test to test against ClickHouse"
        );
        return;
    };
    let registry = registry(&[&format!("ch={uri}")]);
    let cut =
        execute(&registry, "ch", "SELECT toString(range(200000)) AS s", None, Some(1_000), None);
    let message = cut.message.clone();
    let cut = ok(cut);
    assert_eq!((cut["rowCount"].as_u64(), &cut["truncatedBy"]), (Some(0), &Value::from("bytes")));
    let row = &cut["cutRow"];
    let received = row["bytes"].as_u64().unwrap_or(0);
    assert_eq!((&row["whole"], row["readLimit"].as_u64()), (&Value::Bool(false), Some(6_096)));
    assert!(received > 6_096 && received < 1_000_000, "{cut}");
    assert!(
        message.contains(&format!("reading stopped {received} bytes into the next row"))
            && message.contains("at most 6096 bytes of one row")
            && message.contains("0 row(s) shown (0 bytes of data)"),
        "{message}"
    );
}

#[test]
fn clickhouse_tables_work_with_every_discovery_tool() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") else {
        eprintln!(
            "SCHEMASCOPE_TEST_CLICKHOUSE is not set: run through scripts/test to test against ClickHouse"
        );
        return;
    };
    let registry = registry(&[&format!("ch={uri}")]);
    let ch = Some("ch".to_string());
    assert_invoice_totals(&registry, &ch);
    for strategy in [None, Some("stratified")] {
        let sample = ok(sample_data(
            &registry.sources,
            SampleDataParams {
                source: ch.clone(),
                collection: table("Track"),
                count: Some(3),
                seed: Some(1),
                strategy: strategy
                    .map(|s| serde_json::from_value(serde_json::json!(s)).expect("strategy")),
                stratify_by: strategy.map(|_| "GenreId".to_string()),
                ..Default::default()
            },
        ));
        let rows = sample["Track"].as_array().expect("rows");
        assert_eq!(rows.len(), 3, "{sample}");
        assert!(rows.iter().all(|r| r["TrackId"].is_i64() && r["Name"].is_string()), "{sample}");
    }
    let schema = ok(query_schema(
        &registry,
        QuerySchemaParams {
            source: ch.clone(),
            collection: table("Invoice"),
            ..Default::default()
        },
    ));
    assert_eq!(schema["schema"]["properties"]["Total"]["type"], "number");
    let markdown = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: ch.clone(),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        },
    ));
    assert!(markdown["markdown"].as_str().expect("text").contains("Track"), "{markdown}");
    let listed = ok(list_sources(&registry, ListSourcesParams::default()));
    let invoice = listed["sources"][0]["collections"]
        .as_array()
        .expect("collections")
        .iter()
        .find(|c| c["name"] == "Invoice")
        .cloned()
        .expect("Invoice");
    assert_eq!(invoice["count"], 412, "{invoice}");
    let uri_shown = listed["sources"][0]["uri"].as_str().expect("uri");
    assert!(uri_shown.contains(":***@") && !uri_shown.contains(":schemascope@"), "{uri_shown}");
    let executed = ok(execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: ch.clone(),
            query: serde_json::json!("SELECT Name, Milliseconds FROM Track ORDER BY TrackId"),
            max_rows: Some(3),
            ..Default::default()
        },
    ));
    assert_eq!(executed["rows"].as_array().map(Vec::len), Some(3), "{executed}");
    assert_eq!(executed["truncatedBy"], "rows", "{executed}");
    // A value looked up in a number column is compared as the column's text (ClickHouse
    // compares no number with a string).
    for (value, stored) in [("343719", true), ("343718", false)] {
        let looked = ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: ch.clone(),
                collection: table("Track"),
                property: "Milliseconds".into(),
                value: Some(value.into()),
                ..Default::default()
            },
        ));
        assert_eq!(looked["valueLookup"]["stored"], stored, "{looked}");
    }
}

#[test]
fn postgres_tables_work_with_every_discovery_tool() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let registry = registry(&[&format!("pg={uri}")]);
    assert_chinook_discovery(&registry, "pg");
}

/// What every served Chinook database answers alike through the discovery tools: the invoice
/// totals, a sample, a table's JSON Schema with its comment, the markdown schema with table
/// comments, the view's counted rows in list_sources, and its URI without the password.
fn assert_chinook_discovery(registry: &schemascope_tools::Services, name: &str) {
    let source = Some(name.to_string());
    assert_invoice_totals(registry, &source);
    let sample = ok(sample_data(
        &registry.sources,
        SampleDataParams {
            source: source.clone(),
            collection: table("Genre"),
            count: Some(2),
            seed: Some(1),
            ..Default::default()
        },
    ));
    assert_eq!(sample["Genre"].as_array().map(Vec::len), Some(2));
    let schema = ok(query_schema(
        registry,
        QuerySchemaParams {
            source: source.clone(),
            collection: table("Invoice"),
            ..Default::default()
        },
    ));
    assert_eq!(schema["schema"]["properties"]["Total"]["type"], "number");
    assert_eq!(
        schema["metadata"]["comment"],
        "One purchase by a customer; its lines are in InvoiceLine."
    );
    let markdown = ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams {
            source: source.clone(),
            format: Some(SchemaFormat::Markdown),
            ..Default::default()
        },
    ));
    assert!(
        markdown["markdown"]
            .as_str()
            .expect("text")
            .contains("— People and companies who bought music from the store.")
    );
    // A view is listed as a view, with the rows its profile counted (the catalog cannot know
    // them), and the password of the URI is never shown.
    let listed = ok(list_sources(registry, ListSourcesParams::default()));
    let listed = listed["sources"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .expect("the source")
        .clone();
    let collections = listed["collections"].as_array().expect("collections");
    let view = collections.iter().find(|c| c["name"] == "CustomerInvoiceTotals").expect("the view");
    assert_eq!(
        (&view["relation"], &view["count"]),
        (&serde_json::json!("view"), &serde_json::json!(59)),
        "{view}"
    );
    let invoice = collections.iter().find(|c| c["name"] == "Invoice").expect("Invoice");
    assert_eq!(
        (&invoice["relation"], &invoice["count"]),
        (&serde_json::json!("table"), &serde_json::json!(412)),
        "{invoice}"
    );
    let uri_shown = listed["uri"].as_str().expect("uri");
    assert!(uri_shown.contains(":***@") && !uri_shown.contains(":schemascope@"), "{uri_shown}");
}

#[test]
fn the_docs_index_is_rebuilt_when_a_docs_file_changes() {
    let registry = registry(&[&chinook_spec()]);
    let dir = tempfile::tempdir().expect("tempdir");
    registry.docs.set_dir("chinook", dir.path().to_path_buf());
    let search = || {
        ok(search_schema_docs(
            &registry.docs,
            SearchSchemaDocsParams {
                source: chinook(),
                question: "are refunds recorded".into(),
                top_k: Some(1),
            },
        ))
    };
    assert_eq!(search()["chunks"], serde_json::json!([]), "nothing speaks of refunds yet");
    std::fs::write(
        dir.path().join("Invoice.md"),
        "# Table: Invoice\n\n## Purpose\n\nPurchases. Refunds are never recorded here.\n",
    )
    .expect("write");
    assert_eq!(
        search()["chunks"][0]["table"],
        "Invoice",
        "the new file is indexed on the next call"
    );
    std::fs::remove_file(dir.path().join("Invoice.md")).expect("remove");
    assert_eq!(search()["chunks"], serde_json::json!([]), "and forgotten when removed");
}

fn execute(
    registry: &schemascope_tools::Services,
    source: &str,
    sql: &str,
    max_rows: Option<usize>,
    max_bytes: Option<usize>,
    timeout_ms: Option<u64>,
) -> ToolResult {
    execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: Some(source.into()),
            query: Value::from(sql),
            max_rows,
            max_bytes,
            timeout_ms,
        },
    )
}

/// `wide` returns 40 rows of about 300 KB each; `quote` is the engine's identifier quote.
fn assert_execution_contract(
    registry: &schemascope_tools::Services,
    source: &str,
    sleep: &str,
    wide: &str,
    quote: char,
) {
    let execute = |registry, source, sql: &str, max_rows, max_bytes, timeout_ms| {
        execute(
            registry,
            source,
            &sql.replace('"', &quote.to_string()),
            max_rows,
            max_bytes,
            timeout_ms,
        )
    };
    let top = ok(execute(
        registry,
        source,
        "SELECT \"BillingCountry\", COUNT(*) AS n FROM \"Invoice\" GROUP BY 1 ORDER BY n DESC, 1 LIMIT 3",
        None,
        None,
        None,
    ));
    assert_eq!(top["columns"], serde_json::json!(["BillingCountry", "n"]));
    assert_eq!(top["rows"][0], serde_json::json!(["USA", 91]));
    assert_eq!(top["truncated"], false);
    let capped = ok(execute(
        registry,
        source,
        "SELECT \"TrackId\" FROM \"Track\" ORDER BY 1",
        Some(5),
        None,
        None,
    ));
    assert_eq!(
        (capped["rowCount"].as_u64(), &capped["truncated"], &capped["truncatedBy"]),
        (Some(5), &Value::Bool(true), &Value::from("rows"))
    );
    let bytes = ok(execute(
        registry,
        source,
        "SELECT \"Name\" FROM \"Track\" ORDER BY \"TrackId\"",
        Some(100),
        Some(200),
        None,
    ));
    assert_eq!(bytes["truncatedBy"], "bytes");
    assert!(bytes["bytes"].as_u64().unwrap_or(u64::MAX) <= 200);
    // Reading stops at the row that passes the byte cap: 3 rows kept, the 4th read, 36 never.
    let wide = execute(registry, source, wide, None, Some(1_000_000), None);
    let message = wide.message.clone();
    let wide = ok(wide);
    assert_eq!(
        (wide["rowCount"].as_u64(), wide["rowsRead"].as_u64(), &wide["truncatedBy"]),
        (Some(3), Some(4), &Value::from("bytes"))
    );
    // The message states what was measured: the bytes kept and the size of the row that passed.
    let (kept, next) = (wide["bytes"].as_u64().unwrap_or(0), wide["cutRow"]["bytes"].as_u64());
    assert!(kept > 0 && next.is_some_and(|n| kept + n > 1_000_000), "{wide}");
    assert_eq!(wide["cutRow"]["whole"], true);
    assert!(
        message.contains(&format!("3 row(s) shown ({kept} bytes of data)"))
            && message.contains(&format!("the next row takes {} bytes", next.unwrap_or(0)))
            && message.contains("1000000-byte cap"),
        "{message}"
    );
    let class = |result: ToolResult| {
        assert!(!result.success, "{}", result.message);
        result.data["class"].as_str().unwrap_or_default().to_string()
    };
    // Unquoted: SQLite reads an unknown "quoted" name as a string literal (validate_query warns).
    assert_eq!(
        class(execute(registry, source, "SELECT Saless FROM \"Invoice\"", None, None, None)),
        "syntax"
    );
    assert_eq!(
        class(execute(registry, source, "DELETE FROM \"Genre\"", None, None, None)),
        "refused"
    );
    assert_eq!(class(execute(registry, source, sleep, None, None, Some(200))), "timeout");
}

#[test]
fn execute_query_caps_rows_and_bytes_and_classifies_failures_on_sqlite() {
    let registry = registry(&[&chinook_spec()]);
    let endless =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n";
    let wide = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i, printf('%.*c', 300000, 'x') FROM n";
    assert_execution_contract(&registry, "chinook", endless, wide, '"');
    assert_eq!(
        execute(&registry, "chinook", "SELECT 1; SELECT 2", None, None, None).data["class"],
        "refused"
    );
    // One expensive row fails at SQLite's value-size limit at once, whatever the timeout.
    let expensive = execute(
        &registry,
        "chinook",
        "SELECT replace(printf('%.*c', 30000000, 'a'), 'a', 'bb')",
        None,
        None,
        Some(1_000),
    );
    assert!(
        !expensive.success && expensive.message.contains("string or blob too big"),
        "{}",
        expensive.message
    );
    assert_eq!(expensive.data["class"], "syntax");
}

#[test]
fn execute_query_caps_rows_and_bytes_and_classifies_failures_on_postgres() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let registry = registry(&[&format!("pg={uri}")]);
    // pg_sleep is refused (a function the read-only check denies): a long join runs instead.
    let wide = "SELECT i, repeat('x', 300000) FROM generate_series(1, 40) AS i";
    assert_execution_contract(
        &registry,
        "pg",
        "SELECT COUNT(*) FROM \"Track\" a, \"Track\" b, \"Track\" c",
        wide,
        '"',
    );
}

#[test]
fn execute_query_caps_rows_and_bytes_and_classifies_failures_on_mariadb() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let registry = registry(&[&format!("my={uri}")]);
    let wide = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) SELECT i, REPEAT('x', 300000) FROM n";
    assert_execution_contract(
        &registry,
        "my",
        "SELECT COUNT(*) FROM Track a, Track b, Track c WHERE a.Milliseconds + b.Milliseconds + c.Milliseconds < 0",
        wide,
        '`',
    );
}

#[test]
fn mariadb_tables_work_with_every_discovery_tool() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    let northwind = uri.replace("/chinook", "/northwind");
    let registry = registry(&[&format!("my={uri}"), &format!("nw={northwind}")]);
    let my = Some("my".to_string());
    assert_chinook_discovery(&registry, "my");
    // A value as people write it is found in the column that holds it, whatever its case.
    let value = ok(describe_property(
        &registry,
        DescribePropertyParams {
            source: Some("nw".into()),
            collection: table("Customers"),
            property: "Country".into(),
            value: Some("germany".into()),
            ..Default::default()
        },
    ));
    // The column's collation ignores case: the lookup does not.
    assert_eq!(value["valueLookup"]["stored"], false, "{value}");
    assert_eq!(value["valueLookup"]["closest"][0], "Germany", "{value}");
    // The engine's own compile step judges names the catalog check cannot.
    let report = ok(validate_query(
        &registry.docs,
        ValidateQueryParams {
            source: my.clone(),
            query: Value::from("SELECT Name FROM Track ORDER BY NoSuchThing(Name)"),
            question: None,
        },
    ));
    assert_eq!(report["valid"], false, "{report}");
    // A result the server says may be incomplete says so (MariaDB stops the recursion at
    // max_recursive_iterations with only a warning).
    let executed = ok(execute_query(
        &registry.sources,
        ExecuteQueryParams {
            source: my.clone(),
            query: Value::from(
                "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5000) SELECT MAX(n) FROM t",
            ),
            ..Default::default()
        },
    ));
    assert_eq!(executed["rows"][0][0], 1001, "{executed}");
    let warned = executed["warnings"][0].as_str().unwrap_or_default();
    assert!(warned.contains("may be incomplete"), "{executed}");
}

/// A histogram the database cannot count now (its file broken since it was profiled) is said to
/// be missing, not silently left out; bins counted before for the same profile are still shown.
#[test]
fn a_histogram_the_database_cannot_count_is_said_to_be_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.sqlite");
    let db = rusqlite::Connection::open(&path).expect("create");
    db.execute_batch(
        "CREATE TABLE t (n INTEGER);
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 200)
         INSERT INTO t SELECT i FROM k;",
    )
    .expect("fill");
    drop(db);
    let registry = registry(&[&format!("broken={}", path.display())]);
    ok(describe_schema(
        &registry.sources,
        DescribeSchemaParams { source: Some("broken".into()), ..Default::default() },
    ));
    let described = |bins: usize| {
        ok(describe_property(
            &registry,
            DescribePropertyParams {
                source: Some("broken".into()),
                collection: table("t"),
                property: "n".into(),
                bins: Some(bins),
                ..Default::default()
            },
        ))
    };
    assert!(described(5).get("histogram").is_some());
    std::fs::write(&path, vec![b'x'; 8192]).expect("break the file");
    let broken = described(7);
    assert!(broken.get("histogram").is_none(), "{broken}");
    assert!(broken["histogramError"].as_str().is_some_and(|e| e.contains("could not count")));
    assert_eq!(described(5)["histogram"].as_array().map(Vec::len), Some(5));
}
