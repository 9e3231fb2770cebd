//! Errors of talking to an AimDB instance. Each names the socket, says what happened and what to
//! try, because the reader is usually an LLM relaying it to a person at the other end.

use std::path::PathBuf;

use thiserror::Error;

/// Why an AimX exchange failed.
#[derive(Debug, Error)]
pub enum AimxError {
    /// The socket could not be connected to.
    #[error("Cannot connect to AimDB at {socket}: {reason}.\n\nTry:\n{hint}")]
    Connect {
        /// The socket path.
        socket: PathBuf,
        /// What the OS said.
        reason: String,
        /// What to try, as numbered lines.
        hint: String,
    },
    /// The server closed the connection before it answered.
    #[error(
        "AimDB at {socket} closed the connection during {during}. The instance may have stopped or restarted; check that it is running and try again."
    )]
    Closed {
        /// The socket path.
        socket: PathBuf,
        /// The exchange that was cut (`the handshake`, `record.get`, …).
        during: String,
    },
    /// The server did not answer in time.
    #[error(
        "AimDB at {socket} did not answer {during} within {timeout_ms} ms. The instance may be overloaded or stuck; try again, or raise the timeout."
    )]
    Timeout {
        /// The socket path.
        socket: PathBuf,
        /// The exchange that timed out.
        during: String,
        /// The limit.
        timeout_ms: u64,
    },
    /// The server speaks an AimX version this client does not.
    #[error(
        "AimDB at {socket} speaks an unsupported AimX protocol version: {detail}. schemascope speaks AimX 1.x and 3.x."
    )]
    UnsupportedVersion {
        /// The socket path.
        socket: PathBuf,
        /// What the server said.
        detail: String,
    },
    /// The server refused the handshake (authentication).
    #[error("AimDB at {socket} refused the connection: {code}: {message}")]
    Refused {
        /// The socket path.
        socket: PathBuf,
        /// The server's error code.
        code: String,
        /// The server's message.
        message: String,
    },
    /// The server answered a request with an error.
    #[error("AimDB at {socket} answered {method} with an error: {code}: {message}")]
    Server {
        /// The socket path.
        socket: PathBuf,
        /// The request's method.
        method: String,
        /// The server's error code (`not_found`, `permission_denied`, …).
        code: String,
        /// The server's message.
        message: String,
    },
    /// The server sent something that is not AimX.
    #[error("AimDB at {socket} sent something that is not AimX during {during}: {detail}")]
    Protocol {
        /// The socket path.
        socket: PathBuf,
        /// The exchange.
        during: String,
        /// What was wrong.
        detail: String,
    },
    /// The server sent a line longer than the bound: it was read past, not kept.
    #[error(
        "AimDB at {socket} sent a line longer than {limit} bytes during {during}; it was read past, not kept. A line may hold at most one record's history (--aimdb-record-bytes) and 64 KiB more: raise that flag if the instance's values are this large."
    )]
    LineTooLong {
        /// The socket path.
        socket: PathBuf,
        /// The exchange.
        during: String,
        /// The bound, in bytes.
        limit: u64,
    },
    /// A record value was larger than the per-value bound: it was not kept.
    #[error(
        "AimDB at {socket} sent a value of record `{record}` of {bytes} bytes, over the {limit}-byte bound per value; it was not kept (raise the bound with --aimdb-max-value-bytes)."
    )]
    ValueTooLarge {
        /// The socket path.
        socket: PathBuf,
        /// The record key.
        record: String,
        /// The value's length in bytes of JSON text.
        bytes: u64,
        /// The bound, in bytes.
        limit: u64,
    },
    /// Subscription values arrived faster than they were taken: the oldest waiting was dropped.
    #[error(
        "AimDB at {socket} sent values faster than they were taken: a value of record `{record}` was dropped, as more than {limit} bytes waited (the per-source bound, --aimdb-source-bytes)."
    )]
    QueueFull {
        /// The socket path.
        socket: PathBuf,
        /// The record key of the value dropped.
        record: String,
        /// The bound, in bytes.
        limit: u64,
    },
    /// Reading or writing the socket failed.
    #[error("AimDB at {socket}: I/O error during {during}: {source}")]
    Io {
        /// The socket path.
        socket: PathBuf,
        /// The exchange.
        during: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl AimxError {
    /// A short machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Connect { .. } => "aimdb_connect_failed",
            Self::Closed { .. } => "aimdb_connection_closed",
            Self::Timeout { .. } => "aimdb_timeout",
            Self::UnsupportedVersion { .. } => "aimdb_unsupported_version",
            Self::Refused { .. } => "aimdb_refused",
            Self::Server { .. } => "aimdb_server_error",
            Self::Protocol { .. } => "aimdb_protocol_error",
            Self::Io { .. } => "aimdb_io_error",
            Self::LineTooLong { .. } => "aimdb_line_too_long",
            Self::ValueTooLarge { .. } => "aimdb_value_too_large",
            Self::QueueFull { .. } => "aimdb_queue_full",
        }
    }

    /// The server's error code, for errors the server sent.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Server { code, .. } | Self::Refused { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// What to try when connecting to `socket` failed with `error`, as numbered lines.
pub(super) fn connect_hint(socket: &std::path::Path, error: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let running = "Check that the AimDB instance is running with remote access enabled (AimxConfig::socket_path)";
    let first = match error.kind() {
        ErrorKind::NotFound => format!("No socket exists at {}: check the path (AimDB's default is /tmp/aimdb.sock)", socket.display()),
        ErrorKind::ConnectionRefused if socket.exists() && !super::endpoint::is_socket(socket) => {
            format!("{} exists but is not a Unix socket: point at the socket the instance listens on", socket.display())
        }
        ErrorKind::ConnectionRefused => {
            format!("{} exists but nothing listens on it: the instance has probably stopped (a stale socket file is left behind); restart it", socket.display())
        }
        ErrorKind::PermissionDenied => {
            "Permission denied: AimDB creates its socket with mode 0600 by default, so only its owner may connect; run as that user or widen socket_permissions".to_string()
        }
        _ => running.to_string(),
    };
    if first == running { format!("1. {running}") } else { format!("1. {first}\n2. {running}") }
}
