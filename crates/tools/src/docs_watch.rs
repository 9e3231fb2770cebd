//! Whether a docs directory may have changed since it was read, answered without reading it, so
//! that a search reuses its index without reopening every docs file.
//!
//! On Linux an inotify watch is added before the directory is read; the kernel queues an event
//! when a write, create, delete, rename or permission change inside it completes, before that
//! call returns, so one non-blocking read of the queue sees every change made before the
//! question, with no thread in between to race. The directory's identity (device and inode) is
//! compared too, for a directory replaced at its path. Where the kernel cannot say (another
//! system, no inotify instance left, a file reached through a link or another hard link, a
//! network filesystem whose remote writers it never hears of) the directory is read again: on
//! every call without a watch, and at least every [`RECHECK`] with one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest a watched directory goes unread: the bound on how late a change the kernel does
/// not report (a network filesystem's remote writer) is seen.
pub(crate) const RECHECK: Duration = Duration::from_secs(2);

/// A directory's device and inode.
type Identity = (u64, u64);

fn identity(dir: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().filter(|m| m.is_dir()).map(|m| (m.dev(), m.ino()))
}

/// A watch on one docs directory, started before it is read.
#[derive(Debug)]
pub(crate) struct DirWatch {
    /// `None` for no directory at all: nothing to change.
    dir: Option<PathBuf>,
    /// `None` when the directory did not exist: it is unchanged while it still does not.
    identity: Option<Identity>,
    #[cfg(target_os = "linux")]
    events: Option<inotify::Inotify>,
    started: Instant,
    /// Set once a change was seen, for every later caller too (the event is read only once).
    changed: bool,
}

impl DirWatch {
    /// Watches `dir` from now on (no directory: nothing ever changes), and the directories
    /// `also` (the examples directory inside it, the one holding the recorded examples): a
    /// change in any of them is a change. One of `also` that does not exist is not watched (its
    /// creation inside `dir` is seen). `None` when no watch can be had (see the module's notes).
    pub(crate) fn start(dir: Option<&Path>, also: &[PathBuf]) -> Option<Self> {
        let identity = dir.and_then(identity);
        #[cfg(target_os = "linux")]
        let events = {
            let watched: Vec<&Path> = identity
                .and(dir)
                .into_iter()
                .chain(also.iter().map(PathBuf::as_path).filter(|p| p.is_dir()))
                .collect();
            if watched.is_empty() { None } else { Some(inotify_watch(&watched)?) }
        };
        #[cfg(not(target_os = "linux"))]
        if identity.is_some() || !also.is_empty() {
            return None;
        }
        Some(Self {
            dir: dir.map(Path::to_path_buf),
            identity,
            #[cfg(target_os = "linux")]
            events,
            started: Instant::now(),
            changed: false,
        })
    }

    /// True when nothing in the directory can have changed since the watch started. A `false`
    /// is final: the caller reads the directory again under a new watch.
    pub(crate) fn unchanged(&mut self) -> bool {
        if self.dir.is_none() && !self.watches() {
            return true;
        }
        let moved = self.dir.as_deref().is_some_and(|dir| identity(dir) != self.identity);
        self.changed =
            self.changed || self.started.elapsed() >= RECHECK || moved || self.event_queued();
        !self.changed
    }

    /// True when the kernel watches something for it.
    fn watches(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.events.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Whether the kernel queued an event since the last look.
    #[cfg(target_os = "linux")]
    fn event_queued(&mut self) -> bool {
        let Some(events) = &mut self.events else { return false };
        // Room for a few events: one is enough to know.
        let mut buffer = [0u8; 1024];
        match events.read_events(&mut buffer) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            // An event (or an overflow, or an error reading the queue): it may have changed.
            _ => true,
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn event_queued(&mut self) -> bool {
        false
    }
}

/// An inotify instance watching every change of the entries of `dirs` and of each itself.
#[cfg(target_os = "linux")]
fn inotify_watch(dirs: &[&Path]) -> Option<inotify::Inotify> {
    use inotify::WatchMask;
    let events = inotify::Inotify::init().ok()?;
    let mask = WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR;
    for dir in dirs {
        events.watches().add(dir, mask).ok()?;
    }
    Some(events)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_change_is_seen_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = dir.path().join("Album.md");
        std::fs::write(&doc, "# Table: Album\n").expect("write");
        let changes: [&dyn Fn(); 5] = [
            &|| std::fs::write(&doc, "# Table: Album\n\nEdited.\n").expect("edit"),
            &|| std::fs::write(dir.path().join("Track.md"), "# Table: Track\n").expect("create"),
            &|| std::fs::rename(dir.path().join("Track.md"), dir.path().join("T.md")).expect("mv"),
            &|| std::fs::remove_file(dir.path().join("T.md")).expect("remove"),
            &|| {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::Permissions::from_mode(0o200);
                std::fs::set_permissions(&doc, mode).expect("chmod")
            },
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut watch = DirWatch::start(Some(dir.path()), &[]).expect("a watch");
            assert!(watch.unchanged(), "change {i}: nothing happened yet");
            change();
            assert!(!watch.unchanged(), "change {i} is seen by the next call");
            assert!(!watch.unchanged(), "change {i} is still a change for the caller after");
        }
    }

    #[test]
    fn a_directory_replaced_or_created_at_its_path_is_a_change() {
        let parent = tempfile::tempdir().expect("tempdir");
        let dir = parent.path().join("docs");
        let mut missing = DirWatch::start(Some(&dir), &[]).expect("a watch on a missing directory");
        assert!(missing.unchanged());
        std::fs::create_dir(&dir).expect("mkdir");
        assert!(!missing.unchanged(), "created");
        let mut watch = DirWatch::start(Some(&dir), &[]).expect("a watch");
        std::fs::rename(&dir, parent.path().join("old")).expect("mv");
        std::fs::create_dir(&dir).expect("mkdir");
        assert!(!watch.unchanged(), "replaced");
        assert!(DirWatch::start(None, &[]).expect("no directory").unchanged());
    }

    #[test]
    fn reading_the_directory_is_no_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("Album.md"), "# Table: Album\n").expect("write");
        let mut watch = DirWatch::start(Some(dir.path()), &[]).expect("a watch");
        let _ = std::fs::read_dir(dir.path()).expect("list").count();
        let _ = std::fs::read_to_string(dir.path().join("Album.md")).expect("read");
        assert!(watch.unchanged());
        assert!(watch.unchanged(), "asking again changes nothing");
    }
}
