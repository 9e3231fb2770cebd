//! Column types as the validator and compiler need them: numeric, text, temporal, boolean, or
//! unknown — read from the declared type with SQLite's affinity rules extended by PostgreSQL's
//! type names.

use schemascope_core::ColumnInfo;

/// The broad type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Integers, reals, numerics and decimals.
    Numeric,
    /// Character types.
    Text,
    /// Dates, times and timestamps.
    Temporal,
    /// Booleans.
    Boolean,
    /// No declared type, or one not recognised (SQLite stores anything): never an error.
    Unknown,
}

impl ColumnType {
    /// The broad type of a declared type (`NVARCHAR(120)`, `numeric(10,2)`, `DATETIME`, …).
    pub fn of_declared(declared: &str) -> Self {
        let t = declared.to_ascii_lowercase();
        let has = |s: &str| t.contains(s);
        if t.is_empty() || t == "others" {
            Self::Unknown
        } else if has("date") || has("time") || has("interval") {
            Self::Temporal
        } else if has("bool") {
            Self::Boolean
        } else if has("int")
            || has("real")
            || has("floa")
            || has("doub")
            || has("numeric")
            || has("decimal")
            || has("number")
            || has("money")
            || has("serial")
        {
            Self::Numeric
        } else if has("char") || has("clob") || has("text") || has("string") || has("uuid") {
            Self::Text
        } else {
            Self::Unknown
        }
    }

    /// The broad type of a column.
    pub fn of(column: &ColumnInfo) -> Self {
        Self::of_declared(&column.declared_type)
    }

    /// Lowercase name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Numeric => "numeric",
            Self::Text => "text",
            Self::Temporal => "date/time",
            Self::Boolean => "boolean",
            Self::Unknown => "untyped",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ColumnType;

    #[test]
    fn declared_types_map_to_broad_types() {
        assert_eq!(ColumnType::of_declared("NVARCHAR(120)"), ColumnType::Text);
        assert_eq!(ColumnType::of_declared("numeric(10,2)"), ColumnType::Numeric);
        assert_eq!(ColumnType::of_declared("DATETIME"), ColumnType::Temporal);
        assert_eq!(ColumnType::of_declared("timestamp without time zone"), ColumnType::Temporal);
        assert_eq!(ColumnType::of_declared("NUMBER"), ColumnType::Numeric);
        assert_eq!(ColumnType::of_declared(""), ColumnType::Unknown);
        assert_eq!(ColumnType::of_declared("boolean"), ColumnType::Boolean);
    }
}
