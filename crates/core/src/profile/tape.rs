//! A fast scanner for the common shape of JSON items: one item's text becomes a flat tape of
//! tokens, which the profiler then walks. It is how large files are profiled at the speed of
//! reading them.
//!
//! The scanner *declines* rather than fails: anything it does not handle itself — an escape in a
//! string, an integer of more than 18 digits, a float out of range, deep nesting, and every kind
//! of invalid JSON — makes it return `false`, and the item goes through serde_json instead, which
//! profiles it or reports the error with its position. So what it accepts is a subset of what
//! serde_json accepts, and for that subset the tokens carry exactly the values serde_json would
//! give (tests compare the two on generated and mutated input). Because the whole item is scanned
//! before any counter is touched, declining halfway leaves nothing to undo.

/// One token. Offsets are byte offsets into the item's text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Token {
    /// An object; `end` is the index of the first token after its members.
    Object {
        end: u32,
    },
    /// An array of `len` elements; `end` is the index of the first token after them.
    Array {
        end: u32,
        len: u32,
    },
    /// An object member's key (without quotes; never contains an escape).
    Key {
        start: u32,
        len: u32,
    },
    /// A string value (without quotes; never contains an escape).
    Str {
        start: u32,
        len: u32,
    },
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A number with a fraction or exponent (and `-0`, as serde_json reads it).
    Float(f64),
    Bool(bool),
    Null,
}

/// Deeper nesting is left to serde_json (whose own limit is 127 levels).
const MAX_NESTING: usize = 100;

/// Integers with more digits than this are left to serde_json, which decides between `u64`,
/// `i64` and a float for them.
const MAX_INTEGER_DIGITS: usize = 18;

/// Powers of ten exactly representable as `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Scans `text` (one JSON value with optional surrounding whitespace) into `tape`. Returns
/// `false` when the text is not for this scanner (see the module docs); `tape` is then garbage.
pub(crate) fn scan(text: &str, tape: &mut Vec<Token>) -> bool {
    tape.clear();
    if u32::try_from(text.len()).is_err() {
        return false;
    }
    let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0, tape };
    scanner.skip_whitespace();
    if !scanner.value(0) {
        return false;
    }
    scanner.skip_whitespace();
    scanner.pos == scanner.bytes.len()
}

