//! describe_schema, the `schema://` resource and the system prompt: the schema summary as JSON
//! and as the markdown section of a system prompt.

use schemascope_core::ceilings::Ceiling;
use schemascope_core::markdown::schema_markdown_with_notes as render_markdown;
use schemascope_core::summary::summarize_collection;
use serde_json::json;

use crate::params::{DescribeSchemaParams, SchemaFormat, SystemPromptParams};
use crate::resolve;
use crate::result::{ToolError, ToolResult, envelope};
use crate::sources::CacheKey;
use crate::sources::Sources;

/// The base of the system prompt the schema section is added to.
pub const BASE_PROMPT: &str = "You are a data assistant. The data you work with is described below: use exact property names and values from it. When unsure, call describe_property for one property's values, sample_data for real items, or query_schema before writing a record value. Selectors for find_items are JMESPath evaluated on each item's data (write `type == 'server'`, numbers in backticks).";

/// Collections whose sizes the message lists one by one; past it, a total.
const LISTED_SIZES: usize = 12;

/// describe_schema.
pub fn describe_schema(sources: &Sources, params: DescribeSchemaParams) -> ToolResult {
    let key = CacheKey::new(
        "describe_schema",
        params.source.as_deref(),
        &[&params.collection, &params.format.map(|f| format!("{f:?}")), &params.max_tokens],
    );
    sources.cached(key, || envelope(run(sources, &params)))
}

fn run(sources: &Sources, params: &DescribeSchemaParams) -> Result<ToolResult, ToolError> {
    let max_tokens = Ceiling::MaxTokens.check_usize(params.max_tokens)?;
    let source = sources.get(params.source.as_deref())?;
    let collections = resolve::many(&source, params.collection.as_deref())?;
    // Profiles first (a view's rows are counted by its profile), as long as the patience set
    // for serving allows; tables not ready by then are shown as far as they are known.
    sources.await_profiles(&source, &collections);
    let properties: usize = collections
        .iter()
        .map(|c| match (c.profile_ready(), c.table()) {
            (None, Some(table)) => table.columns.len(),
            _ => c.profile().properties().len(),
        })
        .sum();
    let sizes: Vec<String> = collections
        .iter()
        .map(|c| match c.known_item_count() {
            None => format!("`{}`: rows not counted yet", c.name()),
            Some(n) if c.count_is_estimate() => {
                format!("about {} (estimated)", c.kind().counted(n))
            }
            Some(n) => c.kind().counted(n),
        })
        .collect();
    // Past a few collections, their sizes one by one would bury the rest of the message.
    let sizes = if sizes.len() <= LISTED_SIZES {
        sizes.join(", ")
    } else {
        let known: Vec<u64> = collections.iter().filter_map(|c| c.known_item_count()).collect();
        let estimated = collections.iter().filter(|c| c.count_is_estimate()).count();
        let uncounted = collections.len() - known.len();
        let mut text = format!(
            "{} collections, {} items in all",
            collections.len(),
            known.iter().sum::<u64>()
        );
        if estimated + uncounted > 0 {
            text.push_str(&format!(
                " ({estimated} counts estimated, {uncounted} collections not counted yet)"
            ));
        }
        text
    };
    let message = format!(
        "Source `{}`: {} with {properties} properties{}.{}",
        source.name(),
        sizes,
        not_profiled(&collections),
        pending_profiles(&collections)
    );
    if params.format == Some(SchemaFormat::Markdown) {
        let refs: Vec<&schemascope_core::Collection> = collections.iter().map(|c| &**c).collect();
        let reload_error = sources.reload_error(source.name());
        let mut data = json!(render_markdown(
            source.name(),
            &refs,
            max_tokens,
            &stale_notes(reload_error.as_deref())
        ));
        data["reloadError"] = json!(reload_error);
        return Ok(ToolResult::ok(message, data));
    }
    let summaries: Vec<_> = collections
        .iter()
        .map(|c| {
            let mut summary = json!(summarize_collection(c));
            if let Some(error) = c.profile_error() {
                summary["profileError"] = json!(error);
            }
            if let Some(table) = c.table() {
                summary["table"]["referencedBy"] = json!(referenced_by(&source, &table.name));
            }
            summary
        })
        .collect();
    Ok(ToolResult::ok(
        message,
        json!({
            "source": source.name(),
            "format": format!("{:?}", source.format).to_lowercase(),
            "collections": summaries,
            "warnings": source.warnings,
            "reloadError": sources.reload_error(source.name()),
        }),
    ))
}

