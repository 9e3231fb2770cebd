//! TLS to the three database servers, each serving the test PKI of `scripts/test-certs` (a
//! certificate for the name `localhost` only, issued by the test CA): every `sslmode` against
//! the real server, a wrong host name and an untrusted CA refused with what to change, client
//! certificates accepted and refused, and the session really encrypted (the server says so).
//!
//! The URIs and the certificates' directory come from `SCHEMASCOPE_TEST_POSTGRES_RO`,
//! `SCHEMASCOPE_TEST_MARIADB`, `SCHEMASCOPE_TEST_CLICKHOUSE_HTTPS` and `SCHEMASCOPE_TEST_CERTS`
//! (set by `scripts/test`); without them these tests say so and pass vacuously.

use std::path::PathBuf;

use schemascope_sources::sql::{ClickHouseDatabase, Database, MySqlDatabase, PostgresDatabase};

/// The server's URI and the test PKI's directory, or `None` (said) when not set.
fn setup(var: &str) -> Option<(String, PathBuf)> {
    let (Ok(uri), Ok(certs)) = (std::env::var(var), std::env::var("SCHEMASCOPE_TEST_CERTS")) else {
        eprintln!("{var} or SCHEMASCOPE_TEST_CERTS is not set: run through scripts/test");
        return None;
    };
    Some((uri, PathBuf::from(certs)))
}

/// `uri` with `parameters` added to its query.
fn with(uri: &str, parameters: &str) -> String {
    let joiner = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{joiner}{parameters}")
}

/// `uri` reaching the server by `host` instead of 127.0.0.1.
fn at(uri: &str, host: &str) -> String {
    uri.replace("@127.0.0.1:", &format!("@{host}:"))
}

fn failure<T: std::fmt::Debug>(result: Result<T, impl std::fmt::Display>) -> String {
    match result {
        Ok(value) => panic!("connected: {value:?}"),
        Err(e) => e.to_string(),
    }
}

fn cell(db: &dyn Database, sql: &str) -> String {
    let rows = db.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
    match &rows[0][0] {
        v if v.as_str().is_some() => v.as_str().unwrap().to_string(),
        v => format!("{v:?}"),
    }
}

const PG_SSL: &str = "SELECT CASE WHEN ssl THEN version ELSE 'plain' END FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

