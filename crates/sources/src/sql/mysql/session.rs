//! Opening a MySQL or MariaDB connection: the URI read into the client's options (never over
//! the server's Unix socket, which could log in as another user), the server told apart, and
//! the session set as every statement expects it — UTF-8 results, times in UTC, the server's
//! `sql_mode` without the modes that change how a statement is read (`ANSI_QUOTES`,
//! `NO_BACKSLASH_ESCAPES`), and transactions read-only.

use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{ClientIdentity, Conn, DriverError, Opts, OptsBuilder, SslOpts};

use crate::error::SourceError;
use crate::sql::Dialect;
use crate::sql::tls::{TlsMode, TlsSettings, TrustedRoots};

/// Seconds to wait for the TCP connection when the URI does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most a read from the server may wait: past the longest statement (profiles run up to
/// [`crate::sql::PROFILE_TIMEOUT_MS`]), so that a server that went silent is given up on.
const READ_TIMEOUT: Duration = Duration::from_secs(660);

/// Modes that change how a statement's text is read: the validator reads it as MySQL does by
/// default (double quotes around strings, backslash escapes in them).
const READING_MODES: &[&str] = &["ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "PIPES_AS_CONCAT"];

/// The mode every session adds: `||` concatenates, as in standard SQL and every other engine a
/// model writes for (MySQL's default reads it as OR, and `'a' || 'b'` is then 0).
const ADDED_MODE: &str = "PIPES_AS_CONCAT";

/// The client's options for `uri` (`mysql://user:password@host:port/database`; `mariadb://`
/// is the same), and whether a server without TLS is read in plain TCP (`sslmode=prefer`, the
/// default, as MySQL's own client).
pub(super) fn options(uri: &str) -> Result<(Opts, bool), SourceError> {
    let invalid =
        |reason: String| SourceError::InvalidSpec { spec: crate::spec::redact_uri(uri), reason };
    let (uri, tls) = TlsSettings::take_from(uri, TlsMode::Prefer).map_err(&invalid)?;
    let as_mysql = match uri.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => uri.to_string(),
    };
    let opts = Opts::from_url(&as_mysql).map_err(|e| {
        invalid(format!(
            "not a MySQL connection URI: {e} (expected mysql://user:password@host:port/database)"
        ))
    })?;
    if opts.get_ssl_opts().is_some() {
        return Err(invalid(
            "TLS is set with sslmode, sslrootcert, sslcert and sslkey (or MySQL's ssl-mode, ssl-ca, ssl-cert and ssl-key), not with the client library's parameters".into(),
        ));
    }
    if opts.get_db_name().is_none_or(str::is_empty) {
        return Err(invalid(
            "the URI names no database: add it after the port (mysql://user:password@host:3306/database)".into(),
        ));
    }
    let builder = OptsBuilder::from_opts(opts.clone())
        .prefer_socket(false)
        .read_timeout(Some(READ_TIMEOUT))
        .write_timeout(Some(READ_TIMEOUT))
        .tcp_connect_timeout(Some(opts.get_tcp_connect_timeout().unwrap_or(CONNECT_TIMEOUT)))
        .stmt_cache_size(64)
        .ssl_opts(ssl_options(&tls).map_err(invalid)?);
    Ok((builder.into(), tls.mode == TlsMode::Prefer))
}

/// The client's TLS options for `tls`; the files are read once here so that a missing one is
/// reported when the source is added (the client reads them again on each connection).
fn ssl_options(tls: &TlsSettings) -> Result<Option<SslOpts>, String> {
    if tls.mode == TlsMode::Disable {
        return Ok(None);
    }
    tls.client_config()?;
    let checked = tls.mode >= TlsMode::VerifyCa;
    let root = match &tls.roots {
        TrustedRoots::File(path) => Some(path.clone()),
        // The client adds Mozilla's roots to any file it is given.
        TrustedRoots::Bundled => None,
        TrustedRoots::System => {
            return Err("sslrootcert=system is not supported for MySQL and MariaDB: name the CA file (on Debian, /etc/ssl/certs/ca-certificates.crt)".into());
        }
    };
    Ok(Some(
        SslOpts::default()
            .with_root_cert_path(root)
            .with_client_identity(
                tls.client_identity.clone().map(|(cert, key)| ClientIdentity::new(cert, key)),
            )
            .with_danger_accept_invalid_certs(!checked)
            .with_danger_skip_domain_validation(tls.mode != TlsMode::VerifyFull),
    ))
}

/// `opts` without TLS.
fn plain(opts: &Opts) -> Opts {
    OptsBuilder::from_opts(opts.clone()).ssl_opts(None::<SslOpts>).into()
}

/// The URI with its password left out, for messages and listings.
pub(super) fn location(opts: &Opts) -> String {
    format!(
        "mysql://{}@{}:{}/{}",
        opts.get_user().unwrap_or(""),
        opts.get_ip_or_hostname(),
        opts.get_tcp_port(),
        opts.get_db_name().unwrap_or("")
    )
}

