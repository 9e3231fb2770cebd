//! Errors of serving MCP: binding, the HTTP server, the stdio session.

use std::net::SocketAddr;

use thiserror::Error;

/// Why the server could not start or stopped abnormally.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The HTTP listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Listening beyond loopback without a token would expose the data to the network.
    #[error(
        "refusing to listen on {addr} without a token: anyone who can reach it could read the data; set SCHEMASCOPE_TOKEN or --token-file, or listen on 127.0.0.1"
    )]
    TokenRequired {
        /// The non-loopback address asked for.
        addr: SocketAddr,
    },
    /// The token given is empty (an empty file or variable).
    #[error(
        "the token is empty; put a long random string in SCHEMASCOPE_TOKEN or the --token-file (e.g. `openssl rand -hex 32`)"
    )]
    EmptyToken,
    /// The token has characters that cannot travel in a header or cookie.
    #[error(
        "the token may only hold printable ASCII without spaces, quotes, commas, semicolons or backslashes (e.g. `openssl rand -hex 32`)"
    )]
    BadToken,
    /// The token is too short or too repetitive to keep anyone out.
    #[error(
        "the token is too weak: {chars} character(s), about {bits} bits by its length and variety; use at least 16 characters and 64 bits, e.g. `openssl rand -hex 32` (256 bits)"
    )]
    WeakToken {
        /// Its length in characters.
        chars: usize,
        /// Its estimated strength: length × log2(distinct characters).
        bits: u32,
    },
    /// An `--allow-host` or `--allow-origin` entry is not a host or an origin.
    #[error(
        "{flag} {value}: {reason}; give a host as NAME or NAME:PORT, an origin as http://NAME[:PORT] or https://NAME[:PORT]"
    )]
    BadAllowed {
        /// The flag.
        flag: &'static str,
        /// The entry given.
        value: String,
        /// Why it is not read.
        reason: String,
    },
    /// A connection limit is not usable (zero).
    #[error("{0}")]
    BadLimit(String),
    /// The bound listener has no local address (should not happen).
    #[error("cannot read the listening address: {0}")]
    LocalAddr(#[source] std::io::Error),
    /// The HTTP server failed while running.
    #[error("HTTP server failed: {0}")]
    Http(#[source] std::io::Error),
    /// The stdio session could not start (the client closed stdin or sent no valid handshake).
    #[error("MCP session over stdio could not start: {0}")]
    StdioInit(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The stdio session's task ended abnormally.
    #[error("MCP session over stdio ended abnormally: {0}")]
    Session(#[from] tokio::task::JoinError),
}

impl From<rmcp::service::ServerInitializeError> for ServerError {
    fn from(error: rmcp::service::ServerInitializeError) -> Self {
        Self::StdioInit(Box::new(error))
    }
}
