//! A fake AimDB instance for tests: serves AimX on a Unix socket in either wire, writing every
//! line as `aimdb-core` 1.1 (`remote/handler.rs`) or 2.0 (`session/aimx/codec.rs`, `dispatch.rs`)
//! does, with scripted misbehaviour (closing mid-request, never answering, a foreign version).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use schemascope_core::sync::lock;
use serde_json::{Value, json};

use super::wire::Protocol;

/// How the fake misbehaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// As a real server.
    Normal,
    /// Closes the connection when a request with this method arrives.
    CloseOn(String),
    /// Reads everything and answers nothing.
    Silent,
    /// Answers the handshake with this protocol version (3.0 wire), or refuses it as
    /// `unsupported_version` (v1 wire).
    Version(String),
    /// Answers every `record.get` with an array of `{"a":0}` objects of about this many bytes,
    /// written in pieces (never held whole): the value whose tree costs 100 times its text.
    HugeGet(usize),
    /// Answers every `record.set` with success and the value sent, but keeps the old value.
    IgnoreSets,
    /// Once a connection has subscribed, sends it this many events of such an array of about
    /// `event_bytes` each, as fast as it reads them.
    Flood {
        /// Bytes of each event's value.
        event_bytes: usize,
        /// How many events.
        events: usize,
    },
}

/// One record of the fake: its `record.list` metadata and its values, oldest first.
#[derive(Debug, Clone)]
pub struct FakeRecord {
    /// The metadata object `record.list` returns.
    pub metadata: Value,
    /// Every value produced, oldest first; the last is the current one.
    pub values: Vec<Value>,
}

impl FakeRecord {
    /// A record with the metadata fields `aimdb-core` 1.1 sends.
    pub fn new(key: &str, type_name: &str, values: Vec<Value>) -> Self {
        let metadata = json!({
            "record_id": 0, "record_key": key, "name": type_name, "type_id": "TypeId(0x5eed)",
            "origin": "source", "buffer_type": "spmc_ring", "buffer_capacity": 100,
            "producer_count": 1, "consumer_count": 0, "writable": false,
            "created_at": "2025-11-05T10:00:00.000Z", "outbound_connector_count": 0,
        });
        Self { metadata, values }
    }

    /// The same record, writable through AimX (no producer of its own), as a configuration is.
    pub fn writable(mut self) -> Self {
        self.metadata["writable"] = Value::Bool(true);
        self.metadata["producer_count"] = Value::from(0);
        self
    }

    fn key(&self) -> &str {
        self.metadata.get("record_key").and_then(Value::as_str).unwrap_or("")
    }
}

struct Shared {
    behaviour: Mutex<Behaviour>,
    records: Mutex<Vec<FakeRecord>>,
    /// One sender per open connection: values pushed after it connected.
    feeds: Mutex<Vec<Sender<(String, Value)>>>,
}

/// A running fake; dropping it stops it and removes the socket.
pub struct FakeAimdb {
    path: PathBuf,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl FakeAimdb {
    /// Serves `records` at `path` in `protocol`'s wire.
    pub fn start(
        path: &Path,
        protocol: Protocol,
        behaviour: Behaviour,
        records: Vec<FakeRecord>,
    ) -> std::io::Result<Self> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            behaviour: Mutex::new(behaviour),
            records: Mutex::new(records),
            feeds: Mutex::new(Vec::new()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let (shared, stop) = (shared.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (tx, rx) = channel();
                            lock(&shared.feeds).push(tx);
                            let connection = Connection {
                                shared: shared.clone(),
                                protocol,
                                feed: rx,
                                stop: stop.clone(),
                            };
                            std::thread::spawn(move || connection.serve(stream));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(_) => return,
                    }
                }
            })
        };
        Ok(Self { path: path.to_path_buf(), shared, stop, accept: Some(accept) })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Misbehaves from now on as `behaviour` says (connections open already too).
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        *lock(&self.shared.behaviour) = behaviour;
    }

    /// Produces a new value of record `key`, sent to its subscribers and drain cursors.
    pub fn push(&self, key: &str, value: Value) {
        produce(&self.shared, key, value);
    }
}

