//! SSH tunnels against a real OpenSSH server (`scripts/sshd`, on 127.0.0.1) forwarding to the
//! real PostgreSQL, MariaDB and ClickHouse servers: the same answers as without the tunnel,
//! TLS verified through it, a jump host, the bastion's host key checked, a refused key, a
//! database the bastion cannot reach, a link that drops and comes back, and no `ssh` left
//! behind.
//!
//! The server's directory comes from `SCHEMASCOPE_TEST_SSHD` (set by `scripts/test`); without
//! it these tests say so and pass vacuously.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use schemascope_sources::ssh::SshTunnel;
use schemascope_sources::{NoProgress, Source, SourceSpec, load};

/// The test sshd's directory, or `None` (said) when not set.
fn sshd() -> Option<PathBuf> {
    let dir = std::env::var("SCHEMASCOPE_TEST_SSHD").ok().map(PathBuf::from);
    if dir.is_none() {
        eprintln!("SCHEMASCOPE_TEST_SSHD is not set: run through scripts/test");
    }
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect(name).trim().to_string()
}

/// The tunnel through the test sshd as `host`, with the test key and known hosts.
fn tunnel(dir: &Path, host: &str) -> SshTunnel {
    SshTunnel {
        host: host.into(),
        port: read(dir, "port").parse().expect("port"),
        user: Some(read(dir, "user")),
        key_file: Some(dir.join("client_ed25519")),
        known_hosts: Some(dir.join("known_hosts")),
        jump: Vec::new(),
    }
}

fn spec(name: &str, uri: &str, ssh: SshTunnel) -> SourceSpec {
    let spec: SourceSpec = format!("{name}={uri}").parse().expect("spec");
    SourceSpec { ssh: Some(ssh), ..spec }
}

/// Genre's row count, as the source's database counts it.
fn genres(source: &Source) -> String {
    let db = source.database.as_ref().expect("database");
    let table = if source.spec.name == "maria" { "Genre" } else { "\"Genre\"" };
    let rows = db.query(&format!("SELECT COUNT(*) FROM {table}"), &[]).expect("count");
    format!("{:?}", rows[0][0])
}

fn failure(result: Result<Source, schemascope_sources::SourceError>) -> String {
    match result {
        Ok(source) => panic!("loaded {}", source.name()),
        Err(e) => e.to_string(),
    }
}

/// The `ssh` processes running `-L …` to `target` through `bastion` (`-- bastion` ends the
/// command line).
fn ssh_processes(bastion: &str, target: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        // (Each argument ends with a NUL.)
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let forwards =
            args.iter().any(|a| a.starts_with("127.0.0.1:") && a.ends_with(&format!(":{target}")));
        if args.first().is_some_and(|a| a == "ssh")
            && forwards
            && args.last().is_some_and(|a| a == bastion)
        {
            found.push(pid);
        }
    }
    found
}

#[test]
fn each_engine_answers_through_the_tunnel_as_without_it() {
    let Some(dir) = sshd() else { return };
    let (Ok(pg), Ok(maria), Ok(ch), Ok(certs)) = (
        std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO"),
        std::env::var("SCHEMASCOPE_TEST_MARIADB"),
        std::env::var("SCHEMASCOPE_TEST_CLICKHOUSE"),
        std::env::var("SCHEMASCOPE_TEST_CERTS"),
    ) else {
        eprintln!("the database servers' variables are not set: run through scripts/test");
        return;
    };
    // PostgreSQL keeps checking the certificate against the database's host name through the
    // tunnel (the bastion reaches it as `localhost`, the name the certificate holds).
    let pg_tls = format!(
        "{}?sslmode=verify-full&sslrootcert={certs}/ca.pem",
        pg.replace("@127.0.0.1:", "@localhost:")
    );
    let direct = load(&format!("pg={pg}").parse().expect("spec"), &NoProgress).expect("direct");
    let through = load(&spec("pg", &pg_tls, tunnel(&dir, "127.0.0.1")), &NoProgress)
        .expect("postgres through ssh");
    assert_eq!(genres(&through), genres(&direct));
    assert_eq!(through.collections.len(), direct.collections.len());
    let location = through.database.as_ref().expect("db").location().to_string();
    assert!(location.contains("through ssh") && !location.contains("schemascope@"), "{location}");
    let tls = through
        .database
        .as_ref()
        .expect("db")
        .query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .expect("ssl");
    assert_eq!(tls[0][0].to_json(), serde_json::Value::Bool(true), "TLS inside the tunnel");

    // MariaDB through a jump host (the same sshd, reached as `localhost` first).
    let mut jumped = tunnel(&dir, "127.0.0.1");
    jumped.jump = vec![format!("{}@localhost:{}", read(&dir, "user"), read(&dir, "port"))];
    let maria_tls = format!("{maria}?sslmode=verify-ca&sslrootcert={certs}/ca.pem");
    let through =
        load(&spec("maria", &maria_tls, jumped), &NoProgress).expect("mariadb through two hops");
    let direct =
        load(&format!("maria={maria}").parse().expect("spec"), &NoProgress).expect("direct");
    assert_eq!(genres(&through), genres(&direct));

    let through =
        load(&spec("ch", &ch, tunnel(&dir, "127.0.0.1")), &NoProgress).expect("clickhouse");
    let direct = load(&format!("ch={ch}").parse().expect("spec"), &NoProgress).expect("direct");
    assert_eq!(genres(&through), genres(&direct));
}

