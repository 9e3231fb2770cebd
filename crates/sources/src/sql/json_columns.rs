//! Profiles of document columns (PostgreSQL `json`, `jsonb` and arrays; ClickHouse arrays,
//! tuples and maps): SQL cannot aggregate
//! their nested properties column by column, so their values are read — exactly as
//! `execute_query` reads them — and profiled in memory like any JSON, up to [`IN_MEMORY_ROWS`]
//! rows. A larger table's document columns are profiled inside the database by the top-level
//! JSON type of each value only: their nested members are then not listed, and the profile
//! counts them as not descended into (`depthLimited`), which every surface reports.

use schemascope_core::ProfileBuilder;
use schemascope_core::path::PropertyPath;
use schemascope_core::profile::{ProfileNode, PropertyProfile, TypeCounts};
use serde_json::{Map, Value};

use schemascope_core::TableInfo;

use super::pushdown::JsonView;
use super::{Database, PROFILE_TIMEOUT_MS};
use crate::error::SourceError;

/// Tables with at most this many rows have their document columns profiled in full.
pub(super) const IN_MEMORY_ROWS: u64 = 200_000;

/// The profile nodes of the document columns `columns` (indices into `names`) of a table of
/// `rows` rows, in the order given.
pub(super) fn profile(
    db: &dyn Database,
    view: &JsonView,
    table: &TableInfo,
    columns: &[usize],
    rows: u64,
) -> Result<Vec<ProfileNode>, SourceError> {
    let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    if columns.is_empty() {
        return Ok(Vec::new());
    }
    if rows <= IN_MEMORY_ROWS {
        in_memory(db, view, &names, columns)
    } else {
        columns.iter().map(|&i| top_level(db, view, table, i, rows)).collect()
    }
}

/// Every value read and profiled as JSON.
fn in_memory(
    db: &dyn Database,
    view: &JsonView,
    names: &[String],
    columns: &[usize],
) -> Result<Vec<ProfileNode>, SourceError> {
    let list: Vec<String> = columns.iter().map(|i| format!("c{i}")).collect();
    // Bounded by IN_MEMORY_ROWS (the table's count a moment ago) plus what was added since.
    let read = db.run(
        &format!("SELECT {} FROM {}", list.join(", "), view.from),
        &[],
        Some(2 * IN_MEMORY_ROWS as usize),
        PROFILE_TIMEOUT_MS,
    )?;
    let mut builder = ProfileBuilder::new();
    for row in &read.rows {
        let object: Map<String, Value> = columns
            .iter()
            .zip(row)
            .map(|(&i, value)| (names[i].clone(), value.as_document()))
            .collect();
        builder.add_value(&Value::Object(object));
    }
    let mut profiled = builder.finish(read.rows.len() as u64).root.children;
    Ok(columns
        .iter()
        .map(|&i| {
            let at = profiled
                .iter()
                .position(|node| node.profile.path.last_key() == Some(names[i].as_str()));
            at.map_or_else(
                || ProfileNode {
                    profile: PropertyProfile::empty(PropertyPath::root().child(&names[i])),
                    children: Vec::new(),
                    items: None,
                },
                |at| profiled.swap_remove(at),
            )
        })
        .collect())
}

/// The top-level JSON type of each value counted inside the database.
fn top_level(
    db: &dyn Database,
    view: &JsonView,
    table: &TableInfo,
    i: usize,
    rows: u64,
) -> Result<ProfileNode, SourceError> {
    let name = &table.columns[i].name;
    let engine = view.engine();
    let counted = match engine.document_kinds(&table.columns[i], rows) {
        Some(counted) => counted,
        None => match engine.document_kind(i) {
            Some(kind) => db.query_with_timeout(
                &format!("SELECT {kind}, COUNT(*) FROM {} GROUP BY 1", view.from),
                &[],
                PROFILE_TIMEOUT_MS,
            )?,
            // An engine whose view makes no documents never gets here.
            None => Vec::new(),
        },
    };
    let mut types = TypeCounts::default();
    for row in &counted {
        let n = row[1].as_count();
        match row[0].as_str() {
            Some("object") => types.object += n,
            Some("array") => types.array += n,
            Some("string") => types.string += n,
            Some("integer") => types.integer += n,
            Some("number") => types.number += n,
            Some("boolean") => types.boolean += n,
            _ => types.null += n,
        }
    }
    let profile = PropertyProfile {
        total: rows,
        present: rows,
        nulls: types.null,
        objects: types.object,
        depth_limited: types.object + types.array,
        types,
        ..PropertyProfile::empty(PropertyPath::root().child(name))
    };
    Ok(ProfileNode { profile, children: Vec::new(), items: None })
}
