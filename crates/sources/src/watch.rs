//! Live refresh: watching source files and calling back, debounced, when one's content changes.
//!
//! The directory of each file is watched rather than the file, because editors and atomic
//! writers replace files by renaming, which a watch on the old inode would miss. Events are
//! debounced (one second by default, as seed 000 asks) so a burst of writes causes one reload.
//!
//! Only events that can change what a file holds lead anywhere: the watcher also sees every
//! open and read of the file — our own reload among them — and reacting to those reloaded the
//! file forever. A debounced change is then confirmed against the file's [`Fingerprint`]: an
//! unchanged file (a `touch`, a `chmod`, a rewrite with the same bytes) is no change.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime};

use notify_debouncer_mini::notify::event::{AccessKind, AccessMode};
use notify_debouncer_mini::notify::{
    self, Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher,
};

use crate::error::SourceError;

/// A burst of events that never pauses still reloads after this many debounce periods, so a
/// file appended to without pause is not left stale forever.
const MAX_DEBOUNCE_PERIODS: u32 = 5;

/// Keeps the watch alive; dropping it stops watching (and ends the debouncing thread).
pub struct FileWatcher {
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for FileWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileWatcher")
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    })
}

/// Whether an event can mean a file's content (or the file itself) changed. Opens, reads and
/// read-closes cannot: they are what loading the file causes.
pub fn can_change_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        // Metadata events (touch, chmod) are kept: a file made readable may now load; the
        // fingerprint tells a touch from a change.
        EventKind::Create(_)
        | EventKind::Modify(_)
        | EventKind::Remove(_)
        | EventKind::Any
        | EventKind::Other => true,
    }
}

/// What a file holds, as far as a reload is concerned: its identity and size and time (cheap,
/// from `stat`, which causes no watch event), and a hash of its bytes, read only when the cheap
/// part moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    meta: Option<Meta>,
    content: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Meta {
    len: u64,
    modified: Option<SystemTime>,
    identity: (u64, u64),
    readable: bool,
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

fn meta(path: &Path) -> Option<Meta> {
    let meta = std::fs::metadata(path).ok()?;
    // Readability is part of what a reload depends on: a file made readable must load. Only
    // regular files count as readable, checked on the opened file (`crate::file` opens without
    // blocking, so a FIFO put in the file's place cannot stall the watcher).
    let readable = meta.is_file() && crate::file::open_regular(path).is_ok();
    Some(Meta {
        len: meta.len(),
        modified: meta.modified().ok(),
        identity: identity(&meta),
        readable,
    })
}

/// A hash of the bytes of a regular file (`None` for anything else, or when it cannot be read:
/// FIFOs and devices are never read here). At most the source size limit and one byte more is
/// read: a larger file cannot load anyway, and its size and time already tell a change.
fn content_hash(path: &Path) -> Option<u64> {
    let (file, _) = crate::file::open_regular(path).ok()?;
    let mut file = file.take(crate::file::max_source_bytes().saturating_add(1));
    let mut hasher = std::hash::DefaultHasher::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file.read(&mut buffer).ok()?;
        if read == 0 {
            return Some(hasher.finish());
        }
        hasher.write(&buffer[..read]);
    }
}

impl Fingerprint {
    /// The fingerprint of `path` now.
    pub fn of(path: &Path) -> Self {
        Self { meta: meta(path), content: content_hash(path) }
    }

    /// Compares `path` now with this fingerprint, updating it: `true` when the content (or the
    /// file's presence or readability) changed. The bytes are hashed only when `stat` moved.
    pub fn refresh(&mut self, path: &Path) -> bool {
        let meta_now = meta(path);
        if meta_now == self.meta {
            return false;
        }
        let content_now = content_hash(path);
        let changed = content_now != self.content
            || content_now.is_none()
            || meta_now.as_ref().map(|m| m.readable) != self.meta.as_ref().map(|m| m.readable)
            || meta_now.is_none() != self.meta.is_none();
        self.meta = meta_now;
        self.content = content_now;
        changed
    }
}

/// One watched file: its path as given, its absolute path, and what it held last time.
struct Watched {
    given: PathBuf,
    fingerprint: Fingerprint,
}

impl FileWatcher {
    /// Watches `files`; `on_change` gets each file (as given) whose content changed, once per
    /// debounced burst of events.
    pub fn new<F>(files: &[PathBuf], debounce: Duration, on_change: F) -> Result<Self, SourceError>
    where
        F: Fn(&Path) + Send + 'static,
    {
        let watched: HashMap<PathBuf, Watched> = files
            .iter()
            .map(|f| (absolute(f), Watched { given: f.clone(), fingerprint: Fingerprint::of(f) }))
            .collect();
        let dirs: std::collections::BTreeSet<PathBuf> =
            watched.keys().filter_map(|abs| abs.parent().map(Path::to_path_buf)).collect();
        let (sender, events) = channel::<notify::Result<Event>>();
        let mut watcher = notify::recommended_watcher(sender)
            .map_err(|e| SourceError::Watch { path: PathBuf::new(), reason: e.to_string() })?;
        for dir in dirs {
            watcher
                .watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|e| SourceError::Watch { path: dir.clone(), reason: e.to_string() })?;
        }
        std::thread::Builder::new()
            .name("schemascope-watch".into())
            .spawn(move || debounce_loop(&events, watched, debounce, &on_change))
            .map_err(|e| SourceError::Watch { path: PathBuf::new(), reason: e.to_string() })?;
        Ok(Self { _watcher: watcher })
    }
}

