//! The schema resources: `schema://<source>`, the markdown schema summary of each source.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError,
    model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use schemascope_tools::{Registry, ToolError};
use serde_json::json;

/// The URI scheme of schema resources.
pub(crate) const SCHEME: &str = "schema://";

/// The MIME type of schema resources.
pub(crate) const MIME_TYPE: &str = "text/markdown";

/// `schema://<source>`.
pub(crate) fn uri_for(source: &str) -> String {
    format!("{SCHEME}{source}")
}

/// The source named by a schema URI, if it is one.
pub(crate) fn source_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME).map(|rest| rest.trim_end_matches('/')).filter(|name| !name.is_empty())
}

/// The URIs of every source's schema resource.
pub(crate) fn known_uris(registry: &Registry) -> Vec<String> {
    registry.names().iter().map(|name| uri_for(name)).collect()
}

/// One resource per source.
pub(crate) fn list(registry: &Registry) -> Vec<Resource> {
    registry
        .names()
        .into_iter()
        .map(|name| {
            Resource::new(uri_for(&name), name.clone())
                .with_title(format!("Schema of {name}"))
                .with_description(format!(
                    "Markdown summary of the schema of source `{name}`: collections, properties with types, \
                     presence, enums, ranges and samples. Updated when the source's file changes."
                ))
                .with_mime_type(MIME_TYPE)
        })
        .collect()
}

/// The template `schema://{source}`.
pub(crate) fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCHEME}{{source}}"), "schema")
        .with_title("Schema of a source")
        .with_description("Markdown summary of the schema of a source; `source` is a name from list_sources.")
        .with_mime_type(MIME_TYPE)
}

/// The not-found error for `uri`, listing what exists.
fn not_found(registry: &Registry, uri: &str, detail: Option<String>) -> McpError {
    let available = known_uris(registry);
    let detail = detail.map(|d| format!(" {d}")).unwrap_or_default();
    McpError::resource_not_found(
        format!("Unknown resource `{uri}`.{detail} Available resources: {}", available.join(", ")),
        Some(json!({ "uri": uri, "available": available })),
    )
}

/// Fails unless `uri` is the schema resource of a served source.
pub(crate) fn check_known(registry: &Registry, uri: &str) -> Result<(), McpError> {
    match source_of(uri) {
        Some(name) if registry.names().iter().any(|n| n == name) => Ok(()),
        _ => Err(not_found(registry, uri, None)),
    }
}

/// Reads `schema://<source>`: the markdown schema summary (computed off the async runtime).
pub(crate) async fn read(registry: Arc<Registry>, uri: String) -> Result<ReadResourceResult, McpError> {
    check_known(&registry, &uri)?;
    let Some(name) = source_of(&uri).map(str::to_string) else {
        return Err(not_found(&registry, &uri, None));
    };
    let worker = registry.clone();
    let markdown = tokio::task::spawn_blocking(move || schemascope_tools::schema_markdown(&worker, &name, None))
        .await
        .map_err(|error| McpError::internal_error(format!("reading `{uri}` failed unexpectedly: {error}"), None))?;
    match markdown {
        Ok(markdown) => Ok(ReadResourceResult::new(vec![ResourceContents::text(markdown, uri).with_mime_type(MIME_TYPE)])),
        Err(error @ ToolError::UnknownSource(_)) => Err(not_found(&registry, &uri, Some(error.to_string()))),
        Err(error) => Err(McpError::internal_error(format!("cannot render `{uri}`: {error}"), Some(json!({ "uri": uri, "error": error.kind() })))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        assert_eq!(uri_for("infrastructure"), "schema://infrastructure");
        assert_eq!(source_of("schema://infrastructure"), Some("infrastructure"));
        assert_eq!(source_of("schema://"), None);
        assert_eq!(source_of("file:///x"), None);
    }

    #[test]
    fn unknown_uri_lists_available() {
        let registry = Registry::new();
        let Err(error) = check_known(&registry, "schema://nope") else { panic!("unknown must fail") };
        assert!(error.message.contains("schema://nope"));
    }
}
