//! set_record: sets one record of a live AimDB instance, as seed 004 plans it — only where the
//! operator enabled writes (`allow_writes`), only records the instance says are `writable`, and
//! only a value that passes the same check as validate_value (a type error or a missing field
//! is refused before anything is sent; values beyond those observed are warnings). A dry run
//! shows what would be sent. After the write the record is read back, and the write is logged
//! with who asked and what changed (`log.rs`).

mod changes;
pub(crate) mod integers;
mod log;

use std::sync::Arc;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use schemascope_core::json_schema::infer_schema;
use schemascope_core::validate::ValidationIssue;
use schemascope_sources::Source;
use schemascope_sources::aimdb::{
    self, AimxClient, DEFAULT_TIMEOUT, Snapshot, WriteError, record_key,
};

use crate::params::SetRecordParams;
use crate::record_live;
use crate::result::{ToolError, ToolResult, envelope};
use crate::services::Services;

pub use log::{TARGET as LOG_TARGET, WriteLog};

use crate::record_schema::shown;
use changes::{Change, changes, same_json};

/// set_record.
pub fn set_record(services: &Services, params: SetRecordParams) -> ToolResult {
    envelope(run(services, params))
}

fn run(services: &Services, params: SetRecordParams) -> Result<ToolResult, ToolError> {
    let source = services.sources.get(params.source.as_deref())?;
    let Some(snapshot) = source.aimdb.clone() else {
        return Err(ToolError::InvalidParams(format!(
            "set_record sets records of live AimDB instances; source `{}` is not one (its data is read-only here)",
            source.name()
        )));
    };
    if !source.spec.limits.allow_writes {
        let how = if crate::sources::names_instance(source.name()) {
            "for the instances of its directory with `serve --aimdb-write-dir DIR` (`aimdb_write_dirs` in the configuration's [server] section)".to_string()
        } else {
            format!(
                "with `allow_writes = true` in its [[sources]] entry or `serve --allow-writes {}`",
                source.name()
            )
        };
        return Err(ToolError::WritesNotAllowed(format!(
            "Writes are not enabled for `{}`: nothing was sent. The operator enables them {how}.",
            source.name()
        )));
    }
    // Which records there are and which are writable, as the instance says now: a served
    // source's snapshot is as of its load, and the instance may have restarted with others
    // (then it is read again, values and all).
    let records = AimxClient::connect(&snapshot.socket, DEFAULT_TIMEOUT)
        .and_then(|mut client| client.list_records())
        .map_err(not_sent)?;
    let snapshot = if same_records(&records, &snapshot.records) {
        snapshot
    } else {
        Arc::new(Snapshot::fetch(&snapshot.socket, DEFAULT_TIMEOUT).map_err(not_sent)?)
    };
    let key = record_live::key(&snapshot, &source, &params.record_name)?.to_string();
    check_writable(&snapshot, &key)?;
    // The bound a write would be refused at, before any work (a dry run must not promise more).
    aimdb::check_size(&params.value)?;
    let checked =
        check_value(services, &source, &snapshot, &key, &params.value).map_err(|e| match e {
            ToolError::Source(schemascope_sources::SourceError::Aimdb(error)) => not_sent(error),
            other => other,
        })?;
    if !checked.report.errors.is_empty() {
        return Ok(invalid(&key, &checked.report.errors, &checked.report.warnings));
    }
    let would_change =
        checked.current.as_ref().map(|current| changes(current, &params.value)).unwrap_or_default();
    if params.dry_run.unwrap_or(false) {
        return Ok(dry_run(&key, &snapshot, &params.value, &checked, &would_change));
    }
    let mut entry = json!({
        "at": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
        "who": crate::requester::current(),
        "source": source.name(),
        "socket": snapshot.socket,
        "record": key,
    });
    let written = match aimdb::write(&snapshot.socket, &key, &params.value, DEFAULT_TIMEOUT) {
        Ok(written) => written,
        Err(error @ (WriteError::TooLarge { .. } | WriteError::NotSent(_))) => {
            return Err(error.into());
        }
        Err(error) => {
            entry["outcome"] = json!(error.kind());
            entry["error"] = json!(error.to_string());
            entry["sent"] = params.value.clone();
            let logged = log(services, &entry);
            return Ok(not_written(&key, &error, &checked, logged));
        }
    };
    let previous = written.previous.as_ref().and_then(|v| v.parse().ok());
    let read_back = match &written.read_back {
        Ok(value) => value.as_ref().and_then(|v| v.parse().ok()),
        Err(_) => None,
    };
    let held = Held::of(&params.value, previous.as_ref(), read_back.as_ref());
    let changed = match (&previous, &read_back) {
        (Some(before), Some(after)) => changes(before, after),
        (None, Some(after)) => changes(&Value::Null, after),
        _ => would_change,
    };
    entry["outcome"] = json!(held.outcome(&written.read_back));
    if let Err(error) = &written.read_back {
        entry["read_back_error"] = json!(error.to_string());
    }
    entry["changes"] = json!(changed);
    entry["previous"] = previous.clone().unwrap_or(Value::Null);
    entry["sent"] = params.value.clone();
    let logged = log(services, &entry);
    let mut result =
        answer(&key, &written, &params.value, previous, read_back, &held, &changed, &checked);
    if let Err(error) = logged {
        result.data["log_error"] = json!(error);
        result.message.push_str(&format!(" Note for the operator: {error}."));
    }
    Ok(result)
}

