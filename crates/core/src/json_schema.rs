//! query_schema's inference (seed 004, including its "multi-sample" future): a JSON Schema
//! (draft 2020-12) derived from the profile of *all* values, not from one.
//!
//! Because it reads the profile, every rule is a statement about every observed value: a member
//! is `required` when every object had it, `minimum`/`maximum` are the observed extremes, `enum`
//! lists every string seen (only when there are few and they repeat), array `items` merge all
//! elements of all arrays. So every observed value validates against the result by construction
//! (and the tests check it with the `jsonschema` crate).

use serde_json::{Map, Value, json};

use crate::profile::{CollectionProfile, ProfileNode};

/// JSON Schema dialect of the output.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Nesting depth past which structure is not inferred (seed 004: 20).
pub const DEPTH_LIMIT: usize = 20;
/// Most distinct strings listed as an `enum`.
pub const ENUM_MAX: u64 = 10;

/// Infers the schema of the values profiled in `profile`.
pub fn infer_schema(profile: &CollectionProfile) -> Value {
    let mut schema = node_schema(&profile.root, 0);
    if let Value::Object(map) = &mut schema {
        let mut out = Map::new();
        out.insert("$schema".into(), json!(DIALECT));
        out.append(map);
        if profile.item_count == 0 {
            out.insert("description".into(), json!("No values observed: any value is accepted"));
        }
        return Value::Object(out);
    }
    schema
}

