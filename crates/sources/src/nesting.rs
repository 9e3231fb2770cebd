//! Telling JSON values spread over several lines from NDJSON with bad lines.
//!
//! Read as lines, a pretty-printed value is bad lines (`{`, `"a": [`, `],`) around lines that
//! are JSON on their own (`2`, `{"id": 1}`): those must not become documents. A line that is
//! not JSON may open a container (its brackets, outside strings, leave some open) that a later
//! bad line closes; a document line between the two is part of one value over several lines.
//! A line cut short (a log's truncated write) may leave brackets open too, but it ends inside
//! a string or a value, where a pretty-printer ends a line with the bracket it opens: it opens
//! nothing.

/// How a line that is not JSON on its own leaves the nesting of brackets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LineNesting {
    /// Containers it closes that earlier lines opened.
    pub closes: u32,
    /// Containers it leaves open for later lines.
    pub opens: u32,
    /// Whether it can be a line of a pretty-printed value that neither opens nor closes one
    /// (`"a": 1,`, `2`, `{"c": 1},`): it starts as a JSON value or member does and was not cut
    /// short. Text lines and cut lines among documents are no sign of a value over lines.
    pub fragment: bool,
    /// Whether it starts as JSON does and ends with a comma outside strings (`"a": 1,`, `},`):
    /// inside a value over lines, a document line right after it is one of its elements.
    pub comma: bool,
}

impl LineNesting {
    /// Whether the line changes the nesting at all.
    pub(crate) fn is_structural(self) -> bool {
        self.closes > 0 || self.opens > 0
    }

    /// Whether the walk needs the line in its place ([`NestingWalk::bad`]), not only counted.
    pub(crate) fn is_step(self) -> bool {
        self.is_structural() || self.comma
    }
}

/// The nesting of `line`'s brackets outside strings (escapes honoured; bytes that are not UTF-8
/// are neither brackets nor quotes). Containers are left open for later lines only by a line
/// that starts as JSON does and ends with its opener, as every pretty-printer writes one (`{`,
/// `"a": [`): a line that ends inside a string or a value was cut short (a log's truncated
/// write), and opens nothing; nor does a text line ending in a bracket.
pub(crate) fn line_nesting(line: &[u8]) -> LineNesting {
    let (mut depth, mut lowest) = (0i64, 0i64);
    let (mut in_string, mut escaped) = (false, false);
    let mut last = b' ';
    for &byte in line {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            last = byte;
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                lowest = lowest.min(depth);
            }
            _ => {}
        }
        if !byte.is_ascii_whitespace() {
            last = byte;
        }
    }
    let count = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
    let start = line.trim_ascii_start();
    let json_like =
        matches!(start.first(), Some(b'"' | b'{' | b'[' | b'}' | b']' | b'-' | b'0'..=b'9'))
            || [&b"true"[..], b"false", b"null"].iter().any(|word| start.starts_with(word));
    let opener = !in_string && matches!(last, b'{' | b'[') && opener_shape(start);
    let opens = if opener { depth - lowest } else { 0 };
    let fragment = json_like && !in_string && depth == lowest && lowest == 0;
    // A line cut short after a comma (`{"a":1,`) left its own brackets open: not a piece.
    let comma = json_like && !in_string && last == b',' && depth == lowest;
    LineNesting { closes: count(-lowest), opens: count(opens), fragment, comma }
}

/// Whether `line` (without its indentation) is shaped as a pretty-printer writes a line that
/// opens a value: brackets alone (`{`, `[`, `[{`, `}, {`), or one key and then them (`"a": [`). A line
/// with more before its last bracket (`{"id": 5, "tags": [`) is a log's line cut short there.
fn opener_shape(line: &[u8]) -> bool {
    let mut rest = line;
    if rest.first() == Some(&b'"') {
        let mut escaped = false;
        let close = rest.iter().enumerate().skip(1).find_map(|(at, &b)| match b {
            _ if escaped => {
                escaped = false;
                None
            }
            b'\\' => {
                escaped = true;
                None
            }
            b'"' => Some(at),
            _ => None,
        });
        let Some(close) = close else { return false };
        rest = rest[close + 1..].trim_ascii_start();
        let Some(after_colon) = rest.strip_prefix(b":") else { return false };
        rest = after_colon;
    }
    let rest = rest.trim_ascii();
    !rest.is_empty()
        && rest.iter().all(|b| matches!(b, b'{' | b'[' | b'}' | b']' | b',' | b' ' | b'\t'))
}

