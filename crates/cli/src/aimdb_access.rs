//! `serve`'s AimDB access: the directories whose instances a tool may name by socket path
//! (`--aimdb-dir`), those it may also write to (`--aimdb-write-dir`), the served AimDB sources
//! `set_record` may write to (`--allow-writes`), and the file writes are logged to
//! (`--write-log`). Writes are off unless one of these turns them on.

use std::path::PathBuf;

use anyhow::{Context, bail};
use schemascope_sources::aimdb::discover::AllowedDirs;
use schemascope_sources::{Location, SourceSpec};
use schemascope_tools::Services;

use crate::config::ServerSettings;

/// The AimDB access flags.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct AimdbAccessArgs {
    /// Let tools read the AimDB instances in DIR (any socket below it, symbolic links resolved),
    /// named by their socket path as `source`; `discover_instances` lists those up to two levels
    /// down. Repeatable.
    #[arg(long, value_name = "DIR")]
    aimdb_dir: Vec<PathBuf>,
    /// As --aimdb-dir, and let `set_record` write to the instances there (records they mark
    /// writable only). Repeatable.
    #[arg(long, value_name = "DIR")]
    aimdb_write_dir: Vec<PathBuf>,
    /// Let `set_record` write to the served AimDB source NAME (records it marks writable only);
    /// writes are off otherwise. Repeatable, or comma-separated.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    allow_writes: Vec<String>,
    /// Append every write to FILE, one JSON object per line: who asked, which record, what
    /// changed, how it ended (writes are always logged on standard error).
    #[arg(long, value_name = "FILE")]
    write_log: Option<PathBuf>,
}

impl AimdbAccessArgs {
    /// Whether any directory is allowed (a server may then start with no source).
    pub(crate) fn has_dirs(&self, settings: &ServerSettings) -> bool {
        !(self.aimdb_dir.is_empty()
            && self.aimdb_write_dir.is_empty()
            && settings.aimdb_dirs.is_empty()
            && settings.aimdb_write_dirs.is_empty())
    }

    /// Turns writes on for the sources `--allow-writes` names, each of which must be a served
    /// AimDB source.
    pub(crate) fn mark_writes(&self, specs: &mut [SourceSpec]) -> anyhow::Result<()> {
        for name in self.allow_writes.iter().map(|n| n.trim()) {
            if name.is_empty() {
                bail!("--allow-writes needs the name of a served AimDB source");
            }
            let Some(spec) = specs.iter_mut().find(|s| s.name == name) else {
                let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                let hint = schemascope_core::suggest::did_you_mean(name, names.iter().copied());
                bail!(
                    "--allow-writes {name}: no source is named `{name}`.{hint} Sources: {}",
                    names.join(", ")
                );
            };
            if !matches!(spec.location, Location::Aimdb(_)) {
                bail!(
                    "--allow-writes {name}: `{name}` is not an AimDB instance; only AimDB records can be set"
                );
            }
            spec.limits.allow_writes = true;
        }
        Ok(())
    }

    /// Allows the directories (flags and the configuration's) and opens the write log.
    pub(crate) fn apply(
        &self,
        settings: &ServerSettings,
        services: &Services,
    ) -> anyhow::Result<()> {
        let read = self.aimdb_dir.iter().chain(&settings.aimdb_dirs).map(|d| (d.clone(), false));
        let write = self
            .aimdb_write_dir
            .iter()
            .chain(&settings.aimdb_write_dirs)
            .map(|d| (d.clone(), true));
        let dirs: Vec<(PathBuf, bool)> = read.chain(write).collect();
        let allowed = AllowedDirs::new(&dirs).map_err(anyhow::Error::msg)?;
        services.sources.set_aimdb_dirs(allowed);
        let log = self.write_log.clone().or_else(|| settings.write_log.clone());
        if let Some(file) = &log {
            services
                .writes
                .set_file(Some(file.clone()))
                .with_context(|| format!("cannot open the write log {}", file.display()))?;
        }
        Ok(())
    }
}
