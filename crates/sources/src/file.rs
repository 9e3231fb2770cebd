//! Opening files named by users, data and directories so that no name can make a read block or
//! run without end: only regular files are read, each within a size limit, and a file found in a
//! directory is read only when it really lies inside that directory.
//!
//! The type is checked on the open file, not on the name: the file is opened with `O_NONBLOCK`
//! (a FIFO then opens at once instead of waiting for a writer; regular files ignore the flag)
//! and `fstat` decides, so nothing can be swapped in between a check and the read. Sizes come
//! from the same `fstat` and reads stop one byte past the limit, so a file growing meanwhile is
//! still bounded. Every reader of the workspace — sources, their watcher, schema docs, token,
//! configuration, query and session files — goes through here.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The default largest source file (graph, record or document set) read: 4 GiB. A source is
/// held in memory whole, so the bound is what one machine can profile, not what a disk holds.
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 4 << 30;

/// The largest small file read: a token, a retrieval configuration, a query or a value given
/// with `@FILE`, a schema doc (16 MiB).
pub const MAX_SMALL_FILE_BYTES: u64 = 16 << 20;

/// The limit for source files, set once by the binary (`--max-file-bytes`).
static MAX_SOURCE_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_SOURCE_BYTES);

/// The largest source file read, in bytes.
pub fn max_source_bytes() -> u64 {
    MAX_SOURCE_BYTES.load(Ordering::Relaxed)
}

/// Sets the largest source file read (at least 1 byte).
pub fn set_max_source_bytes(bytes: u64) {
    MAX_SOURCE_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The system refused to open or read it.
    #[error("cannot read {}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error: in the message, so not also a `source` that error reports repeat.
        cause: std::io::Error,
    },
    /// It is a FIFO, a device, a socket or a directory: reading could block or never end.
    #[error("{} is {kind}, not a regular file; only regular files are read", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead ("a FIFO", "a character device", …).
        kind: &'static str,
    },
    /// It is larger than the limit for what it is used as.
    #[error("{}", too_large(path, *size, *whole, *limit, what))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, when `whole`; else the bytes read before reading stopped (a file that grew
        /// while read, a stream): then it holds at least this much.
        size: u64,
        /// True when `size` is the file's size (from `fstat`), false when it is where reading
        /// stopped.
        whole: bool,
        /// The limit.
        limit: u64,
        /// The limit's name and how to change it, e.g. "for a source file (raise it with --max-file-bytes)".
        what: &'static str,
    },
    /// Found in a directory, it resolves (through a symbolic link) to a place outside it.
    #[error("{} leads outside {} (to {}); links out of the directory are not followed", path.display(), dir.display(), target.display())]
    OutsideDir {
        /// The entry in the directory.
        path: PathBuf,
        /// The directory.
        dir: PathBuf,
        /// Where it leads.
        target: PathBuf,
    },
    /// Not valid UTF-8 where text is expected.
    #[error("{} is not valid UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

impl FileError {
    /// The underlying OS error, if the system refused (a missing file is `NotFound`).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Self::Io { cause, .. } => Some(cause.kind()),
            _ => None,
        }
    }
}

fn io(path: &Path, source: std::io::Error) -> FileError {
    FileError::Io { path: path.to_path_buf(), cause: source }
}

/// What a file that is not regular is, for messages.
fn kind_of(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

#[cfg(unix)]
fn open_options(nofollow: bool) -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    // O_NONBLOCK: a FIFO opens at once rather than waiting for a writer (regular files ignore
    // it); O_NOCTTY: a terminal device never becomes the controlling terminal.
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    options.read(true).custom_flags(flags);
    options
}

#[cfg(not(unix))]
fn open_options(_nofollow: bool) -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    options
}

fn open_checked(path: &Path, nofollow: bool) -> Result<(File, Metadata), FileError> {
    #[cfg(not(unix))]
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind: kind_of(&meta) });
    }
    let file = open_options(nofollow).open(path).map_err(|e| io(path, e))?;
    let meta = file.metadata().map_err(|e| io(path, e))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind: kind_of(&meta) });
    }
    Ok((file, meta))
}

/// Opens `path` for reading if it is a regular file (after following links), with its metadata.
/// A FIFO, device, socket or directory is refused without blocking.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    open_checked(path, false)
}

/// Opens `path` for appending, creating it if missing, if it is a regular file: a FIFO without
/// a reader is refused at once (`O_NONBLOCK`) rather than waited on, and with one it is refused
/// too, as is a device.
pub fn open_append_regular(path: &Path) -> Result<File, FileError> {
    let mut options = open_options(false);
    options.read(false).append(true).create(true);
    let file = options.open(path).map_err(|e| io(path, e))?;
    let meta = file.metadata().map_err(|e| io(path, e))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular { path: path.to_path_buf(), kind: kind_of(&meta) });
    }
    Ok(file)
}

