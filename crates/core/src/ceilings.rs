//! Server-side ceilings on the numbers a caller (a client, an LLM) sends: rows, bytes, time,
//! iterations, list lengths. Each tool reads its numeric parameters through [`Ceiling::admit`],
//! which refuses a value past the ceiling with an error that states the ceiling and the flag that
//! sets it, and lowers the tool's own default when the operator set the ceiling below it.
//!
//! The ceilings are process-wide, like the file-size limit and the memory budget: the operator
//! sets them once at start (`--ceiling NAME=N`), before any call is served. Each has a hard
//! bound too — what the implementation can hold (a sample is at most 100 items, a histogram 100
//! bins) or what no operator should need — past which a setting is refused at start.

use std::sync::atomic::{AtomicU64, Ordering};

/// A number a caller may send that the operator bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ceiling {
    /// `execute_query.max_rows`: rows one query returns.
    MaxRows,
    /// `execute_query.max_bytes`: bytes of row data (as JSON) one query returns.
    MaxBytes,
    /// `execute_query.timeout_ms`: how long one statement may run.
    TimeoutMs,
    /// `sample_data.count`: items per collection.
    Count,
    /// `sample_data.max_string_length`: characters of a string shown.
    MaxStringLength,
    /// `limit` of describe_property, find_items, find_nodes, find_edges: values or items listed.
    Limit,
    /// `describe_property.bins`: histogram bins.
    Bins,
    /// `samples` of query_schema and validate_value: live values a schema is merged over.
    Samples,
    /// `window_ms` of query_schema and validate_value: how long to wait for live values.
    WindowMs,
    /// `top_k` of search_schema_docs and get_schema_context: chunks retrieved.
    TopK,
    /// `max_tokens` of describe_schema, get_schema_context and the system prompt.
    MaxTokens,
    /// `set_layout`'s `options.iterations`: steps of the force-directed layout.
    Iterations,
}

/// What a ceiling is: its name as callers and the flag write it, its unit, default and bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CeilingInfo {
    /// The ceiling.
    pub ceiling: Ceiling,
    /// The parameter's name, as tools take it and `--ceiling NAME=N` sets it.
    pub name: &'static str,
    /// What is counted, for messages ("rows per query").
    pub unit: &'static str,
    /// The ceiling unless the operator sets another.
    pub default: u64,
    /// The highest ceiling the operator may set.
    pub hard_max: u64,
    /// The tools whose parameters it bounds, for the documentation.
    pub applies_to: &'static str,
}

/// Every ceiling, in the order the documentation lists them.
pub const CEILINGS: &[CeilingInfo] = &[
    CeilingInfo {
        ceiling: Ceiling::MaxRows,
        name: "max_rows",
        unit: "rows per query",
        default: 10_000,
        hard_max: 1_000_000,
        applies_to: "execute_query",
    },
    CeilingInfo {
        ceiling: Ceiling::MaxBytes,
        name: "max_bytes",
        unit: "bytes of row data per query",
        default: 16 << 20,
        hard_max: 1 << 30,
        applies_to: "execute_query",
    },
    CeilingInfo {
        ceiling: Ceiling::TimeoutMs,
        name: "timeout_ms",
        unit: "milliseconds per statement",
        default: 300_000,
        hard_max: 3_600_000,
        applies_to: "execute_query",
    },
    CeilingInfo {
        ceiling: Ceiling::Count,
        name: "count",
        unit: "items per collection",
        default: crate::sample::MAX_SAMPLE as u64,
        hard_max: crate::sample::MAX_SAMPLE as u64,
        applies_to: "sample_data",
    },
    CeilingInfo {
        ceiling: Ceiling::MaxStringLength,
        name: "max_string_length",
        unit: "characters per string shown",
        default: 100_000,
        hard_max: 16 << 20,
        applies_to: "sample_data",
    },
    CeilingInfo {
        ceiling: Ceiling::Limit,
        name: "limit",
        unit: "values or items listed",
        default: crate::selector::MAX_ITEMS as u64,
        hard_max: crate::selector::MAX_ITEMS as u64,
        applies_to: "describe_property, find_items, find_nodes, find_edges",
    },
    CeilingInfo {
        ceiling: Ceiling::Bins,
        name: "bins",
        unit: "histogram bins",
        default: crate::profile::numeric::MAX_BINS as u64,
        hard_max: crate::profile::numeric::MAX_BINS as u64,
        applies_to: "describe_property",
    },
    CeilingInfo {
        ceiling: Ceiling::Samples,
        name: "samples",
        unit: "live values per schema",
        default: 100,
        hard_max: 100,
        applies_to: "query_schema, validate_value",
    },
    CeilingInfo {
        ceiling: Ceiling::WindowMs,
        name: "window_ms",
        unit: "milliseconds of waiting for live values",
        default: 60_000,
        hard_max: 600_000,
        applies_to: "query_schema, validate_value",
    },
    CeilingInfo {
        ceiling: Ceiling::TopK,
        name: "top_k",
        unit: "chunks retrieved",
        default: 50,
        hard_max: 50,
        applies_to: "search_schema_docs, get_schema_context",
    },
    CeilingInfo {
        ceiling: Ceiling::MaxTokens,
        name: "max_tokens",
        unit: "tokens of context",
        default: 1_000_000,
        hard_max: 100_000_000,
        applies_to: "describe_schema, get_schema_context, schema_system_prompt",
    },
    CeilingInfo {
        ceiling: Ceiling::Iterations,
        name: "iterations",
        unit: "layout iterations",
        default: 10_000,
        hard_max: 1_000_000,
        applies_to: "set_layout (forceDirected options.iterations)",
    },
];

