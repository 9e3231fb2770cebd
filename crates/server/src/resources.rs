//! The schema resources: `schema://<source>`, the markdown schema summary of each source, and
//! for live AimDB sources `schema://<source>/<record key>`, the JSON Schema of one record (the
//! resource whose update notifications tell a client that record changed).

use rmcp::{
    ErrorData as McpError,
    model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use schemascope_tools::{Services, ToolError};
use serde_json::json;

/// The URI scheme of schema resources.
pub(crate) const SCHEME: &str = "schema://";

/// The MIME type of schema resources.
pub(crate) const MIME_TYPE: &str = "text/markdown";

/// The MIME type of a record's schema resource.
pub(crate) const RECORD_MIME_TYPE: &str = "application/schema+json";

/// `schema://<source>`.
pub(crate) fn uri_for(source: &str) -> String {
    format!("{SCHEME}{source}")
}

/// `schema://<source>/<record key>`.
pub(crate) fn record_uri(source: &str, key: &str) -> String {
    format!("{SCHEME}{source}/{key}")
}

/// The source and, for a record's resource, the record key a schema URI names. Source names
/// cannot hold `/`, so everything after the first one is the key (keys may hold `/`).
pub(crate) fn target_of(uri: &str) -> Option<(&str, Option<&str>)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (source, record) = match rest.split_once('/') {
        Some((source, record)) => (source, Some(record).filter(|r| !r.is_empty())),
        None => (rest, None),
    };
    (!source.is_empty()).then_some((source, record))
}

/// The record keys of a live AimDB source (none for other sources).
pub(crate) fn record_keys(services: &Services, source: &str) -> Vec<String> {
    let Ok(source) = services.sources.get(Some(source)) else { return Vec::new() };
    source
        .aimdb
        .as_ref()
        .map(|s| s.keys().into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The URIs of every source's schema resource, and of every live record's.
pub(crate) fn known_uris(services: &Services) -> Vec<String> {
    let mut uris = Vec::new();
    for name in services.sources.names() {
        uris.push(uri_for(&name));
        uris.extend(record_keys(services, &name).iter().map(|key| record_uri(&name, key)));
    }
    uris
}

/// One resource per source, and one per record of a live AimDB source.
pub(crate) fn list(services: &Services) -> Vec<Resource> {
    let mut resources = Vec::new();
    for source in services.sources.sources() {
        let name = source.name().to_string();
        let about = source.spec.description.as_deref().map_or(String::new(), |d| format!("{d} — "));
        resources.push(
            Resource::new(uri_for(&name), name.clone())
                .with_title(format!("Schema of {name}"))
                .with_description(format!(
                    "{about}Markdown summary of the schema of source `{name}`: collections, properties with types, \
                     presence, enums, ranges and samples. Updated when the source changes."
                ))
                .with_mime_type(MIME_TYPE),
        );
        for key in record_keys(services, &name) {
            resources.push(
                Resource::new(record_uri(&name, &key), format!("{name}/{key}"))
                    .with_title(format!("Schema of record {key}"))
                    .with_description(format!(
                        "query_schema of live AimDB record `{key}` (JSON): its JSON Schema merged over its recent values, \
                         its metadata and an example. Updated whenever the record gets a new value."
                    ))
                    .with_mime_type(RECORD_MIME_TYPE),
            );
        }
    }
    resources
}

/// One page of `resources` from `cursor` (the offset of its first, as text; none: the first
/// page), and the cursor of the next page when there is one.
pub(crate) fn page(
    resources: Vec<Resource>,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<Resource>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(text) => {
            text.parse::<usize>().ok().filter(|&at| at <= resources.len()).ok_or_else(|| {
                McpError::invalid_params(
                    format!("unknown cursor `{text}`; list again from the first page (no cursor)"),
                    None,
                )
            })?
        }
    };
    let end = start.saturating_add(size).min(resources.len());
    let next = (end < resources.len()).then(|| end.to_string());
    let page = resources.into_iter().skip(start).take(end - start).collect();
    Ok((page, next))
}

/// The templates `schema://{source}` and `schema://{source}/{record}`.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SCHEME}{{source}}"), "schema")
            .with_title("Schema of a source")
            .with_description("Markdown summary of the schema of a source; `source` is a name from list_sources.")
            .with_mime_type(MIME_TYPE),
        ResourceTemplate::new(format!("{SCHEME}{{source}}/{{record}}"), "record-schema")
            .with_title("Schema of a live record")
            .with_description("JSON Schema of one record of a live AimDB source, merged over its recent values; `record` is its key.")
            .with_mime_type(RECORD_MIME_TYPE),
    ]
}

