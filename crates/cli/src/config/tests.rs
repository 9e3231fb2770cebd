use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "PG_PASSWORD" => Some("s3cr:t/p@ss w%rd".into()),
        "PG_HOST" => Some("db.internal".into()),
        "TOKEN" => Some("0123456789abcdef0123".into()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("/etc/app/schemascope.toml"), text, &Context { env: &env })
}

fn error(text: &str) -> ConfigError {
    match parse(text) {
        Ok(config) => panic!("accepted: {config:?}"),
        Err(e) => e,
    }
}

#[test]
fn sources_resolve_paths_passwords_and_descriptions() {
    let config = parse(
        r#"
[server]
http = "127.0.0.1:0"
token = "${TOKEN}"
max_result_bytes = "1MiB"
allow_origins = ["http://localhost:3000"]

[[sources]]
name = "shop"
description = "Orders and customers of the web shop"
uri = "postgres://app@${PG_HOST}:5432/shop?sslmode=disable"
password_env = "PG_PASSWORD"

[[sources]]
name = "music"
path = "data/chinook.sqlite"
docs = "docs/chinook"
dbt = "../dbt/music"
max_rows = 50
max_bytes = "64KiB"
timeout_ms = 2000

[[sources]]
name = "g"
path = "/srv/graph.bin"
format = "graph"
"#,
    )
    .expect("valid");
    assert_eq!(config.server.http, Some("127.0.0.1:0".parse().expect("address")));
    assert_eq!(config.server.token.as_deref(), Some("0123456789abcdef0123"));
    assert_eq!(config.server.max_result_bytes, Some(1 << 20));
    assert_eq!(config.server.allow_origins, vec!["http://localhost:3000".to_string()]);
    let [shop, music, g] = config.sources.as_slice() else { panic!("three sources") };
    assert_eq!(shop.spec.name, "shop");
    assert_eq!(shop.spec.description.as_deref(), Some("Orders and customers of the web shop"));
    // The password is percent-encoded into the URI, and never shown.
    assert_eq!(
        shop.spec.location,
        Location::Postgres(
            "postgres://app:s3cr%3At%2Fp%40ss%20w%25rd@db.internal:5432/shop?sslmode=disable"
                .into()
        )
    );
    assert!(!shop.spec.display_text().contains("s3cr"), "{}", shop.spec.display_text());
    assert!(!format!("{config:?}").contains("0123456789abcdef"), "the token is not shown by Debug");
    // Relative paths are relative to the configuration file, not to the working directory.
    assert_eq!(music.spec.location, Location::Sqlite("/etc/app/data/chinook.sqlite".into()));
    assert_eq!(music.docs.as_deref(), Some(Path::new("/etc/app/docs/chinook")));
    assert_eq!(music.dbt.as_deref(), Some(Path::new("/etc/app/../dbt/music")));
    assert_eq!(music.spec.description, None);
    assert_eq!(
        music.spec.limits,
        schemascope_sources::SourceLimits {
            max_rows: Some(50),
            max_bytes: Some(64 << 10),
            timeout_ms: Some(2000),
            memory_budget: None,
            allow_writes: false
        }
    );
    assert_eq!(shop.spec.limits, schemascope_sources::SourceLimits::default());
    assert_eq!(
        g.spec.location,
        Location::File {
            path: "/srv/graph.bin".into(),
            format: Some(schemascope_sources::Format::Graph)
        }
    );
}

#[test]
fn the_percent_encoded_password_is_what_the_postgres_client_reads() {
    let config = parse(
        "[[sources]]\nname = \"pg\"\nuri = \"postgres://app@h/db\"\npassword = \"${PG_PASSWORD}\"\n",
    )
    .expect("valid");
    let Location::Postgres(uri) = &config.sources[0].spec.location else { panic!("postgres") };
    let parsed: postgres_config::Config = uri.parse().expect("a URI the client parses");
    assert_eq!(parsed.get_password(), Some("s3cr:t/p@ss w%rd".as_bytes()));
    assert_eq!(parsed.get_user(), Some("app"));
}

/// The PostgreSQL client's own URI parser, as the source uses it.
mod postgres_config {
    pub(super) use postgres::Config;
}

