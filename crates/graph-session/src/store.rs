//! Saving sessions to a local SQLite file: one row per (session, part), every change written in
//! one transaction with `synchronous = FULL`, so an acknowledged change survives `kill -9` and a
//! failed write (disk full) leaves the previous state whole.

use schemascope_core::sync::lock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::algorithms::{ALGORITHMS, NAMESPACE};
use crate::error::GraphSessionError;
use crate::restore::MAX_PART_BYTES;

/// Whether `part` is a part schemascope writes (see `state::Part::key`).
fn is_known_part(part: &str) -> bool {
    matches!(part, "layers" | "selection" | "view" | "layout" | "history")
        || part.strip_prefix("results:").and_then(|k| k.strip_prefix(NAMESPACE)).is_some_and(|k| {
            k.strip_prefix('.').is_some_and(|t| ALGORITHMS.iter().any(|a| a.algorithm_type == t))
        })
}

/// The schema version written to `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// A session file.
#[derive(Debug)]
pub struct SessionStore {
    path: PathBuf,
    connection: Mutex<Connection>,
}

fn store_error(path: &Path, what: &str, error: impl std::fmt::Display) -> GraphSessionError {
    GraphSessionError::Storage(format!("session file {}: {what}: {error}", path.display()))
}

/// The session file and SQLite's companions (`-wal`, `-shm`), where they exist, must be regular
/// files: SQLite would block reading a FIFO put there, or read a device without end. Checked on
/// each file opened without blocking; a missing one is created by SQLite as a regular file. (The
/// check precedes SQLite's own open: whoever can swap files in the session directory between the
/// two can already rewrite the session.)
fn refuse_special_files(path: &Path) -> Result<(), GraphSessionError> {
    let mut names = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        names.push(PathBuf::from(name));
    }
    for name in names {
        match schemascope_sources::file::open_regular(&name) {
            Ok(_) => {}
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {}
            Err(e) => return Err(store_error(path, "refused", e)),
        }
    }
    Ok(())
}

