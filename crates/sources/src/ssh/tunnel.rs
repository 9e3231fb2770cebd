//! A running SSH tunnel: OpenSSH's `ssh` forwarding a local port to the database, kept up while
//! the source lives (restarted when the link drops) and stopped with it.
//!
//! The system's `ssh` does the SSH: the user's agent, keys, known hosts, jump hosts and
//! configuration work as they do in a terminal, with the SSH implementation users already
//! trust and update.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use schemascope_core::sync::{joined_in_drop, lock};

use super::settings::SshTunnel;

/// How long `ssh` may take to log in (through every jump host) and listen.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(45);
/// How often the supervisor looks at `ssh`.
const WATCH_INTERVAL: Duration = Duration::from_millis(200);
/// The longest wait between two restarts of a tunnel whose link keeps failing.
const MAX_RESTART_DELAY: Duration = Duration::from_secs(30);
/// `ssh`'s last lines kept for messages, and the most bytes of one.
const KEPT_LINES: usize = 40;
const MAX_LINE_BYTES: usize = 500;
/// Attempts at a free local port (another process may take the one picked before `ssh` binds).
const PORT_ATTEMPTS: usize = 4;

/// What the supervisor and `ssh`'s stderr reader share.
struct Shared {
    stop: AtomicBool,
    /// `ssh`'s last lines, its debug output left out.
    log: Mutex<VecDeque<String>>,
    /// Why the tunnel is down, while the supervisor fails to start `ssh` again.
    down: Mutex<Option<String>>,
}

impl Shared {
    fn keep(&self, line: &str) {
        let mut cut = line.len().min(MAX_LINE_BYTES);
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut log = lock(&self.log);
        if log.len() == KEPT_LINES {
            log.pop_front();
        }
        log.push_back(line[..cut].to_string());
    }
}

/// A tunnel from `127.0.0.1:local_port` to the database, through the bastion.
pub struct Tunnel {
    local_port: u16,
    shown: String,
    shared: Arc<Shared>,
    supervisor: Option<JoinHandle<()>>,
    /// Holds the `ssh_config` the tunnel's `ssh` reads (0700, removed on drop).
    _config: tempfile::TempDir,
}

impl std::fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnel").field("to", &self.shown).field("port", &self.local_port).finish()
    }
}

/// What starting `ssh` once came to.
enum Started {
    Listening(Child),
    /// The local port was taken meanwhile: try another.
    PortTaken,
    Failed(String),
}

