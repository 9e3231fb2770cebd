//! A fast scanner for the common shape of JSON items: one item's text becomes a flat tape of
//! tokens, which the profiler then walks. It is how large files are profiled at the speed of
//! reading them.
//!
//! A string value with escapes is decoded into a buffer beside the tape (commit messages, issue
//! bodies and the like have them in most documents: declining them sent whole documents through
//! serde_json twice, once to check and once to profile).
//!
//! The scanner *declines* rather than fails: anything it does not handle itself — an escape in a
//! key, a `\u` escape of a surrogate, an integer of more than 18 digits, a float out of range,
//! deep nesting, and every kind of invalid JSON — makes it return `false`, and the item goes
//! through serde_json instead, which profiles it or reports the error with its position. So what it accepts is a subset of what
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
    /// A string value that had escapes, decoded: `start` and `len` are offsets into the buffer
    /// [`scan`] decodes such strings into, not into the text.
    Unescaped {
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
///
/// One loop with an explicit stack of open containers, so the position and the tape's length
/// stay in registers: a recursive descent kept them in memory, one store and load per byte.
pub(crate) fn scan(text: &str, tape: &mut Vec<Token>, unescaped: &mut String) -> bool {
    tape.clear();
    unescaped.clear();
    let bytes = text.as_bytes();
    if u32::try_from(bytes.len()).is_err() {
        return false;
    }
    // Each open container's token index (an array counts its elements in its token as it goes).
    let mut open = [0u32; MAX_NESTING];
    let mut depth = 0;
    let mut pos = skip_whitespace(bytes, 0);
    'value: loop {
        // A value starts at `pos`.
        match bytes.get(pos) {
            Some(&byte @ (b'{' | b'[')) => {
                if depth >= MAX_NESTING {
                    return false;
                }
                let is_object = byte == b'{';
                open[depth] = tape.len() as u32;
                depth += 1;
                tape.push(if is_object {
                    Token::Object { end: 0 }
                } else {
                    Token::Array { end: 0, len: 0 }
                });
                pos = skip_whitespace(bytes, pos + 1);
                if bytes.get(pos) == Some(&(byte + 2)) {
                    // `{}` or `[]`: `}` and `]` are two past their openers.
                    pos += 1;
                    depth -= 1;
                    let end = tape.len() as u32;
                    tape[open[depth] as usize] = if is_object {
                        Token::Object { end }
                    } else {
                        Token::Array { end, len: 0 }
                    };
                } else {
                    if is_object {
                        let Some(next) = member_key(bytes, pos, tape) else { return false };
                        pos = next;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => match string(bytes, pos) {
                Some((start, len, next)) => {
                    tape.push(Token::Str { start, len });
                    pos = next;
                }
                None => {
                    let Some((start, len, next)) = escaped_string(text, pos, unescaped) else {
                        return false;
                    };
                    tape.push(Token::Unescaped { start, len });
                    pos = next;
                }
            },
            Some(b't') => {
                let Some(next) = literal(bytes, pos, b"true") else { return false };
                tape.push(Token::Bool(true));
                pos = next;
            }
            Some(b'f') => {
                let Some(next) = literal(bytes, pos, b"false") else { return false };
                tape.push(Token::Bool(false));
                pos = next;
            }
            Some(b'n') => {
                let Some(next) = literal(bytes, pos, b"null") else { return false };
                tape.push(Token::Null);
                pos = next;
            }
            Some(b'-' | b'0'..=b'9') => {
                let Some((token, next)) = number(bytes, pos) else { return false };
                tape.push(token);
                pos = next;
            }
            _ => return false,
        }
        // A value ended at `pos`: close containers until one goes on, or the text ends.
        loop {
            if depth == 0 {
                return skip_whitespace(bytes, pos) == bytes.len();
            }
            let at = open[depth - 1] as usize;
            pos = skip_whitespace(bytes, pos);
            let end = tape.len() as u32;
            match (bytes.get(pos), &mut tape[at]) {
                (Some(b','), Token::Object { .. }) => {
                    pos = skip_whitespace(bytes, pos + 1);
                    let Some(next) = member_key(bytes, pos, tape) else { return false };
                    pos = next;
                    continue 'value;
                }
                (Some(b','), Token::Array { len, .. }) => {
                    *len += 1;
                    pos = skip_whitespace(bytes, pos + 1);
                    continue 'value;
                }
                (Some(b'}'), Token::Object { end: e }) => *e = end,
                (Some(b']'), Token::Array { end: e, len }) => {
                    *e = end;
                    *len += 1;
                }
                _ => return false,
            }
            pos += 1;
            depth -= 1;
        }
    }
}

/// The index just past the value whose first token is at `at`.
#[inline]
pub(crate) fn skip(tape: &[Token], at: usize) -> usize {
    match tape.get(at) {
        Some(Token::Object { end } | Token::Array { end, .. }) => *end as usize,
        _ => at + 1,
    }
}

/// The first position at or after `pos` that is not whitespace.
#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    // Compact JSON has none: one comparison settles the common case.
    if bytes.get(pos).is_some_and(|&b| b > b' ') {
        return pos;
    }
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// `word` at `pos`: the position after it.
#[inline(always)]
fn literal(bytes: &[u8], pos: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(pos..pos + word.len()) == Some(word)).then_some(pos + word.len())
}

/// An object member's key and its colon, at the key's opening quote (pushed as a token): the
/// position of the member's value.
#[inline(always)]
fn member_key(bytes: &[u8], pos: usize, tape: &mut Vec<Token>) -> Option<usize> {
    if bytes.get(pos) != Some(&b'"') {
        return None;
    }
    let (start, len, next) = string(bytes, pos)?;
    tape.push(Token::Key { start, len });
    let colon = skip_whitespace(bytes, next);
    (bytes.get(colon) == Some(&b':')).then(|| skip_whitespace(bytes, colon + 1))
}

/// A string without escapes or control characters, at its opening quote: its content's start and
/// length, and the position after its closing quote. Sixteen bytes are checked at a time.
#[inline(always)]
fn string(bytes: &[u8], pos: usize) -> Option<(u32, u32, usize)> {
    let start = pos + 1;
    let mut at = start;
    // Both fit: the text's length was checked to fit in u32.
    let close = |at: usize| Some((start as u32, (at - start) as u32, at + 1));
    while let Some(block) = bytes.get(at..).and_then(<[u8]>::first_chunk::<16>) {
        let (quote, other) = breaks(block);
        if quote | other != 0 {
            // The string ends here if its closing quote comes before anything it cannot hold.
            if quote.trailing_zeros() >= other.trailing_zeros() {
                return None;
            }
            return close(at + quote.trailing_zeros() as usize);
        }
        at += 16;
    }
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => return close(at),
            b'\\' | 0..0x20 => return None,
            _ => at += 1,
        }
    }
    None
}

