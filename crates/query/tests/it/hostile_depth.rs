//! SQL nested past any stack: `SELECT 1+1+…+1` with thousands of terms, long chains of NOT,
//! unary minus, AND, OR, casts and UNION, nested CASE, subqueries and function calls. Each is
//! refused with the reason — never a stack overflow, which aborts the whole process — by
//! validate_sql and check_read_only, on a thread with a tokio worker's 2 MiB stack; queries just
//! inside the bounds are still validated.

use schemascope_core::Catalog;
use schemascope_query::sql::{MAX_EXPRESSION_DEPTH, MAX_EXPRESSION_TOKENS, MAX_NESTING};
use schemascope_query::{
    Callables, NoValues, SqlDialect, ValidationReport, check_read_only, validate_sql,
};
use schemascope_sources::sql::{Database, SqliteDatabase};

use crate::common;

fn chinook() -> Catalog {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/chinook/Chinook_Sqlite.sqlite");
    SqliteDatabase::open(&path).expect("open").catalog().expect("catalog")
}

/// Runs `work` on a thread with a 2 MiB stack, as tokio's workers and blocking threads have.
fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        schemascope_core::sync::joined(
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn_scoped(scope, work)
                .expect("spawns")
                .join(),
        )
    })
}

/// The engine's allow-list of callables for `dialect`.
fn callables(dialect: SqlDialect) -> Callables {
    match dialect {
        SqlDialect::Sqlite => common::sqlite_callables(),
        SqlDialect::Postgres => common::postgres_callables(),
        SqlDialect::ClickHouse => common::clickhouse_callables(),
        SqlDialect::DataFusion => common::datafusion_callables(),
        SqlDialect::MySql | SqlDialect::MariaDb => common::mariadb_callables(),
    }
}

fn validate(sql: &str, dialect: SqlDialect, catalog: &Catalog) -> ValidationReport {
    let callables = callables(dialect);
    on_small_stack(|| validate_sql(sql, catalog, &NoValues, &callables))
}

/// Deep SQL: each with the words its refusal must contain.
fn deep() -> Vec<(String, &'static str)> {
    let n = 3_000;
    let chain = |op: &str| (0..n).map(|_| "1").collect::<Vec<_>>().join(op);
    vec![
        // The issue's: 3,000 terms.
        (format!("SELECT {}", chain("+")), "expressions nest deeper than 128 levels"),
        (format!("SELECT {} FROM \"Genre\"", chain(" * ")), "expressions nest deeper"),
        (
            format!(
                "SELECT \"Name\" FROM \"Genre\" WHERE {}",
                (0..n).map(|i| format!("\"GenreId\" = {i}")).collect::<Vec<_>>().join(" OR ")
            ),
            "expressions nest deeper",
        ),
        (
            format!("SELECT 1 WHERE {}", (0..n).map(|_| "TRUE").collect::<Vec<_>>().join(" AND ")),
            "expressions nest deeper",
        ),
        (format!("SELECT {}1", "NOT ".repeat(n)), "recursion limit | nest deeper"),
        (format!("SELECT {}1", "- ".repeat(n)), "recursion limit | nest deeper"),
        (format!("SELECT {}1", "-".repeat(n)), "recursion limit | nest deeper | does not parse"),
        (format!("SELECT 1{}", "::text".repeat(n)), "expressions nest deeper"),
        (format!("SELECT 'a'{}", " || 'a'".repeat(n)), "expressions nest deeper"),
        (format!("SELECT 1 WHERE 1{}", " IS NOT NULL".repeat(n)), "expressions nest deeper"),
        (
            format!("SELECT {} 1 {}", "CASE WHEN TRUE THEN ".repeat(n), "END ".repeat(n)),
            "nest deeper than 128 levels (CASE inside CASE)",
        ),
        (
            format!("SELECT {} 1 {}", "CASE WHEN 1 = 1 THEN 2 ELSE ".repeat(n), "END ".repeat(n)),
            "nest deeper than 128 levels (CASE inside CASE)",
        ),
        (
            format!("SELECT ARRAY{}1{}", "[".repeat(n), "]".repeat(n)),
            "nest deeper than 128 levels | does not tokenize",
        ),
        (
            format!("SELECT {}1{}", "ARRAY[".repeat(n), "]".repeat(n)),
            "nest deeper than 128 levels | does not tokenize",
        ),
        (
            vec!["SELECT 1"; n].join(" UNION ALL "),
            "set operations (UNION, INTERSECT, EXCEPT) nest deeper",
        ),
        (format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)), "parentheses nest 3000 deep"),
        (
            format!("SELECT {}1{}", "(SELECT ".repeat(200), ")".repeat(200)),
            "parentheses nest 200 deep",
        ),
        (format!("SELECT {}1{}", "abs(".repeat(200), ")".repeat(200)), "parentheses nest 200 deep"),
        (format!("SELECT {}", chain("+").repeat(4)), "operators and keywords in one expression"),
    ]
}