/// Logs `entry` (whole in the file, values cut on standard error).
fn log(services: &Services, entry: &Value) -> Result<(), String> {
    let mut shown_entry = entry.clone();
    for key in ["sent", "previous"] {
        if let Some(value) = entry.get(key) {
            shown_entry[key] = shown(value);
        }
    }
    services.writes.record(entry, &shown_entry)
}

/// The answer of a write the instance refused, or whose outcome is unknown: what it said, the
/// record, and the check's warnings (a value beyond those observed is the likely cause of a
/// refusal, e.g. past what the field's type holds).
fn not_written(
    key: &str,
    error: &WriteError,
    checked: &Checked,
    logged: Result<(), String>,
) -> ToolResult {
    let mut message = error.to_string();
    if let (WriteError::Refused { .. }, Some(first)) = (error, checked.report.warnings.first()) {
        message.push_str(&format!(
            ". The check had warned: {}; the value may be past what the field's type holds",
            described(first)
        ));
    }
    let mut data = json!({
        "error": error.kind(),
        "record_name": key,
        "warnings": checked.report.warnings,
    });
    if let WriteError::Refused { code, .. } = error {
        data["code"] = json!(code);
    }
    if let Err(log_error) = logged {
        data["log_error"] = json!(log_error);
        message.push_str(&format!(". Note for the operator: {log_error}"));
    }
    ToolResult::failed(format!("{message}."), data)
}

/// What reading the record back after a write showed.
enum Held {
    /// The value sent.
    Sent,
    /// Another value than the one sent, with where they differ: members the record's type
    /// does not have were dropped, or another writer set it since.
    Differs(Vec<Change>),
    /// The value before the write: the instance accepted it but did not keep it.
    Previous,
    /// Nothing to compare: no value to read, or reading failed.
    Unknown,
}

impl Held {
    fn of(sent: &Value, previous: Option<&Value>, read_back: Option<&Value>) -> Self {
        let Some(now) = read_back else { return Self::Unknown };
        if same_json(now, sent) {
            Self::Sent
        } else if previous.is_some_and(|before| same_json(now, before)) {
            Self::Previous
        } else {
            Self::Differs(changes(sent, now))
        }
    }

    /// The outcome the write log records.
    fn outcome(
        &self,
        read_back: &Result<Option<aimdb::ValueText>, aimdb::AimxError>,
    ) -> &'static str {
        match self {
            Self::Unknown if read_back.is_err() => "written_unconfirmed",
            Self::Sent | Self::Unknown => "written",
            Self::Differs(_) => "written_differently",
            Self::Previous => "not_held",
        }
    }
}

