//! CSV and TSV files, read with `csv-core` over the mapped file, split into parts read on
//! every core. Types come from every row: a large file is profiled in one pass with the types
//! its first MiB of rows suggests, every field checked against them as it is read (a column
//! whose type was wrong is profiled again, alone); a file whose parts would start inside quoted
//! line breaks is typed in a first pass, then profiled in a second.
//!
//! **The choices, stated** (the load's warnings say the ones it made for a file):
//! - A UTF-8 byte-order mark is skipped. The delimiter is the one of `,` `\t` `;` `|` that
//!   splits the first lines into the same number (> 1) of fields most often (`\t` for `.tsv`
//!   and `.tab`); quotes are `"`, doubled inside a quoted field.
//! - An empty field is null.
//! - Each column has one type, decided from every row (not a sample), so that no later row can
//!   contradict it: `boolean` when every value is `true` or `false` (any case), `integer` when
//!   every value is one written as JSON writes integers (no `+`, no leading zeros — `007` and
//!   zip codes stay text — within `i64`), `integer` as `DECIMAL(20,0)` when some are past
//!   `i64` but every one's magnitude is within `u64` (exactly, as the profile of a JSON file
//!   holds them), `number` when every value is a JSON number and one has a fraction or exponent
//!   (integers in it read as doubles), else `text` — an integer written past `u64`'s magnitude
//!   too: no exact number type holds it (a 25-digit code is an identifier; as a double it would
//!   merge with its neighbours).
//! - The first row is the header unless every one of its fields fits the type its column has in
//!   the other rows and at least one column is not text (a file of numbers has no header).
//!   Empty header names become `column_N`, repeated ones get `_2`, `_3`.
//! - A row with fewer fields than the header has nulls for the missing ones; a row with more is
//!   skipped. Both are reported with their line, as are fields that are not UTF-8 (read with
//!   U+FFFD in place of the bad bytes) and fields longer than [`LONG_FIELD`] bytes.

use std::path::Path;
use std::str::Utf8Error;
use std::sync::Arc;

use super::{Budget, TableRead, TableWorker};
use crate::error::{LoadWarning, SourceError};
use crate::source::Progress;
use arrow_array::builder::{
    BooleanBuilder, Decimal128Builder, Float64Builder, Int64Builder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use csv_core::{ReadRecordResult, Reader, ReaderBuilder};

/// Fields longer than this are reported (they are still read).
pub(super) const LONG_FIELD: usize = 1 << 20;
/// Rows per batch.
const BATCH_ROWS: usize = 8_192;
/// Bytes per part the second pass shares out among the cores.
const PART_BYTES: u64 = 8 << 20;
/// Bad rows reported one by one; the rest are counted.
const WARNINGS_KEPT: usize = 100;
/// Bytes the delimiter is chosen from.
const SNIFF_BYTES: usize = 64 << 10;
/// Bytes of lines split from one search for their delimiters, line ends and quotes (a few in
/// tests, so that the readings compared there cross windows).
const MARKS_WINDOW: usize = if cfg!(test) { 16 } else { 1 << 20 };

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Only empty fields so far.
    Empty,
    Boolean,
    Integer,
    /// Integers past `i64` of a magnitude within `u64`: read as `DECIMAL(20,0)`, exactly.
    Wide,
    Number,
    Text,
}

impl Kind {
    /// The type of one non-empty field.
    fn of(field: &[u8]) -> Kind {
        if field.eq_ignore_ascii_case(b"true") || field.eq_ignore_ascii_case(b"false") {
            return Kind::Boolean;
        }
        json_number(field).unwrap_or(Kind::Text)
    }

    /// The type of a column holding values of both types.
    fn join(self, other: Kind) -> Kind {
        use Kind::*;
        match (self, other) {
            (Empty, k) | (k, Empty) => k,
            (a, b) if a == b => a,
            (Integer, Wide) | (Wide, Integer) => Wide,
            (Integer | Wide, Number) | (Number, Integer | Wide) => Number,
            _ => Text,
        }
    }

    /// The type a column of this type is read as (a column with no value yet, as text).
    fn reading(self) -> Kind {
        if self == Kind::Empty { Kind::Text } else { self }
    }

    fn data_type(self) -> DataType {
        match self {
            Kind::Boolean => DataType::Boolean,
            Kind::Integer => DataType::Int64,
            Kind::Wide => DataType::Decimal128(WIDE_DIGITS, 0),
            Kind::Number => DataType::Float64,
            Kind::Empty | Kind::Text => DataType::Utf8,
        }
    }
}

/// Digits of the decimal that holds every integer of `i64` and of `u64`.
const WIDE_DIGITS: u8 = 20;

/// A field read by JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
struct JsonNumber {
    negative: bool,
    /// Every digit, whole and fraction, as one integer (wrapped past 19 digits).
    mantissa: u64,
    /// How many digits the mantissa was read from.
    digits: usize,
    /// Digits of the whole part.
    whole: usize,
    /// The power of ten the mantissa is multiplied by (the exponent written, less the fraction's
    /// digits; the written one bounded far past any double's).
    exponent: i64,
    /// A fraction or an exponent was written.
    fraction: bool,
    /// An exponent was written.
    exponent_written: bool,
}

impl JsonNumber {
    /// `field` read as a JSON number, `None` when it is not one.
    fn scan(field: &[u8]) -> Option<Self> {
        let (negative, rest) = match field.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, field),
        };
        let mut number = Self {
            negative,
            mantissa: 0,
            digits: 0,
            whole: 0,
            exponent: 0,
            fraction: false,
            exponent_written: false,
        };
        let mut i = 0;
        let digits = |number: &mut Self, i: &mut usize| {
            let start = *i;
            while let Some(&d) = rest.get(*i).filter(|d| d.is_ascii_digit()) {
                number.mantissa =
                    number.mantissa.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                *i += 1;
            }
            number.digits += *i - start;
            *i - start
        };
        number.whole = digits(&mut number, &mut i);
        // A whole part, without a leading zero unless it is the zero.
        if number.whole == 0 || (number.whole > 1 && rest[0] == b'0') {
            return None;
        }
        if rest.get(i) == Some(&b'.') {
            i += 1;
            let n = digits(&mut number, &mut i);
            if n == 0 {
                return None;
            }
            number.exponent -= n as i64;
            number.fraction = true;
        }
        if matches!(rest.get(i), Some(b'e' | b'E')) {
            i += 1;
            let minus = rest.get(i) == Some(&b'-');
            if matches!(rest.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let start = i;
            let mut written: i64 = 0;
            while let Some(&d) = rest.get(i).filter(|d| d.is_ascii_digit()) {
                // Far past any double's exponent; bounded so it cannot overflow.
                written = (written * 10 + i64::from(d - b'0')).min(1 << 20);
                i += 1;
            }
            if i == start {
                return None;
            }
            number.exponent += if minus { -written } else { written };
            number.fraction = true;
            number.exponent_written = true;
        }
        (i == rest.len()).then_some(number)
    }
}

/// The kind of a JSON number: [`Kind::Integer`] within `i64`, [`Kind::Wide`] past it of a
/// magnitude within `u64`, [`Kind::Number`] for any other finite one; `None` for anything else.
fn json_number(field: &[u8]) -> Option<Kind> {
    let number = JsonNumber::scan(field)?;
    // Any integer `i64` or `u64` holds (19-digit ids too), exactly; longer ones are text, not
    // doubles that would merge neighbouring values.
    if !number.fraction && parse_integer(field).is_some() {
        return Some(Kind::Integer);
    }
    if !number.fraction {
        return parse_wide(field).map(|_| Kind::Wide);
    }
    // Without an exponent, fewer than 309 whole digits are a finite double.
    if !number.exponent_written && number.whole <= 308 {
        return Some(Kind::Number);
    }
    let finite = std::str::from_utf8(field).ok()?.parse::<f64>().ok()?.is_finite();
    finite.then_some(Kind::Number)
}

/// The integer a field of ASCII digits (after an optional `-`) spells, if its magnitude lies
/// within `u64` (so a `DECIMAL(20,0)` holds it).
fn parse_wide(field: &[u8]) -> Option<i128> {
    let (negative, digits) = match field.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, field),
    };
    if digits.is_empty() {
        return None;
    }
    let mut magnitude: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    let magnitude = i128::from(magnitude);
    Some(if negative { -magnitude } else { magnitude })
}

/// Whether csv-core, having read `raw` (a record's bytes to the end of the input), is still
/// inside a quoted field: a quote at a field's start opens one, `""` in it is a quote, a lone
/// quote closes it; a quote anywhere else is a character.
fn ends_inside_quotes(raw: &[u8], delimiter: u8) -> bool {
    #[derive(PartialEq)]
    enum At {
        FieldStart,
        Plain,
        Quoted,
        QuoteInQuoted,
    }
    let mut at = At::FieldStart;
    for &b in raw {
        at = match at {
            At::Quoted if b == b'"' => At::QuoteInQuoted,
            At::Quoted => At::Quoted,
            At::QuoteInQuoted if b == b'"' => At::Quoted,
            At::FieldStart if b == b'"' => At::Quoted,
            _ if b == delimiter || b == b'\n' || b == b'\r' => At::FieldStart,
            _ => At::Plain,
        };
    }
    at == At::Quoted
}

/// The `i64` a field spells when it is an integer as JSON writes it (no leading zeros) that
/// `i64` holds: the fields [`Kind::of`] types [`Kind::Integer`].
fn json_integer(field: &[u8]) -> Option<i64> {
    let digits = field.strip_prefix(b"-").unwrap_or(field);
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    parse_integer(field)
}

/// The double a JSON number with a fraction or an exponent spells (`12.5`, `-0.25`, `3e-4`),
/// when it has at most 19 significant digits and a small exponent — as prices, measures and
/// coordinates have: the digits as an integer times or divided by a power of ten, both exact
/// doubles, so the one operation rounds correctly (Clinger's fast path), as `str::parse` does.
/// `None` for anything else, which [`Kind::of`] and `str::parse` then read: integers, other
/// numbers, text. Typing and reading such a field in one step saves scanning it twice (6 % of
/// a CSV profile with two such columns).
fn json_fraction(field: &[u8]) -> Option<f64> {
    /// Powers of ten a double holds exactly.
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let number = JsonNumber::scan(field)?;
    // 19 digits cannot wrap a u64; the mantissa exact as a double.
    if !number.fraction || number.digits > 19 || number.mantissa > 1 << 53 {
        return None;
    }
    let power = *POWERS.get(usize::try_from(number.exponent.unsigned_abs()).ok()?)?;
    let mantissa = number.mantissa as f64;
    let magnitude = if number.exponent < 0 { mantissa / power } else { mantissa * power };
    Some(if number.negative { -magnitude } else { magnitude })
}

