//! Setting one record (`record.set`) and reading it back, on one connection: the current value
//! first (what the write changes), a drain cursor opened before the write (a 2.x ring has no
//! current value for `record.get`, so its new value is read from that cursor), the write, then
//! the value as the instance holds it now. Nothing here decides whether a write is allowed: the
//! caller checks the operator's permission and the value first; the instance checks its own.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use super::client::AimxClient;
use super::error::AimxError;
use super::limits::limits;
use super::value_text::ValueText;
use super::wire::Protocol;

/// What a write did.
#[derive(Debug)]
pub struct Written {
    /// The protocol the instance speaks.
    pub protocol: Protocol,
    /// The value before the write, when the record had one to read.
    pub previous: Option<ValueText>,
    /// The new value as the instance echoed it in its reply, when it did.
    pub echoed: Option<ValueText>,
    /// The value read back after the write: `Ok(None)` when the record has none to read (a ring
    /// whose new value had not reached the cursor), `Err` when reading it failed.
    pub read_back: Result<Option<ValueText>, AimxError>,
}

/// Why a write did not happen, or may not have.
#[derive(Debug, Error)]
pub enum WriteError {
    /// The value is over the per-value bound: nothing was sent.
    #[error(
        "the value is {bytes} bytes of JSON, over the {limit}-byte bound per value (--aimdb-max-value-bytes); nothing was sent"
    )]
    TooLarge {
        /// The value's length in bytes of JSON text.
        bytes: u64,
        /// The bound.
        limit: u64,
    },
    /// The instance could not be reached or read before the write: nothing was sent.
    #[error("{0} Nothing was sent.")]
    NotSent(AimxError),
    /// The instance refused the write (not writable, not its type, a producer owns the record):
    /// nothing changed.
    #[error("AimDB refused the write: {code}: {message}")]
    Refused {
        /// The instance's error code (`permission_denied`, `denied`, `validation_error`, …).
        code: String,
        /// Its message (3.0 sends none: a sentence for the code).
        message: String,
    },
    /// The write was sent, but no answer came (the connection closed, timed out or carried
    /// something that is not AimX): whether it took is unknown.
    #[error(
        "the write was sent but its outcome is unknown: {0} Read the record to see whether it took."
    )]
    Unknown(AimxError),
}

impl WriteError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "value_too_large",
            Self::NotSent(error) => error.kind(),
            Self::Refused { .. } => "write_refused",
            Self::Unknown(_) => "write_outcome_unknown",
        }
    }
}

/// Refuses a value longer, as JSON text, than the per-value bound: a write of it would send
/// nothing.
pub fn check_size(value: &Value) -> Result<(), WriteError> {
    let bytes = serde_json::to_string(value).map_or(u64::MAX, |text| text.len() as u64);
    let limit = limits().max_value_bytes;
    if bytes > limit {
        return Err(WriteError::TooLarge { bytes, limit });
    }
    Ok(())
}

/// Sets record `key` of the instance at `socket` to `value` and reads it back, waiting at most
/// `timeout` for each answer.
pub fn write(
    socket: &Path,
    key: &str,
    value: &Value,
    timeout: Duration,
) -> Result<Written, WriteError> {
    check_size(value)?;
    let mut client = AimxClient::connect(socket, timeout).map_err(WriteError::NotSent)?;
    let previous = client.get(key).map_err(WriteError::NotSent)?;
    // The cursor the new value of a ring is read from; what it holds until now is not wanted.
    client.drain(key, None).map_err(WriteError::NotSent)?;
    let echoed = match client.set(key, value) {
        Ok(echoed) => echoed,
        Err(AimxError::Server { code, message, .. }) => {
            let message = refusal_message(client.protocol(), &code, message);
            return Err(WriteError::Refused { message, code });
        }
        Err(error) => return Err(WriteError::Unknown(error)),
    };
    let read_back = read_back(&mut client, key);
    Ok(Written { protocol: client.protocol(), previous, echoed, read_back })
}

