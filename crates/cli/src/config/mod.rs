//! The configuration file, `schemascope.toml`: the sources to serve — each with a name, what it
//! holds for the model (`description`), a path or URI, its password from the environment or a
//! file so no secret sits in the file — and the server's settings. Values take `${VAR}`
//! interpolation (`interpolate.rs`); relative paths are relative to the file, so a client that
//! starts the server from another directory gets the same sources. Every error names the file,
//! the line and the key, never a value (a value may be a secret).

mod interpolate;
pub(crate) mod reload;
pub(crate) mod starter;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use schemascope_sources::{Location, SourceSpec};
use schemascope_tools::toolsets::ChosenTools;
use serde::Deserialize;
use toml::Spanned;

use interpolate::{interpolate, interpolate_uri, percent_encoded};

/// The file name `serve` looks for when given neither sources nor `--config`.
pub(crate) const FILE_NAME: &str = "schemascope.toml";

/// The environment variable naming the configuration file.
pub(crate) const PATH_VARIABLE: &str = "SCHEMASCOPE_CONFIG";

/// Where `serve` finds its configuration when given neither sources nor `--config`:
/// `$SCHEMASCOPE_CONFIG`, then `./schemascope.toml`, then
/// `$XDG_CONFIG_HOME/schemascope/schemascope.toml` (else `~/.config/schemascope/…`).
pub(crate) fn default_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(PATH_VARIABLE).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let here = PathBuf::from(FILE_NAME);
    if here.is_file() {
        return Some(here);
    }
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    let path = config_home.join("schemascope").join(FILE_NAME);
    path.is_file().then_some(path)
}

/// A configuration that could not be used: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigError {
    /// The file.
    pub(crate) file: PathBuf,
    /// The line (1-based), when the error is at one.
    pub(crate) line: Option<usize>,
    /// The key, e.g. `sources[2].uri`.
    pub(crate) key: Option<String>,
    /// What is wrong, without any value from the file.
    pub(crate) message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// One source of the configuration, ready to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfiguredSource {
    /// What to load, with its description (its URI may hold the password: never shown).
    pub(crate) spec: SourceSpec,
    /// The directory of its schema documentation.
    pub(crate) docs: Option<PathBuf>,
    /// Its dbt project, manifest or properties file.
    pub(crate) dbt: Option<PathBuf>,
}

/// The `[server]` section: each setting as the flag of the same meaning takes it; a flag given
/// on the command line wins.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct ServerSettings {
    /// Listen for streamable HTTP here (stdio when absent).
    pub(crate) http: Option<SocketAddr>,
    /// The bearer token (from `token`, usually `${VAR}`), never shown.
    pub(crate) token: Option<String>,
    /// A file holding the bearer token.
    pub(crate) token_file: Option<PathBuf>,
    /// Extra Host header names accepted.
    pub(crate) allow_hosts: Vec<String>,
    /// Page origins accepted.
    pub(crate) allow_origins: Vec<String>,
    /// Largest request body, in bytes.
    pub(crate) max_body_bytes: Option<usize>,
    /// Seconds a request may take until its answer starts.
    pub(crate) request_timeout: Option<f64>,
    /// Most MCP sessions held at once.
    pub(crate) max_sessions: Option<usize>,
    /// Seconds a client may take to send a request's headers.
    pub(crate) header_timeout: Option<f64>,
    /// Most HTTP connections open at once.
    pub(crate) max_connections: Option<usize>,
    /// Largest tool result, in bytes.
    pub(crate) max_result_bytes: Option<usize>,
    /// Whether source files (and this file) are watched for changes.
    pub(crate) watch: Option<bool>,
    /// How long a call waits for database tables' profiles, in milliseconds.
    pub(crate) profile_wait_ms: Option<u64>,
    /// The tools offered (by name or toolset), when not every tool the sources can use.
    pub(crate) tools: Option<ChosenTools>,
    /// Directories whose AimDB instances tools may name by socket path.
    pub(crate) aimdb_dirs: Vec<PathBuf>,
    /// Directories whose AimDB instances `set_record` may also write to.
    pub(crate) aimdb_write_dirs: Vec<PathBuf>,
    /// The file writes are appended to.
    pub(crate) write_log: Option<PathBuf>,
    /// The sentence-embedding model retrieval ranks by meaning with.
    pub(crate) embedding_model: Option<PathBuf>,
}