/// The `i64` a field of ASCII digits (after an optional `-`) spells, if it holds one: what
/// `str::parse` reads, without checking the bytes are UTF-8 first.
fn parse_integer(field: &[u8]) -> Option<i64> {
    parse_wide(field).and_then(|value| i64::try_from(value).ok())
}

/// How a file is split into fields.
#[derive(Debug, Clone, Copy)]
struct Dialect {
    delimiter: u8,
}

impl Dialect {
    fn reader(self) -> Reader {
        ReaderBuilder::new().delimiter(self.delimiter).build()
    }
}

/// One record: its fields (unescaped) and the line it starts on.
struct Record {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    /// Where its first byte is in the input.
    start: usize,
}

impl Record {
    fn new() -> Self {
        Self { bytes: vec![0; 1 << 12], ends: vec![0; 64], start: 0 }
    }

    fn field(&self, ends_len: usize, i: usize) -> &[u8] {
        if i >= ends_len {
            return &[];
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

/// Reads records from `input` one at a time (see [`next_record`]).
struct Records<'a> {
    reader: Reader,
    input: &'a [u8],
    at: usize,
    record: Record,
    /// Fields of the current record.
    fields: usize,
    /// The line `input` starts on.
    first_line: u64,
    /// Line ends in `input[..counted]`: counted here, not by the reader (which counts a CRLF's
    /// `\n` with the record after it, and no lone `\r`).
    newlines: std::cell::Cell<u64>,
    counted: std::cell::Cell<usize>,
    delimiter: u8,
    /// The current record's fields as ranges of the input, when its line had no quote and was
    /// split without csv-core (see [`Records::unquoted_record`]); `record` holds them otherwise.
    spans: Vec<(usize, usize)>,
    split_here: bool,
    /// Whether csv-core has read a record yet.
    core_read: bool,
    /// Every delimiter, `\n` and quote of the current window of the input in order (offsets
    /// from `marks_from`), for a window without `\r`: one pass over a window finds the fields
    /// of every line, where three searches per line (its end, a quote, its delimiters) spent
    /// most of their time starting.
    marks: Option<std::iter::Peekable<memchr::Memchr3<'a>>>,
    marks_from: usize,
    /// Where the current window ends (just after a `\n`, or at the end of the input): a window
    /// is looked at when a line starts past the one before, so a pass reads the input in step,
    /// and a mapped file's pages are given back behind it, never all mapped in at once.
    marks_until: usize,
    /// Every record read by csv-core (to compare the two readings).
    #[cfg(test)]
    core_only: bool,
    /// `input[..text_until]` as text, when all of it is UTF-8: the fields split there are then
    /// slices of it, checked once (settled when first asked).
    text: std::cell::OnceCell<Option<&'a str>>,
    text_until: usize,
    /// Whether a record read so far spans lines (a quoted field holds a line break).
    spanned: bool,
    /// See [`Records::resume`].
    resume: usize,
    /// Where the record that ran to the end of the input inside a quoted field starts.
    unclosed: Option<usize>,
}

impl<'a> Records<'a> {
    fn new(dialect: Dialect, input: &'a [u8], first_line: u64) -> Self {
        Self {
            reader: dialect.reader(),
            input,
            at: 0,
            record: Record::new(),
            fields: 0,
            first_line,
            newlines: std::cell::Cell::new(0),
            counted: std::cell::Cell::new(0),
            delimiter: dialect.delimiter,
            spans: Vec::new(),
            split_here: false,
            core_read: false,
            marks: None,
            marks_from: 0,
            marks_until: 0,
            #[cfg(test)]
            core_only: false,
            text: std::cell::OnceCell::new(),
            text_until: input.len(),
            spanned: false,
            resume: 0,
            unclosed: None,
        }
    }

    /// Reads only the records that start before `stop` as text checked at once (where a
    /// reading of part of a file stops: the rest of the file is not looked at).
    fn stopping_at(mut self, stop: usize) -> Self {
        self.text_until = stop.min(self.input.len());
        self
    }

    /// Reads the record at `start` when its line has no quote, splitting it at the delimiter
    /// directly: csv-core reads such a line into the same fields byte by byte (a quote is the
    /// only byte that makes a line mean anything else, and the record ends at the first `\r`
    /// or `\n`, which is consumed as csv-core consumes it). `None` for a line with a quote, and
    /// for the first record: csv-core reads those.
    fn unquoted_record(&mut self, start: usize) -> Option<bool> {
        #[cfg(test)]
        if self.core_only {
            return None;
        }
        if !self.core_read {
            return None;
        }
        let rest = self.input.get(start..)?;
        if rest.is_empty() {
            self.at = self.input.len();
            return Some(false);
        }
        if start >= self.marks_until {
            self.look_at_window(start);
        }
        self.spans.clear();
        let mut from = start;
        let end = match &mut self.marks {
            Some(marks) => {
                let base = self.marks_from;
                // Marks of lines csv-core read are behind.
                while marks.next_if(|&at| base + at < start).is_some() {}
                loop {
                    let Some(&at) = marks.peek() else { break self.marks_until };
                    let at = base + at;
                    match self.input.get(at) {
                        Some(b'"') => return None,
                        Some(b'\n') => {
                            marks.next();
                            break at;
                        }
                        _ => {
                            marks.next();
                            self.spans.push((from, at));
                            from = at + 1;
                        }
                    }
                }
            }
            None => {
                let end = start + memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
                let line = &self.input[start..end];
                if memchr::memchr(b'"', line).is_some() {
                    return None;
                }
                for at in memchr::memchr_iter(self.delimiter, line) {
                    self.spans.push((from, start + at));
                    from = start + at + 1;
                }
                end
            }
        };
        self.spans.push((from, end));
        self.fields = self.spans.len();
        self.split_here = true;
        self.at = (end + 1).min(self.input.len());
        Some(true)
    }

    /// Decides how the lines of the window starting at `start` are split: the window runs
    /// [`MARKS_WINDOW`] bytes on to the end of the line there; its marks are searched for in one
    /// pass when it holds no `\r` (where a lone `\r` would end a record).
    fn look_at_window(&mut self, start: usize) {
        let input = self.input;
        let reach = start.saturating_add(MARKS_WINDOW).min(input.len());
        let until = match memchr::memchr(b'\n', &input[reach..]) {
            Some(at) => reach + at + 1,
            None => input.len(),
        };
        let window = &input[start..until];
        let plain = !matches!(self.delimiter, b'"' | b'\n' | b'\r');
        self.marks = (plain && memchr::memchr(b'\r', window).is_none())
            .then(|| memchr::memchr3_iter(self.delimiter, b'\n', b'"', window).peekable());
        self.marks_from = start;
        self.marks_until = until;
    }

    /// The line of byte `at` of the input (at or after the last asked for).
    fn line_at(&self, at: usize) -> u64 {
        let (at, counted) = (at.min(self.input.len()), self.counted.get());
        if at > counted {
            // A line ends at `\n`, at `\r\n`, or at a lone `\r`, as csv-core ends records.
            let input = self.input;
            let more = memchr::memchr2_iter(b'\n', b'\r', &input[counted..at])
                .filter(|&i| {
                    input[counted + i] == b'\n' || input.get(counted + i + 1) != Some(&b'\n')
                })
                .count() as u64;
            self.newlines.set(self.newlines.get() + more);
            self.counted.set(at);
        }
        self.first_line + self.newlines.get()
    }

    /// The line the current record starts on (counted only when asked: most records never
    /// are).
    fn line(&self) -> u64 {
        self.line_at(self.record.start)
    }

    /// Reads the next record; `false` at the end.
    fn next_record(&mut self) -> bool {
        let (mut out, mut ends) = (0, 0);
        // The record starts past the line break the one before left unread (a CRLF's `\n`).
        let mut start = self.at;
        while matches!(self.input.get(start), Some(b'\r' | b'\n')) {
            start += 1;
        }
        self.record.start = start;
        if let Some(read) = self.unquoted_record(start) {
            return read;
        }
        self.split_here = false;
        // csv-core drops a byte-order mark its first read starts with; the file's own mark is
        // skipped before any reading, so one here (a part's first row, the row after the
        // header) is data: its first read is one byte, too short to be taken for a mark.
        let mut first_read = !self.core_read;
        self.core_read = true;
        loop {
            let mut input = &self.input[self.at..];
            if std::mem::take(&mut first_read) {
                input = &input[..input.len().min(1)];
            }
            let (result, read, wrote, ended) = self.reader.read_record(
                input,
                &mut self.record.bytes[out..],
                &mut self.record.ends[ends..],
            );
            self.at += read;
            out += wrote;
            ends += ended;
            match result {
                ReadRecordResult::InputEmpty if self.at < self.input.len() => continue,
                ReadRecordResult::InputEmpty => {
                    // End of input: finish the last record (one without a final newline).
                    let (result, _, wrote, ended) = self.reader.read_record(
                        &[],
                        &mut self.record.bytes[out..],
                        &mut self.record.ends[ends..],
                    );
                    out += wrote;
                    ends += ended;
                    if matches!(result, ReadRecordResult::Record) {
                        self.fields = ends;
                        self.note_span(start);
                        if ends_inside_quotes(&self.input[start..], self.delimiter) {
                            self.unclosed = Some(start);
                        }
                        return true;
                    }
                    if matches!(result, ReadRecordResult::OutputFull) {
                        self.record.bytes.resize(self.record.bytes.len() * 2, 0);
                        continue;
                    }
                    if matches!(result, ReadRecordResult::OutputEndsFull) {
                        self.record.ends.resize(self.record.ends.len() * 2, 0);
                        continue;
                    }
                    return false;
                }
                ReadRecordResult::OutputFull => {
                    let len = self.record.bytes.len();
                    self.record.bytes.resize(len * 2, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let len = self.record.ends.len();
                    self.record.ends.resize(len * 2, 0);
                }
                ReadRecordResult::Record => {
                    self.fields = ends;
                    self.note_span(start);
                    return true;
                }
                ReadRecordResult::End => return false,
            }
        }
    }

    /// Reads the next record if it starts before `stop` (a part's end); `false` at the end of
    /// the input or past `stop`, where [`Records::resume`] then says the next part starts.
    fn next_before(&mut self, stop: usize) -> bool {
        if self.at >= stop || !self.next_record() {
            self.resume = self.at;
            return false;
        }
        if self.record.start >= stop {
            // Only line breaks lay between the last record and this one (a CRLF's `\n`, blank
            // lines), which the next part skips as well: the record is the next part's.
            self.resume = stop;
            return false;
        }
        true
    }

    /// Where the record after the last one [`Records::next_before`] read starts.
    fn resume(&self) -> usize {
        self.resume
    }

    /// Notes whether the record csv-core read from `start` spans lines: whether a line break
    /// lies before the one that ended it.
    fn note_span(&mut self, start: usize) {
        let read = &self.input[start..self.at.min(self.input.len())];
        let body = match read.split_last() {
            Some((b'\n' | b'\r', body)) => body,
            _ => read,
        };
        self.spanned |= memchr::memchr2(b'\n', b'\r', body).is_some();
    }

    /// The byte offset (within `input`) where the next record starts.
    fn offset(&self) -> usize {
        self.at
    }

    fn field(&self, i: usize) -> &[u8] {
        if self.split_here {
            return self.spans.get(i).and_then(|&(a, b)| self.input.get(a..b)).unwrap_or(&[]);
        }
        self.record.field(self.fields, i)
    }

    /// Field `i` as text, if it is UTF-8.
    fn text(&self, i: usize) -> Result<&str, Utf8Error> {
        if self.split_here
            && let Some(text) = self.text.get_or_init(|| {
                // Checked with SIMD: every byte of a part is checked here, once.
                simdutf8::basic::from_utf8(&self.input[..self.text_until]).ok()
            })
            // Split at ASCII bytes, so on character boundaries.
            && let Some(field) = self.spans.get(i).and_then(|&(a, b)| text.get(a..b))
        {
            return Ok(field);
        }
        std::str::from_utf8(self.field(i))
    }

    /// True for a record of one empty field (a blank line).
    fn blank(&self) -> bool {
        self.fields <= 1 && self.field(0).is_empty()
    }
}

/// The delimiter of `head`: see the module docs.
fn sniff(head: &[u8], path: &Path) -> Dialect {
    let by_name = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("tsv") || e.eq_ignore_ascii_case("tab"));
    if by_name {
        return Dialect { delimiter: b'\t' };
    }
    let mut best = (0usize, b',');
    for delimiter in [b',', b'\t', b';', b'|'] {
        let dialect = Dialect { delimiter };
        let mut records = Records::new(dialect, head, 1);
        let mut counts: Vec<usize> = Vec::new();
        // The last record of the head may be cut short.
        while records.offset() < head.len() && records.next_record() && counts.len() < 200 {
            if !records.blank() {
                counts.push(records.fields);
            }
        }
        if counts.len() > 1 && records.offset() >= head.len() {
            counts.pop();
        }
        let Some(&first) = counts.first() else { continue };
        if first < 2 {
            continue;
        }
        let same = counts.iter().filter(|&&n| n == first).count();
        // Most rows with the header's count, then the most fields.
        let score = same * 1_000 + first.min(999);
        if score > best.0 {
            best = (score, delimiter);
        }
    }
    Dialect { delimiter: best.1 }
}

/// What the first pass learnt.
#[derive(Debug, Clone)]
struct Layout {
    dialect: Dialect,
    /// Where the data starts (past the mark and the header).
    data_start: usize,
    /// The line the data starts on.
    data_line: u64,
    names: Vec<String>,
    kinds: Vec<Kind>,
    /// Whether the first row is the header.
    header: bool,
    /// The header's line, and its fields that are not UTF-8 (1-based).
    header_line: u64,
    bad_names: Vec<usize>,
    /// Parts for the second pass: (start offset, line) of a record every [`PART_BYTES`].
    parts: Vec<(usize, u64)>,
    rows: u64,
    /// The first record's fields (the header, or the first row).
    first: Vec<Vec<u8>>,
}

/// What the first pass learnt of one chunk of the rows after the first.
#[derive(Default)]
struct ChunkScan {
    kinds: Vec<Kind>,
    rows: u64,
    /// (offset within the chunk, line within the chunk from 1) of a record every [`PART_BYTES`].
    parts: Vec<(usize, u64)>,
    /// Where the record after the chunk's last starts, within the chunk.
    end: usize,
    /// Newlines the chunk's records hold.
    newlines: u64,
    /// Whether one of its records spans lines.
    spanned: bool,
}

/// Gives back the pages of a range of the file once read (see [`crate::read::FileBytes`]).
type Release<'a> = &'a (dyn Fn(std::ops::Range<usize>) + Sync);

/// Types the records of `input` that start before `stop`, assuming `input` starts a record;
/// every [`PART_BYTES`] the bytes read are handed to `release` (as offsets within `input`).
/// Records of more than `width` fields are left out: the second pass skips them.
fn scan_chunk(
    dialect: Dialect,
    input: &[u8],
    stop: usize,
    width: usize,
    release: Release<'_>,
) -> ChunkScan {
    let mut records = Records::new(dialect, input, 1);
    let mut scan = ChunkScan::default();
    let mut next_part = 0usize;
    loop {
        let start = records.offset();
        if !records.next_before(stop) {
            break;
        }
        if records.blank() {
            continue;
        }
        if start >= next_part {
            scan.parts.push((records.record.start, records.line()));
            if let Some(&(before, _)) = scan.parts.iter().rev().nth(1) {
                release(before..start);
            }
            next_part = start + PART_BYTES as usize;
        }
        if records.fields > width {
            continue;
        }
        scan.rows += 1;
        if scan.kinds.len() < records.fields {
            scan.kinds.resize(records.fields, Kind::Empty);
        }
        for (i, kind) in scan.kinds.iter_mut().enumerate().take(records.fields) {
            if *kind == Kind::Text {
                continue;
            }
            let field = records.field(i);
            if !field.is_empty() {
                *kind = kind.join(Kind::of(field));
            }
        }
    }
    scan.end = records.resume();
    scan.newlines = records.line_at(scan.end) - 1;
    scan.spanned = records.spanned;
    scan
}

/// Splits `rows` (the bytes after the first record) into one chunk per core at newlines, each
/// scanned on its own core as if it started a record. A chunk that started inside a quoted
/// field is told by the chunk before it, which then ends elsewhere than where it starts: the
/// rows are then scanned again in one piece. So the result is always a single pass's.
fn scan_rows(
    dialect: Dialect,
    rows: &[u8],
    width: usize,
    release: Release<'_>,
) -> Vec<(usize, ChunkScan)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
    let chunks = if rows.len() >= 2 * PART_BYTES as usize { threads } else { 1 };
    scan_in_chunks(dialect, rows, chunks, width, release)
}

/// [`scan_rows`] in `chunks` chunks (fewer where newlines are far apart).
fn scan_in_chunks(
    dialect: Dialect,
    rows: &[u8],
    chunks: usize,
    width: usize,
    release: Release<'_>,
) -> Vec<(usize, ChunkScan)> {
    let mut bounds: Vec<usize> =
        crate::ndjson::line_slices(rows, chunks).into_iter().map(|r| r.start).collect();
    if bounds.is_empty() {
        bounds.push(0);
    }
    bounds.push(rows.len());
    let scans: Vec<ChunkScan> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (start, stop) = (w[0], w[1]);
                let release =
                    move |r: std::ops::Range<usize>| release(start + r.start..start + r.end);
                scope.spawn(move || {
                    scan_chunk(dialect, &rows[start..], stop - start, width, &release)
                })
            })
            .collect();
        handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
    });
    let agreed = scans.iter().zip(bounds.windows(2)).all(|(scan, w)| w[0] + scan.end == w[1]);
    if agreed {
        bounds.into_iter().zip(scans).collect()
    } else {
        vec![(0, scan_chunk(dialect, rows, rows.len(), width, release))]
    }
}

