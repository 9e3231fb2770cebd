//! The lines of a file of JSON lines that were skipped: every one's number (which decides
//! whether they are lines at all, `crate::nesting`), the warnings of the first of them, and a
//! note counting the rest, so that a file of millions of bad lines costs neither memory nor
//! every listing of its source.

use crate::error::LoadWarning;

/// Skipped lines listed one by one in a file's warnings; the rest are counted in one note.
pub(crate) const LINE_WARNINGS_KEPT: usize = 1_000;

/// The skipped lines of a file read whole.
#[derive(Debug, Default)]
pub(crate) struct SkippedLines {
    /// Every skipped line's number (1-based), ascending.
    pub(crate) lines: Vec<usize>,
    /// The warnings of the first [`LINE_WARNINGS_KEPT`] of them, in line order.
    pub(crate) listed: Vec<LoadWarning>,
}

impl SkippedLines {
    /// Adds skipped line `line`, after every one added before; its warning is made only while
    /// the first ones are listed.
    pub(crate) fn add(&mut self, line: usize, warning: impl FnOnce() -> Option<LoadWarning>) {
        self.lines.push(line);
        if self.listed.len() < LINE_WARNINGS_KEPT {
            self.listed.extend(warning());
        }
    }

    /// The warnings to show: those listed, then the note counting every line past them.
    pub(crate) fn into_warnings(self) -> Vec<LoadWarning> {
        let mut warnings = self.listed;
        if self.lines.len() > warnings.len() {
            warnings.push(more_lines_skipped(self.lines.len()));
        }
        warnings
    }
}

/// The note after the first [`LINE_WARNINGS_KEPT`] of the `skipped` lines of a file.
pub(crate) fn more_lines_skipped(skipped: usize) -> LoadWarning {
    LoadWarning::new(format!(
        "{skipped} lines were skipped in all; only the first {LINE_WARNINGS_KEPT} are listed"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_listed_lines_a_note_counts_them_all() {
        let mut skipped = SkippedLines::default();
        let mut made = 0;
        for line in 1..=LINE_WARNINGS_KEPT + 5 {
            skipped.add(line * 2, || {
                made += 1;
                Some(LoadWarning::at(line * 2, 1, "skipped: expected value"))
            });
        }
        assert_eq!(made, LINE_WARNINGS_KEPT);
        assert_eq!(skipped.lines.len(), LINE_WARNINGS_KEPT + 5);
        let warnings = skipped.into_warnings();
        assert_eq!(warnings.len(), LINE_WARNINGS_KEPT + 1);
        assert_eq!(warnings[LINE_WARNINGS_KEPT - 1].line, Some(2 * LINE_WARNINGS_KEPT));
        assert_eq!(
            warnings[LINE_WARNINGS_KEPT].to_string(),
            "1005 lines were skipped in all; only the first 1000 are listed"
        );
        let mut few = SkippedLines::default();
        few.add(3, || Some(LoadWarning::at(3, 1, "x")));
        assert_eq!(few.into_warnings(), [LoadWarning::at(3, 1, "x")]);
    }
}
