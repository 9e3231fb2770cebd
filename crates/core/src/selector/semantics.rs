//! JMESPath's rules on a value view, as the jmespath crate applies them: truthiness, type-strict
//! equality with the crate's float tolerance, ordering only between numbers, and `contains`.
//! The fast path and the columns both answer through these, so they agree with each other and,
//! by test, with the crate.

use jmespath::ast::Comparator;
use serde_json::Value;

use super::value::V;

/// The fast path could not decide; ask the jmespath crate.
#[derive(Debug)]
pub(super) struct Undecided;

/// JMESPath truthiness: null, false, and empty strings, arrays and objects are false.
pub(super) fn truthy(value: V<'_>) -> bool {
    match value {
        V::Null | V::Bool(false) => false,
        V::Str(s) => !s.is_empty(),
        V::Container(Value::Array(a)) => !a.is_empty(),
        V::Container(Value::Object(o)) => !o.is_empty(),
        V::List(list) => !list.is_empty(),
        _ => true,
    }
}

/// The jmespath crate's float equality (relative error below epsilon).
pub(super) fn float_eq(a: f64, b: f64) -> bool {
    let diff = (a - b).abs();
    if a == b {
        true
    } else if !a.is_normal() || !b.is_normal() {
        diff < (f64::EPSILON * f64::MIN_POSITIVE)
    } else {
        diff / (a.abs() + b.abs()) < f64::EPSILON
    }
}

/// The jmespath crate's equality: same type, then by value.
fn equal(a: V<'_>, b: V<'_>) -> bool {
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Num(x), V::Num(y)) => float_eq(x, y),
        (V::Str(x), V::Str(y)) => x == y,
        (V::Container(x), V::Container(y)) => equal_values(x, y),
        (V::List(x), V::List(y)) => {
            x.len() == y.len() && (0..x.len()).all(|i| equal(x.get(i), y.get(i)))
        }
        (V::List(list), V::Container(Value::Array(items)))
        | (V::Container(Value::Array(items)), V::List(list)) => {
            list.len() == items.len()
                && items.iter().enumerate().all(|(i, item)| equal(list.get(i), V::of(item)))
        }
        _ => false,
    }
}

fn equal_values(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal_values(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal_values(v, w)))
        }
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => equal(V::of(a), V::of(b)),
    }
}

/// A comparison's result: a boolean, or null when ordering values that are not both numbers.
pub(super) fn compare<'a>(comparator: &Comparator, l: V<'a>, r: V<'a>) -> V<'a> {
    match comparator {
        Comparator::Equal => V::Bool(equal(l, r)),
        Comparator::NotEqual => V::Bool(!equal(l, r)),
        // Only numbers are ordered; the crate orders them with partial_cmp (JSON has no NaN).
        ordering => match (l, r) {
            (V::Num(a), V::Num(b)) => V::Bool(match ordering {
                Comparator::LessThan => a < b,
                Comparator::LessThanEqual => a <= b,
                Comparator::GreaterThan => a > b,
                _ => a >= b,
            }),
            _ => V::Null,
        },
    }
}

/// `contains(subject, search)`; a type error is left to the jmespath crate to report.
pub(super) fn contains<'a>(subject: V<'a>, search: V<'a>) -> Result<V<'a>, Undecided> {
    match (subject, search) {
        (V::Container(Value::Array(items)), needle) => {
            Ok(V::Bool(items.iter().any(|v| equal(V::of(v), needle))))
        }
        (V::List(list), needle) => Ok(V::Bool((0..list.len()).any(|i| equal(list.get(i), needle)))),
        (V::Str(haystack), V::Str(needle)) => Ok(V::Bool(haystack.contains(needle))),
        _ => Err(Undecided),
    }
}
