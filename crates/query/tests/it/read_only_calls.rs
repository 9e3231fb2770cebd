//! The read-only check's call decisions, on an allow-list built as the database layer builds
//! it (here by hand for PostgreSQL, so no server is needed; from the engine for SQLite): names
//! resolved as PostgreSQL resolves them, escapes refused, calls through operators, casts,
//! typed literals and attribute notation, syntax forms, unknown names, and the depth bound.

use schemascope_query::sql::{EXECUTION_WORK_BUDGET, MAX_EXPRESSION_DEPTH};
use schemascope_query::{
    Callables, IssueKind, MAX_CALL_DEPTH, QueryIssue, SqlDialect, check_read_only,
    check_read_only_within,
};

use crate::common;

fn postgres() -> Callables {
    let mut c = Callables::new(SqlDialect::Postgres);
    for name in [
        "count",
        "max",
        "length",
        "upper",
        "lower",
        "abs",
        "random",
        "generate_series",
        "to_json",
        "substr",
        // PostgreSQL's grammar makes `EXTRACT(… FROM …)` a call of pg_catalog.extract.
        "extract",
    ] {
        c.add_function(Some("pg_catalog"), name, true);
    }
    for name in ["pg_sleep", "ts_stat", "set_config"] {
        c.add_function(Some("pg_catalog"), name, false);
    }
    // A 63-byte name: PostgreSQL cuts longer identifiers to it.
    c.add_function(Some("public"), &format!("evil_{}", "x".repeat(58)), false);
    c.add_function(Some("scratch"), "touch_row", false);
    c.add_attribute_call("touch_row");
    for symbol in ["=", "<>", "<", ">", "<=", ">=", "+", "-", "||", "~~"] {
        c.add_operator(Some("pg_catalog"), symbol, true);
    }
    c.add_operator(Some("scratch"), "#@#", false);
    c.add_unsafe_type(Some("scratch"), "slow_int");
    c
}

fn refusal(sql: &str, callables: &Callables) -> Vec<QueryIssue> {
    check_read_only(sql, callables).expect_err(sql)
}

fn assert_refused(sql: &str, callables: &Callables, kind: IssueKind, says: &str) {
    let issues = refusal(sql, callables);
    assert!(
        issues.iter().any(|i| i.kind == kind && i.message.contains(says)),
        "{sql}: expected {kind:?} saying {says:?}, got {issues:?}"
    );
}

#[test]
fn names_resolve_as_postgres_resolves_them() {
    let c = postgres();
    use IssueKind::ForbiddenFunction as F;
    for sql in [
        "SELECT pg_sleep(1)",
        "SELECT PG_SLEEP(1)",
        "SELECT \"pg_sleep\"(1)",
        "SELECT pg_catalog.pg_sleep(1)",
        "SELECT \"pg_catalog\".PG_SLEEP(1)",
        "SELECT pg_catalog /* c */ . -- c\n pg_sleep (1)",
        "WITH w AS (SELECT pg_sleep(1) AS x) SELECT x FROM w",
        "SELECT * FROM (SELECT 1 AS a) s WHERE a IN (SELECT pg_sleep(1)::int)",
        "SELECT 1 FROM generate_series(1, 2) g, LATERAL pg_sleep(g) AS p",
        "SELECT a FROM (SELECT 1 AS a) s ORDER BY pg_sleep(1)",
        "SELECT * FROM ts_stat('SELECT 1')",
        "SELECT count(*) FILTER (WHERE set_config('a', 'b', false) = 'b') FROM generate_series(1, 2)",
    ] {
        assert_refused(sql, &c, F, "is not allowed");
    }
    // Quoted names keep their case: "PG_SLEEP" is no function at all, "PG_CATALOG" no schema.
    assert_refused(
        "SELECT \"PG_SLEEP\"(1)",
        &c,
        IssueKind::UnknownFunction,
        "PG_SLEEP does not exist",
    );
    assert_refused(
        "SELECT \"PG_CATALOG\".pg_sleep(1)",
        &c,
        IssueKind::UnknownFunction,
        "PG_CATALOG.pg_sleep does not exist",
    );
    // Longer than 63 bytes: cut, as PostgreSQL cuts it, to the refused name.
    assert_refused(&format!("SELECT evil_{}_and_more(1)", "x".repeat(58)), &c, F, "is not allowed");
    assert!(
        check_read_only("SELECT upper(lower('a')), ABS(-1), Pg_Catalog.Substr('ab', 1)", &c)
            .is_ok()
    );
}

