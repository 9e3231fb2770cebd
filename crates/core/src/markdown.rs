//! The schema section of a system prompt (seed 000, component 1), fitted to a token budget.
//!
//! Degradation is by whole lines, in a fixed order, so the result is always well-formed markdown:
//! first example values go, then the least present (and most deeply nested) properties, each
//! section saying how many it left out. Lines are never cut in the middle.

use serde::Serialize;

use crate::ProfileState;
use crate::collection::{Collection, CollectionKind};
use crate::display::{code, escape_controls as esc};
use crate::figure::grouped;
use crate::profile::PathLimit;
use crate::summary::{
    PendingProfile, PropertySummary, UnprofiledColumn, describe_line, summarize_collection,
};
use crate::tokens;

/// The rendered section and what was left out to fit the budget.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaMarkdown {
    /// The markdown text.
    pub markdown: String,
    /// Its length in o200k_base tokens.
    pub tokens: usize,
    /// The budget asked for, if any.
    pub max_tokens: Option<usize>,
    /// True when example values were dropped.
    pub samples_dropped: bool,
    /// Properties left out (each section names its own count as "+N more").
    pub properties_omitted: usize,
    /// True when even the headings did not all fit.
    pub truncated: bool,
    /// Properties the path limit kept out of the profiles (counted in the "+N more" lines, never
    /// listed); a lower bound when more were met than remembered.
    pub properties_not_profiled: u64,
}

struct Entry {
    path: String,
    full: String,
    short: String,
    /// Lower is dropped first.
    importance: f64,
}

struct Section {
    heading: Vec<String>,
    entries: Vec<Entry>,
    /// What the path limit kept out of this section's profile: never listed, always counted.
    limit: Option<PathLimit>,
}

fn entry(summary: &PropertySummary, indent: &str, limit: Option<&PathLimit>) -> Entry {
    let presence = if summary.total_count == 0 {
        0.0
    } else {
        summary.present_count as f64 / summary.total_count as f64
    };
    let depth = summary.path.matches(['.', '[']).count() as f64;
    // Table columns add their declared type, key role, reference and comment.
    let (declared, after) = match &summary.column {
        Some(c) => {
            let key = if c.primary_key { ", primary key" } else { "" };
            let references =
                c.references.as_ref().map(|r| format!(" → {}", code(r))).unwrap_or_default();
            let comment = c.comment.as_ref().map(|t| format!(" — {}", esc(t))).unwrap_or_default();
            (format!(" {}{key}{references}", code(&c.declared_type)), comment)
        }
        None => (String::new(), String::new()),
    };
    let shown = code(&summary.path);
    // Counts of a path some of whose occurrences the path limit turned away are not the whole.
    let partial = limit.is_some_and(|l| l.partial.iter().any(|p| p.to_string() == summary.path));
    let after = if partial {
        format!("{after} (counts partial: some occurrences came past the path limit)")
    } else {
        after
    };
    Entry {
        full: format!("{indent}- {shown}{declared} {}{after}", describe_line(summary, true)),
        short: format!("{indent}- {shown}{declared} {}{after}", describe_line(summary, false)),
        path: esc(&summary.path),
        importance: presence - 0.1 * depth,
    }
}

/// Whether a property gets its own line. Array elements (`tags[]`) are described on the array's
/// line, and objects by their members' dotted paths, so neither adds a line of its own — except
/// an object that is missing or null on some units: its members' presence only makes sense
/// with the parent's.
fn shown(summary: &PropertySummary) -> bool {
    let partial = summary.present_count < summary.total_count;
    !summary.path.ends_with("[]") && (summary.data_type != "object" || partial)
}

