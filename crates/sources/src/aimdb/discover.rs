//! The AimDB instances of the directories the operator allows: naming one by its socket path
//! ([`AllowedDirs::admit`]: the path, symbolic links resolved, must be a socket inside one of
//! them), and finding them all ([`discover`]: every socket there, each asked for its AimX
//! handshake and record list). Every walk, wait and count is bounded.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use super::client::AimxClient;
use super::endpoint::is_socket;
use super::limits::{Limits, limits};
use super::snapshot::{record_key, type_name, writable};

/// How many levels below an allowed directory sockets are looked for.
pub const MAX_DEPTH: usize = 2;
/// The most directory entries looked at per discovery, over all directories.
pub const MAX_ENTRIES: usize = 10_000;
/// The most sockets asked per discovery.
pub const MAX_PROBED: usize = 64;
/// Sockets asked at once.
const PROBES_AT_ONCE: usize = 16;
/// The most records listed per instance.
const RECORDS_LISTED: usize = 200;
/// The longest line a socket asked may send (its welcome, its record list): 16 sockets are
/// asked at once, so each within 4 MiB rather than the bound of a served instance.
const PROBE_LINE_BYTES: u64 = 4 << 20;

/// One directory the operator allows instances in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowedDir {
    /// The directory, symbolic links resolved.
    pub path: PathBuf,
    /// Whether `set_record` may write to instances in it.
    pub writes: bool,
}

/// The directories the operator allows instances in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedDirs(Vec<AllowedDir>);

/// Why a socket path named by a caller is not admitted.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AdmitError {
    /// No directory is allowed.
    #[error(
        "no AimDB directories are allowed on this server; the operator allows them with `serve --aimdb-dir DIR` (or `aimdb_dirs` in the configuration's [server] section)"
    )]
    NoneAllowed,
    /// The path is relative.
    #[error(
        "{path} is not an absolute path; name an instance by its socket's absolute path (discover_instances lists them)"
    )]
    NotAbsolute {
        /// The path as given.
        path: PathBuf,
    },
    /// The path does not exist (or cannot be resolved).
    #[error("no socket exists at {path}")]
    Missing {
        /// The path as given.
        path: PathBuf,
    },
    /// The path resolves outside every allowed directory.
    #[error("{path} is not inside the directories allowed for AimDB instances ({allowed})")]
    Outside {
        /// The path as given.
        path: PathBuf,
        /// The allowed directories, for the reader.
        allowed: String,
    },
    /// The path is not a Unix socket.
    #[error("{path} is not a Unix socket")]
    NotSocket {
        /// The path as given.
        path: PathBuf,
    },
}

/// A socket admitted: where it resolves, and whether writes are allowed there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The socket, symbolic links resolved.
    pub socket: PathBuf,
    /// Whether the directory it is in allows writes.
    pub writes: bool,
}

impl AllowedDirs {
    /// The directories `dirs` (`(path, writes)`), each resolved; a directory that does not
    /// exist or is not a directory is an error naming it. A directory given twice allows
    /// writes when either does.
    pub fn new(dirs: &[(PathBuf, bool)]) -> Result<Self, String> {
        let mut allowed: Vec<AllowedDir> = Vec::new();
        for (path, writes) in dirs {
            let resolved = std::fs::canonicalize(path)
                .map_err(|e| format!("AimDB directory {}: {e}", path.display()))?;
            if !resolved.is_dir() {
                return Err(format!("AimDB directory {} is not a directory", path.display()));
            }
            match allowed.iter_mut().find(|d| d.path == resolved) {
                Some(known) => known.writes |= writes,
                None => allowed.push(AllowedDir { path: resolved, writes: *writes }),
            }
        }
        Ok(Self(allowed))
    }

    /// The directories.
    pub fn dirs(&self) -> &[AllowedDir] {
        &self.0
    }

    /// Whether no directory is allowed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether some directory allows writes.
    pub fn any_writes(&self) -> bool {
        self.0.iter().any(|d| d.writes)
    }

    /// The socket absolute `path` names, if it resolves (symbolic links followed) to a Unix
    /// socket inside an allowed directory.
    pub fn admit(&self, path: &Path) -> Result<Admitted, AdmitError> {
        if self.0.is_empty() {
            return Err(AdmitError::NoneAllowed);
        }
        if !path.is_absolute() {
            return Err(AdmitError::NotAbsolute { path: path.to_path_buf() });
        }
        let Ok(resolved) = std::fs::canonicalize(path) else {
            return Err(AdmitError::Missing { path: path.to_path_buf() });
        };
        // The deepest allowed directory holding it says whether writes are allowed.
        let holder = self
            .0
            .iter()
            .filter(|d| resolved.starts_with(&d.path))
            .max_by_key(|d| d.path.components().count());
        let Some(holder) = holder else {
            return Err(AdmitError::Outside { path: path.to_path_buf(), allowed: self.listed() });
        };
        if !is_socket(&resolved) {
            return Err(AdmitError::NotSocket { path: path.to_path_buf() });
        }
        Ok(Admitted { socket: resolved, writes: holder.writes })
    }

