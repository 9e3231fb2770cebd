//! describe_schema's structured result: per collection its size and a summary line of facts per
//! property (type, presence, enum values, range, format, cardinality, samples).

use serde::Serialize;
use serde_json::{Value, json};

use crate::catalog::{ForeignKey, TableInfo, TableKind};
use crate::collection::{Collection, CollectionKind};
use crate::display::inline_list;
use crate::profile::{
    CollectionProfile, DataType, PathLimit, PropertyProfile, StringFormat, ValueCount, ValueType,
};

/// Distinct values up to which a string property lists all of them (seed 000: ≤ 10).
pub const ENUM_MAX: u64 = 10;
/// Samples shown per property.
pub const SAMPLES: usize = 3;

/// The summary of one property.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertySummary {
    /// Dot path.
    pub path: String,
    /// `string`, `number`, `boolean`, `array`, `object`, `null` or `mixed`.
    #[serde(rename = "type")]
    pub data_type: &'static str,
    /// True when every number is an integer (for `number`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer: Option<bool>,
    /// Values per type, for `mixed` (and whenever nulls occur, so counts add up).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<TypeShare>,
    /// True when some values are null.
    pub nullable: bool,
    /// Units that could hold the property: the collection's items, or for a path inside an
    /// array (`readings[].v`) the elements of those arrays across the collection.
    pub total_count: u64,
    /// Units with a non-null value.
    pub present_count: u64,
    /// Units where the value is null.
    pub null_count: u64,
    /// Units without the key (or without the parent holding it); present + null + missing = total.
    pub missing_count: u64,
    /// Distinct scalar values.
    pub cardinality: u64,
    /// All values, when a string property (or an array's string elements) has few ([`ENUM_MAX`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// Numeric range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// The string format every value has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// For arrays: the type of their elements.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_type: Option<String>,
    /// A few frequent values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Value>,
    /// For a table column: what the database says about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<ColumnFacts>,
    /// The figures that are estimates (past a streamed profile's memory budget) and how close
    /// each is; absent when every figure is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approximate: Option<serde_json::Map<String, Value>>,
    /// How close the cardinality is, for the markdown (`±1.62 %`), when it is an estimate.
    #[serde(skip)]
    pub cardinality_error: Option<String>,
}

/// What the database declares about a column (beside what its values show).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnFacts {
    /// Declared SQL type.
    pub declared_type: String,
    /// False for `NOT NULL` columns.
    pub nullable: bool,
    /// True for primary-key columns.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub primary_key: bool,
    /// `Table.column` this column references by foreign key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<String>,
    /// The column's comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// A count of values of one type.
#[derive(Debug, Clone, Serialize)]
pub struct TypeShare {
    /// Type name.
    #[serde(rename = "type")]
    pub value_type: ValueType,
    /// Values of that type.
    pub count: u64,
}

/// A range: numbers, or the earliest and latest of dates and times.
#[derive(Debug, Clone, Serialize)]
pub struct Range {
    /// Smallest value.
    pub min: Value,
    /// Largest value.
    pub max: Value,
}

/// The summary of one record (one key of a record set).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordSummary {
    /// The record key.
    pub name: String,
    /// Values seen for it.
    pub value_count: u64,
    /// The type of its value.
    pub value_type: &'static str,
    /// Its properties, when its values are objects.
    pub properties: Vec<PropertySummary>,
    /// The summary of the value itself (range, values, …), when it is not an object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<PropertySummary>,
    /// What the path limit kept out of its profile, when it was hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_limit: Option<PathLimit>,
}

