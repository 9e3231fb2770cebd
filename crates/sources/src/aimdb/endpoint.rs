//! AimDB endpoints as AimDB's own tools write them: `unix:///path/to.sock`, `uds:///path/to.sock`
//! or a bare socket path, optionally behind schemascope's `aimdb:` scheme.

use std::path::{Path, PathBuf};

/// The socket path of an AimDB endpoint, or `None` when `text` is not one.
///
/// `aimdb:` forces the reading (`aimdb:/run/app.sock`, `aimdb:unix:///run/app.sock`); without it
/// only `unix://` and `uds://` URLs are endpoints (a bare path is recognised by the caller, by its
/// `.sock` extension or by being a socket).
pub fn socket_path(text: &str) -> Option<PathBuf> {
    let (forced, rest) = match text.strip_prefix("aimdb:") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let path = if let Some(p) = rest.strip_prefix("unix://").or_else(|| rest.strip_prefix("uds://"))
    {
        p
    } else if forced {
        // `aimdb://path` is a natural slip for `aimdb:path`; both mean the same socket.
        rest.strip_prefix("//").filter(|p| p.starts_with('/')).unwrap_or(rest)
    } else {
        return None;
    };
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// True when `path` names a socket by its extension (`.sock`, `.socket`).
pub fn looks_like_socket(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("sock" | "socket"))
}

/// True when `path` exists and is a Unix socket.
pub fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_spelling() {
        let want = Some(PathBuf::from("/tmp/aimdb.sock"));
        assert_eq!(socket_path("aimdb:unix:///tmp/aimdb.sock"), want);
        assert_eq!(socket_path("aimdb:uds:///tmp/aimdb.sock"), want);
        assert_eq!(socket_path("aimdb:/tmp/aimdb.sock"), want);
        assert_eq!(socket_path("aimdb:///tmp/aimdb.sock"), want);
        assert_eq!(socket_path("unix:///tmp/aimdb.sock"), want);
        assert_eq!(socket_path("uds:///tmp/aimdb.sock"), want);
        assert_eq!(socket_path("aimdb:run/app.sock"), Some(PathBuf::from("run/app.sock")));
        assert_eq!(socket_path("/tmp/aimdb.sock"), None);
        assert_eq!(socket_path("aimdb:"), None);
        assert_eq!(socket_path("unix://"), None);
        assert!(looks_like_socket(Path::new("/tmp/aimdb.sock")));
        assert!(!looks_like_socket(Path::new("/tmp/aimdb.json")));
    }
}