/// The operator's settings, one per entry of [`CEILINGS`] (0: the default).
static SET: [AtomicU64; CEILINGS.len()] = [const { AtomicU64::new(0) }; CEILINGS.len()];

/// A caller's number past its ceiling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{name}` = {value} is past this server's ceiling of {ceiling} {unit}; ask for at most {ceiling} (the operator sets the ceiling with `--ceiling {name}=N`)"
)]
pub struct PastCeiling {
    /// The parameter.
    pub name: &'static str,
    /// What the caller asked for.
    pub value: String,
    /// The ceiling in force.
    pub ceiling: u64,
    /// What is counted.
    pub unit: &'static str,
}

/// An operator's setting that cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CeilingSettingError {
    /// Not `NAME=N`.
    #[error("`{0}` is not NAME=N (e.g. max_rows=5000). Ceilings: {1}")]
    Malformed(String, String),
    /// No such ceiling.
    #[error("there is no ceiling `{0}`.{1} Ceilings: {2}")]
    Unknown(String, String, String),
    /// Zero, or past what the implementation holds.
    #[error("the ceiling `{name}` must be from 1 to {hard_max} {unit}, not {value}")]
    OutOfRange {
        /// The ceiling.
        name: &'static str,
        /// What was asked.
        value: String,
        /// The highest it may be set to.
        hard_max: u64,
        /// What is counted.
        unit: &'static str,
    },
}

fn index(ceiling: Ceiling) -> usize {
    CEILINGS.iter().position(|info| info.ceiling == ceiling).unwrap_or_default()
}

fn names() -> String {
    CEILINGS.iter().map(|info| info.name).collect::<Vec<_>>().join(", ")
}

