//! Source specifications: `[NAME=]PATH_OR_URI`, as the CLI and the server take them.
//!
//! A plain path is read by its extension and content (`.ndjson`/`.jsonl`: NDJSON records or
//! documents; `.json`: a graph, a record object or a document array). A scheme forces the format:
//! `graph:`, `records:`, `documents:`; `file://` is a plain path; `demo:infrastructure` and
//! `demo:sensors` are the embedded demo data. Databases: `sqlite:PATH` (or a path ending in
//! `.sqlite`, `.sqlite3` or `.db`), `postgres://…` / `postgresql://…` connection URIs and
//! `clickhouse://[user[:password]@]host:port/database` (ClickHouse's HTTP interface). A live
//! AimDB instance: `aimdb:unix:///PATH.sock`, `aimdb:uds:///…`, `aimdb:PATH`, `unix://…`,
//! `uds://…`, or a bare path ending in `.sock` (or that is a socket when loaded).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::SourceError;

/// The shape of a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A graph: graphty's `{nodes, edges}` or networkx node-link `{nodes, links}`.
    Graph,
    /// Named records: a JSON object of records, or NDJSON `{key, value, metadata?}` lines.
    Records,
    /// Documents: a JSON array or NDJSON, one collection.
    Documents,
    /// A CSV or TSV file: one collection, its rows.
    Csv,
    /// A Parquet file: one collection, its rows.
    Parquet,
    /// A directory or a glob of data files: one collection (and table) per file.
    Folder,
    /// A SQLite database file: one collection per table and view.
    Sqlite,
    /// A PostgreSQL database: one collection per table and view.
    Postgres,
    /// A ClickHouse database: one collection per table and view.
    ClickHouse,
    /// A MySQL or MariaDB database: one collection per table and view.
    MySql,
    /// A live AimDB instance: one record set of its records' recent values.
    Aimdb,
}

impl Format {
    /// The SQL dialect of the engine that answers a source of this format, for the formats
    /// that are databases.
    pub fn dialect(self) -> Option<crate::sql::Dialect> {
        use crate::sql::Dialect;
        match self {
            Self::Sqlite => Some(Dialect::Sqlite),
            Self::Postgres => Some(Dialect::Postgres),
            Self::ClickHouse => Some(Dialect::ClickHouse),
            // MySQL or MariaDB: the server says which (the source's database has the dialect).
            Self::MySql => Some(Dialect::MySql),
            // Files and collections are answered by the embedded engine when they are held in
            // memory (a source's `database` says); live instances by none.
            _ => None,
        }
    }
}

/// An embedded demo data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoSet {
    /// The infrastructure graph.
    Infrastructure,
    /// The sensor/config record set.
    Sensors,
}

/// Where a source's data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file, with its format when forced by a scheme.
    File {
        /// The file.
        path: PathBuf,
        /// Forced format, or `None` to detect it.
        format: Option<Format>,
    },
    /// Embedded demo data.
    Demo(DemoSet),
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URI (it may hold a password: never shown).
    Postgres(String),
    /// A ClickHouse URI, `clickhouse://[user[:password]@]host:port/database` (its HTTP
    /// interface; it may hold a password: never shown).
    ClickHouse(String),
    /// A MySQL or MariaDB URI, `mysql://user:password@host:port/database` (or `mariadb://`;
    /// it may hold a password: never shown).
    MySql(String),
    /// The Unix socket of a live AimDB instance (AimX protocol).
    Aimdb(PathBuf),
}

/// What the operator allows one source (a configuration file's per-source keys), below the
/// server-wide ceilings; `None` leaves the server's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceLimits {
    /// Most rows a query returns.
    pub max_rows: Option<u64>,
    /// Most bytes of rows a query returns.
    pub max_bytes: Option<u64>,
    /// Longest a statement runs, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// The memory budget of a streamed profile of this source's file, in bytes.
    pub memory_budget: Option<usize>,
    /// Whether `set_record` may write to this source (an AimDB instance); off unless the
    /// operator turns it on.
    pub allow_writes: bool,
}

