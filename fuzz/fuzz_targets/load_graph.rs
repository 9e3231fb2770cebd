//! Fuzzes the graph loader on arbitrary text: every input loads or gives an error naming the
//! problem (never a panic, hang or unbounded memory); auto-detection runs on the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_sources::Format;

fuzz_target!(|data: &[u8]| schemascope_fuzz::load_as(data, Format::Graph));