/// The bits of `block`'s bytes (bit `i` for byte `i`) that are a quote, and those that end a
/// plain string's run otherwise: a backslash or a control character.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // SSE2 intrinsics, their one precondition stated below
#[inline(always)]
fn breaks(block: &[u8; 16]) -> (u32, u32) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of every x86_64 target, so these instructions always exist; the one
    // load reads the 16 bytes `block` borrows (unaligned loads are allowed).
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // A byte is a control character when the smaller of it and 0x1f is itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        (
            _mm_movemask_epi8(quote) as u32,
            _mm_movemask_epi8(_mm_or_si128(backslash, control)) as u32,
        )
    }
}

/// [`breaks`] a byte at a time, where SSE2 is not there (and in tests, against it).
#[cfg_attr(target_arch = "x86_64", cfg(test))]
#[inline(always)]
fn breaks_bytewise(block: &[u8; 16]) -> (u32, u32) {
    let (mut quotes, mut others) = (0, 0);
    for (i, &byte) in block.iter().enumerate() {
        quotes |= u32::from(byte == b'"') << i;
        others |= u32::from(byte == b'\\' || byte < 0x20) << i;
    }
    (quotes, others)
}

#[cfg(not(target_arch = "x86_64"))]
use breaks_bytewise as breaks;

/// A string with escapes, at its opening quote, decoded onto the end of `out` as serde_json
/// decodes it: its start and length in `out`, and the position after its closing quote. `None`
/// for a control character, an unknown escape, a `\u` escape of a surrogate (serde_json pairs
/// them or refuses a lone one: left to it), or no closing quote.
fn escaped_string(text: &str, pos: usize, out: &mut String) -> Option<(u32, u32, usize)> {
    let bytes = text.as_bytes();
    let start = out.len();
    let mut at = pos + 1;
    // The start of the run of plain bytes not yet copied (quotes and backslashes are ASCII, so
    // every run is whole characters).
    let mut run = at;
    loop {
        match *bytes.get(at)? {
            b'"' => {
                out.push_str(text.get(run..at)?);
                // Both fit: `out` is never longer than the text, whose length fits in u32.
                return Some((start as u32, (out.len() - start) as u32, at + 1));
            }
            b'\\' => {
                out.push_str(text.get(run..at)?);
                let decoded = match *bytes.get(at + 1)? {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let hex = text.get(at + 2..at + 6)?;
                        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            return None;
                        }
                        let code = u32::from_str_radix(hex, 16).ok()?;
                        at += 4;
                        // Surrogates are `None` here.
                        char::from_u32(code)?
                    }
                    _ => return None,
                };
                out.push(decoded);
                at += 2;
                run = at;
            }
            0..0x20 => return None,
            _ => {
                // Skip the plain bytes that follow, sixteen at a time.
                at += 1;
                while let Some(block) = bytes.get(at..).and_then(<[u8]>::first_chunk::<16>) {
                    let (quote, other) = breaks(block);
                    let first = (quote | other).trailing_zeros();
                    at += first.min(16) as usize;
                    if first < 16 {
                        break;
                    }
                }
            }
        }
    }
}

