//! find_items: items matching a JMESPath selector.

use schemascope_core::ceilings::Ceiling;
use schemascope_core::display::DisplayLimits;
use schemascope_core::selector::{Selector, find_items as find};
use serde_json::json;

use crate::params::FindItemsParams;
use crate::resolve;
use crate::result::{ToolError, ToolResult, envelope};
use crate::sources::Sources;

/// find_items.
pub fn find_items(sources: &Sources, params: FindItemsParams) -> ToolResult {
    envelope(run(sources, params))
}

fn run(sources: &Sources, params: FindItemsParams) -> Result<ToolResult, ToolError> {
    if params.selector.trim().is_empty() {
        return Err(ToolError::InvalidParams(
            "`selector` is empty; e.g. \"type == 'server'\"".into(),
        ));
    }
    let selector = Selector::parse(&params.selector)?;
    let source = sources.get(params.source.as_deref())?;
    let (collection, _) = resolve::one(&source, params.collection.as_deref())?;
    if !collection.holds_items() {
        return Err(ToolError::InvalidParams(format!(
            "`{}` is a database table: find_items evaluates JMESPath on items held in memory (graphs, records, documents). \
             For rows, use describe_property for a column's values or sample_data with stratify_by.",
            collection.name()
        )));
    }
    let others: Vec<&schemascope_core::Collection> =
        source.collections.iter().map(|c| &**c).filter(|c| c.name() != collection.name()).collect();
    let found = find(
        collection,
        &others,
        &selector,
        Ceiling::Limit.admit_usize(params.limit, 5)?.min(schemascope_core::selector::MAX_ITEMS),
        &DisplayLimits::default(),
    )?;
    let kind = collection.kind();
    // A selector holds backticks (number literals): fence it past them, or the span breaks.
    let mut message = format!(
        "{} of {} match {}.",
        found.count,
        kind.counted(found.total as u64),
        schemascope_core::display::code(selector.as_str())
    );
    message.push_str(&found.unevaluated.sentence(kind.item_noun(), kind.items_noun()));
    for hint in &found.hints {
        message.push_str(&format!(" Hint: {hint}"));
    }
    message.push_str(&schemascope_core::display::depth_cut_sentence(found.depth_limited));
    let mut data = json!(found);
    data["collection"] = collection.name().into();
    if let Some(total) = collection.sample_of() {
        // Counts of a sample are not counts of the file: say so rather than let them pass.
        message.push_str(&format!(
            " The file is too large to hold: these are matches among a uniform sample of {} of its {}; the property statistics of describe_schema and describe_property cover all of them.",
            collection.len(),
            kind.counted(total)
        ));
        data["sampleOf"] = json!(total);
    }
    Ok(ToolResult::ok(message, data))
}
