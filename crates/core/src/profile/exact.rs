//! Exact figures for integers past 2^53, where neighbouring integers share one `f64`.
//!
//! JSON carries every integer of the i64 and u64 ranges exactly, and a profile must too: two ids
//! 9007199254740992 and 9007199254740993 are two distinct values, and the median of integers is
//! one of them (or the midpoint of two). [`NumberKey`] is how a distinct number is counted and
//! ordered; [`Quarters`] is an exact quantile of integers. In-memory profiles and database
//! pushdown both compute with these, so they agree to the last digit.

use std::cmp::Ordering;

use serde_json::Value;

/// The largest magnitude up to which every integer is exact in an `f64` (2^53).
pub const F64_EXACT_INTEGER: i128 = 1 << 53;

/// 2^`exponent`, exactly, for the exponents of normal doubles (-1022 to 1023).
pub(crate) fn power_of_two(exponent: i32) -> f64 {
    f64::from_bits(((exponent + 1023) as u64) << 52)
}

/// One distinct number as profiles count and order it: its nearest double plus, for an integer
/// that double cannot hold, the integer's exact distance from it. Ordering by (double, offset) is
/// the numbers' own order, since rounding to nearest never swaps two numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberKey {
    double: f64,
    offset: i64,
}

impl NumberKey {
    /// A number read as a double.
    pub fn float(value: f64) -> Self {
        Self { double: value, offset: 0 }
    }

    /// An integer, exactly when its magnitude is below [`EXACT_INTEGER_LIMIT`]: its offset from
    /// the nearest double is at most half the spacing of doubles there (1,024 for the u64 range,
    /// 2^63 at the limit), so it fits. Callers keep larger ones out (see
    /// [`crate::profile::ColumnSink::wide_integer`]).
    pub fn integer(value: i128) -> Self {
        let double = value as f64;
        let offset = value.saturating_sub(double as i128);
        Self { double, offset: i64::try_from(offset).unwrap_or(0) }
    }

    /// The nearest double.
    pub fn double(self) -> f64 {
        self.double
    }

    /// The number's distance from [`Self::double`] (0 unless an integer the double cannot hold).
    pub fn offset(self) -> i64 {
        self.offset
    }

    /// The key from its two parts, as [`Self::double`] and [`Self::offset`] gave them (a stored
    /// profile read back).
    pub(crate) fn from_parts(double: f64, offset: i64) -> Self {
        Self { double, offset }
    }

    /// The number as an exact integer, when it is a whole number in the `i128` range.
    pub fn integer_value(self) -> Option<i128> {
        let double = self.double;
        // Below 2^63 the processor's own conversion truncates exactly, and a double with a
        // fraction is below 2^52, where the truncated integer converts back unchanged: equal
        // only when there was no fraction. (Most values take this path; i128's is a library call.)
        if double.abs() < 9.2e18 {
            let whole = double as i64;
            return (whole as f64 == double).then(|| i128::from(whole) + i128::from(self.offset));
        }
        // Every double of magnitude below 2^127 with no fraction is an integer that fits.
        let whole = double.is_finite() && double.fract() == 0.0 && double.abs() < 1.7e38;
        whole.then(|| (double as i128).saturating_add(i128::from(self.offset)))
    }

    /// The number as JSON: an exact integer when it was written as one (`integers`: every value
    /// of its property was; an offset means this one was) — a JSON number when one holds it,
    /// else its decimal text (below i64, a CSV's `DECIMAL(20,0)`), as [`Quarters::to_json`]
    /// shows a median — else its double.
    pub fn to_json(self, integers: bool) -> Value {
        match (integers || self.offset != 0).then(|| self.integer_value()).flatten() {
            Some(value) => integer_json(value).unwrap_or_else(|| Value::String(value.to_string())),
            None => crate::figure::exact_json(self.double),
        }
    }

    /// True when the number is below `edge` (a histogram edge, a double).
    pub fn below(self, edge: f64) -> bool {
        self.double < edge || (self.double == edge && self.offset < 0)
    }

