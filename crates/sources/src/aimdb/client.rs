//! A small blocking AimX client: one Unix-socket connection, the handshake that picks the
//! protocol (3.0 first, then 1.0), and requests with a deadline on every read, so nothing waits
//! forever on a silent server. Subscription events that arrive while a reply is awaited are kept
//! for [`AimxClient::next_event`].

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::error::{AimxError, connect_hint};
use super::limits::{Limits, limits};
use super::value_text::ValueText;
use super::wire::{self, Incoming, Protocol};

/// The deadline of one request (and of the handshake) unless the caller sets another; the same
/// as `aimdb-client`'s connect timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Refusals kept until taken (see [`AimxClient::take_refusals`]).
const REFUSALS_KEPT: usize = 1_000;

/// The v1 per-subscription queue size the client asks for (the server's default).
const QUEUE_SIZE: u64 = 100;

/// One value pushed by a subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The record key it is for.
    pub key: String,
    /// The server's sequence number (3.0: gaps mean dropped events).
    pub seq: u64,
    /// The record value.
    pub data: ValueText,
}

/// A connection to one AimDB instance.
#[derive(Debug)]
pub struct AimxClient {
    socket: PathBuf,
    protocol: Protocol,
    welcome: Value,
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    partial: Vec<u8>,
    next_id: u64,
    timeout: Duration,
    events: VecDeque<Event>,
    /// The bytes of the values in `events`, bounded by the per-source bound.
    queued_bytes: usize,
    /// Subscription id → record key.
    subscriptions: HashMap<String, String>,
    /// The bounds, as when connected.
    limits: Limits,
    /// Inside a line longer than the bound: the rest of it is read past, up to its newline.
    skipping: bool,
    /// Every byte read from the socket, skipped ones too (for the feed's rate bound).
    bytes_read: u64,
    /// What was refused while following subscriptions (values too large, lines too long,
    /// events dropped from a full queue), for [`AimxClient::take_refusals`].
    refusals: Vec<AimxError>,
}

impl AimxClient {
    /// Connects to the instance at `socket` and completes the handshake, waiting at most
    /// `timeout` for each read.
    pub fn connect(socket: &Path, timeout: Duration) -> Result<Self, AimxError> {
        Self::connect_within(socket, timeout, limits())
    }

    /// [`Self::connect`] within `limits` instead of the bounds in force (discovery asks many
    /// sockets at once, each within a smaller line bound).
    pub fn connect_within(
        socket: &Path,
        timeout: Duration,
        limits: Limits,
    ) -> Result<Self, AimxError> {
        // 3.0 first: a v1 server cannot parse the 3.0 hello and closes at once, while a 3.0
        // server silently skips a v1 hello, so the other order would wait out the timeout.
        let mut client = Self::open(socket, timeout, Protocol::V3, limits)?;
        match client.handshake_v3() {
            Ok(()) => return Ok(client),
            Err(AimxError::Closed { .. }) => {}
            Err(error) => return Err(error),
        }
        let mut client = Self::open(socket, timeout, Protocol::V1, limits)?;
        client.handshake_v1()?;
        Ok(client)
    }

    fn open(
        socket: &Path,
        timeout: Duration,
        protocol: Protocol,
        limits: Limits,
    ) -> Result<Self, AimxError> {
        let stream = UnixStream::connect(socket).map_err(|e| AimxError::Connect {
            socket: socket.to_path_buf(),
            reason: e.to_string(),
            hint: connect_hint(socket, &e),
        })?;
        let io = |source| AimxError::Io {
            socket: socket.to_path_buf(),
            during: "connecting".into(),
            source,
        };
        stream.set_write_timeout(Some(timeout)).map_err(io)?;
        let reader = BufReader::new(stream.try_clone().map_err(io)?);
        Ok(Self {
            socket: socket.to_path_buf(),
            protocol,
            welcome: Value::Null,
            writer: stream,
            reader,
            partial: Vec::new(),
            next_id: 1,
            timeout,
            events: VecDeque::new(),
            queued_bytes: 0,
            subscriptions: HashMap::new(),
            limits,
            skipping: false,
            bytes_read: 0,
            refusals: Vec::new(),
        })
    }