impl Drop for FakeAimdb {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            schemascope_core::sync::joined_in_drop(accept.join());
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A new value of record `key`, sent to its subscribers and drain cursors.
fn produce(shared: &Shared, key: &str, value: Value) {
    if let Some(record) = lock(&shared.records).iter_mut().find(|r| r.key() == key) {
        record.values.push(value.clone());
    }
    lock(&shared.feeds).retain(|feed| feed.send((key.to_string(), value.clone())).is_ok());
}

struct Connection {
    shared: Arc<Shared>,
    protocol: Protocol,
    feed: Receiver<(String, Value)>,
    stop: Arc<AtomicBool>,
}

/// Per-connection state: drain cursors and subscriptions, as the real servers keep them.
#[derive(Default)]
struct State {
    greeted: bool,
    /// Record key → values produced since the cursor opened.
    drains: HashMap<String, Vec<Value>>,
    /// Subscription id → (record key, next sequence number).
    subscriptions: Vec<(String, String, u64)>,
    next_sub: u64,
    /// Whether a [`Behaviour::Flood`] was sent on this connection.
    flooded: bool,
}

impl Connection {
    fn serve(self, stream: UnixStream) {
        let Ok(mut writer) = stream.try_clone() else { return };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
        let mut reader = BufReader::new(stream);
        let mut state = State::default();
        let mut partial = Vec::new();
        while !self.stop.load(Ordering::SeqCst) {
            while let Ok((key, value)) = self.feed.try_recv() {
                if !self.forward(&mut state, &mut writer, &key, &value) {
                    return;
                }
            }
            if !self.flood(&mut state, &mut writer) {
                return;
            }
            match reader.read_until(b'\n', &mut partial) {
                Ok(0) => return,
                Ok(_) if partial.ends_with(b"\n") => {
                    let line = String::from_utf8_lossy(&partial).trim().to_string();
                    partial.clear();
                    let behaviour = self.behaviour();
                    if behaviour == Behaviour::Silent {
                        continue;
                    }
                    if let Behaviour::HugeGet(bytes) = behaviour
                        && let Some(prefix) = self.get_reply_prefix(&state, &line)
                    {
                        if write_tiny_objects(&mut writer, &prefix, bytes, "}").is_err() {
                            return;
                        }
                        continue;
                    }
                    match self.answer(&mut state, &line) {
                        Some(lines) => {
                            for out in lines {
                                if out.is_null()
                                    || writer.write_all(format!("{out}\n").as_bytes()).is_err()
                                {
                                    return;
                                }
                            }
                        }
                        None => return,
                    }
                }
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
        }
    }

    /// Sends a [`Behaviour::Flood`] once the connection has subscribed; false when the peer is
    /// gone.
    fn flood(&self, state: &mut State, writer: &mut UnixStream) -> bool {
        let Behaviour::Flood { event_bytes, events } = self.behaviour() else { return true };
        let Some((sub, _, _)) = state.subscriptions.first() else { return true };
        if state.flooded {
            return true;
        }
        state.flooded = true;
        for seq in 1..=events as u64 {
            let (prefix, suffix) = match self.protocol {
                Protocol::V1 => (
                    format!(
                        r#"{{"event":{{"subscription_id":"{sub}","sequence":{seq},"timestamp":"1730379296.1","data":"#
                    ),
                    "}}",
                ),
                Protocol::V3 => {
                    (format!(r#"{{"t":"event","seq":{seq},"sub":"{sub}","data":"#), "}")
                }
            };
            if write_tiny_objects(writer, &prefix, event_bytes, suffix).is_err() {
                return false;
            }
        }
        true
    }

    fn behaviour(&self) -> Behaviour {
        lock(&self.shared.behaviour).clone()
    }

    /// For a `record.get` request of a greeted connection, the start of its reply up to the value.
    fn get_reply_prefix(&self, state: &State, line: &str) -> Option<String> {
        let message: Value = serde_json::from_str(line).ok()?;
        if message.get("method").and_then(Value::as_str) != Some("record.get")
            || !state.greeted && self.protocol == Protocol::V1
        {
            return None;
        }
        let id = message.get("id").and_then(Value::as_u64)?;
        Some(match self.protocol {
            Protocol::V1 => format!(r#"{{"id":{id},"result":"#),
            Protocol::V3 => format!(r#"{{"t":"reply","id":{id},"ok":"#),
        })
    }

    /// Hands a pushed value to the drain cursors and subscriptions; false when the peer is gone.
    fn forward(
        &self,
        state: &mut State,
        writer: &mut UnixStream,
        key: &str,
        value: &Value,
    ) -> bool {
        if let Some(cursor) = state.drains.get_mut(key) {
            cursor.push(value.clone());
        }
        for (sub, _, seq) in state.subscriptions.iter_mut().filter(|(_, k, _)| k == key) {
            let line = match self.protocol {
                Protocol::V1 => {
                    json!({"event": {"subscription_id": sub, "sequence": *seq, "data": value, "timestamp": "1730379296.123456789"}})
                }
                Protocol::V3 => json!({"t": "event", "seq": *seq, "sub": sub, "data": value}),
            };
            *seq += 1;
            if writer.write_all(format!("{line}\n").as_bytes()).is_err() {
                return false;
            }
        }
        true
    }

    /// The lines answering `line` (a `null` closes the connection after the lines before it), or
    /// `None` to close it at once.
    fn answer(&self, state: &mut State, line: &str) -> Option<Vec<Value>> {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            // v1 answers a request it cannot parse with id 0; 3.0 skips the frame.
            return Some(match self.protocol {
                Protocol::V1 if state.greeted => vec![
                    json!({"id": 0, "error": {"code": "parse_error", "message": "Invalid JSON"}}),
                ],
                _ => Vec::new(),
            });
        };
        match self.protocol {
            Protocol::V1 => self.answer_v1(state, &message),
            Protocol::V3 => self.answer_v3(state, &message),
        }
    }

    fn answer_v1(&self, state: &mut State, message: &Value) -> Option<Vec<Value>> {
        if !state.greeted {
            // The hello must parse as HelloMessage {version, client}; anything else closes.
            let version = message.get("version").and_then(Value::as_str)?;
            message.get("client").and_then(Value::as_str)?;
            if let Behaviour::Version(_) = self.behaviour() {
                return self.refuse_v1(version);
            }
            if version != "1.0" && version != "1" {
                return self.refuse_v1(version);
            }
            state.greeted = true;
            return Some(vec![
                json!({"version": "1.0", "server": "aimdb", "permissions": ["read"], "writable_records": [], "max_subscriptions": 100, "authenticated": false}),
            ]);
        }
        let id = message.get("id").and_then(Value::as_u64).unwrap_or(0);
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        if self.behaviour() == Behaviour::CloseOn(method.to_string()) {
            return None;
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let error = |code: &str, text: String| {
            Some(vec![json!({"id": id, "error": {"code": code, "message": text}})])
        };
        let ok = |result: Value| Some(vec![json!({"id": id, "result": result})]);
        match method {
            "record.list" => ok(self.list()),
            "record.get" => {
                let Some(key) = params.get("record").and_then(Value::as_str) else {
                    return error("invalid_params", "Missing or invalid 'record' parameter".into());
                };
                match self.latest(key) {
                    Some(value) => ok(value),
                    None => error("not_found", format!("No value available for record: {key}")),
                }
            }
            "record.drain" => {
                let key = params.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                match self.drain(state, &key) {
                    Some(values) => {
                        ok(json!({"record_name": key, "values": values, "count": values.len()}))
                    }
                    None => error("not_found", format!("Record '{key}' not found")),
                }
            }
            "record.subscribe" => {
                let key = params.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                if !self.exists(&key) {
                    return error("not_found", format!("Record '{key}' not found"));
                }
                state.next_sub += 1;
                let sub = format!("sub-{}", state.next_sub);
                state.subscriptions.push((sub.clone(), key, 1));
                ok(json!({"subscription_id": sub, "queue_size": 100}))
            }
            "record.set" => {
                let key = params.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let value = params.get("value").cloned().unwrap_or(Value::Null);
                match self.set(&key, value) {
                    Ok(value) => ok(json!({"status": "success", "value": value})),
                    Err(code) => error(code, format!("Record '{key}' is not writable.")),
                }
            }
            other => error("method_not_found", format!("Unknown method: {other}")),
        }
    }

    fn refuse_v1(&self, version: &str) -> Option<Vec<Value>> {
        // The refusal is written, then the server closes (the `null` marks the close).
        let line = json!({"error": "unsupported_version", "message": format!("Server supports version 1.0, client requested {version}")});
        Some(vec![line, Value::Null])
    }

    fn answer_v3(&self, state: &mut State, frame: &Value) -> Option<Vec<Value>> {
        let tag = frame.get("t").and_then(Value::as_str).unwrap_or("");
        let id = frame.get("id").and_then(Value::as_u64);
        let reply_ok = |id: u64, ok: Value| Some(vec![json!({"t": "reply", "id": id, "ok": ok})]);
        let reply_err =
            |id: u64, err: &str| Some(vec![json!({"t": "reply", "id": id, "err": err})]);
        match (tag, id) {
            ("req", Some(id)) => {
                let method = frame.get("method").and_then(Value::as_str).unwrap_or("");
                if self.behaviour() == Behaviour::CloseOn(method.to_string()) {
                    return None;
                }
                let params = frame.get("params").cloned().unwrap_or(Value::Null);
                let name = params.get("name").and_then(Value::as_str).map(str::to_string);
                match method {
                    "hello" => {
                        let wanted = params.get("version").and_then(Value::as_str).unwrap_or("");
                        if wanted.split('.').next() != Some("3") {
                            return reply_err(id, "version_mismatch");
                        }
                        let version = match &self.behaviour() {
                            Behaviour::Version(v) => v.clone(),
                            _ => "3.0".to_string(),
                        };
                        reply_ok(
                            id,
                            json!({"version": version, "server": "aimdb", "permissions": ["read"], "writable_records": [], "max_subscriptions": 32, "authenticated": false}),
                        )
                    }
                    "record.list" => reply_ok(id, self.list()),
                    "record.get" => match name.and_then(|key| self.latest(&key)) {
                        Some(value) => reply_ok(id, value),
                        None => reply_err(id, "not_found"),
                    },
                    "record.drain" => {
                        let key = name.unwrap_or_default();
                        match self.drain(state, &key) {
                            Some(values) => reply_ok(
                                id,
                                json!({"record_name": key, "values": values, "count": values.len()}),
                            ),
                            None => reply_err(id, "not_found"),
                        }
                    }
                    "record.set" => {
                        let value = params.get("value").cloned().unwrap_or(Value::Null);
                        match self.set(&name.unwrap_or_default(), value) {
                            Ok(value) => reply_ok(id, json!({"status": "success", "value": value})),
                            Err("permission_denied") => reply_err(id, "denied"),
                            Err(code) => reply_err(id, code),
                        }
                    }
                    _ => reply_err(id, "not_found"),
                }
            }
            ("sub", Some(id)) => {
                let key = frame.get("topic").and_then(Value::as_str).unwrap_or("").to_string();
                // The 2.x engine's default `max_subs_per_connection`.
                if state.subscriptions.len() >= 32 {
                    return reply_err(id, "denied");
                }
                if !self.exists(&key) {
                    return reply_err(id, "not_found");
                }
                state.subscriptions.push((id.to_string(), key, 1));
                Some(Vec::new())
            }
            ("ping", _) => Some(vec![json!({"t": "pong"})]),
            // Undecodable frames are skipped, as the 3.0 engine does.
            _ => Some(Vec::new()),
        }
    }

    /// Sets a writable record (its metadata says `writable`) as a write through AimX does:
    /// the value reaches its subscribers and drain cursors. The error code when it is not.
    fn set(&self, key: &str, value: Value) -> Result<Value, &'static str> {
        let writable = lock(&self.shared.records)
            .iter()
            .find(|r| r.key() == key)
            .map(|r| super::snapshot::writable(&r.metadata));
        match writable {
            None => Err("not_found"),
            Some(false) => Err("permission_denied"),
            Some(true) if self.behaviour() == Behaviour::IgnoreSets => Ok(value),
            Some(true) => {
                produce(&self.shared, key, value.clone());
                Ok(value)
            }
        }
    }

    fn list(&self) -> Value {
        Value::Array(lock(&self.shared.records).iter().map(|r| r.metadata.clone()).collect())
    }

    fn exists(&self, key: &str) -> bool {
        lock(&self.shared.records).iter().any(|r| r.key() == key)
    }

    fn latest(&self, key: &str) -> Option<Value> {
        lock(&self.shared.records)
            .iter()
            .find(|r| r.key() == key)
            .and_then(|r| r.values.last().cloned())
    }

    /// The values since the previous drain; the first drain opens the cursor and returns none.
    fn drain(&self, state: &mut State, key: &str) -> Option<Vec<Value>> {
        if !self.exists(key) {
            return None;
        }
        Some(match state.drains.get_mut(key) {
            Some(cursor) => std::mem::take(cursor),
            None => {
                state.drains.insert(key.to_string(), Vec::new());
                Vec::new()
            }
        })
    }
}

/// Writes `prefix`, an array of `{"a":0}` objects of about `bytes` bytes, `suffix` and a newline,
/// a piece at a time.
fn write_tiny_objects(
    writer: &mut UnixStream,
    prefix: &str,
    bytes: usize,
    suffix: &str,
) -> std::io::Result<()> {
    const OBJECT: &str = r#"{"a":0},"#;
    let piece = OBJECT.repeat(8192);
    writer.write_all(prefix.as_bytes())?;
    writer.write_all(b"[")?;
    let mut written = 0;
    while written + piece.len() < bytes {
        writer.write_all(piece.as_bytes())?;
        written += piece.len();
    }
    writer.write_all(format!("{}]{suffix}\n", &OBJECT[..OBJECT.len() - 1]).as_bytes())
}