fn contains_any(text: &str, alternatives: &str) -> bool {
    alternatives.split(" | ").any(|a| text.contains(a))
}

#[test]
fn deep_sql_is_refused_with_the_reason_on_a_small_stack() {
    let catalog = chinook();
    for (sql, reason) in deep() {
        for dialect in [
            SqlDialect::Sqlite,
            SqlDialect::Postgres,
            SqlDialect::ClickHouse,
            SqlDialect::DataFusion,
        ] {
            // PostgreSQL reads `--` as a comment: what is left, `SELECT`, is a legal query of
            // no columns, which PostgreSQL's grammar reads.
            if dialect == SqlDialect::Postgres && sql.starts_with("SELECT --") {
                assert!(validate(&sql, dialect, &catalog).valid);
                continue;
            }
            let report = validate(&sql, dialect, &catalog);
            assert!(!report.valid, "{dialect} accepted {}…", &sql[..60]);
            let messages: Vec<&str> = report.errors.iter().map(|e| e.message.as_str()).collect();
            assert!(
                messages.iter().any(|m| contains_any(m, reason)),
                "{dialect} {}…: {messages:?}",
                &sql[..60]
            );
            // The read-only check answers too (from the tokens when the tree is refused: a
            // harmless SELECT the database then refuses or computes on its own stack).
            let read_only = on_small_stack(|| check_read_only(&sql, &callables(dialect)));
            if let Err(issues) = read_only {
                assert!(issues.iter().all(|i| !i.message.is_empty()));
            }
        }
    }
}