impl std::fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: only whether there is one.
        f.debug_struct("ServerSettings")
            .field("http", &self.http)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("token_file", &self.token_file)
            .finish_non_exhaustive()
    }
}

/// A loaded configuration file.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// The file, as given.
    pub(crate) file: PathBuf,
    /// Its sources, in file order.
    pub(crate) sources: Vec<ConfiguredSource>,
    /// Its `[server]` section.
    pub(crate) server: ServerSettings,
}

/// A size: a number of bytes or a text such as `4MiB`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    server: Option<RawServer>,
    #[serde(default)]
    sources: Vec<RawSource>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawServer {
    http: Option<Spanned<String>>,
    token: Option<Spanned<String>>,
    token_file: Option<Spanned<String>>,
    #[serde(default)]
    allow_hosts: Vec<Spanned<String>>,
    #[serde(default)]
    allow_origins: Vec<Spanned<String>>,
    max_body_bytes: Option<Spanned<Size>>,
    request_timeout: Option<Spanned<f64>>,
    max_sessions: Option<Spanned<usize>>,
    header_timeout: Option<Spanned<f64>>,
    max_connections: Option<Spanned<usize>>,
    max_result_bytes: Option<Spanned<Size>>,
    watch: Option<bool>,
    profile_wait_ms: Option<u64>,
    tools: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    aimdb_dirs: Vec<Spanned<String>>,
    #[serde(default)]
    aimdb_write_dirs: Vec<Spanned<String>>,
    write_log: Option<Spanned<String>>,
    embedding_model: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    name: Spanned<String>,
    description: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
    uri: Option<Spanned<String>>,
    format: Option<Spanned<FormatName>>,
    password: Option<Spanned<String>>,
    password_env: Option<Spanned<String>>,
    password_file: Option<Spanned<String>>,
    docs: Option<Spanned<String>>,
    dbt: Option<Spanned<String>>,
    role: Option<Spanned<String>>,
    max_rows: Option<Spanned<u64>>,
    max_bytes: Option<Spanned<Size>>,
    timeout_ms: Option<Spanned<u64>>,
    memory_budget: Option<Spanned<Size>>,
    allow_writes: Option<Spanned<bool>>,
    ssh: Option<Spanned<RawSsh>>,
}

/// A source's SSH tunnel (`[sources.ssh]`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSsh {
    host: Spanned<String>,
    port: Option<Spanned<u16>>,
    user: Option<Spanned<String>>,
    key_file: Option<Spanned<String>>,
    known_hosts: Option<Spanned<String>>,
    jump: Option<Spanned<JumpHosts>>,
}

/// Jump hosts: `"a,b"` as `ssh -J` takes them, or a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum JumpHosts {
    One(String),
    Many(Vec<String>),
}

/// A format forced on a file (`format = "graph"`), as the CLI's schemes force it.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum FormatName {
    Graph,
    Records,
    Documents,
    Sqlite,
}

impl FormatName {
    fn scheme(self) -> &'static str {
        match self {
            FormatName::Graph => "graph:",
            FormatName::Records => "records:",
            FormatName::Documents => "documents:",
            FormatName::Sqlite => "sqlite:",
        }
    }
}

/// Reads what a configuration refers to, so tests can give their own environment.
pub(crate) struct Context<'a> {
    /// An environment variable's value.
    pub(crate) env: &'a dyn Fn(&str) -> Option<String>,
}

impl Context<'_> {
    /// The process's environment.
    pub(crate) fn process() -> Context<'static> {
        Context { env: &|name| std::env::var(name).ok() }
    }
}

