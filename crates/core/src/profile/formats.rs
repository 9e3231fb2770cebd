//! Recognising well-known string formats (the ones JSON Schema names) in profiled values.

use serde::{Deserialize, Serialize};

mod email;
mod moment;
mod uri;

pub use email::is_email;
pub use moment::{Extremes, Moment, moment, temporal_range};

/// A string format, named as JSON Schema's `format` keyword names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StringFormat {
    /// RFC 3339 date and time, e.g. `2024-03-05T10:22:00Z`.
    #[serde(rename = "date-time")]
    DateTime,
    /// RFC 3339 full date, e.g. `2024-03-05`.
    #[serde(rename = "date")]
    Date,
    /// A date and time without a zone, as SQL databases write `timestamp`/`DATETIME` values:
    /// `2024-03-05 10:22:00` (or with `T`), with an optional fraction. Not a JSON Schema format:
    /// published schemas carry it as an observation.
    #[serde(rename = "local-date-time")]
    LocalDateTime,
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
            Self::LocalDateTime => "local-date-time",
            Self::Uuid => "uuid",
            Self::Email => "email",
            Self::Uri => "uri",
            Self::Ipv4 => "ipv4",
        }
    }
}

impl StringFormat {
    /// Whether the values of this format name times (so a profile shows their earliest and
    /// latest, compared as [`moment`]s).
    pub fn is_temporal(self) -> bool {
        matches!(self, Self::Date | Self::DateTime | Self::LocalDateTime)
    }

    /// Whether JSON Schema names this format (`format`); the others are observations only.
    pub fn is_json_schema(self) -> bool {
        self != Self::LocalDateTime
    }
}

/// The format of `value`, if it has one. Cheap shape checks run first so that ordinary strings
/// cost a few comparisons; the real parsers (chrono, uuid, fluent-uri; RFC 5321 for addresses) decide.
pub fn detect(value: &str) -> Option<StringFormat> {
    detect_with_moment(value).0
}

/// [`detect`], and for a date-time of the common shape its [`Moment`], read in the same pass
/// (a property's earliest and latest need the moment of every distinct timestamp: reading each
/// twice was a tenth of finishing a profile with ten million of them). `None` for the moment
/// leaves it to [`moment`].
pub fn detect_with_moment(value: &str) -> (Option<StringFormat>, Option<Moment>) {
    let bytes = value.as_bytes();
    let starts_like_date = bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[7] == b'-';
    if starts_like_date {
        if bytes.len() == 10 {
            return (is_date(bytes).then_some(StringFormat::Date), None);
        }
        // A million timestamps are checked when a property looks like one: the common shapes are
        // settled by hand, anything unusual (leap seconds, long fractions, odd separators) by chrono.
        if let Some(at) = plain_date_time(bytes) {
            return (Some(StringFormat::DateTime), Some(at));
        }
        if chrono_date_time(value) {
            return (Some(StringFormat::DateTime), None);
        }
        return (is_local_date_time(value).then_some(StringFormat::LocalDateTime), None);
    }
    (detect_undated(value), None)
}

/// [`detect`] for a value that does not start as a date does.
fn detect_undated(value: &str) -> Option<StringFormat> {
    let bytes = value.as_bytes();
    if bytes.len() == 36 && bytes[8] == b'-' && bytes[13] == b'-' {
        return uuid::Uuid::try_parse(value).ok().map(|_| StringFormat::Uuid);
    }
    if bytes.len() >= 7
        && bytes.len() <= 15
        && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    {
        return value.parse::<std::net::Ipv4Addr>().ok().map(|_| StringFormat::Ipv4);
    }
    // Every distinct value of a nested file's long texts comes here: the scheme a URI starts
    // with is read, not the whole text.
    if let Some(separator) = uri::leading_scheme_separator(bytes) {
        // The plain shape settles nearly every URL; fluent-uri decides the rest.
        let valid =
            uri::is_plain_tail(&bytes[separator + 3..]) || fluent_uri::Uri::parse(value).is_ok();
        return valid.then_some(StringFormat::Uri);
    }
    if memchr::memchr(b'@', bytes).is_some() {
        return email::is_email(value).then_some(StringFormat::Email);
    }
    None
}

