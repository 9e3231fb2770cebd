//! Sizes in messages, as a reader compares them: "needed about 3.4 MiB, more than the budget of
//! 3 MiB".

/// Units past bytes, each 1024 of the one before.
const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];

/// `bytes` in the largest unit that keeps it at least 1: to the nearest tenth below 10 (`1.9 KiB`,
/// not `1 KiB`, for 1,945 bytes), whole past it, never with a trailing `.0`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        1 => return "1 byte".into(),
        0..1024 => return format!("{bytes} bytes"),
        _ => {}
    }
    let (mut value, mut unit) = (bytes as f64 / 1024.0, 0);
    let shown = |value: f64| {
        if value < 9.95 { (value * 10.0).round() / 10.0 } else { value.round() }
    };
    // The next unit once the value would show as 1024 or more of this one.
    while shown(value) >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{} {}", shown(value), UNITS[unit])
}

/// Two sizes as [`size_text`] shows them, or both in bytes where it would show them alike: a
/// need past a budget must not read as equal to it.
pub fn size_texts_apart(a: u64, b: u64) -> (String, String) {
    let (x, y) = (size_text(a), size_text(b));
    if x == y && a != b { (byte_count(a), byte_count(b)) } else { (x, y) }
}

/// `bytes` with thousands separated: `1,468,006 bytes`.
fn byte_count(bytes: u64) -> String {
    let digits = bytes.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 6);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out.push_str(if bytes == 1 { " byte" } else { " bytes" });
    out
}

#[cfg(test)]
mod tests {
    use super::{size_text, size_texts_apart};

    #[test]
    fn sizes_read_in_one_form_whatever_their_unit() {
        let cases = [
            (0, "0 bytes"),
            (1, "1 byte"),
            (1023, "1023 bytes"),
            (1024, "1 KiB"),
            (1536, "1.5 KiB"),
            (1945, "1.9 KiB"),
            (1_468_006, "1.4 MiB"),
            ((1 << 20) - 1, "1 MiB"),
            (3 << 20, "3 MiB"),
            ((3 << 20) + (4 << 20) / 10, "3.4 MiB"),
            ((10 << 20) - 1, "10 MiB"),
            ((9 << 20) + (9 << 20) / 10, "9.9 MiB"),
            (96 << 20, "96 MiB"),
            ((96 << 20) + (1 << 19), "97 MiB"),
            ((96 << 20) + (1 << 18), "96 MiB"),
            (3 << 30, "3 GiB"),
            (5 << 40, "5 TiB"),
            (1 << 52, "4096 TiB"),
        ];
        for (bytes, text) in cases {
            assert_eq!(size_text(bytes), text, "{bytes}");
        }
    }

    #[test]
    fn sizes_that_would_read_alike_are_told_apart_in_bytes() {
        assert_eq!(size_texts_apart(5 << 20, 3 << 20), ("5 MiB".into(), "3 MiB".into()));
        assert_eq!(
            size_texts_apart(1_500_000, 1_468_006),
            ("1,500,000 bytes".into(), "1,468,006 bytes".into())
        );
        assert_eq!(size_texts_apart(2 << 20, 2 << 20), ("2 MiB".into(), "2 MiB".into()));
    }
}
