//! ClickHouse's HTTP interface through `ureq`: the URI `clickhouse://[user[:password]@]host:port/database`,
//! one POST per statement with its settings as URL parameters and its own `query_id`, a deadline
//! on connecting and on the whole exchange, the body read line by line within a bound, and the
//! server's exception text (before or after the rows) turned into a code and a message.
//! `KILL QUERY` by `query_id` stops a statement on the server, which even a user whose profile is
//! `readonly=1` may send for its own statements.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::sql::tls::{TlsMode, TlsSettings, percent_decoded, read_bounded};

/// Seconds to wait for a TCP connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How much longer than a statement's own timeout the whole HTTP exchange may take before the
/// client gives up on its own (the server stops it first, or is asked to).
const EXCHANGE_GRACE: Duration = Duration::from_secs(10);

/// How long an idle connection is kept for reuse: below ClickHouse's default keep-alive.
const IDLE_AGE: Duration = Duration::from_millis(2_000);

/// Where a ClickHouse database is and who connects.
#[derive(Clone)]
pub(super) struct Endpoint {
    host: String,
    port: u16,
    pub user: String,
    password: String,
    pub database: String,
    /// HTTPS (`sslmode=require` or `verify-full`, or `secure=true`), or plain HTTP.
    tls: TlsSettings,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.location())
    }
}

impl Endpoint {
    /// Parses `clickhouse://[user[:password]@]host:port/database[?secure=true|sslmode=…]`;
    /// the error says what is wrong and never repeats the password.
    pub(super) fn parse(uri: &str) -> Result<Self, String> {
        const SHAPE: &str = "expected clickhouse://[user[:password]@]host:port/database";
        // Plain HTTP unless the URI asks for TLS: ClickHouse's HTTP port has none to offer.
        let (uri, tls) = TlsSettings::take_from(uri, TlsMode::Disable)?;
        match tls.mode {
            TlsMode::Prefer => {
                return Err("sslmode=prefer has no meaning over HTTP (there is no negotiation): use sslmode=verify-full or require for HTTPS, or disable".into());
            }
            TlsMode::VerifyCa => {
                return Err("sslmode=verify-ca (or require with sslrootcert, which checks the CA as libpq does) is not supported for ClickHouse: its HTTPS client always checks the host name. Use verify-full (with sslrootcert for your CA), or require without sslrootcert to encrypt without checking".into());
            }
            _ => {}
        }
        let rest = uri
            .strip_prefix("clickhouse://")
            .ok_or_else(|| format!("not a ClickHouse URI ({SHAPE})"))?;
        // The user info ends at the last `@`: a password may hold one unescaped.
        let (userinfo, address) = match rest.rsplit_once('@') {
            Some((info, address)) => (Some(info), address),
            None => (None, rest),
        };
        let (user, password) = match userinfo {
            Some(info) => {
                let (user, password) = info.split_once(':').unwrap_or((info, ""));
                (
                    percent_decoded(user).ok_or_else(|| {
                        format!("the user name has a malformed %-escape ({SHAPE})")
                    })?,
                    percent_decoded(password).ok_or_else(|| {
                        format!("the password has a malformed %-escape ({SHAPE})")
                    })?,
                )
            }
            None => ("default".to_string(), String::new()),
        };
        if address.contains('?') {
            return Err(format!(
                "the only parameters after `?` are TLS's: secure=true, or sslmode, sslrootcert, sslcert and sslkey ({SHAPE})"
            ));
        }
        let (host_port, database) =
            address.split_once('/').ok_or_else(|| format!("the database is missing ({SHAPE})"))?;
        let database = percent_decoded(database)
            .filter(|d| !d.is_empty() && !d.contains('/'))
            .ok_or_else(|| format!("the database is missing or malformed ({SHAPE})"))?;
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => (
                host,
                port.parse::<u16>()
                    .map_err(|_| format!("the port `{port}` is not a number ({SHAPE})"))?,
            ),
            _ => (host_port, if tls.mode == TlsMode::Disable { 8123 } else { 8443 }),
        };
        if host.is_empty() || user.is_empty() {
            return Err(format!("the host or the user is empty ({SHAPE})"));
        }
        if host.chars().any(|c| c.is_whitespace() || "/?#@".contains(c)) {
            return Err(format!("the host `{host}` is malformed ({SHAPE})"));
        }
        // The certificates are read now: a missing file is reported when the source is added.
        tls.client_config()?;
        Ok(Self { host: host.to_string(), port, user, password, database, tls })
    }

    /// The URI without its password, for messages and listings.
    pub(super) fn location(&self) -> String {
        let secure = if self.is_secure() { "?secure=true" } else { "" };
        format!("clickhouse://{}@{}:{}/{}{secure}", self.user, self.host, self.port, self.database)
    }

    /// Whether the endpoint is reached over HTTPS.
    pub(super) fn is_secure(&self) -> bool {
        self.tls.mode != TlsMode::Disable
    }

    /// The HTTP client's TLS configuration for this endpoint.
    fn tls_config(&self) -> Result<ureq::tls::TlsConfig, String> {
        use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};
        let roots = match self.tls.root_certificates()? {
            None => RootCerts::WebPki,
            Some(found) => RootCerts::new_with_certs(
                &found.iter().map(|c| Certificate::from_der(c).to_owned()).collect::<Vec<_>>(),
            ),
        };
        let client_cert = match self.tls.client_identity()? {
            None => None,
            Some((chain, _)) => {
                // (The HTTP client takes the key as PEM, not as the DER read above.)
                let key_path = self.tls.client_identity.as_ref().map(|(_, key)| key.as_path());
                let pem = key_path.map(|key| read_bounded(key, "sslkey")).transpose()?;
                let key = PrivateKey::from_pem(pem.as_deref().unwrap_or_default())
                    .map_err(|e| format!("sslkey: ClickHouse's client takes a PEM key: {e}"))?;
                let chain: Vec<Certificate<'static>> =
                    chain.iter().map(|c| Certificate::from_der(c).to_owned()).collect();
                Some(ClientCert::new_with_certs(&chain, key))
            }
        };
        Ok(TlsConfig::builder()
            .root_certs(roots)
            .client_cert(client_cert)
            .disable_verification(self.tls.mode < TlsMode::VerifyCa)
            .build())
    }
}

