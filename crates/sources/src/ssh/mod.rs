//! SSH tunnels to database servers behind a bastion: a source's URI is rewritten to reach a
//! local port that `ssh` forwards through the bastion (and its jump hosts) to the database, and
//! the tunnel lives as long as the source's connection.

mod settings;
mod tunnel;
mod tunneled;

pub use self::settings::{DEFAULT_SSH_PORT, SshTunnel};
pub use self::tunnel::Tunnel;
pub(crate) use self::tunneled::{Tunneled, explained};

use crate::sql::tls::{TlsMode, TlsSettings};

/// The database engines a tunnel may lead to, with what each needs of the URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    Postgres,
    MySql,
    ClickHouse,
}

impl Engine {
    fn default_port(self, tls: TlsMode) -> u16 {
        match self {
            Engine::Postgres => 5432,
            Engine::MySql => 3306,
            Engine::ClickHouse if tls == TlsMode::Disable => 8123,
            Engine::ClickHouse => 8443,
        }
    }

    fn default_tls(self) -> TlsMode {
        match self {
            Engine::Postgres | Engine::MySql => TlsMode::Prefer,
            Engine::ClickHouse => TlsMode::Disable,
        }
    }
}

/// The parts of a database URI a tunnel changes: where the host and port are written.
#[derive(Debug)]
struct Address<'u> {
    /// Everything before the host.
    before: &'u str,
    host: &'u str,
    port: Option<u16>,
    /// Everything after the port (the path and query).
    after: &'u str,
}

fn address(uri: &str) -> Result<Address<'_>, String> {
    let scheme_end = uri.find("://").map(|at| at + 3).ok_or("not a URI")?;
    // The host follows the user info, whose end is the last `@` before the query.
    let query_start = uri[scheme_end..].find('?').map_or(uri.len(), |at| scheme_end + at);
    let host_start =
        uri[scheme_end..query_start].rfind('@').map_or(scheme_end, |at| scheme_end + at + 1);
    let host_end = uri[host_start..].find(['/', '?', '#']).map_or(uri.len(), |at| host_start + at);
    let host_port = &uri[host_start..host_end];
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
            let port =
                port.parse::<u16>().map_err(|_| format!("the port `{port}` is not a number"))?;
            (host, Some(port))
        }
        _ => (host_port, None),
    };
    if host.contains(',') {
        return Err("a URI with several hosts cannot go through one SSH tunnel".into());
    }
    if let Some(reason) = settings::invalid_host(host) {
        return Err(format!("the database host {reason}"));
    }
    Ok(Address { before: &uri[..host_start], host, port, after: &uri[host_end..] })
}

/// `uri` rewritten to reach its database through a tunnel from `127.0.0.1`, and the tunnel,
/// open. The bastion resolves and connects to the URI's host (`localhost` is the bastion
/// itself).
pub(crate) fn route(
    uri: &str,
    engine: Engine,
    ssh: &SshTunnel,
) -> Result<(String, Tunnel), String> {
    let (_, tls) = TlsSettings::take_from(uri, engine.default_tls())?;
    let parts = address(uri)?;
    let target_port = parts.port.unwrap_or_else(|| engine.default_port(tls.mode));
    let lower = uri.to_ascii_lowercase();
    if engine == Engine::Postgres
        && ["host=", "hostaddr=", "port="]
            .iter()
            .any(|p| lower.contains(&format!("?{p}")) || lower.contains(&format!("&{p}")))
    {
        return Err("`host`, `hostaddr` and `port` parameters cannot be combined with an SSH tunnel: write the database's host and port in the URI, as the bastion reaches it".into());
    }
    // PostgreSQL connects to `hostaddr` and checks the certificate against the host; the other
    // clients have one address for both, the tunnel's, which no certificate names.
    if engine != Engine::Postgres && tls.mode == TlsMode::VerifyFull {
        return Err(format!(
            "through an SSH tunnel the server's certificate cannot be checked against its name ({}): use sslmode=require{} (the tunnel itself is checked against the bastion's known host key)",
            parts.host,
            if engine == Engine::MySql { " or verify-ca" } else { "" }
        ));
    }
    let tunnel = Tunnel::open(ssh, &format!("{}:{target_port}", parts.host))?;
    let local = tunnel.local_port();
    let rewritten = match engine {
        Engine::Postgres => {
            let joiner = if parts.after.contains('?') { '&' } else { '?' };
            let (path, fragment) = match parts.after.split_once('#') {
                Some((path, fragment)) => (path, format!("#{fragment}")),
                None => (parts.after, String::new()),
            };
            format!(
                "{}{}:{local}{path}{joiner}hostaddr=127.0.0.1{fragment}",
                parts.before, parts.host
            )
        }
        Engine::MySql | Engine::ClickHouse => {
            format!("{}127.0.0.1:{local}{}", parts.before, parts.after)
        }
    };
    Ok((rewritten, tunnel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_found_after_the_user_info_and_before_the_path() {
        let a = address("postgres://u:p@ss@db.internal:6543/app?sslmode=require").unwrap();
        assert_eq!(
            (a.before, a.host, a.port, a.after),
            ("postgres://u:p@ss@", "db.internal", Some(6543), "/app?sslmode=require")
        );
        let a = address("mysql://u@[fd00::5]/shop").unwrap();
        assert_eq!((a.host, a.port, a.after), ("[fd00::5]", None, "/shop"));
        let a = address("clickhouse://h/db?user=a@b").unwrap();
        assert_eq!((a.before, a.host), ("clickhouse://", "h"));
        assert!(address("postgres://u@h1,h2/db").unwrap_err().contains("several hosts"));
        assert!(address("postgres://u@-oProxyCommand=x/db").unwrap_err().contains("not a host"));
    }
}