fn sections(source: &str, collections: &[&Collection]) -> (Vec<String>, Vec<Section>) {
    let graph = collections.iter().any(|c| c.kind() == CollectionKind::Nodes);
    let mut title = Vec::new();
    let mut out = Vec::new();
    if graph {
        // Named like every other source's heading: with several graphs served, each graph tool
        // needs `source`, and an unnamed heading would not say which.
        title.push(format!("## Graph Data Schema: {}", code(source)));
        title.push(String::new());
        let sizes: Vec<String> =
            collections.iter().map(|c| c.kind().counted(c.item_count())).collect();
        title.push(format!("**Graph Size:** {}", sizes.join(", ")));
    } else {
        title.push(format!("## Data Schema: {}", code(source)));
    }
    for collection in collections {
        let summary = summarize_collection(collection);
        match (&summary.records, collection.kind()) {
            (Some(records), _) => {
                out.push(Section {
                    heading: vec![
                        String::new(),
                        format!(
                            "**Record set {}** ({} record{}, {} value{} in all):",
                            code(&summary.name),
                            records.len(),
                            if records.len() == 1 { "" } else { "s" },
                            summary.count.unwrap_or_default(),
                            if summary.count == Some(1) { "" } else { "s" }
                        ),
                    ],
                    entries: Vec::new(),
                    limit: None,
                });
                for record in records {
                    let mut section = Section {
                        heading: vec![match &record.value {
                            Some(value) => format!(
                                "- {} {} ({} values)",
                                code(&record.name),
                                describe_line(value, true),
                                record.value_count
                            ),
                            None => format!(
                                "- {} ({}, {} values)",
                                code(&record.name),
                                record.value_type,
                                record.value_count
                            ),
                        }],
                        entries: Vec::new(),
                        limit: record.path_limit.clone(),
                    };
                    section.entries.extend(
                        record
                            .properties
                            .iter()
                            .filter(|p| shown(p))
                            .map(|p| entry(p, "  ", record.path_limit.as_ref())),
                    );
                    out.push(section);
                }
            }
            (None, kind) => {
                let heading = match kind {
                    CollectionKind::Nodes => "**Node Properties:**".to_string(),
                    CollectionKind::Edges => "**Edge Properties:**".to_string(),
                    CollectionKind::Table => {
                        let table = summary.table.as_ref();
                        let noun =
                            if table.is_some_and(|t| t.kind == crate::catalog::TableKind::View) {
                                "View"
                            } else {
                                "Table"
                            };
                        let comment = table
                            .and_then(|t| t.comment.as_ref())
                            .map(|c| format!(" — {}", esc(c)))
                            .unwrap_or_default();
                        let rows = match summary.count {
                            Some(n) if summary.count_is_estimate => {
                                format!("≈{}", CollectionKind::Table.counted(n))
                            }
                            Some(n) => CollectionKind::Table.counted(n),
                            None => "rows not counted yet".to_string(),
                        };
                        format!("**{noun} {}** ({rows}){comment}:", code(&summary.name))
                    }
                    _ => format!(
                        "**Collection {}** ({}):",
                        code(&summary.name),
                        kind.counted(summary.count.unwrap_or_default())
                    ),
                };
                let mut section = Section {
                    heading: vec![String::new(), heading],
                    entries: Vec::new(),
                    limit: summary.path_limit.clone(),
                };
                if !summary.exact {
                    section.heading.push(
                        "- (figures marked ≈ are estimates: this collection was profiled by streaming and some properties outgrew the memory budget; all other figures are exact)"
                            .to_string(),
                    );
                }
                if let Some(cut) = &summary.depth_cut {
                    section.heading.push(format!(
                        "- (values nested deeper than {} levels are not described: {} at {} and below)",
                        cut.max_depth,
                        cut.values,
                        code(&cut.below)
                    ));
                }
                section.entries.extend(
                    summary
                        .properties
                        .iter()
                        .filter(|p| shown(p))
                        .map(|p| entry(p, "", summary.path_limit.as_ref())),
                );
                if let Some(not) = &summary.not_objects {
                    let types: Vec<String> =
                        not.types.iter().map(|(t, n)| format!("{n} {t}")).collect();
                    section.heading.push(format!(
                        "- ({} of {} are not objects and have no properties: {})",
                        not.count,
                        kind.counted(summary.count.unwrap_or_default()),
                        types.join(", ")
                    ));
                }
                if let Some(pending) = &summary.profile {
                    section.heading.push(pending_line(pending, summary.count_is_estimate));
                    section.entries.extend(summary.unprofiled_columns.iter().map(unprofiled_entry));
                }
                if section.entries.is_empty()
                    && section.limit.as_ref().is_none_or(|l| l.unprofiled == 0)
                {
                    section.heading.push("- (no properties)".to_string());
                }
                out.push(section);
            }
        }
    }
    (title, out)
}

