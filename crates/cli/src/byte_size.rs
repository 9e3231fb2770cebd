//! Sizes as the flags and the config file take them: `512MiB`, `1.5GiB`, `4096`.

/// Bytes as a number, whole or decimal, with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB,
/// TB; bytes without one). A decimal size is rounded down to whole bytes: `1.4MiB` is 1,468,006.
pub(crate) fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let not_a_size = || format!("`{text}` is not a size (e.g. 512MiB or 1.5GiB)");
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    // Digits on at least one side of the point, and no second point.
    if whole.len() + fraction.len() == 0 || fraction.contains('.') {
        return Err(not_a_size());
    }
    let unit: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "unknown unit `{other}` (use KiB, MiB, GiB, TiB, KB, MB, GB or TB)"
            ));
        }
    };
    let too_large = || format!("`{text}` is too large");
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
    // Digits past the nineteenth cannot change a size of whole bytes below 2^64 by a byte.
    let fraction = &fraction[..fraction.len().min(19)];
    let fraction_bytes = match fraction.parse::<u128>() {
        Ok(digits) => digits * u128::from(unit) / 10u128.pow(fraction.len() as u32),
        Err(_) => 0,
    };
    let bytes = whole
        .checked_mul(u128::from(unit))
        .and_then(|b| b.checked_add(fraction_bytes))
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(too_large)?;
    match bytes {
        0 => Err("the size must be at least 1 byte".into()),
        bytes => Ok(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn whole_and_decimal_sizes_with_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes(" 512MiB "), Ok(512 << 20));
        assert_eq!(parse_bytes("512 mib"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.4MiB"), Ok(1_468_006));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes(".5k"), Ok(512));
        assert_eq!(parse_bytes("2."), Ok(2));
        assert_eq!(parse_bytes("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_bytes("2TiB"), Ok(2 << 40));
        assert_eq!(
            parse_bytes("0.0000000000000000000001TB"),
            Err("the size must be at least 1 byte".into())
        );
        assert_eq!(parse_bytes("1.9"), Ok(1), "rounded down to whole bytes");
    }

    #[test]
    fn malformed_zero_and_huge_sizes_are_refused_with_a_reason() {
        for text in ["", ".", "MiB", "1..5MiB", "1.2.3", "-1MiB", "1e6", "0x10"] {
            let error = parse_bytes(text).expect_err(text);
            assert!(
                error.contains("not a size") || error.contains("unknown unit"),
                "{text}: {error}"
            );
        }
        assert!(parse_bytes("1PiB").unwrap_err().contains("unknown unit `pib`"));
        assert_eq!(parse_bytes("0"), Err("the size must be at least 1 byte".into()));
        assert_eq!(parse_bytes("0.4"), Err("the size must be at least 1 byte".into()));
        assert!(parse_bytes("16777216TiB").unwrap_err().contains("too large"));
        assert!(
            parse_bytes("99999999999999999999999999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(parse_bytes("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_bytes("18446744073709551616").unwrap_err().contains("too large"));
    }
}
