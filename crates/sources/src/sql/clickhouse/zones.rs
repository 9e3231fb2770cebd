//! Dates and times without a zone of their own (`DateTime`, `DateTime64(p)`) are written in the
//! zone of the server that writes them. Rows are written by the server the client talks to, in
//! its zone; but a profile's view of a `Distributed` table is computed on each shard, and a
//! shard in another zone would write the same instant otherwise (`toString` there). So the
//! catalog records as such a column's base type the type in the zone of the server the client
//! talks to (`DateTime('Etc/UTC')`), and the view writes the text in that zone by name, wherever
//! it is computed.

use super::text;

/// `declared` with `zone` written in, for a `DateTime` or `DateTime64(p)` (under `Nullable`)
/// without a zone of its own; `None` for any other type, for an empty `zone`, and under
/// `LowCardinality` (ClickHouse 18.16 cannot write such a column in a named zone).
pub(crate) fn zoned_type(declared: &str, zone: &str) -> Option<String> {
    if zone.is_empty() || declared.contains("LowCardinality(") {
        return None;
    }
    let stored = text::stored_type(declared);
    let quoted = text::quote_string(zone);
    let zoned = match stored.split_once('(') {
        None if stored == "DateTime" => format!("DateTime({quoted})"),
        Some(("DateTime64", arguments)) if !arguments.contains(',') => {
            format!("DateTime64({}, {quoted})", arguments.trim_end_matches(')').trim())
        }
        _ => return None,
    };
    Some(if stored.len() == declared.trim().len() { zoned } else { format!("Nullable({zoned})") })
}

/// The zone a `DateTime('…')` or `DateTime64(p, '…')` type names (under `Nullable`), if any.
pub(crate) fn zone_of(ty: &str) -> Option<String> {
    let stored = text::stored_type(ty);
    let (family, arguments) = stored.split_once('(')?;
    let arguments = arguments.strip_suffix(')')?;
    let zone = match family.trim() {
        "DateTime" => arguments,
        "DateTime64" => arguments.split_once(',')?.1,
        _ => return None,
    };
    let zone = zone.trim().strip_prefix('\'')?.strip_suffix('\'')?;
    // Zone names have no quotes or backslashes; a name that has is not read.
    (!zone.is_empty() && !zone.contains(['\'', '\\'])).then(|| zone.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_without_a_zone_take_the_servers() {
        assert_eq!(zoned_type("DateTime", "Etc/UTC").as_deref(), Some("DateTime('Etc/UTC')"));
        assert_eq!(
            zoned_type("Nullable(DateTime)", "Asia/Kolkata").as_deref(),
            Some("Nullable(DateTime('Asia/Kolkata'))")
        );
        assert_eq!(zoned_type("DateTime64(3)", "UTC").as_deref(), Some("DateTime64(3, 'UTC')"));
        for kept in ["DateTime('Europe/Paris')", "DateTime64(3, 'UTC')", "Date", "String"] {
            assert_eq!(zoned_type(kept, "UTC"), None, "{kept}");
        }
        assert_eq!(zoned_type("LowCardinality(DateTime)", "UTC"), None);
        assert_eq!(zoned_type("DateTime", ""), None);
    }

    #[test]
    fn zones_are_read_from_types() {
        assert_eq!(zone_of("DateTime('Etc/UTC')").as_deref(), Some("Etc/UTC"));
        assert_eq!(zone_of("Nullable(DateTime64(6, 'Asia/Tokyo'))").as_deref(), Some("Asia/Tokyo"));
        assert_eq!(zone_of("DateTime"), None);
        assert_eq!(zone_of("DateTime64(3)"), None);
        assert_eq!(zone_of("Date"), None);
        assert_eq!(zone_of("DateTime('a\\'b')"), None);
    }
}
