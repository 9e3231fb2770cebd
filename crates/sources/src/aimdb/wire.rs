//! The two AimX wires, line by line: what the client writes and how the server's lines read, for
//! protocol 1.0 (untagged NDJSON objects) and 3.0 (frames tagged by `"t"`). The shapes follow
//! `aimdb-core` 1.1 `remote/handler.rs` and 2.0 `session/aimx/codec.rs` exactly (see README.md).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::value_text::ValueText;

/// The client name sent in the handshake.
pub(super) const CLIENT_NAME: &str = "schemascope";

/// An AimX protocol generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Protocol {
    /// Protocol 1.x: `{id, method, params}` requests, `{id, result|error}` replies.
    #[serde(rename = "1.0")]
    V1,
    /// Protocol 3.x: frames tagged by `"t"` (`req`, `reply`, `sub`, `event`, `snap`, …).
    #[serde(rename = "3.0")]
    V3,
}

impl Protocol {
    /// The version string the client declares.
    pub fn version(self) -> &'static str {
        match self {
            Self::V1 => "1.0",
            Self::V3 => "3.0",
        }
    }
}

/// An error the server answered a request with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ServerError {
    /// Its code (`not_found`, `permission_denied`, …; in 3.0 one of `not_found`, `denied`,
    /// `internal`, `version_mismatch`).
    pub code: String,
    /// Its message (3.0 sends none: one is made from the code).
    pub message: String,
}

/// One line from the server. Results and values stay JSON text (see `value_text.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Incoming {
    /// The answer to request `id`.
    Reply {
        /// The request id it answers.
        id: u64,
        /// The result, or the server's error.
        result: Result<ValueText, ServerError>,
    },
    /// A subscription update.
    Event {
        /// The subscription it belongs to.
        sub: String,
        /// Its sequence number.
        seq: u64,
        /// The record value.
        data: ValueText,
    },
    /// A v1 welcome.
    Welcome(Value),
    /// A v1 handshake refusal (`{"error": code, "message": …}`), after which the server closes.
    Refused(ServerError),
    /// Something the client has no use for (`pong`, `subscribed` acks).
    Ignored,
}

/// The 3.0 hello request, as `aimdb-client` 0.7 sends it.
pub(super) fn hello_v3(id: u64) -> String {
    request(
        Protocol::V3,
        id,
        "hello",
        Some(json!({"client": CLIENT_NAME, "version": Protocol::V3.version()})),
    )
}

/// The v1 hello line, as `aimdb-client` 0.6 sends it (`capabilities` and `auth_token` omitted).
pub(super) fn hello_v1() -> String {
    json!({"version": Protocol::V1.version(), "client": CLIENT_NAME}).to_string()
}

/// A request line. In v1 absent params are omitted, in 3.0 they are `null`, as each client does.
pub(super) fn request(protocol: Protocol, id: u64, method: &str, params: Option<Value>) -> String {
    let mut frame = Map::new();
    if protocol == Protocol::V3 {
        frame.insert("t".into(), json!("req"));
    }
    frame.insert("id".into(), json!(id));
    frame.insert("method".into(), json!(method));
    match (protocol, params) {
        (_, Some(params)) => {
            frame.insert("params".into(), params);
        }
        (Protocol::V3, None) => {
            frame.insert("params".into(), Value::Null);
        }
        (Protocol::V1, None) => {}
    }
    Value::Object(frame).to_string()
}

/// The params of `record.get`: v1 names the record `record`, 3.0 `name`.
pub(super) fn get_params(protocol: Protocol, key: &str) -> Value {
    match protocol {
        Protocol::V1 => json!({"record": key}),
        Protocol::V3 => json!({"name": key}),
    }
}

/// The params of `record.drain` (the same in both).
pub(super) fn drain_params(key: &str, limit: Option<u64>) -> Value {
    match limit {
        Some(limit) => json!({"name": key, "limit": limit}),
        None => json!({"name": key}),
    }
}

/// A 3.0 subscribe frame; the subscription is then known by `id` as a string.
pub(super) fn subscribe_v3(id: u64, key: &str) -> String {
    json!({"t": "sub", "id": id, "topic": key}).to_string()
}

/// The message for a 3.0 error code, which comes without one.
fn v3_message(code: &str) -> String {
    match code {
        "not_found" => "no such record, or it has no value yet".into(),
        "denied" => "permission denied".into(),
        "version_mismatch" => "the server refused the client's protocol version".into(),
        _ => "internal server error".into(),
    }
}

/// The members of a line either wire uses, each as unparsed JSON text: a value is checked and
/// kept as text, never built into a tree. Members no wire has are skipped without being kept.
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    t: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    ok: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    err: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    seq: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    sub: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    data: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    event: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    message: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    version: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    server: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    subscription_id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    sequence: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    code: Option<&'a RawValue>,
}

