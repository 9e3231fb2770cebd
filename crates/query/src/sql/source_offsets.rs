//! Byte offsets in a statement's text from sqlparser's token locations (1-based lines, columns
//! counted in characters), for rewrites that keep every other character where it was.

use sqlparser::tokenizer::Location;

/// Byte offsets where each line of `sql` starts.
pub fn line_starts(sql: &str) -> Vec<usize> {
    std::iter::once(0).chain(sql.match_indices('\n').map(|(at, _)| at + 1)).collect()
}

/// The byte offset of a tokenizer location in `sql`, whose line starts are `lines`.
pub fn offset(sql: &str, lines: &[usize], at: Location) -> Option<usize> {
    offset_at(sql, lines, at.line, at.column)
}

/// The byte offset of 1-based `line` and `column` (in characters, as a report's positions) in
/// `sql`, whose line starts are `lines`.
pub fn offset_at(sql: &str, lines: &[usize], line: u64, column: u64) -> Option<usize> {
    let start = *lines.get(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let column = usize::try_from(column).ok()?.checked_sub(1)?;
    let rest = &sql[start..];
    match rest.char_indices().nth(column) {
        Some((i, _)) => Some(start + i),
        None if rest.chars().count() == column => Some(sql.len()),
        None => None,
    }
}
