//! Live refresh: watching source files and calling back, debounced, when one changes.
//!
//! The directory of each file is watched rather than the file, because editors and atomic
//! writers replace files by renaming, which a watch on the old inode would miss. Events are
//! debounced (one second by default, as seed 000 asks) so a burst of writes causes one reload.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

use crate::error::SourceError;

/// Keeps the watch alive; dropping it stops watching.
pub struct FileWatcher {
    _debouncer: Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>,
}

impl std::fmt::Debug for FileWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileWatcher")
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf()))
}

impl FileWatcher {
    /// Watches `files`; `on_change` gets each changed file (as given) once per debounced burst.
    pub fn new<F>(files: &[PathBuf], debounce: Duration, on_change: F) -> Result<Self, SourceError>
    where
        F: Fn(&Path) + Send + 'static,
    {
        let wanted: Vec<(PathBuf, PathBuf)> = files.iter().map(|f| (absolute(f), f.clone())).collect();
        let handler = {
            let wanted = wanted.clone();
            move |result: DebounceEventResult| {
                let Ok(events) = result else { return };
                let mut changed = HashSet::new();
                for event in events {
                    for (abs, given) in &wanted {
                        if event.path == *abs || absolute(&event.path) == *abs {
                            changed.insert(given.clone());
                        }
                    }
                }
                for file in changed {
                    on_change(&file);
                }
            }
        };
        let mut debouncer = new_debouncer(debounce, handler).map_err(|e| SourceError::Watch { path: PathBuf::new(), reason: e.to_string() })?;
        let dirs: HashSet<PathBuf> = wanted.iter().filter_map(|(abs, _)| abs.parent().map(Path::to_path_buf)).collect();
        for dir in dirs {
            debouncer
                .watcher()
                .watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|e| SourceError::Watch { path: dir.clone(), reason: e.to_string() })?;
        }
        Ok(Self { _debouncer: debouncer })
    }
}