/// A member that is there, `null` included (`Option`'s own reading takes `null` for absent, and
/// a record's value may be `null`).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

fn as_u64(raw: Option<&RawValue>) -> Option<u64> {
    raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
}

fn as_string(raw: Option<&RawValue>) -> Option<String> {
    raw.and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// The longest welcome or error read as a tree; more is not AimX.
const SMALL_BYTES: usize = 64 << 10;

/// Reads one line from the server. `Err` describes a line that is in neither wire's shape.
pub(super) fn decode(line: &str) -> Result<Incoming, String> {
    let frame: Frame<'_> = serde_json::from_str(line).map_err(|e| {
        if e.classify() == serde_json::error::Category::Data {
            format!("not a JSON object in either wire's shape ({e}): {}", excerpt(line))
        } else {
            format!("not JSON ({e}): {}", excerpt(line))
        }
    })?;
    match as_string(frame.t) {
        Some(tag) => decode_v3(&tag, &frame, line),
        None if frame.event.is_some() => {
            let event: Frame<'_> = frame
                .event
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .ok_or_else(|| format!("event that is not an object: {}", excerpt(line)))?;
            let sub = as_string(event.subscription_id)
                .ok_or_else(|| format!("event without subscription_id: {}", excerpt(line)))?;
            let seq = as_u64(event.sequence).unwrap_or(0);
            let data = event
                .data
                .map_or_else(|| ValueText::compact("null"), |raw| ValueText::compact(raw.get()));
            Ok(Incoming::Event { sub, seq, data })
        }
        None if frame.id.is_some() && (frame.result.is_some() || frame.error.is_some()) => {
            let id = as_u64(frame.id)
                .ok_or_else(|| format!("reply with a bad id: {}", excerpt(line)))?;
            let result = match (frame.result, frame.error) {
                (Some(result), _) => Ok(ValueText::compact(result.get())),
                (None, error) => {
                    let error: Option<Frame<'_>> =
                        error.and_then(|raw| serde_json::from_str(raw.get()).ok());
                    let code = error.as_ref().and_then(|e| as_string(e.code));
                    let message = error.as_ref().and_then(|e| as_string(e.message));
                    Err(ServerError {
                        code: code.unwrap_or_else(|| "error".into()),
                        message: message.unwrap_or_default(),
                    })
                }
            };
            Ok(Incoming::Reply { id, result })
        }
        None if frame.version.is_some() && frame.server.is_some() => {
            if line.len() > SMALL_BYTES {
                return Err(format!("a welcome of {} bytes, over {SMALL_BYTES}", line.len()));
            }
            serde_json::from_str(line).map(Incoming::Welcome).map_err(|e| e.to_string())
        }
        None => match as_string(frame.error) {
            Some(code) => {
                let message = as_string(frame.message).unwrap_or_default();
                Ok(Incoming::Refused(ServerError { code, message }))
            }
            None => Err(format!("an object in neither AimX wire's shape: {}", excerpt(line))),
        },
    }
}

fn decode_v3(tag: &str, frame: &Frame<'_>, line: &str) -> Result<Incoming, String> {
    match tag {
        "reply" => {
            let id =
                as_u64(frame.id).ok_or_else(|| format!("reply without id: {}", excerpt(line)))?;
            let result = match (frame.ok, as_string(frame.err)) {
                (Some(ok), _) => Ok(ValueText::compact(ok.get())),
                (None, Some(code)) => {
                    let message = v3_message(&code);
                    Err(ServerError { code, message })
                }
                (None, None) => {
                    return Err(format!("reply with neither ok nor err: {}", excerpt(line)));
                }
            };
            Ok(Incoming::Reply { id, result })
        }
        "event" | "snap" => {
            let sub = as_string(frame.sub)
                .ok_or_else(|| format!("{tag} without sub: {}", excerpt(line)))?;
            let seq =
                as_u64(frame.seq).ok_or_else(|| format!("{tag} without seq: {}", excerpt(line)))?;
            // A missing `data` decodes as null, as the codec does.
            let data = frame
                .data
                .map_or_else(|| ValueText::compact("null"), |raw| ValueText::compact(raw.get()));
            Ok(Incoming::Event { sub, seq, data })
        }
        "pong" | "subscribed" => Ok(Incoming::Ignored),
        other => Err(format!("unknown frame type `{other}`: {}", excerpt(line))),
    }
}