/// The line under a table whose profile is not ready: what is shown and what is still coming.
fn pending_line(pending: &PendingProfile, estimate: bool) -> String {
    let count = if estimate { "; the row count is the database's estimate" } else { "" };
    let state = match (pending.state, &pending.computing, &pending.error) {
        (ProfileState::Failed | ProfileState::Retrying, _, Some(error)) => {
            format!("profile stopped: {}", esc(error))
        }
        (_, Some(step), _) => format!("profile being computed, now {}", esc(step)),
        (state, _, _) => state.words().to_string(),
    };
    format!(
        "- ({state}: {} of {} columns profiled{count}; the others are listed with their declared types)",
        pending.columns_done, pending.columns
    )
}

/// A column not profiled yet: its name and what the catalog declares, as profiled columns show
/// it.
fn unprofiled_entry(column: &UnprofiledColumn) -> Entry {
    let c = &column.column;
    let key = if c.primary_key { ", primary key" } else { "" };
    let references = c.references.as_ref().map(|r| format!(" → {}", code(r))).unwrap_or_default();
    let nullable = if c.nullable { "" } else { ", not null" };
    let comment = c.comment.as_ref().map(|t| format!(" — {}", esc(t))).unwrap_or_default();
    let line = format!(
        "- {} {}{key}{references}{nullable} (not profiled yet){comment}",
        code(&column.path),
        code(&c.declared_type)
    );
    // Kept like a fully present column: its name and type are facts.
    Entry { path: esc(&column.path), full: line.clone(), short: line, importance: 1.0 }
}