/// An AimDB error before anything was sent, said so.
fn not_sent(error: aimdb::AimxError) -> ToolError {
    WriteError::NotSent(error).into()
}

/// Whether two record lists of an instance have the same records: keys, types, buffers,
/// writability.
fn same_records(a: &[Value], b: &[Value]) -> bool {
    let shape = |records: &[Value]| -> Vec<[Value; 4]> {
        records
            .iter()
            .map(|m| {
                ["record_key", "name", "buffer_type", "writable"]
                    .map(|field| m.get(field).cloned().unwrap_or(Value::Null))
            })
            .collect()
    };
    shape(a) == shape(b)
}

/// Refuses a record the instance does not say is writable, listing those it does.
fn check_writable(snapshot: &Snapshot, key: &str) -> Result<(), ToolError> {
    if snapshot.metadata(key).is_some_and(aimdb::writable) {
        return Ok(());
    }
    let others: Vec<&str> =
        snapshot.records.iter().filter(|m| aimdb::writable(m)).filter_map(record_key).collect();
    let others = if others.is_empty() {
        "none of its records is".to_string()
    } else {
        format!("its writable records are {}", others.join(", "))
    };
    Err(ToolError::NotWritable(format!(
        "Record '{key}' is not writable: the instance does not allow remote writes to it (it is not among its writable records, or a producer of its own sets it); {others}. Nothing was sent."
    )))
}

/// The record's schema check of a proposed value, and its current value.
struct Checked {
    report: schemascope_core::validate::ValidationReport,
    current: Option<Value>,
    values_merged: usize,
}

/// Checks `value` as validate_value does on a live record (the schema's errors, and integers
/// written as floats), over the values known now (no waiting for more).
fn check_value(
    services: &Services,
    source: &Arc<Source>,
    snapshot: &Snapshot,
    key: &str,
    value: &Value,
) -> Result<Checked, ToolError> {
    let merged = match record_live::merge(services, source, snapshot, key, None, Some(0)) {
        Ok(merged) => merged,
        Err(ToolError::NoValues(_)) => {
            return Err(ToolError::NoValues(format!(
                "Record '{key}' has no value yet, so there is no schema to check the value against, and set_record sends only checked values: nothing was sent. A ring buffer holds no current value until its producer writes one; retry once query_schema (with a longer window_ms) shows a value."
            )));
        }
        Err(error) => return Err(error),
    };
    let schema = infer_schema(&merged.profile);
    let report = integers::validate_for_aimdb(&schema, value)?;
    let current = merged.values.last().and_then(|v| v.parse().ok());
    Ok(Checked { report, current, values_merged: merged.values.len() })
}

/// The refusal of a value that does not fit the record's schema: every error with its field,
/// what was expected and what was given.
fn invalid(key: &str, errors: &[ValidationIssue], warnings: &[ValidationIssue]) -> ToolResult {
    let first = errors.first().map(described).unwrap_or_default();
    ToolResult::failed(
        format!(
            "Nothing was sent: the value does not fit record '{key}' ({} error(s)); {first}. Fix it (query_schema shows the schema and an example) and call set_record again.",
            errors.len()
        ),
        json!({"error": "invalid_value", "record_name": key, "sent": false, "errors": errors, "warnings": warnings}),
    )
}

/// One issue as a clause: where, what was expected, what was given.
fn described(issue: &ValidationIssue) -> String {
    let at = match &issue.field {
        Some(field) => format!("field `{field}`"),
        None if issue.path.is_empty() => "the value".to_string(),
        None => format!("`{}`", issue.path),
    };
    format!("{at}: {}", issue.error)
}