/// The file's first record, which may be its header, and where the rows after it start.
struct Head {
    /// The byte-order mark's length (0 without one).
    mark: usize,
    dialect: Dialect,
    first: Vec<Vec<u8>>,
    /// Its line, and where the record after it starts (in the file past the mark) and its line.
    first_line: u64,
    after_first: usize,
    second_line: u64,
}

impl Head {
    /// Reads the first record of `bytes` (the delimiter sniffed from its first lines).
    fn read(bytes: &[u8], path: &Path) -> Result<Head, SourceError> {
        let mark = if bytes.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        let body = &bytes[mark..];
        let dialect = sniff(&body[..body.len().min(SNIFF_BYTES)], path);
        let mut records = Records::new(dialect, body, 1);
        while records.next_record() {
            if !records.blank() {
                let first = (0..records.fields).map(|i| records.field(i).to_vec()).collect();
                let after_first = records.offset();
                return Ok(Head {
                    mark,
                    dialect,
                    first,
                    first_line: records.line(),
                    after_first,
                    second_line: records.line_at(after_first),
                });
            }
        }
        Err(SourceError::Table { path: path.to_path_buf(), message: "the file has no rows".into() })
    }

    /// The rows after the first.
    fn rest<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.mark + self.after_first..]
    }

    /// The layout of a file whose rows after the first have `kinds` (by column): `parts` start
    /// (offsets and lines in the file past the mark) and `rows` are counted there.
    fn layout(self, mut kinds: Vec<Kind>, mut parts: Vec<(usize, u64)>, mut rows: u64) -> Layout {
        let Head { mark, dialect, first, first_line, after_first, second_line } = self;
        if kinds.len() < first.len() {
            kinds.resize(first.len(), Kind::Empty);
        }
        let header = is_header(&first, &kinds);
        let width = first.len();
        let (names, data_start, data_line) = if header {
            (header_names(&first), mark + after_first, second_line)
        } else {
            // The first row is data: it joins the rows, and its fields the types.
            for (kind, f) in kinds.iter_mut().zip(&first) {
                if !f.is_empty() {
                    *kind = kind.join(Kind::of(f));
                }
            }
            parts.insert(0, (0, 1));
            rows += 1;
            ((1..=kinds.len()).map(|i| format!("column_{i}")).collect(), mark, 1)
        };
        kinds.truncate(names.len().max(width));
        let parts = parts
            .into_iter()
            .map(|(start, line)| (mark + start, line))
            .filter(|(start, _)| *start >= data_start)
            .collect();
        let bad_names = if header {
            first
                .iter()
                .enumerate()
                .filter(|(_, f)| std::str::from_utf8(f).is_err())
                .map(|(i, _)| i + 1)
                .collect()
        } else {
            Vec::new()
        };
        Layout {
            dialect,
            data_start,
            data_line,
            names,
            kinds,
            header,
            header_line: first_line,
            bad_names,
            parts,
            rows,
            first,
        }
    }
}

