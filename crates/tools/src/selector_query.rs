//! Queries on graph, record and document sources: a JMESPath selector on one collection, given
//! as the selector text (the default collection) or `{"selector": …, "collection": …}`. Validated
//! locally (syntax with position, every property read exists in the data, with did-you-mean) and
//! run as find_items.

use schemascope_core::display::DisplayLimits;
use schemascope_core::selector::{Selector, find_items};
use schemascope_core::suggest::closest;
use schemascope_core::{Collection, CoreError};
use schemascope_query::{IssueKind, Location, QueryIssue, ValidationReport};
use schemascope_sources::Source;
use serde_json::{Value, json};

use crate::resolve;
use crate::result::ToolError;

/// The selector and collection a query names.
fn parts<'a>(
    source: &'a Source,
    query: &Value,
) -> Result<(String, &'a std::sync::Arc<Collection>), ToolError> {
    let (selector, collection) = match query {
        Value::String(text) => (text.clone(), None),
        Value::Object(object) => (
            object
                .get("selector")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    ToolError::InvalidParams("`query.selector` is missing: {\"selector\": \"type == 'server'\", \"collection\": \"nodes\"}".into())
                })?
                .to_string(),
            object.get("collection").and_then(Value::as_str),
        ),
        _ => return Err(ToolError::InvalidParams("`query` is a JMESPath selector, or {\"selector\": …, \"collection\": …}".into())),
    };
    let (collection, _) = resolve::one(source, collection)?;
    Ok((selector, collection))
}

