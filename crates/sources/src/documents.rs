//! Document sets: a JSON array or NDJSON file, one collection of items. An item's id is its
//! top-level `id` member when it has a scalar one, else its position (`#0`, `#1`, …). Duplicate
//! ids are kept apart with a `~2`, `~3` suffix and reported.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use schemascope_core::SharedText;

use schemascope_core::{
    Collection, CollectionKind, CollectionProfile, ItemEntry, ItemId, ProfileBuilder,
};
use serde_json::value::RawValue;

use crate::error::{LoadWarning, SourceError};
use crate::ndjson::{LineError, LineHandler, line_error, scan};
use crate::skipped_lines::SkippedLines;
use crate::source::Progress;

struct DocumentHandler;

impl LineHandler for DocumentHandler {
    fn handle(
        &self,
        line: &str,
        offset: usize,
        builder: &mut ProfileBuilder,
    ) -> Result<ItemEntry, LineError> {
        let id = builder.add_json(line).map_err(|e| line_error(&e))?;
        // The position is filled in once the slices are joined.
        let id = id.map_or(ItemId::InText { start: 0, len: 0 }, |id| id.shifted(offset));
        Ok(ItemEntry::new(id, offset..offset + line.len()))
    }

    fn builder(&self) -> ProfileBuilder {
        ProfileBuilder::new().capture_ids()
    }
}

/// True when the profile proves every item has an `id` of one scalar type and no two are equal
/// (exact distinct counts make this a proof), so no duplicate check is needed.
fn ids_known_unique(profile: &CollectionProfile) -> bool {
    let Ok(path) = "id".parse() else { return false };
    profile.property(&path).is_some_and(|id| {
        let t = &id.types;
        let one_type = (t.string == id.present) || (t.integer == id.present);
        one_type && id.present == profile.item_count && id.distinct == profile.item_count
    })
}

/// The id of the document at `index` that has no `id` member: its position.
fn position_id(index: usize) -> ItemId {
    ItemId::Owned(format!("#{index}").into())
}

/// The placeholder a line handler leaves for a document without an `id` (no real id can be an
/// empty span at the very start of the file: it would lie inside its own document).
fn is_unnamed(id: &ItemId) -> bool {
    matches!(id, ItemId::InText { start: 0, len: 0 })
}

/// Gives repeated ids a `~2`, `~3`… suffix (and says so), unless the profile proved them unique.
fn disambiguate_ids(
    text: &str,
    items: &mut [ItemEntry],
    unique: bool,
    warnings: &mut Vec<LoadWarning>,
) {
    if unique {
        return;
    }
    // Find repeats without copying any id: the set borrows them.
    let mut repeated = Vec::new();
    {
        let mut seen: HashSet<&str, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(items.len(), Default::default());
        for (index, item) in items.iter().enumerate() {
            if !seen.insert(item.id.resolve(text)) {
                repeated.push(index);
            }
        }
    }
    let Some(&first) = repeated.first() else { return };
    let first_id = items[first].id.resolve(text).to_string();
    let mut taken: HashSet<Box<str>> = items.iter().map(|i| i.id.resolve(text).into()).collect();
    // Per repeated id, the last suffix given: the next repeat starts past it, so a file of one id
    // repeated n times takes n steps, not n²/2.
    let mut last: HashMap<Box<str>, usize> = HashMap::new();
    for &index in &repeated {
        let base = items[index].id.resolve(text).to_string();
        let n = last.entry(base.as_str().into()).or_insert(1);
        let candidate: Box<str> = loop {
            *n += 1;
            let candidate: Box<str> = format!("{base}~{n}").into();
            if !taken.contains(&candidate) {
                break candidate;
            }
        };
        taken.insert(candidate.clone());
        items[index].id = ItemId::Owned(candidate);
    }
    warnings.push(LoadWarning::new(format!(
        "{} document(s) repeat an earlier id (first: `{first_id}`); they were given ids with a `~2`, `~3`… suffix",
        repeated.len()
    )));
}

