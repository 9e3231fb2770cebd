//! Numbers as every surface shows them: significant digits, never fixed decimals.
//!
//! Two kinds of figure are told apart. A value taken from the data (a minimum, a maximum, a top
//! value) is shown exactly, in its shortest round-trip form. A computed statistic (mean, standard
//! deviation, interpolated median, percentage) carries float noise in its last digits
//! (`0.6000000000000001`), so it is rounded to [`STAT_DIGITS`] significant digits — far more than
//! the 6 a reader needs (a mean of eleven-digit ids keeps its fraction), fewer than the 16–17
//! where the noise lives. Nothing is ever rounded to a
//! number of decimals, which would turn `1e-8` into `0`.

use serde_json::{Number, Value};

/// Significant digits kept in computed statistics.
pub const STAT_DIGITS: usize = 15;
/// Significant digits kept in percentages.
pub const PERCENT_DIGITS: usize = 6;
/// Most significant digits of a large integer written in exponent form (see [`integer_text`]).
pub const ROUND_DIGITS: usize = 6;
/// The fewest significant digits any computed figure is shown with (a bin edge chosen between
/// two values, a percentage): fewer would make neighbouring figures look equal.
pub const MIN_DIGITS: usize = 6;

/// `value` rounded to `digits` significant digits (through its decimal text, so the result is the
/// double nearest the rounded decimal and prints without noise). Negative zero becomes zero.
pub fn significant(value: f64, digits: usize) -> f64 {
    if !value.is_finite() || value == 0.0 {
        return value + 0.0;
    }
    let digits = digits.clamp(1, 17);
    match from_shortest(value, digits) {
        Some(rounded) => rounded,
        None => exactly_rounded(value, digits),
    }
}

/// [`significant`] by formatting the exact binary value with `digits` digits: correct always,
/// but slow when the formatter falls back to big-number arithmetic (most computed scores).
fn exactly_rounded(value: f64, digits: usize) -> f64 {
    format!("{value:.prec$e}", prec = digits - 1).parse::<f64>().map_or(value, |v| v + 0.0)
}

/// [`significant`] from `value`'s shortest round-trip digits, or `None` when they cannot decide.
///
/// With `k` shortest digits: `k <= digits` means the value is already the double nearest its
/// rounding. `k >= digits + 2` means no rounding midpoint (a decimal of `digits + 1` digits)
/// lies in the interval of decimals that read back as `value` — the shortest search would have
/// found it — so the exact value and its shortest digits round alike. `k == digits + 1` is left
/// to [`exactly_rounded`].
fn from_shortest(value: f64, digits: usize) -> Option<f64> {
    use std::io::Write as _;
    let mut text = [0u8; 40];
    let len = {
        let mut cursor = std::io::Cursor::new(&mut text[..]);
        write!(cursor, "{value:e}").ok()?;
        usize::try_from(cursor.position()).ok()?
    };
    let text = std::str::from_utf8(&text[..len]).ok()?;
    let (mantissa, exponent) = text.split_once('e')?;
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let mut exponent: i32 = exponent.parse().ok()?;
    let mut kept = [0u8; 17];
    let mut count = 0;
    let mut next = b'0';
    let mut shortest = 0;
    for &b in mantissa.as_bytes().iter().filter(|b| b.is_ascii_digit()) {
        if shortest < digits {
            kept[count] = b;
            count += 1;
        } else if shortest == digits {
            next = b;
        }
        shortest += 1;
    }
    if shortest <= digits {
        return Some(value + 0.0);
    }
    if shortest == digits + 1 {
        return None;
    }
    // Past the midpoint or beyond it: the shortest digits end in no zero, so a dropped `5` has
    // more digits after it.
    if next >= b'5' {
        let mut at = count;
        loop {
            if at == 0 {
                // All nines: 9.99… rounds to 10.
                kept[0] = b'1';
                for digit in &mut kept[1..count] {
                    *digit = b'0';
                }
                exponent += 1;
                break;
            }
            at -= 1;
            if kept[at] == b'9' {
                kept[at] = b'0';
            } else {
                kept[at] += 1;
                break;
            }
        }
    }
    let mut rounded = [0u8; 48];
    let len = {
        let mut cursor = std::io::Cursor::new(&mut rounded[..]);
        let digits = std::str::from_utf8(&kept[..count]).ok()?;
        let sign = if negative { "-" } else { "" };
        write!(cursor, "{sign}{}.{}e{exponent}", &digits[..1], &digits[1..]).ok()?;
        usize::try_from(cursor.position()).ok()?
    };
    std::str::from_utf8(&rounded[..len]).ok()?.parse::<f64>().ok().map(|v| v + 0.0)
}

