//! `serve`'s bounds on live AimDB sources: the largest value kept, the bytes kept per record and
//! per source, and the bytes per second read from a followed instance (see SECURITY.md).

use std::num::NonZeroU64;

use schemascope_sources::aimdb::{Limits, limits, set_limits};

/// A size as `--memory-budget` takes it; never zero, so the flags stay small in `Command`.
fn nonzero_bytes(text: &str) -> Result<NonZeroU64, String> {
    crate::parse_bytes(text)
        .and_then(|n| NonZeroU64::new(n).ok_or_else(|| "the size must be at least 1 byte".into()))
}

/// The memory bounds of live AimDB sources.
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct AimdbLimitArgs {
    /// Live AimDB sources: the largest value kept, in bytes of JSON text; a larger one is refused
    /// and said in list_sources [default: 4MiB].
    #[arg(long, value_name = "BYTES", value_parser = nonzero_bytes)]
    aimdb_max_value_bytes: Option<NonZeroU64>,
    /// Live AimDB sources: the most bytes of values kept per record, oldest dropped first; also
    /// the longest line read (with 64 KiB more) [default: 16MiB].
    #[arg(long, value_name = "BYTES", value_parser = nonzero_bytes)]
    aimdb_record_bytes: Option<NonZeroU64>,
    /// Live AimDB sources: the most bytes of values kept per source, oldest dropped first
    /// [default: 64MiB].
    #[arg(long, value_name = "BYTES", value_parser = nonzero_bytes)]
    aimdb_source_bytes: Option<NonZeroU64>,
    /// Live AimDB sources: the most bytes per second read from a followed instance; one that
    /// sends more is read no faster and shows as throttled in list_sources [default: 16MiB].
    #[arg(long, value_name = "BYTES", value_parser = nonzero_bytes)]
    aimdb_bytes_per_second: Option<NonZeroU64>,
}

impl AimdbLimitArgs {
    /// Sets the bounds given, keeping the defaults of the others.
    pub(crate) fn apply(self) -> anyhow::Result<()> {
        let current = limits();
        let wanted = Limits {
            max_value_bytes: self
                .aimdb_max_value_bytes
                .map_or(current.max_value_bytes, NonZeroU64::get),
            record_bytes: self.aimdb_record_bytes.map_or(current.record_bytes, NonZeroU64::get),
            source_bytes: self.aimdb_source_bytes.map_or(current.source_bytes, NonZeroU64::get),
            bytes_per_second: self
                .aimdb_bytes_per_second
                .map_or(current.bytes_per_second, NonZeroU64::get),
        };
        set_limits(wanted)?;
        Ok(())
    }
}
