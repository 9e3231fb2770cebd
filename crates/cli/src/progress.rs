//! A terminal progress bar for scans of large files (indicatif), shown only on a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use schemascope_sources::Progress;

/// Files smaller than this load too fast to need a bar.
const MIN_BYTES: u64 = 16 << 20;

/// A progress bar on standard error.
pub(crate) struct Bar {
    bar: ProgressBar,
}

impl Bar {
    /// A bar, hidden until loading starts (and always when stderr is not a terminal).
    pub(crate) fn new() -> Self {
        let bar = ProgressBar::hidden();
        Self { bar }
    }
}

impl Progress for Bar {
    fn start(&self, total_bytes: u64) {
        if total_bytes < MIN_BYTES || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            return;
        }
        self.bar.set_length(total_bytes);
        self.bar.set_position(0);
        self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} scanning {bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        ) {
            self.bar.set_style(style);
        }
    }

    fn advance(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// How often the table-profile display looks again.
const PROFILE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Shows on a terminal how database tables' profiles stand while a one-shot command waits for
/// them ("profiling tables 3/11: distinct values of `Total`"), and nothing once none is being
/// computed. Started once per process; it ends with it.
pub(crate) fn watch_table_profiles(services: &schemascope_tools::Services) {
    static STARTED: std::sync::Once = std::sync::Once::new();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return;
    }
    let sources = services.sources.clone();
    STARTED.call_once(move || {
        let spawned =
            std::thread::Builder::new().name("schemascope-profile-bar".into()).spawn(move || {
                let bar = ProgressBar::hidden();
                if let Ok(style) = ProgressStyle::with_template(
                    "{spinner} profiling tables {pos}/{len}: {wide_msg}",
                ) {
                    bar.set_style(style);
                }
                let mut shown = false;
                loop {
                    let tables: Vec<_> = sources
                        .sources()
                        .iter()
                        .filter(|s| s.database.is_some())
                        .flat_map(|s| s.collections.clone())
                        .collect();
                    let computing: Vec<_> = tables
                        .iter()
                        .filter(|c| c.profile_state() == schemascope_core::ProfileState::Computing)
                        .collect();
                    if computing.is_empty() {
                        if shown {
                            bar.finish_and_clear();
                            shown = false;
                        }
                    } else {
                        if !shown {
                            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                            shown = true;
                        }
                        let done = tables
                            .iter()
                            .filter(|c| {
                                matches!(
                                    c.profile_state(),
                                    schemascope_core::ProfileState::Ready
                                        | schemascope_core::ProfileState::Failed
                                )
                            })
                            .count();
                        bar.set_length(tables.len() as u64);
                        bar.set_position(done as u64);
                        let step = computing
                            .iter()
                            .find_map(|c| {
                                c.profile_progress().step.map(|s| format!("`{}`: {s}", c.name()))
                            })
                            .unwrap_or_else(|| format!("`{}`", computing[0].name()));
                        bar.set_message(step);
                        bar.tick();
                    }
                    std::thread::sleep(PROFILE_POLL);
                }
            });
        // Without the thread there is no bar, and nothing else changes.
        drop(spawned);
    });
}

/// A bar on a terminal for an evaluation's stages (`tools::eval::EvalProgress`).
pub(crate) struct Stages {
    bar: ProgressBar,
}

impl Stages {
    /// A bar drawn on standard error when it is a terminal, else nothing.
    pub(crate) fn new() -> Self {
        let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {pos}/{len} ({elapsed})") {
            bar.set_style(style);
        }
        Self { bar }
    }

    /// Shows that `done` of `total` items of `stage` are done.
    pub(crate) fn report(&self, stage: &str, done: usize, total: usize) {
        self.bar.set_message(stage.to_string());
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }
}

impl Drop for Stages {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
