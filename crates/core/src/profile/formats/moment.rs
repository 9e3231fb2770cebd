//! Where a date or time value falls in time, for a property's earliest and latest. Their texts
//! compare wrongly across offsets (`2023-12-31T16:07:00-08:00` is after `2024-01-01T00:00:00Z`),
//! fractions (`…10:20:30Z` sorts after the later `…10:20:30.5Z`) and separators (`T`, `t`, a
//! space), so each value is read as a moment and compared by it, ties by text.

use super::{StringFormat, two_digits};

/// Seconds since 1970-01-01T00:00:00 and nanoseconds past them: a date-time's instant (its offset
/// applied), a local date-time or a date as written. A leap second's nanoseconds pass 10^9, as
/// chrono reads it.
pub type Moment = (i64, u32);

/// The moment `value` names, if it is of `format` (a temporal one); `None` otherwise.
pub fn moment(format: StringFormat, value: &str) -> Option<Moment> {
    let bytes = value.as_bytes();
    match format {
        StringFormat::Date if bytes.len() == 10 => Some((days(bytes)? * 86_400, 0)),
        StringFormat::LocalDateTime => {
            let (seconds, nanos, rest) = local(bytes)?;
            rest.is_empty().then_some((seconds, nanos))
        }
        StringFormat::DateTime => plain_instant(bytes).or_else(|| {
            let instant = chrono::DateTime::parse_from_rfc3339(value).ok()?;
            Some((instant.timestamp(), instant.timestamp_subsec_nanos()))
        }),
        _ => None,
    }
}

