//! The finished profile of a collection: per-path statistics, ready to render or query.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::exact::{NumberKey, Quarters};
use super::formats::StringFormat;
use super::numeric::ValueRuns;
use crate::path::{PropertyPath, Segment};

/// The JSON type of a value. Integers and non-integers are told apart as JSON Schema does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// A string.
    String,
    /// A number written without a fraction or exponent.
    Integer,
    /// Any other number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// An array.
    Array,
    /// An object.
    Object,
    /// `null`.
    Null,
}

impl ValueType {
    /// The lowercase name, as JSON Schema spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Array => "array",
            Self::Object => "object",
            Self::Null => "null",
        }
    }
}

/// How many values of each type were seen at a path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TypeCounts {
    /// Strings.
    pub string: u64,
    /// Integers.
    pub integer: u64,
    /// Non-integer numbers.
    pub number: u64,
    /// Booleans.
    pub boolean: u64,
    /// Arrays.
    pub array: u64,
    /// Objects.
    pub object: u64,
    /// Nulls.
    pub null: u64,
}

impl TypeCounts {
    /// Non-zero counts, most frequent first (ties in a fixed type order).
    pub fn breakdown(&self) -> Vec<(ValueType, u64)> {
        let mut all = vec![
            (ValueType::String, self.string),
            (ValueType::Integer, self.integer),
            (ValueType::Number, self.number),
            (ValueType::Boolean, self.boolean),
            (ValueType::Array, self.array),
            (ValueType::Object, self.object),
            (ValueType::Null, self.null),
        ];
        all.retain(|(_, n)| *n > 0);
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        all
    }

    /// Total values counted.
    pub fn total(&self) -> u64 {
        self.string
            + self.integer
            + self.number
            + self.boolean
            + self.array
            + self.object
            + self.null
    }
}

/// The type of a property as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    /// One JSON type (nulls aside): see `nullable`.
    Single(ValueType),
    /// Several non-null types; the breakdown says which.
    Mixed,
    /// Never seen with a non-null value.
    Null,
}

impl DataType {
    /// The name used in tool output: a type name, `mixed`, or `null`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Single(t) => match t {
                // Integers and other numbers are one "number" type to a reader; the split is kept
                // in `integerCount`/`floatCount` and in the JSON Schema.
                ValueType::Integer => "number",
                other => other.name(),
            },
            Self::Mixed => "mixed",
            Self::Null => "null",
        }
    }
}

/// One value and how often it occurs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueCount {
    /// The value (a string, number or boolean).
    pub value: Value,
    /// Occurrences.
    pub count: u64,
}

/// Statistics of the string values at a path.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StringProfile {
    /// Number of string values.
    pub count: u64,
    /// Number of distinct strings (exact).
    pub distinct: u64,
    /// The most frequent values, most frequent first, ties by value; at most [`super::TOP_VALUES`].
    pub top: Vec<ValueCount>,
    /// Shortest length, in characters.
    pub min_length: u64,
    /// Longest length, in characters.
    pub max_length: u64,
    /// Mean length, in characters.
    pub avg_length: f64,
    /// The smallest string (by code point); for dates and times, the earliest.
    pub min: Option<String>,
    /// The largest string; for dates and times, the latest.
    pub max: Option<String>,
    /// The format every value has, if any.
    pub format: Option<StringFormat>,
    /// Values per recognised format (a value has at most one).
    pub format_counts: Vec<(StringFormat, u64)>,
    /// Set when `format_counts` were counted over a sample of this many values rather than over
    /// every value (a database column with too many distinct texts to fetch each: its first
    /// rows); `format` is then not claimed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format_sample: Option<u64>,
}