/// The start of a line, for messages.
fn excerpt(line: &str) -> String {
    let cut: String = line.chars().take(120).collect();
    if cut.len() < line.len() { format!("{cut}…") } else { cut }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: Value) -> ValueText {
        ValueText::from(&value)
    }

    #[test]
    fn writes_each_wire_as_its_client_does() {
        assert_eq!(hello_v1(), r#"{"version":"1.0","client":"schemascope"}"#);
        assert_eq!(
            hello_v3(1),
            r#"{"t":"req","id":1,"method":"hello","params":{"client":"schemascope","version":"3.0"}}"#
        );
        assert_eq!(
            request(Protocol::V1, 2, "record.list", None),
            r#"{"id":2,"method":"record.list"}"#
        );
        assert_eq!(
            request(Protocol::V3, 2, "record.list", None),
            r#"{"t":"req","id":2,"method":"record.list","params":null}"#
        );
        assert_eq!(
            request(Protocol::V1, 3, "record.get", Some(get_params(Protocol::V1, "temp"))),
            r#"{"id":3,"method":"record.get","params":{"record":"temp"}}"#
        );
        assert_eq!(
            request(Protocol::V3, 3, "record.get", Some(get_params(Protocol::V3, "temp"))),
            r#"{"t":"req","id":3,"method":"record.get","params":{"name":"temp"}}"#
        );
        assert_eq!(drain_params("temp", Some(5)), json!({"name": "temp", "limit": 5}));
        assert_eq!(subscribe_v3(4, "temp"), r#"{"t":"sub","id":4,"topic":"temp"}"#);
    }

    #[test]
    fn reads_v1_lines() {
        assert_eq!(
            decode(r#"{"id":1,"result":{"celsius":21.5}}"#),
            Ok(Incoming::Reply { id: 1, result: Ok(text(json!({"celsius": 21.5}))) })
        );
        assert_eq!(
            decode(
                r#"{"id":2,"error":{"code":"not_found","message":"No value available for record: x"}}"#
            ),
            Ok(Incoming::Reply {
                id: 2,
                result: Err(ServerError {
                    code: "not_found".into(),
                    message: "No value available for record: x".into()
                })
            })
        );
        assert_eq!(
            decode(
                r#"{"event":{"subscription_id":"sub-1","sequence":3,"data":{"v":1},"timestamp":"1730379296.123456789"}}"#
            ),
            Ok(Incoming::Event { sub: "sub-1".into(), seq: 3, data: text(json!({"v": 1})) })
        );
        let welcome = r#"{"version":"1.0","server":"aimdb","permissions":["read"],"writable_records":[],"max_subscriptions":100,"authenticated":false}"#;
        assert!(matches!(decode(welcome), Ok(Incoming::Welcome(w)) if w["version"] == "1.0"));
        assert_eq!(
            decode(
                r#"{"error":"unsupported_version","message":"Server supports version 1.0, client requested 3.0"}"#
            ),
            Ok(Incoming::Refused(ServerError {
                code: "unsupported_version".into(),
                message: "Server supports version 1.0, client requested 3.0".into()
            }))
        );
    }

    #[test]
    fn reads_v3_frames() {
        // Byte for byte as aimdb-core 2.0's codec tests write them.
        assert_eq!(
            decode(r#"{"t":"reply","id":11,"ok":{"status":"success"}}"#),
            Ok(Incoming::Reply { id: 11, result: Ok(text(json!({"status": "success"}))) })
        );
        assert_eq!(
            decode(r#"{"t":"reply","id":1,"err":"not_found"}"#),
            Ok(Incoming::Reply {
                id: 1,
                result: Err(ServerError {
                    code: "not_found".into(),
                    message: "no such record, or it has no value yet".into()
                })
            })
        );
        assert_eq!(
            decode(
                r#"{"t":"event","seq":9,"topic":"temp.vienna","sub":"5","data":{"c":21.5,"a":[1,2,3]}}"#
            ),
            Ok(Incoming::Event {
                sub: "5".into(),
                seq: 9,
                data: text(json!({"c": 21.5, "a": [1, 2, 3]}))
            })
        );
        assert_eq!(
            decode(r#"{"t":"event","seq":2,"sub":"5","data":42}"#),
            Ok(Incoming::Event { sub: "5".into(), seq: 2, data: text(json!(42)) })
        );
        assert_eq!(
            decode(r#"{"t":"snap","seq":3,"topic":"temp.berlin","sub":"8","data":{"c":18.0}}"#),
            Ok(Incoming::Event { sub: "8".into(), seq: 3, data: text(json!({"c": 18.0})) })
        );
        // A record whose value is null has one: `null` is not an absent `ok`.
        assert_eq!(
            decode(r#"{"t":"reply","id":4,"ok":null}"#),
            Ok(Incoming::Reply { id: 4, result: Ok(text(Value::Null)) })
        );
        assert_eq!(decode(r#"{"t":"pong"}"#), Ok(Incoming::Ignored));
        assert!(decode(r#"{"t":"reply","id":1}"#).is_err());
        assert!(decode(r#"{"t":"nope"}"#).is_err());
        assert!(decode("{not json").is_err());
        assert!(decode("[1]").is_err());
    }
}