/// Digits from `pos`, appended to `mantissa` (wrapping: callers bound the count): the position
/// after them. Eight bytes at a time where eight remain: a byte loop mispredicted the end of
/// every number.
#[inline(always)]
fn digits(bytes: &[u8], mut pos: usize, mantissa: &mut u64) -> usize {
    while let Some(&word) = bytes.get(pos..).and_then(|rest| rest.first_chunk::<8>()) {
        let word = u64::from_le_bytes(word);
        let n = leading_digits(word);
        if n == 0 {
            return pos;
        }
        *mantissa = mantissa.wrapping_mul(POW10_U64[n]).wrapping_add(eight_digits(word, n));
        pos += n;
        if n < 8 {
            return pos;
        }
    }
    digits_bytewise(bytes, pos, mantissa)
}

/// [`digits`] a byte at a time (the last seven bytes of a text, and the reference in tests).
#[inline(always)]
fn digits_bytewise(bytes: &[u8], mut pos: usize, mantissa: &mut u64) -> usize {
    while let Some(digit @ b'0'..=b'9') = bytes.get(pos).copied() {
        *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(digit - b'0'));
        pos += 1;
    }
    pos
}

/// Powers of ten for up to eight digits.
const POW10_U64: [u64; 9] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// How many of the eight bytes of `word` (little-endian: the first byte lowest) are ASCII
/// digits before the first that is not.
#[inline(always)]
fn leading_digits(word: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // A byte is a digit when its high nibble is 3 and adding 6 does not carry out of its low
    // nibble. A carry out of a byte (0xFA and up) reaches only later bytes, past a non-digit.
    let high = (word & (0xF0 * ONES)) ^ (0x30 * ONES);
    let low = (word.wrapping_add(0x06 * ONES) & (0xF0 * ONES)) ^ (0x30 * ONES);
    let other = high | low;
    (other.trailing_zeros() / 8) as usize
}