#[test]
fn the_bastion_is_checked_and_refusals_say_what_to_change() {
    let Some(dir) = sshd() else { return };
    let Ok(pg) = std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO") else { return };
    let mut wrong_host_key = tunnel(&dir, "127.0.0.1");
    wrong_host_key.known_hosts = Some(dir.join("known_hosts.wrong"));
    let e = failure(load(&spec("pg", &pg, wrong_host_key), &NoProgress));
    assert!(e.contains("Host key verification failed") && e.contains("ssh-keyscan"), "{e}");

    let empty = tempfile::NamedTempFile::new().unwrap();
    let mut unknown_host = tunnel(&dir, "127.0.0.1");
    unknown_host.known_hosts = Some(empty.path().to_path_buf());
    let e = failure(load(&spec("pg", &pg, unknown_host), &NoProgress));
    assert!(e.contains("host key") && e.contains("ssh-keyscan"), "{e}");

    let mut other_key = tunnel(&dir, "127.0.0.1");
    other_key.key_file = Some(dir.join("other_ed25519"));
    let e = failure(load(&spec("pg", &pg, other_key), &NoProgress));
    assert!(e.contains("Permission denied") && e.contains("key_file"), "{e}");

    let mut no_sshd = tunnel(&dir, "127.0.0.1");
    no_sshd.port = 1;
    let e = failure(load(&spec("pg", &pg, no_sshd), &NoProgress));
    assert!(e.contains("Connection refused") && e.contains("sshd listening"), "{e}");

    // The bastion is reached, the database behind it is not: the bastion's words are quoted.
    let nowhere = pg.replace(":54329/", ":1/");
    let e = failure(load(&spec("pg", &nowhere, tunnel(&dir, "127.0.0.1")), &NoProgress));
    assert!(e.contains("through the SSH tunnel") && e.contains("open failed"), "{e}");
    assert!(!e.contains(":schemascope@"), "no password: {e}");
}

#[test]
fn a_dropped_link_comes_back_and_no_ssh_outlives_the_source() {
    let Some(dir) = sshd() else { return };
    let Ok(pg) = std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO") else { return };
    // The bastion named `localhost` here only, so these `ssh` processes are this test's. Its
    // known hosts are a copy this test changes while the tunnel runs.
    let work = tempfile::tempdir().unwrap();
    let known = work.path().join("known_hosts");
    std::fs::copy(dir.join("known_hosts"), &known).unwrap();
    let mut ssh = tunnel(&dir, "localhost");
    ssh.known_hosts = Some(known.clone());
    let source = load(&spec("pg", &pg, ssh), &NoProgress).expect("load");
    let before = genres(&source);
    let running = ssh_processes("localhost", "127.0.0.1:54329");
    assert_eq!(running.len(), 1, "{running:?}");
    // The tunnel's ssh_config is private to this user.
    let config = ssh_config_of(running[0]);
    let mode = std::fs::metadata(config.parent().unwrap()).unwrap().permissions();
    assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o700, "{config:?}");

    // The link drops while the bastion's key no longer matches: queries say why the tunnel is
    // down instead of blaming the database.
    std::fs::copy(dir.join("known_hosts.wrong"), &known).unwrap();
    kill(running[0]);
    let db = source.database.as_ref().expect("db");
    let down = wait_for(|| match db.query("SELECT COUNT(*) FROM \"Genre\"", &[]) {
        Err(e) if e.to_string().contains("is down") => Some(e.to_string()),
        _ => None,
    });
    let down = down.expect("the query says the tunnel is down");
    assert!(down.contains("Host key verification failed"), "{down}");

    // The key is right again: the supervisor's next start brings the tunnel back.
    std::fs::copy(dir.join("known_hosts"), &known).unwrap();
    let answered = wait_for(|| {
        db.query("SELECT COUNT(*) FROM \"Genre\"", &[]).ok().map(|rows| format!("{:?}", rows[0][0]))
    });
    assert_eq!(answered.as_deref(), Some(before.as_str()), "answers again after the link dropped");
    let restarted = ssh_processes("localhost", "127.0.0.1:54329");
    assert_eq!(restarted.len(), 1);
    assert_ne!(restarted, running);
    drop(source);
    assert!(
        ssh_processes("localhost", "127.0.0.1:54329").is_empty(),
        "ssh stopped with the source"
    );
    assert!(!config.exists(), "its configuration removed with it");
}

fn kill(pid: u32) {
    std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status().expect("kill");
}

/// `found()`'s first answer within 45 s (the supervisor waits up to 30 s between attempts).
fn wait_for<T>(mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(45);
    while Instant::now() < deadline {
        if let Some(value) = found() {
            return Some(value);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    None
}

/// The `-F` configuration file of `ssh` process `pid`.
fn ssh_config_of(pid: u32) -> PathBuf {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
    let args: Vec<String> =
        cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    let at = args.iter().position(|a| a == "-F").expect("-F");
    PathBuf::from(&args[at + 1])
}
