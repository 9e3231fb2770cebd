//! What a source's SSH tunnel is (a configuration file's `[sources.ssh]`), checked so that no
//! value can be read by `ssh` as an option or as another setting, and the `ssh` command and
//! configuration it means.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The SSH port when the configuration names none.
pub const DEFAULT_SSH_PORT: u16 = 22;

/// An SSH tunnel a database is reached through: `ssh` logs in to the bastion `host` (through
/// `jump` hosts, if any) and forwards a local port to the database's host and port, which the
/// bastion resolves and connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTunnel {
    /// The bastion's host name or address.
    pub host: String,
    /// The bastion's SSH port.
    pub port: u16,
    /// Who logs in to the bastion; `None`: as `ssh` decides (its configuration, else the
    /// current user).
    pub user: Option<String>,
    /// The private key; `None`: the SSH agent (`SSH_AUTH_SOCK`) and `ssh`'s default keys.
    pub key_file: Option<PathBuf>,
    /// The known-hosts file the bastion's (and jump hosts') keys are checked against; `None`:
    /// `ssh`'s (`~/.ssh/known_hosts`). Checking is always strict.
    pub known_hosts: Option<PathBuf>,
    /// Jump hosts, `[user@]host[:port]`, in order (`ssh -J`).
    pub jump: Vec<String>,
}

/// Why `host` is not a host name or address (an IPv6 address in brackets), if it is not.
pub(crate) fn invalid_host(host: &str) -> Option<String> {
    let ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => !v6.is_empty() && v6.chars().all(|c| c.is_ascii_hexdigit() || ":.".contains(c)),
        None => {
            !host.is_empty()
                && !host.starts_with('-')
                && host.len() <= 253
                && host.chars().all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
        }
    };
    (!ok).then(|| format!("`{host}` is not a host name or address"))
}

fn invalid_user(user: &str) -> Option<String> {
    let ok = !user.is_empty()
        && !user.starts_with('-')
        && user.len() <= 64
        && user.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    (!ok).then(|| format!("`{user}` is not a user name (letters, digits, `.`, `_`, `-`)"))
}

/// `[user@]host[:port]` checked.
fn invalid_jump(jump: &str) -> Option<String> {
    let (user, address) = match jump.rsplit_once('@') {
        Some((user, address)) => (Some(user), address),
        None => (None, jump),
    };
    if let Some(reason) = user.and_then(invalid_user) {
        return Some(format!("jump host `{jump}`: {reason}"));
    }
    // An IPv6 address is bracketed; a port follows the last `:` outside brackets.
    let (host, port) = match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => (host, Some(port)),
        _ => (address, None),
    };
    if let Some(reason) = invalid_host(host) {
        return Some(format!("jump host `{jump}`: {reason}"));
    }
    if port.is_some_and(|p| p.parse::<u16>().map_or(true, |p| p == 0)) {
        return Some(format!("jump host `{jump}`: the port is not a port number"));
    }
    None
}

/// A path as `ssh_config` reads it: quoted (a path may hold spaces) with `%` doubled (`ssh`
/// expands `%h`-style tokens in key and known-hosts paths); a path with a quote or a line break
/// cannot be written.
fn config_path(path: &Path, setting: &str) -> Result<String, String> {
    let text = path.to_str().ok_or_else(|| format!("{setting}: the path is not UTF-8"))?;
    if text.is_empty() || text.contains(['"', '\n', '\r', '\0']) {
        return Err(format!("{setting}: `{text}` cannot be given to ssh (quotes or line breaks)"));
    }
    Ok(format!("\"{}\"", text.replace('%', "%%")))
}

