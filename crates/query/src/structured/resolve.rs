//! Field captions to catalog columns: `Table.Column`, or a column name unique in the catalog,
//! with did-you-mean.

use schemascope_core::suggest::closest;
use schemascope_core::{Catalog, ColumnInfo, TableInfo};

use crate::issue::{IssueKind, QueryIssue};

/// The table and column a caption names.
pub(super) fn resolve<'c>(
    catalog: &'c Catalog,
    caption: &str,
) -> Result<(&'c TableInfo, &'c ColumnInfo), QueryIssue> {
    if let Some((table, column)) = caption.rsplit_once('.')
        && let Some(t) = catalog.table(table)
    {
        return match t.column(column) {
            Some(c) => Ok((t, c)),
            None => {
                let close: Vec<String> =
                    closest(column, t.columns.iter().map(|c| c.name.as_str()), 3)
                        .into_iter()
                        .map(|c| format!("{}.{c}", t.name))
                        .collect();
                Err(QueryIssue::new(
                    IssueKind::UnknownField,
                    format!("table {} has no column {column}{}", t.name, hint(&close)),
                )
                .suggest_first(&close))
            }
        };
    }
    let hits: Vec<(&TableInfo, &ColumnInfo)> =
        catalog.tables.iter().filter_map(|t| t.column(caption).map(|c| (t, c))).collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let all: Vec<String> = catalog
                .tables
                .iter()
                .flat_map(|t| t.columns.iter().map(move |c| format!("{}.{}", t.name, c.name)))
                .collect();
            let close = closest(caption, all.iter().map(String::as_str), 3);
            Err(QueryIssue::new(
                IssueKind::UnknownField,
                format!("no field called {caption}{}", hint(&close)),
            )
            .suggest_first(&close))
        }
        many => {
            let options: Vec<String> =
                many.iter().map(|(t, c)| format!("{}.{}", t.name, c.name)).collect();
            Err(QueryIssue::new(
                IssueKind::AmbiguousColumn,
                format!(
                    "{caption} is a column of several tables: {}; write Table.Column",
                    options.join(", ")
                ),
            )
            .suggest_first(&options))
        }
    }
}

fn hint(close: &[String]) -> String {
    if close.is_empty() { String::new() } else { format!("; did you mean {}?", close.join(", ")) }
}
