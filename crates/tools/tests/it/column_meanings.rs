//! A wrong column name written for what the column means: validate_query names the column the
//! user's docs describe so ("amount_billed" is `Invoice.Total`, "Amount billed, …"), and the
//! column the question says the name stands for ("age = … BirthDate"); without docs or a
//! definition, it guesses nothing.

use std::path::Path;

use schemascope_tools::{Services, ValidateQueryParams, validate_query};
use serde_json::{Value, json};

use crate::common::{chinook_spec, ok, registry};

fn validate(services: &Services, sql: &str, question: Option<&str>) -> Value {
    ok(validate_query(
        &services.docs,
        ValidateQueryParams {
            source: Some("chinook".into()),
            query: json!(sql),
            question: question.map(str::to_string),
        },
    ))
}

fn fix(report: &Value) -> String {
    let fix = &report["errors"][0]["fix_column"];
    format!("{}.{}", fix["table"].as_str().unwrap_or("-"), fix["column"].as_str().unwrap_or("-"))
}

#[test]
fn the_docs_description_names_the_column_a_wrong_name_meant() {
    let documented = registry(&[&chinook_spec()]);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/docs/chinook");
    documented.docs.set_dir("chinook", docs);
    let plain = registry(&[&chinook_spec()]);
    let cases = [
        // "Amount billed, the sum of the invoice lines' UnitPrice × Quantity."
        ("SELECT InvoiceId, amount_billed FROM Invoice", "Invoice.Total"),
        // "Duration of the track in milliseconds (divide by 60000 for minutes)."
        ("SELECT Name, track_duration FROM Track", "Track.Milliseconds"),
        // Genre's "Genre name.", one join from Track (whose own Name is the track's).
        ("SELECT t.Name, t.genre_name FROM Track t", "Genre.Name"),
    ];
    for (sql, expected) in cases {
        let report = validate(&documented, sql, None);
        assert_eq!(report["valid"], false, "{sql}: {report}");
        assert_eq!(fix(&report), expected, "{sql}: {report}");
        // The schema alone does not say it.
        let report = validate(&plain, sql, None);
        assert_ne!(fix(&report), expected, "{sql}: {report}");
    }
    // The join that brings InvoiceLine in comes with it.
    let report = validate(&documented, "SELECT i.InvoiceId, i.units_sold FROM Invoice i", None);
    let message = report["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("JOIN InvoiceLine ON InvoiceLine.InvoiceId = i.InvoiceId"),
        "{message}"
    );
}

#[test]
fn the_questions_definition_of_a_name_is_followed() {
    let services = registry(&[&chinook_spec()]);
    let sql = "SELECT FirstName, age FROM Employee ORDER BY age DESC LIMIT 1";
    let question = "Who is the oldest employee? age = year(now) - year(BirthDate)";
    let report = validate(&services, sql, Some(question));
    assert_eq!(fix(&report), "Employee.BirthDate", "{report}");
    // Without the definition nothing in the schema says what `age` is.
    let report = validate(&services, sql, Some("Who is the oldest employee?"));
    assert_eq!(report["errors"][0]["kind"], "unknown_column", "{report}");
    assert!(report["errors"][0]["fix_column"].is_null(), "{report}");
}
