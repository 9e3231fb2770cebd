//! describe_property's `value`: whether a property stores a value exactly, and the stored values
//! closest to it as people write them (the value index's matching: case, accents, words,
//! typos). A database is asked whether the value is stored; other sources answer from their
//! profile's counted values.

use schemascope_core::display::{escape_controls, shorten_value_key, shorten_value_keys};
use schemascope_core::profile::{PropertyProfile, value_key};
use schemascope_core::value_index::{ColumnValues, ValueIndex};
use schemascope_core::{Collection, PropertyPath};
use schemascope_sources::Source;
use schemascope_sources::sql::SqlValue;
use serde_json::{Value, json};

use crate::result::ToolError;
use crate::schema_docs::{Docs, value_index_of};

/// Closest values listed.
const CLOSEST: usize = 5;

/// `{value, stored, closest}` for `value` of `path`, and the sentence that says it. `stored` is
/// null when it cannot be told (a file's property with more values than were counted).
pub(crate) fn lookup(
    docs: &Docs,
    source: &Source,
    collection: &Collection,
    path: &PropertyPath,
    profile: Option<&PropertyProfile>,
    value: &str,
) -> Result<(Value, String), ToolError> {
    let column = match (collection.table(), path.last_key()) {
        (Some(table), Some(column)) if path.depth() == 1 => Some((table, column)),
        _ => None,
    };
    let (stored, closest) = match (column, &source.database) {
        (Some((table, column)), Some(database)) => {
            let dialect = database.dialect();
            let predicate = database.shown_value_predicate(&dialect.quote(column), value);
            let sql = format!(
                "SELECT 1 FROM {} WHERE {predicate} LIMIT 1",
                dialect.quote_table(&table.name)
            );
            let rows = database.query(&sql, &[SqlValue::Text(value.to_string())])?;
            let closest = value_index_of(docs, source)
                .map(|index| index.similar(&table.name, column, value, CLOSEST))
                .unwrap_or_default();
            (Some(!rows.is_empty()), closest)
        }
        _ => {
            // What the profile counted: all of the property's values when it has few, each under
            // its key (an over-long one under a shortened key with a hash of the whole).
            let strings = profile.and_then(|p| p.strings.as_ref());
            let counted: Vec<&str> = strings
                .map(|s| s.top.iter().filter_map(|v| v.value.as_str()).collect())
                .unwrap_or_default();
            // An estimated distinct count proves no list complete.
            let exact = profile.is_some_and(|p| p.approximate.is_none());
            let complete = exact && strings.is_some_and(|s| s.top.len() as u64 >= s.distinct);
            let key = value_key(value);
            let found = counted.iter().any(|v| *v == key);
            // Suggested as they are shown: a long one's start and length, not its key.
            let shown = shorten_value_keys(&counted, usize::MAX);
            let index = ValueIndex::new(vec![ColumnValues {
                table: String::new(),
                column: String::new(),
                values: shown,
                complete,
            }]);
            let closest = index.similar("", "", value, CLOSEST);
            (if found || complete { Some(found) } else { None }, closest)
        }
    };
    // The value itself is not its own closest, as written or as a long one is shown.
    let itself = shorten_value_key(&value_key(value), usize::MAX);
    let closest: Vec<String> = closest.into_iter().filter(|c| c != value && *c != itself).collect();
    let approximate_undercount =
        profile.and_then(|p| p.approximate).and_then(|a| a.count_undercount);
    // Controls escaped: NULs or tabs printed as they are read as spaces or nothing in a sentence.
    let quoted = |v: &str| format!("'{}'", escape_controls(v));
    let sentence = match stored {
        Some(true) => format!("{} is a stored value of {path}.", quoted(value)),
        Some(false) => format!("No item has {path} = {}.", quoted(value)),
        None => format!("{} is not among the counted values of {path}.", quoted(value)),
    };
    let sentence = match approximate_undercount {
        Some(d) if stored != Some(true) => format!(
            "{sentence} The counts of {path} are estimates past the memory budget: a value occurring {d} times or fewer may occur without being kept."
        ),
        _ => sentence,
    };
    let sentence = if closest.is_empty() || stored == Some(true) {
        sentence
    } else {
        let listed: Vec<String> = closest.iter().map(|c| quoted(c)).collect();
        format!("{sentence} Closest stored: {}.", listed.join(", "))
    };
    Ok((json!({"value": value, "stored": stored, "closest": closest}), sentence))
}