/// The value of the first `n` (1 to 8) bytes of `word`, all digits.
#[inline(always)]
fn eight_digits(word: u64, n: usize) -> u64 {
    // The digits moved to the top, zeros (leading zeros of the number) below them.
    let mut v = (word & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    // Pairs, then fours, then all eight (the first digit is the lowest byte).
    v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    v = (v * 100 + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    (v * 10_000 + (v >> 32)) & 0xFFFF_FFFF
}

/// A number at `pos`: its token and the position after it.
#[inline(always)]
fn number(bytes: &[u8], start: usize) -> Option<(Token, usize)> {
    let negative = bytes.get(start) == Some(&b'-');
    let mut pos = start + usize::from(negative);
    let mut mantissa = 0u64;
    let integer_digits = match bytes.get(pos) {
        Some(b'0') => {
            pos += 1;
            1
        }
        Some(b'1'..=b'9') => {
            let end = digits(bytes, pos, &mut mantissa);
            std::mem::replace(&mut pos, end).abs_diff(end)
        }
        _ => return None,
    };
    let mut fraction_digits = 0;
    let mut is_float = false;
    if bytes.get(pos) == Some(&b'.') {
        is_float = true;
        let end = digits(bytes, pos + 1, &mut mantissa);
        fraction_digits = end - (pos + 1);
        if fraction_digits == 0 {
            return None;
        }
        pos = end;
    }
    let mut has_exponent = false;
    if let Some(b'e' | b'E') = bytes.get(pos) {
        is_float = true;
        has_exponent = true;
        pos += 1;
        if let Some(b'+' | b'-') = bytes.get(pos) {
            pos += 1;
        }
        let end = digits(bytes, pos, &mut 0);
        if end == pos {
            return None;
        }
        pos = end;
    }
    if !is_float {
        if integer_digits > MAX_INTEGER_DIGITS {
            return None;
        }
        // Under 10^18, so it fits an i64. serde_json reads `-0` as the float -0.0.
        let token = match (negative, mantissa) {
            (false, m) => Token::Unsigned(m),
            (true, 0) => Token::Float(-0.0),
            (true, m) => Token::Signed(-(m as i64)),
        };
        return Some((token, pos));
    }
    let value = if !has_exponent
        && integer_digits + fraction_digits <= 19
        && mantissa <= 1 << 53
        && fraction_digits < POW10.len()
    {
        // Both operands are exact, so IEEE division rounds the quotient correctly (Clinger's
        // fast path), as serde_json's own parse does.
        let magnitude = mantissa as f64 / POW10[fraction_digits];
        if negative { -magnitude } else { magnitude }
    } else {
        // Numbers are ASCII, so the slice is a str; std's parse is correctly rounded.
        match std::str::from_utf8(&bytes[start..pos]).ok().and_then(|s| s.parse::<f64>().ok()) {
            Some(v) if v.is_finite() => v,
            // serde_json refuses numbers out of range; let it say so.
            _ => return None,
        }
    };
    Some((Token::Float(value), pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight at a time and a byte at a time agree on every run of up to twenty digits, at
    /// every offset, before every kind of byte.
    #[test]
    fn digits_eight_at_a_time_match_the_bytewise_loop() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..20_000 {
            let lead = rng.usize(0..4);
            let n = rng.usize(0..21);
            let mut text: Vec<u8> = (0..lead).map(|_| b' ').collect();
            text.extend((0..n).map(|_| b'0' + rng.u8(0..10)));
            text.extend((0..rng.usize(0..10)).map(|_| rng.u8(..)));
            let (mut a, mut b) = (rng.u64(..1000), 0);
            b += a;
            let ours = digits(&text, lead, &mut a);
            let theirs = digits_bytewise(&text, lead, &mut b);
            assert_eq!((ours, a), (theirs, b), "{text:?}");
        }
        for byte in 0..=255u8 {
            for n in 0..8 {
                let mut word = [b'7'; 8];
                word[n] = byte;
                let expected = if byte.is_ascii_digit() { 8 } else { n };
                assert_eq!(leading_digits(u64::from_le_bytes(word)), expected, "{byte:#x} at {n}");
            }
        }
    }

    fn tokens(text: &str) -> Option<Vec<Token>> {
        let mut tape = Vec::new();
        scan(text, &mut tape, &mut String::new()).then_some(tape)
    }

    #[test]
    fn sixteen_bytes_are_marked_as_one_at_a_time_marks_them() {
        // Every byte value in every position, beside quotes, backslashes and plain bytes.
        let mut block = [b'a'; 16];
        for value in 0..=255u8 {
            for at in 0..16 {
                for other in [b'"', b'\\', 0x1f, 0x20, 0x7f, 0x80, 0xff] {
                    block.fill(b'a');
                    block[at] = value;
                    block[(at * 7 + 3) % 16] = other;
                    assert_eq!(breaks(&block), breaks_bytewise(&block), "{block:?}");
                }
            }
        }
    }

    #[test]
    fn strings_with_escapes_are_decoded_beside_the_tape() {
        let (mut tape, mut unescaped) = (Vec::new(), String::new());
        let text = r#"["a\"b", "x", "l\u00e9\n\t\/\\ok", "日本\r"]"#;
        assert!(scan(text, &mut tape, &mut unescaped));
        let decoded: Vec<&str> = tape
            .iter()
            .filter_map(|t| match *t {
                Token::Unescaped { start, len } => {
                    Some(&unescaped[start as usize..(start + len) as usize])
                }
                Token::Str { start, len } => Some(&text[start as usize..(start + len) as usize]),
                _ => None,
            })
            .collect();
        let theirs: Vec<String> = serde_json::from_str(text).expect("valid");
        assert_eq!(decoded, theirs);
        assert!(matches!(tape[2], Token::Str { .. }));
        // Scanning again starts a fresh buffer.
        assert!(scan(r#"["\n"]"#, &mut tape, &mut unescaped));
        assert_eq!(unescaped, "\n");
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
            r#"{"a\"b": 1}"#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\x""#,
            r#""\u00g9""#,
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
            let tape = tokens(&with_escape).expect("decoded");
            let decoded = content.len() as u32 + 1;
            assert_eq!(tape[..], [Token::Unescaped { start: 0, len: decoded }], "{len}");
            let with_control = format!("\"{content}\u{1}\"");
            assert!(tokens(&with_control).is_none());
        }
    }
}
