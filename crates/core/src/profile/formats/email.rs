//! JSON Schema's `email`: an RFC 5321 mailbox, `local-part@domain`, decided by hand. The
//! `email_address` crate took a domain of any characters but `@` (`a@b/c`, `a@b=c.com`) and
//! address literals that are no address (`a@[999.1.1.1]`), so a property of such values was
//! claimed `email`: a wrong fact. What is not surely a mailbox is not counted.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The longest address: a path is 256 octets with its angle brackets (RFC 5321 §4.5.3.1.3).
const MAX_ADDRESS: usize = 254;
/// The longest local part (RFC 5321 §4.5.3.1.1).
const MAX_LOCAL: usize = 64;
/// The longest domain name and label (RFC 1035 §2.3.4).
const MAX_DOMAIN: usize = 253;
const MAX_LABEL: usize = 63;

/// True when `value` is an RFC 5321 mailbox: a dot-string or quoted local part, then a domain
/// of letter-digit-hyphen labels or an IPv4 or IPv6 address literal.
pub fn is_email(value: &str) -> bool {
    if value.len() > MAX_ADDRESS {
        return false;
    }
    // The domain has no `@`; a quoted local part may.
    let Some(at) = value.rfind('@') else { return false };
    let (local, domain) = (&value[..at], &value[at + 1..]);
    is_local_part(local.as_bytes()) && is_domain(domain)
}

/// RFC 5321's `atext`: the characters of an unquoted local part but the dots between atoms.
fn is_atext(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&b)
}

/// A dot-string (atoms of `atext` joined by single dots) or a quoted string, of at most 64
/// octets.
fn is_local_part(local: &[u8]) -> bool {
    if local.is_empty() || local.len() > MAX_LOCAL {
        return false;
    }
    match local {
        [b'"', inner @ .., b'"'] => is_quoted_content(inner),
        _ => local
            .split(|&b| b == b'.')
            .all(|atom| !atom.is_empty() && atom.iter().all(|&b| is_atext(b))),
    }
}

/// The inside of a quoted string: printable ASCII and spaces, a `"` or `\` only escaped.
fn is_quoted_content(inner: &[u8]) -> bool {
    let mut bytes = inner.iter();
    while let Some(&b) = bytes.next() {
        let printable = |b: u8| (b' '..=b'~').contains(&b);
        match b {
            b'\\' => {
                if !bytes.next().is_some_and(|&next| printable(next)) {
                    return false;
                }
            }
            b'"' => return false,
            _ if printable(b) => {}
            _ => return false,
        }
    }
    true
}

/// A domain name of letter-digit-hyphen labels (none starting or ending with a hyphen), or an
/// address literal: `[` an IPv4 address `]` or `[IPv6:` an IPv6 address `]`.
fn is_domain(domain: &str) -> bool {
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
            None => literal.parse::<Ipv4Addr>().is_ok(),
        };
    }
    !domain.is_empty()
        && domain.len() <= MAX_DOMAIN
        && domain.split('.').all(|label| {
            let bytes = label.as_bytes();
            (1..=MAX_LABEL).contains(&bytes.len())
                && bytes.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-')
                && bytes.first() != Some(&b'-')
                && bytes.last() != Some(&b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON Schema's test suite (draft 2020-12, `format/email.json`), then what the
    /// `email_address` crate took that is no mailbox (tester helper-58).
    #[test]
    fn mailboxes_are_told_from_what_is_not_one() {
        let valid = [
            "joe.bloggs@example.com",
            "te~st@example.com",
            "~test@example.com",
            "test~@example.com",
            "\"joe bloggs\"@example.com",
            "\"joe..bloggs\"@example.com",
            "\"a@b\"@example.com",
            "\"a\\\"b\"@example.com",
            "joe.bloggs@[127.0.0.1]",
            "joe.bloggs@[IPv6:::1]",
            "root@localhost",
            "a+tag@sub.example-site.co.uk",
            "x@1.2.3.4",
        ];
        let invalid = [
            "2962",
            ".test@example.com",
            "test.@example.com",
            "te..st@example.com",
            "joe.bloggs@[127.0.0.300]",
            "joe.bloggs@invalid=domain.com",
            "joe.bloggs@-example.com",
            "joe.bloggs@example-.com",
            "joe.bloggs@[IPv6:zz]",
            "joe.bloggs@[999.1.1.1]",
            "joe.bloggs@[::1]",
            "user@example.com/path",
            "a@b/c",
            "a@b?x",
            "a@b#x",
            "a@b%c.com",
            "a@b!c.com",
            "a@b+c.com",
            "a@b~c.com",
            "a@b*c.com",
            "a@b'c.com",
            "a@b$c.com",
            "a@b&c.com",
            "a@exa_mple.com",
            "a@b..com",
            "a@.b.com",
            "a@b.com.",
            "a@",
            "@example.com",
            "a b@example.com",
            "a:b@example.com",
            "a(b)@example.com",
            "a,b@example.com",
            "a\\b@example.com",
            "\"a\"b\"@example.com",
            "\"a\\\"@example.com",
            "\"tab\there\"@example.com",
            "é@example.com",
            "a@exämple.com",
            "a@b@c.com",
        ];
        for value in valid {
            assert!(is_email(value), "{value} is a mailbox");
        }
        for value in invalid {
            assert!(!is_email(value), "{value} is not a mailbox");
        }
    }

    #[test]
    fn lengths_are_bounded_as_rfc_5321_bounds_them() {
        let local64 = "a".repeat(64);
        assert!(is_email(&format!("{local64}@example.com")));
        assert!(!is_email(&format!("a{local64}@example.com")));
        let label63 = "b".repeat(63);
        assert!(is_email(&format!("a@{label63}.com")));
        assert!(!is_email(&format!("a@b{label63}.com")));
        // A 254-octet address; one more octet of either part is refused.
        let domain252 = format!("{label63}.{label63}.{label63}.{}", "c".repeat(60));
        assert!(is_email(&format!("a@{domain252}")));
        assert!(!is_email(&format!("ab@{domain252}")));
        assert!(!is_email(&format!("a@{domain252}c")));
        // A domain past 253 octets, whatever the address's length.
        assert!(!is_domain(&format!("{domain252}cc")));
        assert!(is_domain(&format!("{domain252}c")));
        let long_local = format!("{local64}@{label63}.{label63}.{label63}.{}", "c".repeat(57));
        assert!(long_local.len() > MAX_ADDRESS);
        assert!(!is_email(&long_local));
    }
}