/// Statistics of the numeric values at a path. Exact: computed from every value.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberProfile {
    /// Number of numeric values.
    pub count: u64,
    /// Values written as integers.
    pub integer_count: u64,
    /// Values written with a fraction or exponent.
    pub float_count: u64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// The exact sum, when every value is an integer and the mean lies past 2^53 (`mean` is its
    /// nearest double there, which may lie outside `min..max`): the mean is shown from it.
    #[serde(skip)]
    pub exact_sum: Option<i128>,
    /// Median (mean of the middle two for an even count).
    pub median: f64,
    /// The median exactly, when it is one of the values (an odd count, or the middle two
    /// equal): it is then shown as `min` and `max` are, with all its digits (an integer past 2^53
    /// too), not rounded as a computed figure.
    #[serde(skip)]
    pub median_key: Option<NumberKey>,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub std_dev: f64,
    /// Number of distinct values.
    pub distinct: u64,
    /// Most frequent values when there are few distinct ones (≤ 20), else empty.
    pub top: Vec<ValueCount>,
    /// First and third quartiles (linear interpolation), for the automatic histogram bin rule.
    #[serde(skip)]
    pub quartiles: [f64; 2],
    /// The median exactly, when every value is an integer: one of them or the midpoint of two
    /// (`median` is its nearest double, which past 2^53 may be another integer).
    #[serde(skip)]
    pub exact_median: Option<Quarters>,
    /// Every value, as sorted runs, when the profile was built in memory (histograms with any bin
    /// count); `None` when a database computed the statistics and counts histogram bins itself.
    #[serde(skip)]
    pub runs: Option<Arc<ValueRuns>>,
    /// The count below every edge of every histogram of the values, when they were spilled to
    /// scratch files and are not kept (`spilled.rs`); `None` otherwise.
    #[serde(skip)]
    pub edge_counts: Option<Arc<super::histogram::EdgeCounts>>,
    /// The smallest and largest value, exactly (`min`/`max` are doubles, which round integers
    /// past 2^53).
    #[serde(skip)]
    pub exact_range: Option<(NumberKey, NumberKey)>,
    /// Values that queries return as their exact text because no JSON number holds them exactly
    /// (a PostgreSQL `numeric` past `float8`'s precision), counted here as numbers by their
    /// nearest double; always 0 for values read from JSON.
    #[serde(skip_serializing_if = "is_zero")]
    pub exact_text_count: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl NumberProfile {
    /// True when every value was written as an integer.
    pub fn all_integers(&self) -> bool {
        self.float_count == 0
    }

    /// The smallest value as JSON, exactly: an integer when it was written as one.
    pub fn min_value(&self) -> Value {
        self.extreme(self.min, self.exact_range.map(|r| r.0))
    }

    /// The largest value as JSON, exactly: an integer when it was written as one.
    pub fn max_value(&self) -> Value {
        self.extreme(self.max, self.exact_range.map(|r| r.1))
    }

    fn extreme(&self, double: f64, exact: Option<NumberKey>) -> Value {
        exact.map_or_else(
            || crate::figure::exact_json(double),
            |key| key.to_json(self.all_integers()),
        )
    }

    /// The mean as JSON: a computed statistic (see [`crate::figure::stat_json_within`]), or
    /// from the exact sum of integers past 2^53 — a JSON integer when whole, else its decimal
    /// text to six places (as a median's midpoint past 2^53 is text).
    pub fn mean_value(&self) -> Value {
        match self.exact_sum.filter(|_| self.all_integers() && self.count > 0) {
            Some(sum) => super::exact::mean_json(sum, self.count),
            None => crate::figure::stat_json_within(self.mean, self.min, self.max),
        }
    }

    /// The median as JSON: exact for integers (a value from the data, or the midpoint of two,
    /// shown with all its digits), else a computed statistic (see [`crate::figure::stat_json`]).
    pub fn median_value(&self) -> Value {
        match (self.exact_median.filter(|_| self.all_integers()), self.median_key) {
            (Some(exact), _) => exact.to_json(),
            (None, Some(key)) => key.to_json(self.all_integers()),
            (None, None) => crate::figure::stat_json_within(self.median, self.min, self.max),
        }
    }

    /// The bin count the automatic rule picks for these values.
    pub fn auto_bins(&self) -> usize {
        super::numeric::auto_bins_for(
            self.count,
            self.min,
            self.max,
            self.quartiles[0],
            self.quartiles[1],
        )
    }
}

/// Counts of the boolean values at a path.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanProfile {
    /// `true` values.
    pub true_count: u64,
    /// `false` values.
    pub false_count: u64,
}