/// Why an exchange failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// The server answered with an exception: its code (when it says one) and its message.
    Server { code: Option<u32>, message: String },
    /// No answer: the server is unreachable, or the connection broke or timed out.
    Transport { message: String, sent: bool },
}

impl Failure {
    fn transport(e: impl std::fmt::Display, sent: bool) -> Self {
        Self::Transport { message: e.to_string(), sent }
    }
}

/// Where the first `DB::Exception: ` (or `DB::NetException: `, a shard's network failure, and
/// the like) of `text` ends: the message follows.
fn exception_message_start(text: &[u8]) -> Option<usize> {
    memchr::memmem::find_iter(text, b"DB::").find_map(|at| {
        let name = &text[at + 4..];
        let length = name.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        (name[..length].ends_with(b"Exception") && name[length..].starts_with(b": "))
            .then_some(at + 4 + length + 2)
    })
}

/// ClickHouse's exception text as (code, message): `Code: 60, e.displayText() = DB::Exception:
/// Table x doesn't exist., e.what() = DB::Exception` (18.16) or `Code: 60. DB::Exception: Table
/// x does not exist. (UNKNOWN_TABLE) (version 24.3.1)` (current releases).
pub(super) fn exception(text: &str) -> (Option<u32>, String) {
    let text = text.trim();
    let code = text
        .strip_prefix("Code: ")
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect::<String>())
        .and_then(|digits| digits.parse().ok());
    let message = match exception_message_start(text.as_bytes()) {
        Some(at) => {
            let rest = &text[at..];
            let rest = rest.split(", e.what() = ").next().unwrap_or(rest);
            let rest = rest.split(" (version ").next().unwrap_or(rest);
            rest.trim().to_string()
        }
        None => text.to_string(),
    };
    (code, message)
}

/// Whether a line is the exception ClickHouse writes after rows it already sent (a statement
/// that fails while its result streams: a timeout, a cancellation, a memory limit).
pub(super) fn is_exception_line(line: &[u8]) -> bool {
    line.starts_with(b"Code: ") && exception_message_start(line).is_some()
}

/// The HTTP client of one database.
pub(super) struct Http {
    agent: ureq::Agent,
    base: String,
    pub endpoint: Endpoint,
}