/// Whether the first row, `first`, is the header of rows of `kinds`: unless every one of its
/// fields fits its column's type and one column is not text (judged on the first row's own
/// columns: a longer row's extra fields say nothing of it).
fn is_header(first: &[Vec<u8>], kinds: &[Kind]) -> bool {
    let own = &kinds[..first.len().min(kinds.len())];
    // A column with no value in the other rows has no type a field could contradict.
    let fits = first
        .iter()
        .zip(own)
        .all(|(f, k)| f.is_empty() || *k == Kind::Empty || k.join(Kind::of(f)) == *k);
    !(fits && own.iter().any(|k| !matches!(k, Kind::Text | Kind::Empty)))
}

/// The first pass: the delimiter, the columns' types, the header, and where each part starts.
fn layout(bytes: &[u8], path: &Path, release: Release<'_>) -> Result<Layout, SourceError> {
    let head = Head::read(bytes, path)?;
    let mut kinds: Vec<Kind> = Vec::new();
    let mut parts = Vec::new();
    let mut rows = 0u64;
    let mut line = head.second_line;
    let offset = head.mark + head.after_first;
    let release = |r: std::ops::Range<usize>| release(offset + r.start..offset + r.end);
    for (start, scan) in scan_rows(head.dialect, head.rest(bytes), head.first.len(), &release) {
        if kinds.len() < scan.kinds.len() {
            kinds.resize(scan.kinds.len(), Kind::Empty);
        }
        for (kind, theirs) in kinds.iter_mut().zip(scan.kinds) {
            *kind = kind.join(theirs);
        }
        rows += scan.rows;
        let after_first = head.after_first;
        parts.extend(scan.parts.iter().map(|&(at, l)| (after_first + start + at, line + l - 1)));
        line += scan.newlines;
    }
    Ok(head.layout(kinds, parts, rows))
}

/// The layout the first [`GUESS_BYTES`] of rows after the first suggest, with no parts and
/// the rows counted there; `None` when a record there spans lines (parts split at newlines
/// would then often start inside one).
fn guess_layout(bytes: &[u8], path: &Path) -> Result<Option<Layout>, SourceError> {
    let head = Head::read(bytes, path)?;
    let scan = scan_chunk(head.dialect, head.rest(bytes), GUESS_BYTES, head.first.len(), &|_| {});
    if scan.spanned {
        return Ok(None);
    }
    Ok(Some(head.layout(scan.kinds, Vec::new(), scan.rows)))
}

/// Header names: empty ones numbered, repeated ones suffixed.
fn header_names(fields: &[Vec<u8>]) -> Vec<String> {
    super::distinct_names(fields.iter().enumerate().map(|(i, f)| {
        let name = String::from_utf8_lossy(f).trim().to_string();
        if name.is_empty() { format!("column_{}", i + 1) } else { name }
    }))
}

/// One column's values being gathered into an Arrow array.
enum ColumnBuilder {
    Boolean(BooleanBuilder),
    Integer(Int64Builder),
    Wide(Decimal128Builder),
    Number(Float64Builder),
    Text(StringBuilder),
}

impl ColumnBuilder {
    fn new(kind: Kind) -> Self {
        Self::sized(kind, BATCH_ROWS * 16)
    }

    /// An empty builder of `kind` for a batch of [`BATCH_ROWS`] rows and, for text, as many
    /// bytes as `text_bytes`.
    fn sized(kind: Kind, text_bytes: usize) -> Self {
        match kind {
            Kind::Boolean => Self::Boolean(BooleanBuilder::with_capacity(BATCH_ROWS)),
            Kind::Integer => Self::Integer(Int64Builder::with_capacity(BATCH_ROWS)),
            Kind::Wide => Self::Wide(
                Decimal128Builder::with_capacity(BATCH_ROWS)
                    .with_data_type(DataType::Decimal128(WIDE_DIGITS, 0)),
            ),
            Kind::Number => Self::Number(Float64Builder::with_capacity(BATCH_ROWS)),
            Kind::Empty | Kind::Text => {
                Self::Text(StringBuilder::with_capacity(BATCH_ROWS, text_bytes))
            }
        }
    }

    /// The type of the values gathered.
    fn kind(&self) -> Kind {
        match self {
            Self::Boolean(_) => Kind::Boolean,
            Self::Integer(_) => Kind::Integer,
            Self::Wide(_) => Kind::Wide,
            Self::Number(_) => Kind::Number,
            Self::Text(_) => Kind::Text,
        }
    }

    /// Appends one field (`text`: the field as text, when it is UTF-8); `Err` with a message
    /// when it is not UTF-8 (appended with U+FFFD). With `check`, the field's type is joined
    /// into it: read together with its value where the column's type is what it has.
    fn push(
        &mut self,
        field: &[u8],
        text: Result<&str, Utf8Error>,
        check: Option<&mut Kind>,
    ) -> Result<(), String> {
        if let Some(kind) = check
            && !field.is_empty()
        {
            match self {
                Self::Integer(b) if *kind != Kind::Text => {
                    if let Some(value) = json_integer(field) {
                        *kind = kind.join(Kind::Integer);
                        b.append_value(value);
                        return Ok(());
                    }
                    *kind = kind.join(Kind::of(field));
                }
                Self::Boolean(b) if *kind != Kind::Text => {
                    let value = if field.eq_ignore_ascii_case(b"true") {
                        Some(true)
                    } else {
                        field.eq_ignore_ascii_case(b"false").then_some(false)
                    };
                    if let Some(value) = value {
                        *kind = kind.join(Kind::Boolean);
                        b.append_value(value);
                        return Ok(());
                    }
                    *kind = kind.join(Kind::of(field));
                }
                Self::Number(b) if *kind != Kind::Text => {
                    if let Some(value) = json_fraction(field) {
                        *kind = kind.join(Kind::Number);
                        b.append_value(value);
                        return Ok(());
                    }
                    *kind = kind.join(Kind::of(field));
                }
                _ if *kind != Kind::Text => *kind = kind.join(Kind::of(field)),
                _ => {}
            }
        }
        if field.is_empty() {
            match self {
                Self::Boolean(b) => b.append_null(),
                Self::Integer(b) => b.append_null(),
                Self::Wide(b) => b.append_null(),
                Self::Number(b) => b.append_null(),
                Self::Text(b) => b.append_null(),
            }
            return Ok(());
        }
        // The first pass typed every field of the column, so these parse; a field that
        // somehow does not is text the type cannot hold, kept as null rather than guessed.
        match self {
            Self::Boolean(b) => b.append_option(text.ok().map(|t| t.eq_ignore_ascii_case("true"))),
            Self::Integer(b) => b.append_option(parse_integer(field)),
            Self::Wide(b) => b.append_option(parse_wide(field)),
            Self::Number(b) => b.append_option(
                json_fraction(field).or_else(|| text.ok().and_then(|t| t.parse().ok())),
            ),
            Self::Text(b) => match text {
                Ok(t) => b.append_value(t),
                Err(_) => {
                    b.append_value(String::from_utf8_lossy(field));
                    return Err("is not UTF-8 (read with U+FFFD in place of the bad bytes)".into());
                }
            },
        }
        Ok(())
    }

    /// The batch's array. Arrow's builders start again from no capacity once finished; the next
    /// batch is gathered into builders sized as this one was, rather than grown by doubling
    /// (copies and fresh pages: 2 % of a CSV profile).
    fn finish(&mut self) -> ArrayRef {
        let text_bytes = match self {
            Self::Text(b) => b.values_slice().len(),
            _ => 0,
        };
        let next = Self::sized(self.kind(), text_bytes);
        match std::mem::replace(self, next) {
            Self::Boolean(mut b) => Arc::new(b.finish()),
            Self::Integer(mut b) => Arc::new(b.finish()),
            Self::Wide(mut b) => Arc::new(b.finish()),
            Self::Number(mut b) => Arc::new(b.finish()),
            Self::Text(mut b) => Arc::new(b.finish()),
        }
    }
}

/// What a part's reading reported: rows with their line, and how many were skipped.
#[derive(Default)]
struct PartReport {
    reported: Vec<Reported>,
    skipped: u64,
}

/// A row that was read but reported.
struct Reported {
    line: u64,
    column: Option<usize>,
    message: String,
}

/// What one part of a pass hands each batch to, with the batch's first row: `false` stops the
/// reading.
type Emit<'a> = dyn FnMut(RecordBatch, u64) -> Result<bool, String> + 'a;

/// A part of the file a pass reads: its start and end offsets, and its first line (1 in a
/// pass whose parts' lines are not known: the rows reported are then placed after it).
type Part = (usize, usize, u64);

/// Where a part's reading ended.
struct PartEnd {
    rows: u64,
    /// The start of the first record at or past the part's end (relative to its start).
    end: usize,
}