#[test]
fn escapes_operators_casts_literals_and_attribute_notation_are_calls_too() {
    let c = postgres();
    use IssueKind::ForbiddenFunction as F;
    assert_refused("SELECT U&\"pg_\\0073leep\"(1)", &c, F, "U&");
    assert_refused("SELECT u&\"p!0067_sleep\" UESCAPE '!' (1)", &c, F, "U&");
    assert_refused(
        "SELECT 1 OPERATOR(scratch.#@#) 2",
        &c,
        F,
        "operator scratch.#@# is not allowed",
    );
    assert_refused("SELECT 1 #@# 2", &c, F, "operator #@# is not allowed");
    assert_refused(
        "SELECT 1::scratch.slow_int",
        &c,
        F,
        "a cast to scratch.slow_int is not allowed",
    );
    assert_refused(
        "SELECT CAST('{1}' AS scratch.slow_int[])",
        &c,
        F,
        "a cast to scratch.slow_int is not allowed",
    );
    assert_refused("SELECT scratch.slow_int '1'", &c, F, "scratch.slow_int is not allowed");
    assert_refused(
        "SELECT t.touch_row FROM (SELECT 1 AS a) t",
        &c,
        F,
        ".touch_row may call function touch_row",
    );
    assert_refused(
        "SELECT (t).touch_row FROM (SELECT 1 AS a) t",
        &c,
        F,
        ".touch_row may call function touch_row",
    );
    // Unknown operators cannot be shown to be harmless either.
    assert_refused(
        "SELECT 1 OPERATOR(other.+) 2",
        &c,
        IssueKind::UnknownFunction,
        "operator other.+ does not exist",
    );
    // The same names as plain columns, allowed operators and casts are fine.
    assert!(check_read_only("SELECT t.a, t.a || 'x', 1::int, CAST(1 AS text), 'a' LIKE 'b', 2 >= 1 FROM (SELECT 'a' AS a) t", &c).is_ok());
}

#[test]
fn syntax_forms_pass_only_as_syntax_and_unknown_names_get_a_suggestion() {
    let c = postgres();
    let ok = "SELECT COALESCE(NULL, 1), NULLIF(1, 2), GREATEST(1, 2), LEAST(1, 2), CURRENT_DATE, CURRENT_TIMESTAMP, EXTRACT(YEAR FROM CURRENT_DATE), ARRAY(SELECT 1), random()";
    assert!(check_read_only(ok, &c).is_ok(), "{:?}", check_read_only(ok, &c));
    assert_refused(
        "SELECT \"coalesce\"(NULL, 1)",
        &c,
        IssueKind::UnknownFunction,
        "coalesce does not exist",
    );
    assert_refused(
        "SELECT pg_catalog.coalesce(NULL, 1)",
        &c,
        IssueKind::UnknownFunction,
        "does not exist",
    );
    let issues = refusal("SELECT uper('a')", &c);
    assert_eq!(issues[0].kind, IssueKind::UnknownFunction);
    assert!(issues[0].message.contains("Did you mean `upper`?"), "{issues:?}");
    assert_eq!(issues[0].suggestion.as_deref(), Some("upper"));
    // Read with PostgreSQL's own grammar, forms sqlparser does not parse are checked too.
    assert!(check_read_only("SELECT 1 ORDER BY 1 USING <", &c).is_ok());
}