    /// The protocol the server speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The server's welcome (version, server name, permissions, writable records).
    pub fn welcome(&self) -> &Value {
        &self.welcome
    }

    /// The socket path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    fn handshake_v3(&mut self) -> Result<(), AimxError> {
        let id = self.take_id();
        self.send(&wire::hello_v3(id), "the handshake")?;
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.read(deadline, "the handshake")? {
                Incoming::Reply { id: got, result } if got == id => {
                    return match result {
                        Ok(welcome) => {
                            let welcome = self.small_tree(&welcome, "the handshake")?;
                            self.accept_welcome(welcome, "3")
                        }
                        Err(e) if e.code == "version_mismatch" => {
                            Err(AimxError::UnsupportedVersion {
                                socket: self.socket.clone(),
                                detail: "the server refused protocol 3.0 (version_mismatch)".into(),
                            })
                        }
                        Err(e) => Err(AimxError::Refused {
                            socket: self.socket.clone(),
                            code: e.code,
                            message: e.message,
                        }),
                    };
                }
                // A server that read the 3.0 hello as a v1 one answers in v1: speak v1 with it.
                Incoming::Welcome(welcome) => {
                    self.protocol = Protocol::V1;
                    return self.accept_welcome(welcome, "1");
                }
                Incoming::Refused(e) => return Err(self.refusal(e)),
                _ => {}
            }
        }
    }

    fn handshake_v1(&mut self) -> Result<(), AimxError> {
        self.send(&wire::hello_v1(), "the handshake")?;
        let deadline = Instant::now() + self.timeout;
        match self.read(deadline, "the handshake")? {
            Incoming::Welcome(welcome) => self.accept_welcome(welcome, "1"),
            Incoming::Refused(e) => Err(self.refusal(e)),
            other => Err(AimxError::Protocol {
                socket: self.socket.clone(),
                during: "the handshake".into(),
                detail: format!("expected a welcome, got {other:?}"),
            }),
        }
    }

    fn refusal(&self, e: wire::ServerError) -> AimxError {
        if e.code == "unsupported_version" {
            AimxError::UnsupportedVersion {
                socket: self.socket.clone(),
                detail: format!("{}: {}", e.code, e.message),
            }
        } else {
            AimxError::Refused { socket: self.socket.clone(), code: e.code, message: e.message }
        }
    }

    fn accept_welcome(&mut self, welcome: Value, major: &str) -> Result<(), AimxError> {
        let version = welcome.get("version").and_then(Value::as_str).unwrap_or("").to_string();
        if version.split('.').next() != Some(major) {
            return Err(AimxError::UnsupportedVersion {
                socket: self.socket.clone(),
                detail: format!(
                    "its welcome says version {version:?} in the {} wire",
                    self.protocol.version()
                ),
            });
        }
        self.welcome = welcome;
        Ok(())
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A reply that is not a record value (a welcome, a drain's frame) as a tree, refused past
    /// 64 KiB for one that is not a list: a tree costs up to about 100 times its text.
    fn small_tree(&self, text: &ValueText, during: &str) -> Result<Value, AimxError> {
        const SMALL_BYTES: usize = 64 << 10;
        if text.len() > SMALL_BYTES {
            return Err(AimxError::Protocol {
                socket: self.socket.clone(),
                during: during.into(),
                detail: format!(
                    "a reply of {} bytes where at most {SMALL_BYTES} are expected",
                    text.len()
                ),
            });
        }
        text.parse().map_err(|e| AimxError::Protocol {
            socket: self.socket.clone(),
            during: during.into(),
            detail: e.to_string(),
        })
    }

    /// Sends one request and waits for its reply (its JSON text).
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Result<ValueText, AimxError> {
        let id = self.take_id();
        self.send(&wire::request(self.protocol, id, method, params), method)?;
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.read(deadline, method)? {
                Incoming::Reply { id: got, result } if got == id => {
                    return result.map_err(|e| AimxError::Server {
                        socket: self.socket.clone(),
                        method: method.into(),
                        code: e.code,
                        message: e.message,
                    });
                }
                Incoming::Reply { id: got, result: Err(e) }
                    if self.subscriptions.contains_key(&got.to_string()) =>
                {
                    return Err(self.failed_subscription(got, e));
                }
                Incoming::Event { sub, seq, data } => self.keep_event(sub, seq, data),
                // A late reply to a request that timed out earlier, or an ack.
                _ => {}
            }
        }
    }

    fn failed_subscription(&mut self, id: u64, e: wire::ServerError) -> AimxError {
        let key = self.subscriptions.remove(&id.to_string()).unwrap_or_default();
        AimxError::Server {
            socket: self.socket.clone(),
            method: format!("subscribe to `{key}`"),
            code: e.code,
            message: e.message,
        }
    }

    /// Queues a subscription value for [`Self::next_event`]; one over the per-value bound, or
    /// past the per-source bound of queued bytes (the oldest go first), is refused and said in
    /// [`Self::take_refusals`].
    fn keep_event(&mut self, sub: String, seq: u64, data: ValueText) {
        // Events of subscriptions this client did not open (or closed) are dropped.
        let Some(key) = self.subscriptions.get(&sub).cloned() else { return };
        if let Err(error) = self.check_value(&key, &data) {
            self.refuse(error);
            return;
        }
        self.queued_bytes += data.len();
        self.events.push_back(Event { key, seq, data });
        let bound = usize::try_from(self.limits.source_bytes).unwrap_or(usize::MAX);
        while self.queued_bytes > bound
            && let Some(old) = self.events.pop_front()
        {
            self.queued_bytes -= old.data.len();
            self.refuse(AimxError::QueueFull {
                socket: self.socket.clone(),
                record: old.key,
                limit: self.limits.source_bytes,
            });
        }
    }

    /// Keeps a refusal for [`Self::take_refusals`]; past [`REFUSALS_KEPT`] untaken ones the
    /// newest replaces the last, so a flood of tiny refused events cannot grow the list.
    fn refuse(&mut self, error: AimxError) {
        if self.refusals.len() >= REFUSALS_KEPT {
            self.refusals.pop();
        }
        self.refusals.push(error);
    }

    /// Refuses a value over the per-value bound.
    fn check_value(&self, key: &str, value: &ValueText) -> Result<(), AimxError> {
        let bytes = value.len() as u64;
        if bytes > self.limits.max_value_bytes {
            return Err(AimxError::ValueTooLarge {
                socket: self.socket.clone(),
                record: key.to_string(),
                bytes,
                limit: self.limits.max_value_bytes,
            });
        }
        Ok(())
    }

    /// What was refused while reading subscription events since the last call: values over the
    /// per-value bound, lines over the line bound (read past), events dropped from a full queue.
    pub fn take_refusals(&mut self) -> Vec<AimxError> {
        std::mem::take(&mut self.refusals)
    }

    /// Every byte read from the socket so far, lines read past included.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Every record's metadata (`record.list`), as the server sent it. Each record's metadata is
    /// a small object; one over 64 KiB is refused, as its tree would cost up to 100 times that.
    pub fn list_records(&mut self) -> Result<Vec<Value>, AimxError> {
        let reply = self.request("record.list", None)?;
        let records: Vec<&serde_json::value::RawValue> = serde_json::from_str(reply.as_str())
            .map_err(|e| AimxError::Protocol {
                socket: self.socket.clone(),
                during: "record.list".into(),
                detail: format!("expected an array ({e})"),
            })?;
        records
            .into_iter()
            .map(|raw| self.small_tree(&ValueText::compact(raw.get()), "record.list"))
            .collect()
    }

    /// The current value of record `key` (`record.get`), or `None` when it has none. A value over
    /// the per-value bound is an error naming it.
    pub fn get(&mut self, key: &str) -> Result<Option<ValueText>, AimxError> {
        match self.request("record.get", Some(wire::get_params(self.protocol, key))) {
            Ok(value) => self.check_value(key, &value).map(|()| Some(value)),
            Err(error) if error.code() == Some("not_found") => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The values of record `key` produced since the previous drain on this connection
    /// (`record.drain`), oldest first; the first call opens the cursor. A value over the
    /// per-value bound is an error naming it.
    pub fn drain(&mut self, key: &str, limit: Option<u64>) -> Result<Vec<ValueText>, AimxError> {
        #[derive(serde::Deserialize)]
        struct Drained<'a> {
            #[serde(borrow)]
            values: Vec<&'a serde_json::value::RawValue>,
        }
        let reply = self.request("record.drain", Some(wire::drain_params(key, limit)))?;
        let drained: Drained<'_> =
            serde_json::from_str(reply.as_str()).map_err(|e| AimxError::Protocol {
                socket: self.socket.clone(),
                during: "record.drain".into(),
                detail: format!("expected {{values: [...]}} ({e})"),
            })?;
        let values: Vec<ValueText> =
            drained.values.into_iter().map(|raw| ValueText::compact(raw.get())).collect();
        for value in &values {
            self.check_value(key, value)?;
        }
        Ok(values)
    }

    /// Sets record `key` to `value` (`record.set`, the same in both wires), returning the new
    /// value the server echoes, when it sends one. An error the server answers (`denied`,
    /// `permission_denied`, `validation_error`, …) is [`AimxError::Server`]: nothing changed.
    pub fn set(&mut self, key: &str, value: &Value) -> Result<Option<ValueText>, AimxError> {
        #[derive(serde::Deserialize)]
        struct Set<'a> {
            #[serde(borrow)]
            value: Option<&'a serde_json::value::RawValue>,
        }
        let reply = self.request("record.set", Some(json!({"name": key, "value": value})))?;
        let set: Set<'_> =
            serde_json::from_str(reply.as_str()).map_err(|e| AimxError::Protocol {
                socket: self.socket.clone(),
                during: "record.set".into(),
                detail: format!("expected {{status, value?}} ({e})"),
            })?;
        let echoed = set.value.map(|raw| ValueText::compact(raw.get()));
        if let Some(echoed) = &echoed {
            self.check_value(key, echoed)?;
        }
        Ok(echoed)
    }

    /// Subscribes to record `key`; every value produced after this returns comes from
    /// [`Self::next_event`].
    pub fn subscribe(&mut self, key: &str) -> Result<(), AimxError> {
        match self.protocol {
            Protocol::V1 => {
                let reply = self.request(
                    "record.subscribe",
                    Some(json!({"name": key, "queue_size": QUEUE_SIZE})),
                )?;
                let reply = self.small_tree(&reply, "record.subscribe")?;
                let sub =
                    reply.get("subscription_id").and_then(Value::as_str).ok_or_else(|| {
                        AimxError::Protocol {
                            socket: self.socket.clone(),
                            during: "record.subscribe".into(),
                            detail: format!("no subscription_id in {reply}"),
                        }
                    })?;
                self.subscriptions.insert(sub.to_string(), key.to_string());
            }
            Protocol::V3 => {
                // Over UDS 3.0 acknowledges nothing: the subscription is known by its request id,
                // and a refusal comes later as a reply to that id.
                let id = self.take_id();
                self.subscriptions.insert(id.to_string(), key.to_string());
                self.send(&wire::subscribe_v3(id, key), "subscribe")?;
                // The server handles one connection's frames in order and opens the record's
                // reader while handling `sub`, so any reply after it means the subscription is in
                // place: without this barrier a value produced right after `subscribe` returns
                // can be missed. A refusal arriving first is returned by `request`.
                self.request("record.list", None)?;
            }
        }
        Ok(())
    }

    /// The next subscription value, waiting until `deadline`; `None` when none came in time.
    pub fn next_event(&mut self, deadline: Instant) -> Result<Option<Event>, AimxError> {
        loop {
            if let Some(event) = self.events.pop_front() {
                self.queued_bytes -= event.data.len();
                return Ok(Some(event));
            }
            let read = match self.read_until(deadline, "a subscription") {
                // A line too long is read past and said, not the end of the subscription.
                Err(error @ AimxError::LineTooLong { .. }) => {
                    self.refuse(error);
                    continue;
                }
                read => read?,
            };
            match read {
                None => return Ok(None),
                Some(Incoming::Event { sub, seq, data }) => self.keep_event(sub, seq, data),
                Some(Incoming::Reply { id, result: Err(e) })
                    if self.subscriptions.contains_key(&id.to_string()) =>
                {
                    return Err(self.failed_subscription(id, e));
                }
                Some(_) => {}
            }
        }
    }

    fn send(&mut self, line: &str, during: &str) -> Result<(), AimxError> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.writer
            .write_all(&bytes)
            .and_then(|()| self.writer.flush())
            .map_err(|e| self.io_error(e, during))
    }

    /// The next line as a message; a timeout is an error.
    fn read(&mut self, deadline: Instant, during: &str) -> Result<Incoming, AimxError> {
        self.read_until(deadline, during)?.ok_or_else(|| AimxError::Timeout {
            socket: self.socket.clone(),
            during: during.into(),
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// The next line as a message, or `None` when `deadline` passed first.
    fn read_until(
        &mut self,
        deadline: Instant,
        during: &str,
    ) -> Result<Option<Incoming>, AimxError> {
        let Some(line) = self.read_line(deadline, during)? else { return Ok(None) };
        wire::decode(&line).map(Some).map_err(|detail| AimxError::Protocol {
            socket: self.socket.clone(),
            during: during.into(),
            detail,
        })
    }

    /// The next line, or `None` when `deadline` passed first. A line longer than the bound is
    /// refused as soon as the bound is passed, and the rest of it is read past later without
    /// being kept, so a peer cannot make the client hold more than the bound.
    fn read_line(&mut self, deadline: Instant, during: &str) -> Result<Option<String>, AimxError> {
        let max = usize::try_from(self.limits.max_line_bytes()).unwrap_or(usize::MAX);
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // A zero timeout means "block forever" to the OS, so it is never set.
            let wait = (deadline - now).max(Duration::from_millis(1));
            self.reader
                .get_ref()
                .set_read_timeout(Some(wait))
                .map_err(|e| self.io_error(e, during))?;
            if self.skipping {
                match self.reader.fill_buf() {
                    Ok([]) => {
                        return Err(AimxError::Closed {
                            socket: self.socket.clone(),
                            during: during.into(),
                        });
                    }
                    Ok(buffer) => {
                        let end = buffer.iter().position(|&b| b == b'\n');
                        let used = end.map_or(buffer.len(), |i| i + 1);
                        self.reader.consume(used);
                        self.bytes_read += used as u64;
                        self.skipping = end.is_none();
                    }
                    Err(e) if is_retry(&e) => {}
                    Err(e) => return Err(self.io_error(e, during)),
                }
                continue;
            }
            let room = (max + 1).saturating_sub(self.partial.len()) as u64;
            let before = self.partial.len();
            let read = (&mut self.reader).take(room).read_until(b'\n', &mut self.partial);
            self.bytes_read += self.partial.len().saturating_sub(before) as u64;
            match read {
                Ok(_) if self.partial.last() == Some(&b'\n') => {
                    let mut bytes = std::mem::take(&mut self.partial);
                    while matches!(bytes.last(), Some(b'\n' | b'\r')) {
                        bytes.pop();
                    }
                    if bytes.is_empty() {
                        continue;
                    }
                    return String::from_utf8(bytes).map(Some).map_err(|_| AimxError::Protocol {
                        socket: self.socket.clone(),
                        during: during.into(),
                        detail: "a line that is not UTF-8".into(),
                    });
                }
                Ok(_) if self.partial.len() > max => {
                    // Freed now, not when the next line replaces it.
                    self.partial = Vec::new();
                    self.skipping = true;
                    return Err(AimxError::LineTooLong {
                        socket: self.socket.clone(),
                        during: during.into(),
                        limit: max as u64,
                    });
                }
                // End of stream, with or without a partial line.
                Ok(_) => {
                    return Err(AimxError::Closed {
                        socket: self.socket.clone(),
                        during: during.into(),
                    });
                }
                Err(e) if is_retry(&e) => {}
                Err(e) => return Err(self.io_error(e, during)),
            }
        }
    }

    fn io_error(&self, error: std::io::Error, during: &str) -> AimxError {
        match error.kind() {
            ErrorKind::BrokenPipe
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::UnexpectedEof => {
                AimxError::Closed { socket: self.socket.clone(), during: during.into() }
            }
            ErrorKind::WouldBlock | ErrorKind::TimedOut => AimxError::Timeout {
                socket: self.socket.clone(),
                during: during.into(),
                timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            },
            _ => {
                AimxError::Io { socket: self.socket.clone(), during: during.into(), source: error }
            }
        }
    }
}

/// A read that stopped at its timeout or a signal: the caller's deadline decides what follows.
fn is_retry(error: &std::io::Error) -> bool {
    matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}
