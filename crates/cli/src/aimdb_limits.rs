//! `serve`'s bounds on live AimDB sources: the largest value kept, the bytes kept per record and
//! per source, and the bytes per second read from a followed instance (see SECURITY.md).

use schemascope_sources::aimdb::{Limits, limits, set_limits};

/// The memory bounds of live AimDB sources.
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct AimdbLimitArgs {
    /// Live AimDB sources: the largest value kept, in bytes of JSON text; a larger one is refused
    /// and said in list_sources [default: 4MiB].
    #[arg(long, value_name = "BYTES", value_parser = crate::parse_bytes)]
    aimdb_max_value_bytes: Option<u64>,
    /// Live AimDB sources: the most bytes of values kept per record, oldest dropped first; also
    /// the longest line read (with 64 KiB more) [default: 16MiB].
    #[arg(long, value_name = "BYTES", value_parser = crate::parse_bytes)]
    aimdb_record_bytes: Option<u64>,
    /// Live AimDB sources: the most bytes of values kept per source, oldest dropped first
    /// [default: 64MiB].
    #[arg(long, value_name = "BYTES", value_parser = crate::parse_bytes)]
    aimdb_source_bytes: Option<u64>,
    /// Live AimDB sources: the most bytes per second read from a followed instance; one that
    /// sends more is read no faster and shows as throttled in list_sources [default: 16MiB].
    #[arg(long, value_name = "BYTES", value_parser = crate::parse_bytes)]
    aimdb_bytes_per_second: Option<u64>,
}

impl AimdbLimitArgs {
    /// Sets the bounds given, keeping the defaults of the others.
    pub(crate) fn apply(self) -> anyhow::Result<()> {
        let current = limits();
        let wanted = Limits {
            max_value_bytes: self.aimdb_max_value_bytes.unwrap_or(current.max_value_bytes),
            record_bytes: self.aimdb_record_bytes.unwrap_or(current.record_bytes),
            source_bytes: self.aimdb_source_bytes.unwrap_or(current.source_bytes),
            bytes_per_second: self.aimdb_bytes_per_second.unwrap_or(current.bytes_per_second),
        };
        set_limits(wanted)?;
        Ok(())
    }
}
