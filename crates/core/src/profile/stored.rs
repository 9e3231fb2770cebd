//! A profile written to disk and read back unchanged, so a database table's profile can be kept
//! across restarts while the table has not changed.
//!
//! The profile's own `Serialize` is for showing it: it leaves out figures tools compute from
//! (quartiles, exact extremes and medians) and JSON text would round doubles on the way back
//! (serde_json's default float reading may miss by one unit in the last place). This form
//! keeps every figure: doubles as their bits, exact integers as decimal text, paths as segments.
//! Only profiles whose every part it holds can be stored ([`StoredProfile::of`]); the rest are
//! recomputed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::exact::{NumberKey, Quarters};
use super::formats::StringFormat;
use super::model::{
    Approximation, ArrayProfile, BooleanProfile, CollectionProfile, NumberProfile, ProfileNode,
    PropertyProfile, StringProfile, TypeCounts, ValueCount,
};
use super::path_limit::PathLimit;
use crate::path::{PropertyPath, Segment};

/// A double by its bits: read back bit for bit, NaN and infinities included.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Bits(u64);

impl From<f64> for Bits {
    fn from(value: f64) -> Self {
        Self(value.to_bits())
    }
}

impl From<Bits> for f64 {
    fn from(bits: Bits) -> Self {
        f64::from_bits(bits.0)
    }
}

