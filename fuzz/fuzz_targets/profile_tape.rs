//! Fuzzes the profiler's tape scanner against serde_json: for any text, profiling it through the
//! fast path (`add_json`) and through serde_json alone (`add_json_by_serde`) must give the same
//! id, the same error and the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemascope_core::ProfileBuilder;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut fast = ProfileBuilder::new().capture_ids();
    let mut reference = ProfileBuilder::new().capture_ids();
    let id = |id: Option<schemascope_core::ItemId>| id.map(|id| id.resolve(text).to_string());
    let ours = fast.add_json(text).map(id).map_err(|e| e.to_string());
    let theirs = reference.add_json_by_serde(text).map(id).map_err(|e| e.to_string());
    assert_eq!(ours, theirs, "different outcome for {text:?}");
    if ours.is_ok() {
        let ours = serde_json::to_value(fast.finish(1)).expect("serializable");
        let theirs = serde_json::to_value(reference.finish(1)).expect("serializable");
        assert!(ours == theirs, "different profiles for {text:?}");
    }
});
