//! No false rejections: every gold SQL of Spider's dev_open.json validates against its schema
//! (schema-only catalogs from tables.json, no known values) with zero errors.

use schemascope_docs::eval::{spider_databases, spider_questions};
use schemascope_query::{NoValues, SqlDialect, validate_sql};

fn read(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/spider").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_spider_gold_query_validates_without_errors() {
    let databases = spider_databases(&read("tables.json")).expect("tables.json");
    let questions = spider_questions(&read("dev_open.json")).expect("dev_open.json");
    assert_eq!(questions.len(), 493);
    let mut rejected = Vec::new();
    let mut warned = 0;
    for q in &questions {
        let db = databases.iter().find(|d| d.db_id == q.db_id).expect("database");
        let report = validate_sql(&q.query, SqlDialect::Sqlite, &db.catalog, &NoValues);
        if !report.warnings.is_empty() {
            warned += 1;
        }
        if !report.valid {
            rejected.push(format!("{} | {} | {:?}", q.db_id, q.query, report.errors));
        }
    }
    eprintln!("spider: {} accepted, {} rejected, {warned} with warnings", questions.len() - rejected.len(), rejected.len());
    assert!(rejected.is_empty(), "{} false rejections:\n{}", rejected.len(), rejected.join("\n"));
}
