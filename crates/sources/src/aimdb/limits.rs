//! The memory bounds of AimDB sources, in bytes: one value, one record's history, one source's
//! values, and the rate at which a followed instance is read. A value is held as its JSON text
//! (never as a `serde_json::Value` tree, which costs up to about 100 times the text for many tiny
//! objects), so each kept value is accounted by its length. Set once by the binary (`serve`'s
//! `--aimdb-*` flags); SECURITY.md lists them.

use std::sync::atomic::{AtomicU64, Ordering};

/// The largest value kept, unless set otherwise (4 MiB).
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 4 << 20;
/// The most bytes of values kept per record, unless set otherwise (16 MiB).
pub const DEFAULT_RECORD_BYTES: u64 = 16 << 20;
/// The most bytes of values kept per source, unless set otherwise (64 MiB).
pub const DEFAULT_SOURCE_BYTES: u64 = 64 << 20;
/// The most bytes per second read from a followed instance, unless set otherwise (16 MiB/s).
pub const DEFAULT_BYTES_PER_SECOND: u64 = 16 << 20;

/// What a line may hold beyond the values in it: the frame, ids, a drain's record name.
pub(super) const ENVELOPE_BYTES: u64 = 64 << 10;

static MAX_VALUE_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_VALUE_BYTES);
static RECORD_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_RECORD_BYTES);
static SOURCE_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_SOURCE_BYTES);
static BYTES_PER_SECOND: AtomicU64 = AtomicU64::new(DEFAULT_BYTES_PER_SECOND);

/// The bounds in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// The largest value kept, in bytes of JSON text (`--aimdb-max-value-bytes`).
    pub max_value_bytes: u64,
    /// The most bytes of values kept per record (`--aimdb-record-bytes`); also the longest line
    /// read (with 64 KiB more), as one `record.drain` reply may fill a history.
    pub record_bytes: u64,
    /// The most bytes of values kept per source (`--aimdb-source-bytes`).
    pub source_bytes: u64,
    /// The most bytes per second read from a followed instance (`--aimdb-bytes-per-second`).
    pub bytes_per_second: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            record_bytes: DEFAULT_RECORD_BYTES,
            source_bytes: DEFAULT_SOURCE_BYTES,
            bytes_per_second: DEFAULT_BYTES_PER_SECOND,
        }
    }
}

/// Bounds that do not nest: a value larger than a record's history could never be kept.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LimitsError {
    /// A bound is zero.
    #[error("{flag} must be at least 1 byte")]
    Zero {
        /// The flag.
        flag: &'static str,
    },
    /// A smaller bound is larger than the one holding it.
    #[error(
        "{inner} ({inner_bytes} bytes) must not exceed {outer} ({outer_bytes} bytes): what one holds must fit in the other"
    )]
    NotNested {
        /// The inner bound's flag.
        inner: &'static str,
        /// Its value.
        inner_bytes: u64,
        /// The outer bound's flag.
        outer: &'static str,
        /// Its value.
        outer_bytes: u64,
    },
}

impl Limits {
    /// Checks that each bound is positive and the value, record and source bounds nest.
    pub fn check(&self) -> Result<(), LimitsError> {
        for (flag, bytes) in [
            ("--aimdb-max-value-bytes", self.max_value_bytes),
            ("--aimdb-record-bytes", self.record_bytes),
            ("--aimdb-source-bytes", self.source_bytes),
            ("--aimdb-bytes-per-second", self.bytes_per_second),
        ] {
            if bytes == 0 {
                return Err(LimitsError::Zero { flag });
            }
        }
        let nested = [
            (
                "--aimdb-max-value-bytes",
                self.max_value_bytes,
                "--aimdb-record-bytes",
                self.record_bytes,
            ),
            ("--aimdb-record-bytes", self.record_bytes, "--aimdb-source-bytes", self.source_bytes),
        ];
        for (inner, inner_bytes, outer, outer_bytes) in nested {
            if inner_bytes > outer_bytes {
                return Err(LimitsError::NotNested { inner, inner_bytes, outer, outer_bytes });
            }
        }
        Ok(())
    }

    /// The longest line read from an instance.
    pub(super) fn max_line_bytes(&self) -> u64 {
        self.record_bytes.saturating_add(ENVELOPE_BYTES)
    }
}

/// The bounds in force.
pub fn limits() -> Limits {
    Limits {
        max_value_bytes: MAX_VALUE_BYTES.load(Ordering::Relaxed),
        record_bytes: RECORD_BYTES.load(Ordering::Relaxed),
        source_bytes: SOURCE_BYTES.load(Ordering::Relaxed),
        bytes_per_second: BYTES_PER_SECOND.load(Ordering::Relaxed),
    }
}

/// Sets the bounds (the binary's flags), once they are [`Limits::check`]ed.
pub fn set_limits(limits: Limits) -> Result<(), LimitsError> {
    limits.check()?;
    MAX_VALUE_BYTES.store(limits.max_value_bytes, Ordering::Relaxed);
    RECORD_BYTES.store(limits.record_bytes, Ordering::Relaxed);
    SOURCE_BYTES.store(limits.source_bytes, Ordering::Relaxed);
    BYTES_PER_SECOND.store(limits.bytes_per_second, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_must_be_positive_and_nest() {
        assert_eq!(Limits::default().check(), Ok(()));
        let zero = Limits { bytes_per_second: 0, ..Limits::default() };
        assert!(zero.check().unwrap_err().to_string().contains("--aimdb-bytes-per-second"));
        let loose = Limits { max_value_bytes: 32 << 20, ..Limits::default() };
        let error = loose.check().unwrap_err().to_string();
        assert!(
            error.contains(
                "--aimdb-max-value-bytes (33554432 bytes) must not exceed --aimdb-record-bytes"
            ),
            "{error}"
        );
    }
}
