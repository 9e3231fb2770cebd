//! The configuration file as a new user meets it: `init` writes one, `check` says what loads,
//! `serve --config` serves it from any working directory with the password from the
//! environment (driven by the official Python MCP SDK: `tests/e2e/config_client.py`), edits apply
//! while serving, and the password shows nowhere.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chinook() -> PathBuf {
    repo_root().join("testdata/chinook/Chinook_Sqlite.sqlite")
}

/// The PostgreSQL reader whose password is unlike any other text (`scripts/postgres uri
/// --secret`, set by scripts/test), as the URI and the decoded password.
fn secret_postgres() -> Option<(String, String)> {
    let uri = std::env::var("SCHEMASCOPE_TEST_POSTGRES_SECRET").ok()?;
    let encoded = uri.split_once("://")?.1.split_once('@')?.0.split_once(':')?.1.to_string();
    let mut password = Vec::new();
    let bytes = encoded.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            password.push(u8::from_str_radix(&encoded[i + 1..i + 3], 16).ok()?);
            i += 3;
        } else {
            password.push(bytes[i]);
            i += 1;
        }
    }
    Some((uri, String::from_utf8(password).ok()?))
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_schemascope"));
    command.current_dir(dir).args(args).env_remove("SCHEMASCOPE_CONFIG");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("schemascope runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn init_writes_a_configuration_that_check_loads_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(chinook(), dir.path().join("music.sqlite")).expect("copy");
    let mut args = vec!["init", "music.sqlite"];
    let secret = secret_postgres();
    if let Some((uri, _)) = &secret {
        args.push(uri);
    }
    let written = run(dir.path(), &args, &[]);
    assert!(written.status.success(), "{}", text(&written));
    let config = std::fs::read_to_string(dir.path().join("schemascope.toml")).expect("written");
    assert!(config.contains("name = \"music\""), "{config}");
    let again = run(dir.path(), &["init", "music.sqlite"], &[]);
    assert!(!again.status.success() && text(&again).contains("--force"), "{}", text(&again));
    assert_eq!(std::fs::read_to_string(dir.path().join("schemascope.toml")).expect("kept"), config);
    let Some((_, password)) = secret else {
        let checked = run(dir.path(), &["check"], &[]);
        assert!(checked.status.success(), "{}", text(&checked));
        return;
    };
    // The password left the URI for an environment variable.
    assert!(!config.contains(&password) && !config.contains("Zq7%3A"), "{config}");
    assert!(config.contains("password_env = \"CHINOOK_PASSWORD\""), "{config}");
    let unset = run(dir.path(), &["check"], &[]);
    assert!(!unset.status.success(), "{}", text(&unset));
    let shown = text(&unset);
    assert!(
        shown.contains(
            "`sources[1].password_env`: environment variable `CHINOOK_PASSWORD` is not set"
        ),
        "{shown}"
    );
    let wrong = run(dir.path(), &["check"], &[("CHINOOK_PASSWORD", "not-it")]);
    let shown = text(&wrong);
    assert!(!wrong.status.success(), "{shown}");
    assert!(shown.contains("ok      music (sqlite): 11 collection(s)"), "{shown}");
    assert!(
        shown.contains("FAILED  chinook") && shown.contains("password authentication failed"),
        "{shown}"
    );
    let right = run(dir.path(), &["check"], &[("CHINOOK_PASSWORD", &password)]);
    let shown = text(&right);
    assert!(right.status.success(), "{shown}");
    assert!(
        shown.contains("ok      chinook (postgres)") && shown.contains("Every source loads."),
        "{shown}"
    );
    assert!(shown.contains("no description"), "{shown}");
    assert!(!shown.contains(&password), "{shown}");
}

#[test]
fn serve_without_sources_or_a_configuration_says_how_to_give_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().to_str().expect("utf-8 path");
    let output = run(dir.path(), &["serve"], &[("HOME", home), ("XDG_CONFIG_HOME", home)]);
    let shown = text(&output);
    assert!(!output.status.success(), "{shown}");
    assert!(shown.contains("--config") && shown.contains("schemascope init"), "{shown}");
}

