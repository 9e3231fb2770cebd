//! SQL validation on the real Chinook catalog: resolution with suggestions and locations,
//! aggregation rules per dialect, literals against known values, joins against foreign keys,
//! the row limit, and the hostile-SQL suite (every statement refused with a reason).

use std::sync::OnceLock;

use schemascope_core::Catalog;
use schemascope_query::{
    Callables, IssueKind, Location, NoValues, SqlDialect, StaticValues, ValidationReport,
    check_read_only, validate_sql,
};
use schemascope_sources::sql::Database;

use crate::common;

fn chinook() -> Catalog {
    common::chinook_sqlite().catalog().expect("catalog")
}

/// The engine's allow-list for `dialect`, read once.
fn callables(dialect: SqlDialect) -> &'static Callables {
    static SQLITE: OnceLock<Callables> = OnceLock::new();
    static POSTGRES: OnceLock<Callables> = OnceLock::new();
    static CLICKHOUSE: OnceLock<Callables> = OnceLock::new();
    static DATAFUSION: OnceLock<Callables> = OnceLock::new();
    static MARIADB: OnceLock<Callables> = OnceLock::new();
    match dialect {
        SqlDialect::Sqlite => SQLITE.get_or_init(common::sqlite_callables),
        SqlDialect::Postgres => POSTGRES.get_or_init(common::postgres_callables),
        SqlDialect::ClickHouse => CLICKHOUSE.get_or_init(common::clickhouse_callables),
        SqlDialect::DataFusion => DATAFUSION.get_or_init(common::datafusion_callables),
        SqlDialect::MySql | SqlDialect::MariaDb => MARIADB.get_or_init(common::mariadb_callables),
    }
}

fn values() -> StaticValues {
    StaticValues {
        values: vec![(
            "Customer".into(),
            "State".into(),
            vec!["California".into(), "Washington".into(), "SP".into()],
        )],
        ranges: vec![("Invoice".into(), "Total".into(), 0.99, 25.86)],
        row_counts: vec![("Track".into(), 3503), ("InvoiceLine".into(), 22_000)],
    }
}

/// Chinook as PostgreSQL users usually create it: unquoted, so every name is lower case (a
/// mixed-case catalog needs every name quoted, which the folding check enforces).
fn chinook_folded() -> Catalog {
    let mut catalog = chinook();
    for table in &mut catalog.tables {
        table.name = table.name.to_lowercase();
        for column in &mut table.columns {
            column.name = column.name.to_lowercase();
        }
        for key in &mut table.primary_key {
            *key = key.to_lowercase();
        }
        for fk in &mut table.foreign_keys {
            fk.referenced_table = fk.referenced_table.to_lowercase();
            fk.columns.iter_mut().for_each(|c| *c = c.to_lowercase());
            fk.referenced_columns.iter_mut().for_each(|c| *c = c.to_lowercase());
        }
    }
    catalog
}

fn check(sql: &str, dialect: SqlDialect) -> ValidationReport {
    let catalog = match dialect {
        SqlDialect::Sqlite | SqlDialect::ClickHouse | SqlDialect::MySql | SqlDialect::MariaDb => {
            chinook()
        }
        SqlDialect::Postgres | SqlDialect::DataFusion => chinook_folded(),
    };
    validate_sql(sql, &catalog, &values(), callables(dialect))
}

fn kinds(issues: &[schemascope_query::QueryIssue]) -> Vec<IssueKind> {
    issues.iter().map(|i| i.kind).collect()
}

#[test]
fn unknown_column_is_reported_with_suggestion_and_position() {
    let r = check("SELECT Nmae\nFROM Genre", SqlDialect::Sqlite);
    assert!(!r.valid);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownColumn]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("Name"));
    assert_eq!(r.errors[0].location, Some(Location::Position { line: 1, column: 8 }));
}

#[test]
fn unknown_table_and_qualified_column_get_suggestions() {
    let r = check("SELECT t.Name FROM Trak AS t", SqlDialect::Sqlite);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownTable]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("Track"));
    let r = check("SELECT t.Nam FROM Track AS t", SqlDialect::Postgres);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownColumn]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("t.name"));
    let r = check("SELECT x.Name FROM Track AS t", SqlDialect::Sqlite);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownTable]);
}