/// The record's value now: its current value, else the newest its drain cursor holds.
fn read_back(client: &mut AimxClient, key: &str) -> Result<Option<ValueText>, AimxError> {
    if let Some(value) = client.get(key)? {
        return Ok(Some(value));
    }
    Ok(client.drain(key, None)?.pop())
}

/// The instance's message (v1), or what a 3.0 code, which comes without one, means for a write.
fn refusal_message(protocol: Protocol, code: &str, message: String) -> String {
    if protocol == Protocol::V1 {
        return message;
    }
    match code {
        "denied" => "the instance does not allow writes to this record (not in its writable records)".into(),
        "not_found" => "the instance has no such record".into(),
        "internal" => "the instance could not apply the value (it may not deserialize into the record's type, or a producer owns the record)".into(),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};

    const TIMEOUT: Duration = Duration::from_secs(2);

    fn fake(dir: &Path, protocol: Protocol, behaviour: Behaviour) -> FakeAimdb {
        let records = vec![
            FakeRecord::new("config", "server::Config", vec![json!({"port": 8080})]).writable(),
            FakeRecord::new("temp", "server::Temperature", vec![json!({"celsius": 21.5})]),
        ];
        FakeAimdb::start(&dir.join(format!("{protocol:?}.sock")), protocol, behaviour, records)
            .expect("fake starts")
    }

    #[test]
    fn writes_and_reads_back_on_both_wires() {
        let dir = tempfile::tempdir().expect("temp dir");
        for protocol in [Protocol::V1, Protocol::V3] {
            let fake = fake(dir.path(), protocol, Behaviour::Normal);
            let written =
                write(fake.path(), "config", &json!({"port": 9090}), TIMEOUT).expect("writes");
            assert_eq!(written.protocol, protocol);
            assert!(written.previous.as_ref().is_some_and(|p| *p == json!({"port": 8080})));
            assert!(written.echoed.as_ref().is_some_and(|e| *e == json!({"port": 9090})));
            let read_back = written.read_back.expect("reads back").expect("a value");
            assert!(read_back == json!({"port": 9090}), "{read_back:?}");

            let refused = write(fake.path(), "temp", &json!({"celsius": 1}), TIMEOUT)
                .expect_err("not writable");
            assert_eq!(refused.kind(), "write_refused", "{refused}");
            // An unknown record fails before the write: nothing is sent.
            let missing = write(fake.path(), "nope", &json!(1), TIMEOUT).expect_err("no record");
            assert!(missing.to_string().ends_with("Nothing was sent."), "{missing}");

            // An instance that says yes and keeps the old value is caught by the read-back.
            fake.set_behaviour(Behaviour::IgnoreSets);
            let ignored =
                write(fake.path(), "config", &json!({"port": 1}), TIMEOUT).expect("answered");
            let read_back = ignored.read_back.expect("reads back").expect("a value");
            assert!(read_back == json!({"port": 9090}), "{read_back:?}");

            // Cut while the write is in flight: its outcome is unknown, and said so.
            fake.set_behaviour(Behaviour::CloseOn("record.set".into()));
            let cut = write(fake.path(), "config", &json!({"port": 2}), TIMEOUT).expect_err("cut");
            assert_eq!(cut.kind(), "write_outcome_unknown", "{cut}");
            assert!(cut.to_string().contains("Read the record"), "{cut}");
        }
    }

    #[test]
    fn nothing_is_sent_past_the_bounds_or_to_a_silent_peer() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fake = fake(dir.path(), Protocol::V3, Behaviour::Silent);
        let big =
            json!({"blob": "x".repeat(usize::try_from(limits().max_value_bytes).unwrap_or(0))});
        let error = write(fake.path(), "config", &big, TIMEOUT).expect_err("too large");
        assert_eq!(error.kind(), "value_too_large");
        let error = write(fake.path(), "config", &json!({"port": 1}), Duration::from_millis(200))
            .expect_err("silent");
        assert!(error.to_string().ends_with("Nothing was sent."), "{error}");
    }
}