/// Which of the two servers `version` (`SELECT VERSION()`) is.
pub(super) fn dialect_of(version: &str) -> Dialect {
    if version.to_ascii_lowercase().contains("mariadb") { Dialect::MariaDb } else { Dialect::MySql }
}

/// `sql_mode` without the modes that change how statements are read, and with `||` read as
/// concatenation.
pub(super) fn reading_mode(server_mode: &str) -> String {
    server_mode
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty() && !READING_MODES.iter().any(|r| r.eq_ignore_ascii_case(m)))
        .chain([ADDED_MODE])
        .collect::<Vec<_>>()
        .join(",")
}

/// The first connection, with the options every later one uses: without TLS when the server
/// offers none and `plain_fallback` allows it.
pub(super) fn open_first(
    opts: Opts,
    plain_fallback: bool,
) -> Result<(Conn, Dialect, Opts), mysql::Error> {
    match open(&opts) {
        Err(mysql::Error::DriverError(DriverError::TlsNotSupported)) if plain_fallback => {
            let plain = plain(&opts);
            let (conn, dialect) = open(&plain)?;
            Ok((conn, dialect, plain))
        }
        opened => opened.map(|(conn, dialect)| (conn, dialect, opts)),
    }
}

/// A new connection with the session every statement expects, and the server's dialect.
pub(super) fn open(opts: &Opts) -> Result<(Conn, Dialect), mysql::Error> {
    let mut conn = Conn::new(opts.clone())?;
    let dialect = set_up(&mut conn)?;
    Ok((conn, dialect))
}

/// The session of `conn` made as it was when opened, whatever a statement left in it — named
/// locks, user variables, session settings (a stored function may take or set them, whatever
/// its definer declared): the server resets the session (`COM_RESET_CONNECTION`), then it is
/// set up again.
pub(super) fn reset(conn: &mut Conn) -> Result<(), mysql::Error> {
    conn.reset()?;
    set_up(conn).map(|_| ())
}

/// Sets the session every statement expects on `conn`; the server's dialect.
fn set_up(conn: &mut Conn) -> Result<Dialect, mysql::Error> {
    let row: Option<(String, String)> = conn.query_first("SELECT VERSION(), @@SESSION.sql_mode")?;
    let (version, mode) = row.unwrap_or_default();
    let mode = reading_mode(&mode);
    // The mode holds only letters, digits, '_' and ',' (the server's own names).
    let mode = mode.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ','), "");
    conn.query_drop(format!(
        "SET NAMES utf8mb4; SET SESSION time_zone = '+00:00'; SET SESSION sql_mode = '{mode}'; SET SESSION TRANSACTION READ ONLY"
    ))?;
    Ok(dialect_of(&version))
}

/// Sends `KILL QUERY` for connection `id` on a connection of its own, so that a statement
/// stops on the server (a cancelled call, a reading stopped at a cap).
pub(super) fn kill_query(opts: &Opts, id: u32) -> Result<(), mysql::Error> {
    let quick = OptsBuilder::from_opts(opts.clone())
        .read_timeout(Some(Duration::from_secs(5)))
        .write_timeout(Some(Duration::from_secs(5)));
    let mut conn = Conn::new(quick)?;
    conn.query_drop(format!("KILL QUERY {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modes_that_change_how_statements_read_are_left_out() {
        assert_eq!(
            reading_mode("ANSI_QUOTES,STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES,ONLY_FULL_GROUP_BY"),
            "STRICT_TRANS_TABLES,ONLY_FULL_GROUP_BY,PIPES_AS_CONCAT"
        );
        assert_eq!(reading_mode("PIPES_AS_CONCAT"), "PIPES_AS_CONCAT");
        assert_eq!(dialect_of("10.11.19-MariaDB-0+deb12u1"), Dialect::MariaDb);
        assert_eq!(dialect_of("8.4.3"), Dialect::MySql);
    }

    #[test]
    fn a_uri_without_a_database_is_refused_and_passwords_are_not_shown() {
        let e = options("mysql://u:secret@h:3306").expect_err("no database");
        assert!(e.to_string().contains("names no database"), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
        let (opts, plain_fallback) = options("mariadb://u:secret@h:3307/shop").expect("valid");
        assert_eq!(location(&opts), "mysql://u@h:3307/shop");
        assert!(plain_fallback && opts.get_ssl_opts().is_some(), "TLS preferred by default");
        let (opts, plain_fallback) =
            options("mysql://u@h/shop?ssl-mode=VERIFY_IDENTITY").expect("valid");
        let tls = opts.get_ssl_opts().expect("TLS");
        assert!(!plain_fallback && !tls.accept_invalid_certs() && !tls.skip_domain_validation());
        let (opts, _) = options("mysql://u@h/shop?sslmode=verify-ca").expect("valid");
        let tls = opts.get_ssl_opts().expect("TLS");
        assert!(!tls.accept_invalid_certs() && tls.skip_domain_validation());
        let (opts, _) = options("mysql://u@h/shop?sslmode=disable").expect("valid");
        assert!(opts.get_ssl_opts().is_none());
    }
}