#[test]
fn ambiguous_column_across_joined_tables_is_an_error() {
    let r = check(
        "SELECT Name FROM Track JOIN Genre ON Track.GenreId = Genre.GenreId",
        SqlDialect::Sqlite,
    );
    assert_eq!(kinds(&r.errors), vec![IssueKind::AmbiguousColumn]);
    assert!(
        r.errors[0].message.contains("Track.Name") && r.errors[0].message.contains("Genre.Name")
    );
}

#[test]
fn ctes_derived_tables_aliases_and_correlated_subqueries_resolve() {
    for sql in [
        "WITH g AS (SELECT GenreId AS gid, Name FROM Genre) SELECT g.Name, t.Name FROM g JOIN Track t ON t.GenreId = g.gid",
        "SELECT d.n FROM (SELECT count(*) AS n FROM Track) AS d",
        "SELECT Name AS track, Milliseconds / 1000 AS seconds FROM Track ORDER BY seconds DESC LIMIT 5",
        "SELECT a.Title FROM Album a WHERE EXISTS (SELECT 1 FROM Track t WHERE t.AlbumId = a.AlbumId AND t.Milliseconds > 600000)",
        "SELECT public.\"Genre\".\"Name\" FROM public.\"Genre\"",
    ] {
        let r = check(sql, SqlDialect::Postgres);
        assert!(r.valid, "{sql}: {:?}", r.errors);
    }
}

#[test]
fn bare_columns_beside_aggregates_are_errors_in_postgres_and_warnings_in_sqlite() {
    let sql = "SELECT g.Name, t.Composer, count(*) FROM Track t JOIN Genre g ON t.GenreId = g.GenreId GROUP BY g.Name";
    let pg = check(sql, SqlDialect::Postgres);
    assert_eq!(kinds(&pg.errors), vec![IssueKind::GroupBy]);
    assert!(pg.errors[0].message.starts_with("t.Composer"));
    let lite = check(sql, SqlDialect::Sqlite);
    assert!(lite.valid);
    assert_eq!(kinds(&lite.warnings), vec![IssueKind::GroupBy]);
    // Grouping by the primary key determines the table's other columns.
    assert!(
        check("SELECT g.GenreId, g.Name, count(*) FROM Genre g JOIN Track t ON t.GenreId = g.GenreId GROUP BY g.GenreId", SqlDialect::Postgres).valid
    );
}

#[test]
fn nested_aggregates_and_aggregates_in_where_are_errors() {
    let r = check("SELECT max(count(*)) FROM Track", SqlDialect::Sqlite);
    assert_eq!(kinds(&r.errors), vec![IssueKind::NestedAggregate]);
    let r = check("SELECT Name FROM Track WHERE sum(Milliseconds) > 10", SqlDialect::Sqlite);
    assert_eq!(kinds(&r.errors), vec![IssueKind::Aggregation]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("move the condition to HAVING"));
    // A window over an aggregate is not nesting.
    assert!(
        check(
            "SELECT GenreId, sum(count(*)) OVER () FROM Track GROUP BY GenreId",
            SqlDialect::Postgres
        )
        .valid
    );
}

#[test]
fn filter_literals_are_checked_against_stored_values() {
    let r = check("SELECT FirstName FROM Customer WHERE State = 'Californa'", SqlDialect::Sqlite);
    assert_eq!(kinds(&r.errors), vec![IssueKind::FilterValue]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("California"));
    let r = check(
        "SELECT FirstName FROM Customer WHERE State IN ('california', 'SP')",
        SqlDialect::Sqlite,
    );
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("California"));
    assert!(
        check("SELECT FirstName FROM Customer WHERE State LIKE 'Cal%'", SqlDialect::Sqlite).valid
    );
    let r = check("SELECT InvoiceId FROM Invoice WHERE Total = 99", SqlDialect::Sqlite);
    assert!(r.valid);
    assert_eq!(kinds(&r.warnings), vec![IssueKind::FilterValue]);
}

