//! A real AimDB instance for tests: the published `aimdb-core` 1.1 with its tokio adapter,
//! serving AimX (protocol 1.0) on the Unix socket given as the only argument. It registers a
//! temperature reading, a config and a thermostat setpoint (each keyed by its Rust type name, as
//! AimDB's examples do; the config and the setpoint writable through AimX, `record.set`) and an
//! outdoor reading keyed `sensors.outdoor`, which is not its type name.
//!
//! Commands on standard input, one per line: `produce KEY JSON` produces a value (parsed into
//! the record's Rust type, so only values the type accepts get in) and answers `ok` or
//! `error: …`; `quit` or end of input stops. `ready` is printed once the socket listens.

#![forbid(unsafe_code)]

mod sensors;
mod server;

use std::sync::Arc;
use std::time::Duration;

use aimdb_core::buffer::BufferCfg;
use aimdb_core::remote::{AimxConfig, SecurityPolicy};
use aimdb_core::{AimDb, AimDbBuilder};
use aimdb_tokio_adapter::{TokioAdapter, TokioRecordRegistrarExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The key of the record whose key differs from its type name.
const OUTDOOR: &str = "sensors.outdoor";

fn temperature_key() -> &'static str {
    std::any::type_name::<server::Temperature>()
}

fn config_key() -> &'static str {
    std::any::type_name::<server::Config>()
}

fn setpoint_key() -> &'static str {
    std::any::type_name::<server::Setpoint>()
}

async fn produce(db: &AimDb<TokioAdapter>, key: &str, json: &str) -> Result<(), String> {
    let outcome = if key == temperature_key() {
        db.produce(
            key,
            serde_json::from_str::<server::Temperature>(json).map_err(|e| e.to_string())?,
        )
        .await
    } else if key == config_key() {
        db.produce(key, serde_json::from_str::<server::Config>(json).map_err(|e| e.to_string())?)
            .await
    } else if key == setpoint_key() {
        db.produce(key, serde_json::from_str::<server::Setpoint>(json).map_err(|e| e.to_string())?)
            .await
    } else if key == OUTDOOR {
        db.produce(
            key,
            serde_json::from_str::<sensors::OutdoorReading>(json).map_err(|e| e.to_string())?,
        )
        .await
    } else {
        return Err(format!("no record `{key}`"));
    };
    outcome.map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let socket = std::env::args().nth(1).ok_or("usage: aimdb-fixture SOCKET")?;
    let _ = std::fs::remove_file(&socket);
    let remote = AimxConfig::uds_default().socket_path(&socket).security_policy(
        SecurityPolicy::read_write()
            .with_writable_key(config_key())
            .with_writable_key(setpoint_key()),
    );
    let mut builder =
        AimDbBuilder::new().runtime(Arc::new(TokioAdapter)).with_remote_access(remote);
    builder.configure::<server::Temperature>(temperature_key(), |reg| {
        reg.buffer(BufferCfg::SpmcRing { capacity: 100 }).with_remote_access();
    });
    builder.configure::<server::Config>(config_key(), |reg| {
        reg.buffer(BufferCfg::SingleLatest).with_remote_access();
    });
    builder.configure::<server::Setpoint>(setpoint_key(), |reg| {
        reg.buffer(BufferCfg::SingleLatest).with_remote_access();
    });
    builder.configure::<sensors::OutdoorReading>(OUTDOOR, |reg| {
        reg.buffer(BufferCfg::SpmcRing { capacity: 50 }).with_remote_access();
    });
    let db = builder.build().await?;
    for (key, json) in [
        (
            temperature_key(),
            r#"{"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123}"#,
        ),
        (
            config_key(),
            r#"{"host": "0.0.0.0", "port": 8080, "debug_mode": false, "max_connections": 100}"#,
        ),
        (OUTDOOR, r#"{"sensor_id": "out-1", "celsius": 20}"#),
        (
            setpoint_key(),
            r#"{"celsius": 21.0, "sensor_id": "sensor-01", "timestamp": 1730649600.0}"#,
        ),
    ] {
        produce(&db, key, json).await?;
    }
    // The server task binds the socket after build returns.
    while !std::path::Path::new(&socket).exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut stdout = tokio::io::stdout();
    stdout.write_all(b"ready\n").await?;
    stdout.flush().await?;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        let mut parts = line.splitn(3, ' ');
        let answer = match (parts.next(), parts.next(), parts.next()) {
            (Some("produce"), Some(key), Some(json)) => match produce(&db, key, json).await {
                Ok(()) => "ok".to_string(),
                Err(error) => format!("error: {error}"),
            },
            (Some("quit"), _, _) => break,
            _ => format!("error: unknown command `{line}`"),
        };
        stdout.write_all(format!("{answer}\n").as_bytes()).await?;
        stdout.flush().await?;
    }
    let _ = std::fs::remove_file(&socket);
    Ok(())
}
