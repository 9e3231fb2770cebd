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
