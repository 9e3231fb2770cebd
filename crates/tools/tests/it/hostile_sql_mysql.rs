//! Hostile SQL on MariaDB: several statements and statements hidden by comments, comments the
//! server runs as SQL (`/*! … */`, `/*M! … */`), `SELECT … INTO OUTFILE/DUMPFILE/@var`, user
//! variables assigned in a query, `FOR UPDATE` and `LOCK IN SHARE MODE`, `HANDLER`, `LOAD
//! DATA`, `SET`, `DO`, `CALL`, `PREPARE`, DDL, DML and privileges, built-ins that wait, lock,
//! read files or change session and sequence state (`SLEEP`, `BENCHMARK`, `GET_LOCK`,
//! `LOAD_FILE`, `LAST_INSERT_ID(x)`, `NEXTVAL`), stored functions declared `MODIFIES SQL DATA`
//! or neither `DETERMINISTIC` nor `READS SQL DATA`, and the server's own tables — each refused
//! by validate_query, by execute_query and by the database layer called directly, as the
//! login that owns the tables (read-only must come from schemascope, not from missing
//! privileges); then every table's rows, the databases, tables and routines, and the files a
//! statement could write are checked unchanged. Legitimate queries that merely look scary run
//! and return their rows.
//!
//! Runs when `SCHEMASCOPE_TEST_MARIADB` is set, as scripts/test does.

use std::sync::Arc;

use schemascope_sources::sql::{Database, Dialect, MySqlDatabase};
use serde_json::{Value, json};

use crate::common::registry;
use crate::hostile_sql::hostile_failures;

/// Statements made in the `scratch` database before the source connects (it reads what may be
/// called when it connects).
const SCRATCH: &str = "
DROP FUNCTION IF EXISTS chinook.bump; DROP FUNCTION IF EXISTS chinook.noisy; DROP FUNCTION IF EXISTS chinook.net_price;
DROP FUNCTION IF EXISTS scratch.reader; DROP TABLE IF EXISTS scratch.counter; DROP SEQUENCE IF EXISTS scratch.seq;
DROP PROCEDURE IF EXISTS chinook.wipe;
CREATE TABLE scratch.counter (n INT); INSERT INTO scratch.counter VALUES (0);
CREATE SEQUENCE scratch.seq;
DELIMITER //
CREATE FUNCTION chinook.bump() RETURNS INT MODIFIES SQL DATA BEGIN UPDATE scratch.counter SET n = n + 1; RETURN 1; END //
DELIMITER ;
CREATE FUNCTION chinook.noisy() RETURNS INT NOT DETERMINISTIC CONTAINS SQL RETURN FLOOR(RAND() * 10);
CREATE FUNCTION chinook.net_price(p DECIMAL(10,2)) RETURNS DECIMAL(10,2) DETERMINISTIC NO SQL RETURN p * 0.8;
CREATE FUNCTION scratch.reader() RETURNS INT DETERMINISTIC READS SQL DATA RETURN (SELECT n FROM scratch.counter);
CREATE PROCEDURE chinook.wipe() MODIFIES SQL DATA DELETE FROM scratch.counter;
DROP FUNCTION IF EXISTS chinook.liar_lock; DROP FUNCTION IF EXISTS chinook.liar_var;
CREATE FUNCTION chinook.liar_lock() RETURNS INT DETERMINISTIC NO SQL RETURN GET_LOCK('schemascope_liar', 0);
CREATE FUNCTION chinook.liar_var() RETURNS INT DETERMINISTIC NO SQL RETURN (@schemascope_leak := 42);
";

