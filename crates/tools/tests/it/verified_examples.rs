//! Verified examples: read from a docs directory (`_examples.toml`, `_examples/*.sql`) and from
//! the operator's record file, checked on the database (a stale one is reported by file and
//! line, never shown), shown with questions like theirs, seen while served as they change, and
//! recorded through `record_example` only when the operator opted in.

use std::path::Path;

use schemascope_tools::tool_table::listed;
use schemascope_tools::{
    GetSchemaContextParams, RecordExampleParams, Services, get_schema_context, record_example,
};
use serde_json::Value;

use crate::common::{chinook_spec, ok, registry};

const EXAMPLES: &str = r#"
[[example]]
question = "Which artist has the most albums?"
sql = "SELECT ar.Name, COUNT(*) AS n FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY n DESC LIMIT 1"

[[example]]
question = "The longest tracks"
sql = "SELECT Name FROM Track ORDER BY Duration DESC LIMIT 5"

[[example]]
source = "another"
question = "Which artist has the most fans?"
sql = "SELECT 1"
"#;

fn served(dir: &Path) -> Services {
    let registry = registry(&[&chinook_spec()]);
    registry.docs.set_dir("chinook", dir.to_path_buf());
    registry
}

fn context(registry: &Services, question: &str) -> Value {
    ok(get_schema_context(
        &registry.docs,
        GetSchemaContextParams {
            source: Some("chinook".into()),
            question: question.into(),
            max_tokens: None,
            top_k: None,
        },
    ))
}

fn record(registry: &Services, question: &str, sql: &str) -> schemascope_tools::ToolResult {
    record_example(
        &registry.docs,
        RecordExampleParams {
            source: Some("chinook".into()),
            question: question.into(),
            sql: sql.into(),
        },
    )
}

#[test]
fn examples_that_still_validate_are_shown_with_like_questions_and_stale_ones_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("_examples.toml"), EXAMPLES).expect("write");
    let registry = served(dir.path());
    let data = context(&registry, "which artists have the most albums");
    let text = data["context"].as_str().expect("text");
    assert!(text.contains("## Verified examples"), "{text}");
    assert!(text.contains("Q: Which artist has the most albums?"), "{text}");
    assert!(text.contains("JOIN Album al ON al.ArtistId = ar.ArtistId"), "{text}");
    assert!(!text.contains("most fans"), "another source's example: {text}");
    let warnings = data["warnings"].to_string();
    assert!(
        warnings.contains("_examples.toml:6: the example \\\"The longest tracks\\\" no longer validates (no column called Duration"),
        "{warnings}"
    );
    // A question like none of them shows none.
    let text = context(&registry, "employees hired before 2003")["context"].to_string();
    assert!(!text.contains("Verified examples"), "{text}");
    // Nor does a question whose example is stale.
    let text = context(&registry, "the longest tracks")["context"].to_string();
    assert!(!text.contains("Verified examples"), "{text}");
}

#[test]
fn an_example_added_or_fixed_while_served_is_seen_by_the_next_question() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = served(dir.path());
    let question = "how many tracks does each genre have";
    assert!(!context(&registry, question)["context"].to_string().contains("Verified examples"));
    // The directory form, created while served.
    std::fs::create_dir(dir.path().join("_examples")).expect("mkdir");
    let file = dir.path().join("_examples").join("genres.sql");
    std::fs::write(
        &file,
        "-- How many tracks per genre?\nSELECT GenreId, COUNT(*) FROM Track GROUP BY GenreID\n",
    )
    .expect("write");
    let text = context(&registry, question)["context"].as_str().expect("text").to_string();
    assert!(text.contains("Q: How many tracks per genre?"), "{text}");
    // Broken in place inside the subdirectory: reported, no longer shown.
    std::fs::write(
        &file,
        "-- How many tracks per genre?\nSELECT Genre, COUNT(*) FROM Track GROUP BY 1\n",
    )
    .expect("edit");
    let data = context(&registry, question);
    assert!(!data["context"].to_string().contains("Verified examples"), "{data}");
    assert!(data["warnings"].to_string().contains("_examples/genres.sql:1:"), "{data}");
}

