//! Integers written as floats (`80.0`, `8e1`): JSON Schema counts them as integers, so
//! validate_value accepts them, but AimDB reads a record into its Rust type with serde, which
//! refuses a float for an integer field. Where every value seen was a JSON integer, a live
//! record's validate_value and set_record refuse such a number, rather than promise a write the
//! instance will refuse.

use serde_json::Value;

use schemascope_core::validate::{Severity, ValidationIssue, ValidationReport, validate};

/// Deepest level looked at (an inferred schema is at most the profiler's 64 levels deep).
const MAX_DEPTH: usize = 64;

/// validate_value's check of a value for a live AimDB record: the schema's errors, and integers
/// written as floats.
pub(crate) fn validate_for_aimdb(
    schema: &Value,
    value: &Value,
) -> Result<ValidationReport, schemascope_core::CoreError> {
    let mut report = validate(schema, value)?;
    let floats = written_as_floats(schema, value, &report.errors);
    report.errors.extend(floats);
    report.valid = report.errors.is_empty();
    Ok(report)
}

/// The issues of `value`'s numbers written as floats where `schema` says `integer` (and not
/// `number`), except at paths `errors` already names.
fn written_as_floats(
    schema: &Value,
    value: &Value,
    errors: &[ValidationIssue],
) -> Vec<ValidationIssue> {
    let mut found = Vec::new();
    walk(schema, value, String::new(), 0, &mut found);
    found.retain(|issue| !errors.iter().any(|e| e.path == issue.path));
    found
}

fn walk(
    schema: &Value,
    value: &Value,
    path: String,
    depth: usize,
    found: &mut Vec<ValidationIssue>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) && integer_only(schema) => {
            let field =
                path.rsplit('/').next().filter(|f| !f.is_empty() && f.parse::<usize>().is_err());
            found.push(ValidationIssue {
                field: field.map(|f| f.replace("~1", "/").replace("~0", "~")),
                keyword: "type".into(),
                expected: Value::from("integer"),
                actual: Value::from("number"),
                error: advice(n),
                severity: Severity::Error,
                path,
            });
        }
        Value::Object(members) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, member) in members {
                if let Some(member_schema) = properties.get(name) {
                    let escaped = name.replace('~', "~0").replace('/', "~1");
                    walk(member_schema, member, format!("{path}/{escaped}"), depth + 1, found);
                }
            }
        }
        Value::Array(elements) => {
            let Some(items) = schema.get("items") else { return };
            for (i, element) in elements.iter().enumerate() {
                walk(items, element, format!("{path}/{i}"), depth + 1, found);
            }
        }
        _ => {}
    }
}

/// What to write instead of `n`: its digits, when it is a whole number a float holds exactly
/// (below 2^53); else only that it must be a 64-bit integer (a float that large names no one
/// integer, and past 2^63 none fits).
fn advice(n: &serde_json::Number) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    let why = "the record's values are integers, and AimDB reads them into an integer type";
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < EXACT => {
            format!(
                "Expected an integer written without a decimal point or exponent ({f:.0}), got {n}: {why}"
            )
        }
        _ => format!("Expected an integer that fits in 64 bits, written in digits, got {n}: {why}"),
    }
}

/// Whether `schema`'s `type` admits integers but not numbers in general.
fn integer_only(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn floats_where_integers_were_seen_are_refused() {
        let schema = json!({"type": "object", "properties": {
            "port": {"type": "integer"},
            "ratio": {"type": "number"},
            "maybe": {"type": ["integer", "null"]},
            "list": {"type": "array", "items": {"type": "integer"}},
            "a/b": {"type": "integer"},
        }});
        let value = json!({"port": 80.0, "ratio": 2.0, "maybe": 1e3, "list": [1, 2.0], "a/b": 3});
        let found = written_as_floats(&schema, &value, &[]);
        let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
        // In the value's member order.
        assert_eq!(paths, ["/port", "/maybe", "/list/1"]);
        assert_eq!(found[0].field.as_deref(), Some("port"));
        assert!(found[0].error.contains("(80)"), "{}", found[0].error);
        assert!(written_as_floats(&schema, &json!({"port": 80}), &[]).is_empty());
        // Past what a float holds exactly, no number is suggested.
        let big: Value = serde_json::from_str(r#"{"port": 18446744073709551616}"#).expect("JSON");
        let found = written_as_floats(&schema, &big, &[]);
        assert!(found[0].error.contains("fits in 64 bits"), "{}", found[0].error);
        assert!(!found[0].error.contains("(18446744073709551616)"), "{}", found[0].error);
    }
}
