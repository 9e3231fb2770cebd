//! The caps on what one statement may return — rows and bytes — checked row by row as rows
//! arrive, by both engines alike, so that reading stops at the first row past a cap.

use std::io::Write;

use super::SqlValue;

/// How much of a statement's result to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Rows to keep at most (all when `None`).
    pub max_rows: Option<usize>,
    /// Bytes of row data to keep at most, each row measured as its JSON array
    /// ([`row_json_bytes`]); all when `None`.
    pub max_bytes: Option<usize>,
}

/// Which cap stopped the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// There were more rows than `max_rows`.
    Rows,
    /// The next row would have taken the rows kept past `max_bytes`.
    Bytes,
}

impl Cut {
    /// `rows` or `bytes`, as execute_query's `truncatedBy` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rows => "rows",
            Self::Bytes => "bytes",
        }
    }
}

/// The row that passed the byte cap, as far as it was read: what a message about the cut states
/// (never the cap alone, which may be far from anything read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutRow {
    /// Its size as JSON ([`row_json_bytes`]) when it was read whole; else the bytes of it that
    /// were received before reading stopped.
    pub bytes: usize,
    /// False when reading stopped inside the row (a ClickHouse line longer than what is read of
    /// one row): `bytes` is then a lower bound of its size.
    pub whole: bool,
    /// The most bytes of one row that were to be read when it passed (the cap's room left,
    /// bounded by the engine's line limit); `None` when the row was read whole.
    pub read_limit: Option<usize>,
}

/// Counts bytes written without keeping them.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `row` as compact JSON (`[1,"a",null]`), as execute_query returns it, measured
/// without building the text or copying a value (a row may be one huge string).
pub fn row_json_bytes(row: &[SqlValue]) -> usize {
    let mut counter = Counter(0);
    for value in row {
        // Writing to a counter cannot fail; a value that would not serialise counts as nothing.
        let _ = match value {
            SqlValue::Text(text) => serde_json::to_writer(&mut counter, text),
            SqlValue::Json(json) => serde_json::to_writer(&mut counter, json),
            small => serde_json::to_writer(&mut counter, &small.to_json()),
        };
    }
    // The brackets and the commas between values.
    counter.0 + 2 + row.len().saturating_sub(1)
}

/// Rows kept so far against the caps.
#[derive(Debug)]
pub(crate) struct Budget {
    caps: Caps,
    rows: usize,
    bytes: usize,
    /// Rows seen, the one that passed a cap included.
    pub read: usize,
    /// The row that passed the byte cap, once one did.
    pub cut_row: Option<CutRow>,
}

impl Budget {
    pub(crate) fn new(caps: Caps) -> Self {
        Self { caps, rows: 0, bytes: 0, read: 0, cut_row: None }
    }

    /// Whether `row` may be kept, or which cap it passes (reading stops then).
    pub(crate) fn admit(&mut self, row: &[SqlValue]) -> Result<(), Cut> {
        self.read += 1;
        if self.caps.max_rows.is_some_and(|max| self.rows >= max) {
            return Err(Cut::Rows);
        }
        if let Some(max) = self.caps.max_bytes {
            let size = row_json_bytes(row);
            if self.bytes.saturating_add(size) > max {
                self.cut_row = Some(CutRow { bytes: size, whole: true, read_limit: None });
                return Err(Cut::Bytes);
            }
            self.bytes += size;
        }
        self.rows += 1;
        Ok(())
    }

    /// A row whose size alone is past the byte cap, refused unread (`size`: the bytes of its
    /// text, as the server measured them): reading stops there.
    pub(crate) fn refuse_oversized(&mut self, size: usize) -> Cut {
        self.read += 1;
        self.cut_row = Some(CutRow { bytes: size, whole: true, read_limit: None });
        match self.caps.max_rows {
            Some(max) if self.rows >= max => Cut::Rows,
            _ => Cut::Bytes,
        }
    }

    /// Rows still wanted before the row cap is known to be passed (one more than the cap allows,
    /// to tell "exactly the cap" from "more").
    pub(crate) fn rows_to_probe(&self) -> Option<usize> {
        self.caps.max_rows.map(|max| max.saturating_sub(self.rows).saturating_add(1))
    }

    /// Reading stopped `received` bytes into a row, its end not reached, `limit` being the most
    /// of one row that was to be read: the row counts as read and passing the byte cap.
    pub(crate) fn stopped_inside_row(&mut self, received: usize, limit: usize) -> Cut {
        self.read += 1;
        self.cut_row = Some(CutRow { bytes: received, whole: false, read_limit: Some(limit) });
        Cut::Bytes
    }

    /// Bytes still free under the byte cap.
    pub(crate) fn bytes_left(&self) -> Option<usize> {
        self.caps.max_bytes.map(|max| max.saturating_sub(self.bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_those_of_the_json_execute_query_returns() {
        let row = [
            SqlValue::Integer(12),
            SqlValue::Text("a\"b\u{1}é".into()),
            SqlValue::Null,
            SqlValue::Real(f64::NAN),
            SqlValue::Bool(true),
            SqlValue::Json(serde_json::json!({"k": [1, 2.5]})),
        ];
        let json =
            serde_json::Value::Array(row.iter().map(SqlValue::to_json).collect()).to_string();
        assert_eq!(row_json_bytes(&row), json.len());
        assert_eq!(json, r#"[12,"a\"b\u0001é",null,"NaN",true,{"k":[1,2.5]}]"#);
        assert_eq!(row_json_bytes(&[]), "[]".len());
    }

    #[test]
    fn the_first_cap_passed_stops_the_reading() {
        let row = [SqlValue::Text("x".repeat(10))];
        let mut budget = Budget::new(Caps { max_rows: Some(3), max_bytes: Some(40) });
        assert_eq!(
            (budget.admit(&row), budget.admit(&row), budget.admit(&row)),
            (Ok(()), Ok(()), Err(Cut::Bytes)),
            "14 bytes a row"
        );
        let mut budget = Budget::new(Caps { max_rows: Some(2), max_bytes: Some(1_000) });
        assert_eq!(
            (budget.admit(&row), budget.admit(&row), budget.admit(&row)),
            (Ok(()), Ok(()), Err(Cut::Rows))
        );
        assert_eq!(budget.read, 3);
    }
}