/// Every property key the collection's items have, at any depth.
fn keys(collection: &Collection) -> Vec<String> {
    let mut keys: Vec<String> = collection
        .profile()
        .properties()
        .iter()
        .filter_map(|p| p.path.last_key().map(str::to_string))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Whether `text` reads as SQL rather than a selector (what a model used to SQL sources sends).
fn looks_like_sql(text: &str) -> bool {
    /// Words a SQL statement starts with, none of which starts a selector a person writes.
    const STATEMENTS: &[&str] = &[
        "select",
        "with",
        "values",
        "table",
        "insert",
        "update",
        "delete",
        "merge",
        "upsert",
        "replace",
        "create",
        "drop",
        "alter",
        "truncate",
        "copy",
        "set",
        "reset",
        "show",
        "describe",
        "desc",
        "explain",
        "prepare",
        "execute",
        "deallocate",
        "begin",
        "start",
        "commit",
        "rollback",
        "savepoint",
        "release",
        "attach",
        "detach",
        "pragma",
        "vacuum",
        "analyze",
        "grant",
        "revoke",
        "call",
        "do",
        "load",
        "install",
        "use",
        "lock",
        "unlock",
        "listen",
        "notify",
        "declare",
        "fetch",
        "close",
        "kill",
        "optimize",
        "system",
        "rename",
    ];
    let text = text.trim_start();
    if text.starts_with("--") || text.starts_with("/*") {
        return true;
    }
    let first = text.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
    // A property named like a keyword is a selector: `desc == 'x'`, `update`, `table.name`.
    let rest = &text[first.len()..];
    let next = rest.trim_start().chars().next();
    STATEMENTS.iter().any(|k| first.eq_ignore_ascii_case(k))
        && (rest.starts_with(char::is_whitespace) || rest.starts_with('('))
        && next.is_some_and(|c| !"=!<>|&.[),".contains(c))
}

/// Why SQL does not run on `source`, and what does.
fn not_sql(source: &Source) -> String {
    let why = match source.collections.iter().find_map(|c| c.sample_of()) {
        Some(total) => format!(
            "its items are a sample of {total} (the file is profiled by streaming, not held in memory)"
        ),
        None => "it is not served to SQL".to_string(),
    };
    format!(
        "source `{}` runs no SQL ({why}), so the query is a JMESPath selector on each item's data (e.g. `type == 'server'`)",
        source.name()
    )
}

/// Whether `query` on `source` is a JMESPath selector rather than SQL: always where the source
/// runs no SQL; on collections held in memory (which run both), when it is given as
/// `{"selector": …}` or as text that does not read as SQL.
pub(crate) fn is_selector(source: &Source, query: &Value) -> bool {
    if source.database.is_none() {
        return true;
    }
    if source.collections.iter().all(|c| c.table().is_some()) {
        return false;
    }
    match query {
        Value::String(text) => !looks_like_sql(text),
        Value::Object(object) => object.contains_key("selector"),
        _ => false,
    }
}

/// Validates a selector query against the data of `source`.
pub(crate) fn validate(source: &Source, query: &Value) -> Result<ValidationReport, ToolError> {
    let (text, collection) = parts(source, query)?;
    if text.trim().is_empty() {
        return Ok(ValidationReport::new(
            vec![
                QueryIssue::new(IssueKind::Syntax, "the selector is empty")
                    .suggest("type == 'server'"),
            ],
            Vec::new(),
            None,
        ));
    }
    let selector = match Selector::parse(&text) {
        Ok(selector) => selector,
        Err(CoreError::InvalidSelector { .. }) if looks_like_sql(&text) => {
            let issue =
                QueryIssue::new(IssueKind::Syntax, not_sql(source)).suggest("type == 'server'");
            return Ok(ValidationReport::new(vec![issue], Vec::new(), None));
        }
        Err(CoreError::InvalidSelector { line, column, reason, hint, .. }) => {
            let mut issue =
                QueryIssue::new(IssueKind::Syntax, format!("invalid JMESPath: {reason}"))
                    .at(Location::at(line as u64, column as u64));
            if let Some(hint) = hint.strip_prefix("\nhint: ") {
                issue = issue.suggest(hint);
            }
            return Ok(ValidationReport::new(vec![issue], Vec::new(), None));
        }
        Err(other) => return Err(other.into()),
    };
    let known = keys(collection);
    let mut errors = Vec::new();
    for (name, offset) in selector.fields() {
        if !known.contains(&name) {
            let mut issue = QueryIssue::new(
                IssueKind::UnknownField,
                format!("no item of `{}` has a property `{name}`", collection.name()),
            )
            .at(Location::at(1, offset as u64 + 1));
            if let Some(best) = closest(&name, known.iter().map(String::as_str), 1).first() {
                issue = issue.suggest(best.to_string());
            }
            errors.push(issue);
        }
    }
    Ok(ValidationReport::new(errors, Vec::new(), None))
}

/// Runs a selector query: the matching items as rows `[id, data]`.
pub(crate) fn execute(
    source: &Source,
    query: &Value,
    max_rows: usize,
) -> Result<(Vec<String>, Vec<Value>, bool), ToolError> {
    let (text, collection) = parts(source, query)?;
    let selector = match Selector::parse(&text) {
        Err(CoreError::InvalidSelector { .. }) if looks_like_sql(&text) => {
            return Err(ToolError::InvalidParams(not_sql(source)));
        }
        parsed => parsed?,
    };
    let found = find_items(collection, &[], &selector, max_rows, &DisplayLimits::default())?;
    let rows: Vec<Value> = found
        .items
        .iter()
        .map(|item| {
            json!([
                item.get("id").or_else(|| item.get("key")).cloned().unwrap_or(Value::Null),
                item
            ])
        })
        .collect();
    // Truncated when fewer rows are shown than matched, whatever cut them.
    let truncated = rows.len() < found.count;
    Ok((vec!["id".into(), "item".into()], rows, truncated))
}

#[cfg(test)]
mod tests {
    use super::looks_like_sql;

    #[test]
    fn statements_read_as_sql_and_properties_named_like_keywords_as_selectors() {
        for sql in [
            "SELECT 1",
            "  with t as (select 1) select * from t",
            "DROP TABLE x",
            "-- x\nDROP TABLE x",
            "/* c */ SELECT 1",
            "set x = 1",
            "COPY t TO 'f'",
            "select(1)",
            "SHOW TABLES",
            "SELECT /* x */ 1",
            "select -1",
        ] {
            assert!(looks_like_sql(sql), "{sql}");
        }
        for selector in [
            "type == 'server'",
            "desc == 'x'",
            "update",
            "table.name == 'a'",
            "set[0] == `1`",
            "show && active",
            "values[?v > `3`]",
            "update | length(@)",
            "with.x",
        ] {
            assert!(!looks_like_sql(selector), "{selector}");
        }
    }
}
