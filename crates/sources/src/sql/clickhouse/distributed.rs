//! `Distributed` tables: one table on the server the client talks to (the coordinator) over a
//! table of the same structure on every shard of a cluster (`remote_servers`). A statement that
//! reads it is sent to every shard, and the coordinator merges what they return: a profile's
//! aggregates, written over a subquery of the table, are computed on the coordinator from every
//! shard's rows, so they are exact as on one server.
//!
//! What the coordinator's catalog lacks is read from the shards' table where this server has one
//! (most coordinators are shards too): the sorting key, which orders "the first rows" of a sample
//! as on one server rather than in whichever order the shards answer, and the sampling key, by
//! which `SAMPLE` reads a fraction on every shard. The coordinator holds no parts of its own for
//! it, so nothing there tells whether the shards' rows changed: no data version is given
//! (`Database::data_version`), and a kept profile is never served as unchanged.

use crate::error::SourceError;
use crate::sql::{Database, SqlValue};

/// The engine's name in `system.tables`.
pub(super) const ENGINE: &str = "Distributed";

/// Settings under which a statement over a Distributed table returns less than its rows say,
/// silently: `skip_unavailable_shards` leaves out a shard that does not answer, and
/// `distributed_group_by_no_merge` returns each shard's groups unmerged (a `count()` per
/// shard). Where a user's profile sets one, every statement sets it back to 0; a readonly=1
/// profile, which lets no statement set anything, is refused for a database that has
/// Distributed tables.
pub(super) const INEXACT_SETTINGS: [&str; 2] =
    ["skip_unavailable_shards", "distributed_group_by_no_merge"];

/// The database and table a Distributed table reads on each shard, from its `engine_full`:
/// `Distributed(cluster, database, table[, sharding_key[, policy]])`, the names bare, quoted or
/// back-quoted. `None` when either is an expression (`currentDatabase()`) or the text is not
/// of that shape.
pub(super) fn target(engine_full: &str) -> Option<(String, String)> {
    let inner = engine_full.trim().strip_prefix(ENGINE)?.trim_start().strip_prefix('(')?;
    let arguments = top_level_arguments(inner)?;
    Some((name(arguments.get(1)?)?, name(arguments.get(2)?)?))
}

/// The arguments of a call whose text follows its opening parenthesis, split at the commas
/// outside quotes and parentheses, up to its closing parenthesis (`None` without one).
fn top_level_arguments(inner: &str) -> Option<Vec<&str>> {
    let mut arguments = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, ch) in inner.char_indices() {
        if let Some(open) = quote {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if ch == open => quote = None,
                _ => {}
            }
            continue;
        }
        match ch {
            '\'' | '`' | '"' => quote = Some(ch),
            '(' => depth += 1,
            ')' if depth == 0 => {
                arguments.push(inner[start..at].trim());
                return Some(arguments);
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                arguments.push(inner[start..at].trim());
                start = at + 1;
            }
            _ => {}
        }
    }
    None
}

/// A name as an engine argument writes it: a bare identifier, or a quoted one with its
/// backslash escapes resolved.
fn name(argument: &str) -> Option<String> {
    let bare = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if bare(argument) {
        return Some(argument.to_string());
    }
    let quote = argument.chars().next().filter(|c| matches!(c, '\'' | '`' | '"'))?;
    let body = argument.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => out.push(chars.next()?),
            _ if ch == quote => return None,
            _ => out.push(ch),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The sampling key of the table `name` of the served database, or of the shards' table for a
/// Distributed one (empty when there is none, or no such table here).
pub(super) fn sampling_key(db: &dyn Database, name: &str) -> Result<String, SourceError> {
    let rows = db.query(
        "SELECT engine, engine_full, sampling_key FROM system.tables WHERE database = currentDatabase() AND name = $1",
        &[SqlValue::Text(name.to_string())],
    )?;
    let Some(row) = rows.first() else { return Ok(String::new()) };
    let text = |k: usize| row.get(k).and_then(SqlValue::as_str).unwrap_or_default().to_string();
    if text(0) != ENGINE {
        return Ok(text(2));
    }
    let Some((database, table)) = target(&text(1)) else { return Ok(String::new()) };
    let rows = db.query(
        "SELECT sampling_key FROM system.tables WHERE database = $1 AND name = $2",
        &[SqlValue::Text(database), SqlValue::Text(table)],
    )?;
    Ok(rows.first().and_then(|r| r.first()).and_then(SqlValue::as_str).unwrap_or_default().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_bare_quoted_or_back_quoted() {
        let pair = |d: &str, t: &str| Some((d.to_string(), t.to_string()));
        assert_eq!(
            target("Distributed(schemascope, chinook_local, Album, cityHash64(AlbumId))"),
            pair("chinook_local", "Album")
        );
        assert_eq!(target("Distributed(c, 'db', 'l', id)"), pair("db", "l"));
        assert_eq!(target("Distributed('c', `d b`, 'it\\'s', rand())"), pair("d b", "it's"));
        assert_eq!(
            target("Distributed(c, db, t, cityHash64(a, b), 'policy') SETTINGS x = 1"),
            pair("db", "t")
        );
        assert_eq!(target("Distributed(c, db, t)"), pair("db", "t"));
    }

    #[test]
    fn expressions_and_other_shapes_are_not_read() {
        for text in [
            "Distributed(c, currentDatabase(), t)",
            "Distributed(c, db)",
            "Distributed(c, db, t",
            "MergeTree ORDER BY id",
            "Distributed(c, '', t)",
            "Distributed(c, 'a'b', t)",
        ] {
            assert_eq!(target(text), None, "{text}");
        }
    }
}
