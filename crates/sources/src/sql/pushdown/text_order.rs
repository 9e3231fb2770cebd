//! How a column's values compare with their text, for the PostgreSQL and ClickHouse types where
//! that is known: a profile then counts distinct values and finds extremes on the stored values
//! (8 bytes for a timestamp) instead of on the text each row would be converted to.

use schemascope_core::ColumnInfo;

use crate::sql::clickhouse::text as ch_text;

/// What comparing stored values says about comparing their text (the type's output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextOrder {
    /// Nothing: compare the text.
    Text,
    /// Equal values have equal text and unequal values unequal text (within one session), so
    /// distinct values are counted on the stored values; their order may differ from the
    /// text's (`timestamp with time zone`: the offset written depends on the date).
    Distinct,
    /// As [`TextOrder::Distinct`], and the stored order is the text's order (code points):
    /// `time` (fixed-width fields). (`uuid` orders as its text too, but has no `min`/`max`.)
    Ordered,
    /// As [`TextOrder::Ordered`] while every year has four digits and is AD (`date`,
    /// `timestamp`): checked on the column's smallest and largest value.
    OrderedInFourDigitYears,
}

impl TextOrder {
    /// The text order of a PostgreSQL column (a domain by its base type).
    pub(crate) fn of(column: &ColumnInfo) -> Self {
        match postgres_type_name(column).as_str() {
            "time without time zone" | "time" => Self::Ordered,
            "date" | "timestamp without time zone" | "timestamp" => Self::OrderedInFourDigitYears,
            "uuid" | "timestamp with time zone" | "time with time zone" => Self::Distinct,
            _ => Self::Text,
        }
    }

    /// The text order of a ClickHouse column, whose dates and times without a zone of their own
    /// are written in `server_zone` (`timezone()`). Dates and times are written with fixed-width
    /// fields and four-digit years (the types' ranges are within 1900–2299), so their text
    /// orders as they do — in a zone without offset changes: where clocks go back, two instants
    /// an hour apart are written alike. `LowCardinality` columns are left to their text
    /// (ClickHouse 18.16 refuses some aggregates over them).
    pub(crate) fn of_clickhouse(column: &ColumnInfo, server_zone: Option<&str>) -> Self {
        let declared = column.declared_type.as_str();
        if declared.contains("LowCardinality(") {
            return Self::Text;
        }
        let stored = ch_text::stored_type(declared);
        let (family, arguments) = match stored.split_once('(') {
            Some((family, rest)) => (family.trim(), rest.trim_end_matches(')')),
            None => (stored.trim(), ""),
        };
        let own_zone = |zone_argument: Option<&str>| {
            zone_argument.map(|z| z.trim().trim_matches('\'').to_string())
        };
        let zone = match family {
            "Date" | "Date32" => return Self::Ordered,
            "DateTime" => own_zone((!arguments.is_empty()).then_some(arguments)),
            "DateTime64" => own_zone(arguments.split_once(',').map(|(_, zone)| zone)),
            _ => return Self::Text,
        };
        match zone.as_deref().or(server_zone) {
            Some(zone) if fixed_offset_zone(zone) => Self::Ordered,
            _ => Self::Text,
        }
    }

    /// True when the order of the stored values is their text's order, given the text of the
    /// column's smallest and largest stored value.
    pub(crate) fn ordered(self, min: Option<&str>, max: Option<&str>) -> bool {
        match self {
            Self::Text | Self::Distinct => false,
            Self::Ordered => true,
            Self::OrderedInFourDigitYears => {
                [min, max].iter().all(|text| text.is_some_and(four_digit_year_ad))
            }
        }
    }
}

/// True for the zones whose offset from UTC never changes (the tz database's UTC aliases and
/// `Etc/GMT±N`): a local time there names one instant.
fn fixed_offset_zone(zone: &str) -> bool {
    let zone = zone.strip_prefix("Etc/").unwrap_or(zone);
    matches!(
        zone,
        "UTC" | "UCT" | "GMT" | "GMT0" | "GMT+0" | "GMT-0" | "Greenwich" | "Universal" | "Zulu"
    ) || zone.strip_prefix("GMT").and_then(|offset| offset.strip_prefix(['+', '-'])).is_some_and(
        |hours| !hours.is_empty() && hours.len() <= 2 && hours.bytes().all(|b| b.is_ascii_digit()),
    )
}

