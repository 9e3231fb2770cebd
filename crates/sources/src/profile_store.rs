//! Database tables' profiles kept on disk across restarts, reused while the table is unchanged.
//!
//! A table's profile can take minutes to compute; when the server restarts, most tables have not
//! changed. Each profile is stored under the table's *data version*, a token the engine gives
//! ([`crate::sql::Database::data_version`]) that changes whenever the table's rows may have:
//! PostgreSQL's per-table change counters and file node, ClickHouse's immutable part names,
//! a SQLite file's content hash. A profile is reused only when the source, table, columns,
//! schemascope version and data version all equal what was stored, and stored only when the
//! version did not move while the table was read; an engine that cannot tell (views, a
//! PostgreSQL standby, `track_counts` off) has its tables profiled anew each time.
//!
//! Entries hold what profiles hold — counts, extremes, frequent values — so files are written
//! readable by their owner only, in a directory only the owner may enter.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use schemascope_core::profile::StoredProfile;
use schemascope_core::{CollectionProfile, TableInfo};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Changes whenever the stored form changes; entries of another format are ignored.
const FORMAT: u32 = 1;

/// Most entries kept; past it the least recently written are removed (a store follows the
/// tables of every database it ever served, each scratch schema of a test run included).
const MAX_ENTRIES: usize = 4_096;

/// The largest entry read back (a profile of a table of 1,600 columns is a few MB).
const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Where profiles are kept when nothing else is said: `$XDG_CACHE_HOME/schemascope/profiles`,
/// else `~/.cache/schemascope/profiles`; `None` when neither variable is set.
pub fn default_dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| Path::new(&h).join(".cache"))
        })?;
    Some(cache.join("schemascope").join("profiles"))
}

/// A directory of stored table profiles.
#[derive(Debug, Clone)]
pub struct ProfileStore {
    dir: PathBuf,
}

/// What a stored profile must match to be reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryKey {
    /// The database, as [`crate::sql::Database::location`] names it (no password).
    location: String,
    /// The table's name.
    table: String,
    /// Every column's name, declared type and nullability: a profile is of these columns.
    columns: String,
    /// The engine's data version of the table.
    data_version: String,
}

impl EntryKey {
    /// The key of `table` of the database at `location`, at `data_version`.
    pub fn new(location: &str, table: &TableInfo, data_version: String) -> Self {
        let columns = table
            .columns
            .iter()
            .map(|c| {
                format!(
                    "{}\u{1f}{}\u{1f}{}\u{1f}{}",
                    c.name,
                    c.declared_type,
                    c.base_type.as_deref().unwrap_or_default(),
                    c.nullable
                )
            })
            .collect::<Vec<_>>()
            .join("\u{1e}");
        Self { location: location.into(), table: table.name.clone(), columns, data_version }
    }

    /// The data version the key was made with.
    pub fn data_version(&self) -> &str {
        &self.data_version
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    schemascope: String,
    key: EntryKey,
    profile: StoredProfile,
}

impl ProfileStore {
    /// Profiles kept in `dir` (created when the first is stored).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// One file per table of a database: a new version replaces the last.
    fn entry_path(&self, key: &EntryKey) -> PathBuf {
        let digest = Sha256::new()
            .chain_update(key.location.as_bytes())
            .chain_update([0])
            .chain_update(key.table.as_bytes())
            .finalize();
        self.dir.join(format!("{}.json", hex(&digest[..16])))
    }

    /// The profile stored under `key`, if one was, by this user and writable by no one else,
    /// and it reads back whole. A FIFO or device in its place is passed over without waiting.
    pub fn load(&self, key: &EntryKey) -> Option<CollectionProfile> {
        let (file, metadata) = crate::file::open_regular(&self.entry_path(key)).ok()?;
        if !written_by_this_user(&metadata) {
            return None;
        }
        let mut text = Vec::new();
        file.take(MAX_ENTRY_BYTES).read_to_end(&mut text).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        let current =
            entry.format == FORMAT && entry.schemascope == profiler_version() && entry.key == *key;
        current.then(|| entry.profile.into_profile()).flatten()
    }

    /// Stores `profile` under `key` (a profile the stored form cannot hold whole is not
    /// stored). Failing to store is not an error: the table is profiled again next time.
    pub fn save(&self, key: &EntryKey, profile: &CollectionProfile) {
        let Some(stored) = StoredProfile::of(profile) else { return };
        let entry = Entry {
            format: FORMAT,
            schemascope: profiler_version(),
            key: key.clone(),
            profile: stored,
        };
        let Ok(text) = serde_json::to_vec(&entry) else { return };
        // Best effort by design (see above).
        if self.write(&self.entry_path(key), &text).is_ok() {
            self.prune();
        }
    }

    /// Removes the least recently written entries past [`MAX_ENTRIES`], down to three quarters
    /// of it, so pruning is rare.
    fn prune(&self) {
        let Ok(listed) = fs::read_dir(&self.dir) else { return };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = listed
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if entries.len() <= MAX_ENTRIES {
            return;
        }
        entries.sort();
        let surplus = entries.len() - MAX_ENTRIES * 3 / 4;
        for (_, path) in entries.into_iter().take(surplus) {
            let _ = fs::remove_file(path);
        }
    }

    /// Writes a whole entry or none: a reader never sees half a file.
    fn write(&self, path: &Path, text: &[u8]) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
        let mut file = private_file(&temporary)?;
        let written = file.write_all(text).and_then(|()| file.sync_data());
        drop(file);
        match written.and_then(|()| fs::rename(&temporary, path)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = fs::remove_file(&temporary);
                Err(e)
            }
        }
    }
}

/// True when the file belongs to the user running this process and no one else may write it,
/// as ssh asks of its keys: a profile planted by another user is not believed.
#[cfg(unix)]
fn written_by_this_user(metadata: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail.
    #[allow(unsafe_code)] // one FFI call, its safety stated above
    let user = unsafe { libc::geteuid() };
    metadata.uid() == user && metadata.mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn written_by_this_user(_metadata: &fs::Metadata) -> bool {
    true
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<fs::File> {
    fs::OpenOptions::new().write(true).create_new(true).open(path)
}

/// The version a stored profile was computed by: schemascope's, and the revision of the rules
/// that compute a database profile ([`crate::sql::pushdown::PROFILE_RULES`]), so that a profile
/// computed by rules since corrected is not reused.
fn profiler_version() -> String {
    format!("{}+rules.{}", env!("CARGO_PKG_VERSION"), crate::sql::pushdown::PROFILE_RULES)
}

/// The SHA-256 of `bytes` as hex: a short data version for a long description of the data.
pub(crate) fn digest_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}
