//! What a write changes: the members whose value differs between the record's value before and
//! the value after, by JSON Pointer, compared as JSON values (`22` and `22.0` are the same
//! number, member order does not matter). Bounded: a change deeper than [`MAX_DEPTH`] is reported
//! at that depth, and at most [`MAX_CHANGES`] are listed.

use serde::Serialize;
use serde_json::Value;

use crate::record_schema::shown;

/// Deepest level compared member by member.
const MAX_DEPTH: usize = 32;
/// Most changes listed.
pub(crate) const MAX_CHANGES: usize = 50;

/// One member that changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    /// JSON Pointer to it (`/port`; empty for the whole value).
    pub path: String,
    /// Its value before (absent when it is new), shortened for showing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
    /// Its value after (absent when it goes), shortened for showing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Value>,
}

/// Whether `a` and `b` are the same JSON value: numbers by value (an integer and a float that
/// are equal are the same), objects whatever their member order. Values nested deeper than
/// parsed JSON can be (serde's 128 levels) compare as different.
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    same_at(a, b, 0)
}

fn same_at(a: &Value, b: &Value, depth: usize) -> bool {
    const DEEPEST: usize = 256;
    if depth > DEEPEST {
        return false;
    }
    let same = |a: &Value, b: &Value| same_at(a, b, depth + 1);
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i128(), y.as_i128()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, a)| y.get(key).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

/// The changes from `before` to `after` (objects compared member by member, anything else whole).
pub(crate) fn changes(before: &Value, after: &Value) -> Vec<Change> {
    let mut found = Vec::new();
    walk(Some(before), Some(after), String::new(), 0, &mut found);
    found
}

fn walk(
    before: Option<&Value>,
    after: Option<&Value>,
    path: String,
    depth: usize,
    found: &mut Vec<Change>,
) {
    if found.len() >= MAX_CHANGES {
        return;
    }
    match (before, after) {
        (Some(Value::Object(b)), Some(Value::Object(a))) if depth < MAX_DEPTH => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                walk(b.get(key), a.get(key), format!("{path}/{escaped}"), depth + 1, found);
            }
        }
        (Some(b), Some(a)) if same_json(b, a) => {}
        (None, None) => {}
        (b, a) => found.push(Change { path, from: b.map(shown), to: a.map(shown) }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lists_members_that_change_by_value() {
        let before =
            json!({"host": "0.0.0.0", "port": 8080, "limits": {"max": 100, "min": 1}, "t": 22});
        let after = json!({"port": 9090, "host": "0.0.0.0", "limits": {"max": 100}, "t": 22.0, "new/key": true});
        let found = changes(&before, &after);
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["/limits/min", "/new~1key", "/port"]);
        assert_eq!(found[0], Change { path: "/limits/min".into(), from: Some(json!(1)), to: None });
        assert_eq!(found[2].to, Some(json!(9090)));
        assert!(changes(&before, &before).is_empty());
        assert_eq!(changes(&json!(1), &json!("1"))[0].path, "");
        assert!(same_json(&json!({"a": [1, 2.5]}), &json!({"a": [1.0, 2.5]})));
        assert!(!same_json(&json!([1, 2]), &json!([2, 1])));
        assert!(same_json(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!same_json(&json!(u64::MAX), &json!(u64::MAX - 1)));
    }

    #[test]
    fn deep_and_wide_changes_are_bounded() {
        let mut deep = json!(1);
        for _ in 0..1000 {
            deep = json!({"a": deep});
        }
        let found = changes(&deep, &json!({"a": 2}));
        assert_eq!(found.len(), 1);
        let wide_before: serde_json::Map<String, Value> =
            (0..500).map(|i| (format!("k{i:03}"), json!(i))).collect();
        let found = changes(&Value::Object(wide_before), &json!({}));
        assert_eq!(found.len(), MAX_CHANGES);
    }
}