#[test]
fn queries_just_inside_the_bounds_are_validated() {
    let catalog = chinook();
    let depth = MAX_EXPRESSION_DEPTH - 3;
    let within = [
        format!("SELECT {} AS n FROM \"Genre\"", vec!["\"GenreId\""; depth].join(" + ")),
        format!(
            "SELECT \"Name\" FROM \"Genre\" WHERE {}",
            (0..depth - 2).map(|i| format!("\"GenreId\" = {i}")).collect::<Vec<_>>().join(" OR ")
        ),
        vec!["SELECT \"GenreId\" FROM \"Genre\""; depth].join(" UNION "),
        format!(
            "SELECT {}\"GenreId\"{} AS n FROM \"Genre\"",
            "abs(".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        ),
        format!(
            "SELECT \"Name\" FROM \"Genre\" WHERE \"GenreId\" IN ({})",
            (0..100_000).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        ),
        // Past sqlparser's default recursion limit (50), within ours.
        format!("SELECT {}TRUE AS t", "NOT ".repeat(100)),
        format!("SELECT {}1{} AS n", "- ".repeat(100), ""),
        format!("SELECT {} 1 {} AS c", "CASE WHEN TRUE THEN ".repeat(60), "END ".repeat(60)),
    ];
    for sql in &within {
        let report = validate(sql, SqlDialect::Sqlite, &catalog);
        assert!(report.valid, "{}…: {:?}", &sql[..80], report.errors.first());
        let read_only = on_small_stack(|| check_read_only(sql, &callables(SqlDialect::Postgres)));
        // PostgreSQL's parser is given a bounded number of tokens (its memory per token):
        // the 100,000-value IN list is past it, and refused with the reason.
        if sql.len() > 4 * schemascope_query::sql::MAX_POSTGRES_TOKENS {
            assert!(
                read_only
                    .is_err_and(|e| e[0].message.contains("PostgreSQL's parser is given at most")),
                "{}…",
                &sql[..80]
            );
        } else {
            assert!(read_only.is_ok(), "{}…: {read_only:?}", &sql[..80]);
        }
    }
    // One past: refused.
    let over = format!(
        "SELECT {} AS n FROM \"Genre\"",
        vec!["\"GenreId\""; MAX_EXPRESSION_DEPTH + 1].join(" + ")
    );
    let report = validate(&over, SqlDialect::Sqlite, &catalog);
    assert!(
        report.errors.iter().any(|e| e.message.contains("nest deeper than 128 levels")),
        "{:?}",
        report.errors
    );
    const { assert!(MAX_EXPRESSION_TOKENS > 10 * MAX_EXPRESSION_DEPTH) };
}

/// A statement of more queries than a planner handles in bounded time (a chain of 3,000 CTEs
/// planned for minutes in PostgreSQL, past its timeout and cancel) is refused with the reason,
/// in linear work (40,000 CTEs took 20 s to check); up to the bound they are validated. So are
/// 150,000 VALUES rows, whose parentheses are shallow.
#[test]
fn statements_of_more_queries_than_the_bound_are_refused() {
    use schemascope_query::sql::MAX_QUERIES;
    let catalog = chinook();
    let chain = |n: usize| {
        let ctes: Vec<String> = (0..n)
            .map(|i| {
                if i == 0 {
                    "c0 AS (SELECT 1 AS x)".to_string()
                } else {
                    format!("c{i} AS (SELECT x FROM c{})", i - 1)
                }
            })
            .collect();
        format!("WITH {} SELECT x FROM c{}", ctes.join(", "), n - 1)
    };
    for dialect in
        [SqlDialect::Sqlite, SqlDialect::Postgres, SqlDialect::ClickHouse, SqlDialect::DataFusion]
    {
        let report = validate(&chain(MAX_QUERIES - 1), dialect, &catalog);
        assert!(report.valid, "{dialect}: {:?}", report.errors.first());
        for n in [MAX_QUERIES, 3_000, 40_000] {
            let report = validate(&chain(n), dialect, &catalog);
            assert!(
                report
                    .errors
                    .iter()
                    .any(|e| e.message.contains(&format!("more than {MAX_QUERIES} queries"))),
                "{dialect} {n}: {:?}",
                report.errors
            );
            // PostgreSQL's read-only check refuses what it cannot parse; SQLite's leaves it to
            // the engine, which has its own bound ("subqueries nested too deep").
            if dialect == SqlDialect::Postgres {
                let refused = on_small_stack(|| check_read_only(&chain(n), &callables(dialect)));
                assert!(
                    refused.is_err_and(|e| e.iter().any(|i| i.message.contains("more than")
                        || i.message.contains("PostgreSQL's parser is given at most"))),
                    "{dialect} {n}: the read-only check refuses it too"
                );
            }
        }
    }
    let rows = format!(
        "SELECT * FROM (VALUES {}) AS v(n)",
        (0..150_000).map(|i| format!("({i})")).collect::<Vec<_>>().join(", ")
    );
    let report = validate(&rows, SqlDialect::Sqlite, &catalog);
    assert!(report.valid, "{:?}", report.errors.first());
}