/// The summary of one collection.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionSummary {
    /// Collection name.
    pub name: String,
    /// What it holds.
    pub kind: CollectionKind,
    /// Number of items; `None` for a table not counted yet (a view before its profile's first
    /// scan: the database keeps no estimate of a view's rows).
    pub count: Option<u64>,
    /// True when every figure of every property is exact; false when some properties outgrew a
    /// streamed profile's memory budget and name their estimates under `approximate`.
    pub exact: bool,
    /// Property summaries, depth first.
    pub properties: Vec<PropertySummary>,
    /// For record sets: one summary per record key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<Vec<RecordSummary>>,
    /// True when the path limit stopped profiling new properties.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub path_limit_hit: bool,
    /// What the path limit kept out: the limit, how many properties were not profiled, which
    /// were profiled only in part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_limit: Option<PathLimit>,
    /// For database tables: table or view, primary key, foreign keys and comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<TableFacts>,
    /// Values nested past the profile's depth limit: counted, not described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth_cut: Option<DepthCut>,
    /// For document sets: the documents that are not objects (a number, string, array or null
    /// on its own line), which have no properties.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_objects: Option<NotObjects>,
    /// True when `count` is the database's estimate (the table's profile has not counted it yet).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub count_is_estimate: bool,
    /// For a table whose profile is not ready: where it stands. `properties` then lists only the
    /// columns profiled so far, and `unprofiledColumns` the others, with what the catalog says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<PendingProfile>,
    /// The columns not profiled yet (see `profile`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unprofiled_columns: Vec<UnprofiledColumn>,
}

/// Where a table's profile stands while it is not ready.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingProfile {
    /// `computing`, `notStarted`, `retrying` or `failed`.
    pub state: crate::ProfileState,
    /// Columns profiled so far, every figure final.
    pub columns_done: usize,
    /// Columns in the table.
    pub columns: usize,
    /// What is being computed now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computing: Option<String>,
    /// Why the last attempt stopped, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A column whose profile is not computed yet: what the catalog says about it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnprofiledColumn {
    /// Dot path (the column's name).
    pub path: String,
    /// What the database declares.
    pub column: ColumnFacts,
}

/// What the profile's depth limit left undescribed in a collection.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepthCut {
    /// The depth limit, in levels.
    pub max_depth: usize,
    /// Objects and arrays at the limit, not descended into.
    pub values: u64,
    /// The first path they lie at.
    pub below: String,
}

/// A document set's documents that are not objects.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotObjects {
    /// How many.
    pub count: u64,
    /// How many of each JSON type, most first.
    pub types: Vec<(&'static str, u64)>,
}

/// The documents of `profile` that are not objects, if any.
fn not_objects(profile: &CollectionProfile) -> Option<NotObjects> {
    let types = profile.root.profile.types;
    let count = types.total().saturating_sub(types.object);
    let types = types
        .breakdown()
        .into_iter()
        .filter(|(t, _)| *t != crate::profile::ValueType::Object)
        .map(|(t, n)| (t.name(), n))
        .collect();
    (count > 0).then_some(NotObjects { count, types })
}

/// What the database declares about a table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableFacts {
    /// Table or view.
    pub kind: TableKind,
    /// Primary-key columns.
    pub primary_key: Vec<String>,
    /// Foreign keys it declares.
    pub foreign_keys: Vec<ForeignKey>,
    /// The table's comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Summarises one property.
