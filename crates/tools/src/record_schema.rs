//! query_schema and validate_value: the JSON Schema of a record (from all its values) or of a
//! collection, with metadata and an example; and checking a proposed value against it.

use chrono::{SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use schemascope_core::display::{Cuts, DisplayLimits, shorten};
use schemascope_core::json_schema::{infer_schema, schema_of};
use schemascope_core::validate::validate;
use schemascope_core::{Collection, CollectionKind, CollectionProfile};
use std::sync::Arc;

use schemascope_sources::Source;
use schemascope_sources::aimdb::Snapshot;
use schemascope_sources::sql::rows;
use schemascope_sources::stream_schema::StreamedSchema;

use crate::params::{QuerySchemaParams, ValidateValueParams};
use crate::record_live;
use crate::resolve;
use crate::result::{ToolError, ToolResult, envelope};
use crate::services::Services;

/// What a schema is of.
struct Target<'a> {
    collection: &'a Collection,
    record: Option<String>,
    profile: &'a CollectionProfile,
}

fn target<'a>(
    sources: &crate::Sources,
    source: &'a Source,
    collection: Option<&str>,
    record: Option<&str>,
) -> Result<Target<'a>, ToolError> {
    let named = match collection {
        Some(name) => Some(resolve::one(source, Some(name))?),
        None => None,
    };
    let record = record.map(str::to_string).or_else(|| named.as_ref().and_then(|(_, r)| r.clone()));
    match record {
        Some(record) => {
            let found = resolve::record(source, named.as_ref().map(|(c, _)| *c), &record)?;
            Ok(Target {
                collection: found.collection,
                record: Some(found.key),
                profile: found.profile,
            })
        }
        None => {
            let c = match named {
                Some((c, _)) => c,
                None => source
                    .collections
                    .iter()
                    .find(|c| c.kind() == CollectionKind::Records)
                    .or_else(|| source.collection("nodes"))
                    .or_else(|| source.collections.first())
                    .ok_or_else(|| {
                        ToolError::UnknownCollection(format!(
                            "source `{}` has no collections",
                            source.name()
                        ))
                    })?,
            };
            // A record set's records are different things (a temperature, a config): their merged
            // profile is the schema of none of them, and would call `{"zzz": 1}` valid.
            if c.kind() == CollectionKind::Records {
                match c.record_profiles() {
                    [(key, profile)] => {
                        return Ok(Target { collection: c, record: Some(key.clone()), profile });
                    }
                    [] => {}
                    several => {
                        let keys: Vec<&str> = several.iter().map(|(k, _)| k.as_str()).collect();
                        return Err(resolve::record_required(source, c.name(), &keys));
                    }
                }
            }
            Ok(Target { collection: c, record: None, profile: sources.ready_profile(source, c)? })
        }
    }
}

/// The latest value and metadata of a record, or the first item of a collection (the first row,
/// in key order, of a table).
fn example_and_metadata(source: &Source, t: &Target<'_>) -> (Option<Value>, Value) {
    if let (Some(table), Some(db)) = (t.collection.table(), &source.database) {
        let example = rows::first_rows(&**db, table, 1).ok().and_then(|mut r| r.pop());
        let meta = json!({
            "collection": t.collection.name(),
            "kind": t.collection.kind(),
            "table_kind": table.kind,
            "row_count": t.collection.len(),
            "primary_key": table.primary_key,
            "foreign_keys": table.foreign_keys,
            "columns": table.columns,
            "comment": table.comment,
        });
        return (example, meta);
    }
    match &t.record {
        Some(record) => {
            // One pass: the latest value, and the latest metadata (not every line carries it).
            let mut latest = None;
            let mut metadata = None;
            for item in t.collection.items().filter(|i| i.id == record) {
                if item.metadata_json.is_some() {
                    metadata = Some(item);
                }
                latest = Some(item);
            }
            let metadata = metadata.and_then(|i| i.metadata());
            let mut meta = match metadata {
                Some(Value::Object(m)) => m,
                Some(other) => Map::from_iter([("metadata".to_string(), other)]),
                None => Map::new(),
            };
            meta.insert("value_count".into(), json!(t.profile.item_count));
            meta.insert("collection".into(), json!(t.collection.name()));
            (latest.and_then(|i| i.value().ok()), Value::Object(meta))
        }
        None => {
            let first = t.collection.item(0).and_then(|i| i.value().ok());
            let meta = json!({"collection": t.collection.name(), "kind": t.collection.kind(), "item_count": t.collection.item_count()});
            (first, meta)
        }
    }
}

