//! Errors of loading a source. Each names the file and, where it can, the line and column.

use std::path::PathBuf;

use thiserror::Error;

/// Why a source could not be loaded.
#[derive(Debug, Error)]
pub enum SourceError {
    /// The source specification itself is wrong.
    #[error("invalid source `{spec}`: {reason}")]
    InvalidSpec {
        /// The specification as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error: in the message, so not also a `source` that error reports repeat.
        cause: std::io::Error,
    },
    /// A file streamed as JSON lines turned out to hold JSON values over several lines among
    /// its bad lines: it is read whole instead (the whole load decides what it is).
    #[error(
        "{path}: some of its lines hold JSON values pretty-printed over several lines: it is not NDJSON, so it is read whole, within the size limit for a source file (raise it with --max-file-bytes)"
    )]
    ValuesOverLines {
        /// The file.
        path: PathBuf,
    },
    /// The file is not valid JSON (or a line of it is not, in strict mode).
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The JSON is valid but does not have the expected shape.
    #[error("{path}:{line}:{column}: {message}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending value.
        line: usize,
        /// 1-based column of the offending value.
        column: usize,
        /// What is wrong, and how to fix it.
        message: String,
    },
    /// A CSV or Parquet file that cannot be read as a table.
    #[error("{path}: {message}")]
    Table {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
    /// A database refused a connection or a statement.
    #[error("{location}: {message}")]
    Database {
        /// The database (path, or URI without password).
        location: String,
        /// What went wrong, and what to try.
        message: String,
    },
    /// The database refused or failed one statement.
    #[error("{location}: {message}")]
    Statement {
        /// The database.
        location: String,
        /// What the database said, and what to try.
        message: String,
        /// What kind of failure it is (decides whether a retry can help).
        class: ErrorClass,
    },
    /// A statement ran past its time limit and was cancelled.
    #[error(
        "{location}: statement cancelled after {timeout_ms} ms (statement timeout); narrow the query or raise the timeout"
    )]
    Timeout {
        /// The database.
        location: String,
        /// The limit.
        timeout_ms: u64,
    },
    /// An AimDB instance could not be read.
    #[error(transparent)]
    Aimdb(#[from] crate::aimdb::AimxError),
    /// The call this work was for was cancelled (its time was up, or its client went away).
    #[error(transparent)]
    Cancelled(#[from] schemascope_core::cancel::Cancelled),
    /// The file is not one that may be read: a FIFO, device or directory, over the size limit,
    /// or a link out of its directory.
    #[error(transparent)]
    File(crate::file::FileError),
    /// Watching files for changes failed.
    #[error("cannot watch {path}: {reason}")]
    Watch {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl From<crate::file::FileError> for SourceError {
    /// An OS refusal stays the plain `Io` error it always was; the rest say what the file is.
    fn from(error: crate::file::FileError) -> Self {
        match error {
            crate::file::FileError::Io { path, cause } => Self::Io { path, cause },
            other => Self::File(other),
        }
    }
}

/// What kind of failure a statement met, as a query pipeline routes on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The statement is wrong (syntax, unknown name, type mismatch): a corrected query can succeed.
    Syntax,
    /// Refused because it would write, or calls something forbidden.
    Refused,
    /// It ran past its time limit.
    Timeout,
    /// Authentication or permission failed.
    Auth,
    /// The database is unreachable, busy or out of resources.
    Resource,
}

impl ErrorClass {
    /// Whether the failure is the statement's own (it is wrong, or refused): running it again
    /// fails again, so a caller reading many relations names this one and goes on.
    pub fn is_lasting(self) -> bool {
        matches!(self, Self::Syntax | Self::Refused)
    }
}

impl SourceError {
    /// The class of this error, for errors met running a statement (connection and file errors
    /// are `Resource`, a bad specification `Syntax`).
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Statement { class, .. } => *class,
            Self::Timeout { .. } => ErrorClass::Timeout,
            Self::InvalidSpec { .. }
            | Self::Syntax { .. }
            | Self::Shape { .. }
            | Self::ValuesOverLines { .. }
            | Self::Table { .. } => ErrorClass::Syntax,
            // A cancelled profile is tried again on the next call, as after a lost connection.
            Self::Io { .. }
            | Self::File(_)
            | Self::Database { .. }
            | Self::Watch { .. }
            | Self::Aimdb(_)
            | Self::Cancelled(_) => ErrorClass::Resource,
        }
    }
}

/// A problem that did not stop loading (a skipped NDJSON line, a dangling edge endpoint, …).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadWarning {
    /// 1-based line, when the problem has a place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What happened.
    pub message: String,
}

impl LoadWarning {
    /// A warning without a place.
    pub fn new(message: impl Into<String>) -> Self {
        Self { line: None, column: None, message: message.into() }
    }

    /// A warning at a line and column.
    pub fn at(line: usize, column: usize, message: impl Into<String>) -> Self {
        Self { line: Some(line), column: Some(column), message: message.into() }
    }
}

impl std::fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l}, column {c}: {}", self.message),
            (Some(l), None) => write!(f, "line {l}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// Line and column (1-based) of byte `offset` in `text`.
pub fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, column)
}