pub fn summarize_property(p: &PropertyProfile, profile: &CollectionProfile) -> PropertySummary {
    let data_type = p.data_type();
    let mut samples = Vec::new();
    let mut enum_values = None;
    if let Some(strings) = &p.strings {
        // Only an exact count proves the list complete.
        let complete = strings.distinct <= ENUM_MAX && p.approximate.is_none();
        if complete && data_type == DataType::Single(ValueType::String) {
            enum_values = Some(shown_enum_values(&strings.top));
        } else {
            samples.extend(shown_samples(&strings.top));
        }
    }
    let range = p
        .numbers
        .as_ref()
        .map(|n| Range { min: n.min_value(), max: n.max_value() })
        .or_else(|| {
            // Dates and times in RFC 3339 sort as text, so their text range is their time range.
            let s =
                p.strings.as_ref().filter(|s| s.format.is_some_and(StringFormat::is_temporal))?;
            Some(Range { min: json!(s.min), max: json!(s.max) })
        });
    let item_type = p.arrays.as_ref().map(|_| {
        profile
            .node(&p.path.items())
            .map_or_else(|| "unknown (always empty)".to_string(), |n| type_phrase(&n.profile))
    });
    if let (Some(_), Some(items)) = (&p.arrays, profile.property(&p.path.items()))
        && let Some(strings) = &items.strings
    {
        // Arrays of a few distinct strings (tags, roles) list them all, like a string enum.
        if strings.distinct <= ENUM_MAX
            && items.approximate.is_none()
            && items.data_type() == DataType::Single(ValueType::String)
            && enum_values.is_none()
        {
            enum_values = Some(shown_enum_values(&strings.top));
        } else {
            samples.extend(shown_samples(&strings.top));
        }
    }
    let types = if data_type == DataType::Mixed || p.nulls > 0 {
        p.types
            .breakdown()
            .into_iter()
            .map(|(value_type, count)| TypeShare { value_type, count })
            .collect()
    } else {
        Vec::new()
    };
    PropertySummary {
        path: p.path.to_string(),
        data_type: data_type.name(),
        integer: p.numbers.as_ref().map(|n| n.all_integers()),
        types,
        nullable: p.nullable(),
        total_count: p.total,
        present_count: p.non_null(),
        null_count: p.nulls,
        missing_count: p.missing(),
        cardinality: p.distinct,
        enum_values,
        range,
        format: p.strings.as_ref().and_then(|s| s.format),
        item_type,
        samples,
        column: None,
        approximate: p.approximate.map(|a| {
            let mut figures = a.figures();
            // The summary's names only.
            figures.retain(|k, _| matches!(k.as_str(), "cardinality" | "values"));
            figures
        }),
        cardinality_error: p.approximate.and_then(|a| a.distinct_phrase()),
    }
}

/// The facts a table declares about the column at `path` (a top-level path).
fn column_facts(table: &TableInfo, path: &str) -> Option<ColumnFacts> {
    let column = table.columns.iter().find(|c| {
        c.name == path || crate::PropertyPath::root().child(&c.name).to_string() == path
    })?;
    let references = table.foreign_keys.iter().find_map(|fk| {
        let at = fk.columns.iter().position(|c| c == &column.name)?;
        let target = fk.referenced_columns.get(at).map_or(String::new(), |c| format!(".{c}"));
        Some(format!("{}{target}", fk.referenced_table))
    });
    Some(ColumnFacts {
        declared_type: column.declared_type.clone(),
        nullable: column.nullable,
        primary_key: table.is_primary_key(&column.name),
        references,
        comment: column.comment.clone(),
    })
}

/// Counted values as an enumeration lists them: whole, but an over-long string's key as its start
/// and length (never the hash the key carries).
fn shown_enum_values(top: &[ValueCount]) -> Vec<Value> {
    crate::display::shorten_value_list(top.iter().map(|v| &v.value), usize::MAX)
}

/// The first counted values as samples show them, shortened.
fn shown_samples(top: &[ValueCount]) -> Vec<Value> {
    crate::display::shorten_value_list(top.iter().take(SAMPLES).map(|v| &v.value), 60)
}

/// A short phrase for a type: `string`, `integer`, `mixed (string, integer)`.
pub fn type_phrase(p: &PropertyProfile) -> String {
    match p.data_type() {
        DataType::Single(ValueType::Number)
            if p.numbers.as_ref().is_some_and(|n| n.all_integers()) =>
        {
            "integer".into()
        }
        DataType::Single(t) => t.name().into(),
        DataType::Null => "null".into(),
        DataType::Mixed => {
            let names: Vec<&str> = p
                .types
                .breakdown()
                .iter()
                .filter(|(t, _)| *t != ValueType::Null)
                .map(|(t, _)| t.name())
                .collect();
            format!("mixed ({})", names.join(", "))
        }
    }
}

/// Summaries of every property in a profile (the root itself excluded).
pub fn summarize_properties(profile: &CollectionProfile) -> Vec<PropertySummary> {
    profile.properties().into_iter().map(|p| summarize_property(p, profile)).collect()
}

