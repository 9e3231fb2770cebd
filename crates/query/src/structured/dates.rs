//! Relative date ranges (CURRENT, LAST, LASTN, NEXT, NEXTN, TODATE of years … days) computed
//! from an anchor date the caller passes: the crate reads no clock.

use chrono::{Datelike, Months, NaiveDate};

use super::{DateRangeType, PeriodType};

/// The first day of the period containing `d`.
fn period_start(d: NaiveDate, period: PeriodType) -> NaiveDate {
    let first = |month: u32| NaiveDate::from_ymd_opt(d.year(), month, 1).unwrap_or(d);
    match period {
        PeriodType::Days => d,
        PeriodType::Weeks => d - chrono::Days::new(u64::from(d.weekday().num_days_from_monday())),
        PeriodType::Months => first(d.month()),
        PeriodType::Quarters => first((d.month0() / 3) * 3 + 1),
        PeriodType::Years => first(1),
    }
}

/// `d` moved by `k` periods.
fn shift(d: NaiveDate, period: PeriodType, k: i64) -> Option<NaiveDate> {
    let months = |m: i64| {
        if m >= 0 {
            d.checked_add_months(Months::new(u32::try_from(m).ok()?))
        } else {
            d.checked_sub_months(Months::new(u32::try_from(-m).ok()?))
        }
    };
    match period {
        PeriodType::Days => d.checked_add_signed(chrono::TimeDelta::try_days(k)?),
        PeriodType::Weeks => d.checked_add_signed(chrono::TimeDelta::try_days(k.checked_mul(7)?)?),
        PeriodType::Months => months(k),
        PeriodType::Quarters => months(k.checked_mul(3)?),
        PeriodType::Years => months(k.checked_mul(12)?),
    }
}

/// The half-open day range `[start, end)` a relative date filter keeps.
pub(super) fn relative_range(
    period: PeriodType,
    range: DateRangeType,
    n: u32,
    anchor: NaiveDate,
) -> Option<(NaiveDate, NaiveDate)> {
    let s = period_start(anchor, period);
    let n = i64::from(n.max(1));
    Some(match range {
        DateRangeType::Current => (s, shift(s, period, 1)?),
        DateRangeType::Last => (shift(s, period, -1)?, s),
        DateRangeType::Next => (shift(s, period, 1)?, shift(s, period, 2)?),
        DateRangeType::Lastn => (shift(s, period, 1 - n)?, shift(s, period, 1)?),
        DateRangeType::Nextn => (s, shift(s, period, n)?),
        DateRangeType::Todate => (s, anchor.succ_opt()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date")
    }

    #[test]
    fn ranges_follow_calendar_periods() {
        let anchor = d("2026-11-22");
        assert_eq!(
            relative_range(PeriodType::Years, DateRangeType::Last, 1, anchor),
            Some((d("2025-01-01"), d("2026-01-01")))
        );
        assert_eq!(
            relative_range(PeriodType::Quarters, DateRangeType::Current, 1, anchor),
            Some((d("2026-10-01"), d("2027-01-01")))
        );
        assert_eq!(
            relative_range(PeriodType::Months, DateRangeType::Lastn, 3, anchor),
            Some((d("2026-09-01"), d("2026-12-01")))
        );
        assert_eq!(
            relative_range(PeriodType::Weeks, DateRangeType::Current, 1, anchor),
            Some((d("2026-11-16"), d("2026-11-23")))
        );
        assert_eq!(
            relative_range(PeriodType::Years, DateRangeType::Todate, 1, anchor),
            Some((d("2026-01-01"), d("2026-11-23")))
        );
        assert_eq!(
            relative_range(PeriodType::Days, DateRangeType::Nextn, 2, anchor),
            Some((d("2026-11-22"), d("2026-11-24")))
        );
    }
}