/// A named source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// The name tools address it by.
    pub name: String,
    /// Where its data is.
    pub location: Location,
    /// The specification as given, for messages.
    pub text: String,
    /// What the operator says the source holds (a config file's `description`), shown to the
    /// model beside the source.
    pub description: Option<String>,
    /// What this source allows, below the server's ceilings.
    pub limits: SourceLimits,
    /// The SSH tunnel a database source is reached through (a configuration file's
    /// `[sources.ssh]`).
    pub ssh: Option<crate::ssh::SshTunnel>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn default_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("source");
    let cleaned: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' })
        .collect();
    if cleaned.is_empty() { "source".into() } else { cleaned }
}

fn is_sqlite_path(text: &str) -> bool {
    let extension =
        Path::new(text).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    matches!(extension.as_deref(), Some("sqlite" | "sqlite3" | "db"))
}

impl SourceSpec {
    /// The same source, described as `description` says (blank: no description).
    pub fn described(mut self, description: Option<&str>) -> Self {
        self.description = description.map(str::trim).filter(|d| !d.is_empty()).map(String::from);
        self
    }

    /// The specification as it may be shown: a PostgreSQL password is replaced by `***`.
    pub fn display_text(&self) -> String {
        match &self.location {
            Location::Postgres(uri) | Location::ClickHouse(uri) | Location::MySql(uri) => {
                redact_uri(uri)
            }
            _ => self.text.clone(),
        }
    }
}

/// Why the user info of URI `uri` cannot be read as written, if it cannot: a `/`, `@`, `?` or
/// `#` in a password must be percent-encoded, or the URI parser cuts the password there and
/// the rest of it shows in every message as part of the host.
fn unencoded_user_info(uri: &str) -> Option<&'static str> {
    let rest = uri.split_once("://")?.1;
    let before_query = rest.split(['?', '#']).next().unwrap_or(rest);
    let (user_info, _) = before_query.rsplit_once('@')?;
    let bad_escape = user_info.match_indices('%').any(|(at, _)| {
        let hex = user_info.get(at + 1..at + 3).unwrap_or("");
        hex.len() != 2 || !hex.chars().all(|c| c.is_ascii_hexdigit())
    });
    (user_info.contains(['/', '@']) || bad_escape).then_some(
        "the user or password in the URI holds a character that must be percent-encoded (`/` as %2F, `@` as %40, `%` as %25, `?` as %3F, `#` as %23), or give the password with password_env or password_file in a configuration file",
    )
}

/// The schemes of database URIs, whose text may hold a password.
const DATABASE_SCHEMES: &[&str] = &["postgres", "postgresql", "mysql", "mariadb", "clickhouse"];

/// `uri` with the password of its user info and any `password` parameter replaced by `***`.
pub fn redact_uri(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else { return uri.to_string() };
    // The user info ends at the last `@` (an unescaped `@` in a password is common).
    let (userinfo, after) = match rest.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, rest),
    };
    let (location, query) = match after.split_once('?') {
        Some((location, query)) => (location, Some(query)),
        None => (after, None),
    };
    let mut out = format!("{scheme}://");
    match userinfo {
        Some(info) if info.contains(':') => {
            out.push_str(&format!("{}:***@", info.split(':').next().unwrap_or("")))
        }
        Some(info) => out.push_str(&format!("{info}@")),
        None => {}
    }
    out.push_str(location);
    if let Some(query) = query {
        let parameters: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                // `password`, `sslpassword` and the like.
                Some((key, _)) if key.to_ascii_lowercase().contains("password") => {
                    format!("{key}=***")
                }
                _ => p.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&parameters.join("&"));
    }
    out
}