    /// The numbers' order (the two zeros compare equal, as `==` says).
    pub fn order(self, other: Self) -> Ordering {
        if self.double == other.double {
            self.offset.cmp(&other.offset)
        } else {
            self.double.total_cmp(&other.double)
        }
    }
}

/// The mean `sum / count` as JSON, exactly: an integer as a JSON number when JSON holds it,
/// else its decimal text with up to six places (ten-millionths of a mean past 2^53 are noise no
/// reader needs; the digits before the point are all exact).
pub fn mean_json(sum: i128, count: u64) -> Value {
    let n = i128::from(count.max(1));
    let (whole, rest) = (sum / n, (sum % n).unsigned_abs());
    if rest == 0
        && let Some(value) = integer_json(whole)
    {
        return value;
    }
    // Six decimals, rounded half up from the exact remainder.
    let places = (rest * 1_000_000 + n.unsigned_abs() / 2) / n.unsigned_abs();
    let (whole, places) =
        if places == 1_000_000 { (whole + sum.signum(), 0) } else { (whole, places) };
    if places == 0 {
        return integer_json(whole).unwrap_or_else(|| Value::String(whole.to_string()));
    }
    let sign = if sum < 0 && whole == 0 { "-" } else { "" };
    let fraction = format!("{places:06}");
    Value::String(format!("{sign}{whole}.{}", fraction.trim_end_matches('0')))
}

/// Magnitude below which an integer is a number of the profile, held exactly by a
/// [`NumberKey`] (its offset from the nearest double fits 64 bits) and by [`Quarters`] (a
/// quartile between two of them, in quarter units, fits 128 bits). Past it — a `DECIMAL(38,0)`
/// of 36 digits or more — no exact number type here holds it.
pub const EXACT_INTEGER_LIMIT: u128 = 1 << 116;

/// An integer as a JSON number, when JSON holds it exactly (the i64 and u64 ranges).
pub fn integer_json(value: i128) -> Option<Value> {
    i64::try_from(value)
        .map(Value::from)
        .ok()
        .or_else(|| u64::try_from(value).map(Value::from).ok())
}

/// A number kept exactly in quarter units: an integer, or a quartile interpolated between two
/// integers (`x.25`, `x.5`, `x.75`). Past 2^53 no double holds such a number, so it is kept as
/// a count of quarters and shown from its digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quarters(i128);

impl Quarters {
    /// `low + (high − low) × quarters / 4`.
    pub fn between(low: i128, high: i128, quarters: u64) -> Self {
        let step = high.saturating_sub(low).saturating_mul(i128::from(quarters));
        Self(low.saturating_mul(4).saturating_add(step))
    }

    /// The number in quarter units (`x × 4`), exactly.
    pub(crate) fn quarter_units(self) -> i128 {
        self.0
    }

    /// The number from its quarter units ([`Self::quarter_units`]).
    pub(crate) fn from_quarter_units(units: i128) -> Self {
        Self(units)
    }

    /// The nearest double.
    pub fn to_f64(self) -> f64 {
        // One rounding: scaling by a power of two is exact.
        self.0 as f64 / 4.0
    }

    /// The largest integer not above the number.
    pub fn floor(self) -> i128 {
        self.0.div_euclid(4)
    }

    /// The number when it is a whole one.
    pub fn integer(self) -> Option<i128> {
        (self.0 % 4 == 0).then_some(self.0 / 4)
    }

    /// As JSON: a JSON number when one holds it exactly, else its exact decimal text (as
    /// PostgreSQL values past a double's precision are shown).
    pub fn to_json(self) -> Value {
        if let Some(value) = self.integer().and_then(integer_json) {
            return value;
        }
        let double = self.to_f64();
        if double.is_finite() && (double * 4.0) as i128 == self.0 {
            crate::figure::exact_json(double)
        } else {
            Value::String(self.text())
        }
    }

    /// The exact decimal text (`-7.5`, `9007199254740993.25`).
    pub fn text(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let magnitude = self.0.unsigned_abs();
        let fraction = ["", ".25", ".5", ".75"][(magnitude % 4) as usize];
        format!("{sign}{}{fraction}", magnitude / 4)
    }
}