/// " (and N more not profiled: past the 10,000-path limit)" when the path limit kept properties
/// out of any collection's profile, else "": the count of properties must not pass for all.
fn not_profiled(collections: &[std::sync::Arc<schemascope_core::Collection>]) -> String {
    let limits: Vec<&schemascope_core::profile::PathLimit> = collections
        .iter()
        .filter_map(|c| c.profile_ready())
        .map(|p| &p.path_limit)
        .filter(|l| !l.is_clear())
        .collect();
    let Some(max) = limits.iter().map(|l| l.max_paths).max() else { return String::new() };
    let count: u64 = limits.iter().map(|l| l.unprofiled).sum();
    let at_least = if limits.iter().any(|l| l.more_unprofiled) { "at least " } else { "" };
    format!(
        " profiled, and {at_least}{count} more not profiled: past the {}-path limit",
        schemascope_core::figure::grouped(max as u64)
    )
}

/// " Profiles not ready: …" naming the tables whose profile is not ready and where each stands,
/// then " Profiles that could not be computed: …" naming those that failed for a cause that
/// would only repeat (asking again would not help), or "" when every profile is ready.
fn pending_profiles(collections: &[std::sync::Arc<schemascope_core::Collection>]) -> String {
    let (failed, pending): (Vec<_>, Vec<_>) = collections
        .iter()
        .filter(|c| c.profile_pending())
        .partition(|c| c.profile_state() == schemascope_core::ProfileState::Failed);
    let pending: Vec<String> = pending
        .iter()
        .map(|c| {
            let done = c.profile_progress().partial.map_or(0, |p| p.properties().len());
            let columns = c.table().map_or(0, |t| t.columns.len());
            format!(
                "`{}` ({}, {done} of {columns} columns profiled)",
                c.name(),
                c.profile_state().words()
            )
        })
        .collect();
    let failed: Vec<String> = failed.iter().map(|c| format!("`{}`", c.name())).collect();
    let mut out = String::new();
    if !pending.is_empty() {
        out.push_str(&format!(
            " Profiles not ready, shown as far as known (the catalog, and the columns profiled so far; ask again for the rest): {}.",
            listed_names(pending)
        ));
    }
    if !failed.is_empty() {
        out.push_str(&format!(
            " Profiles that could not be computed (each table's `profile.error` says why), shown as far as known: {}.",
            listed_names(failed)
        ));
    }
    out
}

/// `names` joined, the first [`LISTED_SIZES`] and how many more.
fn listed_names(names: Vec<String>) -> String {
    let more = names.len().saturating_sub(LISTED_SIZES);
    let mut names: Vec<String> = names.into_iter().take(LISTED_SIZES).collect();
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    names.join(", ")
}

/// The note a markdown schema carries when the last reload failed: what it shows is the data
/// from before the change, which a reader could not tell otherwise (JSON has `reloadError`).
fn stale_notes(reload_error: Option<&str>) -> Vec<String> {
    reload_error
        .map(|error| format!("**Previous data:** {error}. This describes the data as last loaded, not the file as it is now."))
        .into_iter()
        .collect()
}

/// Foreign keys of the source's tables that reference `table` (the other direction of each FK).
fn referenced_by(source: &schemascope_sources::Source, table: &str) -> Vec<serde_json::Value> {
    source
        .collections
        .iter()
        .filter_map(|c| c.table())
        .flat_map(|t| t.foreign_keys.iter().map(move |fk| (t, fk)))
        .filter(|(_, fk)| fk.referenced_table == table)
        .map(|(t, fk)| json!({"table": t.name, "columns": fk.columns, "referencedColumns": fk.referenced_columns}))
        .collect()
}

/// The markdown schema section of one source (the `schema://<source>` resource).
pub fn schema_markdown(
    sources: &Sources,
    source: &str,
    max_tokens: Option<usize>,
) -> Result<String, ToolError> {
    let source = sources.get(Some(source))?;
    sources.await_profiles(&source, &source.collections);
    let refs: Vec<&schemascope_core::Collection> =
        source.collections.iter().map(|c| &**c).collect();
    // What the operator says the source is comes first: the model reads the figures in its light.
    let mut notes: Vec<String> =
        source.spec.description.iter().map(|d| format!("**About this source:** {d}")).collect();
    notes.extend(stale_notes(sources.reload_error(source.name()).as_deref()));
    let markdown = render_markdown(source.name(), &refs, max_tokens, &notes).markdown;
    if source.aimdb.is_none() {
        return Ok(markdown);
    }
    // A model that may set this source's records reads how, beside its schema.
    Ok(format!("{markdown}\n\n{}", crate::aimdb_guidance::section(Some(&source))))
}

/// A system prompt with the schema section of one source, or of every source (seed 000,
/// component 1). The budget applies to each source's section.
pub fn system_prompt(sources: &Sources, params: SystemPromptParams) -> Result<String, ToolError> {
    let max_tokens = Ceiling::MaxTokens.check_usize(params.max_tokens)?;
    let names = match params.source {
        Some(name) => vec![sources.get(Some(&name))?.name().to_string()],
        None => sources.names(),
    };
    let mut prompt = String::from(BASE_PROMPT);
    for name in names {
        prompt.push_str("\n\n");
        prompt.push_str(&schema_markdown(sources, &name, max_tokens)?);
    }
    Ok(prompt)
}
