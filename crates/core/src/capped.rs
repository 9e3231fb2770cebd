//! Parsing an item's JSON text with a depth cap: containers nested deeper than the cap become a
//! marker string, so one item nested past serde_json's recursion limit (128) is shown cut instead
//! of failing every tool that renders or samples its collection.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The deepest container level kept by [`parse_capped`]; below serde_json's recursion limit.
pub const MAX_PARSE_DEPTH: usize = 100;

/// The text that stands for a container cut by [`parse_capped`].
pub const DEPTH_MARKER: &str = "[depth limit: nested deeper than 100 levels]";

/// Why a selector does not evaluate an item when its answer would depend on a cut part.
pub(crate) fn reads_cut_part() -> String {
    format!(
        "the selector reads a part of the item nested deeper than {MAX_PARSE_DEPTH} levels, which selectors cannot see"
    )
}

/// Parses `json` keeping at most [`MAX_PARSE_DEPTH`] container levels; returns the value and
/// how many containers were replaced by [`DEPTH_MARKER`]. Fails only on text that is not JSON.
pub fn parse_capped(json: &str) -> Result<(Value, usize), serde_json::Error> {
    let mut cut = 0;
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let value = Capped { depth: 0, cut: &mut cut }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, cut))
}

struct Capped<'c> {
    depth: usize,
    cut: &'c mut usize,
}

impl<'de> DeserializeSeed<'de> for Capped<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Capped<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth >= MAX_PARSE_DEPTH {
            // serde_json skips an ignored value without recursion, so any depth is fine here.
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            *self.cut += 1;
            return Ok(Value::String(DEPTH_MARKER.into()));
        }
        let mut out = Vec::new();
        while let Some(v) =
            seq.next_element_seed(Capped { depth: self.depth + 1, cut: &mut *self.cut })?
        {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth >= MAX_PARSE_DEPTH {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            *self.cut += 1;
            return Ok(Value::String(DEPTH_MARKER.into()));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value =
                map.next_value_seed(Capped { depth: self.depth + 1, cut: &mut *self.cut })?;
            // A repeated key keeps the last value, as serde_json does.
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}{}", "{\"a\":[".repeat(depth), "1", "]}".repeat(depth))
    }

    #[test]
    fn parses_like_serde_json_within_the_cap_and_cuts_deeper_containers() {
        for text in [
            r#"{"a": 1, "b": [true, null, "x", 1.5, -0.0, 18446744073709551615], "a": {"c": "é\u0000"}}"#,
            "[]",
            "null",
            "\"s\"",
            &nested(40),
        ] {
            let (value, cut) = parse_capped(text).expect(text);
            assert_eq!(value, serde_json::from_str::<Value>(text).expect("valid"), "{text}");
            assert_eq!(cut, 0);
        }
        // 200 levels of objects holding arrays: 400 containers, past serde_json's limit of 128.
        let deep = nested(200);
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        let (value, cut) = parse_capped(&deep).expect("deep items parse");
        assert_eq!(cut, 1);
        let mut at = &value;
        let mut levels = 0;
        while let Some(next) = at.get("a").or_else(|| at.get(0)) {
            at = next;
            levels += 1;
        }
        assert_eq!(levels, MAX_PARSE_DEPTH);
        assert_eq!(at, &Value::String(DEPTH_MARKER.into()));
        assert!(parse_capped("{\"a\": ").is_err());
        assert!(parse_capped("[1] x").is_err());
        // Deep and broken is still an error, not a marker.
        assert!(parse_capped(&format!("{}1", "[".repeat(500))).is_err());
    }
}

#[cfg(test)]
mod collection_tests {
    use serde_json::json;

    use crate::collection::{Collection, CollectionKind, OwnedItem};
    use crate::sample::{SampleOptions, SampleStrategy, sample};

    #[test]
    fn one_item_nested_200_deep_is_sampled_cut_and_the_rest_works() {
        let deep = (0..200).fold(json!("bottom"), |inner, _| json!({"a": [inner]}));
        let c = Collection::from_values(
            "nodes",
            CollectionKind::Nodes,
            [
                OwnedItem::new("a", json!({"type": "server"})),
                OwnedItem::new("deep", json!({"type": "odd", "deep": deep})),
                OwnedItem::new("c", json!({"type": "database", "tags": null})),
            ],
        );
        for strategy in
            [SampleStrategy::Random, SampleStrategy::Representative, SampleStrategy::Stratified]
        {
            let options = SampleOptions {
                count: 3,
                strategy,
                stratify_by: Some("type".parse().expect("path")),
                seed: Some(7),
                ..SampleOptions::default()
            };
            let sampled = sample(&c, &options).unwrap_or_else(|e| panic!("{strategy:?}: {e}"));
            assert_eq!(sampled.items.len(), 3, "{strategy:?}");
            let text = serde_json::to_string(&sampled.items).expect("json");
            assert!(
                text.contains("\"odd\"") && text.contains("depth limit"),
                "{strategy:?}: {text}"
            );
        }
    }
}