/// The length in characters of every text of a ClickHouse date or time column, when fixed:
/// `YYYY-MM-DD`, `YYYY-MM-DD hh:mm:ss`, and that with a point and `p` digits for
/// `DateTime64(p)`.
pub(crate) fn clickhouse_text_length(column: &ColumnInfo) -> Option<u64> {
    let stored = ch_text::stored_type(&column.declared_type);
    let (family, arguments) = stored.split_once('(').unwrap_or((stored, ""));
    match family.trim() {
        "Date" | "Date32" => Some(10),
        "DateTime" => Some(19),
        "DateTime64" => {
            let digits: u64 =
                arguments.trim_end_matches(')').split(',').next()?.trim().parse().ok()?;
            Some(if digits == 0 { 19 } else { 20 + digits })
        }
        _ => None,
    }
}

/// A PostgreSQL column's type (a domain's base type) without precision modifiers, which do not
/// change the output's shape: `timestamp(3) without time zone` → `timestamp without time zone`.
fn postgres_type_name(column: &ColumnInfo) -> String {
    let stored = column.base_type.as_deref().unwrap_or(&column.declared_type);
    stored.split('(').next().unwrap_or(stored).trim().to_string()
        + stored.split_once(')').map_or("", |(_, rest)| rest)
}

/// The length in characters of the text (DateStyle ISO) of the PostgreSQL `date`, `timestamp`
/// or `time` value `stored`, computed from the value: a date of a four-digit year AD is written
/// in 10 characters, a timestamp in 19 and a time in 8, each with a point and as many digits
/// as its fraction of a second needs (the least precision `p` at which `stored::timestamp(p)`
/// is `stored`). Other values (other years, BC, infinities) are measured on their text.
pub(crate) fn postgres_text_length(column: &ColumnInfo, stored: &str) -> Option<String> {
    let (cast, whole) = match postgres_type_name(column).as_str() {
        "date" => {
            return Some(format!(
                "(CASE WHEN {stored} >= '1000-01-01'::date AND {stored} < '10000-01-01'::date THEN 10 ELSE char_length({stored}::text) END)"
            ));
        }
        "timestamp without time zone" | "timestamp" => ("timestamp", 19),
        "time without time zone" | "time" => ("time", 8),
        _ => return None,
    };
    let fraction: Vec<String> = (0..6)
        .map(|p| {
            let length = if p == 0 { whole } else { whole + 1 + p };
            format!("WHEN {stored} = {stored}::{cast}({p}) THEN {length}")
        })
        .collect();
    // NULL stays NULL: the aggregates skip it.
    let digits =
        format!("CASE {} WHEN {stored} IS NOT NULL THEN {} END", fraction.join(" "), whole + 7);
    Some(match cast {
        "timestamp" => format!(
            "(CASE WHEN {stored} >= '1000-01-01'::timestamp AND {stored} < '10000-01-01'::timestamp THEN {digits} ELSE char_length({stored}::text) END)"
        ),
        _ => format!("({digits})"),
    })
}