/// A record value as an answer shows it (an example, what a write sent or holds): strings past
/// 200 characters, arrays past 50 elements and nesting past 20 levels cut.
pub(crate) fn shown(value: &Value) -> Value {
    let limits = DisplayLimits { max_string: 200, max_depth: 20, max_array: 50 };
    shorten(value, &limits, &mut Cuts::default())
}

/// query_schema.
pub fn query_schema(services: &Services, params: QuerySchemaParams) -> ToolResult {
    envelope(run_query(services, params))
}

fn run_query(services: &Services, params: QuerySchemaParams) -> Result<ToolResult, ToolError> {
    record_live::sampling(params.samples, params.window_ms)?;
    let source = services.sources.get(params.source.as_deref())?;
    if let Some(snapshot) = source.aimdb.clone()
        && let Some(name) = record_live::named(
            &source,
            &snapshot,
            params.collection.as_deref(),
            params.record_name.as_deref(),
        )?
    {
        return live_query(services, &source, &snapshot, &name, &params);
    }
    let t = target(
        &services.sources,
        &source,
        params.collection.as_deref(),
        params.record_name.as_deref(),
    )?;
    let (example, metadata) = example_and_metadata(&source, &t);
    Ok(schema_answer(
        SchemaAnswer {
            record: t.record.clone(),
            collection: t.collection.name(),
            schema: infer_schema(t.profile),
            metadata,
            inferred_from: t.profile.item_count,
        },
        example,
        params.include_example,
    ))
}

/// What query_schema answers about a collection or a record, besides its example.
struct SchemaAnswer<'a> {
    record: Option<String>,
    collection: &'a str,
    schema: Value,
    metadata: Value,
    inferred_from: u64,
}

/// query_schema's answer: the schema, its metadata and (unless left out) the example, shortened.
fn schema_answer(
    answer: SchemaAnswer<'_>,
    example: Option<Value>,
    include_example: Option<bool>,
) -> ToolResult {
    let name = answer.record.clone().unwrap_or_else(|| answer.collection.to_string());
    let mut data = json!({
        "record_name": answer.record,
        "collection": answer.collection,
        "schema": answer.schema,
        "metadata": answer.metadata,
        "inferred_at": Utc::now().to_rfc3339_opts(SecondsFormat::Nanos, true),
        "inferred_from": answer.inferred_from,
    });
    if include_example.unwrap_or(true) {
        data["example"] = example.as_ref().map_or(Value::Null, shown);
    }
    let required = schema_required(&data["schema"]);
    ToolResult::ok(
        format!("Schema of '{name}' inferred from {} value(s){required}.", answer.inferred_from),
        data,
    )
}

/// query_schema on an NDJSON document file streamed for its schema alone
/// ([`schemascope_sources::stream_schema`]): the answer query_schema gives on the file loaded
/// for its profile, without computing the profile.
pub fn query_schema_streamed(
    streamed: &StreamedSchema,
    include_example: Option<bool>,
) -> ToolResult {
    let items = streamed.facts.item_count;
    // As a streamed collection's metadata: its name, kind and how many documents it stands for.
    let metadata = json!({
        "collection": streamed.name,
        "kind": CollectionKind::Documents,
        "item_count": items,
    });
    let example = streamed.example.as_deref().and_then(|text| serde_json::from_str(text).ok());
    schema_answer(
        SchemaAnswer {
            record: None,
            collection: &streamed.name,
            schema: schema_of(&streamed.facts),
            metadata,
            inferred_from: items,
        },
        example,
        include_example,
    )
}

