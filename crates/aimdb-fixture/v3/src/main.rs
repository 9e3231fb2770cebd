//! The v1 fixture's instance (see `../src/main.rs`: the same records, values and stdin commands)
//! on the published `aimdb-core` 2.0, which serves AimX protocol 3.0 through
//! `aimdb-uds-connector`'s `UdsServer`.

#[path = "../../src/sensors.rs"]
mod sensors;
#[path = "../../src/server.rs"]
mod server;

use std::sync::Arc;
use std::time::Duration;

use aimdb_core::buffer::BufferCfg;
use aimdb_core::remote::{AimxConfig, SecurityPolicy};
use aimdb_core::{AimDb, AimDbBuilder};
use aimdb_tokio_adapter::{TokioAdapter, TokioRecordRegistrarExt};
use aimdb_uds_connector::UdsServer;
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

fn produce(db: &AimDb, key: &str, json: &str) -> Result<(), String> {
    let outcome = if key == temperature_key() {
        db.produce(key, serde_json::from_str::<server::Temperature>(json).map_err(|e| e.to_string())?)
    } else if key == config_key() {
        db.produce(key, serde_json::from_str::<server::Config>(json).map_err(|e| e.to_string())?)
    } else if key == setpoint_key() {
        db.produce(key, serde_json::from_str::<server::Setpoint>(json).map_err(|e| e.to_string())?)
    } else if key == OUTDOOR {
        db.produce(key, serde_json::from_str::<sensors::OutdoorReading>(json).map_err(|e| e.to_string())?)
    } else {
        return Err(format!("no record `{key}`"));
    };
    outcome.map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let socket = std::env::args().nth(1).ok_or("usage: aimdb-fixture SOCKET")?;
    let _ = std::fs::remove_file(&socket);
    let remote = AimxConfig::uds_default().socket_path(socket.clone()).security_policy(SecurityPolicy::read_write().with_writable_key(config_key()).with_writable_key(setpoint_key()));
    let mut builder = AimDbBuilder::new().runtime(Arc::new(TokioAdapter)).with_connector(UdsServer::from_config(remote));
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
    let (db, runner) = builder.build().await.map_err(|e| format!("{e:?}"))?;
    tokio::spawn(runner.run());
    for (key, json) in [
        (temperature_key(), r#"{"celsius": 21.5, "sensor_id": "sensor-01", "timestamp": 1730649600.123}"#),
        (config_key(), r#"{"host": "0.0.0.0", "port": 8080, "debug_mode": false, "max_connections": 100}"#),
        (OUTDOOR, r#"{"sensor_id": "out-1", "celsius": 20}"#),
        (
            setpoint_key(),
            r#"{"celsius": 21.0, "sensor_id": "sensor-01", "timestamp": 1730649600.0}"#,
        ),
    ] {
        produce(&db, key, json)?;
    }
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
            (Some("produce"), Some(key), Some(json)) => match produce(&db, key, json) {
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
