//! The schema section of a system prompt (seed 000, component 1), fitted to a token budget.
//!
//! Degradation is by whole lines, in a fixed order, so the result is always well-formed markdown:
//! first example values go, then the least present (and most deeply nested) properties, each
//! section saying how many it left out. Lines are never cut in the middle.

use serde::Serialize;

use crate::collection::{Collection, CollectionKind};
use crate::display::escape_controls as esc;
use crate::summary::{PropertySummary, describe_line, summarize_collection};
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
}

fn entry(summary: &PropertySummary, indent: &str) -> Entry {
    let presence = if summary.total_count == 0 { 0.0 } else { summary.present_count as f64 / summary.total_count as f64 };
    let depth = summary.path.matches(['.', '[']).count() as f64;
    // Table columns add their declared type, key role, reference and comment.
    let (declared, after) = match &summary.column {
        Some(c) => {
            let key = if c.primary_key { ", primary key" } else { "" };
            let references = c.references.as_ref().map(|r| format!(" → `{}`", esc(r))).unwrap_or_default();
            let comment = c.comment.as_ref().map(|t| format!(" — {}", esc(t))).unwrap_or_default();
            (format!(" `{}`{key}{references}", esc(&c.declared_type)), comment)
        }
        None => (String::new(), String::new()),
    };
    let path = esc(&summary.path);
    Entry {
        full: format!("{indent}- `{path}`{declared} {}{after}", describe_line(summary, true)),
        short: format!("{indent}- `{path}`{declared} {}{after}", describe_line(summary, false)),
        path,
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
        title.push(format!("## Graph Data Schema: `{source}`"));
        title.push(String::new());
        let sizes: Vec<String> = collections.iter().map(|c| format!("{} {}", c.len(), c.kind().items_noun())).collect();
        title.push(format!("**Graph Size:** {}", sizes.join(", ")));
    } else {
        title.push(format!("## Data Schema: `{}`", esc(source)));
    }
    for collection in collections {
        let summary = summarize_collection(collection);
        match (&summary.records, collection.kind()) {
            (Some(records), _) => {
                out.push(Section {
                    heading: vec![
                        String::new(),
                        format!("**Record set `{}`** ({} records, {} values in all):", esc(&summary.name), records.len(), summary.count),
                    ],
                    entries: Vec::new(),
                });
                for record in records {
                    let mut section = Section {
                        heading: vec![match &record.value {
                            Some(value) => format!("- `{}` {} ({} values)", esc(&record.name), describe_line(value, true), record.value_count),
                            None => format!("- `{}` ({}, {} values)", esc(&record.name), record.value_type, record.value_count),
                        }],
                        entries: Vec::new(),
                    };
                    section.entries.extend(record.properties.iter().filter(|p| shown(p)).map(|p| entry(p, "  ")));
                    out.push(section);
                }
            }
            (None, kind) => {
                let heading = match kind {
                    CollectionKind::Nodes => "**Node Properties:**".to_string(),
                    CollectionKind::Edges => "**Edge Properties:**".to_string(),
                    CollectionKind::Table => {
                        let table = summary.table.as_ref();
                        let noun = if table.is_some_and(|t| t.kind == crate::catalog::TableKind::View) { "View" } else { "Table" };
                        let comment = table.and_then(|t| t.comment.as_ref()).map(|c| format!(" — {}", esc(c))).unwrap_or_default();
                        format!("**{noun} `{}`** ({} rows){comment}:", esc(&summary.name), summary.count)
                    }
                    _ => format!("**Collection `{}`** ({} {}):", esc(&summary.name), summary.count, kind.items_noun()),
                };
                let mut section = Section { heading: vec![String::new(), heading], entries: Vec::new() };
                section.entries.extend(summary.properties.iter().filter(|p| shown(p)).map(|p| entry(p, "")));
                if section.entries.is_empty() {
                    section.heading.push("- (no properties)".to_string());
                }
                out.push(section);
            }
        }
    }
    (title, out)
}

fn render(title: &[String], sections: &[Section], samples: bool, dropped: &std::collections::HashSet<(usize, usize)>) -> String {
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
        if !omitted.is_empty() {
            let indent = if section.entries.first().is_some_and(|e| e.full.starts_with("  ")) { "  " } else { "" };
            lines.push(format!("{indent}- +{} more properties (ask describe_property or sample_data)", omitted.len()));
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Renders the schema section for `collections` of source `source`, within `max_tokens` if given.
pub fn schema_markdown(source: &str, collections: &[&Collection], max_tokens: Option<usize>) -> SchemaMarkdown {
    let (title, sections) = sections(source, collections);
    let none = std::collections::HashSet::new();
    let full = render(&title, &sections, true, &none);
    let full_tokens = tokens::count(&full);
    let fits = |n: usize| max_tokens.is_none_or(|max| n <= max);
    if fits(full_tokens) {
        return SchemaMarkdown { markdown: full, tokens: full_tokens, max_tokens, samples_dropped: false, properties_omitted: 0, truncated: false };
    }
    let short = render(&title, &sections, false, &none);
    let short_tokens = tokens::count(&short);
    if fits(short_tokens) {
        return SchemaMarkdown { markdown: short, tokens: short_tokens, max_tokens, samples_dropped: true, properties_omitted: 0, truncated: false };
    }
    // Drop the least important entries first; binary-search how many must go.
    let mut order: Vec<(usize, usize, f64)> =
        sections.iter().enumerate().flat_map(|(si, s)| s.entries.iter().enumerate().map(move |(ei, e)| (si, ei, e.importance))).collect();
    order.sort_by(|a, b| a.2.total_cmp(&b.2).then(b.1.cmp(&a.1)));
    let attempt = |k: usize| {
        let dropped: std::collections::HashSet<(usize, usize)> = order.iter().take(k).map(|(s, e, _)| (*s, *e)).collect();
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
        return SchemaMarkdown { markdown: best.0, tokens: best.1, max_tokens, samples_dropped: true, properties_omitted: best_k, truncated: false };
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
    SchemaMarkdown { markdown: text, tokens: n, max_tokens, samples_dropped: true, properties_omitted: best_k, truncated: true }
}
