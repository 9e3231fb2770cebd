//! The value index on real Chinook (SQLite, and PostgreSQL when `SCHEMASCOPE_TEST_POSTGRES` is
//! set): the schema context names the stored values a question names loosely, validate_query
//! checks filter values against every stored value and suggests the one meant, and
//! describe_property looks a value up.

use schemascope_tools::*;
use serde_json::{Value, json};

use crate::common::{chinooks, ok, registry};

fn context(services: &Services, source: &str, question: &str) -> String {
    let data = ok(get_schema_context(
        &services.docs,
        GetSchemaContextParams {
            source: Some(source.into()),
            question: question.into(),
            ..Default::default()
        },
    ));
    data["context"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_context_names_the_stored_values_a_question_names_loosely() {
    let (services, sources) = chinooks();
    let cases = [
        ("How many bossa nova tracks are there?", "Genre.Name", "'Bossa Nova'"),
        ("Which customers live in Sao Jose dos Campos?", "Customer.City", "'São José dos Campos'"),
        ("the customer who works at JetBrains", "Customer.Company", "'JetBrains s.r.o.'"),
        ("total invoiced to united kingdom", "Invoice.BillingCountry", "'United Kingdom'"),
        ("albums by AC DC", "Artist.Name", "'AC/DC'"),
        ("songs by aerosmit", "Artist.Name", "'Aerosmith'"),
    ];
    for (source, _) in &sources {
        for (question, column, value) in cases {
            let text = context(&services, source, question);
            assert!(text.contains("## Values the question names"), "{source}: {question}:\n{text}");
            let named = text
                .lines()
                .any(|l| l.starts_with("- ") && l.contains(column) && l.ends_with(value));
            assert!(named, "{source}: {question}: no {column} {value} in\n{text}");
        }
        let text = context(&services, source, "How many invoices are there per year?");
        assert!(!text.contains("## Values the question names"), "{source}:\n{text}");
    }
}

#[test]
fn filter_values_are_checked_against_every_stored_value() {
    let (services, sources) = chinooks();
    let check = |source: &str, sql: &str| {
        ok(validate_query(
            &services.docs,
            ValidateQueryParams { source: Some(source.into()), query: json!(sql), question: None },
        ))
    };
    for (source, _) in &sources {
        let genre = check(
            source,
            "SELECT COUNT(*) FROM \"Track\" t JOIN \"Genre\" g ON g.\"GenreId\" = t.\"GenreId\" WHERE g.\"Name\" = 'bossa nova'",
        );
        assert_eq!(genre["errors"][0]["kind"], "filter_value", "{source}: {genre}");
        assert_eq!(genre["errors"][0]["suggestion"], "Bossa Nova", "{source}: {genre}");
        // Track.Name has 3,503 values, far more than a profile lists: all were read.
        let track = check(source, "SELECT * FROM \"Track\" WHERE \"Name\" = 'Balls to the wall'");
        assert_eq!(track["errors"][0]["suggestion"], "Balls to the Wall", "{source}: {track}");
        let city =
            check(source, "SELECT * FROM \"Customer\" WHERE \"City\" = 'Sao Jose dos Campos'");
        assert_eq!(city["errors"][0]["suggestion"], "São José dos Campos", "{source}: {city}");
        let stored = check(source, "SELECT * FROM \"Track\" WHERE \"Name\" = 'Balls to the Wall'");
        assert_eq!(stored["valid"], true, "{source}: {stored}");
    }
}

#[test]
fn a_column_whose_values_were_not_all_read_is_never_called_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mixed.sqlite");
    let connection = rusqlite::Connection::open(&path).expect("create");
    let long = "word ".repeat(300);
    connection
        .execute_batch(&format!(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT, note TEXT);
             INSERT INTO t (label, note) VALUES ('alpha', 'short'), (42, '{long}'), ('beta', 'x');"
        ))
        .expect("fill");
    drop(connection);
    let services = registry(&[&format!("mixed={}", path.display())]);
    let check = |sql: &str| {
        ok(validate_query(
            &services.docs,
            ValidateQueryParams { source: None, query: json!(sql), question: None },
        ))
    };
    // `label` holds a number SQLite kept as one; `note` a value too long to list: neither
    // column's strings are all it holds, so no literal is called absent.
    assert_eq!(check("SELECT * FROM t WHERE label = '42'")["valid"], true);
    assert_eq!(check("SELECT * FROM t WHERE note = 'anything'")["valid"], true);
}

fn lookup(
    services: &Services,
    source: &str,
    collection: &str,
    property: &str,
    value: &str,
) -> Value {
    let data = ok(describe_property(
        services,
        DescribePropertyParams {
            source: Some(source.into()),
            property: property.into(),
            collection: Some(collection.into()),
            value: Some(value.into()),
            ..Default::default()
        },
    ));
    data["valueLookup"].clone()
}

#[test]
fn describe_property_looks_a_value_up() {
    let (services, sources) = chinooks();
    for (source, _) in &sources {
        assert_eq!(
            lookup(&services, source, "Genre", "Name", "bossa nova"),
            json!({"value": "bossa nova", "stored": false, "closest": ["Bossa Nova"]}),
            "{source}"
        );
        let rock = lookup(&services, source, "Genre", "Name", "Rock");
        assert_eq!(rock["stored"], true, "{source}: {rock}");
        let city = lookup(&services, source, "Customer", "City", "sao paulo");
        assert_eq!(city["closest"][0], "São Paulo", "{source}: {city}");
    }
    let demo = registry(&["demo:infrastructure"]);
    let typo = lookup(&demo, "infrastructure", "nodes", "type", "databse");
    assert_eq!(typo["stored"], false, "{typo}");
    assert_eq!(typo["closest"][0], "database", "{typo}");
}

#[test]
fn a_huge_top_k_is_refused_past_its_ceiling_and_the_ceiling_itself_answers() {
    let (services, _) = chinooks();
    let context = |top_k: usize| {
        get_schema_context(
            &services.docs,
            GetSchemaContextParams {
                source: Some("chinook".into()),
                question: "bossa nova genre tracks".into(),
                top_k: Some(top_k),
                ..Default::default()
            },
        )
    };
    for top_k in [10_000_000_000usize, usize::MAX] {
        let refused = context(top_k);
        assert!(!refused.success && refused.data["error"] == "past_ceiling", "{}", refused.message);
    }
    let data = ok(context(50));
    assert!(data["context"].as_str().unwrap_or_default().contains("Genre"), "{data}");
}

#[test]
fn the_context_lists_no_value_a_question_does_not_name() {
    let (services, _) = chinooks();
    for question in [
        "List the top 10 longest tracks",
        "total revenue per country",
        "How many invoices are there per year?",
        "Which months in 2012 had sales over 40?",
    ] {
        let text = context(&services, "chinook", question);
        let listed: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("## Values the question names"))
            .skip(1)
            .take_while(|l| l.starts_with("- "))
            .filter(|l| !l.ends_with("(partial match)"))
            .collect();
        assert!(listed.is_empty(), "{question}: {listed:?}");
    }
    let text = context(&services, "chinook", "tracks by Antonio Carlos Jobim");
    assert!(!text.contains("'Carol'"), "{text}");
}
