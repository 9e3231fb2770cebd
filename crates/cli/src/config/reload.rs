//! Hot reload of the configuration file: a saved edit adds, removes or replaces sources without
//! a restart (clients hear `tools/list_changed` and `resources/list_changed` as for any change
//! of sources); an edit that does not load keeps the last good configuration and says why.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemascope_sources::FileWatcher;
use schemascope_tools::Services;

use super::{Config, ConfiguredSource};

/// What a reload changed, for the log line and the tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Applied {
    /// Sources served now that were not.
    pub(crate) added: Vec<String>,
    /// Sources no longer served.
    pub(crate) removed: Vec<String>,
    /// Sources loaded anew because their entry changed.
    pub(crate) replaced: Vec<String>,
    /// Whether the `[server]` section changed (it takes effect at the next start).
    pub(crate) server_changed: bool,
}

/// Serves `config`'s sources on `services` (a source that fails is retried, as always when
/// serving) and sets their docs directories.
pub(crate) fn serve_sources(
    services: &Services,
    sources: &[ConfiguredSource],
) -> anyhow::Result<()> {
    let specs: Vec<_> = sources.iter().map(|s| s.spec.clone()).collect();
    let failed = services.sources.load_serving(&specs, &schemascope_sources::NoProgress)?;
    for failure in &failed {
        eprintln!(
            "schemascope: source `{}` failed to load: {}; serving without it and retrying (list_sources shows its state)",
            failure.spec.name, failure.error
        );
    }
    for source in sources {
        if let Some(dir) = &source.docs {
            services.docs.set_dir(&source.spec.name, dir.clone());
        }
        if let Some(path) = &source.dbt {
            services.docs.set_dbt(&source.spec.name, path.clone());
        }
    }
    Ok(())
}

/// Makes `services` serve `next` in place of `current`: removed entries stop, new ones load,
/// changed ones load anew. Sources given outside the file are left alone.
pub(crate) fn apply(services: &Services, current: &Config, next: &Config) -> Applied {
    let mut applied =
        Applied { server_changed: current.server != next.server, ..Applied::default() };
    let find =
        |config: &Config, name: &str| config.sources.iter().find(|s| s.spec.name == name).cloned();
    for old in &current.sources {
        match find(next, &old.spec.name) {
            None => {
                services.sources.remove(&old.spec.name);
                services.docs.unset_dir(&old.spec.name);
                services.docs.unset_dbt(&old.spec.name);
                applied.removed.push(old.spec.name.clone());
            }
            Some(new) if new != *old => {
                services.sources.remove(&old.spec.name);
                services.docs.unset_dir(&old.spec.name);
                services.docs.unset_dbt(&old.spec.name);
                applied.replaced.push(old.spec.name.clone());
            }
            Some(_) => {}
        }
    }
    let to_load: Vec<ConfiguredSource> = next
        .sources
        .iter()
        .filter(|s| find(current, &s.spec.name).is_none_or(|old| old != **s))
        .cloned()
        .collect();
    for source in &to_load {
        if !applied.replaced.contains(&source.spec.name) {
            applied.added.push(source.spec.name.clone());
        }
    }
    if let Err(error) = serve_sources(services, &to_load) {
        // Only a name given twice fails here: one also given on the command line.
        eprintln!("schemascope: {error}");
    }
    applied
}

/// Keeps the file watch of the configuration alive.
pub(crate) struct ConfigWatch {
    _watcher: FileWatcher,
}

/// Watches `config`'s file and applies each saved edit to `services`; `watch_sources` says
/// whether the sources' own files are watched (they are watched anew after each change).
pub(crate) fn watch(
    services: &Services,
    config: Config,
    debounce: Duration,
    watch_sources: bool,
) -> anyhow::Result<ConfigWatch> {
    let file: PathBuf = config.file.clone();
    let current = Arc::new(Mutex::new(config));
    let services = services.clone();
    let watcher = FileWatcher::new(
        std::slice::from_ref(&file),
        debounce,
        move |changed: &Path| {
            let next = match Config::load(changed) {
                Ok(next) => next,
                Err(error) => {
                    eprintln!(
                        "schemascope: the configuration was not reloaded ({error}); the last good one stays in effect"
                    );
                    services.sources.set_config_error(Some(error.to_string()));
                    return;
                }
            };
            services.sources.set_config_error(None);
            let mut current = schemascope_core::sync::lock(&current);
            let applied = apply(&services, &current, &next);
            *current = next;
            drop(current);
            eprintln!(
                "schemascope: configuration reloaded: {} added, {} removed, {} replaced{}",
                applied.added.len(),
                applied.removed.len(),
                applied.replaced.len(),
                if applied.server_changed {
                    "; the [server] section takes effect at the next start"
                } else {
                    ""
                }
            );
            if watch_sources && let Err(error) = services.watch() {
                eprintln!("schemascope: cannot watch the sources' files: {error}");
            }
        },
    )?;
    Ok(ConfigWatch { _watcher: watcher })
}
