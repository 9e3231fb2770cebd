//! query_schema's inference (seed 004, including its "multi-sample" future): a JSON Schema
//! (draft 2020-12) derived from the profile of *all* values, not from one.
//!
//! The schema asserts only type facts, which every value of the record's type keeps: `type`
//! (integer vs number, with `null` when a null was seen), `required` (members present, null or
//! not, in every observed object), `properties` and array `items` (merged over every element).
//! What was merely *observed* — the numeric range, the few repeated strings, a string format —
//! would make a standard validator reject the next timestamp or a new sensor id, so it is
//! written as annotations a 2020-12 validator ignores: [`OBSERVED`] (`{minimum, maximum,
//! values}`, an unknown keyword, hence an annotation) and `format` (an annotation unless a
//! validator opts into format assertion). validate_value turns those into warnings. Every
//! observed value validates against the result by construction (the tests check it with the
//! `jsonschema` crate here and with Python's `jsonschema` from the CLI tests).

use serde_json::{Map, Value, json};

use crate::profile::CollectionProfile;
use crate::schema_facts::{FactsNode, SchemaFacts};

/// JSON Schema dialect of the output.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Nesting depth past which structure is not inferred (seed 004: 20).
pub const DEPTH_LIMIT: usize = 20;
/// Most distinct strings listed as observed `values`.
pub const ENUM_MAX: u64 = 10;
/// Longest string (in characters) for which observed `values` are listed.
pub const VALUES_MAX_CHARS: u64 = 64;
/// The annotation keyword holding what was observed at a node: `minimum` and `maximum` of the
/// numbers, `values` (the strings, and null, when few strings repeat). Not a constraint: JSON
/// Schema 2020-12 collects unknown keywords as annotations, so validators ignore it.
pub const OBSERVED: &str = "x-observed";

/// Infers the schema of the values profiled in `profile`.
pub fn infer_schema(profile: &CollectionProfile) -> Value {
    schema_of(&SchemaFacts::of_profile(profile))
}

/// Infers the schema from `facts` (a full profile's, or a schema-only pass's: the same facts
/// give the same schema).
pub fn schema_of(facts: &SchemaFacts) -> Value {
    let mut schema = node_schema(&facts.root, 0);
    if let Value::Object(map) = &mut schema {
        let mut out = Map::new();
        out.insert("$schema".into(), json!(DIALECT));
        out.append(map);
        if facts.item_count == 0 {
            out.insert("description".into(), json!("No values observed: any value is accepted"));
        }
        return Value::Object(out);
    }
    schema
}