/// `YYYY-…` with a year from 1000 to 9999, not BC: between two such values every value has
/// that shape, and their text sorts as their dates.
fn four_digit_year_ad(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[0] != b'0'
        && bytes[4] == b'-'
        && !text.ends_with(" BC")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(declared_type: &str) -> ColumnInfo {
        ColumnInfo {
            name: "c".into(),
            declared_type: declared_type.into(),
            nullable: true,
            comment: None,
            base_type: None,
        }
    }

    #[test]
    fn types_are_placed_by_what_their_output_keeps() {
        assert_eq!(
            TextOrder::of(&column("timestamp(3) without time zone")),
            TextOrder::OrderedInFourDigitYears
        );
        assert_eq!(
            TextOrder::of(&column("timestamp without time zone")),
            TextOrder::OrderedInFourDigitYears
        );
        assert_eq!(TextOrder::of(&column("date")), TextOrder::OrderedInFourDigitYears);
        assert_eq!(TextOrder::of(&column("uuid")), TextOrder::Distinct);
        assert_eq!(TextOrder::of(&column("time(3) without time zone")), TextOrder::Ordered);
        assert_eq!(TextOrder::of(&column("timestamp with time zone")), TextOrder::Distinct);
        // Equal values with different text: 1.0 = 1.00, '1 day' = '24 hours'.
        assert_eq!(TextOrder::of(&column("numeric(10,2)")), TextOrder::Text);
        assert_eq!(TextOrder::of(&column("interval")), TextOrder::Text);
        assert_eq!(TextOrder::of(&column("character(3)")), TextOrder::Text);
    }

    #[test]
    fn clickhouse_dates_and_times_order_as_their_text_in_fixed_zones_only() {
        let utc = Some("Etc/UTC");
        let paris = Some("Europe/Paris");
        assert_eq!(TextOrder::of_clickhouse(&column("Date"), paris), TextOrder::Ordered);
        assert_eq!(TextOrder::of_clickhouse(&column("Nullable(Date)"), None), TextOrder::Ordered);
        assert_eq!(TextOrder::of_clickhouse(&column("DateTime"), utc), TextOrder::Ordered);
        assert_eq!(TextOrder::of_clickhouse(&column("DateTime"), paris), TextOrder::Text);
        assert_eq!(TextOrder::of_clickhouse(&column("DateTime"), None), TextOrder::Text);
        assert_eq!(TextOrder::of_clickhouse(&column("DateTime('UTC')"), paris), TextOrder::Ordered);
        assert_eq!(
            TextOrder::of_clickhouse(&column("DateTime('America/New_York')"), utc),
            TextOrder::Text
        );
        assert_eq!(
            TextOrder::of_clickhouse(&column("Nullable(DateTime('Etc/GMT-3'))"), paris),
            TextOrder::Ordered
        );
        assert_eq!(TextOrder::of_clickhouse(&column("DateTime64(3)"), utc), TextOrder::Ordered);
        assert_eq!(
            TextOrder::of_clickhouse(&column("DateTime64(3, 'Asia/Tokyo')"), utc),
            TextOrder::Text
        );
        assert_eq!(
            TextOrder::of_clickhouse(&column("LowCardinality(Nullable(Date))"), utc),
            TextOrder::Text
        );
        assert_eq!(TextOrder::of_clickhouse(&column("String"), utc), TextOrder::Text);
        assert_eq!(TextOrder::of_clickhouse(&column("UUID"), utc), TextOrder::Text);
        assert!(!fixed_offset_zone("Etc/GMT+123"));
        assert!(!fixed_offset_zone("GMT+"));
        assert!(fixed_offset_zone("Etc/GMT+12"));
    }

    #[test]
    fn clickhouse_date_and_time_texts_have_fixed_lengths() {
        assert_eq!(clickhouse_text_length(&column("Date")), Some(10));
        assert_eq!(clickhouse_text_length(&column("Nullable(DateTime('UTC'))")), Some(19));
        assert_eq!(clickhouse_text_length(&column("DateTime64(0)")), Some(19));
        assert_eq!(clickhouse_text_length(&column("DateTime64(3, 'UTC')")), Some(23));
        assert_eq!(clickhouse_text_length(&column("String")), None);
    }

    #[test]
    fn dates_sort_as_text_only_within_four_digit_years_ad() {
        let order = TextOrder::OrderedInFourDigitYears;
        assert!(order.ordered(Some("1000-01-01"), Some("9999-12-31 23:59:59.5")));
        assert!(!order.ordered(Some("0999-12-31"), Some("2025-01-01")));
        assert!(!order.ordered(Some("2025-01-01"), Some("10000-01-01")));
        assert!(!order.ordered(Some("0044-03-15 BC"), Some("2025-01-01")));
        assert!(!order.ordered(Some("1500-03-15 BC"), Some("2025-01-01")));
        assert!(!order.ordered(None, Some("2025-01-01")));
        assert!(!order.ordered(Some("-infinity"), Some("2025-01-01")));
        assert!(!order.ordered(Some("2025-01-01"), Some("infinity")));
    }
}
