//! Recognising well-known string formats (the ones JSON Schema names) in profiled values.

use serde::Serialize;

/// A string format, named as JSON Schema's `format` keyword names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum StringFormat {
    /// RFC 3339 date and time, e.g. `2024-03-05T10:22:00Z`.
    #[serde(rename = "date-time")]
    DateTime,
    /// RFC 3339 full date, e.g. `2024-03-05`.
    #[serde(rename = "date")]
    Date,
    /// A hyphenated UUID.
    #[serde(rename = "uuid")]
    Uuid,
    /// An e-mail address.
    #[serde(rename = "email")]
    Email,
    /// An absolute URI with an authority, e.g. `https://example.com/x`.
    #[serde(rename = "uri")]
    Uri,
    /// A dotted-quad IPv4 address.
    #[serde(rename = "ipv4")]
    Ipv4,
}

impl StringFormat {
    /// The JSON Schema name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Self::DateTime => "date-time",
            Self::Date => "date",
            Self::Uuid => "uuid",
            Self::Email => "email",
            Self::Uri => "uri",
            Self::Ipv4 => "ipv4",
        }
    }
}

/// The format of `value`, if it has one. Cheap shape checks run first so that ordinary strings
/// cost a few comparisons; the real parsers (chrono, uuid, email_address, fluent-uri) decide.
pub fn detect(value: &str) -> Option<StringFormat> {
    let bytes = value.as_bytes();
    let starts_like_date = bytes.len() >= 10 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-' && bytes[7] == b'-';
    if starts_like_date {
        if bytes.len() == 10 {
            return chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").ok().map(|_| StringFormat::Date);
        }
        return chrono::DateTime::parse_from_rfc3339(value).ok().map(|_| StringFormat::DateTime);
    }
    if bytes.len() == 36 && bytes[8] == b'-' && bytes[13] == b'-' {
        return uuid::Uuid::try_parse(value).ok().map(|_| StringFormat::Uuid);
    }
    if bytes.len() >= 7 && bytes.len() <= 15 && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        return value.parse::<std::net::Ipv4Addr>().ok().map(|_| StringFormat::Ipv4);
    }
    if value.contains("://") {
        let scheme_ok = value.split("://").next().is_some_and(|s| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        return (scheme_ok && fluent_uri::Uri::parse(value).is_ok()).then_some(StringFormat::Uri);
    }
    if value.contains('@') && !value.contains(char::is_whitespace) {
        return email_address::EmailAddress::is_valid(value).then_some(StringFormat::Email);
    }
    None
}

/// Distinct values checked for formats before deciding whether to check them all.
pub const FORMAT_SAMPLE: usize = 10_000;

/// Values per recognised format, most common first. Up to [`FORMAT_SAMPLE`] distinct values
/// every one is checked. Past that, a sample of that many (the table's own, hash-scattered order)
/// is checked first; only if every sampled value has the same format are all values checked, so
/// a `format` claimed for the whole property is always exact, while the partial counts of a
/// property of a million ids cost ten thousand checks rather than a million.
pub fn count_formats(entries: &[(&str, u64)]) -> Vec<(StringFormat, u64)> {
    let tally = |slice: &[(&str, u64)]| {
        let mut counts: Vec<(StringFormat, u64)> = Vec::new();
        let mut unformatted = 0u64;
        for (value, count) in slice {
            match detect(value) {
                Some(format) => match counts.iter_mut().find(|(f, _)| *f == format) {
                    Some((_, n)) => *n += count,
                    None => counts.push((format, *count)),
                },
                None => unformatted += count,
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        (counts, unformatted)
    };
    if entries.len() <= FORMAT_SAMPLE {
        return tally(entries).0;
    }
    let (sampled, unformatted) = tally(&entries[..FORMAT_SAMPLE]);
    if unformatted > 0 || sampled.len() != 1 {
        return sampled;
    }
    // Every sampled value has one format: check them all, on every core (parsing a million
    // timestamps is the slowest step of finishing a profile).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parts: Vec<Vec<(StringFormat, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = entries.chunks(entries.len().div_ceil(threads)).map(|part| scope.spawn(move || tally(part).0)).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut counts: Vec<(StringFormat, u64)> = Vec::new();
    for (format, n) in parts.into_iter().flatten() {
        match counts.iter_mut().find(|(f, _)| *f == format) {
            Some((_, total)) => *total += n,
            None => counts.push((format, n)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_format_and_rejects_look_alikes() {
        assert_eq!(detect("2024-03-05T10:22:00Z"), Some(StringFormat::DateTime));
        assert_eq!(detect("2024-03-05T10:22:00.123+02:00"), Some(StringFormat::DateTime));
        assert_eq!(detect("2024-03-05"), Some(StringFormat::Date));
        assert_eq!(detect("2024-13-05"), None);
        assert_eq!(detect("2024-03-05 10:22"), None);
        assert_eq!(detect("0b6e4c3a-8f7a-4c1e-9d55-2d8c1f0a9b7e"), Some(StringFormat::Uuid));
        assert_eq!(detect("0b6e4c3a-8f7a-4c1e-9d55-2d8c1f0a9bZZ"), None);
        assert_eq!(detect("ops@example.com"), Some(StringFormat::Email));
        assert_eq!(detect("not an@email"), None);
        assert_eq!(detect("https://wiki.example.com/gw-eu-1"), Some(StringFormat::Uri));
        assert_eq!(detect("10.0.3.17"), Some(StringFormat::Ipv4));
        assert_eq!(detect("10.0.3.300"), None);
        assert_eq!(detect("web-01"), None);
        assert_eq!(detect("12:30"), None);
    }
}
