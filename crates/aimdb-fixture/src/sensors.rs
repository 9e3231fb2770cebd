//! The record whose key (`sensors.outdoor`) differs from its type name, with values that vary
//! the way real ones do: a field that is sometimes absent, a reading that is sometimes null, and
//! numbers that are integers in some values and floats in others.

use serde::{Deserialize, Serialize};

/// An outdoor sensor's reading.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OutdoorReading {
    /// The sensor.
    pub sensor_id: String,
    /// Degrees Celsius as the sensor sent it (an integer, a float, or null when it failed).
    pub celsius: Option<serde_json::Number>,
    /// Relative humidity, when the sensor has a hygrometer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub humidity: Option<f64>,
}
