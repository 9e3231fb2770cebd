//! The full profile report: describe_schema, then describe_property for every property and
//! query_schema for every collection, in one answer. What `schemascope profile` prints, and
//! what the benchmark times.

use serde_json::{Value, json};

use crate::params::{DescribePropertyParams, DescribeSchemaParams, QuerySchemaParams};
use crate::result::ToolResult;
use crate::services::Services;
use crate::{describe_property, describe_schema, query_schema};

/// Every property of every collection of a source, in depth, plus each collection's JSON Schema.
pub fn profile_report(services: &Services, source: Option<String>) -> ToolResult {
    let summary = describe_schema(
        &services.sources,
        DescribeSchemaParams { source: source.clone(), ..Default::default() },
    );
    if !summary.success {
        return summary;
    }
    let name = summary.data["source"].as_str().map(str::to_string);
    let mut collections = Vec::new();
    let mut described = 0usize;
    for collection in summary.data["collections"].as_array().into_iter().flatten() {
        let collection_name = collection["name"].as_str().unwrap_or_default().to_string();
        let properties: Vec<Value> = collection["properties"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["path"].as_str())
            .map(|path| {
                let params = DescribePropertyParams {
                    source: name.clone(),
                    property: path.to_string(),
                    collection: Some(collection_name.clone()),
                    ..Default::default()
                };
                describe_property(services, params).data
            })
            .collect();
        described += properties.len();
        let schema = query_schema(
            services,
            QuerySchemaParams {
                source: name.clone(),
                collection: Some(collection_name.clone()),
                ..Default::default()
            },
        );
        collections.push(json!({"name": collection_name, "summary": collection, "properties": properties, "schema": schema.data}));
    }
    ToolResult::ok(
        format!(
            "Profiled {described} properties in {} collection(s) of `{}`.",
            collections.len(),
            name.unwrap_or_default()
        ),
        json!({"source": summary.data["source"], "collections": collections, "warnings": summary.data["warnings"]}),
    )
}