impl Tunnel {
    /// Opens a tunnel to `target` (`host:port` as the bastion resolves it), waiting until
    /// `ssh` listens on the local port; the error quotes `ssh` and says what to change.
    pub fn open(settings: &SshTunnel, target: &str) -> Result<Tunnel, String> {
        settings.validate()?;
        // ssh would block on a FIFO and read a device forever: the files must be regular.
        for (name, path) in
            [("key_file", &settings.key_file), ("known_hosts", &settings.known_hosts)]
        {
            if let Some(path) = path {
                regular_file(name, path)?;
            }
        }
        let config = private_directory()
            .map_err(|e| format!("cannot write the tunnel's ssh configuration: {e}"))?;
        {
            use std::os::unix::fs::MetadataExt;
            // Linux only: a process's liveness is read from /proc.
            if let Ok(meta) = config.path().metadata()
                && Path::new("/proc/self").exists()
            {
                remove_stale_configurations(meta.uid());
            }
        }
        let config_file = config.path().join("ssh_config");
        std::fs::write(&config_file, settings.config_text()?)
            .map_err(|e| format!("cannot write the tunnel's ssh configuration: {e}"))?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            log: Mutex::default(),
            down: Mutex::default(),
        });
        let (ready, first) = mpsc::channel::<Result<u16, String>>();
        // Every `ssh` is started by this one thread, which lives as long as the tunnel: the
        // kernel stops `ssh` when its starting thread ends (PR_SET_PDEATHSIG).
        let supervisor = {
            let settings = settings.clone();
            let shared = Arc::clone(&shared);
            let target = target.to_string();
            std::thread::Builder::new()
                .name("ssh-tunnel".into())
                .spawn(move || supervise(&settings, &config_file, &target, &shared, &ready))
                .map_err(|e| format!("cannot start the tunnel's thread: {e}"))?
        };
        let mut tunnel = Tunnel {
            local_port: 0,
            shown: format!("{} to {target}", settings.display()),
            shared,
            supervisor: Some(supervisor),
            _config: config,
        };
        match first.recv() {
            Ok(Ok(port)) => {
                tunnel.local_port = port;
                Ok(tunnel)
            }
            Ok(Err(message)) => Err(message),
            Err(_) => Err("the tunnel's thread ended before ssh listened".into()),
        }
    }

    /// The local port the database is reached at (on 127.0.0.1).
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// The tunnel as shown in messages: `user@bastion:22 to db.internal:5432`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Why the tunnel is down, while it is (`ssh` exited and cannot be started again).
    pub fn down(&self) -> Option<String> {
        lock(&self.shared.down).clone()
    }

    /// What `ssh` said about connections the bastion could not open to the database (its
    /// "open failed" lines), for the message of a failed connection. `ssh` writes the line as
    /// it closes the connection: a moment is given for it to be read.
    pub fn refused_connections(&self) -> Option<String> {
        let refused = || {
            lock(&self.shared.log)
                .iter()
                .rev()
                .find(|l| l.contains("open failed") || l.contains("connect failed"))
                .cloned()
        };
        refused().or_else(|| {
            std::thread::sleep(Duration::from_millis(150));
            refused()
        })
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(supervisor) = self.supervisor.take() {
            joined_in_drop(supervisor.join());
        }
    }
}

/// Starts `ssh`, keeps it up while the tunnel lives, stops it at the end. The first outcome
/// (the port listened on, or why not) goes to `ready`.
fn supervise(
    settings: &SshTunnel,
    config: &Path,
    target: &str,
    shared: &Arc<Shared>,
    ready: &mpsc::Sender<Result<u16, String>>,
) {
    let mut port_and_child = None;
    for _ in 0..PORT_ATTEMPTS {
        let port = match free_port() {
            Ok(port) => port,
            Err(e) => {
                let _ = ready.send(Err(format!("no free local port for the tunnel: {e}")));
                return;
            }
        };
        match start(settings, config, port, target, shared) {
            Started::Listening(child) => {
                port_and_child = Some((port, child));
                break;
            }
            Started::PortTaken => continue,
            Started::Failed(message) => {
                let _ = ready.send(Err(message));
                return;
            }
        }
    }
    let Some((port, mut child)) = port_and_child else {
        let _ = ready.send(Err("no local port stayed free for the tunnel".into()));
        return;
    };
    let _ = ready.send(Ok(port));
    while !shared.stop.load(Ordering::Relaxed) {
        std::thread::sleep(WATCH_INTERVAL);
        if !matches!(child.try_wait(), Ok(Some(_))) {
            continue;
        }
        // The link dropped (the bastion restarted, the network failed): start `ssh` again on
        // the same port, waiting longer after each failure; connections made meanwhile fail
        // and the pools reconnect.
        let mut delay = Duration::from_secs(1);
        while !shared.stop.load(Ordering::Relaxed) {
            match start(settings, config, port, target, shared) {
                Started::Listening(again) => {
                    child = again;
                    if lock(&shared.down).take().is_some() {
                        eprintln!(
                            "schemascope: the SSH tunnel {shown} is up again",
                            shown = settings.display()
                        );
                    }
                    break;
                }
                Started::PortTaken => {
                    note_down(
                        shared,
                        settings,
                        format!("its local port {port} was taken by another process"),
                    );
                }
                Started::Failed(why) => note_down(shared, settings, why),
            }
            let until = Instant::now() + delay;
            while Instant::now() < until && !shared.stop.load(Ordering::Relaxed) {
                std::thread::sleep(WATCH_INTERVAL);
            }
            delay = (delay * 2).min(MAX_RESTART_DELAY);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Checks that `path` (`~/` is the home directory, as ssh reads it) is a regular file.
fn regular_file(name: &str, path: &Path) -> Result<(), String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let path = match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    };
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(_) => Err(format!("ssh {name}: {} is not a regular file", path.display())),
        Err(e) => Err(format!("ssh {name}: cannot read {}: {e}", path.display())),
    }
}