    fn listed(&self) -> String {
        self.0.iter().map(|d| d.path.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// One record of a discovered instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoundRecord {
    /// Its key.
    pub key: String,
    /// Its Rust type name, when the instance says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// Whether the instance says it is writable.
    pub writable: bool,
}

/// An instance that answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoundInstance {
    /// The socket, symbolic links resolved.
    pub socket: PathBuf,
    /// The AimX protocol version it speaks ("1.0", "3.0").
    pub protocol: String,
    /// The server name from its welcome.
    pub server: String,
    /// Its permissions (`read`, `write`).
    pub permissions: Vec<String>,
    /// Whether the operator allows `set_record` on it (its directory does).
    pub writes_allowed: bool,
    /// How many records it has.
    pub record_count: usize,
    /// Its records (the first 200).
    pub records: Vec<FoundRecord>,
}

/// A socket that did not answer AimX.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtherSocket {
    /// The socket.
    pub socket: PathBuf,
    /// Why it is not listed as an instance.
    pub reason: String,
}

/// What a discovery found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Discovery {
    /// The instances that answered, by socket path.
    pub instances: Vec<FoundInstance>,
    /// The sockets that did not answer AimX.
    pub other_sockets: Vec<OtherSocket>,
    /// How many sockets were asked.
    pub asked: usize,
    /// What was left out for a bound: entries past [`MAX_ENTRIES`], sockets past [`MAX_PROBED`],
    /// directories deeper than [`MAX_DEPTH`].
    pub left_out: Vec<String>,
}

/// Finds the sockets in `allowed` and asks each for its handshake and records, at most
/// `timeout` per answer.
pub fn discover(allowed: &AllowedDirs, timeout: Duration) -> Discovery {
    let mut discovery = Discovery::default();
    let mut sockets = find_sockets(allowed, &mut discovery.left_out);
    if sockets.len() > MAX_PROBED {
        discovery.left_out.push(format!(
            "{} more sockets not asked (at most {MAX_PROBED} per discovery, the shallowest first)",
            sockets.len() - MAX_PROBED
        ));
        sockets.truncate(MAX_PROBED);
    }
    discovery.asked = sockets.len();
    for chunk in sockets.chunks(PROBES_AT_ONCE) {
        let answers: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|(socket, writes)| scope.spawn(move || probe(socket, *writes, timeout)))
                .collect();
            handles.into_iter().zip(chunk).map(|(h, (socket, _))| (socket, h.join())).collect()
        });
        for (socket, answer) in answers {
            match answer {
                Ok(Ok(instance)) => discovery.instances.push(instance),
                Ok(Err(reason)) => {
                    discovery.other_sockets.push(OtherSocket { socket: socket.clone(), reason })
                }
                Err(_) => discovery.other_sockets.push(OtherSocket {
                    socket: socket.clone(),
                    reason: "asking it failed unexpectedly".into(),
                }),
            }
        }
    }
    discovery
}

/// The sockets in the allowed directories, the shallowest first, each once: a breadth-first walk
/// of at most [`MAX_ENTRIES`] entries, [`MAX_DEPTH`] levels down. Symbolic links to sockets are
/// admitted like a named path; linked directories are not entered, so a walk cannot loop or
/// leave the allowed directories.
fn find_sockets(allowed: &AllowedDirs, left_out: &mut Vec<String>) -> Vec<(PathBuf, bool)> {
    let mut sockets: Vec<(PathBuf, bool)> = Vec::new();
    let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
        allowed.dirs().iter().map(|d| (d.path.clone(), 0)).collect();
    let mut seen = 0usize;
    while let Some((dir, level)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                left_out.push(format!(
                    "entries past the first {MAX_ENTRIES} not looked at (from {} on)",
                    dir.display()
                ));
                return sockets;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if level < MAX_DEPTH {
                    queue.push_back((path, level + 1));
                } else {
                    left_out.push(format!(
                        "{} not entered (at most {MAX_DEPTH} levels below an allowed directory)",
                        path.display()
                    ));
                }
                continue;
            }
            if (kind.is_symlink() || is_socket(&path))
                && let Ok(admitted) = allowed.admit(&path)
                && !sockets.iter().any(|(s, _)| *s == admitted.socket)
            {
                sockets.push((admitted.socket, admitted.writes));
            }
        }
    }
    sockets
}