impl FromStr for SourceSpec {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // The spec as shown: a password in it is never repeated.
        let invalid = |reason: &str| SourceError::InvalidSpec {
            spec: redact_uri(text),
            reason: reason.to_string(),
        };
        let (name, rest) = match text.split_once('=') {
            Some((name, rest)) if valid_name(name) => (Some(name.to_string()), rest),
            Some((name, _)) if !name.contains(['/', ':', '\\']) => {
                return Err(invalid(
                    "a source name may only use ASCII letters, digits, `_`, `-` and `.`",
                ));
            }
            _ => (None, text),
        };
        if rest.is_empty() {
            return Err(invalid("no path or URI given"));
        }
        let (location, default) = if let Some(set) = rest.strip_prefix("demo:") {
            let demo = match set {
                "infrastructure" | "graph" => DemoSet::Infrastructure,
                "sensors" | "records" => DemoSet::Sensors,
                other => {
                    return Err(invalid(&format!(
                        "unknown demo data set `{other}`; there are `demo:infrastructure` and `demo:sensors`"
                    )));
                }
            };
            let name = match demo {
                DemoSet::Infrastructure => "infrastructure",
                DemoSet::Sensors => "sensors",
            };
            (Location::Demo(demo), name.to_string())
        } else if let Some(socket) = crate::aimdb::endpoint::socket_path(rest) {
            let name = default_name(&socket);
            (Location::Aimdb(socket), name)
        } else if rest.starts_with("aimdb:") {
            return Err(invalid(
                "an AimDB source is aimdb:unix:///PATH, aimdb:uds:///PATH or aimdb:PATH (the instance's socket)",
            ));
        } else if let Some(scheme) = DATABASE_SCHEMES.iter().find(|s| {
            rest.strip_prefix(**s)
                .and_then(|r| r.strip_prefix(':'))
                .is_some_and(|r| !r.starts_with("//"))
        }) {
            // `mysql:/user:password@…`: a typo, never a file of that name; its password is
            // not repeated.
            return Err(SourceError::InvalidSpec {
                spec: format!("{scheme}:…"),
                reason: format!(
                    "a {scheme} URI starts with `{scheme}://` (user:password@host:port/database)"
                ),
            });
        } else if !rest.contains("://")
            && crate::aimdb::endpoint::looks_like_socket(Path::new(rest))
        {
            let socket = PathBuf::from(rest);
            let name = default_name(&socket);
            (Location::Aimdb(socket), name)
        } else if rest.starts_with("postgres://") || rest.starts_with("postgresql://") {
            if let Some(reason) = unencoded_user_info(rest) {
                return Err(invalid(reason));
            }
            let database = rest
                .split('?')
                .next()
                .unwrap_or(rest)
                .rsplit('/')
                .next()
                .filter(|d| !d.is_empty() && !d.contains('@'));
            let name =
                database.map_or_else(|| "postgres".to_string(), |d| default_name(Path::new(d)));
            (Location::Postgres(rest.to_string()), name)
        } else if rest.starts_with("clickhouse://") {
            let database = rest
                .split(['?', '#'])
                .next()
                .unwrap_or(rest)
                .rsplit('/')
                .next()
                .filter(|d| !d.is_empty() && !d.contains('@') && !rest.ends_with("//"));
            let name =
                database.map_or_else(|| "clickhouse".to_string(), |d| default_name(Path::new(d)));
            (Location::ClickHouse(rest.to_string()), name)
        } else if rest.starts_with("mysql://") || rest.starts_with("mariadb://") {
            if let Some(reason) = unencoded_user_info(rest) {
                return Err(invalid(reason));
            }
            let database = rest
                .split(['?', '#'])
                .next()
                .unwrap_or(rest)
                .rsplit('/')
                .next()
                .filter(|d| !d.is_empty() && !d.contains('@') && !rest.ends_with("//"));
            let name = database.map_or_else(|| "mysql".to_string(), |d| default_name(Path::new(d)));
            (Location::MySql(rest.to_string()), name)
        } else if let Some(p) = rest.strip_prefix("sqlite:") {
            let path = PathBuf::from(p.strip_prefix("//").unwrap_or(p));
            let name = default_name(&path);
            (Location::Sqlite(path), name)
        } else if is_sqlite_path(rest) {
            let path = PathBuf::from(rest);
            let name = default_name(&path);
            (Location::Sqlite(path), name)
        } else {
            let (format, path) = if let Some(p) = rest.strip_prefix("graph:") {
                (Some(Format::Graph), p)
            } else if let Some(p) = rest.strip_prefix("records:") {
                (Some(Format::Records), p)
            } else if let Some(p) = rest.strip_prefix("documents:") {
                (Some(Format::Documents), p)
            } else if let Some(p) = rest.strip_prefix("csv:") {
                (Some(Format::Csv), p)
            } else if let Some(p) = rest.strip_prefix("parquet:") {
                (Some(Format::Parquet), p)
            } else if let Some(p) = rest.strip_prefix("file://") {
                (None, p)
            } else if let Some((scheme, _)) = rest.split_once("://") {
                return Err(invalid(&format!(
                    "unsupported scheme `{scheme}://`; use a file path, file://, graph:, records:, documents:, csv:, parquet:, sqlite:, postgres://, clickhouse://, mysql://, mariadb://, aimdb:unix:// or demo:"
                )));
            } else {
                (None, rest)
            };
            let path = PathBuf::from(path);
            let name = default_name(&path);
            (Location::File { path, format }, name)
        };
        Ok(Self {
            name: name.unwrap_or(default),
            location,
            text: text.to_string(),
            description: None,
            limits: SourceLimits::default(),
            ssh: None,
        })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn passwords_are_redacted_wherever_a_uri_carries_them() {
        for (uri, shown) in [
            ("postgres://u:secret@h:5432/db", "postgres://u:***@h:5432/db"),
            ("postgres://u:p@ss/w@rd@h/db", "postgres://u:***@h/db"),
            (
                "postgres://u@h/db?password=secret&sslmode=disable",
                "postgres://u@h/db?password=***&sslmode=disable",
            ),
            ("postgres://h/db?PASSWORD=x", "postgres://h/db?PASSWORD=***"),
            ("postgres://h/db", "postgres://h/db"),
        ] {
            assert_eq!(redact_uri(uri), shown, "{uri}");
        }
    }