/// One part of a pass: the records of `bytes[start..]` that start before `end`, the columns
/// `wanted` (in that order, `schema` being theirs) into batches given to `emit`. With `kinds`,
/// the types of the fields read are joined into it (by column).
fn read_part(
    bytes: &[u8],
    layout: &Layout,
    (schema, wanted): (&Arc<Schema>, &[usize]),
    (start, end, line, first_row): (usize, usize, u64, u64),
    mut kinds: Option<&mut Vec<Kind>>,
    report: &mut PartReport,
    emit: &mut Emit<'_>,
) -> Result<PartEnd, String> {
    let PartReport { reported, skipped } = report;
    let width = layout.names.len();
    let mut columns: Vec<(usize, ColumnBuilder)> = wanted
        .iter()
        .filter_map(|&i| Some((i, ColumnBuilder::new(*layout.kinds.get(i)?))))
        .collect();
    let stop = end - start;
    let mut records = Records::new(layout.dialect, &bytes[start..], line).stopping_at(stop);
    let mut row = first_row;
    let mut in_batch = 0usize;
    let mut batch_first = row;
    let flush = |columns: &mut Vec<(usize, ColumnBuilder)>,
                 rows: usize,
                 batch_first: u64,
                 emit: &mut Emit<'_>|
     -> Result<bool, String> {
        let arrays: Vec<ArrayRef> = columns.iter_mut().map(|(_, c)| c.finish()).collect();
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &options)
            .map_err(|e| e.to_string())?;
        emit(batch, batch_first)
    };
    let ended = |records: &Records<'_>, rows: u64| PartEnd { rows, end: records.resume() };
    while records.next_before(stop) {
        if records.blank() {
            continue;
        }
        let line = || records.line();
        if records.fields > width {
            *skipped += 1;
            if reported.len() < WARNINGS_KEPT {
                reported.push(Reported {
                    line: line(),
                    column: None,
                    message: format!(
                        "skipped: {} fields where the header has {width}",
                        records.fields
                    ),
                });
            }
            continue;
        }
        if records.fields < width && reported.len() < WARNINGS_KEPT {
            reported.push(Reported {
                line: line(),
                column: None,
                message: format!(
                    "{} fields where the header has {width}; the missing ones are null",
                    records.fields
                ),
            });
        }
        for (i, column) in &mut columns {
            let field = records.field(*i);
            if field.len() > LONG_FIELD && reported.len() < WARNINGS_KEPT {
                reported.push(Reported {
                    line: line(),
                    column: Some(*i + 1),
                    message: format!("a field of {} bytes", field.len()),
                });
            }
            let check = kinds.as_deref_mut().and_then(|kinds| kinds.get_mut(*i));
            if let Err(message) = column.push(field, records.text(*i), check)
                && reported.len() < WARNINGS_KEPT
            {
                reported.push(Reported { line: line(), column: Some(*i + 1), message });
            }
        }
        row += 1;
        in_batch += 1;
        if in_batch == BATCH_ROWS {
            if !flush(&mut columns, in_batch, batch_first, emit)? {
                return Ok(ended(&records, row - first_row));
            }
            batch_first = row;
            in_batch = 0;
        }
    }
    if in_batch > 0 {
        flush(&mut columns, in_batch, batch_first, emit)?;
    }
    if let Some(start) = records.unclosed.filter(|&start| start < stop)
        && reported.len() < WARNINGS_KEPT
    {
        reported.push(Reported {
            line: records.line_at(start),
            column: Some(records.fields.max(1)),
            message: "a quoted field is never closed: the rest of the file is read as its text"
                .into(),
        });
    }
    Ok(ended(&records, row - first_row))
}

/// What reading one part of a pass found.
struct PartRead {
    /// Which part.
    index: usize,
    ended: PartEnd,
    report: PartReport,
    /// The types of its fields, by column (when the pass checks them).
    kinds: Vec<Kind>,
}

/// A CSV file being profiled.
struct Profiling<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    release: Release<'a>,
    budget: &'a Budget,
    progress: &'a dyn Progress,
}

/// What a pass read: every core's counters and rows, and what each part found (in order).
struct PassRead {
    workers: Vec<TableWorker>,
    parts: Vec<PartRead>,
}

/// How many bytes of rows after the first the types are guessed from, in one pass: the rest of
/// the rows are checked against the guess as they are profiled.
const GUESS_BYTES: usize = if cfg!(test) { 64 } else { 1 << 20 };

/// Bytes per part of one pass (a few in tests, so that parts meet inside records there).
const ONE_PASS_PART_BYTES: usize = if cfg!(test) { 48 } else { PART_BYTES as usize };

impl Profiling<'_> {
    /// Reads `parts` as `layout` says, shared out among the cores, the rows kept chosen for its
    /// rows. Every column is read (so that the rows kept are whole); `profiled` says which are
    /// profiled, when not all; with `check_kinds`, the types of the fields read are checked (the
    /// layout's are guesses).
    fn pass(
        &self,
        layout: &Layout,
        parts: &[Part],
        profiled: Option<&[usize]>,
        check_kinds: bool,
    ) -> Result<PassRead, SourceError> {
        let sample = &super::SampleRule::for_rows(layout.rows, self.bytes.len() as u64);
        let schema = &schema_of(layout);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
        let workers = threads.min(parts.len()).max(1);
        let all_columns: Vec<usize> = (0..layout.names.len()).collect();
        let results: Vec<Result<(TableWorker, Vec<PartRead>), String>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..workers)
                    .map(|w| {
                        let all_columns = &all_columns;
                        scope.spawn(move || {
                            let mut worker = self.budget.builder(workers).profiling(profiled);
                            let mut done = Vec::new();
                            for (index, &part) in parts.iter().enumerate().skip(w).step_by(workers)
                            {
                                let mut report = PartReport::default();
                                let mut kinds = vec![Kind::Empty; all_columns.len()];
                                // Row numbers are fixed after all parts are read; until then each
                                // part numbers from 0 in its own space, far apart.
                                let first = (index as u64) << 40;
                                let mut emit = |batch: RecordBatch, first: u64| {
                                    worker.add(&batch, first, sample);
                                    Ok(true)
                                };
                                let ended = read_part(
                                    self.bytes,
                                    layout,
                                    (schema, all_columns),
                                    (part.0, part.1, part.2, first),
                                    check_kinds.then_some(&mut kinds),
                                    &mut report,
                                    &mut emit,
                                )?;
                                (self.release)(part.0..part.1);
                                self.progress.advance((part.1 - part.0) as u64);
                                done.push(PartRead { index, ended, report, kinds });
                            }
                            Ok((worker, done))
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
            });
        let mut read = PassRead { workers: Vec::new(), parts: Vec::new() };
        for result in results {
            let (worker, parts) = result
                .map_err(|message| SourceError::Table { path: self.path.to_path_buf(), message })?;
            read.workers.push(worker);
            read.parts.extend(parts);
        }
        read.parts.sort_by_key(|d| d.index);
        Ok(read)
    }

    /// The first pass types every column from every row, and finds where parts start; the
    /// second profiles the parts.
    fn two_passes(&self) -> Result<(Layout, Vec<Part>, PassRead), SourceError> {
        let len = self.bytes.len() as u64;
        self.progress.start(len * 2);
        let layout = layout(self.bytes, self.path, self.release)?;
        // The first pass mapped in every page: given back, and each part's again once read.
        (self.release)(0..self.bytes.len());
        self.progress.advance(len);
        let bounds: Vec<(usize, u64)> = if layout.parts.is_empty() {
            vec![(layout.data_start, layout.data_line)]
        } else {
            layout.parts.clone()
        };
        let parts: Vec<Part> = bounds
            .iter()
            .enumerate()
            .map(|(i, &(start, line))| {
                (start, bounds.get(i + 1).map_or(self.bytes.len(), |b| b.0), line)
            })
            .collect();
        let read = self.pass(&layout, &parts, None, false)?;
        Ok((layout, parts, read))
    }

    /// Profiles the rows with the types the first rows suggest, checking every field against
    /// them as it goes, in parts split at newlines: one pass over the file where two passes
    /// (type, then profile) read it twice. Columns whose types were wrong are profiled again in
    /// a second pass of their own. `None` when one pass cannot stand for two: a part did not
    /// start on a record (a quoted field held the newline it started after), the types turned
    /// the first row from header to data, or the file had fewer rows than its first part
    /// suggested (the rows kept were chosen for more).
    fn one_pass(&self) -> Result<Option<(Layout, Vec<Part>, PassRead)>, SourceError> {
        let Some(mut layout) = guess_layout(self.bytes, self.path)? else {
            #[cfg(test)]
            tests::one_pass_went("declined: spanned");
            return Ok(None);
        };
        let data = &self.bytes[layout.data_start..];
        let mut parts: Vec<Part> =
            crate::ndjson::line_slices(data, data.len().div_ceil(ONE_PASS_PART_BYTES))
                .into_iter()
                .map(|r| (layout.data_start + r.start, layout.data_start + r.end, 1))
                .collect();
        if parts.is_empty() {
            parts.push((layout.data_start, self.bytes.len(), 1));
        }
        // The rows kept are chosen for fewer rows than the file likely has (so from more
        // rows), then for the rows it has.
        let guessed_rows = if data.len() <= GUESS_BYTES {
            layout.rows
        } else {
            let guessed = data.len() as f64 / GUESS_BYTES as f64 * layout.rows as f64;
            (guessed / 2.0) as u64
        };
        layout.rows = guessed_rows;
        self.progress.start(self.bytes.len() as u64);
        let guess = layout.clone();
        let mut read = self.pass(&guess, &parts, None, true)?;
        let agreed = read
            .parts
            .iter()
            .zip(parts.iter().skip(1))
            .all(|(done, next)| parts[done.index].0 + done.ended.end == next.0);
        let rows: u64 = read.parts.iter().map(|d| d.ended.rows).sum();
        if !agreed || rows < guessed_rows {
            #[cfg(test)]
            tests::one_pass_went(if agreed { "declined: rows" } else { "declined: parts" });
            return Ok(None);
        }
        let mut kinds = vec![Kind::Empty; layout.kinds.len()];
        for done in &read.parts {
            for (kind, theirs) in kinds.iter_mut().zip(&done.kinds) {
                *kind = kind.join(*theirs);
            }
        }
        if is_header(&layout.first, &kinds) != layout.header {
            #[cfg(test)]
            tests::one_pass_went("declined: header");
            return Ok(None);
        }
        layout.kinds = kinds;
        layout.rows = rows;
        self.place_reports(&layout, &parts, &mut read);
        let sample = super::SampleRule::for_rows(rows, self.bytes.len() as u64);
        for worker in &mut read.workers {
            worker.rows.retain(|(row, _)| sample.keeps(*row));
        }
        let wrong: Vec<usize> = (0..layout.kinds.len())
            .filter(|&i| guess.kinds[i].reading() != layout.kinds[i].reading())
            .collect();
        #[cfg(test)]
        tests::one_pass_went(if wrong.is_empty() { "one pass" } else { "again" });
        if !wrong.is_empty() {
            self.profile_again(&layout, &parts, &wrong, &mut read)?;
        }
        Ok(Some((layout, parts, read)))
    }

    /// Gives the rows `read` reported in `parts` (numbered from 1 in each part) their lines in
    /// the file, counting the line breaks of the parts before theirs: only then, as most
    /// files report none.
    fn place_reports(&self, layout: &Layout, parts: &[Part], read: &mut PassRead) {
        let Some(last) = read.parts.iter().rposition(|d| !d.report.reported.is_empty()) else {
            return;
        };
        let mut line = layout.data_line;
        for (part, done) in parts.iter().zip(&mut read.parts).take(last + 1) {
            for reported in &mut done.report.reported {
                reported.line += line - 1;
            }
            line += line_breaks(&self.bytes[part.0..part.1]);
        }
    }

    /// Profiles the columns `wrong` again, with the types of `layout` (the types every row
    /// has), in place of what `read` counted for them; the rows kept are read again whole.
    fn profile_again(
        &self,
        layout: &Layout,
        parts: &[Part],
        wrong: &[usize],
        read: &mut PassRead,
    ) -> Result<(), SourceError> {
        for worker in &mut read.workers {
            for &i in wrong {
                worker.forget_column(&layout.names[i]);
            }
            worker.rows.clear();
        }
        let is_wrong = |column: Option<usize>| column.is_some_and(|c| wrong.contains(&(c - 1)));
        for done in &mut read.parts {
            done.report.reported.retain(|r| !is_wrong(r.column));
        }
        self.progress.start(self.bytes.len() as u64);
        let mut again = self.pass(layout, parts, Some(wrong), false)?;
        self.place_reports(layout, parts, &mut again);
        for (done, theirs) in read.parts.iter_mut().zip(again.parts) {
            let reported = theirs.report.reported.into_iter().filter(|r| is_wrong(r.column));
            done.report.reported.extend(reported);
        }
        read.workers.extend(again.workers);
        Ok(())
    }
}

