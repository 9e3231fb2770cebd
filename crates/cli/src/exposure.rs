//! The flags that decide how far `serve --http` and `demo` are exposed: the token, accepted
//! hosts and origins, and the limits on requests, sessions and tool results.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use schemascope_server::HttpOptions;
use schemascope_tools::Services;

/// The environment variable holding the token (a file is safer: see --token-file).
const TOKEN_VARIABLE: &str = "SCHEMASCOPE_TOKEN";

/// HTTP exposure and limits.
#[derive(clap::Args, Clone, Default)]
pub(crate) struct ExposureArgs {
    /// File holding the bearer token clients must send (`Authorization: Bearer <token>`; in a
    /// browser open /?token=TOKEN once). Also read from $SCHEMASCOPE_TOKEN. Required to listen
    /// on a non-loopback address; at least 16 characters and 64 bits (`openssl rand -hex 32`).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Accept this Host header name too (repeatable), e.g. a name pointing at this machine:
    /// NAME on any port, or NAME:PORT on that port only.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// Accept requests from pages at this origin (repeatable), e.g. http://localhost:3000.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Largest request body, in bytes [default: 4194304].
    #[arg(long, value_name = "BYTES")]
    max_body_bytes: Option<usize>,
    /// Seconds a request may take until its answer starts [default: 60 over HTTP; over stdio,
    /// a tool call is bounded only when this is given].
    #[arg(long, value_name = "SECONDS")]
    request_timeout: Option<f64>,
    /// Most MCP sessions held at once [default: 128].
    #[arg(long, value_name = "N")]
    max_sessions: Option<usize>,
    /// Seconds a client may take to send a request's headers (also how long an idle connection
    /// stays open), checked before the token [default: 10].
    #[arg(long, value_name = "SECONDS")]
    header_timeout: Option<f64>,
    /// Most HTTP connections open at once; more wait until one closes [default: 512].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Largest tool result, in bytes, on every surface; longer results are cut and say so in
    /// `truncated` [default: 262144].
    #[arg(long, value_name = "BYTES")]
    max_result_bytes: Option<usize>,
    /// The token a configuration file gives (`[server] token`), below --token-file.
    #[arg(skip)]
    token: Option<String>,
}

impl ExposureArgs {
    /// These flags, with the configuration's `[server]` settings where a flag was not given.
    pub(crate) fn or_config(mut self, settings: &crate::config::ServerSettings) -> Self {
        self.token_file = self.token_file.or_else(|| settings.token_file.clone());
        self.token = self.token.or_else(|| settings.token.clone());
        if self.allow_host.is_empty() {
            self.allow_host = settings.allow_hosts.clone();
        }
        if self.allow_origin.is_empty() {
            self.allow_origin = settings.allow_origins.clone();
        }
        self.max_body_bytes = self.max_body_bytes.or(settings.max_body_bytes);
        self.request_timeout = self.request_timeout.or(settings.request_timeout);
        self.max_sessions = self.max_sessions.or(settings.max_sessions);
        self.header_timeout = self.header_timeout.or(settings.header_timeout);
        self.max_connections = self.max_connections.or(settings.max_connections);
        self.max_result_bytes = self.max_result_bytes.or(settings.max_result_bytes);
        self
    }

    /// `--request-timeout` (or the configuration's `request_timeout`) when given: over stdio
    /// the only bound on a tool call besides the client's own cancellation.
    pub(crate) fn request_timeout(&self) -> Result<Option<Duration>> {
        match self.request_timeout {
            Some(seconds) if !(seconds.is_finite() && seconds > 0.0) => {
                bail!("--request-timeout must be a positive number of seconds, not {seconds}")
            }
            Some(seconds) => Ok(Some(Duration::from_secs_f64(seconds))),
            None => Ok(None),
        }
    }

    /// Sets the tool-result cap on the services.
    pub(crate) fn apply(&self, services: &Services) {
        if let Some(bytes) = self.max_result_bytes {
            services.set_max_result_bytes(bytes);
        }
    }

    /// The HTTP options: defaults, then the flags; the token from the file or the environment.
    pub(crate) fn http_options(&self) -> Result<HttpOptions> {
        let mut options = HttpOptions {
            allowed_hosts: self.allow_host.clone(),
            allowed_origins: self.allow_origin.clone(),
            ..HttpOptions::default()
        };
        options.token = match &self.token_file {
            Some(path) => Some(read_token_file(path)?),
            None => self.token.clone().or_else(|| std::env::var(TOKEN_VARIABLE).ok()),
        };
        if let Some(bytes) = self.max_body_bytes {
            options.max_body_bytes = bytes;
        }
        if let Some(timeout) = self.request_timeout()? {
            options.request_timeout = timeout;
        }
        if let Some(n) = self.max_sessions {
            if n == 0 {
                bail!("--max-sessions must be at least 1");
            }
            options.max_sessions = n;
        }
        if let Some(seconds) = self.header_timeout {
            if !(seconds.is_finite() && seconds > 0.0) {
                bail!("--header-timeout must be a positive number of seconds, not {seconds}");
            }
            options.header_timeout = Duration::from_secs_f64(seconds);
        }
        if let Some(n) = self.max_connections {
            if n == 0 {
                bail!("--max-connections must be at least 1");
            }
            options.max_connections = n;
        }
        Ok(options)
    }
}

fn read_token_file(path: &std::path::Path) -> Result<String> {
    // A regular file of a few bytes: a FIFO, a device or a huge file is refused, never read.
    let text = schemascope_sources::file::read_small_string(path).map_err(|e| match e {
        schemascope_sources::FileError::Io { cause, .. } => {
            anyhow::anyhow!("cannot read the token file {}: {cause}", path.display())
        }
        other => anyhow::anyhow!("cannot use the token file: {other}"),
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            eprintln!(
                "schemascope: warning: the token file {} is readable by other users; `chmod 600` it",
                path.display()
            );
        }
    }
    Ok(text.trim().to_string())
}