/// A computed statistic, noise removed (see [`STAT_DIGITS`]).
pub fn stat(value: f64) -> f64 {
    significant(value, STAT_DIGITS)
}

/// A computed statistic as JSON (`null` when not finite).
pub fn stat_json(value: f64) -> Value {
    exact_json(stat(value))
}

/// A computed statistic that lies between `min` and `max` (a mean, a median) as JSON: rounded
/// as [`stat_json`] rounds, or with all its digits where rounding would carry it past an end
/// (the mean of values near 2^53 rounded below their minimum, a contradiction a reader sees).
pub fn stat_json_within(value: f64, min: f64, max: f64) -> Value {
    let rounded = stat(value);
    if (min..=max).contains(&rounded) || !(min..=max).contains(&value) {
        exact_json(rounded)
    } else {
        exact_json(value)
    }
}

/// A value from the data as JSON, exactly; negative zero as `0`, non-finite as `null`.
pub fn exact_json(value: f64) -> Value {
    Number::from_f64(value + 0.0).map_or(Value::Null, Value::Number)
}

/// Percentage of `part` in `whole` to [`PERCENT_DIGITS`] significant digits; 0 when `whole` is 0.
/// A share that is not all of `whole` is never shown as 100 (nor a non-zero one as 0).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    let exact = part as f64 * 100.0 / whole as f64;
    let shown = significant(exact, PERCENT_DIGITS);
    if part < whole && shown >= 100.0 { significant(exact, 15) } else { shown }
}

/// `value` as a percentage of `max` (a node's score against the highest) to [`PERCENT_DIGITS`]
/// significant digits; 0 when `max` is not positive. As in [`percent`], a value below `max` is
/// never shown as 100.
pub fn percent_of(value: f64, max: f64) -> f64 {
    if max.is_nan() || max <= 0.0 || !value.is_finite() {
        return 0.0;
    }
    let exact = value / max * 100.0;
    let shown = significant(exact, PERCENT_DIGITS);
    if value < max && shown >= 100.0 { significant(exact, 15) } else { shown }
}

/// A measured duration in milliseconds, to the microsecond: a clock's nanoseconds are noise to a
/// reader, and `1.0978620000000001` is float noise on top.
pub fn millis(duration: std::time::Duration) -> f64 {
    // Whole microseconds over 1000 is the double nearest that decimal, so it prints short.
    (duration.as_micros() as f64) / 1000.0
}

/// A count with thousands grouped by commas, for prose (`10,000`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number as text for prose and labels: the shortest form that reads back as the same double,
/// in exponent form below 1e-5 and from 1e15 up (`1e-8`, `1.5e20`), never `-0`.
pub fn text(value: f64) -> String {
    let value = value + 0.0;
    if !value.is_finite() {
        return value.to_string();
    }
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-5..1e15).contains(&magnitude) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// An integer as text, with all its digits: the shortest round-trip form of a double past 10^15
/// (`1.152921504606847e18`) is a different integer from the one meant (1152921504606846976).
/// Round ones with at most [`ROUND_DIGITS`] significant digits take the exponent form, as
/// [`text`] writes them (`1e18`, `-2.5e16`).
pub fn integer_text(value: i128) -> String {
    let digits = value.unsigned_abs().to_string();
    let significant = digits.trim_end_matches('0');
    if digits.len() <= 15 || significant.len() > ROUND_DIGITS {
        return value.to_string();
    }
    let sign = if value < 0 { "-" } else { "" };
    let (head, tail) = significant.split_at(1);
    let point = if tail.is_empty() { "" } else { "." };
    format!("{sign}{head}{point}{tail}e{}", digits.len() - 1)
}