#[test]
fn postgres_sslmodes_against_the_server() {
    let Some((uri, certs)) = setup("SCHEMASCOPE_TEST_POSTGRES_RO") else { return };
    let ca = certs.join("ca.pem").display().to_string();
    let other_ca = certs.join("other-ca.pem").display().to_string();
    let localhost = at(&uri, "localhost");

    let full = PostgresDatabase::connect(&with(
        &localhost,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .expect("verify-full by the certificate's name");
    assert!(cell(&full, PG_SSL).starts_with("TLSv1."), "{}", cell(&full, PG_SSL));
    // Encrypted by default (prefer, as libpq), and plain only when asked.
    let default = PostgresDatabase::connect(&uri).expect("default");
    assert!(cell(&default, PG_SSL).starts_with("TLSv1."));
    let plain = PostgresDatabase::connect(&with(&uri, "sslmode=disable")).expect("disable");
    assert_eq!(cell(&plain, PG_SSL), "plain");
    let required = PostgresDatabase::connect(&with(&uri, "sslmode=require")).expect("require");
    assert!(cell(&required, PG_SSL).starts_with("TLSv1."));

    // verify-full really compares the host name; verify-ca does not.
    let by_ip = failure(PostgresDatabase::connect(&with(
        &uri,
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    )));
    assert!(
        by_ip.contains("not valid for name \"127.0.0.1\"") && by_ip.contains("verify-ca"),
        "{by_ip}"
    );
    PostgresDatabase::connect(&with(&uri, &format!("sslmode=verify-ca&sslrootcert={ca}")))
        .expect("verify-ca by address");

    // A CA nobody named is not trusted: Mozilla's roots by default, or another CA.
    let unknown = failure(PostgresDatabase::connect(&with(&localhost, "sslmode=verify-full")));
    assert!(unknown.contains("UnknownIssuer") && unknown.contains("sslrootcert=PATH"), "{unknown}");
    let other = failure(PostgresDatabase::connect(&with(
        &localhost,
        &format!("sslmode=verify-full&sslrootcert={other_ca}"),
    )));
    assert!(other.contains("UnknownIssuer"), "{other}");
    // libpq's rule: `require` with a CA named checks the chain.
    let required_other = failure(PostgresDatabase::connect(&with(
        &uri,
        &format!("sslmode=require&sslrootcert={other_ca}"),
    )));
    assert!(required_other.contains("UnknownIssuer"), "{required_other}");
}

#[test]
fn postgres_client_certificates_log_in_and_foreign_ones_are_refused() {
    let Some((uri, certs)) = setup("SCHEMASCOPE_TEST_POSTGRES_RO") else { return };
    let file = |name: &str| certs.join(name).display().to_string();
    // The role `schemascope_cert` logs in by certificate only (scripts/postgres' pg_hba.conf).
    let Some((_, rest)) = uri.split_once('@') else { panic!("{uri}") };
    let user = format!("postgres://schemascope_cert@{}", rest.replace("127.0.0.1:", "localhost:"));
    let verified = format!("sslmode=verify-full&sslrootcert={}", file("ca.pem"));
    let db = PostgresDatabase::connect(&with(
        &user,
        &format!("{verified}&sslcert={}&sslkey={}", file("client.pem"), file("client.key")),
    ))
    .expect("certificate login");
    assert_eq!(cell(&db, "SELECT current_user::text"), "schemascope_cert");

    let without = failure(PostgresDatabase::connect(&with(&user, &verified)));
    assert!(
        without.contains("client certificate") && without.contains("sslcert=PATH"),
        "{without}"
    );
    let foreign = failure(PostgresDatabase::connect(&with(
        &user,
        &format!(
            "{verified}&sslcert={}&sslkey={}",
            file("other-client.pem"),
            file("other-client.key")
        ),
    )));
    assert!(foreign.contains("refused the client certificate"), "{foreign}");
    // A key without its certificate, and a file that is not there, are the URI's fault.
    let half =
        failure(PostgresDatabase::connect(&with(&user, &format!("sslkey={}", file("client.key")))));
    assert!(half.contains("without `sslcert`"), "{half}");
    let missing = failure(PostgresDatabase::connect(&with(
        &user,
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    )));
    assert!(missing.contains("sslrootcert: cannot read /nonexistent/ca.pem"), "{missing}");
}

#[test]
fn certificate_paths_are_percent_decoded() {
    let Some((uri, certs)) = setup("SCHEMASCOPE_TEST_POSTGRES_RO") else { return };
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("my certs");
    std::fs::create_dir(&spaced).unwrap();
    std::fs::copy(certs.join("ca.pem"), spaced.join("ca #1.pem")).unwrap();
    let encoded = format!("{}/my%20certs/ca%20%231.pem", dir.path().display());
    let db = PostgresDatabase::connect(&with(
        &at(&uri, "localhost"),
        &format!("sslmode=verify-full&sslrootcert={encoded}"),
    ))
    .expect("an encoded path");
    assert!(cell(&db, PG_SSL).starts_with("TLSv1."));
}

const MARIADB_SSL: &str = "SELECT COALESCE(NULLIF(VARIABLE_VALUE, ''), 'plain') FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'";

#[test]
fn mariadb_sslmodes_and_client_certificates_against_the_server() {
    let Some((uri, certs)) = setup("SCHEMASCOPE_TEST_MARIADB") else { return };
    let file = |name: &str| certs.join(name).display().to_string();
    let localhost = at(&uri, "localhost");

    let full = MySqlDatabase::connect(&with(
        &localhost,
        &format!("sslmode=verify-full&sslrootcert={}", file("ca.pem")),
    ))
    .expect("verify-full by the certificate's name");
    assert!(cell(&full, MARIADB_SSL).starts_with("TLSv1."), "{}", cell(&full, MARIADB_SSL));
    let default = MySqlDatabase::connect(&uri).expect("default");
    assert!(cell(&default, MARIADB_SSL).starts_with("TLSv1."), "preferred by default");
    let plain = MySqlDatabase::connect(&with(&uri, "ssl-mode=DISABLED")).expect("disabled");
    assert_eq!(cell(&plain, MARIADB_SSL), "plain");
    // MySQL's own names mean the same as libpq's.
    MySqlDatabase::connect(&with(&uri, &format!("ssl-mode=VERIFY_CA&ssl-ca={}", file("ca.pem"))))
        .expect("VERIFY_CA by address");

    let by_ip = failure(MySqlDatabase::connect(&with(
        &uri,
        &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", file("ca.pem")),
    )));
    assert!(
        by_ip.contains("not valid for name \"127.0.0.1\"") && by_ip.contains("verify-ca"),
        "{by_ip}"
    );
    let unknown = failure(MySqlDatabase::connect(&with(&localhost, "sslmode=verify-full")));
    assert!(unknown.contains("UnknownIssuer") && unknown.contains("sslrootcert=PATH"), "{unknown}");
    let other = failure(MySqlDatabase::connect(&with(
        &localhost,
        &format!("sslmode=verify-full&sslrootcert={}", file("other-ca.pem")),
    )));
    assert!(other.contains("UnknownIssuer"), "{other}");

    // `schemascope_cert` must show a certificate of the test CA besides its password.
    let user = localhost.replacen("schemascope_ro:", "schemascope_cert:", 1);
    let verified = format!("sslmode=verify-full&sslrootcert={}", file("ca.pem"));
    let db = MySqlDatabase::connect(&with(
        &user,
        &format!("{verified}&sslcert={}&sslkey={}", file("client.pem"), file("client.key")),
    ))
    .expect("certificate login");
    assert!(cell(&db, "SELECT CURRENT_USER()").starts_with("schemascope_cert@"));
    let without = failure(MySqlDatabase::connect(&with(&user, &verified)));
    assert!(without.contains("1045") && without.contains("sslcert=PATH"), "{without}");
    let foreign = failure(MySqlDatabase::connect(&with(
        &user,
        &format!(
            "{verified}&ssl-cert={}&ssl-key={}",
            file("other-client.pem"),
            file("other-client.key")
        ),
    )));
    assert!(foreign.contains("refused the client certificate"), "{foreign}");
    // The client library's own TLS parameters are refused, not half-applied.
    let foreign_names =
        failure(MySqlDatabase::connect(&with(&uri, "danger_accept_invalid_certs=true")));
    assert!(foreign_names.contains("TLS is set with sslmode"), "{foreign_names}");
}

#[test]
fn clickhouse_over_https() {
    let Some((uri, certs)) = setup("SCHEMASCOPE_TEST_CLICKHOUSE_HTTPS") else { return };
    let ca = certs.join("ca.pem").display().to_string();
    let db = ClickHouseDatabase::connect(&with(&uri, &format!("sslrootcert={ca}"))).expect("https");
    assert_eq!(cell(&db, "SELECT toString(count()) FROM Genre"), "25");

    let unknown = failure(ClickHouseDatabase::connect(&uri));
    assert!(unknown.contains("UnknownIssuer") && unknown.contains("sslrootcert=PATH"), "{unknown}");
    let by_ip = uri.replace("@localhost:", "@127.0.0.1:");
    let wrong_name =
        failure(ClickHouseDatabase::connect(&with(&by_ip, &format!("sslrootcert={ca}"))));
    assert!(wrong_name.contains("not valid for name \"127.0.0.1\""), "{wrong_name}");
    // require: encrypted, unchecked.
    let required = by_ip.replace("secure=true", "sslmode=require");
    let db = ClickHouseDatabase::connect(&required).expect("require");
    assert_eq!(cell(&db, "SELECT toString(count()) FROM Genre"), "25");

    // The HTTPS port spoken to in plain HTTP, and the plain port in TLS, each say what to do.
    let plain_to_tls = failure(ClickHouseDatabase::connect(&uri.replace("?secure=true", "")));
    assert!(plain_to_tls.contains("add ?secure=true"), "{plain_to_tls}");
    if let Ok(plain_uri) = std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE") {
        let tls_to_plain =
            failure(ClickHouseDatabase::connect(&with(&plain_uri, "sslmode=require")));
        // (The plain port either rejects the handshake or waits for a request line.)
        assert!(
            tls_to_plain.contains("TLS handshake failed") || tls_to_plain.contains("serve HTTPS"),
            "{tls_to_plain}"
        );
    }
    let verify_ca = failure(ClickHouseDatabase::connect(&required.replace("require", "verify-ca")));
    assert!(verify_ca.contains("is not supported for ClickHouse"), "{verify_ca}");
}