/// The lines of a file in order, as bad lines' nesting and runs of document lines: whether
/// document lines lie inside a value over several lines. A container opened by a bad line holds
/// them as part of one value when it reads as pretty-printed JSON: its lines are mostly bad ones
/// (`"a": 1,`, `],`), or a document line is indented deeper than the line that opened it. A log
/// with a line cut short and a stray closer far later holds thousands of document lines between,
/// none deeper: those stay documents.
#[derive(Debug, Default)]
pub(crate) struct NestingWalk {
    depth: u64,
    /// The indentation of the bad line that opened the outermost open container.
    opener_indent: usize,
    /// Document lines and bad lines since it.
    documents_inside: usize,
    bad_inside: usize,
    /// A document line since it was indented deeper than it.
    deeper_inside: bool,
    /// The last line was a bad one ending with a comma ([`LineNesting::comma`]).
    after_comma: bool,
    /// The file holds values over several lines.
    found: bool,
}

impl NestingWalk {
    /// `n` document lines, the deepest indented by `indent` bytes.
    pub(crate) fn documents(&mut self, n: usize, indent: usize) {
        if n > 0 && self.depth > 0 {
            self.documents_inside += n;
            self.deeper_inside |= indent > self.opener_indent;
            // `{"a": 1},` then `{"a": 2}`: the second is the value's next element.
            self.found |= self.after_comma;
        }
        if n > 0 {
            self.after_comma = false;
        }
    }

    /// `n` bad lines that neither open nor close brackets and could be lines of a value.
    pub(crate) fn plain_bad(&mut self, n: usize) {
        if self.depth > 0 {
            self.bad_inside += n;
        }
        if n > 0 {
            self.after_comma = false;
        }
    }

    /// Whether the open container's lines read as one pretty-printed value holding document
    /// lines; `closing` counts the bad line closing it.
    fn holds_documents(&self, closing: usize) -> bool {
        self.documents_inside > 0
            && (self.deeper_inside || self.documents_inside <= self.bad_inside + closing)
    }

    /// A bad line, indented by `indent` bytes.
    pub(crate) fn bad(&mut self, nesting: LineNesting, indent: usize) {
        if nesting.closes > 0 && self.depth > 0 && self.holds_documents(1) {
            self.found = true;
        }
        let was_open = self.depth > 0;
        self.depth =
            self.depth.saturating_sub(u64::from(nesting.closes)) + u64::from(nesting.opens);
        if self.depth == 0 || !was_open {
            *self = Self {
                depth: self.depth,
                opener_indent: indent,
                found: self.found,
                ..Self::default()
            };
        } else {
            self.bad_inside += 1;
        }
        self.after_comma = nesting.comma;
    }

    /// Whether a document line was part of a value over several lines, once every line was
    /// walked (a value cut off at the end of the file counts too).
    pub(crate) fn found(&self) -> bool {
        self.found || (self.depth > 0 && self.holds_documents(0))
    }
}

/// The indentation of `line`: its leading spaces and tabs.
pub(crate) fn indent(line: &[u8]) -> usize {
    line.iter().take_while(|&&b| b == b' ' || b == b'\t').count()
}

