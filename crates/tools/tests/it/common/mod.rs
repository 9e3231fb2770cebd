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

/// The Chinook SQLite file of testdata, as the source `chinook`.
pub(crate) fn chinook_spec() -> String {
    format!(
        "chinook={}",
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/chinook/Chinook_Sqlite.sqlite")
            .display()
    )
}

/// Chinook served from SQLite (`chinook`), and from PostgreSQL (`pg`, its read-only user) when
/// the test server is there; each name with whether it is PostgreSQL.
pub(crate) fn chinooks() -> (Services, Vec<(&'static str, bool)>) {
    let mut specs = vec![chinook_spec()];
    let mut names = vec![("chinook", false)];
    let uri = std::env::var("SCHEMASCOPE_TEST_POSTGRES_RO")
        .or_else(|_| std::env::var("SCHEMASCOPE_TEST_POSTGRES"));
    if let Ok(uri) = uri {
        specs.push(format!("pg={uri}"));
        names.push(("pg", true));
    }
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    (registry(&specs), names)
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
