//! validate_value (seed 004's "future" tool): checks a proposed value against an inferred schema
//! and reports every problem with its JSON path, what was expected and what was found.
//!
//! Errors are exactly what a standard draft 2020-12 validator reports against the schema as
//! published (formats not asserted, unknown keywords ignored), so `valid` agrees with any
//! independent validator: for an inferred schema, a wrong type or a missing required member.
//! What goes beyond the *observations* — outside the [`OBSERVED`] minimum/maximum, a string not
//! among the observed values, a string not of the observed `format`, a member never seen — is a
//! warning: a new value may legitimately go there, but an LLM should look twice (72 in a field
//! that has only held 18–26 is likely °F sent to a °C field).

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::CoreError;
use crate::json_schema::OBSERVED;
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
    pointer
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty() && s.parse::<usize>().is_err())
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
}

/// Follows a JSON Pointer into `schema` (for the `type` a failing location asked for).
fn schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    schema.pointer(pointer)
}

/// Validates `value` against `schema` (draft 2020-12): errors from the schema's assertions,
/// warnings from its observations.
pub fn validate(schema: &Value, value: &Value) -> Result<ValidationReport, CoreError> {
    let compile = |schema: &Value, formats: bool| {
        jsonschema::draft202012::options()
            .should_validate_formats(formats)
            .with_format(
                crate::profile::formats::StringFormat::LocalDateTime.name(),
                crate::profile::formats::is_local_date_time,
            )
            // The profile's own check, so a schema's `format: email` and validation agree.
            .with_format(
                crate::profile::formats::StringFormat::Email.name(),
                crate::profile::formats::is_email,
            )
            .build(schema)
            .map_err(|e| CoreError::SchemaCompile(e.to_string()))
    };
    let mut errors = Vec::new();
    for error in compile(schema, false)?.iter_errors(value) {
        errors.push(issue(schema, &error, Severity::Error));
    }
    // The observations asserted: each failure of a keyword the published schema does not assert
    // is a warning, unless the location already has an error (a wrong type is not also "unseen").
    let observing = observations_asserted(schema);
    let mut warnings = Vec::new();
    for error in compile(&observing, true)?.iter_errors(value) {
        use jsonschema::error::ValidationErrorKind as K;
        if !matches!(
            error.kind(),
            K::Minimum { .. } | K::Maximum { .. } | K::Enum { .. } | K::Format { .. }
        ) {
            continue;
        }
        let issue = issue(&observing, &error, Severity::Warning);
        if !errors.iter().any(|e| e.path == issue.path) {
            warnings.push(issue);
        }
    }
    unexpected_members(schema, value, "", &mut warnings);
    Ok(ValidationReport { valid: errors.is_empty(), errors, warnings })
}

/// `schema` with every node's [`OBSERVED`] annotation written as the keywords it mirrors
/// (`minimum`, `maximum`, `values` as `enum`), for the warnings.
fn observations_asserted(schema: &Value) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    let mut out = map.clone();
    if let Some(Value::Object(observed)) = map.get(OBSERVED) {
        for (from, to) in [
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("values", "enum"),
            ("format", "format"),
        ] {
            if let Some(v) = observed.get(from).filter(|v| !v.is_null()) {
                out.entry(to.to_string()).or_insert_with(|| v.clone());
            }
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let asserted =
            properties.iter().map(|(k, v)| (k.clone(), observations_asserted(v))).collect();
        out.insert("properties".into(), Value::Object(asserted));
    }
    for keyword in ["items", "additionalProperties"] {
        if let Some(sub) = map.get(keyword) {
            out.insert(keyword.into(), observations_asserted(sub));
        }
    }
    for keyword in ["prefixItems", "anyOf", "allOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get(keyword) {
            out.insert(
                keyword.into(),
                Value::Array(list.iter().map(observations_asserted).collect()),
            );
        }
    }
    Value::Object(out)
}

