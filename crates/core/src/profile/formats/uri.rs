//! The `uri` format decided without a full parse for the shape nearly every URI takes
//! (`scheme://host[:port][/path][?query][#fragment]` in plain characters): a nested file's
//! properties are often URLs, every one of them checked, and fluent-uri's parse was the largest
//! part of checking formats. Anything else (percent-escapes, user info, IP literals, sub-delimiters
//! in the host, non-ASCII) goes to fluent-uri, which decides; so the answer is fluent-uri's.

/// The position of the `://` that ends a scheme at the start of `bytes` (a letter, then
/// letters, digits, `+`, `-` and `.`), if one does. Only the scheme's bytes are read: a long
/// text is settled by its first word, not searched through for a `://` later in it.
#[inline]
pub(super) fn leading_scheme_separator(bytes: &[u8]) -> Option<usize> {
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (bytes.get(end..end + 3) == Some(b"://")).then_some(end)
}

/// What each byte may be, as bits: [`AUTHORITY`], [`PATH`], [`QUERY`]. One table lookup a byte.
const CLASSES: [u8; 256] = classes();
/// A plain authority's byte: RFC 3986's `unreserved` (letters, digits, `-`, `.`, `_`, `~`) or
/// the port's `:`.
const AUTHORITY: u8 = 1;
/// A plain path's byte: `pchar` without percent-escapes (`unreserved`, the sub-delimiters
/// `!$&'()*+,;=`, `:` and `@`) or `/`.
const PATH: u8 = 2;
/// A plain query's or fragment's byte: a path's, or `?`.
const QUERY: u8 = 4;

const fn classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let unreserved = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
        let pchar = unreserved
            || matches!(c, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';')
            || matches!(c, b'=' | b':' | b'@');
        let mut class = 0;
        if unreserved || c == b':' {
            class |= AUTHORITY;
        }
        if pchar || c == b'/' {
            class |= PATH | QUERY;
        }
        if c == b'?' {
            class |= QUERY;
        }
        table[b] = class;
        b += 1;
    }
    table
}

/// True when `rest`, what follows `scheme://`, is surely a valid authority, path, query and
/// fragment: a host of `unreserved` characters, an optional port of digits, then a path starting
/// with `/`, a query after `?` and a fragment after `#`, in plain characters. False means
/// "not this shape", not "invalid": fluent-uri then decides.
pub(super) fn is_plain_tail(rest: &[u8]) -> bool {
    let authority_end =
        rest.iter().position(|&b| CLASSES[usize::from(b)] & AUTHORITY == 0).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if let Some(colon) = authority.iter().position(|&b| b == b':') {
        // A port of digits (any number of them: RFC 3986 sets no range); a second colon is not
        // one.
        if !authority[colon + 1..].iter().all(u8::is_ascii_digit) {
            return false;
        }
    }
    // The authority ends at a byte it cannot hold: the path must start there with `/` (or be
    // empty, the query or fragment starting there).
    if !matches!(tail.first(), None | Some(b'/' | b'?' | b'#')) {
        return false;
    }
    // The path runs to the first `?` or `#`, the query from a `?` to the first `#`, and a
    // fragment holds no `#`: each part is one run of its class, a tight loop a part.
    let run = |from: usize, class: u8| {
        tail[from..].iter().position(|&b| CLASSES[usize::from(b)] & class == 0).map(|i| from + i)
    };
    let mut end = run(0, PATH);
    if let Some(at) = end.filter(|&at| tail[at] == b'?') {
        end = run(at + 1, QUERY);
    }
    match end {
        None => true,
        Some(at) if tail[at] == b'#' => run(at + 1, QUERY).is_none(),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What fluent-uri says of `value`, with the scheme check `detect` puts before it.
    fn parsed(value: &str) -> bool {
        fluent_uri::Uri::parse(value).is_ok()
    }

    #[test]
    fn the_plain_shape_is_only_ever_what_fluent_uri_accepts() {
        let bases = [
            "https://api.github.com/repos/octo/cat/pulls/12",
            "http://example.com",
            "http://example.com:8080/a?b=c&d=e#top",
            "ftp://1.2.3.4:21/pub/",
            "https://host/?q?x=/y#frag/?",
            "s3://bucket/key",
            "https://:80",
            "https://",
            "https://a.b/~user/(x)*+,;=:@!$&'",
        ];
        // Characters that end the plain shape or make it invalid, in every position.
        let palette = [
            "", "%", "%2F", "%zz", "@", "[", "]", "[::1]", ":", "::", "#", "##", "?", " ", "é",
            "\\", "|", "{", "\"", "^", "`", "<", ">", "/", "//", "!", "a", "0", "\u{7f}", "\t",
        ];
        let mut rng = fastrand::Rng::with_seed(0x0a11_5ca1);
        let mut checked = 0;
        for base in bases {
            let sep = leading_scheme_separator(base.as_bytes()).expect("a separator");
            for at in sep + 3..=base.len() {
                for piece in palette {
                    if !base.is_char_boundary(at) {
                        continue;
                    }
                    let value = format!("{}{piece}{}", &base[..at], &base[at..]);
                    let tail = &value.as_bytes()[sep + 3..];
                    if is_plain_tail(tail) {
                        assert!(parsed(&value), "{value:?} taken as plain, refused by fluent-uri");
                    }
                    checked += 1;
                }
            }
        }
        // Random strings of the same characters after a scheme.
        let alphabet: Vec<char> = "aZ09-._~:/?#@!$&'()*+,;=%[] é\\".chars().collect();
        for _ in 0..20_000 {
            let len = rng.usize(0..24);
            let tail: String = (0..len).map(|_| alphabet[rng.usize(..alphabet.len())]).collect();
            let value = format!("https://{tail}");
            if is_plain_tail(tail.as_bytes()) {
                assert!(parsed(&value), "{value:?} taken as plain, refused by fluent-uri");
            }
            checked += 1;
        }
        assert!(checked > 20_000);
    }

    #[test]
    fn common_urls_are_plain() {
        for value in [
            "https://api.github.com/repos/octo/cat/pulls/12",
            "https://github.com/octo/cat/commit/0b6e4c3a?diff=split#L12",
            "http://localhost:8080/",
        ] {
            let sep = leading_scheme_separator(value.as_bytes()).expect("a separator");
            assert!(is_plain_tail(&value.as_bytes()[sep + 3..]), "{value}");
        }
    }

    #[test]
    fn the_separator_ends_a_scheme_at_the_start() {
        assert_eq!(leading_scheme_separator(b"git+ssh://host"), Some(7));
        assert_eq!(leading_scheme_separator(b"a:b://c://"), None);
        assert_eq!(leading_scheme_separator(b"a:/b:/"), None);
        assert_eq!(leading_scheme_separator(b"://"), None);
        assert_eq!(leading_scheme_separator(b"1a://x"), None);
        assert_eq!(leading_scheme_separator(b"see https://x"), None);
        assert_eq!(leading_scheme_separator(b"x:"), None);
        assert_eq!(leading_scheme_separator(b"http"), None);
    }
}
