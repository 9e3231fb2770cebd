//! Scratch files for a streamed profile's spilled counters (`schemascope_core::profile::spill`):
//! unnamed temporary files in a directory (`--spill-dir`, else the system's temporary directory,
//! `TMPDIR`), readable and writable by the owner only (0600), never linked into the directory on
//! Linux (`O_TMPFILE`) or unlinked at once elsewhere, so they vanish when closed: after the
//! profile is finished, when loading fails or is cancelled, and when the process is killed.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use schemascope_core::profile::{ScratchFile, ScratchSpace, Spill};

/// How a streamed profile spills: where, and how much at most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillOptions {
    /// The directory of the scratch files; `None`: the system's temporary directory
    /// (`std::env::temp_dir`, which reads `TMPDIR`).
    pub dir: Option<PathBuf>,
    /// Most bytes written to scratch files by one profile; past it, properties are estimated.
    pub cap: u64,
}

/// The cap on a profile's scratch files unless set otherwise (32 GiB).
pub const DEFAULT_SPILL_CAP: u64 = 32 << 30;

impl Default for SpillOptions {
    fn default() -> Self {
        Self { dir: None, cap: DEFAULT_SPILL_CAP }
    }
}

impl SpillOptions {
    /// The directory the files go to.
    pub fn directory(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// A spill into these files.
    pub fn spill(&self) -> Spill {
        Spill::new(Arc::new(TempFiles { dir: self.directory() }), self.cap)
    }
}

/// Unnamed temporary files in `dir`.
struct TempFiles {
    dir: PathBuf,
}

impl ScratchSpace for TempFiles {
    fn create(&self) -> std::io::Result<Box<dyn ScratchFile>> {
        // An unnamed file is made with the process's umask (0644 under the usual 022): readable
        // by its owner only, whatever the umask.
        let file = tempfile::tempfile_in(&self.dir)?;
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        Ok(Box::new(Temp(file)))
    }

    fn place(&self) -> String {
        self.dir.display().to_string()
    }
}

/// One unnamed temporary file.
struct Temp(std::fs::File);

impl ScratchFile for Temp {
    fn write_at(&self, bytes: &[u8], offset: u64) -> std::io::Result<()> {
        self.0.write_all_at(bytes, offset)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.0.read_exact_at(buf, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Tester round: unnamed files took the umask's mode (0644 under the usual 022).
    #[test]
    fn scratch_files_are_readable_by_their_owner_only_whatever_the_umask() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = TempFiles { dir: dir.path().to_path_buf() };
        let _file = files.create().expect("a scratch file");
        let inside = dir.path().to_string_lossy().into_owned();
        let modes: Vec<u32> = std::fs::read_dir("/proc/self/fd")
            .expect("fds")
            .flatten()
            .filter(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|target| target.to_string_lossy().starts_with(&inside))
            })
            .filter_map(|fd| std::fs::metadata(fd.path()).ok())
            .map(|m| m.permissions().mode() & 0o777)
            .collect();
        assert_eq!(modes, vec![0o600]);
    }
}
