//! Source specifications: `[NAME=]PATH_OR_URI`, as the CLI and the server take them.
//!
//! A plain path is read by its extension and content (`.ndjson`/`.jsonl`: NDJSON records or
//! documents; `.json`: a graph, a record object or a document array). A scheme forces the format:
//! `graph:`, `records:`, `documents:`; `file://` is a plain path; `demo:infrastructure` and
//! `demo:sensors` are the embedded demo data.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::SourceError;

/// The shape of a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A graph: graphty's `{nodes, edges}` or networkx node-link `{nodes, links}`.
    Graph,
    /// Named records: a JSON object of records, or NDJSON `{key, value, metadata?}` lines.
    Records,
    /// Documents: a JSON array or NDJSON, one collection.
    Documents,
}

/// An embedded demo data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoSet {
    /// The infrastructure graph.
    Infrastructure,
    /// The sensor/config record set.
    Sensors,
}

/// Where a source's data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file, with its format when forced by a scheme.
    File {
        /// The file.
        path: PathBuf,
        /// Forced format, or `None` to detect it.
        format: Option<Format>,
    },
    /// Embedded demo data.
    Demo(DemoSet),
}

/// A named source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpec {
    /// The name tools address it by.
    pub name: String,
    /// Where its data is.
    pub location: Location,
    /// The specification as given, for messages.
    pub text: String,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn default_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("source");
    let cleaned: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' }).collect();
    if cleaned.is_empty() { "source".into() } else { cleaned }
}

impl FromStr for SourceSpec {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: &str| SourceError::InvalidSpec { spec: text.to_string(), reason: reason.to_string() };
        let (name, rest) = match text.split_once('=') {
            Some((name, rest)) if valid_name(name) => (Some(name.to_string()), rest),
            Some((name, _)) if !name.contains(['/', ':', '\\']) => {
                return Err(invalid("a source name may only use letters, digits, `_`, `-` and `.`"));
            }
            _ => (None, text),
        };
        if rest.is_empty() {
            return Err(invalid("no path or URI given"));
        }
        let (location, default) = if let Some(set) = rest.strip_prefix("demo:") {
            let demo = match set {
                "infrastructure" | "graph" => DemoSet::Infrastructure,
                "sensors" | "records" => DemoSet::Sensors,
                other => return Err(invalid(&format!("unknown demo data set `{other}`; there are `demo:infrastructure` and `demo:sensors`"))),
            };
            let name = match demo {
                DemoSet::Infrastructure => "infrastructure",
                DemoSet::Sensors => "sensors",
            };
            (Location::Demo(demo), name.to_string())
        } else {
            let (format, path) = if let Some(p) = rest.strip_prefix("graph:") {
                (Some(Format::Graph), p)
            } else if let Some(p) = rest.strip_prefix("records:") {
                (Some(Format::Records), p)
            } else if let Some(p) = rest.strip_prefix("documents:") {
                (Some(Format::Documents), p)
            } else if let Some(p) = rest.strip_prefix("file://") {
                (None, p)
            } else if let Some((scheme, _)) = rest.split_once("://") {
                return Err(invalid(&format!(
                    "unsupported scheme `{scheme}://`; use a file path, file://, graph:, records:, documents: or demo:"
                )));
            } else {
                (None, rest)
            };
            let path = PathBuf::from(path);
            let name = default_name(&path);
            (Location::File { path, format }, name)
        };
        Ok(Self { name: name.unwrap_or(default), location, text: text.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_schemes_and_defaults() {
        let spec: SourceSpec = "infra=graph:data/g.json".parse().expect("valid");
        assert_eq!(spec.name, "infra");
        assert_eq!(spec.location, Location::File { path: "data/g.json".into(), format: Some(Format::Graph) });
        let spec: SourceSpec = "/tmp/My Records.ndjson".parse().expect("valid");
        assert_eq!(spec.name, "My_Records");
        let spec: SourceSpec = "demo:sensors".parse().expect("valid");
        assert_eq!((spec.name.as_str(), spec.location), ("sensors", Location::Demo(DemoSet::Sensors)));
    }

    #[test]
    fn rejects_unknown_schemes_and_demo_sets_with_alternatives() {
        let err = "s3://bucket/x.json".parse::<SourceSpec>().expect_err("unsupported");
        assert!(err.to_string().contains("graph:"), "{err}");
        let err = "demo:nope".parse::<SourceSpec>().expect_err("unknown");
        assert!(err.to_string().contains("demo:infrastructure"), "{err}");
    }
}
