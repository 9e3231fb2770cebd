//! Live refresh of file-backed sources: a changed file is reloaded after a debounce, and a file
//! source that failed to load is loaded as soon as its file appears or is fixed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemascope_core::sync::lock;
use schemascope_sources::FileWatcher;

use super::Sources;
use crate::result::ToolError;

/// The debounce of live refresh (seed 000: one second).
pub const REFRESH_DEBOUNCE: Duration = Duration::from_secs(1);

impl Sources {
    /// Starts watching every file-backed source: a change reloads it after `debounce`.
    pub fn watch_files(self: &Arc<Self>, debounce: Duration) -> Result<(), ToolError> {
        let mut files: Vec<(PathBuf, String)> = Vec::new();
        for source in self.sources().iter() {
            let Some(path) = &source.path else { continue };
            files.push((path.clone(), source.name().to_string()));
            // A SQLite commit in WAL mode changes only the log.
            let companions = source.database.iter().flat_map(|db| db.companion_files());
            files.extend(companions.map(|file| (file, source.name().to_string())));
        }
        // A failed file source is watched too, so it loads as soon as it appears or is fixed
        // (when its directory exists; the retry thread covers the rest).
        for failed in self.failed_sources() {
            let path = match &failed.spec.location {
                schemascope_sources::Location::File { path, .. }
                | schemascope_sources::Location::Sqlite(path) => path.clone(),
                _ => continue,
            };
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            if dir.is_dir() {
                files.push((path, failed.spec.name.clone()));
            }
        }
        if files.is_empty() {
            return Ok(());
        }
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        let weak = Arc::downgrade(self);
        let watcher = FileWatcher::new(&paths, debounce, move |changed: &Path| {
            let Some(sources) = weak.upgrade() else { return };
            for (path, name) in &files {
                if path == changed {
                    // A failed reload is recorded and shown by list_sources.
                    let _ = sources.reload(name);
                }
            }
        })?;
        *lock(&self.watcher) = Some(watcher);
        Ok(())
    }
}