/// (SQL, what validate_query's errors say — alternatives separated by ` | `).
const CASES: &[(&str, &str)] = &[
    ("SELECT 1; DROP TABLE Genre", "exactly one statement"),
    ("SELECT 1 /* ; */; DELETE FROM Genre", "exactly one statement"),
    ("SELECT 1 -- x\n; DELETE FROM Genre", "exactly one statement"),
    ("SELECT 1 /*!50000 , SLEEP(3) */", "run by the server as SQL"),
    ("SELECT 1 /*! ; DROP TABLE Genre */", "run by the server as SQL"),
    ("SELECT 1 /*M!100000 , SLEEP(3) */", "run by the server as SQL"),
    ("/*! DROP TABLE Genre */", "run by the server as SQL | read-only | no statement | found 0"),
    ("SELECT * FROM Genre INTO OUTFILE '/tmp/schemascope-mysql-out.txt'", "INTO | does not parse"),
    (
        "SELECT * FROM Genre INTO DUMPFILE '/tmp/schemascope-mysql-dump.bin'",
        "INTO | does not parse",
    ),
    ("SELECT Name INTO @x FROM Genre LIMIT 1", "INTO | does not parse"),
    ("SELECT Name FROM Genre LIMIT 1 INTO @x", "INTO | does not parse"),
    ("SELECT @x := 5", "session variable"),
    ("SELECT Name, @n := @n + 1 FROM Genre", "session variable"),
    ("SELECT * FROM Genre FOR UPDATE", "locks rows"),
    ("SELECT * FROM Genre LOCK IN SHARE MODE", "locks rows | does not parse"),
    ("SELECT SLEEP(3)", "SLEEP is not allowed | sleep is not allowed"),
    ("SELECT sleep(3)", "SLEEP is not allowed | sleep is not allowed"),
    ("SELECT `SLEEP`(3)", "SLEEP is not allowed | sleep is not allowed"),
    ("SELECT Name FROM Genre WHERE SLEEP(1) = 0", "SLEEP is not allowed | sleep is not allowed"),
    ("SELECT (SELECT SLEEP(1)) AS s", "SLEEP is not allowed | sleep is not allowed"),
    ("SELECT BENCHMARK(1000000000, MD5('x'))", "BENCHMARK is not allowed"),
    ("SELECT GET_LOCK('schemascope', 1)", "GET_LOCK is not allowed"),
    ("SELECT IS_USED_LOCK('schemascope')", "IS_USED_LOCK is not allowed"),
    ("SELECT LOAD_FILE('/etc/passwd')", "LOAD_FILE is not allowed"),
    ("SELECT MASTER_POS_WAIT('x', 1)", "MASTER_POS_WAIT is not allowed"),
    ("SELECT LAST_INSERT_ID(5)", "LAST_INSERT_ID is not allowed"),
    ("SELECT NEXTVAL(scratch.seq)", "NEXTVAL is not allowed | does not parse"),
    ("SELECT bump()", "bump is not allowed"),
    ("SELECT chinook.bump()", "bump is not allowed"),
    ("SELECT noisy()", "noisy is not allowed"),
    ("SELECT scratch.reader()", "reader is not allowed"),
    ("SELECT sys_exec('id')", "does not exist | not allowed"),
    ("HANDLER Genre OPEN", "read-only | does not parse | HANDLER"),
    ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE Genre", "read-only | does not parse | LOAD"),
    ("SET GLOBAL read_only = 0", "read-only | SET"),
    ("SET @x = 1", "read-only | SET"),
    ("SET SESSION TRANSACTION READ WRITE", "read-only | SET | does not parse"),
    ("DO SLEEP(1)", "read-only | does not parse | DO"),
    ("CALL wipe()", "read-only | CALL"),
    ("PREPARE s FROM 'DELETE FROM Genre'", "read-only | does not parse | PREPARE"),
    ("START TRANSACTION", "transaction control | read-only | does not parse"),
    ("COMMIT", "transaction control | read-only"),
    ("INSERT INTO Genre VALUES (999, 'x')", "read-only"),
    ("REPLACE INTO Genre VALUES (1, 'x')", "read-only | does not parse"),
    ("UPDATE Track SET UnitPrice = 0", "read-only"),
    ("DELETE FROM Genre", "read-only"),
    ("DROP TABLE Genre", "read-only"),
    ("TRUNCATE TABLE Genre", "read-only"),
    ("CREATE TABLE t (x INT)", "read-only"),
    ("ALTER TABLE Genre ADD COLUMN x INT", "read-only"),
    ("RENAME TABLE Genre TO Genre2", "read-only | does not parse"),
    ("GRANT ALL ON *.* TO schemascope_ro", "read-only | does not parse"),
    ("LOCK TABLES Genre WRITE", "read-only | does not parse | LOCK"),
    ("FLUSH TABLES", "read-only | does not parse | FLUSH"),
    ("KILL 1", "read-only | does not parse | KILL"),
    ("SHUTDOWN", "read-only | does not parse | SHUTDOWN"),
];