/// The days from 1970-01-01 to the `YYYY-MM-DD` at the start of `bytes` (checked to be a real
/// day by the format's detection; only its digits are read here).
fn days(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.get(..4)?;
    if !digits.iter().all(u8::is_ascii_digit) || bytes.get(4) != Some(&b'-') {
        return None;
    }
    let year = digits.iter().fold(0i64, |y, d| y * 10 + i64::from(d - b'0'));
    let (month, day) = (i64::from(two_digits(bytes, 5)?), i64::from(two_digits(bytes, 8)?));
    // Howard Hinnant's `days_from_civil`: years start in March, so a leap day ends its year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some(era * 146_097 + day_of_era - 719_468)
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.fraction]` at the start of `bytes`: its seconds since 1970 as
/// written, its nanoseconds, and what follows. Seconds past 59 are left to chrono.
fn local(bytes: &[u8]) -> Option<(i64, u32, &[u8])> {
    if bytes.len() < 19
        || !matches!(bytes[10], b'T' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
        || bytes[7] != b'-'
    {
        return None;
    }
    let (hour, minute, second) =
        (two_digits(bytes, 11)?, two_digits(bytes, 14)?, two_digits(bytes, 17)?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let seconds = days(bytes)? * 86_400 + i64::from(hour * 3_600 + minute * 60 + second);
    let mut rest = &bytes[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if !(1..=9).contains(&digits) {
            return None;
        }
        nanos = fraction[..digits].iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'))
            * 10u32.pow(9 - digits as u32);
        rest = &fraction[digits..];
    }
    Some((seconds, nanos, rest))
}

/// The instant of a date-time in the common shape (`T`, `Z` or `±HH:MM`, every field in range;
/// the day itself is not checked); `None` sends the others to chrono.
pub(super) fn plain_instant(bytes: &[u8]) -> Option<Moment> {
    if bytes.get(10) != Some(&b'T') {
        return None;
    }
    let (seconds, nanos, zone) = local(bytes)?;
    let offset = match zone {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (two_digits(zone, 1)?, two_digits(zone, 4)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = i64::from(hours * 3_600 + minutes * 60);
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    Some((seconds - offset, nanos))
}

/// How values compare: by moment, then by the digits past its nanoseconds, then by text.
fn order_key(at: Moment, text: &str) -> (Moment, &str, &str) {
    (at, beyond_nanoseconds(text), text)
}

/// The digits of a time's fraction past its ninth (RFC 3339 sets no limit; a moment keeps
/// nanoseconds): compared as text, which orders digit runs as the fractions they end.
fn beyond_nanoseconds(value: &str) -> &str {
    let Some(fraction) = value.get(19..).and_then(|rest| rest.strip_prefix('.')) else {
        return "";
    };
    let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
    fraction.get(9.min(digits)..digits).unwrap_or_default()
}

/// The earliest and the latest of values of one temporal format, kept as they come (a spilled
/// profile's fold of its distinct values, a sketch's stream, a database column's values).
/// Once a value is met that is not of the format, there is none: a format that not every value
/// has is never claimed, so its range is never shown.
#[derive(Debug, Clone, Default)]
pub struct Extremes {
    range: Option<((Moment, String), (Moment, String))>,
    /// A value was not of its format.
    broken: bool,
}

impl Extremes {
    /// Takes in `value`, of `format`.
    pub fn add(&mut self, format: StringFormat, value: &str) {
        self.add_at(format, value, None);
    }

    /// [`Self::add`] with `value`'s moment when it is known already (see
    /// [`super::detect_with_moment`]).
    pub fn add_at(&mut self, format: StringFormat, value: &str, at: Option<Moment>) {
        if self.broken {
            return;
        }
        match at.or_else(|| moment(format, value)) {
            Some(at) => self.widen(at, value, at, value),
            None => self.broken = true,
        }
    }

    /// Takes in a value of no temporal format: there is no range.
    pub fn add_other(&mut self) {
        self.broken = true;
    }

    fn widen(&mut self, low_at: Moment, low: &str, high_at: Moment, high: &str) {
        match &mut self.range {
            Some(((min_at, min), (max_at, max))) => {
                if order_key(low_at, low) < order_key(*min_at, min) {
                    *min_at = low_at;
                    low.clone_into(min);
                }
                if order_key(high_at, high) > order_key(*max_at, max) {
                    *max_at = high_at;
                    high.clone_into(max);
                }
            }
            None => self.range = Some(((low_at, low.to_string()), (high_at, high.to_string()))),
        }
    }

    /// Takes in what `other` kept.
    pub fn merge(&mut self, other: &Extremes) {
        self.broken |= other.broken;
        if let (false, Some(((low_at, low), (high_at, high)))) = (self.broken, &other.range) {
            self.widen(*low_at, low, *high_at, high);
        }
    }

    /// The earliest and the latest value, unless a value was not of its format.
    pub fn get(&self) -> Option<(&str, &str)> {
        match (&self.range, self.broken) {
            (Some(((_, min), (_, max))), false) => Some((min.as_str(), max.as_str())),
            _ => None,
        }
    }

    /// [`Self::get`], owned.
    pub fn into_range(self) -> (Option<String>, Option<String>) {
        self.get().map(|(min, max)| (min.to_string(), max.to_string())).unzip()
    }
}

/// The earliest and the latest of `values`, all of `format`.
pub fn temporal_range<'a>(
    format: StringFormat,
    values: impl IntoIterator<Item = &'a str>,
) -> (Option<String>, Option<String>) {
    let mut extremes = Extremes::default();
    for value in values {
        extremes.add(format, value);
    }
    extremes.into_range()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrono_moment(value: &str) -> Moment {
        let instant = chrono::DateTime::parse_from_rfc3339(value).expect("rfc 3339");
        (instant.timestamp(), instant.timestamp_subsec_nanos())
    }

    #[test]
    fn plain_instants_agree_with_chrono() {
        let mut rng = fastrand::Rng::with_seed(62);
        for _ in 0..20_000 {
            let year = rng.i32(1..=9999);
            let month = rng.u32(1..=12);
            let day = rng.u32(1..=28);
            let fraction = match rng.u8(0..3) {
                0 => String::new(),
                1 => format!(".{}", rng.u32(0..10)),
                _ => format!(".{:09}", rng.u32(0..1_000_000_000)),
            };
            let zone = match rng.u8(0..2) {
                0 => "Z".to_string(),
                _ => format!(
                    "{}{:02}:{:02}",
                    if rng.bool() { '+' } else { '-' },
                    rng.u32(0..24),
                    rng.u32(0..60)
                ),
            };
            let text = format!(
                "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{fraction}{zone}",
                rng.u32(0..24),
                rng.u32(0..60),
                rng.u32(0..60)
            );
            assert_eq!(moment(StringFormat::DateTime, &text), Some(chrono_moment(&text)), "{text}");
        }
        // Leap days, the epoch, and what only chrono reads: a leap second, `t` and `z`.
        for text in [
            "2024-02-29T12:00:00Z",
            "2000-02-29T00:00:00+14:00",
            "1970-01-01T00:00:00Z",
            "1998-12-31T23:59:60Z",
            "2024-01-01t00:00:00z",
        ] {
            assert_eq!(moment(StringFormat::DateTime, text), Some(chrono_moment(text)), "{text}");
        }
    }

    #[test]
    fn dates_and_local_times_are_read_as_written() {
        assert_eq!(moment(StringFormat::Date, "1970-01-01"), Some((0, 0)));
        assert_eq!(moment(StringFormat::Date, "2000-03-01"), Some((951_868_800, 0)));
        assert_eq!(moment(StringFormat::Date, "0001-01-01"), Some((-62_135_596_800, 0)));
        let spaced = moment(StringFormat::LocalDateTime, "2024-03-05 10:22:00.5");
        assert_eq!(spaced, moment(StringFormat::LocalDateTime, "2024-03-05T10:22:00.500"));
        assert_eq!(spaced, Some((1_709_634_120, 500_000_000)));
        assert_eq!(moment(StringFormat::LocalDateTime, "2024-03-05 10:22:00Z"), None);
    }

    /// The earliest and latest by instant, not by text: offsets, fractions and separators.
    #[test]
    fn extremes_are_the_earliest_and_latest_instants() {
        let values = [
            "2023-12-31T16:07:00-08:00",
            "2024-01-01T00:00:00+00:00",
            "2024-01-06T05:12:00+09:00",
            "2024-01-05T20:33:00Z",
            "2024-01-05T20:33:00.5Z",
        ];
        assert_eq!(
            temporal_range(StringFormat::DateTime, values),
            (Some(values[1].to_string()), Some(values[4].to_string()))
        );
        let local = ["2024-03-05 10:22:00", "2024-03-05T09:00:00", "2024-03-05 10:22:00.25"];
        assert_eq!(
            temporal_range(StringFormat::LocalDateTime, local),
            (Some(local[1].to_string()), Some(local[2].to_string()))
        );
        // Merged in either order, the same; a value of another shape leaves no range.
        let (mut a, mut b) = (Extremes::default(), Extremes::default());
        values[..2].iter().for_each(|v| a.add(StringFormat::DateTime, v));
        values[2..].iter().for_each(|v| b.add(StringFormat::DateTime, v));
        let mut ab = a.clone();
        ab.merge(&b);
        b.merge(&a);
        assert_eq!(ab.get(), b.get());
        assert_eq!(ab.get(), Some((values[1], values[4])));
        // Fractions past nanoseconds: an independent tester's pair, and a tenth of one.
        let fine = ["2020-01-01T00:00:00.1234567891Z", "2020-01-01T00:00:00.123456789Z"];
        assert_eq!(
            temporal_range(StringFormat::DateTime, fine),
            (Some(fine[1].to_string()), Some(fine[0].to_string()))
        );
        let tenth = ["2020-01-01T00:00:00.0000000001Z", "2020-01-01T00:00:00Z"];
        assert_eq!(
            temporal_range(StringFormat::DateTime, tenth),
            (Some(tenth[1].to_string()), Some(tenth[0].to_string()))
        );
        ab.add(StringFormat::DateTime, "yesterday");
        assert_eq!(ab.get(), None);
    }
}