/// The message of [`FileError::TooLarge`]: the size measured, or where reading stopped when the
/// whole size is not known (a file growing while read, a stream), never the limit as a size.
fn too_large(path: &Path, size: u64, whole: bool, limit: u64, what: &str) -> String {
    if whole {
        format!("{} is {size} bytes, over the {limit}-byte limit {what}", path.display())
    } else {
        format!(
            "{} is over the {limit}-byte limit {what}: reading stopped after {size} bytes, before its end",
            path.display()
        )
    }
}

/// Checks that `path`'s size is within `limit`, naming the limit as `what` otherwise.
pub fn check_size(
    path: &Path,
    meta: &Metadata,
    limit: u64,
    what: &'static str,
) -> Result<(), FileError> {
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            whole: true,
            limit,
            what,
        });
    }
    Ok(())
}

/// Reads all of an opened regular file, refusing more than `limit` bytes even if it grows.
pub fn read_opened(
    path: &Path,
    file: File,
    meta: &Metadata,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, FileError> {
    check_size(path, meta, limit, what)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            whole: false,
            limit,
            what,
        });
    }
    Ok(bytes)
}

/// Reads the regular file `path`, at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    read_opened(path, file, &meta, limit, what)
}

/// Reads the regular file `path` as UTF-8 text, at most `limit` bytes.
pub fn read_string(path: &Path, limit: u64, what: &'static str) -> Result<String, FileError> {
    String::from_utf8(read_bytes(path, limit, what)?)
        .map_err(|_| FileError::NotText { path: path.to_path_buf() })
}

/// Reads a small file: a token, a configuration, a query (at most [`MAX_SMALL_FILE_BYTES`]).
pub fn read_small_string(path: &Path) -> Result<String, FileError> {
    read_string(
        path,
        MAX_SMALL_FILE_BYTES,
        "for a small input file (token, configuration, query, doc)",
    )
}

/// Reads at most [`MAX_SMALL_FILE_BYTES`] from a stream such as standard input.
pub fn read_small_stream(name: &Path, stream: impl Read) -> Result<String, FileError> {
    let mut bytes = Vec::new();
    stream.take(MAX_SMALL_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io(name, e))?;
    if bytes.len() as u64 > MAX_SMALL_FILE_BYTES {
        return Err(FileError::TooLarge {
            path: name.to_path_buf(),
            size: bytes.len() as u64,
            whole: false,
            limit: MAX_SMALL_FILE_BYTES,
            what: "for a small input (token, configuration, query, doc)",
        });
    }
    String::from_utf8(bytes).map_err(|_| FileError::NotText { path: name.to_path_buf() })
}

/// A directory whose entries are read only when they lie inside it (unless links out are
/// allowed): the directory is resolved once, each entry when it is opened.
#[derive(Debug, Clone)]
pub struct ConfinedDir {
    dir: PathBuf,
    canonical: PathBuf,
    follow_out: bool,
}

impl ConfinedDir {
    /// The directory `dir`; with `follow_out`, links leading outside it are followed too.
    pub fn new(dir: &Path, follow_out: bool) -> Result<Self, FileError> {
        let canonical = std::fs::canonicalize(dir).map_err(|e| io(dir, e))?;
        Ok(Self { dir: dir.to_path_buf(), canonical, follow_out })
    }

    /// The directory as given.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Opens the entry `path` of this directory if it is a regular file inside it. The entry is
    /// resolved (`canonicalize`), its target checked to be under the directory, and the target
    /// opened without following a link in its last component, so a link swapped in after the
    /// check fails to open rather than leading elsewhere.
    pub fn open(&self, path: &Path) -> Result<(File, Metadata), FileError> {
        let target = std::fs::canonicalize(path).map_err(|e| io(path, e))?;
        if !self.follow_out && !target.starts_with(&self.canonical) {
            return Err(FileError::OutsideDir {
                path: path.to_path_buf(),
                dir: self.dir.clone(),
                target,
            });
        }
        open_checked(&target, true).map_err(|e| match e {
            // Name the entry the user knows, not its resolved target.
            FileError::NotRegular { kind, .. } => {
                FileError::NotRegular { path: path.to_path_buf(), kind }
            }
            FileError::Io { cause, .. } => FileError::Io { path: path.to_path_buf(), cause },
            other => other,
        })
    }

