//! Shared helpers for the tool tests: registries over the demo data and temporary files.

use schemascope_sources::{NoProgress, SourceSpec};
use schemascope_tools::{Services, ToolResult};

/// A registry serving the given specs.
pub(crate) fn registry(specs: &[&str]) -> Services {
    let registry = Services::new();
    let specs: Vec<SourceSpec> = specs.iter().map(|s| s.parse().expect("valid spec")).collect();
    registry.sources.load(&specs, &NoProgress).expect("sources load");
    registry
}

/// The demo graph and record set.
pub(crate) fn demo() -> Services {
    registry(&["demo:infrastructure", "demo:sensors"])
}

/// Asserts success and returns the data.
pub(crate) fn ok(result: ToolResult) -> serde_json::Value {
    assert!(result.success, "tool failed: {}", result.message);
    result.data
}