/// The answer of a dry run: what would be sent, and what it would change.
fn dry_run(
    key: &str,
    snapshot: &Snapshot,
    value: &Value,
    checked: &Checked,
    would_change: &[Change],
) -> ToolResult {
    let warned = warning_clause(&checked.report.warnings);
    ToolResult::ok(
        format!(
            "Dry run, nothing was sent: setting '{key}' would change {}{warned}.",
            changes_clause(would_change)
        ),
        json!({
            "dry_run": true,
            "record_name": key,
            "would_send": {"method": "record.set", "params": {"name": key, "value": shown(value)}},
            "current": checked.current.as_ref().map(shown),
            "changes": would_change,
            "warnings": checked.report.warnings,
            "values_checked_against": checked.values_merged,
            "protocol": snapshot.protocol.version(),
        }),
    )
}

/// The answer of a write that the instance accepted.
#[allow(clippy::too_many_arguments)] // the parts of one answer, each computed once by `run`
fn answer(
    key: &str,
    written: &aimdb::Written,
    sent: &Value,
    previous: Option<Value>,
    read_back: Option<Value>,
    held: &Held,
    changed: &[Change],
    checked: &Checked,
) -> ToolResult {
    let warned = warning_clause(&checked.report.warnings);
    let mut data = json!({
        "written": true,
        "record_name": key,
        "sent": shown(sent),
        "previous": previous.as_ref().map(shown),
        "value": read_back.as_ref().map(shown),
        "read_back_matches": match held {
            Held::Sent => Some(true),
            Held::Unknown => None,
            Held::Differs(_) | Held::Previous => Some(false),
        },
        "changes": changed,
        "warnings": checked.report.warnings,
        "protocol": written.protocol.version(),
    });
    match (held, &written.read_back) {
        (Held::Sent, _) => ToolResult::ok(
            format!(
                "Set '{key}': the instance holds the new value, read back after the write; {} changed{warned}.",
                changes_clause(changed)
            ),
            data,
        ),
        (Held::Differs(differences), _) => {
            data["differs_from_sent"] = json!(differences);
            ToolResult::ok(
                format!(
                    "Set '{key}', but the instance holds a value other than the one sent, at {} (it drops members its type does not have, or another writer set it since): see `value`{warned}.",
                    changes_clause(differences)
                ),
                data,
            )
        }
        (Held::Previous, _) => {
            data["error"] = json!("not_held");
            ToolResult::failed(
                format!(
                    "The instance accepted the write to '{key}', but reading it back gives the value it had before: the new value did not take. Tell the user the record was not changed."
                ),
                data,
            )
        }
        (Held::Unknown, Err(error)) => {
            data["read_back_error"] = json!(error.to_string());
            ToolResult::ok(
                format!(
                    "Set '{key}': the instance accepted the write, but reading it back failed ({error}); read the record to confirm{warned}."
                ),
                data,
            )
        }
        (Held::Unknown, Ok(_)) => ToolResult::ok(
            format!(
                "Set '{key}': the instance accepted the write; it has no current value to read back (a ring buffer's value reaches readers as it is consumed){warned}."
            ),
            data,
        ),
    }
}

/// "2 field(s): /port 8080 → 9090, …" or "nothing (the value is the current one)".
fn changes_clause(changed: &[Change]) -> String {
    if changed.is_empty() {
        return "nothing (the value is the current one)".to_string();
    }
    const LISTED: usize = 5;
    let listed: Vec<String> = changed
        .iter()
        .take(LISTED)
        .map(|c| {
            let side = |v: &Option<Value>| v.as_ref().map_or("(none)".to_string(), short);
            let at = if c.path.is_empty() { "the whole value" } else { &c.path };
            format!("{at} {} → {}", side(&c.from), side(&c.to))
        })
        .collect();
    let more = changed.len().saturating_sub(LISTED);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let capped = if changed.len() >= changes::MAX_CHANGES { " (at least)" } else { "" };
    format!("{} field(s){capped}: {}{more}", changed.len(), listed.join(", "))
}

/// A value in a sentence: its JSON, cut at 60 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}…", text.chars().take(60).collect::<String>())
    }
}

fn warning_clause(warnings: &[ValidationIssue]) -> String {
    match warnings.first() {
        Some(first) => format!(
            ". {} warning(s), e.g. {}: check with the user that this is meant",
            warnings.len(),
            described(first)
        ),
        None => String::new(),
    }
}
