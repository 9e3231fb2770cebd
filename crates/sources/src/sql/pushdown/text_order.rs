//! How a PostgreSQL column's values compare with their text, for the types where that is known:
//! a profile then counts distinct values and finds extremes on the stored values (8 bytes for a
//! timestamp) instead of on the text each row would be converted to.

use schemascope_core::ColumnInfo;

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
        let stored = column.base_type.as_deref().unwrap_or(&column.declared_type);
        // Precision modifiers (`timestamp(3) without time zone`) do not change the output's shape.
        let name: String = stored.split('(').next().unwrap_or(stored).trim().to_string()
            + stored.split_once(')').map_or("", |(_, rest)| rest);
        match name.as_str() {
            "time without time zone" | "time" => Self::Ordered,
            "date" | "timestamp without time zone" | "timestamp" => Self::OrderedInFourDigitYears,
            "uuid" | "timestamp with time zone" | "time with time zone" => Self::Distinct,
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
