//! The tape scanner against serde_json on generated and mutated JSON: the same items must give
//! the same ids, the same errors and the same profile either way, and whatever the scanner
//! accepts serde_json must accept too.

use serde::de::IgnoredAny;

use super::ProfileBuilder;
use super::tape::{Token, scan};

/// A small deterministic generator of JSON text in many spellings, valid and not.
pub(super) struct Gen(pub(super) fastrand::Rng);

impl Gen {
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.0.usize(..options.len())]
    }

    fn space(&mut self) -> &'static str {
        if self.0.u8(..) < 200 { "" } else { self.pick(&[" ", "\n", "\t", "\r\n", "  "]) }
    }

    fn digits(&mut self, lengths: std::ops::Range<usize>) -> String {
        let n = self.0.usize(lengths);
        (0..n)
            .map(|i| char::from(b'0' + if i == 0 { self.0.u8(1..10) } else { self.0.u8(0..10) }))
            .collect()
    }

    fn number(&mut self) -> String {
        let sign = if self.0.bool() { "-" } else { "" };
        let whole = match self.0.u8(0..10) {
            0 => "0".to_string(),
            1 => self.digits(17..23),
            _ => self.digits(1..8),
        };
        let fraction = match self.0.u8(0..6) {
            0 | 1 => String::new(),
            2 => format!(".{}", self.digits(15..30)),
            _ => format!(
                ".{}",
                (0..self.0.usize(1..6))
                    .map(|_| char::from(b'0' + self.0.u8(0..10)))
                    .collect::<String>()
            ),
        };
        let exponent = match self.0.u8(0..8) {
            0 => format!("e{}", self.0.i32(-330..330)),
            1 => format!("E+{}", self.0.u8(0..30)),
            2 => format!("e-{}", self.0.u8(0..30)),
            _ => String::new(),
        };
        format!("{sign}{whole}{fraction}{exponent}")
    }

    fn string(&mut self) -> String {
        let parts = [
            "a",
            "id",
            "é",
            "日本",
            "😀",
            "x y",
            "\\\"",
            "\\\\",
            "\\n",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\/",
            "2024-01-01T00:00:00Z",
            "user@example.com",
        ];
        let n = self.0.usize(0..4);
        let mut out = String::from("\"");
        for _ in 0..n {
            out.push_str(self.pick(&parts));
        }
        // A long plain string now and then crosses the scanner's eight-byte steps.
        if self.0.u8(..) < 20 {
            out.push_str(&"abcdefghij".repeat(self.0.usize(1..30)));
        }
        out.push('"');
        out
    }

    fn value(&mut self, depth: usize) -> String {
        let kind = if depth > 5 { self.0.u8(0..6) } else { self.0.u8(0..9) };
        match kind {
            0 => self.number(),
            1 => self.string(),
            2 => self.pick(&["true", "false", "null"]).to_string(),
            3 => self.number(),
            4 | 5 => self.string(),
            6 | 7 => {
                // Keys repeat within objects, some only once decoded (`\u0061` is `a`).
                let keys = ["id", "a", "b", "name", "tags", "id", "é", "a.b", "\\u0061"];
                let members: Vec<String> = (0..self.0.usize(0..5))
                    .map(|_| {
                        let key = self.pick(&keys);
                        format!(
                            "{}\"{key}\"{}:{}{}",
                            self.space(),
                            self.space(),
                            self.space(),
                            self.value(depth + 1)
                        )
                    })
                    .collect();
                format!("{{{}{}}}", members.join(","), self.space())
            }
            _ => {
                let items: Vec<String> = (0..self.0.usize(0..5))
                    .map(|_| format!("{}{}", self.space(), self.value(depth + 1)))
                    .collect();
                format!("[{}{}]", items.join(","), self.space())
            }
        }
    }

    /// An item: usually an object with an `id`, sometimes anything; now and then damaged.
    pub(super) fn item(&mut self) -> String {
        let mut text = if self.0.u8(..) < 200 {
            let id = match self.0.u8(0..4) {
                0 => self.number(),
                1 => self.pick(&["true", "null", "{}", "[1]"]).to_string(),
                _ => self.string(),
            };
            format!("{}{{\"id\":{id},\"v\":{}}}{}", self.space(), self.value(1), self.space())
        } else {
            self.value(0)
        };
        if self.0.u8(..) < 60 {
            let mut chars: Vec<char> = text.chars().collect();
            let at = self.0.usize(..=chars.len());
            match self.0.u8(0..3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                _ => chars.insert(
                    at,
                    self.pick(&[
                        "\"", ",", ":", "[", "]", "{", "}", "0", "-", ".", "e", " ", "\\", "\u{1}",
                        "x",
                    ])
                    .chars()
                    .next()
                    .unwrap_or(' '),
                ),
            }
            text = chars.into_iter().collect();
        }
        text
    }
}