impl Config {
    /// Reads and checks the configuration file `file`.
    pub(crate) fn load(file: &Path) -> Result<Self, ConfigError> {
        let text = schemascope_sources::file::read_small_string(file).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: None,
            key: None,
            message: format!("cannot read the configuration: {e}"),
        })?;
        Self::parse(file, &text, &Context::process())
    }

    /// Checks configuration `text`, read from `file` (relative paths in it are relative to
    /// `file`'s directory).
    pub(crate) fn parse(
        file: &Path,
        text: &str,
        context: &Context<'_>,
    ) -> Result<Self, ConfigError> {
        let at = Locator { file, text };
        let raw: RawConfig = toml::from_str(text).map_err(|e| at.toml_error(&e))?;
        let base = base_dir(file);
        let server = match raw.server {
            Some(server) => at.server(server, &base, context)?,
            None => ServerSettings::default(),
        };
        let mut sources: Vec<ConfiguredSource> = Vec::new();
        for (i, raw) in raw.sources.into_iter().enumerate() {
            let span = raw.name.span();
            let source = at.source(i, raw, &base, context)?;
            if sources.iter().any(|s| s.spec.name == source.spec.name) {
                return Err(at.error(
                    span.start,
                    &format!("sources[{i}].name"),
                    &format!("a second source is named `{}`; names must differ", source.spec.name),
                ));
            }
            sources.push(source);
        }
        Ok(Config { file: file.to_path_buf(), sources, server })
    }
}