/// Records why the tunnel is down, telling the operator (standard error) when the reason is new:
/// a changed host key mid-session may be an attack, and must not pass unseen.
fn note_down(shared: &Shared, settings: &SshTunnel, why: String) {
    let mut down = lock(&shared.down);
    if down.as_deref() != Some(why.as_str()) {
        eprintln!("schemascope: the SSH tunnel {} is down, retrying: {why}", settings.display());
        *down = Some(why);
    }
}

/// A directory of this process's own, readable by its owner only, for one tunnel's
/// configuration; removed with the tunnel (and, should the process end without that, by the
/// next tunnel opened: [`remove_stale_configurations`]).
fn private_directory() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix(&format!("{CONFIG_PREFIX}{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
}

/// What a tunnel's configuration directory is named with: then the pid of its process.
const CONFIG_PREFIX: &str = "schemascope-ssh-";

/// Removes the configuration directories that tunnels of processes no longer running left
/// (a server stopped without closing its sources), when they belong to `owner` (this user: the
/// owner of the directory just made).
fn remove_stale_configurations(owner: u32) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten().take(10_000) {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(CONFIG_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let path = entry.path();
        // Only a real directory (not a link to one) of this user's.
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_dir() && meta.uid() == owner {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// A local port no one listens on now.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts `ssh` for `port` and waits until it listens there, or says why it will not.
fn start(
    settings: &SshTunnel,
    config: &Path,
    port: u16,
    target: &str,
    shared: &Arc<Shared>,
) -> Started {
    let mut command = Command::new("ssh");
    command
        .args(settings.arguments(config, port, target))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    stop_with_this_thread(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Started::Failed(
                "the `ssh` command (OpenSSH's client) is not installed: install it (Debian: apt-get install openssh-client) for SSH tunnels".into(),
            );
        }
        Err(e) => return Started::Failed(format!("cannot start ssh: {e}")),
    };
    let Some(stderr) = child.stderr.take() else {
        let _ = child.kill();
        return Started::Failed("ssh's error output could not be read".into());
    };
    lock(&shared.log).clear();
    let (listening, heard) = mpsc::channel::<()>();
    // ssh says "Local forwarding listening on … port N." just before it binds, and makes the
    // listener's channel ("port listener") once it listens: connections succeed from then.
    let marker = format!("Local forwarding listening on 127.0.0.1 port {port}.");
    {
        let shared = Arc::clone(shared);
        let spawned = std::thread::Builder::new().name("ssh-stderr".into()).spawn(move || {
            // Read to the end, so `ssh` never blocks on a full pipe.
            let mut binding = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(&marker) {
                    binding = true;
                } else if binding && line.contains("port listener") {
                    binding = false;
                    let _ = listening.send(());
                } else if !line.starts_with("debug") || line.contains("open failed") {
                    shared.keep(&line);
                }
            }
        });
        if spawned.is_err() {
            let _ = child.kill();
            let _ = child.wait();
            return Started::Failed("cannot start a thread to read ssh's output".into());
        }
    }
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        match heard.recv_timeout(WATCH_INTERVAL) {
            Ok(()) => return Started::Listening(child),
            Err(RecvTimeoutError::Timeout) => {}
            // The reader ended: `ssh` closed its stderr, so it is exiting.
            Err(RecvTimeoutError::Disconnected) => {
                let _ = child.wait();
                break;
            }
        }
        if shared.stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            if Instant::now() >= deadline {
                return Started::Failed(format!(
                    "ssh did not set up the tunnel within {} s{}",
                    STARTUP_TIMEOUT.as_secs(),
                    said(shared)
                ));
            }
            return Started::Failed("the tunnel was closed while it started".into());
        }
    }
    let log = said(shared);
    if log.contains("Address already in use") || log.contains("cannot listen to port") {
        return Started::PortTaken;
    }
    Started::Failed(format!("ssh could not open the tunnel{log}{}", hint(&log, settings)))
}