/// The instance at `socket`, or why it is not one.
fn probe(socket: &Path, writes: bool, timeout: Duration) -> Result<FoundInstance, String> {
    let bounds = Limits { record_bytes: PROBE_LINE_BYTES, ..limits() };
    let mut client =
        AimxClient::connect_within(socket, timeout, bounds).map_err(|e| e.to_string())?;
    let records = client.list_records().map_err(|e| e.to_string())?;
    let welcome = client.welcome();
    let text = |key: &str| welcome.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let permissions = welcome
        .get("permissions")
        .and_then(Value::as_array)
        .map(|p| p.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    Ok(FoundInstance {
        socket: socket.to_path_buf(),
        protocol: text("version"),
        server: text("server"),
        permissions,
        writes_allowed: writes,
        record_count: records.len(),
        records: records
            .iter()
            .take(RECORDS_LISTED)
            .filter_map(|m| {
                let key = record_key(m)?.to_string();
                Some(FoundRecord {
                    type_name: type_name(m).filter(|t| *t != key).map(str::to_string),
                    writable: writable(m),
                    key,
                })
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_sockets_inside_and_refuses_the_rest() {
        let dir = tempfile::tempdir().expect("temp dir");
        let inside = dir.path().join("in");
        let outside = dir.path().join("out");
        std::fs::create_dir_all(inside.join("lab")).expect("dirs");
        std::fs::create_dir_all(&outside).expect("dirs");
        let _a = std::os::unix::net::UnixListener::bind(inside.join("a.sock")).expect("binds");
        let _b = std::os::unix::net::UnixListener::bind(outside.join("b.sock")).expect("binds");
        std::fs::write(inside.join("file.sock"), "x").expect("writes");
        std::os::unix::fs::symlink(outside.join("b.sock"), inside.join("escape.sock"))
            .expect("links");
        let allowed = AllowedDirs::new(&[(inside.clone(), false), (inside.join("lab"), true)])
            .expect("allowed");
        let admitted = allowed.admit(&inside.join("a.sock")).expect("inside");
        assert!(!admitted.writes);
        assert!(matches!(allowed.admit(Path::new("a.sock")), Err(AdmitError::NotAbsolute { .. })));
        assert!(matches!(
            allowed.admit(&inside.join("escape.sock")),
            Err(AdmitError::Outside { .. })
        ));
        assert!(matches!(
            allowed.admit(&inside.join("lab/../../out/b.sock")),
            Err(AdmitError::Outside { .. })
        ));
        assert!(matches!(
            allowed.admit(&inside.join("file.sock")),
            Err(AdmitError::NotSocket { .. })
        ));
        assert!(matches!(
            allowed.admit(&inside.join("gone.sock")),
            Err(AdmitError::Missing { .. })
        ));
        assert_eq!(
            AllowedDirs::default().admit(&inside.join("a.sock")),
            Err(AdmitError::NoneAllowed)
        );
        let _c = std::os::unix::net::UnixListener::bind(inside.join("lab/c.sock")).expect("binds");
        assert!(allowed.admit(&inside.join("lab/c.sock")).expect("deeper").writes);
        // A socket that answers nothing is listed as another socket, not an instance.
        let found = discover(&allowed, Duration::from_millis(200));
        assert!(found.instances.is_empty());
        let others: Vec<&Path> = found.other_sockets.iter().map(|o| o.socket.as_path()).collect();
        assert_eq!(others.len(), 2, "{found:?}");
        assert!(AllowedDirs::new(&[(dir.path().join("none"), false)]).is_err());
    }
}

#[cfg(test)]
mod breadth_tests {
    use super::*;
    use crate::aimdb::Protocol;
    use crate::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};

    /// Past the sockets asked per discovery, the shallow ones are asked first: an instance at
    /// the top is found among many silent sockets deeper down, and the cut is said.
    #[test]
    fn the_shallowest_sockets_are_asked_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let deep = dir.path().join("a").join("b");
        std::fs::create_dir_all(&deep).expect("dirs");
        let _silent: Vec<_> = (0..MAX_PROBED + 6)
            .map(|i| {
                std::os::unix::net::UnixListener::bind(deep.join(format!("{i:03}.sock")))
                    .expect("binds")
            })
            .collect();
        let records = vec![FakeRecord::new("config", "server::Config", vec![serde_json::json!(1)])];
        let _top =
            FakeAimdb::start(&dir.path().join("z.sock"), Protocol::V3, Behaviour::Normal, records)
                .expect("starts");
        let allowed = AllowedDirs::new(&[(dir.path().to_path_buf(), false)]).expect("dir");
        let found = discover(&allowed, Duration::from_millis(100));
        assert_eq!(found.instances.len(), 1, "{found:?}");
        assert_eq!(found.instances[0].protocol, "3.0");
        assert_eq!(found.asked, MAX_PROBED);
        assert!(
            found.left_out.iter().any(|l| l.starts_with("7 more sockets not asked")),
            "{:?}",
            found.left_out
        );
    }
}
