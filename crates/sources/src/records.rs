//! Record sets: a JSON object of named records (`{"server::Config": {...}, ...}`), or NDJSON of
//! `{key, value, metadata?}` lines where a key may repeat — its value history, oldest first.

use std::path::Path;

use schemascope_core::SharedText;

use schemascope_core::{Collection, CollectionKind, ItemEntry, ItemId, OwnedItem, ProfileBuilder};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{LoadWarning, SourceError};
use crate::ndjson::{LineError, LineHandler, line_error, scan};
use crate::source::Progress;

/// Loads a JSON object of named records, in file order.
pub fn load_record_object(path: &Path, name: &str, text: &str) -> Result<Collection, SourceError> {
    let map: serde_json::Map<String, Value> = serde_json::from_str(text).map_err(|e| SourceError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: if e.is_data() { format!("{e}; a record file is an object of named records") } else { e.to_string() },
    })?;
    Ok(Collection::from_values(name, CollectionKind::Records, map.into_iter().map(|(key, value)| OwnedItem::new(key, value))))
}

#[derive(serde::Deserialize)]
struct RecordLine<'a> {
    #[serde(borrow)]
    key: &'a RawValue,
    #[serde(borrow)]
    value: &'a RawValue,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

struct RecordHandler;

fn span(line: &str, offset: usize, raw: &RawValue) -> std::ops::Range<usize> {
    let start = offset + (raw.get().as_ptr() as usize - line.as_ptr() as usize);
    start..start + raw.get().len()
}

impl LineHandler for RecordHandler {
    fn handle(&self, line: &str, offset: usize, builder: &mut ProfileBuilder) -> Result<ItemEntry, LineError> {
        let record: RecordLine<'_> = serde_json::from_str(line).map_err(|e| {
            let mut error = line_error(&e);
            if e.is_data() {
                error.message.push_str("; each line must be {\"key\": ..., \"value\": ..., \"metadata\"?: ...}");
            }
            error
        })?;
        let key = match serde_json::from_str::<Value>(record.key.get()) {
            Ok(Value::String(s)) => s,
            Ok(Value::Number(n)) => n.to_string(),
            _ => return Err(LineError { column: 1, message: format!("`key` must be a string or a number, not {}", record.key.get()) }),
        };
        builder.add_json(record.value.get()).map_err(|e| line_error(&e))?;
        let metadata = record.metadata.filter(|m| m.get() != "null").map(|m| span(line, offset, m));
        Ok(ItemEntry::with_extra(ItemId::from(key), span(line, offset, record.value), None, metadata))
    }
}

/// Loads NDJSON `{key, value, metadata?}` lines.
pub fn load_record_lines(name: &str, text: SharedText, progress: &dyn Progress, warnings: &mut Vec<LoadWarning>) -> Collection {
    let mut result = scan(&text, &RecordHandler, progress);
    warnings.append(&mut result.warnings);
    let count = result.line_count() as u64;
    let builder = std::mem::take(&mut result.builder);
    let items = result.into_items();
    Collection::new(name, CollectionKind::Records, text, items, builder.finish(count))
}

/// True when the first non-empty line of NDJSON text looks like a `{key, value}` record line.
pub fn looks_like_record_lines(text: &str) -> bool {
    text.lines().map(str::trim).find(|l| !l.is_empty()).and_then(|l| serde_json::from_str::<RecordLine<'_>>(l).ok()).is_some()
}