/// A computed statistic as text (see [`stat`] and [`text`]).
pub fn stat_text(value: f64) -> String {
    text(stat(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_from_the_shortest_digits_is_rounding_the_exact_value() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut values: Vec<f64> = vec![
            0.1 + 0.2,
            0.6000000000000001,
            9.999999999999999,
            0.9999995,
            1.0000005,
            123456.5,
            2.5,
            0.15,
            1e-300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            99999.95,
            0.000123456789012345,
        ];
        for _ in 0..200_000 {
            let scale = 10f64.powi(rng.i32(-30..30));
            values.push(rng.f64() * scale);
            values.push(-(rng.f64() * scale));
            values.push(f64::from_bits(rng.u64(..)));
            // Short decimals and their neighbours: ties and near-ties of every digit count.
            let short = (rng.u32(..100_000) as f64 + 0.5) / 10f64.powi(rng.i32(0..8));
            values.extend([
                short,
                f64::from_bits(short.to_bits() + 1),
                f64::from_bits(short.to_bits() - 1),
            ]);
        }
        for value in values.into_iter().filter(|v| v.is_finite() && *v != 0.0) {
            for digits in 1..=17 {
                assert_eq!(
                    significant(value, digits).to_bits(),
                    exactly_rounded(value, digits).to_bits(),
                    "{value:e} to {digits} digits"
                );
            }
        }
    }

    #[test]
    fn noise_is_removed_but_significant_digits_are_kept() {
        assert_eq!(stat(0.1 + 0.2), 0.3);
        assert_eq!(stat(0.6000000000000001), 0.6);
        assert_eq!(stat(1.000001e-8), 1.000001e-8);
        assert_eq!(stat(0.009565432123), 0.009565432123);
        assert_eq!(stat(-0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(stat(123_456_789_012_345_678.0), 123_456_789_012_346_000.0);
        // Digits a statistic of large values means are kept (a mean of 100000000001 and
        // 100000000002 is not 100000000002).
        assert_eq!(stat(100_000_000_001.5), 100_000_000_001.5);
        assert_eq!(stat(1_700_000_001.654_321), 1_700_000_001.654_32);
        // Rounded past an end of the range it lies in, a statistic keeps its digits.
        let (min, max) = (9007199254740989.0, 9007199254740993.0);
        assert_eq!(stat_json_within(9007199254740990.0, min, max), 9007199254740990.0);
        assert_eq!(stat_json_within(0.6000000000000001, 0.1, 0.9), 0.6);
    }

    #[test]
    fn text_uses_shortest_round_trip_forms() {
        assert_eq!(text(1e-8), "1e-8");
        assert_eq!(text(6.000000000000001e-8), "6.000000000000001e-8");
        assert_eq!(text(1e15), "1e15");
        assert_eq!(text(123.456), "123.456");
        assert_eq!(text(-0.0), "0");
        assert_eq!(text(0.00001), "0.00001");
        assert_eq!(text(42.0), "42");
        assert_eq!(text(-2.5e-7), "-2.5e-7");
    }

    #[test]
    fn integers_keep_every_digit() {
        assert_eq!(integer_text(9_007_199_254_740_993), "9007199254740993");
        assert_eq!(integer_text(1 << 60), "1152921504606846976");
        assert_eq!(integer_text(1_000_000_000_000_000_000), "1e18");
        assert_eq!(integer_text(-25_000_000_000_000_000), "-2.5e16");
        assert_eq!(integer_text(999_999_999_999_999_999), "999999999999999999");
        assert_eq!(integer_text(i128::from(i64::MIN)), "-9223372036854775808");
        assert_eq!(integer_text(100_000), "100000");
        assert_eq!(integer_text(-7), "-7");
    }

    #[test]
    fn shares_of_a_maximum_and_durations_print_without_noise() {
        assert_eq!(percent_of(1.0, 3.0), 33.3333);
        assert_eq!(percent_of(0.0026343092633327346, 0.03319493743687862), 7.93588);
        assert!(percent_of(0.9999999, 1.0) < 100.0);
        assert_eq!(percent_of(2.0, 2.0), 100.0);
        assert_eq!(percent_of(1.0, 0.0), 0.0);
        assert_eq!(millis(std::time::Duration::from_nanos(1_097_862_123)), 1097.862);
        assert_eq!(text(millis(std::time::Duration::from_nanos(1_097_862))), "1.097");
        assert_eq!(text(millis(std::time::Duration::from_nanos(300))), "0");
        assert_eq!(grouped(10_000), "10,000");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(0), "0");
    }

    #[test]
    fn percentages_keep_small_and_near_total_shares_visible() {
        assert_eq!(percent(1, 3), 33.3333);
        assert_eq!(percent(1, 10_000_000), 0.00001);
        assert!(percent(9_999_999, 10_000_000) < 100.0);
        assert_eq!(percent(5, 5), 100.0);
        assert_eq!(percent(0, 0), 0.0);
    }
}