/// Statistics of the arrays at a path; their elements are profiled at `path[]`.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrayProfile {
    /// Number of arrays.
    pub count: u64,
    /// Shortest length.
    pub min_length: u64,
    /// Longest length.
    pub max_length: u64,
    /// Mean length.
    pub avg_length: f64,
    /// Arrays with no elements.
    pub empty_count: u64,
}

/// Which figures of a property are estimates, and how close they are; every figure not named
/// here is exact. Set when the property's exact counters outgrew a streamed profile's memory
/// budget and were replaced by sketches (see `profile::sketch`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approximation {
    /// Distinct counts are HyperLogLog estimates with this relative standard error (0.0081 is
    /// ±0.81 %; 95 % of estimates lie within twice that).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_relative_error: Option<f64>,
    /// Medians, quartiles and histogram counts are computed from values each known to within
    /// this relative error `e` (0.002 is ±0.2 % of the value): a histogram count is exact for
    /// bin edges moved by at most `e / (1 - e)` of themselves (a value up to that far past an
    /// edge may be known as one within it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_relative_error: Option<f64>,
    /// Counts of the most frequent strings may be low by up to this many; only values whose
    /// count exceeds it are listed. A value not listed occurs at most this many times more than
    /// the last one listed, and at most twice this many times when none is listed (its count
    /// may be this bound, and low by as much).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_undercount: Option<u64>,
}

/// How far, relative to itself, a bin edge may move for a histogram count of values each known
/// to within `e` of itself to be exact: a value `v` known as `r`, `|r - v| <= e·|v|`, counted
/// below an edge `b` lies below `b / (1 - e)`, and one counted above an edge `a` lies above
/// `a / (1 + e)`. The same as `e` to the digits shown while `e` is small (0.2 %), much more where
/// a sketch over a huge range widened it (0.46 gives 0.85).
fn edge_move(e: f64) -> f64 {
    if e < 1.0 { e / (1.0 - e) } else { f64::INFINITY }
}

impl Approximation {
    /// The estimated figures of describe_property, each with how close it is, named as the
    /// output names them (`uniqueCount`, `median`, `histogram`, `values`, …).
    pub fn figures(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        if let Some(e) = self.distinct_relative_error {
            let text = format!(
                "estimate (HyperLogLog), ±{} standard error, ±{} for 95 % of estimates",
                percent_text(e),
                percent_text(2.0 * e)
            );
            for name in ["uniqueCount", "distinctStrings", "distinctNumbers", "cardinality"] {
                m.insert(name.into(), Value::String(text.clone()));
            }
        }
        if let Some(e) = self.value_relative_error {
            let text = format!("within ±{} of the value", percent_text(e));
            for name in ["median", "quartiles"] {
                m.insert(name.into(), Value::String(text.clone()));
            }
            m.insert(
                "histogram".into(),
                Value::String(format!(
                    "each count exact for bin edges moved by at most ±{}",
                    percent_text(edge_move(e))
                )),
            );
            // A sketched property's numbers are seen once, so their mean and deviation are
            // running sums (Welford's), not the exact sum and second pass of an exact profile.
            let running = "running sum (Welford's), not the exact sum: the last digits may differ, more where large values of both signs cancel (the error is relative to the largest magnitude, not to the result)";
            for name in ["mean", "stdDev"] {
                m.insert(name.into(), Value::String(running.into()));
            }
        }
        if let Some(n) = self.count_undercount {
            m.insert(
                "values".into(),
                Value::String(format!(
                    "each count may be low by up to {n}, and only values counted more than {n} times are listed; a value not listed occurs at most {n} times more often than the last one listed (at most {} times when none is listed)",
                    n.saturating_mul(2)
                )),
            );
            m.insert(
                "otherCount".into(),
                Value::String(format!("estimate: may be high by up to {n} for each value listed")),
            );
            m.insert(
                "otherDistinct".into(),
                Value::String("estimate, from the estimated distinct count".into()),
            );
        }
        m
    }

    /// One phrase for the markdown: how close the distinct count is.
    pub fn distinct_phrase(&self) -> Option<String> {
        self.distinct_relative_error.map(|e| format!("±{}", percent_text(2.0 * e)))
    }

