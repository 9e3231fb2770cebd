//! The records keyed by their Rust type names (`aimdb_fixture::server::…`), as in AimDB's
//! examples and the seed's `server::Temperature`.

use serde::{Deserialize, Serialize};

/// A temperature reading.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Temperature {
    /// Degrees Celsius.
    pub celsius: f64,
    /// The sensor.
    pub sensor_id: String,
    /// Unix time in seconds.
    pub timestamp: f64,
}

/// The server's configuration (writable remotely).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Config {
    /// Listen address.
    pub host: String,
    /// Listen port.
    pub port: u16,
    /// Debug logging.
    pub debug_mode: bool,
    /// Connection limit.
    pub max_connections: u32,
}

/// A thermostat's target temperature (writable remotely: seed 004's "Set temperature to 72
/// degrees").
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Setpoint {
    /// Degrees Celsius.
    pub celsius: f64,
    /// The sensor the thermostat regulates on.
    pub sensor_id: String,
    /// Unix time in seconds when it was set.
    pub timestamp: f64,
}
