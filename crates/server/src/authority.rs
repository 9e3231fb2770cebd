//! Reading `Host` and `Origin` values strictly, as a browser writes them, so that what the guard
//! compares is exactly what the client meant: a host is a bracketed IPv6 literal, an IPv4
//! address or a DNS name (letters, digits, `-`, `_`, non-empty dot-separated labels), then at
//! most `:port` with a port of 1–65535 written without leading zeros. Anything else — userinfo
//! (`a@localhost`), text after an IPv6 literal (`[::1]evil.com`), a trailing dot, an empty port,
//! percent-encoding, spaces — is not a host at all, rather than a host read one of several ways.

use std::net::Ipv6Addr;

/// The host part of an authority, compared as a browser means it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostName {
    /// A bracketed IPv6 literal (compared as an address: `[::1]` is `[0:0:0:0:0:0:0:1]`).
    Ipv6(Ipv6Addr),
    /// A DNS name or an IPv4 address, lowercased (names are case-insensitive).
    Name(String),
}

impl HostName {
    /// Whether this is `text` (a name, an IPv4 address, or an IPv6 address with or without
    /// brackets).
    pub(crate) fn is(&self, text: &str) -> bool {
        match self {
            Self::Ipv6(ip) => {
                let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
                bare.parse::<Ipv6Addr>().is_ok_and(|other| other == *ip)
            }
            Self::Name(name) => name.eq_ignore_ascii_case(text),
        }
    }
}

impl std::fmt::Display for HostName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ipv6(ip) => write!(f, "[{ip}]"),
            Self::Name(name) => f.write_str(name),
        }
    }
}

/// A `Host` value (or the authority of an origin): a host and an optional port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authority {
    /// The host.
    pub host: HostName,
    /// The port, when one was written.
    pub port: Option<u16>,
}

/// An `Origin` value other than `null`: scheme, host, and port (the scheme's default when none
/// was written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    /// `http` or `https`, lowercased.
    pub scheme: String,
    /// The host.
    pub host: HostName,
    /// The port, the scheme's default (80, 443) when none was written.
    pub port: u16,
}

/// Why a value is not a host or an origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AuthorityError {
    /// Empty, or characters no host may hold (spaces, `@`, `%`, `/`, non-ASCII, …).
    #[error("it is not a host name, an IPv4 address or a bracketed IPv6 address")]
    NotAHost,
    /// Something other than `:port` after the host (`[::1]evil.com`, `localhost:`).
    #[error("only `:port` may follow the host")]
    AfterHost,
    /// A port that is not 1–65535 written plainly.
    #[error("the port is not a number from 1 to 65535 without leading zeros")]
    BadPort,
    /// An origin that is not `scheme://host[:port]` with nothing after (no path, no slash).
    #[error("an origin is `http://host[:port]` or `https://host[:port]` with nothing after it")]
    NotAnOrigin,
}

/// Reads a `Host` header value.
pub(crate) fn parse_host(value: &str) -> Result<Authority, AuthorityError> {
    let (host, rest) = if let Some(inner) = value.strip_prefix('[') {
        let (literal, rest) = inner.split_once(']').ok_or(AuthorityError::NotAHost)?;
        // A zone (`%25eth0`) or anything else that is not a plain IPv6 address is refused.
        let ip = literal.parse::<Ipv6Addr>().map_err(|_| AuthorityError::NotAHost)?;
        (HostName::Ipv6(ip), rest)
    } else {
        let end = value.find(':').unwrap_or(value.len());
        let (name, rest) = value.split_at(end);
        (HostName::Name(reg_name(name)?), rest)
    };
    let port = match rest {
        "" => None,
        _ => Some(port(rest.strip_prefix(':').ok_or(AuthorityError::AfterHost)?)?),
    };
    Ok(Authority { host, port })
}