/// Reads of other databases' tables, refused by validate_query and execute_query (the database
/// layer's own statements read `information_schema` for the catalog, so the scope is the
/// callers' rule).
const OTHER_DATABASES: &[&str] = &[
    "SELECT * FROM mysql.user",
    "SELECT * FROM information_schema.PROCESSLIST",
    "SELECT * FROM performance_schema.threads",
    "SELECT * FROM scratch.counter",
    "SELECT g.Name FROM Genre g JOIN scratch.counter c ON c.n = g.GenreId",
    "SELECT (SELECT COUNT(*) FROM information_schema.TABLES) AS n",
    "WITH t AS (SELECT * FROM mysql.db) SELECT * FROM t",
];

/// Legitimate queries that look scary, with their rows.
fn legit() -> Vec<(&'static str, Value)> {
    vec![
        ("SELECT Name AS `drop` FROM Genre WHERE GenreId = 1", json!([["Rock"]])),
        ("SELECT 'x; DROP TABLE Genre; --' AS s", json!([["x; DROP TABLE Genre; --"]])),
        ("SELECT 'SLEEP(3) /*! */' AS s", json!([["SLEEP(3) /*! */"]])),
        // A backslash escapes a quote in MySQL's strings: one string, one statement.
        ("SELECT '\\'; DROP TABLE Genre; -- ' AS s", json!([["'; DROP TABLE Genre; -- "]])),
        (
            "SELECT /* DELETE FROM Genre; */ COUNT(*) AS n FROM Genre -- ; DROP TABLE Genre",
            json!([[25]]),
        ),
        ("SELECT COUNT(*) AS n FROM Track WHERE Name LIKE '%; DELETE%'", json!([[0]])),
        (
            "SELECT Name FROM Genre WHERE GenreId IN (1, 2) ORDER BY Name DESC",
            json!([["Rock"], ["Jazz"]]),
        ),
        (
            "SELECT IFNULL(NULL, 'a') AS v, DATE_FORMAT('2024-03-01', '%Y-%m') AS m",
            json!([["a", "2024-03"]]),
        ),
        ("SELECT net_price(10.00) AS p", json!([[8.0]])),
        // `||` concatenates, as in every other engine (MySQL's default reads it as OR).
        ("SELECT 'a' || 'b' AS s", json!([["ab"]])),
        ("SELECT chinook.net_price(UnitPrice) AS p FROM Track WHERE TrackId = 1", json!([[0.79]])),
        ("SELECT chinook.Genre.Name FROM chinook.Genre WHERE GenreId = 1", json!([["Rock"]])),
    ]
}

/// Every table's rows (a count and a sum of row hashes), and the databases, tables, routines
/// and sequences of the server this login sees.
fn checksum(database: &dyn Database) -> Vec<String> {
    let one = |sql: &str| {
        format!("{:?}", database.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}")))
    };
    let mut facts = vec![
        one("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"),
        one(
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('chinook', 'northwind') ORDER BY 1, 2",
        ),
        // The served databases' objects (other tests may make tables in `scratch`).
        one(
            "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA IN ('chinook', 'northwind') ORDER BY 1, 2",
        ),
        one("SELECT n FROM scratch.counter"),
    ];
    for table in database.catalog().expect("catalog").tables {
        let columns: Vec<String> =
            table.columns.iter().map(|c| Dialect::MariaDb.quote(&c.name)).collect();
        facts.push(format!(
            "{}: {}",
            table.name,
            one(&format!(
                "SELECT COUNT(*), SUM(CRC32(CONCAT_WS('|', {}))) FROM {}",
                columns.join(", "),
                Dialect::MariaDb.quote_table(&table.name)
            ))
        ));
    }
    facts
}

