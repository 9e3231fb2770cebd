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
use super::wire::{self, Incoming, Protocol};

/// The deadline of one request (and of the handshake) unless the caller sets another; the same
/// as `aimdb-client`'s connect timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest line accepted from a server, so a broken peer cannot exhaust memory.
const MAX_LINE: usize = 64 << 20;

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
    pub data: Value,
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
    /// Subscription id → record key.
    subscriptions: HashMap<String, String>,
}

impl AimxClient {
    /// Connects to the instance at `socket` and completes the handshake, waiting at most
    /// `timeout` for each read.
    pub fn connect(socket: &Path, timeout: Duration) -> Result<Self, AimxError> {
        // 3.0 first: a v1 server cannot parse the 3.0 hello and closes at once, while a 3.0
        // server silently skips a v1 hello, so the other order would wait out the timeout.
        let mut client = Self::open(socket, timeout, Protocol::V3)?;
        match client.handshake_v3() {
            Ok(()) => return Ok(client),
            Err(AimxError::Closed { .. }) => {}
            Err(error) => return Err(error),
        }
        let mut client = Self::open(socket, timeout, Protocol::V1)?;
        client.handshake_v1()?;
        Ok(client)
    }

    fn open(socket: &Path, timeout: Duration, protocol: Protocol) -> Result<Self, AimxError> {
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
            subscriptions: HashMap::new(),
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
                        Ok(welcome) => self.accept_welcome(welcome, "3"),
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

    /// Sends one request and waits for its reply.
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, AimxError> {
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

    fn keep_event(&mut self, sub: String, seq: u64, data: Value) {
        // Events of subscriptions this client did not open (or closed) are dropped.
        if let Some(key) = self.subscriptions.get(&sub) {
            self.events.push_back(Event { key: key.clone(), seq, data });
        }
    }

    /// Every record's metadata (`record.list`), as the server sent it.
    pub fn list_records(&mut self) -> Result<Vec<Value>, AimxError> {
        match self.request("record.list", None)? {
            Value::Array(records) => Ok(records),
            other => Err(AimxError::Protocol {
                socket: self.socket.clone(),
                during: "record.list".into(),
                detail: format!("expected an array, got {other}"),
            }),
        }
    }

    /// The current value of record `key` (`record.get`), or `None` when it has none.
    pub fn get(&mut self, key: &str) -> Result<Option<Value>, AimxError> {
        match self.request("record.get", Some(wire::get_params(self.protocol, key))) {
            Ok(value) => Ok(Some(value)),
            Err(error) if error.code() == Some("not_found") => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The values of record `key` produced since the previous drain on this connection
    /// (`record.drain`), oldest first; the first call opens the cursor.
    pub fn drain(&mut self, key: &str, limit: Option<u64>) -> Result<Vec<Value>, AimxError> {
        let reply = self.request("record.drain", Some(wire::drain_params(key, limit)))?;
        match reply.get("values") {
            Some(Value::Array(values)) => Ok(values.clone()),
            _ => Err(AimxError::Protocol {
                socket: self.socket.clone(),
                during: "record.drain".into(),
                detail: format!("expected {{values: [...]}}, got {reply}"),
            }),
        }
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
                return Ok(Some(event));
            }
            match self.read_until(deadline, "a subscription")? {
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

    fn read_line(&mut self, deadline: Instant, during: &str) -> Result<Option<String>, AimxError> {
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
            let room = (MAX_LINE + 1).saturating_sub(self.partial.len()) as u64;
            let read = (&mut self.reader).take(room).read_until(b'\n', &mut self.partial);
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
                Ok(_) if self.partial.len() > MAX_LINE => {
                    return Err(AimxError::Protocol {
                        socket: self.socket.clone(),
                        during: during.into(),
                        detail: format!("a line longer than {MAX_LINE} bytes"),
                    });
                }
                // End of stream, with or without a partial line.
                Ok(_) => {
                    return Err(AimxError::Closed {
                        socket: self.socket.clone(),
                        during: during.into(),
                    });
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
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