/// A statement's answer: the body, read line by line.
pub(super) struct Reply {
    reader: BufReader<Box<dyn Read + Send>>,
}

/// What one bounded line read found.
pub(super) enum Line {
    /// A line (without its newline).
    Full,
    /// The body ended (what was read before the end, if anything, is in the buffer).
    End,
    /// The line is longer than the bound; the rest of it was not read.
    TooLong {
        /// Bytes of the line received before reading stopped (more than the bound: those of
        /// it already in the reader's buffer count).
        received: usize,
    },
}

impl Reply {
    /// Reads the next line into `buf` (cleared first), at most `limit` bytes of it.
    pub(super) fn line(&mut self, buf: &mut Vec<u8>, limit: usize) -> std::io::Result<Line> {
        buf.clear();
        loop {
            let available = self.reader.fill_buf()?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            match memchr::memchr(b'\n', available) {
                Some(at) => {
                    if buf.len() + at > limit {
                        return Ok(Line::TooLong { received: buf.len() + at });
                    }
                    buf.extend_from_slice(&available[..at]);
                    self.reader.consume(at + 1);
                    return Ok(Line::Full);
                }
                None => {
                    let n = available.len();
                    if buf.len() + n > limit {
                        return Ok(Line::TooLong { received: buf.len() + n });
                    }
                    buf.extend_from_slice(available);
                    self.reader.consume(n);
                }
            }
        }
    }
}

static QUERY_IDS: AtomicU64 = AtomicU64::new(0);

/// A fresh `query_id` for one statement: this process's and a counter, so `KILL QUERY` stops
/// exactly it.
pub(super) fn query_id() -> String {
    format!(
        "schemascope-{}-{:x}-{}",
        std::process::id(),
        fastrand::u64(..),
        QUERY_IDS.fetch_add(1, Ordering::Relaxed)
    )
}

