//! The embedded demo data (see `testdata/demo/README.md`): an infrastructure graph and an IoT
//! record set, compiled into the binary so `schemascope demo` needs no files.

use crate::spec::{DemoSet, Format};

const INFRASTRUCTURE: &str = include_str!("../../../testdata/demo/infrastructure.json");
const SENSORS: &str = include_str!("../../../testdata/demo/sensors.ndjson");

/// The format, a display file name and the text of a demo set.
pub fn file(set: DemoSet) -> (Format, &'static str, &'static str) {
    match set {
        DemoSet::Infrastructure => (Format::Graph, "demo/infrastructure.json", INFRASTRUCTURE),
        DemoSet::Sensors => (Format::Records, "demo/sensors.ndjson", SENSORS),
    }
}