fn node_schema(node: &FactsNode, depth: usize) -> Value {
    let t = &node.types;
    let mut types: Vec<&str> = Vec::new();
    // Numbers no JSON number holds exactly come back from queries as their exact text.
    if t.string > 0 || node.exact_text {
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
        s.insert(
            "description".into(),
            json!(format!("depth limit {DEPTH_LIMIT} reached: structure below is not inferred")),
        );
        return Value::Object(s);
    }
    let mut observed = Map::new();
    if let Some((minimum, maximum)) = &node.range {
        observed.insert("minimum".into(), minimum.clone());
        observed.insert("maximum".into(), maximum.clone());
    }
    if let Some(strings) = &node.strings {
        let only_strings = types.iter().all(|t| *t == "string" || *t == "null");
        // A list from one or two sightings says nothing about the values to come (ids, names);
        // only few repeated strings are a category worth showing.
        if let Some(listed) = &strings.values
            && only_strings
            && strings.count >= 2 * listed.len() as u64
        {
            let mut values: Vec<Value> = listed.iter().map(|v| json!(v)).collect();
            values.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            if t.null > 0 {
                values.push(Value::Null);
            }
            observed.insert("values".into(), Value::Array(values));
        }
        match strings.format {
            Some(format) if format.is_json_schema() => {
                s.insert("format".into(), json!(format.name()));
            }
            // A format of schemascope's own: an observation, so that no validator meets a
            // format it does not know (some refuse the schema then).
            Some(format) => {
                observed.insert("format".into(), json!(format.name()));
            }
            None => {}
        }
    }
    if !observed.is_empty() {
        s.insert(OBSERVED.into(), Value::Object(observed));
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
        for (key, child) in &node.children {
            properties.insert(key.clone(), node_schema(child, depth + 1));
            if child.present == node.objects {
                required.push(json!(key));
            }
        }
        s.insert("properties".into(), Value::Object(properties));
        s.insert("required".into(), Value::Array(required));
        if node.dropped_keys > 0 || node.depth_limited > 0 {
            s.insert(
                "description".into(),
                json!("some members were not profiled (path or depth limit)"),
            );
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
    fn zone_less_timestamps_are_an_observation_not_a_format() {
        let values = [json!({"at": "2024-03-05 10:22:00"}), json!({"at": "2024-03-06 08:00:00.5"})];
        let at = &schema_of(&values)["properties"]["at"];
        assert_eq!(at.get("format"), None, "{at}");
        assert_eq!(at[OBSERVED]["format"], "local-date-time", "{at}");
        let stamped = schema_of(&[json!({"at": "2024-03-05T10:22:00Z"})]);
        assert_eq!(stamped["properties"]["at"]["format"], "date-time");
        assert_all_valid(at, &[json!("2024-03-05 10:22:00")]);
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
        assert_eq!(
            schema["properties"]["celsius"][OBSERVED],
            json!({"minimum": 21.5, "maximum": 23.0})
        );
        assert_all_valid(&schema, &values);
    }

    #[test]
    fn array_items_merge_every_element_and_empty_arrays_are_described() {
        let values = [json!({"xs": [1, "a"]}), json!({"xs": [{"k": 1}]}), json!({"xs": []})];
        let schema = schema_of(&values);
        assert_eq!(
            schema["properties"]["xs"]["items"]["type"],
            json!(["string", "integer", "object"])
        );
        assert_all_valid(&schema, &values);
        let empty = schema_of(&[json!([])]);
        assert_eq!(empty["items"], json!({}));
        assert_eq!(empty["description"], "Empty array - item type unknown");
    }

    #[test]
    fn observed_values_only_for_few_repeated_strings_and_include_null() {
        let values: Vec<Value> = ["on", "off", "on", "off", "on"]
            .iter()
            .map(|s| json!({"state": s}))
            .chain([json!({"state": null})])
            .collect();
        let schema = schema_of(&values);
        assert_eq!(schema["properties"]["state"][OBSERVED]["values"], json!(["off", "on", null]));
        assert!(schema["properties"]["state"].get("enum").is_none());
        assert_all_valid(&schema, &values);
        assert_all_valid(&schema, &[json!({"state": "standby"})]);
        let unique = schema_of(&[json!({"id": "a"}), json!({"id": "b"})]);
        assert!(unique["properties"]["id"].get(OBSERVED).is_none());
    }

    #[test]
    fn long_strings_are_never_listed_as_observed_values() {
        let long = "é".repeat(5000);
        let values = [json!(long), json!(long), json!(long), json!("a"), json!("a")];
        let schema = schema_of(&values);
        assert!(schema.get(OBSERVED).is_none(), "{}", &schema.to_string()[..200]);
        let short = schema_of(&[json!("é".repeat(64)), json!("é".repeat(64))]);
        assert_eq!(short[OBSERVED]["values"], json!(["é".repeat(64)]));
        assert_all_valid(&schema, &values);
    }

    /// The keywords that assert something about a value, other than type facts; none may appear
    /// in an inferred schema (observations go under [`OBSERVED`]).
    const OBSERVATION_ASSERTIONS: [&str; 14] = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "enum",
        "const",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "additionalProperties",
    ];

    fn assert_no_observation_assertions(schema: &Value) {
        let Value::Object(map) = schema else { return };
        for keyword in OBSERVATION_ASSERTIONS {
            assert!(!map.contains_key(keyword), "`{keyword}` asserted in {schema}");
        }
        for child in
            map.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values())
        {
            assert_no_observation_assertions(child);
        }
        if let Some(items) = map.get("items") {
            assert_no_observation_assertions(items);
        }
    }

    #[test]
    fn observed_ranges_values_and_formats_are_annotations_so_new_values_validate() {
        let observed: Vec<Value> = (0..12)
            .map(|i| {
                json!({
                    "ts": 1_730_649_600 + i,
                    "celsius": 18.5 + f64::from(i) / 2.0,
                    "sensor_id": format!("sensor-{:02}", i % 3),
                    "state": if i % 2 == 0 { "on" } else { "off" },
                    "at": format!("2024-03-{:02}T10:00:00Z", i + 1),
                    "tags": ["a", "b"],
                    "name": "Zoë",
                })
            })
            .collect();
        let schema = schema_of(&observed);
        assert_no_observation_assertions(&schema);
        let props = &schema["properties"];
        assert_eq!(
            props["ts"][OBSERVED],
            json!({"minimum": 1_730_649_600, "maximum": 1_730_649_611})
        );
        assert_eq!(
            props["sensor_id"][OBSERVED]["values"],
            json!(["sensor-00", "sensor-01", "sensor-02"])
        );
        assert_eq!(props["at"]["format"], "date-time");
        assert_all_valid(&schema, &observed);
        let next = [
            json!({"ts": 1_730_649_612, "celsius": 99.5, "sensor_id": "sensor-99", "state": "standby", "at": "2030-01-01T00:00:00Z", "tags": [], "name": ""}),
            json!({"ts": -1, "celsius": -273.15, "sensor_id": "", "state": "ÖN", "at": "not a date", "tags": ["x", "y", "z", "w"], "name": "x".repeat(10_000)}),
            json!({"ts": 9_007_199_254_740_993_u64, "celsius": 1e-9, "sensor_id": "s", "state": "on", "at": "2024-03-01", "tags": ["a"], "name": "\u{202e}", "new": 1}),
        ];
        assert_all_valid(&schema, &next);
    }

    #[test]
    fn integer_bounds_past_2_pow_53_are_exact() {
        let values = [
            json!(9_007_199_254_740_993_u64),
            json!(-9_007_199_254_740_993_i64),
            json!(null),
            json!(5),
        ];
        let schema = schema_of(&values);
        assert_eq!(schema["type"], json!(["integer", "null"]));
        assert_eq!(
            schema[OBSERVED],
            json!({"minimum": -9_007_199_254_740_993_i64, "maximum": 9_007_199_254_740_993_u64})
        );
        assert_all_valid(&schema, &values);
        let extremes = schema_of(&[json!(i64::MIN), json!(u64::MAX), json!(i64::MAX)]);
        assert_eq!(extremes[OBSERVED], json!({"minimum": i64::MIN, "maximum": u64::MAX}));
    }

    #[test]
    fn integer_bounds_mixed_with_floats_stay_exact() {
        let values =
            [json!(9_007_199_254_740_993_u64), json!(0.5), json!(-9_007_199_254_740_993_i64)];
        let schema = schema_of(&values);
        assert_eq!(schema["type"], "number");
        assert_eq!(
            schema[OBSERVED],
            json!({"minimum": -9_007_199_254_740_993_i64, "maximum": 9_007_199_254_740_993_u64})
        );
        assert_all_valid(&schema, &values);
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
