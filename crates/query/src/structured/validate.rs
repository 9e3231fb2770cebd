//! Validating a structured query: fields resolve, functions fit column types, measures and
//! dimensions are used sensibly, filters are complete and their values exist, options are in
//! bounds, and large unaggregated results get a row limit.

use schemascope_core::Catalog;

use super::resolve::resolve;
use super::{Filter, QuantitativeFilterType, StructuredQuery};
use crate::issue::{IssueKind, Issues, QueryIssue, ValidationReport};
use crate::sql::ROW_LIMIT;
use crate::types::ColumnType;
use crate::values::{KnownValues, check_number, check_string};

/// Validates `query` against `catalog` and `values`. Locations are JSON paths.
pub fn validate_structured(
    query: &StructuredQuery,
    catalog: &Catalog,
    values: &dyn KnownValues,
) -> ValidationReport {
    let mut issues = Issues::default();
    if query.fields.is_empty() {
        issues.error(
            QueryIssue::new(IssueKind::InvalidOption, "a query needs at least one field")
                .at_path("fields"),
        );
    }
    let mut seen: Vec<(String, String, Option<super::Function>)> = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    for (i, field) in query.fields.iter().enumerate() {
        let path = format!("fields[{i}]");
        let (table, column) = match resolve(catalog, &field.field_caption) {
            Ok(found) => found,
            Err(issue) => {
                issues.error(issue.at_path(format!("{path}.fieldCaption")));
                continue;
            }
        };
        tables.push(table.name.clone());
        let key = (table.name.clone(), column.name.clone(), field.function);
        if seen.contains(&key) {
            issues.error(
                QueryIssue::new(
                    IssueKind::DuplicateField,
                    format!(
                        "{}.{} is selected twice with the same function",
                        table.name, column.name
                    ),
                )
                .at_path(path.clone()),
            );
        }
        seen.push(key);
        if let Some(f) = field.function {
            function_fits(f, &table.name, column, &format!("{path}.function"), &mut issues);
            if matches!(f, super::Function::Sum | super::Function::Avg)
                && (table.is_primary_key(&column.name)
                    || table.foreign_key_of(&column.name).is_some())
            {
                issues.warn(
                    QueryIssue::new(
                        IssueKind::Aggregation,
                        format!("{} of {}.{}, an identifier", f.name(), table.name, column.name),
                    )
                    .at_path(format!("{path}.function"))
                    .suggest("COUNT or COUNTD"),
                );
            }
        }
    }
    for (i, filter) in query.filters.iter().enumerate() {
        let path = format!("filters[{i}]");
        let field = filter.field();
        let resolved = match resolve(catalog, &field.field_caption) {
            Ok(found) => Some(found),
            Err(issue) => {
                issues.error(issue.at_path(format!("{path}.field.fieldCaption")));
                None
            }
        };
        if let (Some((table, column)), Some(f)) = (resolved, field.function) {
            function_fits(f, &table.name, column, &format!("{path}.field.function"), &mut issues);
        }
        if let Some((table, _)) = resolved {
            tables.push(table.name.clone());
        }
        let ty = resolved.map_or(ColumnType::Unknown, |(_, c)| ColumnType::of(c));
        let plain = field.function.is_none();
        let bad = |message: String| {
            QueryIssue::new(IssueKind::InvalidOption, message).at_path(path.clone())
        };
        match filter {
            Filter::Set { values: listed, .. } => {
                if let Some((table, column)) = resolved.filter(|_| plain) {
                    for (j, v) in listed.iter().enumerate() {
                        let issue = match v {
                            serde_json::Value::String(s) => {
                                check_string(values, &table.name, &column.name, s)
                                    .map(|i| (i, true))
                            }
                            serde_json::Value::Number(n) => n
                                .as_f64()
                                .and_then(|n| check_number(values, &table.name, &column.name, n))
                                .map(|i| (i, false)),
                            _ => None,
                        };
                        match issue {
                            Some((i, true)) => {
                                issues.error(i.at_path(format!("{path}.values[{j}]")))
                            }
                            Some((i, false)) => {
                                issues.warn(i.at_path(format!("{path}.values[{j}]")))
                            }
                            None => {}
                        }
                    }
                }
            }
            Filter::Top { how_many, field_to_measure, .. } => {
                if *how_many == 0 {
                    issues.error(bad("TOP needs howMany of at least 1".into()));
                }
                if !field_to_measure.function.is_some_and(super::Function::is_aggregate) {
                    issues.error(
                        QueryIssue::new(
                            IssueKind::Aggregation,
                            "TOP needs an aggregated fieldToMeasure to rank by",
                        )
                        .at_path(format!("{path}.fieldToMeasure.function"))
                        .suggest("SUM"),
                    );
                }
                match resolve(catalog, &field_to_measure.field_caption) {
                    Ok((table, column)) => {
                        if let Some(f) = field_to_measure.function {
                            function_fits(
                                f,
                                &table.name,
                                column,
                                &format!("{path}.fieldToMeasure.function"),
                                &mut issues,
                            );
                        }
                    }
                    Err(issue) => {
                        issues.error(issue.at_path(format!("{path}.fieldToMeasure.fieldCaption")))
                    }
                }
            }
            Filter::Match { starts_with, ends_with, contains, exact_match, .. } => {
                if starts_with.is_none()
                    && ends_with.is_none()
                    && contains.is_none()
                    && exact_match.is_none()
                {
                    issues.error(bad(
                        "MATCH needs startsWith, endsWith, contains or exactMatch".into()
                    ));
                }
            }
            Filter::QuantitativeNumerical { quantitative_filter_type: kind, min, max, .. } => {
                let missing = match kind {
                    QuantitativeFilterType::Range => min.is_none() || max.is_none(),
                    QuantitativeFilterType::Min => min.is_none(),
                    QuantitativeFilterType::Max => max.is_none(),
                    _ => false,
                };
                if missing {
                    issues.error(bad(
                        format!("{kind:?} needs its bounds (min and/or max)").to_uppercase()
                    ));
                }
                if plain && !matches!(ty, ColumnType::Numeric | ColumnType::Unknown) {
                    issues.error(bad(format!(
                        "{} is {}, not numeric",
                        field.field_caption,
                        ty.name()
                    )));
                }
            }
            Filter::QuantitativeDate { min_date, max_date, .. } => {
                if min_date.is_none() && max_date.is_none() {
                    issues.error(bad("QUANTITATIVE_DATE needs minDate and/or maxDate".into()));
                }
                for (name, d) in [("minDate", min_date), ("maxDate", max_date)] {
                    if let Some(d) = d
                        && chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err()
                    {
                        issues.error(
                            QueryIssue::new(
                                IssueKind::InvalidOption,
                                format!("{d} is not a YYYY-MM-DD date"),
                            )
                            .at_path(format!("{path}.{name}")),
                        );
                    }
                }
                if plain && !matches!(ty, ColumnType::Temporal | ColumnType::Unknown) {
                    issues.error(bad(format!(
                        "{} is {}, not a date",
                        field.field_caption,
                        ty.name()
                    )));
                }
            }
            Filter::Date { date_range_type, range_n, anchor_date, .. } => {
                if matches!(
                    date_range_type,
                    super::DateRangeType::Lastn | super::DateRangeType::Nextn
                ) && !range_n.is_some_and(|n| n > 0)
                {
                    issues.error(bad("LASTN and NEXTN need rangeN of at least 1".into()));
                }
                if let Some(d) = anchor_date
                    && chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err()
                {
                    issues.error(
                        QueryIssue::new(
                            IssueKind::InvalidOption,
                            format!("{d} is not a YYYY-MM-DD date"),
                        )
                        .at_path(format!("{path}.anchorDate")),
                    );
                }
                if plain && !matches!(ty, ColumnType::Temporal | ColumnType::Unknown) {
                    issues.error(bad(format!(
                        "{} is {}, not a date",
                        field.field_caption,
                        ty.name()
                    )));
                }
            }
        }
    }
    if query.options.row_limit == Some(0) {
        issues.error(
            QueryIssue::new(IssueKind::InvalidOption, "rowLimit must be at least 1")
                .at_path("options.rowLimit"),
        );
    }
    let aggregated =
        query.fields.iter().any(|f| f.function.is_some_and(super::Function::is_aggregate));
    let has_top = query.filters.iter().any(|f| matches!(f, Filter::Top { .. }));
    let mut rewritten = None;
    if !aggregated && !has_top && query.options.row_limit.is_none() {
        let largest = tables
            .iter()
            .filter_map(|t| {
                values
                    .row_count(t)
                    .or_else(|| catalog.table(t).and_then(|i| i.row_count))
                    .map(|n| (t, n))
            })
            .max_by_key(|(_, n)| *n);
        if let Some((table, rows)) = largest
            && rows > ROW_LIMIT
        {
            let mut limited = query.clone();
            limited.options.row_limit = Some(ROW_LIMIT);
            rewritten = serde_json::to_string(&limited).ok();
            issues.warn(
                QueryIssue::new(
                    IssueKind::RowLimit,
                    format!("{table} has {rows} rows and nothing aggregates or limits the result; rowLimit {ROW_LIMIT} was added"),
                )
                .at_path("options.rowLimit")
                .suggest("aggregate a measure, add a TOP filter, or set options.rowLimit"),
            );
        }
    }
    issues.into_report(rewritten)
}

/// Numeric aggregates need numbers, date functions need dates; untyped columns pass.
fn function_fits(
    f: super::Function,
    table: &str,
    column: &schemascope_core::ColumnInfo,
    path: &str,
    issues: &mut Issues,
) {
    let ty = ColumnType::of(column);
    let wrong = if f.is_numeric_aggregate() {
        !matches!(ty, ColumnType::Numeric | ColumnType::Unknown)
    } else if f.is_date() {
        !matches!(ty, ColumnType::Temporal | ColumnType::Unknown)
    } else {
        false
    };
    if wrong {
        let want = if f.is_date() { "a date" } else { "a number" };
        let suggestion =
            if f.is_date() { "no function, or COUNT/COUNTD" } else { "COUNT or COUNTD" };
        issues.error(
            QueryIssue::new(
                IssueKind::Aggregation,
                format!(
                    "{} needs {want}, but {table}.{} is {} ({})",
                    f.name(),
                    column.name,
                    ty.name(),
                    column.declared_type
                ),
            )
            .at_path(path)
            .suggest(suggestion),
        );
    }
}