#[test]
fn hostile_sql_is_refused_and_leaves_mariadb_unchanged() {
    let Ok(uri) = std::env::var("SCHEMASCOPE_TEST_MARIADB") else {
        eprintln!(
            "SCHEMASCOPE_TEST_MARIADB is not set: run through scripts/test to test against MariaDB"
        );
        return;
    };
    // The owner's login, which may write everything the suite tries.
    let owner = uri.replacen("schemascope_ro:", "schemascope:", 1);
    let Ok(made) = std::process::Command::new("mariadb")
        .args(client_args(&owner))
        .arg("-e")
        .arg(SCRATCH)
        .output()
    else {
        eprintln!("the mariadb client is not installed (scripts/mariadb installs it)");
        return;
    };
    assert!(made.status.success(), "scratch objects: {}", String::from_utf8_lossy(&made.stderr));
    let checker = MySqlDatabase::connect(&owner).expect("connect");
    let before = checksum(&checker);
    let registry = registry(&[&format!("my={owner}")]);
    let database: Arc<dyn Database> =
        registry.sources.get(Some("my")).expect("source").database.clone().expect("SQL");
    let cases: Vec<(String, &str)> =
        CASES.iter().map(|(sql, want)| (sql.to_string(), *want)).collect();
    let mut failures = hostile_failures(&registry, "my", &*database, &cases, &legit());
    for sql in OTHER_DATABASES {
        let (report, errors) = crate::hostile_sql::validation_errors(&registry, "my", sql);
        if report.data["valid"] != false || !errors.join(" ").contains("does not serve") {
            failures.push(format!("validate {sql:?}: {errors:?}"));
        }
        let executed = schemascope_tools::execute_query(
            &registry.sources,
            schemascope_tools::ExecuteQueryParams {
                source: Some("my".into()),
                query: Value::from(*sql),
                ..Default::default()
            },
        );
        if executed.success || !executed.message.contains("does not serve") {
            failures.push(format!("execute {sql:?}: {}", executed.message));
        }
    }
    // A function whose definer calls it harmless may still take a named lock or set a
    // variable: the session is reset after each caller's statement, so neither outlives it.
    for sql in ["SELECT liar_lock() AS l", "SELECT liar_var() AS v"] {
        let ran = schemascope_tools::execute_query(
            &registry.sources,
            schemascope_tools::ExecuteQueryParams {
                source: Some("my".into()),
                query: Value::from(sql),
                ..Default::default()
            },
        );
        if !ran.success {
            failures.push(format!("{sql}: {}", ran.message));
        }
        // Asked by the client: schemascope itself refuses IS_FREE_LOCK.
        let left = std::process::Command::new("mariadb")
            .args(client_args(&owner))
            .args([
                "--batch",
                "--skip-column-names",
                "-e",
                "SELECT IS_FREE_LOCK('schemascope_liar')",
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if left != "1" {
            failures.push(format!("after {sql} the lock is still held: {left}"));
        }
    }
    let leaked = schemascope_tools::execute_query(
        &registry.sources,
        schemascope_tools::ExecuteQueryParams {
            source: Some("my".into()),
            query: Value::from("SELECT @schemascope_leak AS v"),
            ..Default::default()
        },
    );
    if leaked.data["rows"] != json!([[null]]) {
        failures
            .push(format!("a variable set by a function outlived its statement: {}", leaked.data));
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    assert_eq!(checksum(&checker), before, "the database changed");
    for file in ["/tmp/schemascope-mysql-out.txt", "/tmp/schemascope-mysql-dump.bin"] {
        assert!(!std::path::Path::new(file).exists(), "{file} was written");
    }
}

/// The `mariadb` client's arguments for `uri` (mysql://user:password@host:port/database).
pub(crate) fn client_args(uri: &str) -> Vec<String> {
    let rest = uri.trim_start_matches("mysql://");
    let (user_info, rest) = rest.split_once('@').unwrap_or(("", rest));
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let (host_port, db) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = host_port.split_once(':').unwrap_or((host_port, "3306"));
    vec![
        format!("--host={host}"),
        format!("--port={port}"),
        format!("--user={user}"),
        format!("--password={password}"),
        db.to_string(),
    ]
}