/// The index just past the value whose first token is at `at`.
#[inline]
pub(crate) fn skip(tape: &[Token], at: usize) -> usize {
    match tape.get(at) {
        Some(Token::Object { end } | Token::Array { end, .. }) => *end as usize,
        _ => at + 1,
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    tape: &'a mut Vec<Token>,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bits marking the bytes of `word` equal to `byte`; the lowest marked byte is exact (a
/// borrow can only mark bytes above a real match).
#[inline]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// High bits marking the bytes of `word` that end a plain string's run: a backslash or a control
/// character (lowest marked byte exact, as for [`bytes_equal`]).
#[inline]
fn string_breaks(word: u64) -> u64 {
    bytes_equal(word, b'\\') | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS)
}

impl Scanner<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        // Compact JSON has none: one comparison settles the common case.
        if self.peek().is_some_and(|b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => match self.string() {
                Some((start, len)) => {
                    self.tape.push(Token::Str { start, len });
                    true
                }
                None => false,
            },
            Some(b't') => self.literal(b"true", Token::Bool(true)),
            Some(b'f') => self.literal(b"false", Token::Bool(false)),
            Some(b'n') => self.literal(b"null", Token::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    fn literal(&mut self, word: &[u8], token: Token) -> bool {
        if self.bytes.get(self.pos..self.pos + word.len()) != Some(word) {
            return false;
        }
        self.pos += word.len();
        self.tape.push(token);
        true
    }

    /// The position of the token just pushed, to patch its `end` when the container closes.
    fn open(&mut self, token: Token) -> usize {
        self.pos += 1;
        self.tape.push(token);
        self.tape.len() - 1
    }

    fn end(&self) -> u32 {
        // The tape has at most one token per byte of text, whose length fits in u32.
        self.tape.len() as u32
    }

    fn object(&mut self, depth: usize) -> bool {
        if depth >= MAX_NESTING {
            return false;
        }
        let at = self.open(Token::Object { end: 0 });
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                if self.peek() != Some(b'"') {
                    return false;
                }
                let Some((start, len)) = self.string() else { return false };
                self.tape.push(Token::Key { start, len });
                self.skip_whitespace();
                if self.peek() != Some(b':') {
                    return false;
                }
                self.pos += 1;
                self.skip_whitespace();
                if !self.value(depth + 1) {
                    return false;
                }
                match self.after_member(b'}') {
                    Some(true) => {}
                    Some(false) => break,
                    None => return false,
                }
            }
        }
        self.tape[at] = Token::Object { end: self.end() };
        true
    }

    /// After a member or element: `Some(true)` past a comma (another follows), `Some(false)` past
    /// the container's `close`, `None` on anything else.
    #[inline]
    fn after_member(&mut self, close: u8) -> Option<bool> {
        self.skip_whitespace();
        let byte = self.peek()?;
        self.pos += 1;
        if byte == b',' {
            self.skip_whitespace();
            Some(true)
        } else {
            (byte == close).then_some(false)
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        if depth >= MAX_NESTING {
            return false;
        }
        let at = self.open(Token::Array { end: 0, len: 0 });
        self.skip_whitespace();
        let mut len = 0u32;
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                if !self.value(depth + 1) {
                    return false;
                }
                len += 1;
                match self.after_member(b']') {
                    Some(true) => {}
                    Some(false) => break,
                    None => return false,
                }
            }
        }
        self.tape[at] = Token::Array { end: self.end(), len };
        true
    }

    /// A string without escapes or control characters, at an opening quote: its content's start
    /// and length. Eight bytes are checked at a time.
    #[inline]
    fn string(&mut self) -> Option<(u32, u32)> {
        let start = self.pos + 1;
        let mut at = start;
        while let Some(word) = self.bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            let word = u64::from_le_bytes(*word);
            let (quote, other) = (bytes_equal(word, b'"'), string_breaks(word));
            if quote | other != 0 {
                // The string ends here if its closing quote comes before anything it cannot hold.
                if quote.trailing_zeros() >= other.trailing_zeros() {
                    return None;
                }
                return Some(self.close_string(start, at + (quote.trailing_zeros() / 8) as usize));
            }
            at += 8;
        }
        while let Some(&byte) = self.bytes.get(at) {
            match byte {
                b'"' => return Some(self.close_string(start, at)),
                b'\\' | 0..0x20 => return None,
                _ => at += 1,
            }
        }
        None
    }

    /// Ends the string that started at `start` at its closing quote at `at`.
    #[inline]
    fn close_string(&mut self, start: usize, at: usize) -> (u32, u32) {
        self.pos = at + 1;
        // Both fit: the text's length was checked to fit in u32.
        (start as u32, (at - start) as u32)
    }

    /// Digits from the current position, appended to `mantissa` (wrapping: callers bound the
    /// count); returns how many.
    #[inline]
    fn digits(&mut self, mantissa: &mut u64) -> usize {
        let from = self.pos;
        while let Some(digit @ b'0'..=b'9') = self.peek() {
            *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
            self.pos += 1;
        }
        self.pos - from
    }

    fn number(&mut self) -> bool {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let mut mantissa = 0u64;
        let integer_digits = match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                1
            }
            Some(b'1'..=b'9') => self.digits(&mut mantissa),
            _ => return false,
        };
        let mut fraction_digits = 0;
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            is_float = true;
            fraction_digits = self.digits(&mut mantissa);
            if fraction_digits == 0 {
                return false;
            }
        }
        let mut has_exponent = false;
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            is_float = true;
            has_exponent = true;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            let mut ignored = 0;
            if self.digits(&mut ignored) == 0 {
                return false;
            }
        }
        if !is_float {
            if integer_digits > MAX_INTEGER_DIGITS {
                return false;
            }
            // Under 10^18, so it fits an i64. serde_json reads `-0` as the float -0.0.
            let token = match (negative, mantissa) {
                (false, m) => Token::Unsigned(m),
                (true, 0) => Token::Float(-0.0),
                (true, m) => Token::Signed(-(m as i64)),
            };
            self.tape.push(token);
            return true;
        }
        let digits = integer_digits + fraction_digits;
        let value = if !has_exponent
            && digits <= 19
            && mantissa <= 1 << 53
            && fraction_digits < POW10.len()
        {
            // Both operands are exact, so IEEE division rounds the quotient correctly (Clinger's
            // fast path), as serde_json's own parse does.
            let magnitude = mantissa as f64 / POW10[fraction_digits];
            if negative { -magnitude } else { magnitude }
        } else {
            // Numbers are ASCII, so the slice is a str; std's parse is correctly rounded.
            match std::str::from_utf8(&self.bytes[start..self.pos])
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
            {
                Some(v) if v.is_finite() => v,
                // serde_json refuses numbers out of range; let it say so.
                _ => return false,
            }
        };
        self.tape.push(Token::Float(value));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Option<Vec<Token>> {
        let mut tape = Vec::new();
        scan(text, &mut tape).then_some(tape)
    }

    #[test]
    fn scans_objects_arrays_and_scalars() {
        let tape =
            tokens(r#" {"a": [1, -2, 2.5, "x"], "b": {"c": null}, "d": true} "#).expect("scanned");
        assert_eq!(
            tape,
            vec![
                Token::Object { end: 13 },
                Token::Key { start: 3, len: 1 },
                Token::Array { end: 7, len: 4 },
                Token::Unsigned(1),
                Token::Signed(-2),
                Token::Float(2.5),
                Token::Str { start: 21, len: 1 },
                Token::Key { start: 27, len: 1 },
                Token::Object { end: 11 },
                Token::Key { start: 33, len: 1 },
                Token::Null,
                Token::Key { start: 45, len: 1 },
                Token::Bool(true),
            ]
        );
        assert_eq!(skip(&tape, 2), 7);
        assert_eq!(skip(&tape, 0), 13);
        assert_eq!(skip(&tape, 3), 4);
    }

    #[test]
    fn declines_what_serde_json_must_decide() {
        for text in [
            r#""a\"b""#,
            "\"tab\there\"",
            "12345678901234567890",
            "1e400",
            "-",
            "01",
            "1.",
            ".5",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "[1 2]",
            "tru",
            "nul",
            "\"open",
            "{} {}",
            "[",
            "",
        ] {
            assert!(tokens(text).is_none(), "{text:?}");
        }
        let deep = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert!(tokens(&deep).is_none());
    }

    #[test]
    fn numbers_read_as_serde_json_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "999999999999999999",
            "0.1",
            "-0.0",
            "48.10",
            "1e3",
            "1E-7",
            "2.5e+2",
            "123456.789012345678",
            "0.30000000000000004",
        ] {
            let ours = tokens(text).expect("scanned");
            let theirs: serde_json::Value = serde_json::from_str(text).expect("valid");
            let expected = if let Some(u) = theirs.as_u64() {
                Token::Unsigned(u)
            } else if let Some(i) = theirs.as_i64() {
                Token::Signed(i)
            } else {
                Token::Float(theirs.as_f64().expect("a number"))
            };
            assert_eq!(ours, vec![expected], "{text}");
            if let [Token::Float(a)] = ours[..] {
                assert_eq!(a.to_bits(), expected_bits(&expected), "{text}");
            }
        }
    }

    fn expected_bits(token: &Token) -> u64 {
        match token {
            Token::Float(f) => f.to_bits(),
            _ => 0,
        }
    }

    #[test]
    fn strings_find_their_end_at_every_alignment() {
        for len in 0..40 {
            let content: String = "é".repeat(len / 2) + &"x".repeat(len % 2);
            let text = format!("[\"{content}\",1]");
            let tape = tokens(&text).expect("scanned");
            assert_eq!(tape[1], Token::Str { start: 2, len: content.len() as u32 }, "{len}");
            let with_escape = format!("\"{content}\\n\"");
            assert!(tokens(&with_escape).is_none());
            let with_control = format!("\"{content}\u{1}\"");
            assert!(tokens(&with_control).is_none());
        }
    }
}