/// The line breaks of `bytes`, counted as [`Records`] counts lines.
fn line_breaks(bytes: &[u8]) -> u64 {
    Records::new(Dialect { delimiter: b',' }, bytes, 0).line_at(bytes.len())
}

/// The Arrow schema of a layout's columns.
fn schema_of(layout: &Layout) -> Arc<Schema> {
    Arc::new(Schema::new(
        layout
            .names
            .iter()
            .zip(&layout.kinds)
            .map(|(n, k)| Field::new(n, k.data_type(), true))
            .collect::<Vec<_>>(),
    ))
}

/// How a CSV file's rows are typed and profiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// In one pass when it can ([`Profiling::one_pass`]), else in two.
    OnePass,
    /// Typed from every row first, then profiled (what one pass is held to).
    #[cfg(test)]
    TwoPasses,
}

/// Profiles the CSV file at `path` into `new()` builders: see the module docs.
pub(crate) fn read(
    path: &Path,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    budget: &Budget,
) -> Result<TableRead, SourceError> {
    read_by(path, mode, progress, budget, Plan::OnePass)
}

/// [`read`], the rows typed and profiled as `plan` says.
fn read_by(
    path: &Path,
    mode: crate::ReadMode,
    progress: &dyn Progress,
    budget: &Budget,
    plan: Plan,
) -> Result<TableRead, SourceError> {
    let state = std::fs::metadata(path)
        .map(|m| crate::stream::FileState::of(&m))
        .map_err(|cause| SourceError::Io { path: path.to_path_buf(), cause })?;
    let file = crate::read::read_file_bytes(path, mode)?;
    let profiling =
        Profiling { path, bytes: &file, release: &|range| file.release(range), budget, progress };
    let one_pass = match plan {
        Plan::OnePass => profiling.one_pass()?,
        #[cfg(test)]
        Plan::TwoPasses => None,
    };
    let (layout, parts, read) = match one_pass {
        Some(read) => read,
        None => profiling.two_passes()?,
    };
    let PassRead { workers, parts: done } = read;
    // Each part's rows start after the rows of the parts before it.
    let mut before = Vec::with_capacity(done.len());
    let mut rows = 0u64;
    for d in &done {
        before.push(rows);
        rows += d.ended.rows;
    }
    let schema = schema_of(&layout);
    let mut read = TableRead::new(rows);
    for mut worker in workers {
        for (row, _) in &mut worker.rows {
            let part = (*row >> 40) as usize;
            *row = before.get(part).copied().unwrap_or(0) + (*row & ((1 << 40) - 1));
        }
        read.absorb(worker);
    }
    read.columns_of(schema.clone());
    let skipped: u64 = done.iter().map(|d| d.report.skipped).sum();
    let mut reported: Vec<Reported> = done.into_iter().flat_map(|d| d.report.reported).collect();
    reported.sort_by_key(|r| (r.line, r.column));
    let kept = reported.len().min(WARNINGS_KEPT);
    read.warnings = reported
        .into_iter()
        .take(WARNINGS_KEPT)
        .map(|r| LoadWarning::at(r.line as usize, r.column.unwrap_or(1), r.message))
        .collect();
    for &column in &layout.bad_names {
        read.warnings.push(LoadWarning::at(
            layout.header_line as usize,
            column,
            "the header name is not UTF-8 (read with U+FFFD in place of the bad bytes)".to_string(),
        ));
    }
    if skipped > 0 {
        read.warnings.push(LoadWarning::new(format!(
            "{skipped} rows with more fields than the header were skipped"
        )));
    }
    if kept == WARNINGS_KEPT {
        read.warnings.push(LoadWarning::new(format!(
            "only the first {WARNINGS_KEPT} rows reported are listed"
        )));
    }
    let delimiter = match layout.dialect.delimiter {
        b'\t' => "tab".to_string(),
        d => format!("`{}`", char::from(d)),
    };
    let types: Vec<String> = layout
        .names
        .iter()
        .zip(&layout.kinds)
        .map(|(n, k)| format!("{n}: {}", kind_name(*k)))
        .collect();
    read.warnings.insert(
        0,
        LoadWarning::new(format!(
            "read as CSV: delimiter {delimiter}, {}; empty fields are null; column types from every row: {}",
            if layout.header { "the first row is the header" } else { "no header (columns are column_1, column_2, …)" },
            types.join(", ")
        )),
    );
    read.reread = Some(super::Reread::Csv(CsvTable {
        path: path.to_path_buf(),
        state,
        layout,
        schema,
        parts: parts.iter().map(|p| (p.0, p.1)).collect(),
    }));
    Ok(read)
}

/// A CSV file served to SQL: its rows read again, a part at a time, as the profile read them
/// (the same first pass's types, header and parts), from the file as it was loaded.
#[derive(Debug)]
pub(crate) struct CsvTable {
    path: std::path::PathBuf,
    state: crate::stream::FileState,
    layout: Layout,
    schema: Arc<Schema>,
    /// Where each part starts and ends.
    parts: Vec<(usize, usize)>,
}

impl CsvTable {
    /// Columns no row gave a value: their type says nothing.
    pub(crate) fn valueless_columns(&self) -> impl Iterator<Item = &str> {
        self.layout
            .names
            .iter()
            .zip(&self.layout.kinds)
            .filter(|(_, k)| **k == Kind::Empty)
            .map(|(n, _)| n.as_str())
    }
}