/// `text` with everything but unreserved characters %-escaped, for a URL parameter.
fn url_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Http {
    pub(super) fn new(endpoint: Endpoint) -> Result<Self, String> {
        let config = ureq::Agent::config_builder()
            .tls_config(endpoint.tls_config()?)
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .max_idle_connections_per_host(8)
            // ClickHouse closes an idle connection after `keep_alive_timeout` (3 s by default
            // in 18.16): one kept longer would fail when reused, after the request was written.
            .max_idle_age(IDLE_AGE)
            .build();
        let host = if endpoint.host.contains(':') && !endpoint.host.starts_with('[') {
            format!("[{}]", endpoint.host)
        } else {
            endpoint.host.clone()
        };
        let scheme = if endpoint.is_secure() { "https" } else { "http" };
        let base = format!("{scheme}://{host}:{}/", endpoint.port);
        Ok(Self { agent: config.into(), base, endpoint })
    }

    /// Sends `sql` as `query_id` with `settings`; the exchange may take `timeout` plus a grace.
    /// An answer other than 200 is the server's exception.
    pub(super) fn send(
        &self,
        sql: &str,
        query_id: &str,
        settings: &[(&str, String)],
        timeout: Duration,
    ) -> Result<Reply, Failure> {
        // The statement names its format; the default is the same, should a comment or a
        // server's parsing ever leave the named one out.
        let mut url = format!(
            "{}?database={}&query_id={}&default_format=TabSeparatedWithNamesAndTypes",
            self.base,
            url_escaped(&self.endpoint.database),
            url_escaped(query_id)
        );
        for (name, value) in settings {
            url.push_str(&format!("&{name}={}", url_escaped(value)));
        }
        let response = self
            .agent
            .post(&url)
            .header("X-ClickHouse-User", &self.endpoint.user)
            .header("X-ClickHouse-Key", &self.endpoint.password)
            .config()
            .timeout_global(Some(timeout + EXCHANGE_GRACE))
            .build()
            .send(sql.as_bytes())
            .map_err(|e| {
                // Whether the request reached the server is unknown for most errors; only a
                // refused connection surely sent nothing.
                let refused = matches!(&e, ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused)
                    || matches!(e, ureq::Error::ConnectionFailed | ureq::Error::HostNotFound);
                Failure::transport(e, !refused)
            })?;
        let status = response.status().as_u16();
        let reader: Box<dyn Read + Send> = Box::new(response.into_body().into_reader());
        let mut reply = Reply { reader: BufReader::with_capacity(64 * 1024, reader) };
        if status != 200 {
            let mut text = Vec::new();
            (&mut reply.reader)
                .take(64 * 1024)
                .read_to_end(&mut text)
                .map_err(|e| Failure::transport(e, true))?;
            let (code, message) = exception(&String::from_utf8_lossy(&text));
            let message =
                if message.is_empty() { format!("HTTP status {status}") } else { message };
            return Err(Failure::Server { code, message });
        }
        Ok(reply)
    }

    /// Sends `sql` and reads its whole (small) answer as text.
    pub(super) fn text(
        &self,
        sql: &str,
        settings: &[(&str, String)],
        timeout: Duration,
    ) -> Result<String, Failure> {
        let mut reply = self.send(sql, &query_id(), settings, timeout)?;
        let mut text = Vec::new();
        (&mut reply.reader)
            .take(16 * 1024 * 1024)
            .read_to_end(&mut text)
            .map_err(|e| Failure::transport(e, true))?;
        let text = String::from_utf8_lossy(&text).into_owned();
        if let Some(last) = text.lines().last()
            && is_exception_line(last.as_bytes())
        {
            let (code, message) = exception(last);
            return Err(Failure::Server { code, message });
        }
        Ok(text)
    }

    /// Asks the server to stop the statement `query_id` (without waiting for it to stop).
    pub(super) fn kill(&self, query_id: &str, settings: &[(&str, String)]) {
        let sql =
            format!("KILL QUERY WHERE query_id = {} ASYNC", super::text::quote_string(query_id));
        // A failed request leaves the statement to its own limits.
        let _ = self.text(&sql, settings, Duration::from_secs(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_with_escapes_and_defaults() {
        let e = Endpoint::parse("clickhouse://u%40x:p%3Aw@d@127.0.0.1:18123/chin%20ook")
            .expect("valid");
        assert_eq!((e.user.as_str(), e.password.as_str()), ("u@x", "p:w@d"));
        assert_eq!(
            (e.host.as_str(), e.port, e.database.as_str()),
            ("127.0.0.1", 18123, "chin ook")
        );
        assert_eq!(e.location(), "clickhouse://u@x@127.0.0.1:18123/chin ook");
        let e = Endpoint::parse("clickhouse://h/db").expect("valid");
        assert_eq!((e.user.as_str(), e.port), ("default", 8123));
        for bad in [
            "clickhouse://u:secret@h:port/db",
            "clickhouse://u:secret@h:1",
            "clickhouse://u:secret@h:1/",
            "clickhouse://u:sec%zzret@h:1/db",
            "clickhouse://u:secret@:1/db",
            "clickhouse://u:secret@h:1/db?x=1",
        ] {
            let why = Endpoint::parse(bad).err().unwrap_or_default();
            assert!(why.contains("expected clickhouse://"), "{bad}: {why}");
            assert!(!why.contains("secret"), "{bad}: {why}");
        }
    }

    #[test]
    fn exceptions_of_old_and_new_servers_read_alike() {
        assert_eq!(
            exception(
                "Code: 60, e.displayText() = DB::Exception: Table chinook.nope doesn't exist., e.what() = DB::Exception\n"
            ),
            (Some(60), "Table chinook.nope doesn't exist.".into())
        );
        assert_eq!(
            exception(
                "Code: 60. DB::Exception: Table chinook.nope does not exist. (UNKNOWN_TABLE) (version 24.3.1.1)\n"
            ),
            (Some(60), "Table chinook.nope does not exist. (UNKNOWN_TABLE)".into())
        );
        // A shard that does not answer (a Distributed table's): the first attempt's address.
        let (code, message) = exception(
            "Code: 279, e.displayText() = DB::NetException: All connection tries failed. Log: \n\nCode: 210, e.displayText() = DB::NetException: Connection refused (127.0.0.1:9), e.what() = DB::NetException\n\n, e.what() = DB::NetException\n",
        );
        assert_eq!(code, Some(279));
        assert!(message.starts_with("All connection tries failed."), "{message}");
        assert!(message.ends_with("Connection refused (127.0.0.1:9)"), "{message}");
        assert!(is_exception_line(b"Code: 32, e.displayText() = DB::NetException: x"));
        assert!(!is_exception_line(b"Code: 32\tDB::Exceptional: x"));
    }
}