#[test]
fn the_tape_and_serde_json_profile_every_item_alike() {
    let mut generator = Gen(fastrand::Rng::with_seed(20261125));
    let (mut scanned, mut declined, mut invalid) = (0, 0, 0);
    let mut compared_parsed = 0;
    let mut tape: Vec<Token> = Vec::new();
    let mut unescaped = String::new();
    for batch in 0..400 {
        let mut fast = ProfileBuilder::new().capture_ids();
        let mut serde = ProfileBuilder::new().capture_ids();
        // Parsed first, as an application reads the items (a repeated key keeps its last value).
        let mut parsed = ProfileBuilder::new();
        let mut failed = false;
        let mut good = 0;
        for _ in 0..50 {
            let text = generator.item();
            let accepted = scan(&text, &mut tape, &mut unescaped);
            let serde_ok = serde_json::from_str::<IgnoredAny>(&text).is_ok();
            assert!(!accepted || serde_ok, "the scanner accepted what serde_json refuses: {text}");
            match (accepted, serde_ok) {
                (true, _) => scanned += 1,
                (false, true) => declined += 1,
                (false, false) => invalid += 1,
            }
            // A builder that saw a bad item is rebuilt by its callers; feed only good ones here,
            // and compare the error on its own.
            if !serde_ok {
                let mut lone = ProfileBuilder::new();
                assert!(lone.add_json(&text).is_err(), "{text}");
                continue;
            }
            let id_text = |id: Option<crate::ItemId>| id.map(|id| id.resolve(&text).to_string());
            let ours = fast.add_json(&text).map(id_text).map_err(|e| e.to_string());
            let theirs = serde.add_json_by_serde(&text).map(id_text).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
            match ours {
                Ok(_) => parsed.add_value(&serde_json::from_str(&text).expect("profiled")),
                // Counted in part up to the error (`add_json` does not check first).
                Err(_) => failed = true,
            }
            good += 1;
        }
        let ours = serde_json::to_value(fast.finish(good)).expect("serializable");
        let theirs = serde_json::to_value(serde.finish(good)).expect("serializable");
        assert!(ours == theirs, "batch {batch} profiles differ:\n{ours:#}\nvs\n{theirs:#}");
        if !failed {
            let value = serde_json::to_value(parsed.finish(good)).expect("serializable");
            assert!(ours == value, "batch {batch} differs from parsed:\n{ours:#}\nvs\n{value:#}");
            compared_parsed += 1;
        }
    }
    // The generator must exercise all three outcomes for the comparison to mean anything.
    assert!(
        scanned > 5_000 && declined > 1_000 && invalid > 1_000,
        "scanned {scanned}, declined {declined}, invalid {invalid}"
    );
    assert!(compared_parsed > 100, "{compared_parsed} batches compared with parsed items");
}

#[test]
fn floats_are_bit_identical_to_serde_json() {
    let mut generator = Gen(fastrand::Rng::with_seed(7));
    let mut tape = Vec::new();
    let mut unescaped = String::new();
    let mut compared = 0;
    for _ in 0..50_000 {
        let text = generator.number();
        let Ok(theirs) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        if !scan(&text, &mut tape, &mut unescaped) {
            continue;
        }
        let ours = match tape[..] {
            [Token::Float(f)] => f,
            [Token::Unsigned(u)] => u as f64,
            [Token::Signed(i)] => i as f64,
            _ => panic!("{text}: {tape:?}"),
        };
        let expected = theirs.as_f64().expect("a number");
        assert_eq!(ours.to_bits(), expected.to_bits(), "{text}");
        assert_eq!(matches!(tape[..], [Token::Float(_)]), theirs.is_f64(), "{text}");
        compared += 1;
    }
    assert!(compared > 30_000, "{compared}");
}