/// One validator failure as an issue of `severity`, in the reader's words.
fn issue(
    schema: &Value,
    error: &jsonschema::ValidationError<'_>,
    severity: Severity,
) -> ValidationIssue {
    use jsonschema::error::ValidationErrorKind as K;
    let path = error.instance_path().to_string();
    let instance = error.instance().clone().into_owned();
    let schema_path = error.schema_path().to_string();
    let parent_schema = schema_path.rsplit_once('/').map_or("", |(p, _)| p);
    let (keyword, expected, actual, text) = match error.kind() {
        K::Type { .. } => {
            let expected =
                schema_at(schema, &format!("{parent_schema}/type")).cloned().unwrap_or(Value::Null);
            let text = format!("Expected {}, got {}", type_words(&expected), json_type(&instance));
            ("type".to_string(), expected, json!(json_type(&instance)), text)
        }
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default().to_string();
            return ValidationIssue {
                path: format!("{path}/{}", name.replace('~', "~0").replace('/', "~1")),
                field: Some(name.clone()),
                keyword: "required".into(),
                expected: json!("present"),
                actual: json!("missing"),
                error: format!("Required field '{name}' missing"),
                severity,
            };
        }
        K::Enum { options } => {
            let mut text = format!("{instance} is not one of the observed values {options}");
            if let (Some(wanted), Some(list)) = (instance.as_str(), options.as_array()) {
                let names: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
                if let Some(best) = closest(wanted, names, 1).first() {
                    text.push_str(&format!(" (did you mean \"{best}\"?)"));
                }
            }
            ("enum".to_string(), (**options).clone(), instance, text)
        }
        K::Minimum { limit } => {
            let text = format!("{instance} is below the smallest observed value {limit}");
            ("minimum".to_string(), json!(format!(">= {limit}")), instance, text)
        }
        K::Maximum { limit } => {
            let text = format!("{instance} is above the largest observed value {limit}");
            ("maximum".to_string(), json!(format!("<= {limit}")), instance, text)
        }
        K::Format { format } => {
            let text = format!("{instance} is not a {format}, the format of every observed value");
            ("format".to_string(), json!(format), instance, text)
        }
        _ => {
            let keyword = schema_path.rsplit('/').next().unwrap_or("schema").to_string();
            (keyword, Value::Null, instance, error.to_string())
        }
    };
    ValidationIssue {
        field: last_field(&path),
        path,
        keyword,
        expected,
        actual,
        error: text,
        severity,
    }
}

fn type_words(expected: &Value) -> String {
    match expected {
        Value::String(s) => s.clone(),
        Value::Array(list) => {
            list.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or ")
        }
        _ => "another type".into(),
    }
}

