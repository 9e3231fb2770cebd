//! Record sets: a JSON object of named records (`{"server::Config": {...}, ...}`), or NDJSON of
//! `{key, value, metadata?}` lines where a key may repeat — its value history, oldest first.

use std::path::Path;

use schemascope_core::SharedText;

use schemascope_core::{Collection, CollectionKind, ItemEntry, ItemId, ProfileBuilder};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::SourceError;
use crate::ndjson::{LineError, LineHandler, line_error, scan};
use crate::skipped_lines::SkippedLines;
use crate::source::Progress;

/// The members of a JSON object as written, values left as text: no value is parsed into a tree,
/// so a deeply nested record is not refused by the parser's recursion limit (its profile applies
/// the depth limit, as for any item). A repeated key keeps its first place and its last value,
/// as a JSON object does.
struct RawMembers<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawMembers<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = RawMembers<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of named records")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members: Vec<(String, &'de RawValue)> = Vec::new();
                let mut index: std::collections::HashMap<String, usize> =
                    std::collections::HashMap::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    match index.get(&key) {
                        Some(&at) => members[at].1 = value,
                        None => {
                            index.insert(key.clone(), members.len());
                            members.push((key, value));
                        }
                    }
                }
                Ok(RawMembers(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Loads a JSON object of named records, in file order. Each record's value is profiled from its
/// text like any other item, so the profile's depth limit applies to a deeply nested one.
pub(crate) fn load_record_object(
    path: &Path,
    name: &str,
    text: SharedText,
) -> Result<Collection, SourceError> {
    let syntax = |e: serde_json::Error, line: usize, column: usize| SourceError::Syntax {
        path: path.to_path_buf(),
        line,
        column,
        message: if e.is_data() {
            format!("{e}; a record file is an object of named records")
        } else {
            e.to_string()
        },
    };
    let members: RawMembers<'_> = serde_json::from_str(&text).map_err(|e| {
        let (line, column) = (e.line(), e.column());
        syntax(e, line, column)
    })?;
    let base = text.as_ptr() as usize;
    let mut builder = ProfileBuilder::new();
    let mut items = Vec::with_capacity(members.0.len());
    for (key, raw) in members.0 {
        let start = raw.get().as_ptr() as usize - base;
        // Skimmed as part of the object: numbers out of range and the like show up here.
        builder.add_json(raw.get()).map_err(|e| {
            let (line, column) = crate::error::position(&text, start);
            let (line, column) = if e.line() > 1 {
                (line + e.line() - 1, e.column())
            } else {
                (line, column + e.column().saturating_sub(1))
            };
            syntax(e, line, column)
        })?;
        items.push(ItemEntry::new(ItemId::from(key), start..start + raw.get().len()));
    }
    let count = items.len() as u64;
    Ok(Collection::new(name, CollectionKind::Records, text.clone(), items, builder.finish(count)))
}

/// One `{key, value, metadata?}` line. Other members are ignored; a member given twice keeps
/// its last value, as JSON parsers read the object (a derived struct refused the line).
struct RecordLine<'a> {
    key: &'a RawValue,
    value: &'a RawValue,
    metadata: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for RecordLine<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = RecordLine<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a record {key, value, metadata?}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let (mut key, mut value, mut metadata) = (None, None, None);
                while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let slot = match &*name {
                        "key" => &mut key,
                        "value" => &mut value,
                        "metadata" => &mut metadata,
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(map.next_value::<&'de RawValue>()?);
                }
                let missing = |field| serde::de::Error::missing_field(field);
                Ok(RecordLine {
                    key: key.ok_or_else(|| missing("key"))?,
                    value: value.ok_or_else(|| missing("value"))?,
                    metadata,
                })
            }
        }
        deserializer.deserialize_map(Members)
    }
}

struct RecordHandler;

fn span(line: &str, offset: usize, raw: &RawValue) -> std::ops::Range<usize> {
    let start = offset + (raw.get().as_ptr() as usize - line.as_ptr() as usize);
    start..start + raw.get().len()
}

impl LineHandler for RecordHandler {
    fn handle(
        &self,
        line: &str,
        offset: usize,
        builder: &mut ProfileBuilder,
    ) -> Result<ItemEntry, LineError> {
        let record: RecordLine<'_> = serde_json::from_str(line).map_err(|e| {
            let mut error = line_error(&e);
            if e.is_data() {
                error.message.push_str(
                    "; each line must be {\"key\": ..., \"value\": ..., \"metadata\"?: ...}",
                );
            }
            error
        })?;
        let key = match serde_json::from_str::<Value>(record.key.get()) {
            Ok(Value::String(s)) => s,
            Ok(Value::Number(n)) => n.to_string(),
            _ => {
                return Err(LineError {
                    column: 1,
                    message: format!(
                        "`key` must be a string or a number, not {}",
                        record.key.get()
                    ),
                });
            }
        };
        builder.add_json(record.value.get()).map_err(|e| line_error(&e))?;
        let metadata = record.metadata.filter(|m| m.get() != "null").map(|m| span(line, offset, m));
        Ok(ItemEntry::with_metadata(ItemId::from(key), span(line, offset, record.value), metadata))
    }
}

/// Loads NDJSON `{key, value, metadata?}` lines.
pub(crate) fn load_record_lines(
    name: &str,
    text: SharedText,
    progress: &dyn Progress,
    skipped: &mut SkippedLines,
) -> Collection {
    let mut result = scan(&text, &RecordHandler, progress);
    *skipped = std::mem::take(&mut result.skipped);
    let count = result.line_count() as u64;
    let builder = std::mem::take(&mut result.builder);
    let items = result.into_items();
    Collection::new(name, CollectionKind::Records, text, items, builder.finish(count))
}

/// True when the first non-empty line of NDJSON text looks like a `{key, value}` record line.
pub(crate) fn looks_like_record_lines(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .and_then(|l| serde_json::from_str::<RecordLine<'_>>(l).ok())
        .is_some()
}