/// The ranks (0-based, ascending) that the `k`/4 quantile of `n` values reads, by linear
/// interpolation, and the weight of the higher one in quarters (0 to 3).
pub fn quarter_ranks(n: u64, k: u64) -> (u64, u64, u64) {
    let position = k.min(4) * n.saturating_sub(1);
    let (low, weight) = (position / 4, position % 4);
    (low, if weight > 0 { low + 1 } else { low }, weight)
}

/// Whether the quantile between the values `low` and `high` at its two ranks (see
/// [`quarter_ranks`]) is one of them: it reads one rank, or two equal values.
pub fn is_value(low: NumberKey, high: NumberKey, weight: u64) -> bool {
    weight == 0 || low.order(high).is_eq()
}

/// The median of `n` values, when it is one of them, from the values at its ranks (`at(rank)`,
/// 0-based; see [`is_value`]).
pub fn median_key(n: u64, at: impl Fn(u64) -> Option<NumberKey>) -> Option<NumberKey> {
    let (low, high, weight) = quarter_ranks(n, 2);
    let (a, b) = (at(low)?, at(high)?);
    (n > 0 && is_value(a, b, weight)).then_some(a)
}

/// The quantile between the values `low` and `high` at its two ranks (see [`quarter_ranks`]):
/// exact when both are integers, else by floating-point interpolation.
pub fn interpolate(low: NumberKey, high: NumberKey, weight: u64) -> (f64, Option<Quarters>) {
    match (low.integer_value(), high.integer_value()) {
        (Some(a), Some(b)) => {
            let exact = Quarters::between(a, b, weight);
            (exact.to_f64(), Some(exact))
        }
        _ => {
            let (a, b) = (low.double, high.double);
            if weight == 0 || a == b {
                return (a, None);
            }
            // `b - a` rounds when the two are far apart or of both signs (the midpoint of
            // -(2^50 + 0.25) and 2^50 came out -0.25, not -0.125): the exact sum of both
            // weighted ends is rounded once instead.
            let mut sum = super::numeric::ExactSum::default();
            sum.add_product(a, (4 - weight.min(4)) as f64 / 4.0);
            sum.add_product(b, weight.min(4) as f64 / 4.0);
            (sum.value(), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_53: i128 = 1 << 53;

    #[test]
    fn means_past_doubles_are_shown_from_the_exact_sum() {
        let text = |v: Value| v.to_string();
        assert_eq!(text(mean_json(3 * 18014398509481986, 3)), "18014398509481986");
        assert_eq!(text(mean_json(2 * 18446744073709551614 + 1, 2)), "\"18446744073709551614.5\"");
        assert_eq!(text(mean_json(-(3 * (1 << 60)) - 1, 3)), "\"-1152921504606846976.333333\"");
        assert_eq!(text(mean_json(-5, 2)), "\"-2.5\"");
        assert_eq!(text(mean_json(-1, 2)), "\"-0.5\"");
        // Rounded up into the next whole number.
        assert_eq!(text(mean_json(2_999_999_999, 1_000_000_000)), "3");
        assert_eq!(text(mean_json(-2_999_999_999, 1_000_000_000)), "-3");
    }

    /// An integer no JSON number holds (below i64) is shown by its digits, never as the double
    /// next to it (a value not in the data); one JSON holds stays a number.
    #[test]
    fn integers_past_json_numbers_are_shown_by_their_digits() {
        let text = |v: i128| NumberKey::integer(v).to_json(true).to_string();
        assert_eq!(text(-18446744073709551615), "\"-18446744073709551615\"");
        assert_eq!(text(-18446744073709551616), "\"-18446744073709551616\"");
        assert_eq!(text(-9223372036854775808), "-9223372036854775808");
        assert_eq!(text(18446744073709551615), "18446744073709551615");
        // A double of a property written with fractions stays a double.
        assert_eq!(
            NumberKey::float(-1.8446744073709552e19).to_json(false).to_string(),
            "-1.8446744073709552e+19"
        );
    }

    #[test]
    fn whole_numbers_are_found_as_the_library_conversion_finds_them() {
        let slow = |key: NumberKey| {
            let d = key.double();
            (d.is_finite() && d.fract() == 0.0 && d.abs() < 1.7e38)
                .then(|| (d as i128).saturating_add(i128::from(key.offset())))
        };
        let mut rng = fastrand::Rng::with_seed(61);
        let two = |e: i32| 2f64.powi(e);
        let mut doubles = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            two(52) - 0.5,
            two(52) + 0.5,
            two(53),
            two(63),
            -two(63),
            9.2e18,
            -9.2e18,
            9.2e18 + 2048.0,
            two(63) - 1024.0,
            1.7e38,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        doubles.extend((0..20_000).map(|_| f64::from_bits(rng.u64(..))));
        doubles.extend((0..20_000).map(|_| (rng.f64() - 0.5) * two(rng.i32(0..70))));
        doubles.extend((0..20_000).map(|_| (rng.i64(..) >> rng.u32(0..63)) as f64));
        for d in doubles {
            for offset in [0, 1, -1, i64::MAX, i64::MIN] {
                let key = NumberKey::from_parts(d, offset);
                assert_eq!(key.integer_value(), slow(key), "{d:e} {offset}");
            }
        }
    }

    #[test]
    fn neighbouring_integers_past_2_pow_53_are_distinct_and_ordered() {
        let keys: Vec<NumberKey> =
            [TWO_53 + 2, TWO_53, TWO_53 + 1, i128::from(i64::MAX), i128::from(u64::MAX)]
                .map(NumberKey::integer)
                .to_vec();
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| a.order(*b));
        let values: Vec<i128> = sorted.iter().filter_map(|k| k.integer_value()).collect();
        assert_eq!(
            values,
            [TWO_53, TWO_53 + 1, TWO_53 + 2, i128::from(i64::MAX), i128::from(u64::MAX)]
        );
        assert_ne!(NumberKey::integer(TWO_53), NumberKey::integer(TWO_53 + 1));
        assert_eq!(
            NumberKey::integer(TWO_53 + 1).to_json(true),
            serde_json::json!(9_007_199_254_740_993_u64)
        );
        assert_eq!(
            NumberKey::integer(i128::from(i64::MIN)).to_json(true),
            serde_json::json!(i64::MIN)
        );
        // A float equal to an integer is the same number.
        assert_eq!(
            NumberKey::float(1e17).order(NumberKey::integer(100_000_000_000_000_000)),
            Ordering::Equal
        );
        assert!(NumberKey::integer(TWO_53 + 1).below(9_007_199_254_740_994.0));
        assert!(!NumberKey::integer(TWO_53 + 1).below(9_007_199_254_740_992.0));
    }

    #[test]
    fn quarters_are_shown_exactly() {
        assert_eq!(
            Quarters::between(TWO_53 + 1, TWO_53 + 2, 2).to_json(),
            serde_json::json!("9007199254740993.5")
        );
        assert_eq!(
            Quarters::between(TWO_53 + 1, TWO_53 + 3, 2).to_json(),
            serde_json::json!(9_007_199_254_740_994_u64)
        );
        assert_eq!(Quarters::between(-8, -7, 2).to_json(), serde_json::json!(-7.5));
        assert_eq!(Quarters::between(-1, 0, 2).text(), "-0.5");
        assert_eq!(Quarters::between(3, 4, 1).text(), "3.25");
        assert_eq!(
            (Quarters::between(-1, 0, 2).floor(), Quarters::between(3, 4, 3).floor()),
            (-1, 3)
        );
        assert_eq!(Quarters::between(i128::from(i64::MIN), i128::from(i64::MAX), 2).text(), "-0.5");
    }

    #[test]
    fn quarter_ranks_follow_linear_interpolation() {
        assert_eq!(quarter_ranks(11, 2), (5, 5, 0));
        assert_eq!(quarter_ranks(4, 2), (1, 2, 2));
        assert_eq!(quarter_ranks(4, 1), (0, 1, 3));
        assert_eq!(quarter_ranks(1, 3), (0, 0, 0));
    }
}