/// An RFC 3339 date-time by chrono, a leap second only where one can be: the last second of
/// a UTC day (`23:59:60Z`, or the same instant in another offset), as JSON Schema's test suite
/// has it; chrono reads `:60` at any minute.
///
/// Its date and time are separated by `T` or `t`, as RFC 3339's grammar and JSON Schema's
/// validators have it: chrono takes a space too.
fn chrono_date_time(value: &str) -> bool {
    use chrono::Timelike;
    if !matches!(value.as_bytes().get(10), Some(b'T' | b't')) {
        return false;
    }
    chrono::DateTime::parse_from_rfc3339(value).is_ok_and(|at| {
        let utc = at.naive_utc();
        at.nanosecond() < 1_000_000_000 || (utc.hour() == 23 && utc.minute() == 59)
    })
}

/// The format of a counted string's key: none for the shortened key of an over-long string,
/// whose format was read from the whole string as it came.
pub fn detect_key(key: &str) -> Option<StringFormat> {
    match crate::profile::long_key_parts(key) {
        Some(_) => None,
        None => detect(key),
    }
}

/// The two-digit number at `at`, if both bytes are digits.
fn two_digits(bytes: &[u8], at: usize) -> Option<u32> {
    match bytes.get(at..at + 2)? {
        [a @ b'0'..=b'9', b @ b'0'..=b'9'] => Some(u32::from(a - b'0') * 10 + u32::from(b - b'0')),
        _ => None,
    }
}