fn number(v: f64, integer: bool) -> Value {
    if integer && v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        json!(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

fn node_schema(node: &ProfileNode, depth: usize) -> Value {
    let p = &node.profile;
    let t = &p.types;
    let mut types: Vec<&str> = Vec::new();
    if t.string > 0 {
        types.push("string");
    }
    if t.number > 0 {
        types.push("number");
    } else if t.integer > 0 {
        types.push("integer");
    }
    if t.boolean > 0 {
        types.push("boolean");
    }
    if t.array > 0 {
        types.push("array");
    }
    if t.object > 0 {
        types.push("object");
    }
    if t.null > 0 {
        types.push("null");
    }
    let mut s = Map::new();
    match types.as_slice() {
        [] => return json!({}),
        [one] => {
            s.insert("type".into(), json!(one));
        }
        many => {
            s.insert("type".into(), json!(many));
        }
    }
    if depth >= DEPTH_LIMIT && (t.array > 0 || t.object > 0) {
        s.insert("description".into(), json!(format!("depth limit {DEPTH_LIMIT} reached: structure below is not inferred")));
        return Value::Object(s);
    }
    if let Some(strings) = &p.strings {
        let only_strings = types.iter().all(|t| *t == "string" || *t == "null");
        // An enum from one or two sightings would reject every other value; demand repeats.
        if only_strings && strings.distinct <= ENUM_MAX && strings.count >= 2 * strings.distinct && (strings.top.len() as u64) == strings.distinct {
            let mut values: Vec<Value> = strings.top.iter().map(|v| v.value.clone()).collect();
            values.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            if t.null > 0 {
                values.push(Value::Null);
            }
            s.insert("enum".into(), Value::Array(values));
        }
        if let Some(format) = strings.format {
            s.insert("format".into(), json!(format.name()));
        }
    }
    if let Some(numbers) = &p.numbers {
        let integer = numbers.all_integers();
        s.insert("minimum".into(), number(numbers.min, integer));
        s.insert("maximum".into(), number(numbers.max, integer));
    }
    if t.array > 0 {
        match &node.items {
            Some(items) => {
                s.insert("items".into(), node_schema(items, depth + 1));
            }
            None => {
                s.insert("items".into(), json!({}));
                s.insert("description".into(), json!("Empty array - item type unknown"));
            }
        }
    }
    if t.object > 0 {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for child in &node.children {
            let Some(key) = child.profile.path.last_key() else { continue };
            properties.insert(key.to_string(), node_schema(child, depth + 1));
            if child.profile.present == p.objects {
                required.push(json!(key));
            }
        }
        s.insert("properties".into(), Value::Object(properties));
        s.insert("required".into(), Value::Array(required));
        if p.dropped_keys > 0 || p.depth_limited > 0 {
            s.insert("description".into(), json!("some members were not profiled (path or depth limit)"));
        }
    }
    Value::Object(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProfileBuilder;

    fn schema_of(values: &[Value]) -> Value {
        let mut builder = ProfileBuilder::new();
        for v in values {
            builder.add_value(v);
        }
        infer_schema(&builder.finish(values.len() as u64))
    }

    fn assert_all_valid(schema: &Value, values: &[Value]) {
        let validator = jsonschema::draft202012::new(schema).expect("schema compiles");
        for v in values {
            let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{v} against {schema}: {errors:?}");
        }
    }

    #[test]
    fn infers_primitive_types_with_integer_distinct_from_number() {
        assert_eq!(schema_of(&[json!(42)])["type"], "integer");
        assert_eq!(schema_of(&[json!(3.5)])["type"], "number");
        assert_eq!(schema_of(&[json!(1), json!(2.5)])["type"], "number");
        assert_eq!(schema_of(&[json!("x")])["type"], "string");
        assert_eq!(schema_of(&[json!(true)])["type"], "boolean");
        assert_eq!(schema_of(&[json!(null)])["type"], "null");
    }

    #[test]
    fn required_means_present_in_every_value_and_nulls_join_the_type() {
        let values = [
            json!({"celsius": 21.5, "sensor_id": "a", "note": null}),
            json!({"celsius": 22, "sensor_id": "b", "note": "ok"}),
            json!({"celsius": 23.0, "sensor_id": "a"}),
        ];
        let schema = schema_of(&values);
        assert_eq!(schema["required"], json!(["celsius", "sensor_id"]));
        assert_eq!(schema["properties"]["note"]["type"], json!(["string", "null"]));
        assert_eq!(schema["properties"]["celsius"]["type"], "number");
        assert_eq!(schema["properties"]["celsius"]["minimum"], json!(21.5));
        assert_eq!(schema["properties"]["celsius"]["maximum"], json!(23.0));
        assert_all_valid(&schema, &values);
    }

    #[test]
    fn array_items_merge_every_element_and_empty_arrays_are_described() {
        let values = [json!({"xs": [1, "a"]}), json!({"xs": [{"k": 1}]}), json!({"xs": []})];
        let schema = schema_of(&values);
        assert_eq!(schema["properties"]["xs"]["items"]["type"], json!(["string", "integer", "object"]));
        assert_all_valid(&schema, &values);
        let empty = schema_of(&[json!([])]);
        assert_eq!(empty["items"], json!({}));
        assert_eq!(empty["description"], "Empty array - item type unknown");
    }

    #[test]
    fn enum_only_for_few_repeated_strings_and_includes_null() {
        let values: Vec<Value> = ["on", "off", "on", "off", "on"].iter().map(|s| json!({"state": s})).chain([json!({"state": null})]).collect();
        let schema = schema_of(&values);
        assert_eq!(schema["properties"]["state"]["enum"], json!(["off", "on", null]));
        assert_all_valid(&schema, &values);
        let unique = schema_of(&[json!({"id": "a"}), json!({"id": "b"})]);
        assert!(unique["properties"]["id"].get("enum").is_none());
    }

    #[test]
    fn nesting_past_the_depth_limit_is_marked() {
        let mut value = json!(1);
        for _ in 0..30 {
            value = json!({ "n": value });
        }
        let schema = schema_of(std::slice::from_ref(&value));
        let mut node = &schema;
        for _ in 0..DEPTH_LIMIT {
            node = &node["properties"]["n"];
        }
        assert!(node["description"].as_str().expect("marker").contains("depth limit 20"));
        assert_all_valid(&schema, &[value]);
    }
}