    use super::*;

    #[test]
    fn database_uris_are_never_taken_for_sockets_or_files_and_their_typos_show_no_password() {
        // A `socket` parameter ending in .sock once sent the URI to AimDB, password and all.
        let spec: SourceSpec =
            "mysql://u:LEAKME14@127.0.0.1:3306/shop?socket=/tmp/x.sock".parse().expect("spec");
        assert!(matches!(spec.location, Location::MySql(_)), "{:?}", spec.location);
        assert!(!spec.display_text().contains("LEAKME14"));
        for typo in ["mysql:/u:LEAKME9@h/db", "postgres:u:LEAKME9@h/db", "mariadb:/u:LEAKME9@h"] {
            let e = typo.parse::<SourceSpec>().expect_err("a typo");
            assert!(!e.to_string().contains("LEAKME9"), "{e}");
            assert!(e.to_string().contains("://"), "{e}");
        }
    }

    #[test]
    fn a_postgres_password_that_would_be_cut_is_refused_without_being_shown() {
        for uri in [
            "postgres://u:Zq7:s3cr/t@pw%x@127.0.0.1:54329/chinook",
            "postgres://u:p@ss@h/db",
            "postgres://u:50%off@h/db",
        ] {
            let error = uri.parse::<SourceSpec>().expect_err(uri).to_string();
            assert!(error.contains("percent-encoded"), "{error}");
            assert!(
                !error.contains("s3cr")
                    && !error.contains("pw%x")
                    && !error.contains("ss@")
                    && !error.contains("off"),
                "{error}"
            );
        }
        let fine: SourceSpec =
            "postgres://u:Zq7%3As3cr%2Ft%40pw%25x@h/db?sslpassword=x".parse().expect("encoded");
        assert!(
            !fine.display_text().contains("Zq7")
                && fine.display_text().ends_with("sslpassword=***")
        );
        let ch: SourceSpec = "clickhouse://u@h:8123/z?password=S3kr1tCH".parse().expect("spec");
        assert_eq!(ch.name, "z");
    }