impl SessionStore {
    /// Opens (or creates) the session file at `path`, creating its directory.
    pub fn open(path: &Path) -> Result<Self, GraphSessionError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| store_error(path, "cannot create its directory", e))?;
        }
        refuse_special_files(path)?;
        let connection = Connection::open(path).map_err(|e| store_error(path, "cannot open", e))?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;",
            )
            .map_err(|e| {
                // WAL needs to create `-wal` and `-shm` beside the file: a read-only directory or
                // file system fails here, with SQLite's terse "unable to open database file".
                store_error(
                    path,
                    "cannot configure (its directory must be writable: SQLite keeps two files beside it)",
                    e,
                )
            })?;
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| store_error(path, "cannot read", e))?;
        if version > SCHEMA_VERSION {
            return Err(store_error(
                path,
                "unsupported",
                format!(
                    "it was written by a newer schemascope (format {version}, this one reads {SCHEMA_VERSION})"
                ),
            ));
        }
        // Written only when missing, so a file on a full (or read-only) disk still opens and
        // restores; only saving then fails, clearly.
        let has_table: bool = connection
            .query_row("SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'session_part'", [], |r| r.get(0))
            .map_err(|e| store_error(path, "cannot read", e))?;
        if !has_table || version != SCHEMA_VERSION {
            connection
                .execute_batch(&format!(
                    "CREATE TABLE IF NOT EXISTS session_part (session TEXT NOT NULL, part TEXT NOT NULL, value TEXT NOT NULL, saved_at TEXT NOT NULL, PRIMARY KEY (session, part));
                     PRAGMA user_version = {SCHEMA_VERSION};"
                ))
                .map_err(|e| store_error(path, "cannot create its table (is it a schemascope session file?)", e))?;
        }
        Ok(Self { path: path.to_path_buf(), connection: Mutex::new(connection) })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every saved part of `session` that can be read, with a note for each that cannot: not
    /// text, longer than [`MAX_PART_BYTES`] (its length is read, not the value), or a part
    /// schemascope does not write.
    pub fn load(
        &self,
        session: &str,
    ) -> Result<(BTreeMap<String, String>, Vec<String>), GraphSessionError> {
        let connection = lock(&self.connection);
        let mut statement = connection
            .prepare(
                "SELECT part, typeof(value), length(CAST(value AS BLOB)), CASE WHEN typeof(value) = 'text' AND length(CAST(value AS BLOB)) <= ?2 THEN value END FROM session_part WHERE session = ?1",
            )
            .map_err(|e| store_error(&self.path, "cannot read", e))?;
        let limit = i64::try_from(MAX_PART_BYTES).unwrap_or(i64::MAX);
        let mut rows = statement
            .query(params![session, limit])
            .map_err(|e| store_error(&self.path, "cannot read", e))?;
        let (mut parts, mut notes, mut unknown) = (BTreeMap::new(), Vec::new(), 0usize);
        while let Some(row) = rows.next().map_err(|e| store_error(&self.path, "cannot read", e))? {
            let text = |i: usize| match row.get_ref(i) {
                Ok(rusqlite::types::ValueRef::Text(bytes)) => std::str::from_utf8(bytes).ok(),
                _ => None,
            };
            let Some(part) = text(0).filter(|p| is_known_part(p)) else {
                unknown += 1;
                continue;
            };
            let kind = text(1).unwrap_or_default();
            let bytes: i64 = row.get(2).unwrap_or(0);
            match text(3) {
                Some(value) => {
                    parts.insert(part.to_string(), value.to_string());
                }
                None if kind != "text" => {
                    notes.push(format!("saved `{part}` ignored: it is {kind}, not text"));
                }
                None if bytes > limit => notes.push(format!(
                    "saved `{part}` ignored: it is {bytes} bytes, more than the {MAX_PART_BYTES} read of one part"
                )),
                None => notes.push(format!("saved `{part}` ignored: it is not UTF-8 text")),
            }
        }
        if unknown > 0 {
            notes.push(format!(
                "{unknown} saved part(s) of this session are none schemascope writes; they were ignored"
            ));
        }
        Ok((parts, notes))
    }

    /// Writes `parts` of `session` in one transaction (an empty value deletes the part).
    pub fn save(
        &self,
        session: &str,
        parts: &[(String, String)],
        saved_at: &str,
    ) -> Result<(), GraphSessionError> {
        let mut connection = lock(&self.connection);
        let fail = |e: rusqlite::Error| {
            let hint = match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DiskFull) => {
                    "; the disk holding it is full: free some space there, or restart with --session-file on another disk"
                }
                Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::PermissionDenied) => {
                    "; it is not writable: check its permissions, or restart with --session-file elsewhere"
                }
                _ => "",
            };
            GraphSessionError::Storage(format!(
                "the change was not saved, so it was not applied (the previous state is kept): session file {}: {e}{hint}",
                self.path.display()
            ))
        };
        let tx = connection.transaction().map_err(fail)?;
        for (part, value) in parts {
            if value.is_empty() {
                tx.execute(
                    "DELETE FROM session_part WHERE session = ?1 AND part = ?2",
                    params![session, part],
                )
                .map_err(fail)?;
            } else {
                tx.execute(
                    "INSERT INTO session_part (session, part, value, saved_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (session, part) DO UPDATE SET value = excluded.value, saved_at = excluded.saved_at",
                    params![session, part, value, saved_at],
                )
                .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    /// When `session` was last saved, if ever.
    pub fn last_saved(&self, session: &str) -> Option<String> {
        let connection = lock(&self.connection);
        connection
            .query_row(
                "SELECT max(saved_at) FROM session_part WHERE session = ?1",
                params![session],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_saved_replaced_deleted_and_reloaded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("nested").join("sessions.sqlite");
        let store = SessionStore::open(&path).expect("open");
        store
            .save("g", &[("layers".into(), "[1]".into()), ("view".into(), "{}".into())], "t1")
            .expect("save");
        store
            .save("g", &[("layers".into(), "[2]".into()), ("view".into(), String::new())], "t2")
            .expect("save");
        store.save("other", &[("layers".into(), "[3]".into())], "t3").expect("save");
        drop(store);
        let store = SessionStore::open(&path).expect("reopen");
        let (parts, notes) = store.load("g").expect("load");
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            parts.into_iter().collect::<Vec<_>>(),
            [("layers".to_string(), "[2]".to_string())]
        );
        assert_eq!(store.last_saved("g").as_deref(), Some("t2"));
    }

    #[test]
    fn a_file_that_is_not_a_session_file_is_refused_clearly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("junk.sqlite");
        std::fs::write(&path, b"this is not a database at all, just text that is long enough")
            .expect("write");
        let error = SessionStore::open(&path).expect_err("not sqlite");
        assert!(error.to_string().contains("junk.sqlite"), "{error}");
    }
}