/// Reads an `Origin` header value other than `null` (which the caller refuses itself).
pub(crate) fn parse_origin(value: &str) -> Result<Origin, AuthorityError> {
    let (scheme, authority) = value.split_once("://").ok_or(AuthorityError::NotAnOrigin)?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(AuthorityError::NotAnOrigin),
    };
    // Browsers send no path and no trailing slash; `parse_host` refuses `/` in the authority.
    if authority.contains(['/', '?', '#']) {
        return Err(AuthorityError::NotAnOrigin);
    }
    let Authority { host, port } = parse_host(authority)?;
    Ok(Origin { scheme, host, port: port.unwrap_or(default) })
}

/// A DNS name or IPv4 address: non-empty labels of letters, digits, `-` and `_`, lowercased.
/// A trailing dot (an empty last label) is refused: it names the same host by another spelling.
fn reg_name(name: &str) -> Result<String, AuthorityError> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(AuthorityError::NotAHost);
    }
    Ok(name.to_ascii_lowercase())
}

/// A port as a browser writes it: 1–65535, digits only, no leading zero.
fn port(text: &str) -> Result<u16, AuthorityError> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && !text.starts_with('0')
        && text.len() <= 5;
    if !canonical {
        return Err(AuthorityError::BadPort);
    }
    text.parse::<u16>().map_err(|_| AuthorityError::BadPort)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> HostName {
        HostName::Name(n.into())
    }

    #[test]
    fn hosts_are_read_as_a_browser_writes_them() {
        let cases: [(&str, Result<Authority, AuthorityError>); 12] = [
            ("localhost:8750", Ok(Authority { host: name("localhost"), port: Some(8750) })),
            ("LocalHost", Ok(Authority { host: name("localhost"), port: None })),
            ("127.0.0.1:1", Ok(Authority { host: name("127.0.0.1"), port: Some(1) })),
            (
                "[::1]:65535",
                Ok(Authority { host: HostName::Ipv6(Ipv6Addr::LOCALHOST), port: Some(65535) }),
            ),
            (
                "[0:0:0:0:0:0:0:1]",
                Ok(Authority { host: HostName::Ipv6(Ipv6Addr::LOCALHOST), port: None }),
            ),
            ("[::1]evil.com:8750", Err(AuthorityError::AfterHost)),
            ("[::1]:8750x", Err(AuthorityError::BadPort)),
            ("[::1%25lo]:8750", Err(AuthorityError::NotAHost)),
            ("[::1", Err(AuthorityError::NotAHost)),
            ("localhost:", Err(AuthorityError::BadPort)),
            ("localhost.:8750", Err(AuthorityError::NotAHost)),
            ("a@localhost:8750", Err(AuthorityError::NotAHost)),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_host(value), expected, "{value}");
        }
        for bad in [
            "",
            "localhost:0",
            "localhost:65536",
            "localhost:08750",
            "localhost:+80",
            "localhost:8750:1",
            "local%68ost",
            "local host",
            "localhost ",
            "evil.com/x",
            ".localhost",
            "a..b",
            "[::1]]",
            "::1",
            "ĺocalhost",
        ] {
            assert!(parse_host(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn origins_are_scheme_host_and_port_with_nothing_after() {
        let local =
            |scheme: &str, port| Origin { scheme: scheme.into(), host: name("localhost"), port };
        assert_eq!(parse_origin("http://localhost:8750"), Ok(local("http", 8750)));
        assert_eq!(parse_origin("HTTP://LOCALHOST"), Ok(local("http", 80)));
        assert_eq!(parse_origin("https://localhost"), Ok(local("https", 443)));
        for bad in [
            "null",
            "http://localhost:8750/",
            "http://localhost:8750/x",
            "http://localhost:8750?x",
            "ftp://localhost",
            "http:/localhost",
            "http://",
            "http://a@localhost",
            "http://[::1]evil.com",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn a_host_name_matches_its_spellings_of_one_address() {
        let v6 = HostName::Ipv6(Ipv6Addr::LOCALHOST);
        assert!(v6.is("::1") && v6.is("[::1]") && v6.is("0:0:0:0:0:0:0:1"));
        assert!(!v6.is("127.0.0.1"));
        assert!(name("localhost").is("LOCALHOST") && !name("localhost").is("localhost."));
    }
}