/// Legal PostgreSQL that sqlparser does not read is read with PostgreSQL's own grammar: each
/// form runs when what it calls is allowed, and is refused when something it calls is not.
#[test]
fn forms_only_postgres_parses_are_judged_by_what_they_call() {
    let mut c = postgres();
    c.add_function(Some("pg_catalog"), "bernoulli", true);
    let legal = [
        "SELECT inet '10.0.0.1' AS ip, upper('a') AS u",
        "SELECT 2 BETWEEN SYMMETRIC 3 AND 1 AS b",
        "SELECT count(*) FROM t TABLESAMPLE BERNOULLI (50) REPEATABLE (1)",
        "SELECT xmlelement(name a, xmlattributes(1 AS b), 'x')",
        "TABLE t",
        "SELECT a FROM t ORDER BY a USING >",
        "SELECT * FROM ROWS FROM (generate_series(1, 2), generate_series(1, 3)) AS r(a, b)",
        "SELECT * FROM (VALUES (1)) AS v(a) WHERE a NOT BETWEEN SYMMETRIC 2 AND 3",
    ];
    for sql in legal {
        assert!(check_read_only(sql, &c).is_ok(), "{sql}: {:?}", check_read_only(sql, &c));
    }
    use IssueKind::ForbiddenFunction as F;
    for (sql, says) in [
        (
            "SELECT scratch.slow_int '1' AS x, inet '10.0.0.1' AS ip",
            "scratch.slow_int is not allowed",
        ),
        ("SELECT 1 BETWEEN SYMMETRIC pg_sleep(1)::int AND 2", "pg_sleep is not allowed"),
        ("SELECT count(*) FROM t TABLESAMPLE pg_sleep (1)", "pg_sleep is not allowed"),
        ("SELECT xmlelement(name a, pg_sleep(1))", "pg_sleep is not allowed"),
        (
            "SELECT a FROM t ORDER BY a USING OPERATOR(scratch.#@#)",
            "operator scratch.#@# is not allowed",
        ),
        (
            "SELECT * FROM ROWS FROM (generate_series(1, 2), pg_sleep(1)) AS r",
            "pg_sleep is not allowed",
        ),
        (
            "SELECT * FROM XMLTABLE('/a' PASSING CAST('<a/>' AS xml) COLUMNS x scratch.slow_int PATH 'x') AS x",
            "scratch.slow_int is not allowed",
        ),
    ] {
        assert_refused(sql, &c, F, says);
    }
    // Writes, locks and INTO stay refused in every form PostgreSQL parses.
    for (sql, says) in [
        ("TABLE t FOR UPDATE", "locks rows"),
        ("WITH d AS (DELETE FROM t RETURNING *) TABLE d", "DELETE statement inside the query"),
        (
            "WITH m AS (MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE RETURNING 1) SELECT 1",
            "MERGE statement inside the query",
        ),
        ("SELECT * FROM (SELECT 1 FROM t FOR SHARE) s", "locks rows"),
        ("SELECT 1 UNION SELECT 2 INTO u", "INTO creates a table"),
        ("TABLE t; TABLE t", "exactly one statement"),
        ("LOCK TABLE t", "LOCK statement"),
        ("SET SESSION AUTHORIZATION postgres", "SET changes the session"),
    ] {
        let issues = refusal(sql, &c);
        assert!(issues.iter().any(|i| i.message.contains(says)), "{sql}: {issues:?}");
    }
}

/// The relations a PostgreSQL statement reads, from PostgreSQL's own parse: schema-qualified
/// or not, in subqueries, CTEs and set operations, with CTE names left out where they are in
/// scope, and functions in FROM.
#[test]
fn the_relations_a_statement_reads_are_listed() {
    let read = schemascope_query::postgres_relations(
        "WITH a AS (SELECT * FROM pg_stat_activity), b AS (SELECT * FROM a, b) \
         SELECT * FROM a, pg_catalog.pg_roles r JOIN (TABLE s.t) x ON true \
         WHERE EXISTS (SELECT 1 FROM information_schema.tables) \
         UNION ALL SELECT * FROM ROWS FROM (generate_series(1, 2)), LATERAL pg_catalog.unnest('{1}'::int[])",
    )
    .expect("parses");
    let name = |s: Option<&str>, n: &str| (s.map(str::to_string), n.to_string());
    let mut tables = read.tables.clone();
    tables.sort();
    assert_eq!(
        tables,
        vec![
            // Without RECURSIVE, `b` inside its own definition is the relation b.
            name(None, "b"),
            name(None, "pg_stat_activity"),
            name(Some("information_schema"), "tables"),
            name(Some("pg_catalog"), "pg_roles"),
            name(Some("s"), "t"),
        ]
    );
    let mut functions = read.functions.clone();
    functions.sort();
    assert_eq!(functions, vec![name(None, "generate_series"), name(Some("pg_catalog"), "unnest")]);
    let recursive = schemascope_query::postgres_relations(
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT * FROM r",
    )
    .expect("parses");
    assert!(recursive.tables.is_empty(), "{recursive:?}");
}