/// A collection's profile in its stored form.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredProfile {
    item_count: u64,
    max_paths: usize,
    root: StoredNode,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredNode {
    path: Vec<StoredSegment>,
    profile: StoredProperty,
    children: Vec<StoredNode>,
    items: Option<Box<StoredNode>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum StoredSegment {
    Key(String),
    Items,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredProperty {
    total: u64,
    present: u64,
    nulls: u64,
    types: [u64; 7],
    distinct: u64,
    strings: Option<StoredStrings>,
    numbers: Option<StoredNumbers>,
    booleans: Option<[u64; 2]>,
    arrays: Option<StoredArrays>,
    objects: u64,
    dropped_keys: u64,
    depth_limited: u64,
    approximate: Option<StoredApproximation>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredStrings {
    count: u64,
    distinct: u64,
    top: Vec<(StoredScalar, u64)>,
    min_length: u64,
    max_length: u64,
    avg_length: Bits,
    min: Option<String>,
    max: Option<String>,
    format: Option<StringFormat>,
    format_counts: Vec<(StringFormat, u64)>,
    /// Absent in profiles stored before it (those with a sample are computed anew: see the
    /// profile store's rules revision).
    #[serde(default)]
    format_sample: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredNumbers {
    count: u64,
    integer_count: u64,
    float_count: u64,
    min: Bits,
    max: Bits,
    mean: Bits,
    median: Bits,
    /// See [`NumberProfile::median_key`]: (double, offset).
    #[serde(default)]
    median_key: Option<(Bits, i64)>,
    std_dev: Bits,
    distinct: u64,
    top: Vec<(StoredScalar, u64)>,
    quartiles: [Bits; 2],
    /// Quarter units as decimal text (an `i128`).
    exact_median: Option<String>,
    /// The exact sum of integers past 2^53, as decimal text.
    #[serde(default)]
    exact_sum: Option<String>,
    /// (double, offset) of the smallest and largest value.
    exact_range: Option<[(Bits, i64); 2]>,
    exact_text_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredArrays {
    count: u64,
    min_length: u64,
    max_length: u64,
    avg_length: Bits,
    empty_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredApproximation {
    distinct_relative_error: Option<Bits>,
    value_relative_error: Option<Bits>,
    count_undercount: Option<u64>,
}

/// A most frequent value: numbers by their exact kind, so none is rounded on the way back.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum StoredScalar {
    Null,
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float(Bits),
    Text(String),
}

impl StoredScalar {
    fn of(value: &Value) -> Option<Self> {
        Some(match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(*b),
            Value::String(s) => Self::Text(s.clone()),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Self::Signed(i)
                } else if let Some(u) = n.as_u64() {
                    Self::Unsigned(u)
                } else {
                    Self::Float(n.as_f64()?.into())
                }
            }
            // Top values are scalars; anything else is not stored rather than stored loosely.
            Value::Array(_) | Value::Object(_) => return None,
        })
    }

    fn into_value(self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(b),
            Self::Signed(i) => Value::from(i),
            Self::Unsigned(u) => Value::from(u),
            Self::Float(bits) => {
                serde_json::Number::from_f64(bits.into()).map_or(Value::Null, Value::Number)
            }
            Self::Text(s) => Value::String(s),
        }
    }
}

impl StoredProfile {
    /// The stored form of `profile`, or `None` when it holds what this form does not keep: the
    /// sorted values of an in-memory profile (histograms of any bin count are drawn from them)
    /// or keys refused by the path limit. Such profiles are recomputed instead.
    pub fn of(profile: &CollectionProfile) -> Option<Self> {
        if profile.path_limit_hit || !profile.path_limit.is_clear() {
            return None;
        }
        Some(Self {
            item_count: profile.item_count,
            max_paths: profile.path_limit.max_paths,
            root: stored_node(&profile.root)?,
        })
    }

    /// The profile back, every figure as it was; `None` when the stored form was not written
    /// by [`Self::of`] (an exact median that is not an integer's text).
    pub fn into_profile(self) -> Option<CollectionProfile> {
        let mut path_limit = PathLimit::default();
        path_limit.max_paths = self.max_paths;
        Some(CollectionProfile {
            item_count: self.item_count,
            root: node_back(self.root)?,
            path_limit_hit: false,
            path_limit,
        })
    }
}

fn stored_node(node: &ProfileNode) -> Option<StoredNode> {
    let items = match &node.items {
        Some(items) => Some(Box::new(stored_node(items)?)),
        None => None,
    };
    Some(StoredNode {
        path: node
            .profile
            .path
            .segments()
            .iter()
            .map(|s| match s {
                Segment::Key(k) => StoredSegment::Key(k.to_string()),
                Segment::Items => StoredSegment::Items,
            })
            .collect(),
        profile: stored_property(&node.profile)?,
        children: node.children.iter().map(stored_node).collect::<Option<_>>()?,
        items,
    })
}

fn node_back(node: StoredNode) -> Option<ProfileNode> {
    let path = node.path.iter().fold(PropertyPath::root(), |path, segment| match segment {
        StoredSegment::Key(k) => path.child(k),
        StoredSegment::Items => path.items(),
    });
    let items = match node.items {
        Some(items) => Some(Box::new(node_back(*items)?)),
        None => None,
    };
    Some(ProfileNode {
        profile: property_back(path, node.profile)?,
        children: node.children.into_iter().map(node_back).collect::<Option<_>>()?,
        items,
    })
}

fn stored_top(top: &[ValueCount]) -> Option<Vec<(StoredScalar, u64)>> {
    top.iter().map(|v| Some((StoredScalar::of(&v.value)?, v.count))).collect()
}

fn top_back(top: Vec<(StoredScalar, u64)>) -> Vec<ValueCount> {
    top.into_iter().map(|(value, count)| ValueCount { value: value.into_value(), count }).collect()
}

fn stored_property(p: &PropertyProfile) -> Option<StoredProperty> {
    let t = p.types;
    let strings = match &p.strings {
        Some(s) => Some(StoredStrings {
            count: s.count,
            distinct: s.distinct,
            top: stored_top(&s.top)?,
            min_length: s.min_length,
            max_length: s.max_length,
            avg_length: s.avg_length.into(),
            min: s.min.clone(),
            max: s.max.clone(),
            format: s.format,
            format_counts: s.format_counts.clone(),
            format_sample: s.format_sample,
        }),
        None => None,
    };
    let numbers = match &p.numbers {
        // The values themselves are not stored.
        Some(n) if n.runs.is_some() || n.edge_counts.is_some() => return None,
        Some(n) => Some(StoredNumbers {
            count: n.count,
            integer_count: n.integer_count,
            float_count: n.float_count,
            min: n.min.into(),
            max: n.max.into(),
            mean: n.mean.into(),
            median: n.median.into(),
            median_key: n.median_key.map(|key| (key.double().into(), key.offset())),
            std_dev: n.std_dev.into(),
            distinct: n.distinct,
            top: stored_top(&n.top)?,
            quartiles: [n.quartiles[0].into(), n.quartiles[1].into()],
            exact_median: n.exact_median.map(|q| q.quarter_units().to_string()),
            exact_sum: n.exact_sum.map(|sum| sum.to_string()),
            exact_range: n.exact_range.map(|(low, high)| {
                [(low.double().into(), low.offset()), (high.double().into(), high.offset())]
            }),
            exact_text_count: n.exact_text_count,
        }),
        None => None,
    };
    Some(StoredProperty {
        total: p.total,
        present: p.present,
        nulls: p.nulls,
        types: [t.string, t.integer, t.number, t.boolean, t.array, t.object, t.null],
        distinct: p.distinct,
        strings,
        numbers,
        booleans: p.booleans.map(|b| [b.true_count, b.false_count]),
        arrays: p.arrays.map(|a| StoredArrays {
            count: a.count,
            min_length: a.min_length,
            max_length: a.max_length,
            avg_length: a.avg_length.into(),
            empty_count: a.empty_count,
        }),
        objects: p.objects,
        dropped_keys: p.dropped_keys,
        depth_limited: p.depth_limited,
        approximate: p.approximate.map(|a| StoredApproximation {
            distinct_relative_error: a.distinct_relative_error.map(Bits::from),
            value_relative_error: a.value_relative_error.map(Bits::from),
            count_undercount: a.count_undercount,
        }),
    })
}

fn property_back(path: PropertyPath, p: StoredProperty) -> Option<PropertyProfile> {
    let [string, integer, number, boolean, array, object, null] = p.types;
    let numbers = match p.numbers {
        Some(n) => Some(numbers_back(n)?),
        None => None,
    };
    Some(PropertyProfile {
        path,
        total: p.total,
        present: p.present,
        nulls: p.nulls,
        types: TypeCounts { string, integer, number, boolean, array, object, null },
        distinct: p.distinct,
        strings: p.strings.map(|s| StringProfile {
            count: s.count,
            distinct: s.distinct,
            top: top_back(s.top),
            min_length: s.min_length,
            max_length: s.max_length,
            avg_length: s.avg_length.into(),
            min: s.min,
            max: s.max,
            format: s.format,
            format_counts: s.format_counts,
            format_sample: s.format_sample,
        }),
        numbers,
        booleans: p
            .booleans
            .map(|[true_count, false_count]| BooleanProfile { true_count, false_count }),
        arrays: p.arrays.map(|a| ArrayProfile {
            count: a.count,
            min_length: a.min_length,
            max_length: a.max_length,
            avg_length: a.avg_length.into(),
            empty_count: a.empty_count,
        }),
        objects: p.objects,
        dropped_keys: p.dropped_keys,
        depth_limited: p.depth_limited,
        approximate: p.approximate.map(|a| Approximation {
            distinct_relative_error: a.distinct_relative_error.map(f64::from),
            value_relative_error: a.value_relative_error.map(f64::from),
            count_undercount: a.count_undercount,
        }),
    })
}

/// Number statistics back; `None` when the exact median is not an integer's text (not written
/// by [`StoredProfile::of`]).
fn numbers_back(n: StoredNumbers) -> Option<NumberProfile> {
    let exact_median = match &n.exact_median {
        Some(text) => Some(Quarters::from_quarter_units(text.parse().ok()?)),
        None => None,
    };
    Some(NumberProfile {
        count: n.count,
        integer_count: n.integer_count,
        float_count: n.float_count,
        min: n.min.into(),
        max: n.max.into(),
        mean: n.mean.into(),
        exact_sum: n.exact_sum.as_deref().and_then(|s| s.parse().ok()),
        median: n.median.into(),
        median_key: n
            .median_key
            .map(|(double, offset)| NumberKey::from_parts(double.into(), offset)),
        std_dev: n.std_dev.into(),
        distinct: n.distinct,
        top: top_back(n.top),
        quartiles: [n.quartiles[0].into(), n.quartiles[1].into()],
        exact_median,
        runs: None,
        edge_counts: None,
        exact_range: n.exact_range.map(|[(low, low_offset), (high, high_offset)]| {
            (
                NumberKey::from_parts(low.into(), low_offset),
                NumberKey::from_parts(high.into(), high_offset),
            )
        }),
        exact_text_count: n.exact_text_count,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ProfileBuilder;

    /// A profile as a database computes it: no sorted values kept.
    fn database_like(values: &[Value]) -> CollectionProfile {
        let mut builder = ProfileBuilder::new();
        for v in values {
            builder.add_value(v);
        }
        let mut profile = builder.finish(values.len() as u64);
        let mut stack = vec![&mut profile.root];
        while let Some(node) = stack.pop() {
            if let Some(numbers) = &mut node.profile.numbers {
                numbers.runs = None;
            }
            stack.extend(node.items.as_deref_mut());
            stack.extend(node.children.iter_mut());
        }
        profile
    }

    fn round_trip(profile: &CollectionProfile) -> CollectionProfile {
        let stored = StoredProfile::of(profile).expect("storable");
        let text = serde_json::to_string(&stored).expect("json");
        let read: StoredProfile = serde_json::from_str(&text).expect("reads back");
        read.into_profile().expect("a profile")
    }

    #[test]
    fn every_figure_comes_back_bit_for_bit() {
        let values = [
            json!({"id": 9_007_199_254_740_993_u64, "x": 0.1, "s": "a", "b": true, "t": [1, 2.5]}),
            json!({"id": 9_007_199_254_740_995_u64, "x": 1e-300, "s": "é\u{0}", "b": null}),
            json!({"id": -3, "x": 0.30000000000000004, "nested": {"k": "2024-01-02"}, "t": []}),
            json!({"x": 123_456.789_012_345_67, "s": "a", "nested": {"k": "2024-01-03"}}),
        ];
        let mut profile = database_like(&values);
        // Figures JSON numbers cannot hold must come back too.
        let x = PropertyPath::root().child("x");
        let numbers = profile
            .root
            .children
            .iter_mut()
            .find(|n| n.profile.path == x)
            .and_then(|n| n.profile.numbers.as_mut())
            .expect("numbers of x");
        numbers.min = f64::NEG_INFINITY;
        numbers.mean = f64::NAN;
        let back = round_trip(&profile);
        // Debug shows every field, the ones `Serialize` leaves out included.
        assert_eq!(format!("{back:?}"), format!("{profile:?}"));
        assert_eq!(
            serde_json::to_value(&back).expect("json"),
            serde_json::to_value(&profile).expect("json")
        );
    }

    #[test]
    fn profiles_holding_what_the_stored_form_lacks_are_not_stored() {
        let mut builder = ProfileBuilder::new();
        builder.add_value(&json!({"n": 1}));
        // In memory, numbers keep their sorted values for histograms of any bin count.
        assert!(StoredProfile::of(&builder.finish(1)).is_none());

        let mut profile = database_like(&[json!({"n": 1})]);
        profile.path_limit_hit = true;
        assert!(StoredProfile::of(&profile).is_none());
    }

    #[test]
    fn a_stored_median_that_is_not_an_integer_is_refused() {
        let profile = database_like(&[json!({"n": 1}), json!({"n": 4})]);
        let mut stored =
            serde_json::to_value(StoredProfile::of(&profile).expect("storable")).expect("json");
        let numbers = &mut stored["root"]["children"][0]["profile"]["numbers"];
        assert!(numbers["exact_median"].is_string(), "{numbers}");
        numbers["exact_median"] = json!("1.5");
        let read: StoredProfile = serde_json::from_value(stored).expect("reads");
        assert!(read.into_profile().is_none());
    }
}