    /// The figures approximated by both.
    pub fn union(self, other: Approximation) -> Approximation {
        let max_f = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Approximation {
            distinct_relative_error: max_f(
                self.distinct_relative_error,
                other.distinct_relative_error,
            ),
            value_relative_error: max_f(self.value_relative_error, other.value_relative_error),
            count_undercount: match (self.count_undercount, other.count_undercount) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// A relative error as a percentage with two significant digits (0.0081 → `0.81 %`).
/// A bound as a percentage to three significant digits, rounded up: a bound shown is never
/// tighter than the one it states (a histogram's 0.2004 % is "0.201 %", not "0.2 %").
fn percent_text(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if !(percent.is_finite() && percent > 0.0) {
        return format!("{percent} %");
    }
    let scale = 10f64.powi(2 - percent.log10().floor() as i32);
    // Less a hair, so that a bound the digits hold (0.81) is not pushed up by its binary error.
    let up = ((percent * scale) * (1.0 - 1e-12)).ceil() / scale;
    format!("{} %", crate::figure::significant(up, 3))
}

/// Everything known about the values at one path.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyProfile {
    /// Where the values live.
    pub path: PropertyPath,
    /// How many units could hold this property, always counted over the whole collection: the
    /// items, for any path outside arrays (`metrics.cpu.current` is out of every item, whether
    /// or not `metrics` is there); for a path inside an array (`readings[]`, `readings[].v`), the
    /// elements of every such array in the collection.
    pub total: u64,
    /// Units where the key occurs, nulls included (what JSON Schema's `required` looks at); see
    /// [`Self::non_null`] for the count shown as present.
    pub present: u64,
    /// Null values.
    pub nulls: u64,
    /// Values per JSON type.
    pub types: TypeCounts,
    /// Distinct scalar values (strings, numbers, booleans), exact.
    pub distinct: u64,
    /// String statistics, when strings occur.
    pub strings: Option<StringProfile>,
    /// Number statistics, when numbers occur.
    pub numbers: Option<NumberProfile>,
    /// Boolean counts, when booleans occur.
    pub booleans: Option<BooleanProfile>,
    /// Array statistics, when arrays occur.
    pub arrays: Option<ArrayProfile>,
    /// Number of objects, when objects occur.
    pub objects: u64,
    /// Members not profiled because the path limit was reached.
    pub dropped_keys: u64,
    /// Objects/arrays nested past the depth limit: counted but not descended into.
    pub depth_limited: u64,
    /// Which figures are estimates (past a streamed profile's memory budget); `None`: all exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approximate: Option<Approximation>,
}

impl PropertyProfile {
    /// The profile of a path where nothing was counted.
    pub fn empty(path: PropertyPath) -> Self {
        Self {
            path,
            total: 0,
            present: 0,
            nulls: 0,
            types: TypeCounts::default(),
            distinct: 0,
            strings: None,
            numbers: None,
            booleans: None,
            arrays: None,
            objects: 0,
            dropped_keys: 0,
            depth_limited: 0,
            approximate: None,
        }
    }

    /// The property's overall type.
    pub fn data_type(&self) -> DataType {
        let non_null: Vec<ValueType> = self
            .types
            .breakdown()
            .into_iter()
            .map(|(t, _)| t)
            .filter(|t| *t != ValueType::Null)
            .collect();
        match non_null.as_slice() {
            [] => DataType::Null,
            [single] => DataType::Single(*single),
            // Integers mixed with other numbers are still one numeric property.
            [a, b]
                if matches!(
                    (a, b),
                    (ValueType::Integer, ValueType::Number)
                        | (ValueType::Number, ValueType::Integer)
                ) =>
            {
                DataType::Single(ValueType::Number)
            }
            _ => DataType::Mixed,
        }
    }

    /// True when some values are null.
    pub fn nullable(&self) -> bool {
        self.nulls > 0
    }

    /// Units (see [`Self::total`]) lacking the key, or lacking the parent object or array that
    /// would hold it.
    pub fn missing(&self) -> u64 {
        self.total.saturating_sub(self.present)
    }

    /// Units holding a non-null value: what every output calls present. `non_null + nulls +
    /// missing == total`.
    pub fn non_null(&self) -> u64 {
        self.present.saturating_sub(self.nulls)
    }
}

/// A profiled path and its children: object members in first-seen order, array elements as `items`.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileNode {
    /// Statistics of this path.
    pub profile: PropertyProfile,
    /// Object members.
    pub children: Vec<ProfileNode>,
    /// Array elements.
    pub items: Option<Box<ProfileNode>>,
}

impl ProfileNode {
    /// This node and all below it, depth first, parents before children.
    pub fn walk(&self) -> Vec<&ProfileNode> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            out.push(node);
            if let Some(items) = &node.items {
                stack.push(items);
            }
            stack.extend(node.children.iter().rev());
        }
        out
    }
}

