//! validate_value (seed 004's "future" tool): checks a proposed value against an inferred schema
//! and reports every problem with its JSON path, what was expected and what was found.
//!
//! Structural problems (wrong type, missing required member) are errors and make the value
//! invalid. Problems against *observed* bounds — outside the seen minimum/maximum, a string not
//! among the seen enum values, a member never seen before — are warnings: the schema was inferred
//! from data, so a new value may legitimately go beyond it, but an LLM should look twice (72 in a
//! field that has only held 18–26 is likely °F sent to a °C field).

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::CoreError;
use crate::suggest::closest;

/// How serious an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The value does not have the inferred structure.
    Error,
    /// The value goes beyond what was observed.
    Warning,
}

/// One problem with a proposed value.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationIssue {
    /// JSON Pointer to the offending value (`/celsius`); for a missing member, where it belongs.
    pub path: String,
    /// The member name concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The JSON Schema keyword that failed (`type`, `required`, `maximum`, …).
    pub keyword: String,
    /// What the schema expects.
    pub expected: Value,
    /// What the value has.
    pub actual: Value,
    /// A sentence for the reader.
    pub error: String,
    /// Error or warning.
    pub severity: Severity,
}

/// The result of validating one value.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationReport {
    /// True when there are no errors (warnings allowed).
    pub valid: bool,
    /// Structural problems.
    pub errors: Vec<ValidationIssue>,
    /// Values beyond what was observed.
    pub warnings: Vec<ValidationIssue>,
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn last_field(pointer: &str) -> Option<String> {
    pointer.rsplit('/').next().filter(|s| !s.is_empty() && s.parse::<usize>().is_err()).map(|s| s.replace("~1", "/").replace("~0", "~"))
}

/// Follows a JSON Pointer into `schema` (for the `type` a failing location asked for).
fn schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    schema.pointer(pointer)
}

/// Validates `value` against `schema` (draft 2020-12).
pub fn validate(schema: &Value, value: &Value) -> Result<ValidationReport, CoreError> {
    let validator = jsonschema::draft202012::new(schema).map_err(|e| CoreError::SchemaCompile(e.to_string()))?;
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for error in validator.iter_errors(value) {
        use jsonschema::error::ValidationErrorKind as K;
        let path = error.instance_path().to_string();
        let instance = error.instance().clone().into_owned();
        let schema_path = error.schema_path().to_string();
        let parent_schema = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
        let (keyword, expected, actual, severity, text) = match error.kind() {
            K::Type { .. } => {
                let expected = schema_at(schema, &format!("{parent_schema}/type")).cloned().unwrap_or(Value::Null);
                let text = format!("Expected {}, got {}", type_words(&expected), json_type(&instance));
                ("type", expected, json!(json_type(&instance)), Severity::Error, text)
            }
            K::Required { property } => {
                let name = property.as_str().unwrap_or_default().to_string();
                let field_path = format!("{path}/{}", name.replace('~', "~0").replace('/', "~1"));
                let issue = ValidationIssue {
                    path: field_path,
                    field: Some(name.clone()),
                    keyword: "required".into(),
                    expected: json!("present"),
                    actual: json!("missing"),
                    error: format!("Required field '{name}' missing"),
                    severity: Severity::Error,
                };
                errors.push(issue);
                continue;
            }
            K::Enum { options } => {
                let mut text = format!("{} is not one of the observed values {}", instance, options);
                if let (Some(wanted), Some(list)) = (instance.as_str(), options.as_array()) {
                    let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
                    if let Some(best) = closest(wanted, names, 1).first() {
                        text.push_str(&format!(" (did you mean \"{best}\"?)"));
                    }
                }
                ("enum", (**options).clone(), instance, Severity::Warning, text)
            }
            K::Minimum { limit } => (
                "minimum",
                json!(format!(">= {limit}")),
                instance.clone(),
                Severity::Warning,
                format!("{instance} is below the smallest observed value {limit}"),
            ),
            K::Maximum { limit } => (
                "maximum",
                json!(format!("<= {limit}")),
                instance.clone(),
                Severity::Warning,
                format!("{instance} is above the largest observed value {limit}"),
            ),
            K::Format { format } => ("format", json!(format), instance.clone(), Severity::Error, format!("{instance} is not a valid {format}")),
            _ => {
                let keyword = schema_path.rsplit('/').next().unwrap_or("schema").to_string();
                let text = error.to_string();
                errors.push(ValidationIssue {
                    path: path.clone(),
                    field: last_field(&path),
                    keyword,
                    expected: Value::Null,
                    actual: instance,
                    error: text,
                    severity: Severity::Error,
                });
                continue;
            }
        };
        let issue = ValidationIssue { field: last_field(&path), path, keyword: keyword.into(), expected, actual, error: text, severity };
        match severity {
            Severity::Error => errors.push(issue),
            Severity::Warning => warnings.push(issue),
        }
    }
    unexpected_members(schema, value, "", &mut warnings);
    Ok(ValidationReport { valid: errors.is_empty(), errors, warnings })
}