impl SshTunnel {
    /// Checks every value: none may start an option or break out of its setting.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(reason) = invalid_host(&self.host) {
            return Err(format!("ssh host: {reason}"));
        }
        if self.port == 0 {
            return Err("ssh port: 0 is not a port".into());
        }
        if let Some(reason) = self.user.as_deref().and_then(invalid_user) {
            return Err(format!("ssh user: {reason}"));
        }
        if let Some(reason) = self.jump.iter().find_map(|j| invalid_jump(j)) {
            return Err(format!("ssh jump: {reason}"));
        }
        if let Some(key) = &self.key_file {
            config_path(key, "ssh key_file")?;
        }
        if let Some(known) = &self.known_hosts {
            config_path(known, "ssh known_hosts")?;
        }
        Ok(())
    }

    /// The bastion as shown in messages: `user@host:port`.
    pub fn display(&self) -> String {
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let jump = if self.jump.is_empty() {
            String::new()
        } else {
            format!(" via {}", self.jump.join(", "))
        };
        format!("{user}{}:{}{jump}", self.host, self.port)
    }

    /// The `ssh_config` every hop of the tunnel reads (`ssh -F`; `-J` hands it to the jump
    /// hosts' `ssh` too, which it would not do with `-i` or `-o`): never a prompt, host keys
    /// checked strictly, the forward required, a dead link noticed; then the user's own
    /// configuration, whose settings come after these (the first value `ssh` reads wins).
    pub(crate) fn config_text(&self) -> Result<String, String> {
        let mut text = String::from(
            "# Written by schemascope for one SSH tunnel; removed when the tunnel closes.\nHost *\n    BatchMode yes\n    StrictHostKeyChecking yes\n    ExitOnForwardFailure yes\n    ServerAliveInterval 5\n    ServerAliveCountMax 3\n    ConnectTimeout 15\n    ClearAllForwardings no\n    ForwardAgent no\n    ForwardX11 no\n    PermitLocalCommand no\n    RequestTTY no\n    ControlMaster no\n    ControlPath none\n",
        );
        if let Some(key) = &self.key_file {
            let _ = writeln!(text, "    IdentityFile {}", config_path(key, "ssh key_file")?);
            text.push_str("    IdentitiesOnly yes\n");
        }
        if let Some(known) = &self.known_hosts {
            let _ =
                writeln!(text, "    UserKnownHostsFile {}", config_path(known, "ssh known_hosts")?);
            text.push_str("    GlobalKnownHostsFile none\n");
        }
        text.push_str("    Include ~/.ssh/config\n    Include /etc/ssh/ssh_config\n");
        Ok(text)
    }

    /// `ssh`'s arguments for a tunnel from `127.0.0.1:local_port` to `target` (`host:port`,
    /// resolved by the bastion), with `config` as its configuration file.
    pub(crate) fn arguments(&self, config: &Path, local_port: u16, target: &str) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "-F".into(),
            config.display().to_string(),
            // debug1 says when the forward listens (and why not); stderr is read throughout.
            "-v".into(),
            "-N".into(),
            "-T".into(),
            "-L".into(),
            format!("127.0.0.1:{local_port}:{target}"),
            "-p".into(),
            self.port.to_string(),
        ];
        if let Some(user) = &self.user {
            args.extend(["-l".into(), user.clone()]);
        }
        if !self.jump.is_empty() {
            args.extend(["-J".into(), self.jump.join(",")]);
        }
        // The destination after `--`: never an option, whatever it holds. ssh takes an IPv6
        // address bare there (brackets are for the `host:port` forms).
        let bare = self.host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
        args.extend(["--".into(), bare.unwrap_or(&self.host).to_string()]);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tunnel() -> SshTunnel {
        SshTunnel {
            host: "bastion.example.com".into(),
            port: 2222,
            user: Some("deploy".into()),
            key_file: Some("/keys/my key%1".into()),
            known_hosts: Some("/etc/kh".into()),
            jump: vec!["ops@jump1:22".into(), "[2001:db8::1]:2200".into()],
        }
    }

    #[test]
    fn values_that_ssh_would_read_as_options_or_settings_are_refused() {
        assert_eq!(tunnel().validate(), Ok(()));
        let with = |f: &dyn Fn(&mut SshTunnel)| {
            let mut t = tunnel();
            f(&mut t);
            t.validate().unwrap_err()
        };
        assert!(with(&|t| t.host = "-oProxyCommand=touch /tmp/x".into()).contains("ssh host"));
        assert!(with(&|t| t.host = "a b".into()).contains("ssh host"));
        assert!(with(&|t| t.user = Some("-l".into())).contains("ssh user"));
        assert!(with(&|t| t.user = Some("a;b".into())).contains("ssh user"));
        assert!(with(&|t| t.jump = vec!["-oProxyCommand=x".into()]).contains("ssh jump"));
        assert!(with(&|t| t.jump = vec!["h:99999".into()]).contains("port"));
        assert!(with(&|t| t.key_file = Some("/a\"b".into())).contains("key_file"));
        assert!(with(&|t| t.known_hosts = Some("/a\nHost x".into())).contains("known_hosts"));
        assert!(with(&|t| t.port = 0).contains("port"));
    }

    #[test]
    fn the_config_quotes_paths_and_comes_before_the_users_own() {
        let text = tunnel().config_text().unwrap();
        assert!(text.contains("    IdentityFile \"/keys/my key%%1\"\n    IdentitiesOnly yes\n"));
        assert!(text.contains("UserKnownHostsFile \"/etc/kh\""));
        assert!(text.contains("StrictHostKeyChecking yes"));
        assert!(text.find("BatchMode").unwrap() < text.find("Include ~/.ssh/config").unwrap());
        let args = tunnel().arguments(Path::new("/tmp/c"), 40000, "db.internal:5432");
        assert_eq!(
            args.join(" "),
            "-F /tmp/c -v -N -T -L 127.0.0.1:40000:db.internal:5432 -p 2222 -l deploy -J ops@jump1:22,[2001:db8::1]:2200 -- bastion.example.com"
        );
        assert_eq!(
            tunnel().display(),
            "deploy@bastion.example.com:2222 via ops@jump1:22, [2001:db8::1]:2200"
        );
    }
}