    #[test]
    fn parses_names_schemes_and_defaults() {
        let spec: SourceSpec = "infra=graph:data/g.json".parse().expect("valid");
        assert_eq!(spec.name, "infra");
        assert_eq!(
            spec.location,
            Location::File { path: "data/g.json".into(), format: Some(Format::Graph) }
        );
        let spec: SourceSpec = "/tmp/My Records.ndjson".parse().expect("valid");
        assert_eq!(spec.name, "My_Records");
        let spec: SourceSpec = "demo:sensors".parse().expect("valid");
        assert_eq!(
            (spec.name.as_str(), spec.location),
            ("sensors", Location::Demo(DemoSet::Sensors))
        );
    }

    #[test]
    fn recognises_databases_by_scheme_and_extension() {
        let spec: SourceSpec = "data/Chinook.sqlite".parse().expect("valid");
        assert_eq!(
            (spec.name.as_str(), &spec.location),
            ("Chinook", &Location::Sqlite("data/Chinook.sqlite".into()))
        );
        let spec: SourceSpec = "shop=sqlite:/tmp/x.bin".parse().expect("valid");
        assert_eq!(
            (spec.name.as_str(), &spec.location),
            ("shop", &Location::Sqlite("/tmp/x.bin".into()))
        );
        let uri = "postgres://me:secret@127.0.0.1:5432/chinook?sslmode=disable";
        let spec: SourceSpec = uri.parse().expect("valid");
        assert_eq!(spec.name, "chinook");
        assert_eq!(spec.location, Location::Postgres(uri.into()));
        assert_eq!(spec.display_text(), "postgres://me:***@127.0.0.1:5432/chinook?sslmode=disable");
        let spec: SourceSpec = "pg=postgresql://localhost/".parse().expect("valid");
        assert_eq!(spec.name, "pg");
        let uri = "clickhouse://me:p@ss@127.0.0.1:8123/chinook";
        let spec: SourceSpec = uri.parse().expect("valid");
        assert_eq!(
            (spec.name.as_str(), &spec.location),
            ("chinook", &Location::ClickHouse(uri.into()))
        );
        assert_eq!(spec.display_text(), "clickhouse://me:***@127.0.0.1:8123/chinook");
        let spec: SourceSpec = "clickhouse://127.0.0.1:8123/".parse().expect("valid");
        assert_eq!(spec.name, "clickhouse", "no database: the connection says what is missing");
    }

    #[test]
    fn recognises_aimdb_sockets() {
        for text in [
            "aimdb:unix:///tmp/aimdb.sock",
            "aimdb:uds:///tmp/aimdb.sock",
            "unix:///tmp/aimdb.sock",
            "uds:///tmp/aimdb.sock",
            "aimdb:/tmp/aimdb.sock",
            "/tmp/aimdb.sock",
        ] {
            let spec: SourceSpec = text.parse().expect("valid");
            assert_eq!(
                (spec.name.as_str(), &spec.location),
                ("aimdb", &Location::Aimdb("/tmp/aimdb.sock".into())),
                "{text}"
            );
        }
        let spec: SourceSpec = "plant=aimdb:unix:///run/plant/db.sock".parse().expect("valid");
        assert_eq!(
            (spec.name.as_str(), spec.location),
            ("plant", Location::Aimdb("/run/plant/db.sock".into()))
        );
        let err = "aimdb:".parse::<SourceSpec>().expect_err("no socket");
        assert!(err.to_string().contains("aimdb:unix:///PATH"), "{err}");
    }

    #[test]
    fn rejects_unknown_schemes_and_demo_sets_with_alternatives() {
        let err = "s3://bucket/x.json".parse::<SourceSpec>().expect_err("unsupported");
        assert!(err.to_string().contains("graph:"), "{err}");
        let err = "demo:nope".parse::<SourceSpec>().expect_err("unknown");
        assert!(err.to_string().contains("demo:infrastructure"), "{err}");
    }
}
