//! Fuzzes the documents loader on arbitrary text: every input loads or gives an error naming the
//! problem (never a panic, hang or unbounded memory); auto-detection runs on the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_sources::{Format, SourceSpec, load_str};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(spec) = "fuzz=input.json".parse::<SourceSpec>() else { return };
    for format in [Some(Format::Documents), None] {
        if let Ok(source) = load_str(&spec, "input.json", format, text.to_string()) {
            for collection in &source.collections {
                let _ = collection.profile();
            }
        }
    }
});