/// The directory relative paths in `file` are taken from.
fn base_dir(file: &Path) -> PathBuf {
    let absolute = std::fs::canonicalize(file).unwrap_or_else(|_| {
        std::env::current_dir().map(|d| d.join(file)).unwrap_or_else(|_| file.to_path_buf())
    });
    absolute.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `path` as written, interpolated; relative ones joined to `base`.
fn resolved(base: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() { path.to_path_buf() } else { base.join(path) }
}

/// Turns spans into lines for errors about one file.
struct Locator<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text.get(..offset).map_or(0, |before| before.matches('\n').count()) + 1
    }

    fn error(&self, offset: usize, key: &str, message: &str) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: Some(self.line_of(offset)),
            key: Some(key.to_string()),
            message: message.to_string(),
        }
    }

    /// A TOML or shape error: its line, the key written on that line, the parser's message
    /// (which names keys and types, never a value).
    fn toml_error(&self, error: &toml::de::Error) -> ConfigError {
        let line = error.span().map(|span| self.line_of(span.start));
        let key = line.and_then(|n| self.key_at(n));
        ConfigError {
            file: self.file.to_path_buf(),
            line,
            key,
            message: without_values(error.message().trim()),
        }
    }

    /// The full key written on line `n` (1-based): `server.token`, `sources[2].uri`, read from
    /// the table headers above it.
    fn key_at(&self, n: usize) -> Option<String> {
        let mut table = String::new();
        let mut sources = 0usize;
        for line in self.text.lines().take(n.saturating_sub(1)) {
            let line = line.trim();
            if line.starts_with("[[") {
                let name = line.trim_start_matches('[').split(']').next().unwrap_or("").trim();
                if name == "sources" {
                    table = format!("sources[{sources}]");
                    sources += 1;
                } else {
                    table = name.to_string();
                }
            } else if line.starts_with('[') {
                table =
                    line.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_string();
            }
        }
        let (key, _) = self.text.lines().nth(n.checked_sub(1)?)?.split_once('=')?;
        let key = key.trim();
        if key.is_empty() || key.starts_with('[') {
            return None;
        }
        Some(if table.is_empty() { key.to_string() } else { format!("{table}.{key}") })
    }

    /// `value` interpolated from the environment; an error names the key.
    fn text(
        &self,
        value: &Spanned<String>,
        key: &str,
        context: &Context<'_>,
    ) -> Result<String, ConfigError> {
        interpolate(value.get_ref(), context.env)
            .map_err(|e| self.error(value.span().start, key, &e.to_string()))
    }

    /// A size given as bytes or as a text such as `4MiB`, when given.
    fn size(&self, value: &Option<Spanned<Size>>, key: &str) -> Result<Option<usize>, ConfigError> {
        let Some(value) = value else { return Ok(None) };
        // The parser's message quotes the text: a value is never shown.
        let bytes = match value.get_ref() {
            Size::Bytes(n) => Some(*n),
            Size::Text(text) => crate::parse_bytes(text).ok(),
        }
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            self.error(
                value.span().start,
                key,
                "not a size: a number of bytes or a text such as 512MiB",
            )
        })?;
        if bytes == 0 {
            return Err(self.error(value.span().start, key, "must be at least 1 byte"));
        }
        Ok(Some(bytes))
    }

    /// A positive number of seconds, when given.
    fn seconds(&self, value: &Option<Spanned<f64>>, key: &str) -> Result<Option<f64>, ConfigError> {
        let Some(value) = value else { return Ok(None) };
        let seconds = *value.get_ref();
        if seconds.is_finite() && seconds > 0.0 {
            Ok(Some(seconds))
        } else {
            Err(self.error(value.span().start, key, "must be a positive number of seconds"))
        }
    }

    /// A count of at least 1, when given.
    fn count<N: Copy + Default + PartialEq>(
        &self,
        value: &Option<Spanned<N>>,
        key: &str,
    ) -> Result<Option<N>, ConfigError> {
        match value {
            Some(n) if *n.get_ref() == N::default() => {
                Err(self.error(n.span().start, key, "must be at least 1"))
            }
            Some(n) => Ok(Some(*n.get_ref())),
            None => Ok(None),
        }
    }

    fn server(
        &self,
        raw: RawServer,
        base: &Path,
        context: &Context<'_>,
    ) -> Result<ServerSettings, ConfigError> {
        let key = |name: &str| format!("server.{name}");
        let http = match &raw.http {
            Some(value) => {
                let text = self.text(value, &key("http"), context)?;
                Some(text.parse::<SocketAddr>().map_err(|_| {
                    self.error(
                        value.span().start,
                        &key("http"),
                        "not a listen address such as 127.0.0.1:8750",
                    )
                })?)
            }
            None => None,
        };
        let texts = |values: &[Spanned<String>], name: &str| -> Result<Vec<String>, ConfigError> {
            values.iter().map(|v| self.text(v, &key(name), context)).collect()
        };
        let paths = |values: &[Spanned<String>], name: &str| -> Result<Vec<PathBuf>, ConfigError> {
            values
                .iter()
                .map(|v| self.text(v, &key(name), context).map(|p| resolved(base, &p)))
                .collect()
        };
        let token = raw.token.as_ref().map(|t| self.text(t, &key("token"), context)).transpose()?;
        if let (Some(_), Some(file)) = (&token, &raw.token_file) {
            return Err(self.error(
                file.span().start,
                &key("token_file"),
                "give `token` or `token_file`, not both",
            ));
        }
        Ok(ServerSettings {
            http,
            token: token.filter(|t| !t.is_empty()),
            token_file: raw
                .token_file
                .as_ref()
                .map(|f| self.text(f, &key("token_file"), context).map(|p| resolved(base, &p)))
                .transpose()?,
            allow_hosts: texts(&raw.allow_hosts, "allow_hosts")?,
            allow_origins: texts(&raw.allow_origins, "allow_origins")?,
            max_body_bytes: self.size(&raw.max_body_bytes, &key("max_body_bytes"))?,
            request_timeout: self.seconds(&raw.request_timeout, &key("request_timeout"))?,
            max_sessions: self.count(&raw.max_sessions, &key("max_sessions"))?,
            header_timeout: self.seconds(&raw.header_timeout, &key("header_timeout"))?,
            max_connections: self.count(&raw.max_connections, &key("max_connections"))?,
            max_result_bytes: self.size(&raw.max_result_bytes, &key("max_result_bytes"))?,
            watch: raw.watch,
            profile_wait_ms: raw.profile_wait_ms,
            tools: raw.tools.as_ref().map(|t| self.tools(t, &key("tools"), context)).transpose()?,
            aimdb_dirs: paths(&raw.aimdb_dirs, "aimdb_dirs")?,
            aimdb_write_dirs: paths(&raw.aimdb_write_dirs, "aimdb_write_dirs")?,
            write_log: raw
                .write_log
                .as_ref()
                .map(|f| self.text(f, &key("write_log"), context).map(|p| resolved(base, &p)))
                .transpose()?,
            embedding_model: raw
                .embedding_model
                .as_ref()
                .map(|d| self.text(d, &key("embedding_model"), context).map(|p| resolved(base, &p)))
                .transpose()?,
        })
    }

    /// `tools = [...]`: tool and toolset names; an unknown one is an error at its own line,
    /// with a did-you-mean.
    fn tools(
        &self,
        value: &Spanned<Vec<Spanned<String>>>,
        key: &str,
        context: &Context<'_>,
    ) -> Result<ChosenTools, ConfigError> {
        let mut names = Vec::new();
        for name in value.get_ref() {
            let text = self.text(name, key, context)?;
            ChosenTools::parse(&[&text])
                .map_err(|e| self.error(name.span().start, key, &e.to_string()))?;
            names.push(text);
        }
        ChosenTools::parse(&names).map_err(|e| self.error(value.span().start, key, &e.to_string()))
    }

    fn source(
        &self,
        i: usize,
        raw: RawSource,
        base: &Path,
        context: &Context<'_>,
    ) -> Result<ConfiguredSource, ConfigError> {
        let key = |name: &str| format!("sources[{i}].{name}");
        let name = self.text(&raw.name, &key("name"), context)?;
        let target = match (&raw.path, &raw.uri) {
            (Some(path), None) => {
                let text = self.text(path, &key("path"), context)?;
                let path = resolved(base, &text);
                let scheme = raw.format.as_ref().map_or("", |f| f.get_ref().scheme());
                format!("{scheme}{}", path.display())
            }
            (None, Some(uri)) => {
                if let Some(format) = &raw.format {
                    return Err(self.error(
                        format.span().start,
                        &key("format"),
                        "`format` applies to a `path`; a URI's scheme says its kind",
                    ));
                }
                let uri_text = interpolate_uri(uri.get_ref(), context.env)
                    .map_err(|e| self.error(uri.span().start, &key("uri"), &e.to_string()))?;
                if !uri_text.contains(':') {
                    return Err(self.error(uri.span().start, &key("uri"), "not a URI (postgres://…, clickhouse://…, aimdb:…, demo:…); a file is a `path`"));
                }
                uri_text
            }
            (Some(_), Some(uri)) => {
                return Err(self.error(
                    uri.span().start,
                    &key("uri"),
                    "give `path` or `uri`, not both",
                ));
            }
            (None, None) => {
                return Err(self.error(
                    raw.name.span().start,
                    &format!("sources[{i}]"),
                    "needs a `path` (a file) or a `uri` (a database, an AimDB socket, demo data)",
                ));
            }
        };
        let spec: SourceSpec =
            format!("{name}={target}").parse().map_err(|e: schemascope_sources::SourceError| {
                // The spec error quotes the spec, which may hold a password: only the reason.
                let reason = match e {
                    schemascope_sources::SourceError::InvalidSpec { reason, .. } => reason,
                    other => other.to_string(),
                };
                self.error(raw.name.span().start, &format!("sources[{i}]"), &reason)
            })?;
        // Messages show the path or URI as written here, not the `name=` form it was read from.
        let spec = SourceSpec { text: target, ..spec };
        if spec.name != name {
            return Err(self.error(
                raw.name.span().start,
                &key("name"),
                "a source name may only use ASCII letters, digits, `_`, `-` and `.`",
            ));
        }
        let spec = self.with_password(spec, &raw, i, base, context)?;
        let spec = self.with_role(spec, &raw, i, context)?;
        let description = raw
            .description
            .as_ref()
            .map(|d| self.text(d, &key("description"), context))
            .transpose()?;
        let docs = raw
            .docs
            .as_ref()
            .map(|d| self.text(d, &key("docs"), context).map(|p| resolved(base, &p)))
            .transpose()?;
        let dbt = raw
            .dbt
            .as_ref()
            .map(|d| self.text(d, &key("dbt"), context).map(|p| resolved(base, &p)))
            .transpose()?;
        let allow_writes = match &raw.allow_writes {
            Some(value) if *value.get_ref() && !matches!(spec.location, Location::Aimdb(_)) => {
                return Err(self.error(
                    value.span().start,
                    &key("allow_writes"),
                    "`allow_writes` applies to an AimDB instance (aimdb:…); other sources are read-only",
                ));
            }
            Some(value) => *value.get_ref(),
            None => false,
        };
        let limits = schemascope_sources::SourceLimits {
            max_rows: self.count(&raw.max_rows, &key("max_rows"))?,
            max_bytes: self.size(&raw.max_bytes, &key("max_bytes"))?.map(|b| b as u64),
            timeout_ms: self.count(&raw.timeout_ms, &key("timeout_ms"))?,
            memory_budget: self.size(&raw.memory_budget, &key("memory_budget"))?,
            allow_writes,
        };
        let ssh = raw.ssh.as_ref().map(|ssh| self.ssh(ssh, &spec, i, base, context)).transpose()?;
        let spec = SourceSpec { limits, ssh, ..spec.described(description.as_deref()) };
        Ok(ConfiguredSource { spec, docs, dbt })
    }

    /// The SSH tunnel of source `i` (`[sources.ssh]`), checked.
    fn ssh(
        &self,
        raw: &Spanned<RawSsh>,
        spec: &SourceSpec,
        i: usize,
        base: &Path,
        context: &Context<'_>,
    ) -> Result<schemascope_sources::ssh::SshTunnel, ConfigError> {
        let key = |name: &str| format!("sources[{i}].ssh.{name}");
        let at = raw.span().start;
        if !matches!(
            spec.location,
            Location::Postgres(_) | Location::ClickHouse(_) | Location::MySql(_)
        ) {
            return Err(self.error(
                at,
                &format!("sources[{i}].ssh"),
                "an SSH tunnel leads to a database URI (postgres://, mysql://, clickhouse://)",
            ));
        }
        let raw = raw.get_ref();
        let text = |value: &Option<Spanned<String>>, name: &str| {
            value.as_ref().map(|v| self.text(v, &key(name), context)).transpose()
        };
        // `~/…` is left to ssh, which expands it; other relative paths are the config file's.
        let path =
            |value: &Option<Spanned<String>>, name: &str| {
                Ok::<_, ConfigError>(text(value, name)?.map(|p| {
                    if p.starts_with("~/") { PathBuf::from(p) } else { resolved(base, &p) }
                }))
            };
        let jump = match raw.jump.as_ref().map(Spanned::get_ref) {
            None => Vec::new(),
            Some(JumpHosts::One(hosts)) => hosts.split(',').map(|h| h.trim().to_string()).collect(),
            Some(JumpHosts::Many(hosts)) => hosts.clone(),
        };
        let tunnel = schemascope_sources::ssh::SshTunnel {
            host: self.text(&raw.host, &key("host"), context)?,
            port: match &raw.port {
                Some(port) if *port.get_ref() == 0 => {
                    return Err(self.error(
                        port.span().start,
                        &key("port"),
                        "must be a port (1–65535)",
                    ));
                }
                Some(port) => *port.get_ref(),
                None => schemascope_sources::ssh::DEFAULT_SSH_PORT,
            },
            user: text(&raw.user, "user")?,
            key_file: path(&raw.key_file, "key_file")?,
            known_hosts: path(&raw.known_hosts, "known_hosts")?,
            jump,
        };
        tunnel
            .validate()
            .map_err(|reason| self.error(at, &format!("sources[{i}].ssh"), &reason))?;
        Ok(tunnel)
    }

    /// `spec` with the password its entry gives (`password`, `password_env` or
    /// `password_file`) written into its URI.
    fn with_password(
        &self,
        spec: SourceSpec,
        raw: &RawSource,
        i: usize,
        base: &Path,
        context: &Context<'_>,
    ) -> Result<SourceSpec, ConfigError> {
        let key = |name: &str| format!("sources[{i}].{name}");
        let given: Vec<(&Spanned<String>, &str)> = [
            (raw.password.as_ref(), "password"),
            (raw.password_env.as_ref(), "password_env"),
            (raw.password_file.as_ref(), "password_file"),
        ]
        .into_iter()
        .filter_map(|(value, name)| value.map(|v| (v, name)))
        .collect();
        let (value, name) = match given.as_slice() {
            [] => return Ok(spec),
            [one] => *one,
            [_, (second, name), ..] => {
                return Err(self.error(
                    second.span().start,
                    &key(name),
                    "give one of `password`, `password_env` and `password_file`",
                ));
            }
        };
        let at = value.span().start;
        let password = match name {
            "password" => self.text(value, &key(name), context)?,
            "password_env" => {
                let variable = value.get_ref();
                (context.env)(variable).ok_or_else(|| {
                    self.error(
                        at,
                        &key(name),
                        &format!("environment variable `{variable}` is not set"),
                    )
                })?
            }
            _ => {
                let path = resolved(base, &self.text(value, &key(name), context)?);
                let text = schemascope_sources::file::read_small_string(&path).map_err(|e| {
                    self.error(at, &key(name), &format!("cannot read the password file: {e}"))
                })?;
                text.trim_end_matches(['\n', '\r']).to_string()
            }
        };
        let uri = match &spec.location {
            Location::Postgres(uri) | Location::ClickHouse(uri) | Location::MySql(uri) => {
                uri.clone()
            }
            _ => {
                return Err(self.error(
                    at,
                    &key(name),
                    "only a database URI (postgres://, clickhouse://, mysql://) takes a password",
                ));
            }
        };
        let uri = uri_with_password(&uri, &password)
            .map_err(|reason| self.error(at, &key(name), reason))?;
        with_uri(spec, uri)
            .ok_or_else(|| self.error(at, &key(name), "the URI with this password is not valid"))
    }
}