#[test]
fn joins_off_foreign_keys_are_warned_about() {
    let r = check(
        "SELECT c.FirstName FROM Customer c JOIN Employee e ON c.FirstName = e.FirstName",
        SqlDialect::Sqlite,
    );
    assert!(r.valid);
    assert_eq!(kinds(&r.warnings), vec![IssueKind::JoinWithoutForeignKey]);
    let r = check(
        "SELECT c.FirstName FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId",
        SqlDialect::Sqlite,
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn large_unaggregated_scans_get_a_limit() {
    let r = check("SELECT * FROM InvoiceLine WHERE Quantity > 0;", SqlDialect::Sqlite);
    assert!(r.valid);
    assert_eq!(
        r.rewritten_query.as_deref(),
        Some("SELECT * FROM InvoiceLine WHERE Quantity > 0 LIMIT 10000")
    );
    assert_eq!(kinds(&r.warnings), vec![IssueKind::RowLimit]);
    assert_eq!(check("SELECT count(*) FROM InvoiceLine", SqlDialect::Sqlite).rewritten_query, None);
    assert_eq!(
        check("SELECT * FROM InvoiceLine LIMIT 5", SqlDialect::Sqlite).rewritten_query,
        None
    );
    assert_eq!(check("SELECT * FROM Track", SqlDialect::Sqlite).rewritten_query, None);
}

#[test]
fn report_serialises_with_the_contract_names() {
    let r = check("SELECT Nmae FROM Genre", SqlDialect::Sqlite);
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["valid"], false);
    assert_eq!(json["errors"][0]["kind"], "unknown_column");
    assert_eq!(json["errors"][0]["location"], serde_json::json!({"line": 1, "column": 8}));
    assert_eq!(json["errors"][0]["suggestion"], "Name");
    assert!(json["warnings"].as_array().is_some_and(Vec::is_empty));
}

#[test]
fn hostile_sql_is_refused_with_a_reason() {
    use IssueKind::*;
    use SqlDialect::*;
    let suite: &[(&str, SqlDialect, IssueKind)] = &[
        ("SELECT 1; SELECT 2", Sqlite, MultipleStatements),
        ("SELECT 1; COMMIT; DROP TABLE Track", Postgres, MultipleStatements),
        ("COMMIT; DROP TABLE Track", Postgres, MultipleStatements),
        ("SeLeCt 1; dRoP TaBlE Track", Sqlite, MultipleStatements),
        ("SELECT 1 /* harmless */; /* */ DROP TABLE Track", Sqlite, MultipleStatements),
        ("SELECT 1 -- comment\n; DELETE FROM Track", Sqlite, MultipleStatements),
        ("DROP TABLE Track", Sqlite, NotReadOnly),
        ("INSERT INTO Genre VALUES (99, 'x')", Sqlite, NotReadOnly),
        ("UPDATE Track SET Name = 'x'", Postgres, NotReadOnly),
        ("ATTACH DATABASE '/tmp/x.db' AS x", Sqlite, NotReadOnly),
        ("PRAGMA writable_schema = 1", Sqlite, NotReadOnly),
        ("PRAGMA query_only = 0", Sqlite, NotReadOnly),
        ("SELECT load_extension('/tmp/evil.so')", Sqlite, ForbiddenFunction),
        ("SELECT \"LOAD_EXTENSION\"('/tmp/evil.so')", Sqlite, ForbiddenFunction),
        ("SELECT writefile('/tmp/x', 'data')", Sqlite, UnknownFunction),
        ("SELECT readfile('/etc/passwd')", Sqlite, UnknownFunction),
        ("WITH d AS (DELETE FROM Track RETURNING *) SELECT * FROM d", Postgres, NotReadOnly),
        (
            "WITH u AS (UPDATE Track SET Name = 'x' RETURNING TrackId) SELECT count(*) FROM u",
            Postgres,
            NotReadOnly,
        ),
        ("SELECT * INTO newtable FROM Track", Postgres, NotReadOnly),
        ("COPY (SELECT 1) TO PROGRAM 'rm -rf /'", Postgres, NotReadOnly),
        ("SELECT pg_read_file('/etc/passwd')", Postgres, ForbiddenFunction),
        ("SELECT pg_read_binary_file('/etc/passwd')", Postgres, ForbiddenFunction),
        ("SELECT * FROM pg_ls_dir('/')", Postgres, ForbiddenFunction),
        ("SELECT lo_import('/etc/passwd')", Postgres, ForbiddenFunction),
        ("SELECT lo_export(1234, '/tmp/x')", Postgres, ForbiddenFunction),
        ("SET ROLE postgres", Postgres, NotReadOnly),
        ("SELECT set_config('role', 'postgres', false)", Postgres, ForbiddenFunction),
        ("SELECT nextval('seq')", Postgres, ForbiddenFunction),
        ("SELECT pg_sleep(100)", Postgres, ForbiddenFunction),
        ("SELECT pg_terminate_backend(1)", Postgres, ForbiddenFunction),
        ("SELECT * FROM dblink('host=x', 'select 1') AS t(a int)", Postgres, UnknownFunction),
        (
            "SELECT query_to_xml('DELETE FROM \"Track\"', true, true, '')",
            Postgres,
            ForbiddenFunction,
        ),
        ("SELECT \"PG_READ_FILE\"('/etc/passwd')", Postgres, UnknownFunction),
        ("SELECT pg_catalog.pg_read_file('/etc/passwd')", Postgres, ForbiddenFunction),
        ("SELECT/**/pg_read_file/**/('/etc/passwd')", Postgres, ForbiddenFunction),
        (
            "SELECT Name FROM Track WHERE TrackId = (SELECT lo_import('/etc/passwd'))",
            Postgres,
            ForbiddenFunction,
        ),
        ("SELECT * FROM Track FOR UPDATE", Postgres, NotReadOnly),
        ("EXPLAIN SELECT 1", Postgres, NotReadOnly),
    ];
    for (sql, dialect, kind) in suite {
        let r = check(sql, *dialect);
        assert!(!r.valid, "accepted: {sql}");
        assert!(
            r.errors.iter().any(|e| e.kind == *kind),
            "{sql}: expected {kind:?}, got {:?}",
            r.errors
        );
        assert!(r.errors.iter().all(|e| !e.message.is_empty()));
    }
    // Statements the parser does not know are refused as syntax errors, never accepted.
    for sql in ["VACUUM INTO '/tmp/copy.db'", "DETACH DATABASE x"] {
        let r = check(sql, Sqlite);
        assert!(!r.valid, "accepted: {sql}");
        assert!(
            r.errors.iter().any(|e| matches!(e.kind, Syntax | NotReadOnly)),
            "{sql}: {:?}",
            r.errors
        );
    }
}

/// Found by fuzzing (`fuzz/fuzz_targets/sql_validator.rs`): 245 bytes of unclosed nested calls
/// kept sqlparser busy for minutes. Both checks now answer at once with the reason.
#[test]
fn unclosed_nested_calls_are_refused_at_once_with_the_reason() {
    let sql = "select max(caftma(fcay) ,tmax(capax(cap(c&SEL(cqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq1qqqqqqqqqqqa(fqqqqa(fcay) ,tmax(capax(cap(cqqqqqaft%max(capaqqqqqqqqqqqa(fqqqqa(fcay) ,tmax(capax(ca(fqqqqa(fcay) ,tmax(capax(cap(cqqqqqaft%max(caap(cqqqqqaft%max(capa";
    for dialect in [
        SqlDialect::Sqlite,
        SqlDialect::Postgres,
        SqlDialect::ClickHouse,
        SqlDialect::DataFusion,
        SqlDialect::MariaDb,
    ] {
        let report = validate_sql(sql, &Catalog::default(), &NoValues, callables(dialect));
        assert!(!report.valid);
        assert!(
            report.errors.iter().any(|e| e.message.contains("unbalanced parentheses")),
            "{:?}",
            report.errors
        );
        // The read-only check falls back to the tokens, which are a harmless SELECT.
        let read_only = check_read_only(sql, callables(dialect));
        match dialect {
            SqlDialect::Sqlite => assert!(read_only.is_ok(), "SQLite's engine gate decides"),
            // What PostgreSQL or ClickHouse would call cannot be resolved without a parse.
            SqlDialect::Postgres
            | SqlDialect::ClickHouse
            | SqlDialect::DataFusion
            | SqlDialect::MySql
            | SqlDialect::MariaDb => {
                assert!(read_only.is_err_and(|e| e[0].message.contains("does not parse")))
            }
        }
    }
}

/// validate_query was quadratic in the length of an IN list (150,000 values: 24 s): each issue
/// was looked for among all the earlier ones before it was added. Every value is still checked
/// and reported, and a repeated one once.
#[test]
fn a_long_in_list_is_checked_value_by_value_and_each_issue_reported_once() {
    let values: Vec<String> = (0..150_000).map(|i| format!("'S{i}'")).collect();
    let repeated: Vec<String> = values.iter().take(1_000).cloned().collect();
    let sql = format!(
        "SELECT CustomerId FROM Customer WHERE State IN ({}, 'SP', {})",
        values.join(", "),
        repeated.join(", ")
    );
    let r = check(&sql, SqlDialect::Sqlite);
    assert!(!r.valid);
    assert_eq!(r.errors.len(), 150_000, "one error per unknown value, none for SP, none repeated");
    assert!(r.errors.iter().all(|e| e.kind == IssueKind::FilterValue));
    assert!(
        r.errors[0].message.starts_with("no row has Customer.State = 'S0'"),
        "{}",
        r.errors[0].message
    );
    assert!(
        r.errors[149_999].message.starts_with("no row has Customer.State = 'S149999'"),
        "{}",
        r.errors[149_999].message
    );
    // PostgreSQL's parser is given at most MAX_POSTGRES_TOKENS tokens (its memory per token):
    // the longest list it reads, and one past it refused with the reason.
    let most = (schemascope_query::sql::MAX_POSTGRES_TOKENS - 20) / 2;
    let numbers: Vec<String> = (0..most).map(|i| format!("{}.5", 100 + i)).collect();
    let sql =
        format!("SELECT InvoiceId FROM Invoice WHERE Total IN ({}, 1.98)", numbers.join(", "));
    let r = check(&sql, SqlDialect::Postgres);
    assert!(r.valid, "{:?}", r.errors.first());
    assert_eq!(r.warnings.len(), most);
    let past =
        format!("SELECT InvoiceId FROM Invoice WHERE Total IN ({}, 1.98)", values.join(", "));
    assert!(
        check(&past, SqlDialect::Postgres).errors[0].message.contains("parser is given at most")
    );
    assert!(
        r.warnings[1]
            .message
            .starts_with("101.5 is outside the range of invoice.total (0.99 to 25.86)"),
        "{}",
        r.warnings[1].message
    );
}

/// A catalog whose column names need quotes, as many real ones have (`T-BIL`, `Examination
/// Date`).
fn laboratory() -> Catalog {
    use schemascope_core::{ColumnInfo, TableInfo, TableKind};
    let column = |name: &str| ColumnInfo {
        name: name.into(),
        declared_type: "REAL".into(),
        nullable: true,
        comment: None,
        base_type: None,
    };
    Catalog {
        tables: vec![TableInfo {
            name: "Laboratory".into(),
            kind: TableKind::Table,
            columns: vec![column("ID"), column("T-BIL"), column("Examination Date")],
            primary_key: vec!["ID".into()],
            foreign_keys: Vec::new(),
            row_count: None,
            row_count_estimated: false,
            comment: None,
        }],
    }
}

#[test]
fn a_name_that_needs_quotes_written_without_them_is_named_quoted() {
    let r = validate_sql(
        "SELECT ID FROM Laboratory WHERE Laboratory.T-BIL >= 2.0",
        &laboratory(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert!(!r.valid);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("Laboratory.\"T-BIL\""), "{r:?}");
    assert!(r.errors[0].message.contains("must be quoted"), "{r:?}");
    let fix = r.errors[0].fix_column.as_ref().map(|c| c.column.as_str());
    assert_eq!(fix, Some("T-BIL"));
    // A multi-byte name before the position does not confuse the reading.
    let r = validate_sql(
        "SELECT 'é' AS é, Examination Date FROM Laboratory",
        &laboratory(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert!(!r.valid);
}

#[test]
fn postgresql_folds_unquoted_names_so_mixed_case_ones_need_quotes() {
    let pg = callables(SqlDialect::Postgres);
    let r = validate_sql("SELECT Name FROM \"Track\"", &chinook(), &NoValues, pg);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownColumn]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("\"Name\""));
    let r = validate_sql("SELECT \"Name\" FROM Track", &chinook(), &NoValues, pg);
    assert_eq!(kinds(&r.errors), vec![IssueKind::UnknownTable]);
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("\"Track\""));
    assert!(validate_sql("SELECT \"Name\" FROM \"Track\"", &chinook(), &NoValues, pg).valid);
    // SQLite compares names without regard to case.
    assert!(
        validate_sql(
            "SELECT name FROM track",
            &chinook(),
            &NoValues,
            callables(SqlDialect::Sqlite)
        )
        .valid
    );
}

#[test]
fn clickhouse_refuses_table_functions_settings_and_format_and_keeps_names_case_sensitive() {
    let ch = SqlDialect::ClickHouse;
    for (sql, want) in [
        ("SELECT * FROM url('http://x/', 'CSV', 'a String')", "table function url is not allowed"),
        ("SELECT * FROM \"numbers\"(10)", "table function numbers is not allowed"),
        (
            "SELECT Name FROM Genre WHERE GenreId IN (SELECT * FROM remote('h', system.one))",
            "table function remote",
        ),
        ("SELECT * FROM Genre SETTINGS max_execution_time = 0", "SETTINGS clause"),
        ("SELECT * FROM Genre FORMAT JSON", "FORMAT clause"),
        ("SELECT sleep(1)", "function sleep is not allowed"),
        ("SELECT toyear(InvoiceDate) FROM Invoice", "function toyear does not exist"),
        ("SELECT name FROM Genre", "ClickHouse names are case-sensitive"),
    ] {
        let refused = check_read_only(sql, callables(ch))
            .err()
            .into_iter()
            .chain(std::iter::once(check(sql, ch).errors))
            .flatten()
            .map(|e| e.message)
            .collect::<Vec<_>>()
            .join(" / ");
        assert!(refused.contains(want), "{sql}: {refused}");
    }
    for sql in [
        "SELECT COUNT(*), Count(*), toYear(InvoiceDate) FROM Invoice GROUP BY toYear(InvoiceDate)",
        "SELECT arrayMap(x -> x * 2, [1, 2]) AS a",
        "SELECT Total * 2 AS t FROM Invoice WHERE t > 10",
    ] {
        let r = check(sql, ch);
        assert!(r.valid, "{sql}: {:?}", r.errors);
    }
}

/// Laboratory results and examinations of patients, linked through `Patient`.
fn thrombosis() -> Catalog {
    use schemascope_core::{ColumnInfo, ForeignKey, TableInfo, TableKind};
    let table = |name: &str, columns: &[&str], fks: &[(&str, &str)]| TableInfo {
        name: name.into(),
        kind: TableKind::Table,
        columns: columns
            .iter()
            .map(|c| ColumnInfo {
                name: (*c).into(),
                declared_type: "TEXT".into(),
                nullable: true,
                comment: None,
                base_type: None,
            })
            .collect(),
        primary_key: vec!["ID".into()],
        foreign_keys: fks
            .iter()
            .map(|(column, to)| ForeignKey {
                columns: vec![(*column).into()],
                referenced_table: (*to).into(),
                referenced_columns: vec!["ID".into()],
            })
            .collect(),
        row_count: None,
        row_count_estimated: false,
        comment: None,
    };
    Catalog {
        tables: vec![
            table("Examination", &["ID", "KCT", "RVVT"], &[("ID", "Patient")]),
            table("Laboratory", &["ID", "HCT", "CPK"], &[("ID", "Patient")]),
            table("Patient", &["ID", "SEX"], &[]),
        ],
    }
}

#[test]
fn the_same_name_in_a_joinable_table_beats_a_near_spelling_in_scope() {
    // `KCT` is Examination's; Laboratory's `HCT` is one letter away but another measure.
    let r = validate_sql(
        "SELECT COUNT(*) FROM Laboratory WHERE Laboratory.CPK < 250 AND Laboratory.KCT = '+'",
        &thrombosis(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert!(!r.valid);
    let fix = r.errors[0].fix_column.as_ref().map(|c| format!("{}.{}", c.table, c.column));
    assert_eq!(fix.as_deref(), Some("Examination.KCT"), "{r:?}");
    assert!(r.errors[0].message.contains("JOIN Patient ON"), "{r:?}");
    // A derived table's column is no catalog column: its near spelling is the answer.
    let r = validate_sql(
        "SELECT t.KCX FROM (SELECT KCT AS KCX2 FROM Examination) t",
        &thrombosis(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert_eq!(r.errors[0].suggestion.as_deref(), Some("t.KCX2"), "{r:?}");
}

#[test]
fn a_double_quoted_name_of_another_tables_column_says_which_column_was_likely_meant() {
    // SQLite reads an unknown double-quoted name as a string: valid, with a warning that names
    // the column of that name one join away.
    let r = validate_sql(
        "SELECT \"SEX\" FROM Laboratory WHERE CPK < 250",
        &thrombosis(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert!(r.valid, "{r:?}");
    let message = &r.warnings[0].message;
    assert!(message.contains("if a column was meant: Patient.SEX (JOIN Patient ON"), "{message}");
    // A string that is no name anywhere stays a string.
    let r = validate_sql(
        "SELECT \"hello world\" FROM Laboratory",
        &thrombosis(),
        &NoValues,
        callables(SqlDialect::Sqlite),
    );
    assert!(!r.warnings[0].message.contains("if a column was meant"), "{r:?}");
}