/// The watched files an event is about (every file when the backend lost events).
fn affected<'a>(event: &Event, watched: &'a HashMap<PathBuf, Watched>) -> Vec<&'a PathBuf> {
    if event.need_rescan() {
        return watched.keys().collect();
    }
    if !can_change_content(&event.kind) {
        return Vec::new();
    }
    let mut files = Vec::new();
    for path in &event.paths {
        if let Some((abs, _)) = watched.get_key_value(path) {
            files.push(abs);
        } else if let Some((abs, _)) = watched.get_key_value(&absolute(path)) {
            // A symlinked directory reaches us under another spelling.
            files.push(abs);
        }
    }
    files
}

/// Collects relevant events per file and, once a file has been quiet for `debounce` (or busy
/// for [`MAX_DEBOUNCE_PERIODS`] of it), calls `on_change` if its content changed. Ends when
/// the watcher is dropped.
fn debounce_loop<F: Fn(&Path)>(
    events: &Receiver<notify::Result<Event>>,
    mut watched: HashMap<PathBuf, Watched>,
    debounce: Duration,
    on_change: &F,
) {
    // File → (first event of the burst, last event).
    let mut pending: BTreeMap<PathBuf, (Instant, Instant)> = BTreeMap::new();
    loop {
        let now = Instant::now();
        let due = |&(first, last): &(Instant, Instant)| {
            (last + debounce).min(first + debounce * MAX_DEBOUNCE_PERIODS)
        };
        let next = pending.values().map(due).min();
        let received = match next {
            Some(at) => events.recv_timeout(at.saturating_duration_since(now)),
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(Ok(event)) => {
                let now = Instant::now();
                for abs in affected(&event, &watched) {
                    pending
                        .entry(abs.clone())
                        .and_modify(|(_, last)| *last = now)
                        .or_insert((now, now));
                }
            }
            // The backend failed to tell what happened: look at every file (the fingerprint
            // keeps this from reloading files that did not change).
            Ok(Err(_)) => {
                let now = Instant::now();
                for abs in watched.keys() {
                    pending
                        .entry(abs.clone())
                        .and_modify(|(_, last)| *last = now)
                        .or_insert((now, now));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        let ready: Vec<PathBuf> = pending
            .iter()
            .filter(|(_, times)| due(times) <= now)
            .map(|(abs, _)| abs.clone())
            .collect();
        for abs in ready {
            pending.remove(&abs);
            let Some(file) = watched.get_mut(&abs) else { continue };
            if file.fingerprint.refresh(&file.given) {
                on_change(&file.given);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, ModifyKind, RemoveKind, RenameMode};

    #[test]
    fn reads_and_opens_cannot_change_content_but_writes_renames_and_removals_can() {
        assert!(!can_change_content(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!can_change_content(&EventKind::Access(AccessKind::Read)));
        assert!(!can_change_content(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(can_change_content(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(can_change_content(&EventKind::Modify(ModifyKind::Data(DataChange::Any))));
        assert!(can_change_content(&EventKind::Modify(ModifyKind::Name(RenameMode::To))));
        assert!(can_change_content(&EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any))));
        assert!(can_change_content(&EventKind::Create(CreateKind::File)));
        assert!(can_change_content(&EventKind::Remove(RemoveKind::File)));
    }

    #[test]
    fn fingerprint_tells_a_touch_from_a_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.json");
        std::fs::write(&path, "{\"a\": 1}").expect("write");
        let mut print = Fingerprint::of(&path);
        assert!(!print.refresh(&path), "nothing happened");
        // Same bytes, new time: a touch.
        std::fs::write(&path, "{\"a\": 1}").expect("rewrite");
        let file = std::fs::File::options().write(true).open(&path).expect("open");
        file.set_modified(SystemTime::now() + Duration::from_secs(5)).expect("set mtime");
        drop(file);
        assert!(!print.refresh(&path), "same content is no change");
        // Same length, other bytes.
        std::fs::write(&path, "{\"a\": 2}").expect("rewrite");
        let file = std::fs::File::options().write(true).open(&path).expect("open");
        file.set_modified(SystemTime::now() + Duration::from_secs(10)).expect("set mtime");
        drop(file);
        assert!(print.refresh(&path));
        assert!(!print.refresh(&path), "seen once");
        std::fs::remove_file(&path).expect("remove");
        assert!(print.refresh(&path), "a file gone is a change");
        assert!(!print.refresh(&path));
        std::fs::write(&path, "{\"a\": 2}").expect("recreate");
        assert!(print.refresh(&path), "a file back is a change, even with the bytes it had");
    }

    #[cfg(unix)]
    #[test]
    #[allow(unsafe_code)] // mkfifo, to test that a FIFO is never read
    fn a_fifo_or_a_link_to_dev_zero_in_a_files_place_is_a_change_that_is_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.json");
        std::fs::write(&path, "{\"a\": 1}").expect("write");
        let mut print = Fingerprint::of(&path);
        std::fs::remove_file(&path).expect("remove");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        // Returns (opening a FIFO for reading would wait for a writer) and says it changed.
        assert!(print.refresh(&path), "a FIFO in the file's place is a change");
        assert_eq!(print.content, None, "and it is not read");
        std::fs::remove_file(&path).expect("remove");
        std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
        assert!(print.refresh(&path), "a link to /dev/zero is a change");
        assert_eq!(
            (print.content, print.meta.as_ref().map(|m| m.readable)),
            (None, Some(false)),
            "never read, never readable"
        );
    }
}
