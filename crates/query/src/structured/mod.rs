//! The structured query, spelled as Tableau's VizQL Data Service spells it: fields with
//! optional functions, aliases and sorting; SET, TOP, MATCH, quantitative and relative-date
//! filters; options. Unknown members are rejected, and parse errors name the JSON path.

pub mod compile;
mod dates;
mod resolve;
pub mod validate;

use serde::{Deserialize, Serialize};

use crate::QueryParseError;

/// A structured query: `{"fields": [...], "filters": [...], "options": {"rowLimit": 100}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StructuredQuery {
    /// The columns of the result, in order.
    pub fields: Vec<Field>,
    /// Conditions rows (or groups, for aggregated fields) must meet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<Filter>,
    /// Options.
    #[serde(default, skip_serializing_if = "Options::is_default")]
    pub options: Options,
}

/// One result column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Field {
    /// `Table.Column`, or a column name unique in the catalog.
    pub field_caption: String,
    /// An aggregate (a measure) or date function; none for a plain dimension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<Function>,
    /// The result column's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_alias: Option<String>,
    /// Sort by this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_direction: Option<SortDirection>,
    /// Sort order among sorted fields (1 first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_priority: Option<u32>,
}

/// A field named in a filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldRef {
    /// `Table.Column`, or a column name unique in the catalog.
    pub field_caption: String,
    /// An aggregate or date function applied before filtering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<Function>,
}

/// Field functions: aggregates make a field a measure; date functions keep it a dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Function {
    /// Sum.
    Sum,
    /// Mean.
    Avg,
    /// Median (PostgreSQL only).
    Median,
    /// Count of non-null values.
    Count,
    /// Count of distinct values.
    Countd,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
    /// Sample standard deviation.
    Stdev,
    /// Sample variance.
    Var,
    /// Year number.
    Year,
    /// Quarter number (1–4).
    Quarter,
    /// Month number (1–12).
    Month,
    /// Day of month.
    Day,
    /// First day of the year, as `YYYY-MM-DD`.
    TruncYear,
    /// First day of the quarter.
    TruncQuarter,
    /// First day of the month.
    TruncMonth,
    /// Monday of the week (ISO weeks).
    TruncWeek,
    /// The day.
    TruncDay,
}

impl Function {
    /// True for aggregates.
    pub fn is_aggregate(self) -> bool {
        matches!(
            self,
            Self::Sum
                | Self::Avg
                | Self::Median
                | Self::Count
                | Self::Countd
                | Self::Min
                | Self::Max
                | Self::Stdev
                | Self::Var
        )
    }

    /// True for aggregates that need numbers.
    pub fn is_numeric_aggregate(self) -> bool {
        matches!(self, Self::Sum | Self::Avg | Self::Median | Self::Stdev | Self::Var)
    }

    /// True for date parts and truncations.
    pub fn is_date(self) -> bool {
        !self.is_aggregate()
    }

    /// The name as spelled in queries (`COUNTD`).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SortDirection {
    /// Ascending.
    Asc,
    /// Descending.
    Desc,
}

/// TOP keeps the largest values, BOTTOM the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TopDirection {
    /// The largest.
    #[default]
    Top,
    /// The smallest.
    Bottom,
}

/// Kinds of numeric range filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QuantitativeFilterType {
    /// Between `min` and `max`, inclusive.
    Range,
    /// At least `min`.
    Min,
    /// At most `max`.
    Max,
    /// Only nulls.
    OnlyNull,
    /// Only non-nulls.
    OnlyNonNull,
}

/// Calendar periods of relative date filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PeriodType {
    /// Calendar years.
    Years,
    /// Calendar quarters.
    Quarters,
    /// Calendar months.
    Months,
    /// ISO weeks (Monday first).
    Weeks,
    /// Days.
    Days,
}

/// Which periods, relative to the anchor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DateRangeType {
    /// The anchor's period.
    Current,
    /// The period before.
    Last,
    /// The last `rangeN` periods, the anchor's included.
    Lastn,
    /// The period after.
    Next,
    /// The next `rangeN` periods, the anchor's included.
    Nextn,
    /// From the start of the anchor's period to the anchor, inclusive.
    Todate,
}

/// A filter, tagged by `filterType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "filterType",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Filter {
    /// The field's value is (or, with `exclude`, is not) one of `values`.
    Set {
        /// The field.
        field: FieldRef,
        /// Allowed values.
        values: Vec<serde_json::Value>,
        /// Keep rows whose value is not listed instead.
        #[serde(default)]
        exclude: bool,
    },
    /// Only the `howMany` values of `field` with the largest (smallest) `fieldToMeasure`.
    Top {
        /// The dimension limited.
        field: FieldRef,
        /// How many values to keep.
        how_many: u32,
        /// Largest or smallest.
        #[serde(default)]
        direction: TopDirection,
        /// The aggregated measure ranking the values.
        field_to_measure: FieldRef,
    },
    /// Text matching (case-insensitive in both dialects).
    Match {
        /// The field.
        field: FieldRef,
        /// Prefix.
        #[serde(default)]
        starts_with: Option<String>,
        /// Suffix.
        #[serde(default)]
        ends_with: Option<String>,
        /// Substring.
        #[serde(default)]
        contains: Option<String>,
        /// Whole value (case-sensitive).
        #[serde(default)]
        exact_match: Option<String>,
        /// Keep rows that do not match instead.
        #[serde(default)]
        exclude: bool,
    },
    /// A numeric range.
    QuantitativeNumerical {
        /// The field.
        field: FieldRef,
        /// Which bounds apply.
        quantitative_filter_type: QuantitativeFilterType,
        /// Lower bound, inclusive.
        #[serde(default)]
        min: Option<f64>,
        /// Upper bound, inclusive.
        #[serde(default)]
        max: Option<f64>,
    },
    /// A date range (`YYYY-MM-DD`, both days inclusive).
    QuantitativeDate {
        /// The field.
        field: FieldRef,
        /// Which bounds apply (RANGE when omitted).
        #[serde(default)]
        quantitative_filter_type: Option<QuantitativeFilterType>,
        /// First day.
        #[serde(default)]
        min_date: Option<String>,
        /// Last day.
        #[serde(default)]
        max_date: Option<String>,
    },
    /// Periods relative to an anchor date (the caller's "today" unless `anchorDate`).
    Date {
        /// The field.
        field: FieldRef,
        /// Calendar unit.
        period_type: PeriodType,
        /// Which periods.
        date_range_type: DateRangeType,
        /// N of LASTN/NEXTN.
        #[serde(default)]
        range_n: Option<u32>,
        /// The anchor (`YYYY-MM-DD`).
        #[serde(default)]
        anchor_date: Option<String>,
    },
}

impl Filter {
    /// The filtered field.
    pub fn field(&self) -> &FieldRef {
        match self {
            Self::Set { field, .. }
            | Self::Top { field, .. }
            | Self::Match { field, .. }
            | Self::QuantitativeNumerical { field, .. }
            | Self::QuantitativeDate { field, .. }
            | Self::Date { field, .. } => field,
        }
    }
}

/// Query options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Options {
    /// At most this many rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_limit: Option<u64>,
}

impl Options {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Reads a structured query from JSON; errors name the JSON path (`fields[2].function`).
pub fn parse(value: serde_json::Value) -> Result<StructuredQuery, QueryParseError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        QueryParseError { message: e.into_inner().to_string(), path: (path != ".").then_some(path) }
    })
}
