//! AimDB instances named by their socket path in a tool's `source` (as seed 004's `socket_path`),
//! besides the served sources: admitted only inside the directories the operator allows
//! (`serve --aimdb-dir`), read afresh on every call, never added to the served sources.

use std::path::PathBuf;
use std::sync::Arc;

use schemascope_core::sync::{read, write};
use schemascope_sources::aimdb::discover::AllowedDirs;
use schemascope_sources::aimdb::{DEFAULT_TIMEOUT, Snapshot, endpoint};
use schemascope_sources::{Location, Source, SourceLimits, SourceSpec};

use super::Sources;
use crate::result::ToolError;

/// Whether `source` names an AimDB instance by its socket (an absolute path, or an `aimdb:`,
/// `unix://` or `uds://` endpoint) rather than a served source, whose names never hold `/`.
pub(crate) fn names_instance(source: &str) -> bool {
    source.contains('/')
}

/// The socket path `source` names.
fn socket_of(source: &str) -> PathBuf {
    endpoint::socket_path(source).unwrap_or_else(|| PathBuf::from(source))
}

impl Sources {
    /// Allows AimDB instances in `dirs` to be named by their socket path.
    pub fn set_aimdb_dirs(&self, dirs: AllowedDirs) {
        *write(&self.aimdb_dirs) = dirs;
    }

    /// The directories AimDB instances may be named in.
    pub fn aimdb_dirs(&self) -> AllowedDirs {
        read(&self.aimdb_dirs).clone()
    }

    /// The instance `source` names by its socket path: a served AimDB source on that socket,
    /// else an instance inside the allowed directories, read now.
    pub(super) fn instance(&self, source: &str) -> Result<Arc<Source>, ToolError> {
        let socket = socket_of(source);
        let resolved = std::fs::canonicalize(&socket).ok();
        let served = read(&self.sources)
            .values()
            .find(|s| {
                matches!(&s.spec.location, Location::Aimdb(path)
                    if resolved.is_some() && std::fs::canonicalize(path).ok() == resolved)
            })
            .cloned();
        if let Some(served) = served {
            return Ok(served);
        }
        let admitted = self.aimdb_dirs().admit(&socket).map_err(|error| {
            ToolError::UnknownSource(format!(
                "Source `{source}` is not served and cannot be read as an AimDB instance: {error}."
            ))
        })?;
        let text = admitted.socket.display().to_string();
        let spec = SourceSpec {
            name: text.clone(),
            location: Location::Aimdb(admitted.socket.clone()),
            text,
            description: None,
            limits: SourceLimits { allow_writes: admitted.writes, ..SourceLimits::default() },
            ssh: None,
        };
        let snapshot = Snapshot::fetch(&admitted.socket, DEFAULT_TIMEOUT)?;
        Ok(Arc::new(snapshot.to_source(&spec)))
    }
}