/// The not-found error for `uri`, listing what exists.
fn not_found(services: &Services, uri: &str, detail: Option<String>) -> McpError {
    let available = known_uris(services);
    let detail = detail.map(|d| format!(" {d}")).unwrap_or_default();
    McpError::resource_not_found(
        format!("Unknown resource `{uri}`.{detail} Available resources: {}", available.join(", ")),
        Some(json!({ "uri": uri, "available": available })),
    )
}

/// Fails unless `uri` is the schema resource of a served source or live record.
pub(crate) fn check_known(services: &Services, uri: &str) -> Result<(), McpError> {
    match target_of(uri) {
        Some((name, None)) if services.sources.names().iter().any(|n| n == name) => Ok(()),
        Some((name, Some(key))) if record_keys(services, name).iter().any(|k| k == key) => Ok(()),
        _ => Err(not_found(services, uri, None)),
    }
}

/// Reads `schema://<source>`: the markdown schema summary (computed off the async runtime).
pub(crate) async fn read(
    services: Services,
    uri: String,
    timeout: Option<std::time::Duration>,
) -> Result<ReadResourceResult, McpError> {
    check_known(&services, &uri)?;
    let Some((name, record)) = target_of(&uri).map(|(s, r)| (s.to_string(), r.map(str::to_string)))
    else {
        return Err(not_found(&services, &uri, None));
    };
    if let Some(record) = record {
        return read_record(services, uri, name, record).await;
    }
    let worker = services.clone();
    // Under a token, like a tool call: the tables' profiles it computes stop with the request
    // (its timeout, or its client going away), instead of running on unseen.
    let joined = match crate::cancel::run_blocking(timeout, move || {
        schemascope_tools::schema_markdown(&worker.sources, &name, None)
    })
    .await
    {
        crate::cancel::Ended::Finished(joined) => joined,
        crate::cancel::Ended::Stopped { reason, during, .. } => {
            let during = during.map(|step| format!(" while {step}")).unwrap_or_default();
            return Err(McpError::internal_error(
                format!("reading `{uri}` was stopped{during}: {reason}"),
                Some(json!({"uri": uri, "error": "cancelled", "reason": reason})),
            ));
        }
    };
    let markdown = joined.map_err(|error| {
        McpError::internal_error(format!("reading `{uri}` failed unexpectedly: {error}"), None)
    })?;
    match markdown {
        Ok(markdown) => Ok(ReadResourceResult::new(vec![
            ResourceContents::text(markdown, uri).with_mime_type(MIME_TYPE),
        ])),
        Err(error @ ToolError::UnknownSource(_)) => {
            Err(not_found(&services, &uri, Some(error.to_string())))
        }
        Err(error) => Err(McpError::internal_error(
            format!("cannot render `{uri}`: {error}"),
            Some(json!({ "uri": uri, "error": error.kind() })),
        )),
    }
}

/// Reads `schema://<source>/<record>`: query_schema of the record from the values seen and its
/// current one (no waiting window), as JSON.
async fn read_record(
    services: Services,
    uri: String,
    source: String,
    record: String,
) -> Result<ReadResourceResult, McpError> {
    let params = schemascope_tools::QuerySchemaParams {
        source: Some(source),
        record_name: Some(record),
        window_ms: Some(0),
        ..Default::default()
    };
    let result =
        tokio::task::spawn_blocking(move || schemascope_tools::query_schema(&services, params))
            .await
            .map_err(|error| {
                McpError::internal_error(
                    format!("reading `{uri}` failed unexpectedly: {error}"),
                    None,
                )
            })?;
    if !result.success {
        return Err(McpError::internal_error(
            format!("cannot read `{uri}`: {}", result.message),
            Some(json!({ "uri": uri, "error": result.data })),
        ));
    }
    let text = serde_json::to_string_pretty(&result.data).unwrap_or_default();
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(RECORD_MIME_TYPE),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        assert_eq!(uri_for("infrastructure"), "schema://infrastructure");
        assert_eq!(target_of("schema://infrastructure"), Some(("infrastructure", None)));
        assert_eq!(target_of("schema://"), None);
        assert_eq!(target_of("file:///x"), None);
        assert_eq!(
            target_of("schema://plant/sensors/temp/vienna"),
            Some(("plant", Some("sensors/temp/vienna")))
        );
        assert_eq!(target_of("schema://plant/"), Some(("plant", None)));
        assert_eq!(record_uri("plant", "sensors.outdoor"), "schema://plant/sensors.outdoor");
    }

    #[test]
    fn unknown_uri_lists_available() {
        let services = Services::new();
        let Err(error) = check_known(&services, "schema://nope") else {
            panic!("unknown must fail")
        };
        assert!(error.message.contains("schema://nope"));
    }
}