/// query_schema on a live AimDB record: the seed's fields, with the schema merged over several
/// values and the counts of where they came from.
fn live_query(
    services: &Services,
    source: &Arc<Source>,
    snapshot: &Snapshot,
    name: &str,
    params: &QuerySchemaParams,
) -> Result<ToolResult, ToolError> {
    let merged =
        record_live::merge(services, source, snapshot, name, params.samples, params.window_ms)?;
    let schema = infer_schema(&merged.profile);
    let count = merged.values.len();
    let mut data = json!({
        "record_name": merged.key,
        "type_name": merged.metadata.get("name"),
        "collection": source.collections.first().map(|c| c.name()),
        "schema": schema,
        "metadata": merged.metadata,
        "inferred_at": Utc::now().to_rfc3339_opts(SecondsFormat::Nanos, true),
        "inferred_from": count,
        "values_merged": count,
        "sampling": merged.sampling,
    });
    if params.include_example.unwrap_or(true) {
        data["example"] = merged.values.last().map_or(Value::Null, |e| shown(&e.parse_sample()));
    }
    let alias = if name == merged.key { String::new() } else { format!(" (asked as '{name}')") };
    let required = schema_required(&data["schema"]);
    Ok(ToolResult::ok(
        format!(
            "Schema of live record '{}'{alias} merged over {count} value(s){required}.",
            merged.key
        ),
        data,
    ))
}

fn schema_required(schema: &Value) -> String {
    match schema.get("required").and_then(Value::as_array) {
        Some(fields) if !fields.is_empty() => {
            // A record of thousands of keys would make the message longer than the schema.
            const LISTED: usize = 20;
            let names: Vec<&str> = fields.iter().filter_map(Value::as_str).take(LISTED).collect();
            let more = fields.len().saturating_sub(LISTED);
            let more = if more > 0 {
                format!(" (+{more} more, in the schema's `required`)")
            } else {
                String::new()
            };
            format!("; required: {}{more}", names.join(", "))
        }
        _ => String::new(),
    }
}

/// validate_value.
pub fn validate_value(services: &Services, params: ValidateValueParams) -> ToolResult {
    envelope(run_validate(services, params))
}

fn run_validate(services: &Services, params: ValidateValueParams) -> Result<ToolResult, ToolError> {
    record_live::sampling(params.samples, params.window_ms)?;
    let source = services.sources.get(params.source.as_deref())?;
    if let Some(snapshot) = source.aimdb.clone()
        && let Some(name) = record_live::named(
            &source,
            &snapshot,
            params.collection.as_deref(),
            params.record_name.as_deref(),
        )?
    {
        let merged = record_live::merge(
            services,
            &source,
            &snapshot,
            &name,
            params.samples,
            params.window_ms,
        )?;
        // AimDB reads the value into the record's Rust type: an integer written as a float fails.
        let schema = infer_schema(&merged.profile);
        let report = crate::record_write::integers::validate_for_aimdb(&schema, &params.value)?;
        let collection =
            source.collections.first().map(|c| c.name().to_string()).unwrap_or_default();
        return Ok(validation_result(
            report,
            &merged.key,
            Some(merged.key.clone()),
            &collection,
            Some(merged.values.len()),
        ));
    }
    let t = target(
        &services.sources,
        &source,
        params.collection.as_deref(),
        params.record_name.as_deref(),
    )?;
    let schema = infer_schema(t.profile);
    let report = validate(&schema, &params.value)?;
    let name = t.record.clone().unwrap_or_else(|| t.collection.name().to_string());
    Ok(validation_result(report, &name, t.record.clone(), t.collection.name(), None))
}

/// The validate_value answer for `report` against `name`'s schema.
fn validation_result(
    report: schemascope_core::validate::ValidationReport,
    name: &str,
    record: Option<String>,
    collection: &str,
    merged: Option<usize>,
) -> ToolResult {
    let message = if report.valid && report.warnings.is_empty() {
        format!("The value is valid for '{name}'.")
    } else if report.valid {
        format!(
            "The value is valid for '{name}', with {} warning(s): {}.",
            report.warnings.len(),
            report.warnings[0].error
        )
    } else {
        format!(
            "The value is invalid for '{name}': {} error(s), first at {}: {}.",
            report.errors.len(),
            if report.errors[0].path.is_empty() { "/" } else { &report.errors[0].path },
            report.errors[0].error
        )
    };
    let mut data = json!(report);
    data["record_name"] = json!(record);
    data["collection"] = json!(collection);
    if let Some(merged) = merged {
        data["values_merged"] = json!(merged);
    }
    ToolResult::ok(message, data)
}
