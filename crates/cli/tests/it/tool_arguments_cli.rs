//! The CLI's commands that mirror tools take their arguments as the tools do: a structured query
//! as JSON to `execute` as to `validate-query`, values and statements that start with `-`, and a
//! misspelled record named as the target answered with the records there are.

use std::process::{Command, Output};

use serde_json::Value;

fn chinook() -> String {
    format!("{}/../../testdata/chinook/Chinook_Sqlite.sqlite", env!("CARGO_MANIFEST_DIR"))
}

fn schemascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemascope")).args(args).output().expect("runs")
}

fn envelope(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("no JSON envelope ({e}): {}", String::from_utf8_lossy(&output.stderr))
    })
}

#[test]
fn execute_takes_a_structured_query_as_validate_query_does() {
    let db = chinook();
    let query = r#"{"fields": [{"fieldCaption": "Genre.Name"}]}"#;
    let validated = envelope(&schemascope(&["validate-query", &db, query, "--json"]));
    assert_eq!(validated["data"]["valid"], true, "{validated}");
    let executed = envelope(&schemascope(&["execute", &db, query, "--json"]));
    assert_eq!(executed["success"], true, "{executed}");
    assert_eq!(executed["data"]["rowCount"], 25, "{executed}");
}

#[test]
fn values_and_statements_starting_with_a_dash_are_arguments() {
    let db = chinook();
    let commented =
        envelope(&schemascope(&["execute", &db, "-- the answer\nSELECT 42 AS a", "--json"]));
    assert_eq!(commented["data"]["rows"][0][0], 42, "{commented}");
    let looked_up = envelope(&schemascope(&[
        "property",
        &db,
        "--collection",
        "Invoice",
        "Total",
        "--value",
        "-1",
        "--json",
    ]));
    assert_eq!(looked_up["data"]["valueLookup"]["value"], "-1", "{looked_up}");
    assert_eq!(looked_up["data"]["valueLookup"]["stored"], false);
    let validated =
        envelope(&schemascope(&["validate", "demo:sensors", "counter::Requests", "-5", "--json"]));
    assert_eq!(validated["success"], true, "{validated}");
    assert!(validated["message"].as_str().is_some_and(|m| m.contains("-5")), "{validated}");
}

#[test]
fn a_misspelled_record_named_as_the_target_is_answered_with_the_records() {
    let out = schemascope(&["schema", "demo:sensors", "server::Confg", "--json"]);
    assert!(!out.status.success());
    let answer = envelope(&out);
    let message = answer["message"].as_str().expect("message");
    assert!(message.contains("Did you mean `server::Config`?"), "{message}");
    assert!(message.contains("records: sensor::Location, server::Config"), "{message}");
}

/// A value is JSON, as the tool takes it; a bare word (a string the shell unquoted) is refused
/// with the quoted form to type instead, and that form is checked.
#[test]
fn a_bare_word_as_a_value_is_answered_with_how_to_quote_it() {
    let out = schemascope(&["validate", "demo:sensors", "server::Config", "hello"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(r#"a string is written quoted: '"hello"'"#), "{stderr}");
    let quoted = envelope(&schemascope(&[
        "validate",
        "demo:sensors",
        "server::Config",
        r#""hello""#,
        "--json",
    ]));
    assert_eq!(quoted["success"], true, "{quoted}");
    assert_eq!(quoted["data"]["valid"], false, "{quoted}");
}

/// A malformed object or array, as a value or a structured query, is answered with where the
/// JSON goes wrong — not quoted whole as a string, nor read as SQL.
#[test]
fn malformed_json_is_answered_with_where_it_goes_wrong() {
    let value = schemascope(&["validate", "demo:sensors", "server::Config", r#"{"a": abc}"#]);
    let stderr = String::from_utf8_lossy(&value.stderr);
    assert!(!value.status.success());
    assert!(stderr.contains("expected value at line 1 column 7"), "{stderr}");
    assert!(!stderr.contains("written quoted"), "{stderr}");
    let number = schemascope(&["validate", "demo:sensors", "server::Config", "1e999"]);
    let stderr = String::from_utf8_lossy(&number.stderr);
    assert!(stderr.contains("number out of range"), "{stderr}");
    assert!(!stderr.contains("written quoted"), "{stderr}");
    let query = schemascope(&["execute", &chinook(), r#"{"fields": [abc]}"#]);
    let stderr = String::from_utf8_lossy(&query.stderr);
    assert!(!query.status.success());
    assert!(stderr.contains("the structured query is not valid JSON"), "{stderr}");
}
