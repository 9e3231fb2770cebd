//! False refusals of legal PostgreSQL by the read-only check, measured against the test
//! server's allow-list on three corpora: BIRD mini-dev's gold SQL in PostgreSQL form, Spider's
//! gold SQL, and PostgreSQL's own regression-test SELECTs (`testdata/pg_regress`). Only the
//! statements PostgreSQL's grammar parses count; the refusals are tallied by reason. Before the
//! check read statements with PostgreSQL's grammar, every one sqlparser could not parse was
//! refused ("does not parse"): that figure is measured here too, as sqlparser's failures.

use std::collections::BTreeMap;

use schemascope_docs::eval::spider_questions;
use schemascope_query::{Callables, IssueKind, check_read_only, postgres_relations};
use sqlparser::dialect::PostgreSqlDialect;

fn testdata(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What the check made of one corpus.
#[derive(Default)]
struct Tally {
    /// Statements PostgreSQL's grammar parses.
    parsed: usize,
    /// Of those, how many sqlparser does not parse (each refused before).
    unread_by_sqlparser: usize,
    /// Refusals now, by reason: the issue kind of the first refusal, with the statements.
    refused: BTreeMap<String, Vec<String>>,
}

impl Tally {
    fn add(&mut self, sql: &str, callables: &Callables) {
        if postgres_relations(sql).is_err() {
            return;
        }
        self.parsed += 1;
        let sqlparser = schemascope_core::deep_stack::on_deep_stack(|| {
            schemascope_query::sql::parse_bounded(&PostgreSqlDialect {}, sql).is_ok()
        });
        if sqlparser != Ok(true) {
            self.unread_by_sqlparser += 1;
        }
        if let Err(issues) = check_read_only(sql, callables) {
            let reason = match issues[0].kind {
                IssueKind::Syntax => "syntax or bounds",
                IssueKind::NotReadOnly | IssueKind::MultipleStatements => "writes, locks or INTO",
                IssueKind::ForbiddenFunction => "a call the catalog refuses",
                IssueKind::UnknownFunction => "a function or operator this database lacks",
                _ => "other",
            };
            self.refused
                .entry(reason.to_string())
                .or_default()
                .push(format!("{sql} | {}", issues[0].message));
        }
    }

    fn count(&self, reason: &str) -> usize {
        self.refused.get(reason).map_or(0, Vec::len)
    }

    fn summary(&self, name: &str) -> String {
        let reasons: Vec<String> =
            self.refused.iter().map(|(reason, list)| format!("{reason}: {}", list.len())).collect();
        format!(
            "{name}: {} statements PostgreSQL parses; {} of them sqlparser does not (refused before); refused now: {}",
            self.parsed,
            self.unread_by_sqlparser,
            if reasons.is_empty() { "none".to_string() } else { reasons.join(", ") }
        )
    }
}

/// Needs the test server, whose catalog the allow-list is read from.
#[test]
fn legal_postgres_is_refused_only_for_what_it_calls() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_POSTGRES") else {
        eprintln!(
            "SCHEMASCOPE_TEST_POSTGRES is not set: run through scripts/test to test against PostgreSQL"
        );
        return;
    };
    use schemascope_sources::sql::Database;
    let callables = schemascope_sources::sql::PostgresDatabase::connect(&uri)
        .expect("connect")
        .callables()
        .expect("callables");

    let mut bird = Tally::default();
    let gold: serde_json::Value =
        serde_json::from_str(&testdata("bird/mini_dev_postgresql.json")).expect("BIRD json");
    for q in gold.as_array().expect("a list") {
        bird.add(q["SQL"].as_str().expect("SQL"), &callables);
    }
    let mut spider = Tally::default();
    for q in spider_questions(&testdata("spider/dev_open.json")).expect("dev_open.json") {
        spider.add(&q.query, &callables);
    }
    let mut regress = Tally::default();
    let statements: Vec<String> =
        serde_json::from_str(&testdata("pg_regress/selects.json")).expect("selects.json");
    for sql in &statements {
        regress.add(sql, &callables);
    }
    for (name, tally) in [("BIRD", &bird), ("Spider", &spider), ("regress", &regress)] {
        eprintln!("{}", tally.summary(name));
        for sql in tally.refused.get("syntax or bounds").into_iter().flatten().take(20) {
            eprintln!("  {sql}");
        }
    }
    // Gold queries of ordinary types: none refused, whatever syntax they use.
    assert_eq!(bird.parsed, 500, "BIRD's PostgreSQL gold SQL all parses");
    assert!(bird.refused.is_empty(), "{}: {:#?}", bird.summary("BIRD"), bird.refused);
    assert!(
        spider.count("syntax or bounds") == 0 && spider.count("writes, locks or INTO") == 0,
        "{}",
        spider.summary("Spider")
    );
    // PostgreSQL's own SELECTs: a refusal for syntax is a parse PostgreSQL's grammar accepted
    // and the check did not read; the only ones left are statements past the bounds.
    assert!(regress.parsed > 10_000, "{}", regress.summary("regress"));
    assert!(
        regress.count("syntax or bounds") == 0,
        "{}: {:#?}",
        regress.summary("regress"),
        regress.refused.get("syntax or bounds")
    );
}