/// `YYYY-MM-DD` naming a real day (the caller has checked the year digits and the dashes).
fn is_date(bytes: &[u8]) -> bool {
    let year = bytes[..4].iter().fold(0u32, |y, d| y * 10 + u32::from(d - b'0'));
    let (Some(month), Some(day)) = (two_digits(bytes, 5), two_digits(bytes, 8)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with every field in range, the shape nearly all
/// timestamps take: its instant. `None` means "not this shape", not "invalid": chrono then
/// decides.
fn plain_date_time(bytes: &[u8]) -> Option<Moment> {
    if bytes.len() < 20 || !is_date(&bytes[..10]) {
        return None;
    }
    moment::plain_instant(bytes)
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` (or `T` for the space) naming a real day and time, with no
/// zone: SQL's `timestamp without time zone` and MySQL's `DATETIME` as their clients write them.
pub fn is_local_date_time(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 19
        || !bytes[..4].iter().all(u8::is_ascii_digit)
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !is_date(&bytes[..10])
        || !matches!(bytes[10], b' ' | b'T')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return false;
    }
    let in_range = |at, max| two_digits(bytes, at).is_some_and(|v| v <= max);
    if !(in_range(11, 23) && in_range(14, 59) && in_range(17, 59)) {
        return false;
    }
    match &bytes[19..] {
        [] => true,
        [b'.', fraction @ ..] => {
            (1..=9).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// Distinct values past which formats are counted on every core.
const PARALLEL_FROM: usize = 10_000;

/// Values per recognised format, most common first, over every entry (the keys of over-long
/// strings are left to their own count, [`detect_key`]): exact, so a `format`
/// claimed for a whole property and every count beside it hold for all its values. A million
/// distinct ids cost a million checks, most settled by a length or a first byte, shared among
/// the cores (parsing a million timestamps is the slowest step of finishing a profile).
pub fn count_formats(entries: &[(&str, u64)]) -> Vec<(StringFormat, u64)> {
    count_formats_and_range(entries).0
}

/// [`count_formats`], and the earliest and latest of the entries while every one is a date or
/// time (read as their formats are checked; meaningful only where one temporal format is
/// every value's). The shortened keys of over-long strings are left out of the range: their
/// moments are read from the whole strings as they come.
pub fn count_formats_and_range(entries: &[(&str, u64)]) -> (Vec<(StringFormat, u64)>, Extremes) {
    let tally = |slice: &[(&str, u64)]| {
        let mut counts: Vec<(StringFormat, u64)> = Vec::new();
        let mut range = Extremes::default();
        for (value, count) in slice {
            if crate::profile::long_key_parts(value).is_none() {
                add_format_and_moment(&mut counts, &mut range, value, *count);
            }
        }
        (counts, range)
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (counts, range) = if entries.len() < PARALLEL_FROM || threads == 1 {
        tally(entries)
    } else {
        let parts: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = entries
                .chunks(entries.len().div_ceil(threads))
                .map(|part| scope.spawn(move || tally(part)))
                .collect();
            handles.into_iter().map(|h| crate::sync::joined(h.join())).collect()
        });
        let (mut counts, mut range) = (Vec::new(), Extremes::default());
        for (part_counts, part_range) in parts {
            add_counts(&mut counts, part_counts);
            range.merge(&part_range);
        }
        (counts, range)
    };
    (with_counts(counts, []), range)
}

/// Takes in `value`, seen `n` times: its format's count into `counts` and, for a date or time,
/// its moment into `range` (any other value leaves `range` none to show). Given whole strings
/// and the keys of short ones: an over-long string's key has neither (see [`detect_key`]).
pub(crate) fn add_format_and_moment(
    counts: &mut Vec<(StringFormat, u64)>,
    range: &mut Extremes,
    value: &str,
    n: u64,
) {
    let (format, at) = detect_with_moment(value);
    match format {
        Some(format) if format.is_temporal() => range.add_at(format, value, at),
        _ => range.add_other(),
    }
    if let Some(format) = format {
        add_count(counts, format, n);
    }
}

/// `counts` with `more` added, most common first.
pub fn with_counts(
    mut counts: Vec<(StringFormat, u64)>,
    more: impl IntoIterator<Item = (StringFormat, u64)>,
) -> Vec<(StringFormat, u64)> {
    add_counts(&mut counts, more);
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

/// Adds every count of `more` to `counts`.
pub(crate) fn add_counts(
    counts: &mut Vec<(StringFormat, u64)>,
    more: impl IntoIterator<Item = (StringFormat, u64)>,
) {
    for (format, n) in more {
        add_count(counts, format, n);
    }
}

/// Adds `n` values of `format` to `counts`.
pub(crate) fn add_count(counts: &mut Vec<(StringFormat, u64)>, format: StringFormat, n: u64) {
    match counts.iter_mut().find(|(f, _)| *f == format) {
        Some((_, total)) => *total += n,
        None => counts.push((format, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading only the scheme at the start gives what searching the whole text for `://`
    /// gave: texts with a `://` anywhere, addresses among them.
    #[test]
    fn a_leading_scheme_decides_as_the_search_for_the_first_separator_did() {
        let pieces = [
            "http",
            "https",
            "git+ssh",
            "a",
            "1",
            "://",
            ":",
            "//",
            "/",
            "@",
            "a@b.co",
            " ",
            "x",
            "example.com",
            "\"q\"",
            "é",
            "-",
            ".",
            "?q=1",
            "#f",
            "%2F",
            "[::1]",
            "mailto:",
            "ab",
        ];
        let mut rng = fastrand::Rng::with_seed(0x5eed_0042);
        let mut seen = std::collections::HashMap::new();
        for _ in 0..200_000 {
            let value: String =
                (0..rng.usize(1..7)).map(|_| pieces[rng.usize(..pieces.len())]).collect();
            let expected = detect_by_parsing(&value);
            let got =
                detect(&value).filter(|f| matches!(f, StringFormat::Uri | StringFormat::Email));
            assert_eq!(got, expected, "{value:?}");
            *seen.entry(got).or_insert(0) += 1;
        }
        // Each outcome met often enough to count.
        for outcome in [Some(StringFormat::Uri), Some(StringFormat::Email), None] {
            assert!(seen.get(&outcome).copied().unwrap_or(0) > 500, "{outcome:?}: {seen:?}");
        }
    }

    /// Every distinct value is checked, however many: a mixed property's counts are its own,
    /// not a sample's, and a format that only later values have is counted.
    #[test]
    fn formats_are_counted_over_every_distinct_value() {
        let owned: Vec<(String, u64)> = (0..30_000u64)
            .map(|i| match i % 2 {
                0 => (format!("https://example.com/p/{i}"), 1 + i % 3),
                _ => (format!("plain value {i}"), 1),
            })
            .chain((0..5).map(|i| (format!("ops{i}@example.com"), 2)))
            .collect();
        let entries: Vec<(&str, u64)> = owned.iter().map(|(v, n)| (v.as_str(), *n)).collect();
        let uris: u64 = (0..30_000u64).step_by(2).map(|i| 1 + i % 3).sum();
        assert_eq!(
            count_formats(&entries),
            vec![(StringFormat::Uri, uris), (StringFormat::Email, 10)]
        );
        // All timestamps but the very last value: no format covers every value.
        let mut stamps: Vec<String> = (0..40_000u64)
            .map(|i| format!("2024-01-01T{:02}:{:02}:{:02}Z", i / 3600 % 24, i / 60 % 60, i % 60))
            .collect();
        stamps.push("not a time".into());
        let entries: Vec<(&str, u64)> = stamps.iter().map(|v| (v.as_str(), 1)).collect();
        assert_eq!(count_formats(&entries), vec![(StringFormat::DateTime, 40_000)]);
    }

    #[test]
    fn recognises_each_format_and_rejects_look_alikes() {
        assert_eq!(detect("2024-03-05T10:22:00Z"), Some(StringFormat::DateTime));
        assert_eq!(detect("2024-03-05T10:22:00.123+02:00"), Some(StringFormat::DateTime));
        assert_eq!(detect("2024-03-05"), Some(StringFormat::Date));
        // A leap second only at the end of a UTC day.
        assert_eq!(detect("1998-12-31T23:59:60Z"), Some(StringFormat::DateTime));
        assert_eq!(detect("1998-12-31T15:59:60.123-08:00"), Some(StringFormat::DateTime));
        assert_eq!(detect("1998-12-31T22:59:60Z"), None);
        assert_eq!(detect("1998-12-31T23:58:60Z"), None);
        // RFC 3339 separates date and time with `T`; a space makes a local one at most.
        assert_eq!(detect("2024-01-01t00:00:00z"), Some(StringFormat::DateTime));
        assert_eq!(detect("2020-01-01 00:00:00Z"), None);
        assert_eq!(detect("2021-01-01 00:00:00+01:00"), None);
        assert_eq!(detect("2024-13-05"), None);
        assert_eq!(detect("2024-03-05 10:22"), None);
        // SQL's zone-less timestamps, as psql, mysql and SQLite files write them.
        assert_eq!(detect("2024-03-05 10:22:00"), Some(StringFormat::LocalDateTime));
        assert_eq!(detect("2024-03-05T10:22:00.5"), Some(StringFormat::LocalDateTime));
        assert_eq!(detect("2024-03-05 10:22:00.123456"), Some(StringFormat::LocalDateTime));
        assert_eq!(detect("0000-00-00 00:00:00"), None, "MySQL's zero date names no day");
        assert_eq!(detect("2024-02-30 10:22:00"), None);
        assert_eq!(detect("2024-03-05 24:00:00"), None);
        assert_eq!(detect("2024-03-05 10:22:00."), None);
        assert_eq!(detect("2024-03-05 10:22:00 +02"), None);
        assert!(
            StringFormat::LocalDateTime.is_temporal()
                && !StringFormat::LocalDateTime.is_json_schema()
        );
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

    /// `detect`'s URI and e-mail branches by plain means: a substring search for the first
    /// `://`, a scheme before it, and fluent-uri's parse of every candidate (no plain shape).
    fn detect_by_parsing(value: &str) -> Option<StringFormat> {
        let scheme_ok = value.split_once("://").is_some_and(|(s, _)| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        if scheme_ok {
            return fluent_uri::Uri::parse(value).is_ok().then_some(StringFormat::Uri);
        }
        if value.contains('@') {
            return email::is_email(value).then_some(StringFormat::Email);
        }
        None
    }

    #[test]
    fn uris_are_decided_as_fluent_uri_decides_them() {
        let values = [
            "https://api.github.com/repos/a/b",
            "https://api.github.com/repos/a/b?x=1#y",
            "https://a b/",
            "https://host/%2F",
            "https://host/%zz",
            "https://user@host/",
            "https://[::1]:80/",
            "https://h:8:0/",
            "https://h:x/",
            "http://h/a#b#c",
            "x:y://host/",
            "1http://host/",
            "ht tp://host/",
            "://host",
            "mailto:someone@example.com",
            "a@b://c",
            "someone@example.com",
            "http://é.com/",
            "http://host/é",
            "http://host/a\\b",
            "http://host/{x}",
            "http://host:/",
            "http://",
            "a:b:c://d",
        ];
        let mut rng = fastrand::Rng::with_seed(0x0f0f_1234);
        let alphabet: Vec<char> = "ahZ09-._~:/?#@!$&'()*+,;=%[] é".chars().collect();
        let random = (0..20_000).map(|_| {
            let len = rng.usize(0..20);
            let tail: String = (0..len).map(|_| alphabet[rng.usize(..alphabet.len())]).collect();
            format!("{}{tail}", ["https://", "h:", "", "a://b:"][rng.usize(..4)])
        });
        for value in values.iter().map(|v| v.to_string()).chain(random) {
            // Dates, UUIDs and IPv4 addresses are decided before URIs.
            let digits =
                value.as_bytes().get(..4).is_some_and(|b| b.iter().all(u8::is_ascii_digit));
            if digits || value.len() == 36 || value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            {
                continue;
            }
            assert_eq!(detect(&value), detect_by_parsing(&value), "{value:?}");
        }
    }

    #[test]
    fn hand_checked_dates_agree_with_chrono() {
        let days = [
            "2024-02-29",
            "2023-02-29",
            "1900-02-29",
            "2000-02-29",
            "2024-04-31",
            "2024-00-10",
            "2024-12-00",
            "2024-1a-01",
        ];
        for day in days {
            let chrono = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").is_ok();
            assert_eq!(detect(day) == Some(StringFormat::Date), chrono, "{day}");
        }
        let times = [
            "2024-01-01T00:00:03Z",
            "2024-01-01T23:59:59.123456789+05:30",
            "2024-01-01T24:00:00Z",
            "2024-01-01T10:60:00Z",
            "2024-01-01T10:00:00.Z",
            "2024-01-01T10:00:00+24:00",
            "2024-01-01T10:00:00+0530",
            "2024-01-01t10:00:00z",
            "2016-12-31T23:59:60Z",
            "2024-02-30T10:00:00Z",
            "2024-01-01T10:00:00.1234567891Z",
        ];
        for time in times {
            let chrono = chrono::DateTime::parse_from_rfc3339(time).is_ok();
            assert_eq!(detect(time) == Some(StringFormat::DateTime), chrono, "{time}");
        }
        // The one shape chrono takes that RFC 3339 does not: a space between date and time.
        assert!(chrono::DateTime::parse_from_rfc3339("2024-01-01 10:00:00Z").is_ok());
        assert_eq!(detect("2024-01-01 10:00:00Z"), None);
    }

    /// The moment read while detecting is the one `moment` reads on its own, and the range
    /// found while counting formats is `temporal_range`'s, for timestamps of every shape.
    #[test]
    fn moments_read_with_the_format_are_the_formats_own() {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut values = Vec::new();
        for _ in 0..60_000 {
            let mut value = format!(
                "{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}",
                rng.u32(1..10_000),
                rng.u32(0..14),
                rng.u32(0..33),
                ['T', 't', ' '][rng.usize(..3)],
                rng.u32(0..25),
                rng.u32(0..61),
                rng.u32(0..62)
            );
            if rng.bool() {
                value.push('.');
                value.extend((0..rng.usize(0..12)).map(|_| char::from(b'0' + rng.u8(0..10))));
            }
            match rng.u8(0..4) {
                0 => value.push('Z'),
                1 => value.push_str(&format!("+{:02}:{:02}", rng.u32(0..25), rng.u32(0..61))),
                2 => value.push_str(&format!("-{:02}:{:02}", rng.u32(0..24), rng.u32(0..60))),
                _ => {}
            }
            values.push(value);
        }
        for value in &values {
            let (format, at) = detect_with_moment(value);
            assert_eq!(format, detect(value), "{value}");
            if let Some(at) = at {
                assert_eq!(format, Some(StringFormat::DateTime), "{value}");
                assert_eq!(Some(at), moment(StringFormat::DateTime, value), "{value}");
            }
        }
        let dated: Vec<(&str, u64)> = values
            .iter()
            .filter(|v| detect(v) == Some(StringFormat::DateTime))
            .map(|v| (v.as_str(), 1))
            .collect();
        assert!(dated.len() > PARALLEL_FROM, "{}", dated.len());
        let (counts, range) = count_formats_and_range(&dated);
        assert_eq!(counts, vec![(StringFormat::DateTime, dated.len() as u64)]);
        let expected = temporal_range(StringFormat::DateTime, dated.iter().map(|e| e.0));
        assert_eq!(range.into_range(), expected);
        assert!(expected.0.is_some());
        // One value of no format leaves no range.
        let mut mixed = dated.clone();
        mixed.push(("soon", 1));
        assert_eq!(count_formats_and_range(&mixed).1.get(), None);
    }
}