fn type_words(expected: &Value) -> String {
    match expected {
        Value::String(s) => s.clone(),
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ => "another type".into(),
    }
}

/// Members the schema has never seen: not wrong (the schema is open), but often a typo.
fn unexpected_members(schema: &Value, value: &Value, pointer: &str, out: &mut Vec<ValidationIssue>) {
    match value {
        Value::Object(members) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
            for (key, member) in members {
                let member_pointer = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                match properties.get(key) {
                    Some(member_schema) => unexpected_members(member_schema, member, &member_pointer, out),
                    None => {
                        let suggestion = closest(key, properties.keys().map(String::as_str), 1);
                        let mut text = format!("Field '{key}' was never observed");
                        if let Some(best) = suggestion.first() {
                            text.push_str(&format!(" (did you mean '{best}'?)"));
                        }
                        out.push(ValidationIssue {
                            path: member_pointer,
                            field: Some(key.clone()),
                            keyword: "properties".into(),
                            expected: json!(properties.keys().collect::<Vec<_>>()),
                            actual: json!(key),
                            error: text,
                            severity: Severity::Warning,
                        });
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    unexpected_members(item_schema, item, &format!("{pointer}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temperature_schema() -> Value {
        json!({
            "$schema": crate::json_schema::DIALECT,
            "type": "object",
            "properties": {
                "celsius": {"type": "number", "minimum": 18.0, "maximum": 26.0},
                "sensor_id": {"type": "string"},
                "timestamp": {"type": "number"}
            },
            "required": ["celsius", "sensor_id", "timestamp"]
        })
    }

    #[test]
    fn reports_every_error_with_path_expected_and_actual() {
        let report = validate(&temperature_schema(), &json!({"celsius": "not a number", "sensor_id": 123})).expect("validates");
        assert!(!report.valid);
        let by_path = |p: &str| report.errors.iter().find(|e| e.path == p).unwrap_or_else(|| panic!("{p}: {:?}", report.errors));
        assert_eq!(by_path("/celsius").expected, json!("number"));
        assert_eq!(by_path("/celsius").actual, json!("string"));
        assert_eq!(by_path("/sensor_id").expected, json!("string"));
        assert_eq!(by_path("/timestamp").keyword, "required");
        assert_eq!(report.errors.len(), 3);
    }

    #[test]
    fn out_of_range_and_unknown_fields_are_warnings_with_suggestions() {
        let report = validate(&temperature_schema(), &json!({"celsius": 72, "sensor_id": "s", "timestamp": 1, "sensorid": "x"})).expect("validates");
        assert!(report.valid);
        assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
        assert!(report.warnings.iter().any(|w| w.keyword == "maximum" && w.path == "/celsius"));
        let unknown = report.warnings.iter().find(|w| w.keyword == "properties").expect("unknown field");
        assert!(unknown.error.contains("did you mean 'sensor_id'"), "{}", unknown.error);
    }
}