impl Ceiling {
    /// Its entry in [`CEILINGS`].
    pub fn info(self) -> &'static CeilingInfo {
        &CEILINGS[index(self)]
    }

    /// The ceiling in force: the operator's, else the default.
    pub fn get(self) -> u64 {
        match SET[index(self)].load(Ordering::Relaxed) {
            0 => self.info().default,
            set => set,
        }
    }

    /// `value` if within the ceiling; without one, `default` lowered to the ceiling.
    pub fn admit(self, value: Option<u64>, default: u64) -> Result<u64, PastCeiling> {
        let ceiling = self.get();
        match value {
            None => Ok(default.min(ceiling)),
            Some(v) if v <= ceiling => Ok(v),
            Some(v) => Err(self.past(v.to_string())),
        }
    }

    /// [`Ceiling::admit`] for a `usize` parameter.
    pub fn admit_usize(self, value: Option<usize>, default: usize) -> Result<usize, PastCeiling> {
        let admitted = self.admit(value.map(|v| v as u64), default as u64)?;
        Ok(usize::try_from(admitted).unwrap_or(usize::MAX))
    }

    /// `value` if within the ceiling; `None` (for parameters whose absence means "the tool's
    /// own choice": a token budget, a configured top_k) stays `None` unless the operator set a
    /// ceiling below the default, which then bounds it.
    pub fn check_usize(self, value: Option<usize>) -> Result<Option<usize>, PastCeiling> {
        let ceiling = self.get();
        match value {
            Some(v) if v as u64 > ceiling => Err(self.past(v.to_string())),
            None if ceiling < self.info().default => {
                Ok(Some(usize::try_from(ceiling).unwrap_or(usize::MAX)))
            }
            other => Ok(other),
        }
    }

    /// The refusal of `value` (written as the caller sent it: a float, a huge integer).
    pub fn past(self, value: String) -> PastCeiling {
        let info = self.info();
        PastCeiling { name: info.name, value, ceiling: self.get(), unit: info.unit }
    }
}

/// Sets one ceiling from the operator's `NAME=N` (N may carry a size unit for bytes:
/// `max_bytes=64MiB`).
pub fn set_from_text(setting: &str) -> Result<(), CeilingSettingError> {
    let Some((name, value)) = setting.split_once('=') else {
        return Err(CeilingSettingError::Malformed(setting.to_string(), names()));
    };
    let name = name.trim();
    let Some(info) = CEILINGS.iter().find(|info| info.name == name) else {
        let hint = crate::suggest::did_you_mean(name, CEILINGS.iter().map(|info| info.name));
        return Err(CeilingSettingError::Unknown(name.to_string(), hint, names()));
    };
    let out_of_range = || CeilingSettingError::OutOfRange {
        name: info.name,
        value: value.trim().to_string(),
        hard_max: info.hard_max,
        unit: info.unit,
    };
    let n = parse_amount(value.trim()).ok_or_else(out_of_range)?;
    if n == 0 || n > info.hard_max {
        return Err(out_of_range());
    }
    SET[index(info.ceiling)].store(n, Ordering::Relaxed);
    Ok(())
}

/// A whole number, with an optional binary or decimal size unit (`16MiB`, `5MB`, `5k`).
fn parse_amount(text: &str) -> Option<u64> {
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.replace('_', "").parse().ok()?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_past_the_ceiling_is_refused_with_the_ceiling_and_the_flag() {
        let error = Ceiling::Limit.admit(Some(51), 5).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "`limit` = 51 is past this server's ceiling of 50 values or items listed; ask for at most 50 (the operator sets the ceiling with `--ceiling limit=N`)"
            )
        );
        assert_eq!(Ceiling::Limit.admit(Some(50), 5), Ok(50));
        assert_eq!(Ceiling::Limit.admit(None, 5), Ok(5));
    }

    #[test]
    fn settings_are_checked_against_names_and_bounds() {
        assert!(matches!(set_from_text("max_row=5"), Err(CeilingSettingError::Unknown(..))));
        assert!(
            set_from_text("max_row=5").err().is_some_and(|e| e.to_string().contains("max_rows"))
        );
        assert!(matches!(set_from_text("limit"), Err(CeilingSettingError::Malformed(..))));
        assert!(matches!(set_from_text("limit=51"), Err(CeilingSettingError::OutOfRange { .. })));
        assert!(matches!(set_from_text("limit=0"), Err(CeilingSettingError::OutOfRange { .. })));
        assert!(matches!(set_from_text("limit=-1"), Err(CeilingSettingError::OutOfRange { .. })));
        assert_eq!(parse_amount("16MiB"), Some(16 << 20));
        assert_eq!(parse_amount("1_000"), Some(1_000));
        assert_eq!(parse_amount("99999999999999999999"), None);
        assert_eq!(parse_amount("5 parsecs"), None);
    }

    #[test]
    fn every_ceiling_has_one_entry_and_a_default_within_its_bound() {
        for info in CEILINGS {
            assert_eq!(info.ceiling.info().name, info.name, "one entry per ceiling");
            assert!(info.default >= 1 && info.default <= info.hard_max, "{}", info.name);
        }
    }
}