/// Summarises a collection; record sets also get one summary per record key. A table whose
/// profile is not ready is summarised from what is known — the catalog, the row estimate, the
/// columns profiled so far — and never waited for: callers that want the whole profile ask for
/// it first ([`Collection::profile`]).
pub fn summarize_collection(collection: &Collection) -> CollectionSummary {
    if let Some(table) = collection.table().filter(|_| collection.profile_pending()) {
        return summarize_pending_table(collection, table);
    }
    let profile = collection.profile();
    let records = (collection.kind() == CollectionKind::Records).then(|| {
        collection
            .record_profiles()
            .iter()
            .map(|(name, profile)| RecordSummary {
                name: name.clone(),
                value_count: profile.item_count,
                value_type: profile.root.profile.data_type().name(),
                properties: summarize_properties(profile),
                value: (profile.root.profile.objects == 0)
                    .then(|| summarize_property(&profile.root.profile, profile)),
                path_limit: limit_kept_out(profile),
            })
            .collect()
    });
    let mut properties = summarize_properties(profile);
    let table = collection.table().map(|t| {
        for property in &mut properties {
            property.column = column_facts(t, &property.path);
        }
        table_facts(t)
    });
    CollectionSummary {
        name: collection.name().to_string(),
        kind: collection.kind(),
        count: Some(collection.item_count()),
        exact: profile.is_exact(),
        properties,
        records,
        path_limit_hit: profile.path_limit_hit,
        path_limit: limit_kept_out(profile),
        table,
        depth_cut: depth_cut(profile),
        not_objects: (collection.kind() == CollectionKind::Documents)
            .then(|| not_objects(profile))
            .flatten(),
        count_is_estimate: false,
        profile: None,
        unprofiled_columns: Vec::new(),
    }
}

fn table_facts(t: &TableInfo) -> TableFacts {
    TableFacts {
        kind: t.kind,
        primary_key: t.primary_key.clone(),
        foreign_keys: t.foreign_keys.clone(),
        comment: t.comment.clone(),
    }
}

/// A table whose profile is not ready: its columns profiled so far, the others as the catalog
/// declares them, the row count once counted (else the catalog's, marked when an estimate).
fn summarize_pending_table(collection: &Collection, table: &TableInfo) -> CollectionSummary {
    let progress = collection.profile_progress();
    let mut properties = progress.partial.as_deref().map(summarize_properties).unwrap_or_default();
    for property in &mut properties {
        property.column = column_facts(table, &property.path);
    }
    let done: std::collections::HashSet<&str> =
        properties.iter().map(|p| p.path.as_str()).collect();
    let unprofiled_columns: Vec<UnprofiledColumn> = table
        .columns
        .iter()
        .map(|c| crate::PropertyPath::root().child(&c.name).to_string())
        .filter(|path| !done.contains(path.as_str()))
        .filter_map(|path| Some(UnprofiledColumn { column: column_facts(table, &path)?, path }))
        .collect();
    CollectionSummary {
        name: collection.name().to_string(),
        kind: collection.kind(),
        count: collection.known_item_count(),
        // The columns shown are final; an estimated row count is not an exact figure.
        exact: !collection.count_is_estimate(),
        profile: Some(PendingProfile {
            state: collection.profile_state(),
            columns_done: properties.len(),
            columns: table.columns.len(),
            computing: progress.step,
            error: collection.profile_error(),
        }),
        properties,
        records: None,
        path_limit_hit: false,
        path_limit: None,
        table: Some(table_facts(table)),
        depth_cut: None,
        not_objects: None,
        count_is_estimate: collection.count_is_estimate(),
        unprofiled_columns,
    }
}

/// What the depth limit left undescribed, if anything.
fn depth_cut(profile: &CollectionProfile) -> Option<DepthCut> {
    let cut: Vec<&PropertyProfile> =
        profile.properties().iter().copied().filter(|p| p.depth_limited > 0).collect();
    let first = cut.first()?;
    Some(DepthCut {
        max_depth: crate::profile::ProfileLimits::default().max_depth,
        values: cut.iter().map(|p| p.depth_limited).sum(),
        below: first.path.to_string(),
    })
}