fn render(
    title: &[String],
    sections: &[Section],
    samples: bool,
    dropped: &std::collections::HashSet<(usize, usize)>,
) -> String {
    let mut lines: Vec<String> = title.to_vec();
    for (si, section) in sections.iter().enumerate() {
        lines.extend(section.heading.iter().cloned());
        let mut omitted = Vec::new();
        for (ei, e) in section.entries.iter().enumerate() {
            if dropped.contains(&(si, ei)) {
                omitted.push(e.path.as_str());
            } else {
                lines.push(if samples { e.full.clone() } else { e.short.clone() });
            }
        }
        let indent =
            if section.heading.first().is_some_and(|h| h.starts_with("- ")) { "  " } else { "" };
        if let Some(line) = more_line(omitted.len(), section.limit.as_ref()) {
            lines.push(format!("{indent}{line}"));
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The "+N more" line of a section: the properties the budget left out plus those the path limit
/// kept out of the profile (never profiled, so never listed), or `None` when nothing is left out.
fn more_line(omitted: usize, limit: Option<&PathLimit>) -> Option<String> {
    let unprofiled = limit.map_or(0, |l| l.unprofiled);
    let more = limit.is_some_and(|l| l.more_unprofiled);
    if unprofiled == 0 && !more {
        return (omitted > 0).then(|| {
            format!("- +{omitted} more properties (ask describe_property or sample_data)")
        });
    }
    let max = grouped(limit.map_or(0, |l| l.max_paths) as u64);
    let at_least = if more { "at least " } else { "" };
    let total = omitted as u64 + unprofiled;
    Some(if omitted == 0 {
        format!(
            "- +{at_least}{total} more properties not profiled: past the {max}-path limit (sample_data or find_items show them)"
        )
    } else {
        format!(
            "- +{at_least}{total} more properties ({omitted} left out for the token budget: ask describe_property; {at_least}{unprofiled} not profiled: past the {max}-path limit, sample_data or find_items show them)"
        )
    })
}

/// Renders the schema section for `collections` of source `source`, within `max_tokens` if given.
pub fn schema_markdown(
    source: &str,
    collections: &[&Collection],
    max_tokens: Option<usize>,
) -> SchemaMarkdown {
    schema_markdown_with_notes(source, collections, max_tokens, &[])
}

/// [`schema_markdown`] with `notes` (one line each, such as "the last reload failed") under the
/// title, where no budget removes them.
pub fn schema_markdown_with_notes(
    source: &str,
    collections: &[&Collection],
    max_tokens: Option<usize>,
    notes: &[String],
) -> SchemaMarkdown {
    let (mut title, sections) = sections(source, collections);
    for note in notes {
        title.push(String::new());
        title.push(format!("> {}", esc(note)));
    }
    let properties_not_profiled: u64 =
        sections.iter().filter_map(|s| s.limit.as_ref()).map(|l| l.unprofiled).sum();
    let none = std::collections::HashSet::new();
    let full = render(&title, &sections, true, &none);
    let full_tokens = tokens::count(&full);
    let fits = |n: usize| max_tokens.is_none_or(|max| n <= max);
    if fits(full_tokens) {
        return SchemaMarkdown {
            markdown: full,
            tokens: full_tokens,
            max_tokens,
            samples_dropped: false,
            properties_omitted: 0,
            truncated: false,
            properties_not_profiled,
        };
    }
    let short = render(&title, &sections, false, &none);
    let short_tokens = tokens::count(&short);
    if fits(short_tokens) {
        return SchemaMarkdown {
            markdown: short,
            tokens: short_tokens,
            max_tokens,
            samples_dropped: true,
            properties_omitted: 0,
            truncated: false,
            properties_not_profiled,
        };
    }
    // Drop the least important entries first; binary-search how many must go.
    let mut order: Vec<(usize, usize, f64)> = sections
        .iter()
        .enumerate()
        .flat_map(|(si, s)| s.entries.iter().enumerate().map(move |(ei, e)| (si, ei, e.importance)))
        .collect();
    order.sort_by(|a, b| a.2.total_cmp(&b.2).then(b.1.cmp(&a.1)));
    let attempt = |k: usize| {
        let dropped: std::collections::HashSet<(usize, usize)> =
            order.iter().take(k).map(|(s, e, _)| (*s, *e)).collect();
        let text = render(&title, &sections, false, &dropped);
        let n = tokens::count(&text);
        (text, n)
    };
    let (mut low, mut high) = (1, order.len());
    let mut best = attempt(order.len());
    let mut best_k = order.len();
    if fits(best.1) {
        while low < high {
            let mid = (low + high) / 2;
            let candidate = attempt(mid);
            if fits(candidate.1) {
                best = candidate;
                best_k = mid;
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        return SchemaMarkdown {
            markdown: best.0,
            tokens: best.1,
            max_tokens,
            samples_dropped: true,
            properties_omitted: best_k,
            truncated: false,
            properties_not_profiled,
        };
    }
    // Even the headings alone are too long: keep whole lines while they fit.
    let max = max_tokens.unwrap_or(usize::MAX);
    let mut text = String::new();
    for line in best.0.lines() {
        let candidate = format!("{text}{line}\n");
        if tokens::count(&candidate) > max {
            break;
        }
        text = candidate;
    }
    let n = tokens::count(&text);
    SchemaMarkdown {
        markdown: text,
        tokens: n,
        max_tokens,
        samples_dropped: true,
        properties_omitted: best_k,
        truncated: true,
        properties_not_profiled,
    }
}