/// Finishes the profile while the item index is built from the same scan, then settles ids.
fn assemble(
    name: &str,
    text: SharedText,
    builder: ProfileBuilder,
    count: u64,
    entries: impl FnOnce() -> Vec<ItemEntry> + Send,
    warnings: &mut Vec<LoadWarning>,
) -> Collection {
    let (profile, mut items) = std::thread::scope(|scope| {
        let index = scope.spawn(entries);
        let profile = builder.finish(count);
        (profile, schemascope_core::sync::joined(index.join()))
    });
    disambiguate_ids(&text, &mut items, ids_known_unique(&profile), warnings);
    Collection::new(name, CollectionKind::Documents, text, items, profile)
}

/// Loads NDJSON documents on all cores.
pub(crate) fn load_document_lines(
    name: &str,
    text: SharedText,
    progress: &dyn Progress,
    warnings: &mut Vec<LoadWarning>,
    skipped: &mut SkippedLines,
) -> Collection {
    let mut result = scan(&text, &DocumentHandler, progress);
    *skipped = std::mem::take(&mut result.skipped);
    let count = result.line_count() as u64;
    let builder = std::mem::take(&mut result.builder);
    let entries = move || {
        let mut items = result.into_items();
        for (index, item) in items.iter_mut().enumerate() {
            if is_unnamed(&item.id) {
                item.id = position_id(index);
            }
        }
        items
    };
    assemble(name, text, builder, count, entries, warnings)
}

/// How a file holds its documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocumentLayout {
    /// One JSON array.
    Array,
    /// JSON values one after another, each over any number of lines (as `jq` writes them).
    Sequence,
}

/// Loads the documents of a JSON file laid out as `layout`, profiling on all cores.
pub(crate) fn load_documents(
    path: &Path,
    name: &str,
    text: SharedText,
    layout: DocumentLayout,
    progress: &dyn Progress,
    warnings: &mut Vec<LoadWarning>,
) -> Result<Collection, SourceError> {
    let raw: Result<Vec<&RawValue>, serde_json::Error> = match layout {
        DocumentLayout::Array => serde_json::from_str(&text),
        DocumentLayout::Sequence => serde_json::Deserializer::from_str(&text).into_iter().collect(),
    };
    let raw = raw.map_err(|e| crate::load::syntax(path, &e))?;
    let base = text.as_ptr() as usize;
    let spans: Vec<std::ops::Range<usize>> = raw
        .iter()
        .map(|r| {
            let start = r.get().as_ptr() as usize - base;
            start..start + r.get().len()
        })
        .collect();
    let threads =
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(spans.len().max(1));
    let chunk = spans.len().div_ceil(threads).max(1);
    type Part = Result<(ProfileBuilder, Vec<Option<ItemId>>), (usize, serde_json::Error)>;
    let parts: Vec<Part> = std::thread::scope(|scope| {
        let handles: Vec<_> = spans
            .chunks(chunk)
            .map(|part| {
                let text = &text;
                scope.spawn(move || {
                    let mut builder = ProfileBuilder::new().capture_ids();
                    let mut bytes = 0;
                    let mut ids = Vec::with_capacity(part.len());
                    // Elements were only skimmed as part of the array; numbers out of range and
                    // the like show up here.
                    for s in part {
                        bytes += s.len();
                        ids.push(builder.add_json(&text[s.clone()]).map_err(|e| (s.start, e))?);
                    }
                    progress.advance(bytes as u64);
                    Ok((builder, ids))
                })
            })
            .collect();
        handles.into_iter().map(|h| schemascope_core::sync::joined(h.join())).collect()
    });
    let mut builder = ProfileBuilder::new();
    let mut ids_in = Vec::with_capacity(spans.len());
    for part in parts {
        let (part, ids) = part.map_err(|(start, e)| {
            let (line, column) = crate::error::position(&text, start);
            let (line, column) = if e.line() > 1 {
                (line + e.line() - 1, e.column())
            } else {
                (line, column + e.column().saturating_sub(1))
            };
            SourceError::Syntax {
                path: path.to_path_buf(),
                line,
                column,
                message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
            }
        })?;
        builder.merge(part);
        ids_in.extend(ids);
    }
    let count = spans.len() as u64;
    let entries = move || {
        ids_in
            .into_iter()
            .zip(spans)
            .enumerate()
            .map(|(i, (id, value))| {
                ItemEntry::new(
                    id.map_or_else(|| position_id(i), |id| id.shifted(value.start)),
                    value,
                )
            })
            .collect()
    };
    Ok(assemble(name, text.clone(), builder, count, entries, warnings))
}