/// `ssh`'s last lines that say something, for a message.
fn said(shared: &Shared) -> String {
    /// The most lines quoted.
    const QUOTED: usize = 6;
    let log = lock(&shared.log);
    let lines: Vec<&str> = log
        .iter()
        .map(|l| l.trim())
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("OpenSSH_")
                && !l.starts_with("Transferred:")
                && !l.starts_with("Bytes per")
                // The borders of the changed-host-key warning.
                && !l.chars().all(|c| c == '@')
        })
        .collect();
    let quoted = &lines[lines.len().saturating_sub(QUOTED)..];
    if quoted.is_empty() { String::new() } else { format!(": ssh said: {}", quoted.join(" / ")) }
}

/// What to change, for what `ssh` said.
fn hint(log: &str, settings: &SshTunnel) -> String {
    let known = settings
        .known_hosts
        .as_ref()
        .map_or_else(|| "~/.ssh/known_hosts".to_string(), |p| p.display().to_string());
    let hint = if log.contains("Host key verification failed")
        || log.contains("HOST IDENTIFICATION HAS CHANGED")
    {
        // The host ssh names (a jump host's key fails the same way), else the bastion.
        let (host, port) =
            host_named(log).unwrap_or_else(|| (settings.host.clone(), settings.port));
        format!(
            "the host key of {host} is not in {known}, or differs from the one there (another host answers). Check its fingerprint with its administrator, then add it: ssh-keyscan -p {port} {host} >> {known}"
        )
    } else if log.contains("Permission denied") || log.contains("Too many authentication failures")
    {
        "the bastion refused the login: check `user` and `key_file` (a key with a passphrase must be loaded into ssh-agent: schemascope cannot type it), or the agent (SSH_AUTH_SOCK)".to_string()
    } else if log.contains("Could not resolve hostname") {
        "check the bastion's host name".to_string()
    } else if log.contains("Connection refused")
        || log.contains("timed out")
        || log.contains("No route to host")
    {
        "is sshd listening at the host and port ssh names (the bastion, or a jump host)?"
            .to_string()
    } else if log.contains("Load key")
        || log.contains("invalid format")
        || log.contains("bad permissions")
        || log.contains("passphrase")
    {
        "the key file cannot be used: it must be a private key without a passphrase, readable by schemascope only (chmod 600), or a key loaded into ssh-agent".to_string()
    } else {
        return String::new();
    };
    format!(" — {hint}")
}

/// The host (and port) whose key ssh could not verify, as it names it: `… known for
/// [host]:2222 …`, `Host key for host has changed …`.
fn host_named(log: &str) -> Option<(String, u16)> {
    let after = ["is known for ", "Host key for "].iter().find_map(|m| log.split(m).nth(1))?;
    let named = after.split_whitespace().next()?;
    let (host, port) = match named.strip_prefix('[').and_then(|n| n.split_once("]:")) {
        Some((host, port)) => (host, port.parse().ok()?),
        None => (named, super::DEFAULT_SSH_PORT),
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Stops `ssh` when the thread that started it ends (the process exits or is killed), so no
/// tunnel outlives schemascope.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn stop_with_this_thread(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and calls only prctl(2),
    // which is async-signal-safe, allocating nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn stop_with_this_thread(_command: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_whose_key_failed_is_read_from_ssh() {
        let changed =
            "Host key for [127.0.0.1]:22229 has changed and you have requested strict checking.";
        assert_eq!(host_named(changed), Some(("127.0.0.1".into(), 22229)));
        let unknown = "No ED25519 host key is known for jump.example.com and you have requested strict checking.";
        assert_eq!(host_named(unknown), Some(("jump.example.com".into(), 22)));
        assert_eq!(host_named("Permission denied (publickey)."), None);
    }
}
