//! Reading a small TOML knowledge file (the semantic file, the verified examples) so that a
//! mistake costs only the section it is in: the file read whole when it can be, else section by
//! section, every section left out said with its file and line.

use serde::de::DeserializeOwned;

use crate::parse::DocWarning;

/// A TOML file read: its text (BOM stripped) and its parts, each with the byte offset its
/// spans count from (one part when the whole file is valid).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TomlFile<T> {
    pub(crate) file: String,
    pub(crate) text: String,
    pub(crate) parts: Vec<(usize, T)>,
    /// Byte offsets where each line starts: a line is found by search, not by counting (a file
    /// of thousands of entries would make counting quadratic).
    lines: Lines,
}

/// The starts of a text's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    /// The line starts of `text`.
    pub(crate) fn of(text: &str) -> Self {
        Self(std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1)).collect())
    }

    /// 1-based line of byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset).max(1)
    }
}

impl<T> TomlFile<T> {
    /// 1-based line of byte `offset` of the text.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.lines.line(offset)
    }

    /// A warning about line `line` of this file.
    pub(crate) fn warning(&self, line: usize, message: String) -> DocWarning {
        warning(&self.file, line, message, false)
    }
}

/// Reads `text` (the file `file`) as `T`: whole, or — when some section is wrong (an unknown
/// key, a missing or mistyped field) — section by section, the wrong ones left out with a
/// warning naming their line. A file that is not TOML at all is skipped with a warning.
pub(crate) fn read_toml<T: DeserializeOwned>(
    file: &str,
    text: &str,
) -> (Option<TomlFile<T>>, Vec<DocWarning>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = Lines::of(text);
    if let Err(error) = toml::from_str::<toml::Table>(text) {
        let line = error.span().map_or(0, |span| lines.line(span.start));
        let message = format!("{}; file skipped", error.message().trim());
        return (None, vec![warning(file, line, message, true)]);
    }
    let read =
        |parts, lines| TomlFile { file: file.to_string(), text: text.to_string(), parts, lines };
    if let Ok(whole) = toml::from_str::<T>(text) {
        return (Some(read(vec![(0, whole)], lines)), Vec::new());
    }
    let mut parts = Vec::new();
    let mut warnings = Vec::new();
    for range in sections(text) {
        match toml::from_str::<T>(&text[range.clone()]) {
            Ok(part) => parts.push((range.start, part)),
            Err(error) => {
                let at = range.start + error.span().map_or(0, |span| span.start);
                let message = format!("{}; this section is left out", error.message().trim());
                warnings.push(warning(file, lines.line(at), message, false));
            }
        }
    }
    (Some(read(parts, lines)), warnings)
}

/// Byte ranges of `text` split before every line that starts a table header (`[[term]]`,
/// `[x]`): the part before the first header, then one per header.
fn sections(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if at > 0 && line.trim_start().starts_with('[') {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts.windows(2).map(|w| w[0]..w[1]).filter(|r| !r.is_empty()).collect()
}

/// A warning about `file`.
pub(crate) fn warning(file: &str, line: usize, message: String, file_skipped: bool) -> DocWarning {
    DocWarning { file: file.to_string(), line, message, file_skipped }
}