/// `spec` reading from `uri` instead (a password or role written into it), all else kept.
fn with_uri(spec: SourceSpec, uri: String) -> Option<SourceSpec> {
    let parsed: SourceSpec = format!("{}={uri}", spec.name).parse().ok()?;
    Some(SourceSpec { location: parsed.location, text: uri, ..spec })
}

impl Locator<'_> {
    /// `spec` whose statements run as the role its entry names (`role`): PostgreSQL sets it
    /// at connection start (`options=-c role=NAME`), so every statement — profiles, the catalog,
    /// queries — has that role's privileges, whatever else the login user may do.
    fn with_role(
        &self,
        spec: SourceSpec,
        raw: &RawSource,
        i: usize,
        context: &Context<'_>,
    ) -> Result<SourceSpec, ConfigError> {
        let Some(value) = &raw.role else { return Ok(spec) };
        let key = format!("sources[{i}].role");
        let role = self.text(value, &key, context)?;
        let valid = !role.is_empty()
            && role.len() <= 63
            && role.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(self.error(
                value.span().start,
                &key,
                "a role name is letters, digits, `_` and `-`, at most 63 characters",
            ));
        }
        let Location::Postgres(uri) = &spec.location else {
            return Err(self.error(value.span().start, &key, "`role` applies to a PostgreSQL source (its login user takes the role at connection start)"));
        };
        if uri.contains("options=") {
            return Err(self.error(value.span().start, &key, "the URI already sets `options`; give the role there (-c role=NAME) or here, not both"));
        }
        let separator = if uri.contains('?') { '&' } else { '?' };
        let uri = format!("{uri}{separator}options=-c%20role%3D{role}");
        with_uri(spec, uri).ok_or_else(|| {
            self.error(value.span().start, &key, "the URI with this role is not valid")
        })
    }
}

/// A TOML parser's message without the values it quotes (a value may be a secret): a key it
/// names is kept (`unknown field `pasword``), a quoted value becomes `…`.
fn without_values(message: &str) -> String {
    let names_keys = ["unknown field", "missing field", "duplicate key"]
        .iter()
        .any(|start| message.starts_with(start));
    if names_keys {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '"' => {
                quote = Some(c);
                out.push('…');
            }
            None => out.push(c),
        }
    }
    out
}

/// `uri` with `password` (percent-encoded) added to its user info.
fn uri_with_password(uri: &str, password: &str) -> Result<String, &'static str> {
    let (scheme, rest) = uri.split_once("://").ok_or("the URI has no `//` authority")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (user, host) = authority
        .rsplit_once('@')
        .ok_or("the URI names no user: write it as scheme://USER@host/…")?;
    if user.contains(':') {
        return Err("the URI already holds a password; remove it from the URI");
    }
    let encoded = percent_encoded(password);
    Ok(format!("{scheme}://{user}:{encoded}@{host}{tail}"))
}

#[cfg(test)]
mod tests;