#[test]
fn a_broken_configuration_names_the_line_and_key_and_serves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    std::fs::write(&file, "[[sources]]\nname = \"a\"\npath = \"a.json\"\npasword = \"hunter2\"\n")
        .expect("write");
    let output = run(dir.path(), &["serve", "--config", file.to_str().expect("utf-8")], &[]);
    let shown = text(&output);
    assert!(!output.status.success(), "{shown}");
    assert!(shown.contains("schemascope.toml:4: `sources[0].pasword`: unknown field"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
}

#[test]
fn python_sdk_serves_a_configuration_reloads_its_edits_and_never_shows_the_password() {
    assert!(
        Command::new("python3").args(["-c", "import mcp"]).status().is_ok_and(|s| s.success()),
        "the Python MCP SDK is missing: `python3 -m pip install -r tests/e2e/requirements.txt` (scripts/test does this)"
    );
    let mut command = Command::new("python3");
    command
        .current_dir(repo_root())
        .arg("tests/e2e/config_client.py")
        .arg(env!("CARGO_BIN_EXE_schemascope"))
        .arg(chinook());
    if let Some((uri, _)) = secret_postgres() {
        // The test reader is a member of the read-only role (scripts/postgres).
        command.arg("--postgres").arg(uri).args(["--postgres-role", "schemascope_ro"]);
    }
    let output = command.output().expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", text(&output));
    crate::checks::all_passed(&stdout, 10, &stdout);
    if let Some((_, password)) = secret_postgres() {
        // Nor in what the server logged.
        assert!(!text(&output).contains(&password), "{}", text(&output));
    }
}

/// A Claude Desktop bundle fills `--config` and the sources from optional settings: one left
/// blank arrives as an empty string, which is nothing given.
#[test]
fn blank_settings_a_bundle_passes_are_ignored() {
    use std::io::{BufRead, BufReader, Write};
    let mut server = Command::new(env!("CARGO_BIN_EXE_schemascope"))
        .args(["serve", "--config", "", "demo:sensors", ""])
        .env_remove("SCHEMASCOPE_CONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut stdin = server.stdin.take().expect("stdin");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .expect("write");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout")).read_line(&mut line).expect("read");
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    let answer: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC answer");
    let instructions = answer["result"]["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("`sensors` (record set)"), "{line}");
}

/// `check` refuses the server settings `serve` would refuse: listening beyond loopback without a
/// token, a weak token.
#[test]
fn check_refuses_the_server_settings_serve_would_refuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    for server in
        ["http = \"0.0.0.0:18932\"", "http = \"127.0.0.1:0\"\ntoken = \"abababababababababab\""]
    {
        std::fs::write(
            &file,
            format!("[server]\n{server}\n\n[[sources]]\nname = \"s\"\nuri = \"demo:sensors\"\n"),
        )
        .expect("write");
        let output = run(dir.path(), &["check", "--config", file.to_str().expect("utf-8")], &[]);
        let shown = text(&output);
        assert!(!output.status.success(), "{shown}");
        assert!(shown.contains("FAILED  server"), "{shown}");
        assert!(!shown.contains("abababab"), "{shown}");
    }
}

#[test]
fn the_configuration_names_an_embedding_model_relative_to_itself_and_the_flag_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("schemascope.toml");
    std::fs::write(
        &file,
        format!(
            "[server]\nembedding_model = \"no-model-here\"\n\n[[sources]]\nname = \"chinook\"\npath = {:?}\n",
            chinook().display().to_string()
        ),
    )
    .expect("write");
    let config = file.to_str().expect("utf-8");
    let refused = run(dir.path(), &["serve", "--config", config], &[]);
    let shown = text(&refused);
    assert!(!refused.status.success(), "{shown}");
    let expected = dir.path().join("no-model-here").join("config.json");
    assert!(shown.contains(&format!("cannot read {}", expected.display())), "{shown}");
    // The flag (here its variable) wins over the file: the server gets as far as waiting for
    // its client (none here: its input is closed).
    let model = std::env::var("SCHEMASCOPE_TEST_EMBED_MODEL").expect(
        "SCHEMASCOPE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 directory (scripts/test installs tests/embed/requirements.txt and sets it)",
    );
    let served =
        run(dir.path(), &["serve", "--config", config], &[("SCHEMASCOPE_EMBEDDING_MODEL", &model)]);
    let shown = text(&served);
    assert!(shown.contains("MCP session over stdio could not start"), "{shown}");
    assert!(!shown.contains("no-model-here"), "{shown}");
}