impl crate::sql::BatchSource for CsvTable {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.schema.clone()
    }

    /// One partition per core (at most one per part), each reading its parts in turn: a scan
    /// holds a part's bytes and two batches per core, whatever the file's size.
    fn parts(&self) -> usize {
        crate::sql::parts_for(self.parts.len())
    }

    fn read(
        &self,
        partition: usize,
        projection: &[usize],
        emit: &mut dyn FnMut(RecordBatch) -> bool,
    ) -> Result<(), String> {
        use std::os::unix::fs::FileExt;
        let partitions = self.parts();
        let (file, _) = crate::file::open_regular(&self.path).map_err(|e| e.to_string())?;
        let changed = || super::changed_since_loaded(&self.path);
        let schema = Arc::new(self.schema.project(projection).map_err(|e| e.to_string())?);
        let mut bytes = Vec::new();
        let mut stopped = false;
        for &(start, end) in self.parts.iter().skip(partition).step_by(partitions) {
            // Checked before each part: offsets of another version of the file would cut rows.
            let now = file.metadata().map(|m| crate::stream::FileState::of(&m)).ok();
            if now.as_ref() != Some(&self.state) {
                return Err(changed());
            }
            bytes.resize(end - start, 0);
            file.read_exact_at(&mut bytes, start as u64)
                .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
            let mut report = PartReport::default();
            let mut emit = |batch: RecordBatch, _first: u64| {
                let more = emit(batch);
                stopped |= !more;
                Ok(more)
            };
            read_part(
                &bytes,
                &self.layout,
                (&schema, projection),
                // Rows are not reported here: their lines are not needed.
                (0, bytes.len(), 1, 0),
                None,
                &mut report,
                &mut emit,
            )?;
            if stopped {
                break;
            }
        }
        Ok(())
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Boolean => "boolean",
        Kind::Integer => "integer",
        Kind::Wide => "integer (DECIMAL(20,0): past i64)",
        Kind::Number => "number",
        Kind::Text => "text",
        Kind::Empty => "no value (read as text)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// How each one pass of the thread went.
        static ONE_PASS_WENT: std::cell::RefCell<Vec<&'static str>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }

    pub(super) fn one_pass_went(how: &'static str) {
        ONE_PASS_WENT.with(|went| went.borrow_mut().push(how));
    }

    /// A table read whole: its profile, rows kept, warnings and types (as JSON).
    fn read_whole(path: &Path, plan: Plan) -> Result<serde_json::Value, String> {
        let budget = Budget { bytes: 64 << 20, spill: None };
        let read = read_by(path, crate::ReadMode::COPY, &crate::source::NoProgress, &budget, plan)
            .map_err(|e| e.to_string())?;
        let TableRead { builder, mut rows_kept, rows, warnings, .. } = read;
        rows_kept.sort();
        let profile = builder.unwrap_or_default().finish(rows);
        Ok(serde_json::json!({
            "rows": rows,
            "profile": serde_json::to_value(&profile).expect("profile"),
            "kept": rows_kept,
            "warnings": serde_json::to_value(&warnings).expect("warnings"),
        }))
    }

    /// One pass (types guessed from the first rows, checked on every field, columns with
    /// wrong guesses profiled again; declined where parts meet inside a record) reads every
    /// file as two passes (types from every row first) do: the same profile, rows, warnings
    /// and types, on files whose types change late, quoted line breaks, CRLF, ragged rows,
    /// headers that are data and bytes that are not UTF-8.
    #[test]
    fn one_pass_reads_as_two_passes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rng = fastrand::Rng::with_seed(30);
        let cells: [&[&[u8]]; 7] = [
            &[b"1", b"-7", b"42", b"0"],
            &[b"1.5", b"2", b"-0.25", b"1e3"],
            &[b"true", b"FALSE", b"false"],
            &[b"a", b"b c", "é".as_bytes(), b"\"x,y\"", b"007"],
            &[b"18446744073709551615", b"-3"],
            &[b"", b""],
            &[b"\"two\nlines\"", b"\xff", b"n/a", b"1", b"x"],
        ];
        for round in 0..400 {
            let columns = rng.usize(1..5);
            let kinds: Vec<usize> = (0..columns).map(|_| rng.usize(..6)).collect();
            let newline = if round % 5 == 0 { "\r\n" } else { "\n" };
            let mut text: Vec<u8> = Vec::new();
            if round % 3 != 0 {
                let names: Vec<String> = (0..columns).map(|c| format!("c{c}")).collect();
                text.extend_from_slice(names.join(",").as_bytes());
                text.extend_from_slice(newline.as_bytes());
            }
            for row in 0..rng.usize(0..60) {
                let width = if rng.usize(..40) == 0 { rng.usize(1..columns + 2) } else { columns };
                let fields: Vec<&[u8]> = (0..width)
                    .map(|c| {
                        // Late in the file, now and then a value of another type.
                        let kind = kinds.get(c).copied().unwrap_or(3);
                        let kind = if row > 10 && rng.usize(..30) == 0 { 6 } else { kind };
                        let options = cells[kind];
                        options[rng.usize(..options.len())]
                    })
                    .collect();
                text.extend_from_slice(&fields.join(&b","[..]));
                text.extend_from_slice(newline.as_bytes());
                // Now and then blank lines, where parts may meet.
                if rng.usize(..20) == 0 {
                    text.extend_from_slice(newline.repeat(rng.usize(1..4)).as_bytes());
                }
            }
            let path = dir.path().join(format!("t{round}.csv"));
            std::fs::write(&path, &text).expect("write");
            let two = read_whole(&path, Plan::TwoPasses);
            assert_eq!(read_whole(&path, Plan::OnePass), two, "{}", String::from_utf8_lossy(&text));
        }
        let went = ONE_PASS_WENT.with(|went| went.take());
        for how in ["one pass", "again", "declined: spanned", "declined: parts", "declined: header"]
        {
            let times = went.iter().filter(|w| **w == how).count();
            assert!(times >= 3, "{how}: {times} of {went:?}");
        }
    }

    /// Chunks split inside a quoted field are told and scanned again whole: the figures are
    /// those of one pass, whatever the split.
    #[test]
    fn chunks_started_inside_quotes_are_scanned_again() {
        let rows = b"1,\"one\ntwo\nthree\nfour\nfive\nsix\"\n2,x\n3,\"y\"\n4,5\n";
        let dialect = Dialect { delimiter: b',' };
        let whole = scan_in_chunks(dialect, rows, 1, usize::MAX, &|_| {});
        for chunks in 2..6 {
            let split = scan_in_chunks(dialect, rows, chunks, usize::MAX, &|_| {});
            let rows_of = |s: &[(usize, ChunkScan)]| s.iter().map(|(_, c)| c.rows).sum::<u64>();
            assert_eq!(rows_of(&split), 4, "{chunks} chunks");
            assert_eq!(rows_of(&whole), 4);
            let kinds = |s: &[(usize, ChunkScan)]| {
                s.iter().fold(vec![Kind::Empty; 2], |k, (_, c)| {
                    k.iter()
                        .zip(c.kinds.iter().chain(std::iter::repeat(&Kind::Empty)))
                        .map(|(a, b)| a.join(*b))
                        .collect()
                })
            };
            assert_eq!(kinds(&split), vec![Kind::Integer, Kind::Text]);
        }
        // Split where no quote is crossed, the chunks stand.
        let plain = b"1,a\n2,b\n3,c\n4,d\n";
        assert_eq!(scan_in_chunks(dialect, plain, 2, usize::MAX, &|_| {}).len(), 2);
    }

    /// Every record with its fields, text, start line and the offset after it.
    fn read_all(input: &[u8], delimiter: u8, core_only: bool) -> Vec<(Vec<Vec<u8>>, u64, usize)> {
        let mut records = Records::new(Dialect { delimiter }, input, 1);
        records.core_only = core_only;
        let mut all = Vec::new();
        while records.next_record() {
            let fields: Vec<Vec<u8>> =
                (0..records.fields).map(|i| records.field(i).to_vec()).collect();
            for (i, field) in fields.iter().enumerate() {
                assert_eq!(records.text(i).ok(), std::str::from_utf8(field).ok());
            }
            all.push((fields, records.line(), records.offset()));
        }
        all
    }

    /// The records of `input` read as two parts that meet at `at` (a record's start), each
    /// part stopping at its end as a pass's part does.
    fn read_in_parts(input: &[u8], delimiter: u8, at: usize) -> Vec<(Vec<Vec<u8>>, u64, usize)> {
        let mut all = Vec::new();
        let mut from = 0;
        for stop in [at, input.len()] {
            let mut records =
                Records::new(Dialect { delimiter }, &input[from..], 1).stopping_at(stop - from);
            while records.next_before(stop - from) {
                let fields: Vec<Vec<u8>> =
                    (0..records.fields).map(|i| records.field(i).to_vec()).collect();
                for (i, field) in fields.iter().enumerate() {
                    assert_eq!(records.text(i).ok(), std::str::from_utf8(field).ok());
                }
                all.push((fields, records.line(), from + records.offset()));
            }
            assert_eq!(from + records.resume(), stop.max(from + records.resume()));
            from += records.resume();
        }
        all
    }

    /// Parts read up to their end, each from its start, read the records one reading does.
    #[test]
    fn parts_stopping_at_their_end_read_as_one_reading() {
        let pieces: [&[u8]; 10] =
            [b"a", b"12", b"", b",", b"\n", b"\r\n", b"\"q,\"", "é".as_bytes(), b"\xff", b"\"\n\""];
        let mut rng = fastrand::Rng::with_seed(55);
        let mut compared = 0;
        for _ in 0..20_000 {
            let input: Vec<u8> = (0..rng.usize(0..60))
                .flat_map(|_| pieces[rng.usize(..pieces.len())])
                .copied()
                .collect();
            let whole = read_all(&input, b',', true);
            // Parts meet where a record starts.
            let starts: Vec<usize> = std::iter::once(0)
                .chain(whole.iter().map(|r| r.2))
                .filter(|&at| at < input.len() && !matches!(input.get(at), Some(b'\r' | b'\n')))
                .collect();
            let Some(&at) = starts.get(rng.usize(..starts.len().max(1))) else { continue };
            let parts = read_in_parts(&input, b',', at);
            let strip = |r: &[(Vec<Vec<u8>>, u64, usize)]| -> Vec<Vec<Vec<u8>>> {
                r.iter().map(|(f, _, _)| f.clone()).collect()
            };
            assert_eq!(
                strip(&parts),
                strip(&whole),
                "{:?} at {at}",
                String::from_utf8_lossy(&input)
            );
            compared += whole.len();
        }
        assert!(compared > 50_000, "{compared}");
    }

    #[test]
    fn lines_without_quotes_split_here_read_as_csv_core_reads_them() {
        let pieces: [&[u8]; 16] = [
            b"a",
            b"12",
            b"",
            b",",
            b";",
            b"\n",
            b"\r\n",
            b"\r",
            b"\n\n",
            b"\"",
            b"\"q,\"",
            b" ",
            "é".as_bytes(),
            b"\xff",
            b"\xef\xbb\xbf",
            b"x\"y",
        ];
        let mut rng = fastrand::Rng::with_seed(1013);
        let mut compared = 0;
        for round in 0..20_000 {
            // Every other input without `\r`, whose lines are split from one search a window.
            let pieces: Vec<&[u8]> = if round % 2 == 0 {
                pieces.to_vec()
            } else {
                pieces.iter().copied().filter(|p| !p.contains(&b'\r')).collect()
            };
            let input: Vec<u8> = (0..rng.usize(0..40))
                .flat_map(|_| pieces[rng.usize(..pieces.len())])
                .copied()
                .collect();
            let delimiter = if round % 3 == 0 { b';' } else { b',' };
            let core = read_all(&input, delimiter, true);
            assert_eq!(
                read_all(&input, delimiter, false),
                core,
                "{:?}",
                String::from_utf8_lossy(&input)
            );
            compared += core.len();
        }
        assert!(compared > 50_000, "{compared}");
    }

    /// The first pass reads the file in step with giving its pages back: at no release does
    /// more of the file lie mapped in than the parts being read (it once searched all of the
    /// rest of the file for `\r` before its first line: the whole file mapped in at once).
    #[test]
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn the_first_pass_maps_in_only_the_parts_it_reads() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
        let bound = threads * (PART_BYTES as usize + (4 << 20));
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("orders.csv");
        let mut text = String::from("id,name,price\n");
        let mut i = 0u64;
        while text.len() < 3 * bound {
            text.push_str(&format!("{i},customer {},{}.{:02}\n", i % 977, i % 500, i % 100));
            i += 1;
        }
        std::fs::write(&path, &text).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: the test's own file, which nothing rewrites while it is mapped.
        let map = unsafe { memmap2::MmapOptions::new().map(&file) }.expect("maps");
        let most = std::sync::atomic::AtomicUsize::new(0);
        let release = |range: std::ops::Range<usize>| {
            crate::stream::release(&map, range);
            let resident = crate::read::resident_pages(&map) * 4096;
            most.fetch_max(resident, std::sync::atomic::Ordering::Relaxed);
        };
        let layout = layout(&map, &path, &release).expect("a layout");
        assert_eq!(layout.rows, i);
        let most = most.into_inner();
        assert!(most > 0 && most <= bound, "{most} bytes of {} mapped in at once", text.len());
    }

    /// A byte-order mark is data wherever a reading starts but at the file's start (skipped
    /// before any reading): the row after the header, and a part's first row.
    #[test]
    fn a_byte_order_mark_in_a_row_is_data() {
        let input = "name,v\n\u{feff}x,1\nx,2\n".as_bytes();
        for core_only in [true, false] {
            let records = read_all(input, b',', core_only);
            let names: Vec<&[u8]> = records.iter().map(|r| r.0[0].as_slice()).collect();
            assert_eq!(names, [&b"name"[..], "\u{feff}x".as_bytes(), b"x"], "{core_only}");
            // A part's reading starts on the row.
            let part = read_all(&input[7..], b',', core_only);
            assert_eq!(part[0].0[0], "\u{feff}x".as_bytes(), "{core_only}");
        }
    }

    #[test]
    fn records_start_on_the_line_every_kind_of_line_end_counts() {
        let lines = |input: &[u8]| -> Vec<u64> {
            read_all(input, b',', false).into_iter().map(|(_, line, _)| line).collect()
        };
        assert_eq!(lines(b"a,b\r1,x\r2\r3,y,z\r4,\xff\r"), [1, 2, 3, 4, 5]);
        assert_eq!(lines(b"a,b\n1,x\r2\r3,y,z\n4,\xff\r\n"), [1, 2, 3, 4, 5]);
        assert_eq!(lines(b"a\r\n\r\nb\r\rc\n\"d\re\"\rf"), [1, 3, 5, 6, 8]);
    }

    #[test]
    fn integers_are_read_as_str_parse_reads_them() {
        let mut fields: Vec<String> = [
            "0",
            "-0",
            "-",
            "",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "00012",
            "1_000",
            "+1",
            "１",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rng = fastrand::Rng::with_seed(7);
        fields.extend((0..10_000).map(|_| (rng.i64(..) >> rng.u32(0..63)).to_string()));
        for field in fields {
            assert_eq!(
                parse_integer(field.as_bytes()),
                field.parse::<i64>().ok().filter(|_| !field.starts_with('+')),
                "{field}"
            );
        }
    }

    /// A file whose last quoted field is never closed says so, with the line it starts on;
    /// one that closes it does not.
    #[test]
    fn a_quoted_field_never_closed_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let warnings = |text: &str| -> Vec<String> {
            let path = dir.path().join("q.csv");
            std::fs::write(&path, text).expect("write");
            let budget = Budget { bytes: 64 << 20, spill: None };
            let read = read(&path, crate::ReadMode::COPY, &crate::source::NoProgress, &budget)
                .expect("reads");
            read.warnings.iter().map(|w| format!("{w:?}")).collect()
        };
        let unclosed = |w: &Vec<String>| w.iter().any(|w| w.contains("never closed"));
        let open = warnings("a,b\n1,x\n2,\"oops\n3,y\n4,z\n");
        assert!(unclosed(&open), "{open:?}");
        assert!(open.iter().any(|w| w.contains("line: Some(3)")), "{open:?}");
        for closed in ["a,b\n1,\"x\ny\"", "a,b\n1,x\"y\n", "a,b\n1,\"x\"\"\"\n", "a,b\n1,\"x\"z\n2"]
        {
            assert!(!unclosed(&warnings(closed)), "{closed:?}");
        }
        assert!(ends_inside_quotes(b"1,\"a\"\"b", b','));
        assert!(!ends_inside_quotes(b"1,\"a\"\"b\"", b','));
    }

    /// A column no row gives a value is said to have none (its profile's type is null).
    #[test]
    fn a_column_without_values_is_said_to_have_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("e.csv");
        std::fs::write(&path, "a,b\n1,\n2,\n").expect("write");
        let budget = Budget { bytes: 64 << 20, spill: None };
        let read =
            read(&path, crate::ReadMode::COPY, &crate::source::NoProgress, &budget).expect("reads");
        let types = &read.warnings[0].message;
        assert!(types.contains("a: integer, b: no value (read as text)"), "{types}");
    }

    /// A first row over a column with no other value fits it: numbers over numbers are data.
    #[test]
    fn a_column_with_no_other_value_does_not_make_the_first_row_a_header() {
        let kinds = [Kind::Empty, Kind::Integer];
        assert!(!is_header(&[b"5".to_vec(), b"6".to_vec()], &kinds));
        assert!(is_header(&[b"name".to_vec(), b"age".to_vec()], &kinds));
    }

    /// The integers read with their type are the fields typed integer.
    #[test]
    fn json_fractions_read_as_str_parse_reads_the_fields_typed_number() {
        let mut rng = fastrand::Rng::with_seed(12);
        let pieces = [
            "0",
            "1",
            "9",
            "5",
            "-",
            "00",
            ".",
            "e",
            "E",
            "+",
            "e-",
            "x",
            "12345678901234567",
            "9007199254740993",
            "22",
            "23",
            "4.",
            ".25",
        ];
        let fixed = [
            "0.0",
            "-0.0",
            "12.5",
            "-0.25",
            "3e-4",
            "1E+22",
            "1e23",
            "9007199254740993.0",
            "9007199254740992.0",
            "1234567890123456789.0",
            "12345678901234567890.0",
            "0.1",
            "1e-22",
            "1e-23",
            "0.00000000000000000000001",
            "179.99",
            "1.7976931348623157e308",
            "5e-324",
            "00.5",
            "1.",
            ".5",
            "1e",
            "-",
            "1.5x",
            "1e999999999999999999999",
        ];
        let mut read = 0;
        // Half pieces put together anyhow, half numbers of every shape JSON allows.
        let digits = |rng: &mut fastrand::Rng, lengths: std::ops::Range<usize>| -> String {
            let n = rng.usize(lengths);
            (0..n).map(|_| char::from(b'0' + rng.u8(..10))).collect()
        };
        let generated = (0..100_000).map(|round| {
            if round % 2 == 0 {
                return (0..rng.usize(1..7))
                    .map(|_| pieces[rng.usize(..pieces.len())])
                    .collect::<String>();
            }
            let sign = if rng.bool() { "-" } else { "" };
            let whole = match rng.usize(..3) {
                0 => "0".to_string(),
                _ => format!("{}{}", rng.u8(1..10), digits(&mut rng, 0..18)),
            };
            let fraction = match rng.usize(..3) {
                0 => String::new(),
                _ => format!(".{}", digits(&mut rng, 1..18)),
            };
            let exponent = match rng.usize(..3) {
                0 => format!("e{}{}", ["", "+", "-"][rng.usize(..3)], rng.u32(..40)),
                _ => String::new(),
            };
            format!("{sign}{whole}{fraction}{exponent}")
        });
        for field in fixed.iter().map(|f| f.to_string()).chain(generated) {
            let bytes = field.as_bytes();
            let Some(value) = json_fraction(bytes) else {
                continue;
            };
            read += 1;
            assert_eq!(Kind::of(bytes), Kind::Number, "{field}");
            let parsed: f64 = field.parse().expect("a JSON number parses");
            assert_eq!(value.to_bits(), parsed.to_bits(), "{field}");
        }
        assert!(read > 10_000, "{read} fields took the fast path");
        for field in ["12", "-7", "1.5x", "00.5", "1.", ".5", "1e", "nan", "inf", "1e23", "1"] {
            assert!(json_fraction(field.as_bytes()).is_none(), "{field}");
        }
    }

    #[test]
    fn json_integers_are_the_fields_typed_integer() {
        let mut rng = fastrand::Rng::with_seed(11);
        let pieces = ["0", "1", "9", "-", "00", "07", "1e", ".", "x", "92233720368547758"];
        for _ in 0..20_000 {
            let field: String =
                (0..rng.usize(1..5)).map(|_| pieces[rng.usize(..pieces.len())]).collect();
            let field = field.as_bytes();
            assert_eq!(
                json_integer(field).is_some(),
                Kind::of(field) == Kind::Integer,
                "{field:?}"
            );
            if let Some(value) = json_integer(field) {
                assert_eq!(Some(value), parse_integer(field));
            }
        }
    }

    #[test]
    fn numbers_are_typed_as_json_writes_them() {
        use Kind::*;
        assert_eq!(json_number(b"0"), Some(Integer));
        assert_eq!(json_number(b"-12"), Some(Integer));
        assert_eq!(json_number(b"007"), None);
        assert_eq!(json_number(b"+1"), None);
        assert_eq!(json_number(b"1.5e3"), Some(Number));
        assert_eq!(json_number(b"1."), None);
        assert_eq!(json_number(b".5"), None);
        assert_eq!(json_number(b"1e999"), None);
        assert_eq!(json_number(b"1234567890123456789012"), None);
        assert_eq!(json_number(b"1234567890123456789012.5"), Some(Number));
        assert_eq!(json_number(b"1500000000000000072"), Some(Integer));
        assert_eq!(json_number(b"-9223372036854775808"), Some(Integer));
        assert_eq!(json_number(b"9223372036854775808"), Some(Wide));
        assert_eq!(json_number(b"18446744073709551615"), Some(Wide));
        assert_eq!(json_number(b"18446744073709551616"), None);
        assert_eq!(json_number(b"-9223372036854775809"), Some(Wide));
        assert_eq!(json_number(b"-18446744073709551615"), Some(Wide));
        assert_eq!(json_number(b"-18446744073709551616"), None);
        assert_eq!(json_number(b"NaN"), None);
        assert_eq!(parse_wide(b"18446744073709551615"), Some(u64::MAX.into()));
        assert_eq!(parse_wide(b"-9223372036854775808"), Some(i64::MIN.into()));
        assert_eq!(Kind::Integer.join(Kind::Wide), Kind::Wide);
        assert_eq!(Kind::Wide.join(Kind::Number), Kind::Number);
        assert_eq!(Kind::Integer.join(Kind::Number), Kind::Number);
        assert_eq!(Kind::Integer.join(Kind::Boolean), Kind::Text);
    }
}
