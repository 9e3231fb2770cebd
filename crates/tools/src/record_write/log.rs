//! The log of writes: one JSON object per write that reached an instance — who asked, which
//! record, what changed, how it ended — as an `info` event of target `schemascope::writes`
//! (shown by default on the server's standard error) and, when the operator names a file
//! (`serve --write-log FILE`), appended to it as one line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use serde_json::Value;

use schemascope_core::sync::{lock, read, write};

/// The tracing target of write events.
pub const TARGET: &str = "schemascope::writes";

/// Where writes are logged besides the server's standard error.
#[derive(Debug, Default)]
pub struct WriteLog {
    file: RwLock<Option<PathBuf>>,
    /// One append at a time, so lines never interleave.
    appending: Mutex<()>,
}

impl WriteLog {
    /// Appends each write to `file` from now on (`None`: standard error only). The file is
    /// created if missing; an error opening it is returned, so a server does not start with an
    /// audit log it cannot write.
    pub fn set_file(&self, file: Option<PathBuf>) -> std::io::Result<()> {
        if let Some(path) = &file {
            open(path)?;
        }
        *write(&self.file) = file;
        Ok(())
    }

    /// The file writes are appended to.
    pub fn file(&self) -> Option<PathBuf> {
        read(&self.file).clone()
    }

    /// Logs one write: `entry` whole to the file, `shown` (the same with long values cut) on
    /// standard error. An entry the file refuses is an error to tell the caller (the write itself
    /// has happened: failing the call would tell the model it did not).
    pub(crate) fn record(&self, entry: &Value, shown: &Value) -> Result<(), String> {
        tracing::info!(target: TARGET, "{shown}");
        let Some(path) = self.file() else { return Ok(()) };
        let _one = lock(&self.appending);
        let appended = open(&path).and_then(|mut f| f.write_all(format!("{entry}\n").as_bytes()));
        appended.map_err(|error| {
            tracing::error!(target: TARGET, path = %path.display(), %error, "cannot append to the write log");
            format!("the write log {} could not be appended to ({error})", path.display())
        })
    }
}

/// The log file, created readable by its owner only: it holds every value written.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path)
}