/// The profile's path limit, when it kept something out.
fn limit_kept_out(profile: &CollectionProfile) -> Option<PathLimit> {
    (!profile.path_limit.is_clear()).then(|| profile.path_limit.clone())
}

/// One line of prose facts about a property, as the system prompt shows it:
/// `(number, 147/150 present): 0.02 - 0.98`. With `samples` false, example values are left out.
pub fn describe_line(s: &PropertySummary, samples: bool) -> String {
    let mut head = match (s.data_type, s.integer) {
        ("number", Some(true)) => "integer".to_string(),
        (t, _) => t.to_string(),
    };
    if s.data_type == "mixed" {
        let parts: Vec<String> =
            s.types.iter().map(|t| format!("{} {}", t.value_type.name(), t.count)).collect();
        head = format!("mixed: {}", parts.join(", "));
    }
    if let Some(item) = &s.item_type {
        // A mixed property keeps its types; its arrays' items are named beside them.
        head = if s.data_type == "mixed" {
            format!("{head}; arrays of {}", plural(item))
        } else {
            format!("array of {}", plural(item))
        };
    }
    if let Some(format) = s.format {
        head.push_str(", ");
        head.push_str(format.name());
    }
    if s.present_count < s.total_count {
        // Inside an array the units are the arrays' elements, not the items: say so.
        let unit = if s.path.contains("[]") { " elements" } else { "" };
        head.push_str(&format!(", {}/{}{unit} present", s.present_count, s.total_count));
    }
    if s.nullable && s.data_type != "mixed" {
        head.push_str(&format!(", {} null", s.null_count));
    }
    let mut facts = Vec::new();
    if let Some(values) = &s.enum_values {
        facts.push(inline_list(values, 40).join(", "));
    } else if let Some(range) = &s.range {
        let show = |v: &Value| match v {
            Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), number),
            Value::Number(n) => n.to_string(),
            other => crate::display::escape_controls(other.as_str().unwrap_or_default()),
        };
        facts.push(format!("{} - {}", show(&range.min), show(&range.max)));
    }
    if s.enum_values.is_none() && s.data_type == "string" && s.cardinality > 0 {
        match &s.cardinality_error {
            Some(error) => facts.push(format!("≈{} distinct ({error})", s.cardinality)),
            None => facts.push(format!("{} distinct", s.cardinality)),
        }
    }
    let dated = s.format.is_some_and(StringFormat::is_temporal);
    if samples && !s.samples.is_empty() && !dated {
        let shown = inline_list(&s.samples, 40);
        facts.push(format!("e.g. {}", shown.join(", ")));
    }
    if facts.is_empty() { format!("({head})") } else { format!("({head}): {}", facts.join("; ")) }
}

fn plural(item: &str) -> String {
    match item {
        "mixed" => "mixed values".into(),
        t if t.starts_with("mixed") || t.starts_with("unknown") => t.into(),
        t => format!("{t}s"),
    }
}

/// Formats a number for prose: its shortest exact form (see [`crate::figure::text`]).
pub fn number(value: f64) -> String {
    crate::figure::text(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_property_mixing_arrays_with_other_types_says_mixed() {
        let values = [json!({"v": {"a": 1}}), json!({"v": "str"}), json!({"v": []})];
        let mut builder = crate::ProfileBuilder::new();
        values.iter().for_each(|v| builder.add_value(v));
        let profile = builder.finish(3);
        let property = profile.property(&crate::path::PropertyPath::root().child("v")).expect("v");
        let line = describe_line(&summarize_property(property, &profile), true);
        assert!(line.starts_with("(mixed: "), "{line}");
        assert!(
            line.contains("array 1") && line.contains("string 1") && line.contains("object 1"),
            "{line}"
        );
    }
}