#[test]
fn errors_name_the_line_and_key_and_never_a_value() {
    let e = error("[[sources]]\nname = \"a\"\npath = \"x.json\"\npasword = \"hunter2-secret\"\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("sources[0].pasword")), "{e}");
    assert!(e.message.contains("unknown field"), "{e}");
    assert!(!e.to_string().contains("hunter2"), "{e}");

    let e = error(
        "[[sources]]\nname = \"a\"\nuri = \"postgres://u@h/db\"\npassword = \"${NOT_SET}\"\n",
    );
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("sources[0].password")), "{e}");
    assert!(e.message.contains("NOT_SET"), "{e}");

    let e = error("[[sources]]\nname = \"a\"\n\n[[sources]]\nname = \"b\"\npath = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("sources[0]"), "{e}");
    assert!(e.message.contains("`path`"), "{e}");

    let e =
        error("[[sources]]\nname = \"a\"\npath = \"x\"\n[[sources]]\nname = \"a\"\npath = \"y\"\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(5), Some("sources[1].name")), "{e}");

    let e = error("[[sources]]\nname = \"a\"\npath = \"x.sqlite\"\npassword = \"pw\"\n");
    assert!(e.message.contains("only a database URI"), "{e}");
    assert!(!e.to_string().contains("pw\""), "{e}");

    let e = error("[[sources]]\nname = \"a\"\nuri = \"postgres://h/db\"\npassword = \"pw\"\n");
    assert!(e.message.contains("names no user"), "{e}");

    let e = error(
        "[[sources]]\nname = \"a\"\nuri = \"postgres://u:pw@h/db\"\npassword_env = \"PG_PASSWORD\"\n",
    );
    assert!(e.message.contains("already holds a password"), "{e}");

    let e = error("[[sources]]\nname = \"a b\"\npath = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("sources[0]"), "{e}");

    let e = error("[server]\nhttp = \"localhost\"\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("server.http")), "{e}");

    let e = error("[[sources]]\nname = \"a\"\npath = \"x\"\nmax_rows = 0\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("sources[0].max_rows")), "{e}");

    let e = error("[server]\nmax_sessions = 0\n");
    assert_eq!(e.key.as_deref(), Some("server.max_sessions"), "{e}");

    let e = error("[[sources]]\nname = \"a\"\npath = 5\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(3), Some("sources[0].path")), "{e}");

    let e = error("[[sources]]\nname = \"a\"\npath = \"x\"\nformat = \"csv\"\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("sources[0].format")), "{e}");

    // A value the file gives is never repeated, whatever its type.
    for (text, key, value) in [
        (
            "[[sources]]\nname = \"a\"\nuri = \"postgres://u@h/db\"\npassword = 987654321987\n",
            "sources[0].password",
            "987654321987",
        ),
        ("[server]\ntoken = 9876543219876543\n", "server.token", "9876543219876543"),
        (
            "[[sources]]\nname = \"a\"\npath = \"x\"\nmax_rows = \"topsecretvalue123\"\n",
            "sources[0].max_rows",
            "topsecretvalue123",
        ),
        (
            "[[sources]]\nname = \"a\"\npath = \"x\"\nformat = \"hunter2\"\n",
            "sources[0].format",
            "hunter2",
        ),
        (
            "[[sources]]\nname = \"a\"\npath = \"x\"\nmax_bytes = \"hunter2\"\n",
            "sources[0].max_bytes",
            "hunter2",
        ),
        ("[server]\nallow_hosts = \"hunter2\"\n", "server.allow_hosts", "hunter2"),
        (
            "[[sources]]\nname = \"a\"\npath = \"x\"\n[[sources]]\nname = \"b\"\npath = 5\n",
            "sources[1].path",
            "5\n",
        ),
    ] {
        let e = error(text);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(!e.to_string().contains(value), "{e}");
    }

    let e = error("[[sources]\n");
    assert_eq!(e.line, Some(1), "{e}");
}

#[test]
fn tools_are_chosen_by_name_and_toolset() {
    let config = parse(
        r#"
[server]
tools = ["discovery", "execute_query"]
"#,
    )
    .expect("valid");
    let tools = config.server.tools.expect("chosen");
    assert!(tools.contains("find_items") && tools.contains("execute_query"));
    assert!(!tools.contains("validate_query"));
    assert_eq!(parse("[server]\n").expect("valid").server.tools, None);
}

#[test]
fn an_unknown_tool_is_named_at_its_line_with_a_suggestion() {
    let e = error(
        r#"
[server]
tools = [
  "discovery",
  "graph-veiw",
]
"#,
    );
    assert_eq!(e.line, Some(5), "{e}");
    assert_eq!(e.key.as_deref(), Some("server.tools"), "{e}");
    assert!(e.message.contains("Did you mean `graph-view`?"), "{e}");
    assert!(e.to_string().starts_with("/etc/app/schemascope.toml:5: `server.tools`:"), "{e}");
    let e = error("[server]\ntools = []\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(2), Some("server.tools")), "{e}");
    assert!(e.message.contains("names none"), "{e}");
    let e = error("[server]\ntools = \"discovery\"\n");
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn an_empty_file_is_a_configuration_without_sources() {
    let config = parse("").expect("valid");
    assert!(config.sources.is_empty());
    assert_eq!(config.server, ServerSettings::default());
}

#[test]
fn a_role_is_taken_at_connection_start_and_only_by_postgres() {
    let config = parse(
        "[[sources]]\nname = \"pg\"\nuri = \"postgres://app@h/db?sslmode=disable\"\nrole = \"reporting_ro\"\n",
    )
    .expect("valid");
    let Location::Postgres(uri) = &config.sources[0].spec.location else { panic!("postgres") };
    let parsed: postgres_config::Config = uri.parse().expect("a URI the client parses");
    assert_eq!(parsed.get_options(), Some("-c role=reporting_ro"));
    let e = error("[[sources]]\nname = \"a\"\npath = \"x.sqlite\"\nrole = \"r\"\n");
    assert!(e.message.contains("PostgreSQL"), "{e}");
    let e = error("[[sources]]\nname = \"a\"\nuri = \"postgres://u@h/db\"\nrole = \"r; DROP\"\n");
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("sources[0].role")), "{e}");
}

#[test]
fn a_password_variable_inside_a_uri_stays_the_password() {
    let config = parse(
        "[[sources]]\nname = \"p\"\nuri = \"postgres://app:${PG_PASSWORD}@h:5432/db\"\n[[sources]]\nname = \"q\"\nuri = \"postgres://app@h/db?password=${PG_PASSWORD}\"\n",
    )
    .expect("valid");
    for source in &config.sources {
        let Location::Postgres(uri) = &source.spec.location else { panic!("postgres") };
        let parsed: postgres_config::Config = uri.parse().expect("a URI the client parses");
        assert_eq!(parsed.get_password(), Some("s3cr:t/p@ss w%rd".as_bytes()));
        assert_eq!(parsed.get_hosts().len(), 1);
        let shown = source.spec.display_text();
        assert!(
            !shown.contains("s3cr") && !shown.contains("p@ss") && !shown.contains("rd@"),
            "{shown}"
        );
    }
}

#[test]
fn writes_are_per_aimdb_source_and_directories_resolve() {
    let config = parse(
        r#"
[server]
aimdb_dirs = ["run/aimdb"]
aimdb_write_dirs = ["/run/aimdb/lab"]
write_log = "logs/writes.ndjson"

[[sources]]
name = "plant"
uri = "aimdb:unix:///run/plant.sock"
allow_writes = true

[[sources]]
name = "lab"
uri = "aimdb:/run/lab.sock"
"#,
    )
    .expect("valid");
    assert_eq!(config.server.aimdb_dirs, vec![PathBuf::from("/etc/app/run/aimdb")]);
    assert_eq!(config.server.aimdb_write_dirs, vec![PathBuf::from("/run/aimdb/lab")]);
    assert_eq!(config.server.write_log, Some(PathBuf::from("/etc/app/logs/writes.ndjson")));
    let [plant, lab] = config.sources.as_slice() else { panic!("two sources") };
    assert!(plant.spec.limits.allow_writes);
    assert!(!lab.spec.limits.allow_writes);

    let refused = error(
        r#"
[[sources]]
name = "music"
path = "music.sqlite"
allow_writes = true
"#,
    );
    assert_eq!(refused.key.as_deref(), Some("sources[0].allow_writes"));
    assert_eq!(refused.line, Some(5));
    assert!(refused.message.contains("applies to an AimDB instance"), "{}", refused.message);
}
