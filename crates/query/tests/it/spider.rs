//! No false rejections: every gold SQL of Spider's dev_open.json validates against its schema
//! (schema-only catalogs from tables.json, no known values, SQLite's own allow-list of
//! functions) with zero errors; and PostgreSQL's allow-list refuses none of their calls that
//! PostgreSQL has.

use schemascope_docs::eval::{spider_databases, spider_questions};
use schemascope_query::{IssueKind, NoValues, check_read_only, validate_sql};
use schemascope_sources::sql::Database;

use crate::common;

fn read(name: &str) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/spider").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_spider_gold_query_validates_without_errors() {
    let databases = spider_databases(&read("tables.json")).expect("tables.json");
    let questions = spider_questions(&read("dev_open.json")).expect("dev_open.json");
    assert_eq!(questions.len(), 493);
    let callables = common::sqlite_callables();
    let mut rejected = Vec::new();
    let mut warned = 0;
    for q in &questions {
        let db = databases.iter().find(|d| d.db_id == q.db_id).expect("database");
        let report = validate_sql(&q.query, &db.catalog, &NoValues, &callables);
        if !report.warnings.is_empty() {
            warned += 1;
        }
        if !report.valid {
            rejected.push(format!("{} | {} | {:?}", q.db_id, q.query, report.errors));
        }
    }
    eprintln!(
        "spider: {} accepted, {} rejected, {warned} with warnings",
        questions.len() - rejected.len(),
        rejected.len()
    );
    assert!(rejected.is_empty(), "{} false rejections:\n{}", rejected.len(), rejected.join("\n"));
}

/// The gold queries are SQLite's SQL; run through PostgreSQL's read-only check (the database
/// layer's and execute_query's), none is refused for what it calls, except calls of functions
/// PostgreSQL does not have (which could not run there either). Needs the test server.
#[test]
fn postgres_refuses_no_call_of_the_spider_gold_queries_that_it_could_run() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    let callables = schemascope_sources::sql::PostgresDatabase::connect(&uri)
        .expect("connect")
        .callables()
        .expect("callables");
    let questions = spider_questions(&read("dev_open.json")).expect("dev_open.json");
    let (mut unknown, mut refused) = (Vec::new(), Vec::new());
    for q in &questions {
        let Err(issues) = check_read_only(&q.query, &callables) else { continue };
        for issue in issues {
            if issue.kind == IssueKind::UnknownFunction {
                unknown.push(issue.message);
            } else {
                refused.push(format!("{} | {}", q.query, issue.message));
            }
        }
    }
    eprintln!(
        "spider on PostgreSQL: {} calls of functions PostgreSQL lacks: {unknown:?}",
        unknown.len()
    );
    assert!(refused.is_empty(), "{} false rejections:\n{}", refused.len(), refused.join("\n"));
}