/// Whether the lines of `text` numbered in `bad` (1-based, ascending) hold JSON values over
/// several lines with document lines inside them (see [`NestingWalk`]).
pub(crate) fn values_over_lines(text: &str, bad: &[usize]) -> bool {
    let mut walk = NestingWalk::default();
    let mut bad = bad.iter().copied().peekable();
    for (i, range) in crate::ndjson::line_ranges(text.as_bytes()).enumerate() {
        let line = &text.as_bytes()[range];
        if bad.next_if_eq(&(i + 1)).is_some() {
            match line_nesting(line) {
                nesting if nesting.is_step() => walk.bad(nesting, indent(line)),
                nesting if nesting.fragment => walk.plain_bad(1),
                _ => {}
            }
        } else if !line.trim_ascii().is_empty() {
            walk.documents(1, indent(line));
        }
        if walk.found {
            return true;
        }
    }
    walk.found()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_opens_and_closes_what_its_brackets_outside_strings_leave() {
        let n = |line: &str| {
            let n = line_nesting(line.as_bytes());
            (n.closes, n.opens)
        };
        assert_eq!(n("{"), (0, 1));
        assert_eq!(n("  \"a\": ["), (0, 1));
        assert_eq!(n("],"), (1, 0));
        assert_eq!(n("}, {"), (1, 1));
        assert_eq!(n("{\"a\": ["), (0, 0), "a line of a log cut short");
        // Lines cut short, inside a value or a string: they open nothing.
        assert_eq!(n("{\"a\": [1, 2"), (0, 0));
        assert_eq!(n("{\"b\":\"x"), (0, 0));
        assert_eq!(n("{bad"), (0, 0));
        assert_eq!(n("}, {\"a\": 1,"), (1, 0));
        assert_eq!(n("\"x]}\\\"{\": 1,"), (0, 0));
        assert_eq!(n("{\"a\": 1} junk"), (0, 0));
        assert_eq!(n("\"s\\\\\"]"), (1, 0));
        // A text line ending in a bracket opens nothing.
        assert_eq!(n("Config dump {"), (0, 0));
        // A log line cut short after a bracket with more before it opens nothing either.
        assert_eq!(n("{\"id\":5,\"tags\":["), (0, 0));
        assert_eq!(n("{\"id\":5,\"sub\":{"), (0, 0));
        assert_eq!(n("  \"a \\\" b\" : {"), (0, 1));
        assert_eq!(n("[{"), (0, 2));
        let fragment = |line: &str| line_nesting(line.as_bytes()).fragment;
        for line in ["  \"a\": 1,", "2", "    {\"c\": 1},", "true", "\"b\": \"x\""] {
            assert!(fragment(line), "{line}");
        }
        for line in ["hello world", "{\"a\":1,\"b", "\"cut", "{bad", "], 1", "oops {}"] {
            assert!(!fragment(line), "{line}");
        }
        let comma = |line: &str| line_nesting(line.as_bytes()).comma;
        assert!(comma("  {\"a\": 100},") && comma("},") && comma("\"a\": 1,"));
        assert!(!comma("{\"a\":1,") && !fragment("{\"a\":1,"));
        assert!(!comma("\"a,") && !comma("text,"));
    }

    #[test]
    fn documents_inside_a_closed_container_are_found_and_a_cut_line_is_not() {
        let pretty = "{\"a\":1}\n{\n  \"b\": [\n    2\n  ]\n}\n";
        assert!(values_over_lines(pretty, &[2, 3, 5, 6]));
        // A cut line, documents after it, nothing closing it, or a stray closer far later.
        assert!(!values_over_lines("{\"a\": [1\n{\"b\":1}\n{\"b\":2}\n", &[1]));
        assert!(!values_over_lines("{\"a\": [1\n{\"b\":1}\n{\"b\":2}\n}\n", &[1, 4]));
        // A pretty value cut at the end of the file, or in the middle of a log.
        assert!(values_over_lines(
            "{\"a\":1}\n{\n  \"b\": [\n    {\"c\": 1},\n    {\"c\": 2}\n",
            &[2, 3, 4]
        ));
        let cut_mid = "{\"a\":1}\n{\n  \"b\": [\n    {\"c\": 2}\n{\"a\":2}\n{\"a\":3}\n{\"a\":4}\n";
        assert!(values_over_lines(cut_mid, &[2, 3]));
        // Two halves of a line with nothing between.
        assert!(!values_over_lines("{\"a\": 1, \"b\"{\"c\": 2}\n: 3}\n{\"d\":1}\n", &[1, 2]));
        // No document inside.
        assert!(!values_over_lines("{\n}\n{\"a\":1}\n", &[1, 2]));
    }
}
