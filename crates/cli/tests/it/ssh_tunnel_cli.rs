//! A configuration file's `[sources.ssh]` as a user writes it: the key from the SSH agent (no
//! `key_file`), jump hosts as a list, paths relative to the file, and the mistakes a user makes
//! refused at the line that holds them. Against the test sshd (`scripts/sshd`) forwarding to the
//! test PostgreSQL; without `SCHEMASCOPE_TEST_SSHD` these tests say so and pass vacuously.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn sshd() -> Option<(PathBuf, String)> {
    let (Ok(dir), Ok(pg)) =
        (std::env::var("SCHEMASCOPE_TEST_SSHD"), std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO"))
    else {
        eprintln!("SCHEMASCOPE_TEST_SSHD is not set: run through scripts/test");
        return None;
    };
    Some((PathBuf::from(dir), pg))
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).expect(name).trim().to_string()
}

fn check(config: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_schemascope"));
    command.args(["check", "--config"]).arg(config).env_remove("SSH_AUTH_SOCK");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// An `ssh-agent` of the test's own, holding `key`; killed on drop.
struct Agent {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    fn start(key: &Path) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let added = Command::new("ssh-add")
            .arg(key)
            .env("SSH_AUTH_SOCK", &socket)
            .output()
            .expect("ssh-add");
        assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
        Agent { child, socket, _dir: dir }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_agent_holds_the_key_and_jump_hosts_are_a_list() {
    let Some((dir, pg)) = sshd() else { return };
    let work = tempfile::tempdir().unwrap();
    // known_hosts relative to the configuration file.
    std::fs::copy(dir.join("known_hosts"), work.path().join("bastion_known_hosts")).unwrap();
    let (user, port) = (read(&dir, "user"), read(&dir, "port"));
    let config = work.path().join("schemascope.toml");
    std::fs::write(
        &config,
        format!(
            "[[sources]]\nname = \"shop\"\nuri = \"{pg}\"\n[sources.ssh]\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"{user}\"\nknown_hosts = \"bastion_known_hosts\"\njump = [\"{user}@localhost:{port}\"]\n"
        ),
    )
    .unwrap();
    let agent = Agent::start(&dir.join("client_ed25519"));
    let socket = agent.socket.display().to_string();
    let with_agent = check(&config, &[("SSH_AUTH_SOCK", &socket)]);
    assert!(with_agent.status.success(), "{}", text(&with_agent));
    assert!(text(&with_agent).contains("ok      shop (postgres)"), "{}", text(&with_agent));
    // Without the agent there is no key the bastion knows.
    let without = check(&config, &[]);
    assert!(!without.status.success());
    assert!(text(&without).contains("Permission denied"), "{}", text(&without));
}

#[test]
fn mistakes_in_the_ssh_table_are_refused_at_their_line() {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("schemascope.toml");
    let refused = |body: &str| {
        std::fs::write(&config, body).unwrap();
        let output = check(&config, &[]);
        assert!(!output.status.success(), "{body}");
        text(&output)
    };
    let db = "[[sources]]\nname = \"shop\"\nuri = \"postgres://app@db:5432/shop\"\n";
    let e = refused(&format!("{db}[sources.ssh]\nhost = \"bastion\"\nidentity = \"k\"\n"));
    assert!(e.contains("unknown field `identity`"), "{e}");
    let e = refused(&format!("{db}[sources.ssh]\nhost = \"-oProxyCommand=id\"\n"));
    assert!(e.contains(":4:") && e.contains("not a host name"), "{e}");
    let e = refused(&format!("{db}[sources.ssh]\nhost = \"bastion\"\nport = 0\n"));
    assert!(e.contains("sources[0].ssh.port"), "{e}");
    let e = refused(&format!("{db}[sources.ssh]\nhost = \"bastion\"\njump = \"ok@j1, -J\"\n"));
    assert!(e.contains("ssh jump"), "{e}");
    // A FIFO would block ssh until its start-up time ran out: refused at once.
    let fifo = work.path().join("key.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let e = refused(&format!("{db}[sources.ssh]\nhost = \"bastion\"\nkey_file = \"key.fifo\"\n"));
    assert!(e.contains("not a regular file"), "{e}");
    let e = refused(
        "[[sources]]\nname = \"f\"\npath = \"data.json\"\n[sources.ssh]\nhost = \"bastion\"\n",
    );
    assert!(e.contains("leads to a database URI"), "{e}");
}
