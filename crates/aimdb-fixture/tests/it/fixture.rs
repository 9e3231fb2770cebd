//! The running instances the tests talk to: the `aimdb-fixture` binary (published `aimdb-core`
//! 1.1, AimX 1.0) always, and the same instance on `aimdb-core` 2.0 (AimX 3.0) when
//! `SCHEMASCOPE_AIMDB_V3_FIXTURE` names its binary (`scripts/test` builds it from
//! `crates/aimdb-fixture/v3`, whose crates declare Rust 1.98); its records' names; helpers.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use schemascope_core::sync::lock;
use schemascope_sources::aimdb::{AimxClient, Protocol};
use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::*;
use serde_json::Value;

pub(crate) const TEMPERATURE: &str = "aimdb_fixture::server::Temperature";
pub(crate) const CONFIG: &str = "aimdb_fixture::server::Config";
pub(crate) const SETPOINT: &str = "aimdb_fixture::server::Setpoint";
pub(crate) const OUTDOOR: &str = "sensors.outdoor";
pub(crate) const OUTDOOR_TYPE: &str = "aimdb_fixture::sensors::OutdoorReading";

/// Which server a fixture runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// `aimdb-core` 1.1: protocol 1.0.
    V1,
    /// `aimdb-core` 2.0: protocol 3.0.
    V3,
}

impl Kind {
    pub(crate) fn binary(self) -> Option<PathBuf> {
        match self {
            Self::V1 => Some(PathBuf::from(env!("CARGO_BIN_EXE_aimdb-fixture"))),
            Self::V3 => std::env::var_os("SCHEMASCOPE_AIMDB_V3_FIXTURE").map(PathBuf::from),
        }
    }

    pub(crate) fn protocol(self) -> Protocol {
        match self {
            Self::V1 => Protocol::V1,
            Self::V3 => Protocol::V3,
        }
    }

    /// Whether `record.get` answers for a ring buffer: 1.x keeps a latest value for every
    /// record, 2.x only for single-latest ones (a ring's get reads this connection's cursor).
    pub(crate) fn rings_have_current_value(self) -> bool {
        self == Self::V1
    }
}

/// The servers to test against: always v1, and v3 when its binary was built.
pub(crate) fn kinds() -> Vec<Kind> {
    let kinds: Vec<Kind> =
        [Kind::V1, Kind::V3].into_iter().filter(|k| k.binary().is_some()).collect();
    if !kinds.contains(&Kind::V3) {
        eprintln!(
            "note: SCHEMASCOPE_AIMDB_V3_FIXTURE is not set; testing against the aimdb-core 1.1 server only"
        );
    }
    kinds
}

/// The fixture's stdin and stdout.
struct Pipe {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// A running fixture; dropping it stops the process.
pub(crate) struct Instance {
    child: Child,
    /// Both ends of the fixture's stdin/stdout protocol under one lock, so that a command and
    /// its answer are one critical section: two threads' exchanges cannot interleave (one reading
    /// the other's answer), and one cut short by a panic leaves a broken pipe, never a pipe one
    /// answer out of step.
    pipe: Mutex<Pipe>,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Instance {
    pub(crate) fn start(kind: Kind) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let socket = dir.path().join("aimdb.sock");
        let mut child = Command::new(kind.binary().expect("the fixture binary"))
            .arg(&socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the fixture starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("reads");
        assert_eq!(line.trim(), "ready", "the fixture did not come up");
        Self { child, pipe: Mutex::new(Pipe { stdin, stdout }), socket, _dir: dir }
    }

    /// Produces `value` in record `key` through the instance's own API.
    pub(crate) fn produce(&self, key: &str, value: &Value) {
        let mut answer = String::new();
        {
            let mut pipe = lock(&self.pipe);
            writeln!(pipe.stdin, "produce {key} {value}").expect("writes");
            pipe.stdin.flush().expect("flushes");
            pipe.stdout.read_line(&mut answer).expect("reads");
        }
        assert_eq!(answer.trim(), "ok", "producing {value} in {key}");
    }

    pub(crate) fn registry(&self) -> Services {
        let registry = Services::new();
        let spec: SourceSpec =
            format!("plant=aimdb:unix://{}", self.socket.display()).parse().expect("valid");
        registry.sources.load(&[spec], &NoProgress).expect("loads the instance");
        registry
    }

    /// Services serving the instance as `plant` with writes enabled (`allow_writes`).
    pub(crate) fn writable_registry(&self) -> Services {
        let registry = Services::new();
        let mut spec: SourceSpec =
            format!("plant=aimdb:unix://{}", self.socket.display()).parse().expect("valid");
        spec.limits.allow_writes = true;
        registry.sources.load(&[spec], &NoProgress).expect("loads the instance");
        registry
    }

    /// Record `key`'s current value, read on a connection of its own.
    pub(crate) fn current(&self, key: &str) -> Option<Value> {
        let mut client =
            AimxClient::connect(&self.socket, Duration::from_secs(5)).expect("connects");
        client.get(key).expect("gets").map(|text| text.parse().expect("JSON"))
    }

    /// Stops the instance, as a crash would.
    pub(crate) fn kill(&mut self) {
        self.child.kill().expect("kills");
        self.child.wait().expect("waits");
    }

    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn ok(result: ToolResult) -> Value {
    assert!(result.success, "tool failed: {}", result.message);
    result.data
}

pub(crate) fn plant() -> Option<String> {
    Some("plant".into())
}