#[test]
fn recording_is_listed_only_when_the_operator_names_a_file_and_checks_what_it_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = served(dir.path());
    let names = |r: &Services| listed(r).iter().map(|s| s.name).collect::<Vec<_>>();
    assert!(!names(&registry).contains(&"record_example"));
    let refused = record(&registry, "How many tracks?", "SELECT COUNT(*) FROM Track");
    assert!(
        !refused.success && refused.message.contains("--record-examples"),
        "{}",
        refused.message
    );

    let file = dir.path().join("recorded").join("pairs.toml");
    std::fs::create_dir(dir.path().join("recorded")).expect("mkdir");
    registry.docs.set_record_file(Some(file.clone()));
    assert!(names(&registry).contains(&"record_example"));
    // What does not validate is not recorded.
    let wrong = record(&registry, "How many tracks?", "SELECT COUNT(*) FROM Tracks");
    assert!(!wrong.success && wrong.message.contains("does not validate"), "{}", wrong.message);
    assert!(!file.exists());
    let written = record(&registry, "How many tracks are there?", "SELECT COUNT(*) FROM Track");
    assert!(written.success, "{}", written.message);
    assert_eq!(written.data["recorded"], true);
    let text = context(&registry, "how many tracks are in the store")["context"].to_string();
    assert!(text.contains("Q: How many tracks are there?"), "{text}");
    let again = record(&registry, "how many tracks  are there?", "SELECT COUNT(*) FROM Track");
    assert_eq!(again.data["recorded"], false, "{}", again.message);
    assert_eq!(std::fs::read_to_string(&file).expect("file").matches("[[example]]").count(), 1);

    // The file broken by hand while served: said by line, the rest of the docs still served.
    std::fs::write(&file, "[[example]]\nquestion = \"unterminated\n").expect("break");
    let data = context(&registry, "how many tracks are in the store");
    assert!(!data["context"].to_string().contains("Verified examples"), "{data}");
    assert!(data["warnings"].to_string().contains("pairs.toml:2:"), "{data}");
}

#[test]
fn recording_refuses_what_would_never_be_shown_and_one_question_gets_one_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("_semantic.toml"),
        "[[metric]]\nname = \"average basket\"\nsql = \"AVG(Invoice.Total)\"\n",
    )
    .expect("semantic");
    std::fs::write(
        dir.path().join("_examples.toml"),
        "[[example]]\nquestion = \"Average basket per country\"\nsql = \"SELECT BillingCountry, average_basket FROM Invoice GROUP BY 1\"\n\n\
         [[example]]\nsource = \"elsewhere\"\nquestion = \"q\"\nsql = \"SELECT 1\"\n",
    )
    .expect("examples");
    std::fs::write(dir.path().join("_examples"), "not a directory").expect("file");
    let registry = served(dir.path());
    // An example naming a metric validates as validate_query reads it.
    let data = context(&registry, "average basket per billing country");
    assert!(data["context"].to_string().contains("Q: Average basket per country"), "{data}");
    let warnings = data["warnings"].to_string();
    assert!(warnings.contains("for source `elsewhere`, which is not served"), "{warnings}");
    assert!(warnings.contains("_examples: is not a directory"), "{warnings}");

    // A FIFO is refused at once, never opened for writing.
    let fifo = dir.path().join("fifo.toml");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
    registry.docs.set_record_file(Some(fifo));
    let refused = record(&registry, "How many tracks are there?", "SELECT COUNT(*) FROM Track");
    assert!(
        !refused.success && refused.message.contains("not a regular file"),
        "{}",
        refused.message
    );

    let file = dir.path().join("pairs.toml");
    registry.docs.set_record_file(Some(file.clone()));
    // A metric's name records as it validates.
    let metric = record(
        &registry,
        "Average basket in Canada",
        "SELECT average_basket FROM Invoice WHERE BillingCountry = 'Canada'",
    );
    assert!(metric.success && metric.data["inUse"] == true, "{}", metric.message);
    // The same question with other SQL: one question, one verified answer.
    let other = record(
        &registry,
        "average basket  in canada",
        "SELECT AVG(Total) FROM Invoice WHERE BillingCountry = 'Canada'",
    );
    assert!(
        !other.success && other.message.contains("already has a verified example"),
        "{}",
        other.message
    );
    // The same pair spaced otherwise is the same pair.
    let again = record(
        &registry,
        "Average basket in Canada",
        "SELECT  average_basket\nFROM Invoice WHERE BillingCountry = 'Canada'",
    );
    assert_eq!(again.data["recorded"], false, "{}", again.message);
    // A file broken by hand takes no more pairs until it is fixed.
    std::fs::write(&file, "[[example]\nquestion = \"broken").expect("break");
    let broken = record(&registry, "How many albums?", "SELECT COUNT(*) FROM Album");
    assert!(!broken.success && broken.message.contains("fix the file first"), "{}", broken.message);
}

#[test]
fn many_examples_are_read_in_one_pass_and_the_rest_said() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = String::new();
    for i in 0..5_000 {
        text.push_str(&format!(
            "[[example]]\nquestion = \"Count of table number {i}\"\nsql = \"SELECT {i}\"\n"
        ));
    }
    // A section without SQL makes the file be read section by section.
    text.push_str("[[example]]\nquestion = \"no sql\"\n");
    std::fs::write(dir.path().join("_examples.toml"), text).expect("write");
    let registry = served(dir.path());
    let data = context(&registry, "count of table number 7");
    let warnings = data["warnings"].to_string();
    assert!(
        warnings.contains("_examples.toml:15001:"),
        "the section without SQL, by line: {warnings}"
    );
    assert!(
        warnings.contains("only the first 1000 of 5000 verified examples are used"),
        "{warnings}"
    );
}