    /// Reads the entry `path` as UTF-8 text, at most `limit` bytes, as [`ConfinedDir::open`] allows.
    pub fn read_string(
        &self,
        path: &Path,
        limit: u64,
        what: &'static str,
    ) -> Result<String, FileError> {
        let (file, meta) = self.open(path)?;
        let bytes = read_opened(path, file, &meta, limit, what)?;
        String::from_utf8(bytes).map_err(|_| FileError::NotText { path: path.to_path_buf() })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[allow(unsafe_code)] // mkfifo, to test that a FIFO is refused
    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    }

    #[test]
    fn fifos_devices_and_directories_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pipe = dir.path().join("pipe.json");
        fifo(&pipe);
        for (path, kind) in [
            (pipe.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            let error = read_bytes(path, 1 << 20, "for a test").expect_err("refused");
            assert!(matches!(error, FileError::NotRegular { .. }), "{error:?}");
            assert!(
                error.to_string().contains(kind)
                    && error.to_string().contains("only regular files are read"),
                "{error}"
            );
        }
        let link = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        assert!(matches!(
            read_bytes(&link, 1 << 20, "for a test"),
            Err(FileError::NotRegular { kind: "a character device", .. })
        ));
    }

    #[test]
    fn sizes_over_the_limit_are_refused_before_reading_even_when_sparse() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sparse = dir.path().join("huge.json");
        File::create(&sparse).and_then(|f| f.set_len(1 << 40)).expect("sparse file");
        let error = read_bytes(&sparse, 1 << 20, "for a test (raise it with --flag)")
            .expect_err("too large");
        assert_eq!(
            error.to_string(),
            format!(
                "{} is 1099511627776 bytes, over the 1048576-byte limit for a test (raise it with --flag)",
                sparse.display()
            )
        );
        let small = dir.path().join("small.json");
        std::fs::write(&small, b"{\"a\": 1}").expect("write");
        assert_eq!(read_string(&small, 8, "x").expect("exactly at the limit"), "{\"a\": 1}");
        assert!(matches!(
            read_string(&small, 7, "x"),
            Err(FileError::TooLarge { size: 8, limit: 7, .. })
        ));
        // An endless stream has no size to state: the message says where reading stopped.
        let endless = read_small_stream(Path::new("stdin"), std::io::repeat(b'a'))
            .expect_err("over the limit");
        assert!(
            matches!(endless, FileError::TooLarge { size, whole: false, .. } if size == MAX_SMALL_FILE_BYTES + 1)
        );
        assert_eq!(
            endless.to_string(),
            format!(
                "stdin is over the {MAX_SMALL_FILE_BYTES}-byte limit for a small input (token, configuration, query, doc): reading stopped after {} bytes, before its end",
                MAX_SMALL_FILE_BYTES + 1
            )
        );
    }

    #[test]
    fn entries_of_a_directory_are_read_only_inside_it_unless_asked() {
        let outside = tempfile::tempdir().expect("tempdir");
        let secret = outside.path().join("secret.md");
        std::fs::write(&secret, "# secret").expect("write");
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("inside.md"), "# inside").expect("write");
        std::os::unix::fs::symlink(dir.path().join("inside.md"), dir.path().join("alias.md"))
            .expect("symlink");
        std::os::unix::fs::symlink(&secret, dir.path().join("out.md")).expect("symlink");
        std::os::unix::fs::symlink("../../../../../../../../dev/zero", dir.path().join("zero.md"))
            .expect("symlink");
        let confined = ConfinedDir::new(dir.path(), false).expect("dir");
        assert_eq!(
            confined.read_string(&dir.path().join("inside.md"), 100, "x").expect("inside"),
            "# inside"
        );
        assert_eq!(
            confined.read_string(&dir.path().join("alias.md"), 100, "x").expect("a link inside"),
            "# inside"
        );
        let out = confined.read_string(&dir.path().join("out.md"), 100, "x").expect_err("outside");
        assert!(
            matches!(out, FileError::OutsideDir { .. }) && out.to_string().contains("secret.md"),
            "{out}"
        );
        assert!(matches!(
            confined.read_string(&dir.path().join("zero.md"), 100, "x"),
            Err(FileError::OutsideDir { .. })
        ));
        let open = ConfinedDir::new(dir.path(), true).expect("dir");
        assert_eq!(
            open.read_string(&dir.path().join("out.md"), 100, "x").expect("asked for"),
            "# secret"
        );
        let zero = open
            .read_string(&dir.path().join("zero.md"), 100, "x")
            .expect_err("still not a regular file");
        assert!(zero.to_string().contains("zero.md is a character device"), "{zero}");
    }
}
