//! Completions (`completion/complete`) for what a client asks a person to fill in: the
//! `source` and `record` of the `schema://{source}` and `schema://{source}/{record}` templates
//! and the `source` argument of the `schema_system_prompt` prompt — from the sources served now.

use rmcp::model::{ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionInfo, Reference};
use schemascope_tools::Services;

/// The candidates for the argument a client is completing, best first.
pub(crate) fn complete(services: &Services, request: &CompleteRequestParams) -> CompleteResult {
    let ArgumentInfo { name, value, .. } = &request.argument;
    let candidates: Vec<String> = match (&request.r#ref, name.as_str()) {
        (Reference::Resource(_) | Reference::Prompt(_), "source") => source_names(services),
        (Reference::Resource(_), "record") => {
            let source = request
                .context
                .as_ref()
                .and_then(|c| c.arguments.as_ref())
                .and_then(|arguments| arguments.get("source").cloned());
            match source {
                Some(source) => crate::resources::record_keys(services, &source),
                // Without the source chosen, the records of every source.
                None => services
                    .sources
                    .names()
                    .iter()
                    .flat_map(|s| crate::resources::record_keys(services, s))
                    .collect(),
            }
        }
        _ => Vec::new(),
    };
    let matching = ranked(candidates, value);
    let total = matching.len();
    let shown: Vec<String> = matching.into_iter().take(CompletionInfo::MAX_VALUES).collect();
    let has_more = total > shown.len();
    let total = u32::try_from(total).ok();
    CompleteResult::new(CompletionInfo::with_pagination(shown, total, has_more).unwrap_or_default())
}

/// Served and failed source names (a failed one is retried and may be asked for).
fn source_names(services: &Services) -> Vec<String> {
    let mut names = services.sources.names();
    names.extend(services.sources.failed_sources().into_iter().map(|f| f.spec.name));
    names.sort();
    names.dedup();
    names
}

/// `candidates` that start with `typed` (case-insensitively), then those that contain it, each
/// group sorted.
fn ranked(candidates: Vec<String>, typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    let (mut prefixed, mut containing): (Vec<String>, Vec<String>) = candidates
        .into_iter()
        .filter(|c| c.to_lowercase().contains(&typed))
        .partition(|c| c.to_lowercase().starts_with(&typed));
    prefixed.sort();
    containing.sort();
    prefixed.extend(containing);
    prefixed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_come_before_inner_matches_whatever_the_case() {
        let names = ["sales", "Chinook", "wholesale", "shop"].map(String::from).to_vec();
        assert_eq!(ranked(names.clone(), "S"), ["sales", "shop", "wholesale"]);
        assert_eq!(ranked(names.clone(), "chin"), ["Chinook"]);
        assert_eq!(ranked(names.clone(), "").len(), 4);
        assert!(ranked(names, "zzz").is_empty());
    }
}