#[test]
fn deep_chains_are_refused_at_the_bound_not_walked() {
    let c = postgres();
    // The parser's depth bound comes first and is named in the refusal; the call walk's own
    // bound (MAX_CALL_DEPTH, above it) is the second line.
    const { assert!(MAX_CALL_DEPTH > MAX_EXPRESSION_DEPTH) };
    for sql in [
        format!("SELECT 1{}", "+1".repeat(5_000)),
        format!("SELECT 1{}", " UNION SELECT 1".repeat(3_000)),
    ] {
        // Past the bound, or past what PostgreSQL's parser itself serializes.
        let issues = refusal(&sql, &c);
        assert!(
            issues[0].message.contains(&format!("nest deeper than {MAX_EXPRESSION_DEPTH} levels"))
                || issues[0].message.contains("nested too deeply"),
            "{issues:?}"
        );
    }
    let just_inside = MAX_EXPRESSION_DEPTH - 8;
    assert!(
        check_read_only(&format!("SELECT 1{}", "+1".repeat(just_inside)), &c).is_ok(),
        "a chain of {just_inside} is fine"
    );
}

/// The database layer checks its own profiling SQL too, which nests about 7 deep in every
/// column: for PostgreSQL's widest tables (1,600 columns) it passes the layer's budget.
#[test]
fn wide_profiling_sql_passes_the_database_layers_parsing_budget() {
    let c = postgres();
    let column = |i: usize| {
        format!(
            "MAX(length(CASE WHEN ((c{i} IS NOT NULL) AND (lower((c{i})::text) <> '')) THEN (CAST((upper(c{i})) AS text)) END))"
        )
    };
    let sql = format!("SELECT {} FROM t", (0..1_600).map(column).collect::<Vec<_>>().join(", "));
    let checked = check_read_only_within(&sql, &c, EXECUTION_WORK_BUDGET);
    assert!(
        checked.is_ok(),
        "{:?}",
        checked.map_err(|e| e.into_iter().take(2).collect::<Vec<_>>())
    );
    // The validator's own budget is smaller: there such SQL is not parsed, hence not checkable.
    assert!(check_read_only(&sql, &c).is_err_and(|e| e[0].message.contains("does not parse")));
}

#[test]
fn sqlite_names_come_from_the_engine_and_table_functions_are_its_virtual_tables() {
    let c = common::sqlite_callables();
    for sql in [
        "SELECT load_extension('x')",
        "SELECT LOAD_EXTENSION('x')",
        "SELECT \"load_extension\"('x')",
        "SELECT sqlite_log(1, 'x')",
    ] {
        assert_refused(sql, &c, IssueKind::ForbiddenFunction, "is not allowed");
    }
    assert_refused(
        "SELECT * FROM fsdir('.')",
        &c,
        IssueKind::UnknownFunction,
        "table function fsdir does not exist",
    );
    assert_refused(
        "SELECT readfile('/etc/passwd')",
        &c,
        IssueKind::UnknownFunction,
        "readfile does not exist",
    );
    let ok = "SELECT value, upper('a'), json_extract('{}', '$.a') FROM json_each('[1]') UNION ALL SELECT name, 1, 2 FROM pragma_table_info('Genre')";
    assert!(check_read_only(ok, &c).is_ok(), "{:?}", check_read_only(ok, &c));
}
