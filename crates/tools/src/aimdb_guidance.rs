//! "Working with AimDB records": seed 004's advice to a model that sets records, written for
//! this product — field names carry units, ask when a unit or format is unclear, the example is
//! the template, every required field is given — and what a source's own values say about its
//! timestamps (the unit their magnitude implies), so the model need not guess it. Served as the
//! MCP prompt `aimdb_guidance` and appended to the schema section of each AimDB source.

use std::collections::BTreeMap;

use serde_json::Value;

use schemascope_sources::aimdb::Snapshot;
use schemascope_sources::{Location, Source};

use crate::Sources;

/// The advice, for every AimDB source.
pub const ADVICE: &str = "## Working with AimDB records
- Read before you write: `query_schema` gives a record's fields, types, observed ranges (`x-observed`) and a real `example`; `validate_value` checks a value without sending it.
- Field names carry units and formats (`celsius`, `timestamp_ms`, `sensor_id`): convert what the user says to the field's unit (72 °F is 22.2 °C) and say that you did.
- Ask when it is unclear, before setting: which unit the user meant (\"72 degrees\": °F or °C?), which of several ids, whether a timestamp should be the current time.
- Use the example as the template and give every field in `required`: a record is set whole.
- A value beyond the observed range or a string never seen comes back as a warning: often a unit mix-up or a typo; confirm it with the user.
- `set_record` exists only where the operator enabled writes and sets only records marked `writable`; it refuses a wrong type or a missing field before sending anything, and `dry_run` shows what it would send.";

/// Whether AimDB records are served: a live source (loaded, or failed and retried), or
/// directories of instances.
pub fn served(sources: &Sources) -> bool {
    !sources.aimdb_dirs().is_empty()
        || sources.sources().iter().any(|s| s.aimdb.is_some())
        || sources.failed_sources().iter().any(|f| matches!(f.spec.location, Location::Aimdb(_)))
}

/// Most timestamp lines listed per source.
const TIMESTAMPS_LISTED: usize = 20;

/// The advice, with the timestamps of `source`'s records when it is an AimDB source (without
/// one, how to get them).
pub fn section(source: Option<&Source>) -> String {
    let Some(snapshot) = source.and_then(|s| s.aimdb.as_deref()) else {
        return format!(
            "{ADVICE}\n- Name an AimDB `source` (this prompt's argument) to learn which unit its timestamps use."
        );
    };
    let lines = timestamp_lines(snapshot);
    if lines.is_empty() {
        return ADVICE.to_string();
    }
    format!("{ADVICE}\n- Timestamps in this data, as the values held read:\n{}", lines.join("\n"))
}

/// One line per numeric member whose name says it is a time, over every value of the record
/// held (at most 100): the unit their magnitude implies — seconds, milliseconds, microseconds or
/// nanoseconds since 1970 — when they all agree, or each unit with its count when they do not
/// (one odd write must not pass for the data's unit).
fn timestamp_lines(snapshot: &Snapshot) -> Vec<String> {
    let mut lines = Vec::new();
    for key in snapshot.keys() {
        // Per member: values per unit ("not a date" for none), and the latest date.
        let mut units: BTreeMap<String, (BTreeMap<&'static str, usize>, String)> = BTreeMap::new();
        for value in snapshot.values(key) {
            let Value::Object(members) = value.parse_sample() else { continue };
            for (field, member) in &members {
                let Some(number) = member.as_f64().filter(|_| names_time(field)) else { continue };
                let (counts, latest) = units.entry(field.clone()).or_default();
                match epoch_unit(number) {
                    Some((unit, date)) => {
                        *counts.entry(unit).or_default() += 1;
                        *latest = date;
                    }
                    None => *counts.entry("not a date").or_default() += 1,
                }
            }
        }
        for (field, (counts, latest)) in units {
            if lines.len() >= TIMESTAMPS_LISTED {
                return lines;
            }
            let line = match counts.iter().collect::<Vec<_>>().as_slice() {
                [(unit, n)] if **unit != "not a date" => format!(
                    "  - `{key}` `{field}`: {n} value(s), all {unit} since 1970 (latest {latest})"
                ),
                [(_, n)] => format!(
                    "  - `{key}` `{field}`: {n} value(s), none a date since 1970 in any unit: ask"
                ),
                mixed => format!(
                    "  - `{key}` `{field}`: mixed, {}: ask the user which unit to write",
                    mixed
                        .iter()
                        .map(|(unit, n)| if **unit == "not a date" {
                            format!("{n} not a date")
                        } else {
                            format!("{n} in {unit}")
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            lines.push(line);
        }
    }
    lines
}

/// Whether a member's name says it holds a point in time.
fn names_time(field: &str) -> bool {
    let name = field.to_ascii_lowercase();
    name.contains("time")
        || name.ends_with("_at")
        || name == "ts"
        || name.starts_with("ts_")
        || name.ends_with("_ts")
        || name.contains("epoch")
}

/// The unit in which `number` is a date between 2001 and 2286, with that date.
fn epoch_unit(number: f64) -> Option<(&'static str, String)> {
    let units =
        [("seconds", 1.0), ("milliseconds", 1e3), ("microseconds", 1e6), ("nanoseconds", 1e9)];
    units.into_iter().find_map(|(unit, per_second)| {
        let seconds = number / per_second;
        if !(1e9..1e10).contains(&seconds) {
            return None;
        }
        let date = chrono::DateTime::from_timestamp(seconds as i64, 0)?;
        Some((unit, date.format("%Y-%m-%d").to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_unit_from_the_magnitude() {
        assert_eq!(epoch_unit(1_730_649_600.123), Some(("seconds", "2024-11-03".into())));
        assert_eq!(epoch_unit(1_730_649_600_123.0).map(|u| u.0), Some("milliseconds"));
        assert_eq!(epoch_unit(1.730_649_6e15).map(|u| u.0), Some("microseconds"));
        assert_eq!(epoch_unit(1.730_649_6e18).map(|u| u.0), Some("nanoseconds"));
        assert_eq!(epoch_unit(42.0), None);
        assert_eq!(epoch_unit(f64::NAN), None);
        assert!(names_time("timestamp") && names_time("created_at") && names_time("ts"));
        assert!(!names_time("celsius") && !names_time("status"));
    }
}