/// Members the schema has never seen: not wrong (the schema is open), but often a typo.
fn unexpected_members(
    schema: &Value,
    value: &Value,
    pointer: &str,
    out: &mut Vec<ValidationIssue>,
) {
    match value {
        Value::Object(members) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, member) in members {
                let member_pointer =
                    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                match properties.get(key) {
                    Some(member_schema) => {
                        unexpected_members(member_schema, member, &member_pointer, out)
                    }
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
                "celsius": {"type": "number", OBSERVED: {"minimum": 18.0, "maximum": 26.0}},
                "sensor_id": {"type": "string"},
                "state": {"type": ["string", "null"], OBSERVED: {"values": ["off", "on", null]}},
                "at": {"type": "string", "format": "date-time"},
                "timestamp": {"type": "number"}
            },
            "required": ["celsius", "sensor_id", "timestamp"]
        })
    }

    #[test]
    fn reports_every_error_with_path_expected_and_actual() {
        let report =
            validate(&temperature_schema(), &json!({"celsius": "not a number", "sensor_id": 123}))
                .expect("validates");
        assert!(!report.valid);
        let by_path = |p: &str| {
            report
                .errors
                .iter()
                .find(|e| e.path == p)
                .unwrap_or_else(|| panic!("{p}: {:?}", report.errors))
        };
        assert_eq!(by_path("/celsius").expected, json!("number"));
        assert_eq!(by_path("/celsius").actual, json!("string"));
        assert_eq!(by_path("/sensor_id").expected, json!("string"));
        assert_eq!(by_path("/timestamp").keyword, "required");
        assert_eq!(report.errors.len(), 3);
    }

    #[test]
    fn out_of_range_and_unknown_fields_are_warnings_with_suggestions() {
        let report = validate(
            &temperature_schema(),
            &json!({"celsius": 72, "sensor_id": "s", "timestamp": 1, "sensorid": "x"}),
        )
        .expect("validates");
        assert!(report.valid);
        assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
        assert!(report.warnings.iter().any(|w| w.keyword == "maximum" && w.path == "/celsius"));
        let unknown =
            report.warnings.iter().find(|w| w.keyword == "properties").expect("unknown field");
        assert!(unknown.error.contains("did you mean 'sensor_id'"), "{}", unknown.error);
    }

    #[test]
    fn observations_never_invalidate_and_each_is_one_warning() {
        let value = json!({"celsius": 17, "sensor_id": "s", "timestamp": 1, "state": "offf", "at": "yesterday"});
        let report = validate(&temperature_schema(), &value).expect("validates");
        assert!(report.valid, "{:?}", report.errors);
        let keywords: Vec<&str> = report.warnings.iter().map(|w| w.keyword.as_str()).collect();
        assert_eq!(keywords.len(), 3, "{:?}", report.warnings);
        for keyword in ["minimum", "enum", "format"] {
            assert!(keywords.contains(&keyword), "{keyword} in {keywords:?}");
        }
        let state = report.warnings.iter().find(|w| w.keyword == "enum").expect("enum warning");
        assert!(state.error.contains("did you mean \"off\""), "{}", state.error);
        let observed_null = validate(
            &temperature_schema(),
            &json!({"celsius": 20, "sensor_id": "s", "timestamp": 1, "state": null}),
        )
        .expect("validates");
        assert!(
            observed_null.valid && observed_null.warnings.is_empty(),
            "{:?}",
            observed_null.warnings
        );
    }

    #[test]
    fn an_observed_local_date_time_warns_about_other_text_and_publishes_no_format() {
        let schema = json!({"type": "object", "properties": {
            "created": {"type": "string", "x-observed": {"format": "local-date-time"}}
        }});
        let good = validate(&schema, &json!({"created": "2024-03-05 10:22:00.25"})).expect("ok");
        assert!(good.valid && good.warnings.is_empty(), "{:?}", good.warnings);
        let other = validate(&schema, &json!({"created": "5 March"})).expect("ok");
        assert!(other.valid, "an observation never invalidates");
        assert_eq!(other.warnings.len(), 1, "{:?}", other.warnings);
        assert_eq!(other.warnings[0].keyword, "format");
        assert!(other.warnings[0].error.contains("local-date-time"), "{}", other.warnings[0].error);
    }

    /// A profile's `format: email` is its own check's: validation warns about what that check
    /// refuses (a domain with a slash) and not about what it takes (a quoted local part with a
    /// space, which the validator's built-in check refused).
    #[test]
    fn an_email_format_is_checked_as_the_profile_detects_it() {
        let schema = json!({"type": "object", "properties": {
            "contact": {"type": "string", "format": "email"}
        }});
        let warned = |value: &str| {
            let report = validate(&schema, &json!({ "contact": value })).expect("validates");
            assert!(report.valid, "a format never invalidates: {:?}", report.errors);
            report.warnings.iter().any(|w| w.keyword == "format")
        };
        for value in ["ops@example.com", "\"joe bloggs\"@example.com", "joe@[IPv6:::1]"] {
            assert!(crate::profile::formats::is_email(value), "{value}");
            assert!(!warned(value), "{value}");
        }
        for value in ["a@b/c", "a@b=c.com", "a@[999.1.1.1]"] {
            assert!(!crate::profile::formats::is_email(value), "{value}");
            assert!(warned(value), "{value}");
        }
    }

    #[test]
    fn a_wrong_type_is_one_error_without_an_observation_warning_at_the_same_place() {
        let report = validate(
            &temperature_schema(),
            &json!({"celsius": "72", "sensor_id": "s", "timestamp": 1, "state": 3}),
        )
        .expect("validates");
        assert_eq!(report.errors.len(), 2, "{:?}", report.errors);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn valid_is_the_verdict_of_a_standard_validator_on_the_published_schema() {
        let schema = temperature_schema();
        let standard = jsonschema::draft202012::new(&schema).expect("compiles");
        let values = [
            json!({"celsius": 1e300, "sensor_id": "", "timestamp": -0.0, "state": "ÜBER", "at": "2024-02-30T00:00:00Z"}),
            json!({"celsius": 22, "sensor_id": "a", "timestamp": 18_446_744_073_709_551_615_u64}),
            json!({"celsius": null, "sensor_id": "a", "timestamp": 1}),
            json!({"sensor_id": "a", "timestamp": 1}),
            json!([]),
            json!(null),
            json!({"celsius": 20, "sensor_id": "a", "timestamp": 1, "state": ["on"]}),
        ];
        for value in &values {
            let report = validate(&schema, value).expect("validates");
            assert_eq!(report.valid, standard.is_valid(value), "{value}: {report:?}");
        }
    }
}