/// The profile of a whole collection.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionProfile {
    /// Items profiled.
    pub item_count: u64,
    /// The item values themselves (path `@`), with every property below.
    pub root: ProfileNode,
    /// True when the path limit stopped new properties from being profiled.
    pub path_limit_hit: bool,
    /// What the path limit kept out, when it was hit.
    #[serde(skip_serializing_if = "super::PathLimit::is_clear")]
    pub path_limit: super::PathLimit,
}

impl CollectionProfile {
    /// True when every figure of every property is exact (no property outgrew a memory budget).
    pub fn is_exact(&self) -> bool {
        self.root.walk().iter().all(|n| n.profile.approximate.is_none())
    }

    /// Every property below the item root, depth first.
    pub fn properties(&self) -> Vec<&PropertyProfile> {
        self.root.walk().into_iter().skip(1).map(|n| &n.profile).collect()
    }

    /// The node at `path`, if any value was ever seen there.
    pub fn node(&self, path: &PropertyPath) -> Option<&ProfileNode> {
        let mut node = &self.root;
        for segment in path.segments() {
            node = match segment {
                Segment::Key(key) => node.children.iter().find(|c| matches!(c.profile.path.segments().last(), Some(Segment::Key(k)) if k == key))?,
                Segment::Items => node.items.as_deref()?,
            };
        }
        Some(node)
    }

    /// The profile at `path`.
    pub fn property(&self, path: &PropertyPath) -> Option<&PropertyProfile> {
        self.node(path).map(|n| &n.profile)
    }

    /// The property a table column named `name` holds: the top-level member of that name, else
    /// the nested member its dots name (`metadata.category`, as the SQL tables of in-memory
    /// collections name nested members).
    pub fn column(&self, name: &str) -> Option<&PropertyProfile> {
        self.property(&PropertyPath::root().child(name)).or_else(|| {
            let path = name.split('.').fold(PropertyPath::root(), |p, k| p.child(k));
            name.contains('.').then(|| self.property(&path)).flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Approximation;

    /// Each bound is shown rounded up, and a histogram's edges move by `e / (1 - e)`, which a
    /// sketch widened over a huge range makes far more than `e`.
    #[test]
    fn bounds_are_stated_rounded_up_and_histogram_edges_by_how_far_they_move() {
        let text = |a: Approximation, name: &str| a.figures()[name].as_str().map(str::to_string);
        let sketched = |e| Approximation { value_relative_error: Some(e), ..Default::default() };
        assert_eq!(text(sketched(0.002), "median").as_deref(), Some("within ±0.2 % of the value"));
        assert_eq!(
            text(sketched(0.002), "histogram").as_deref(),
            Some("each count exact for bin edges moved by at most ±0.201 %")
        );
        assert_eq!(
            text(sketched(0.46), "histogram").as_deref(),
            Some("each count exact for bin edges moved by at most ±85.2 %")
        );
        assert_eq!(
            text(sketched(0.461_7), "quartiles").as_deref(),
            Some("within ±46.2 % of the value")
        );
        let distinct =
            Approximation { distinct_relative_error: Some(0.0081), ..Default::default() };
        assert_eq!(
            text(distinct, "uniqueCount").as_deref(),
            Some("estimate (HyperLogLog), ±0.81 % standard error, ±1.62 % for 95 % of estimates")
        );
    }
}
