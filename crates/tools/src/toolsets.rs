//! The tools an operator chose to offer (`serve --tools NAME,...`, `tools = [...]` in the
//! configuration's `[server]` section), by tool name or by named toolset. The choice is held by
//! the services and read by the tool table, so every surface — MCP's list and calls, `POST
//! /v1/tools/{name}`, `POST /v1/ask`, `schemascope tools` — lists and refuses the same tools.

use std::fmt;

use crate::tool_table;

/// A named group of tools an operator can choose at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toolset {
    /// Its name, as `--tools` takes it.
    pub name: &'static str,
    /// Its tools, in table order.
    pub tools: &'static [&'static str],
}

/// Every toolset. Together they hold every tool a client may call; a tool is in one set only.
pub const TOOLSETS: &[Toolset] = &[
    Toolset {
        name: "discovery",
        tools: &[
            "list_sources",
            "describe_schema",
            "sample_data",
            "describe_property",
            "query_schema",
            "validate_value",
            "find_items",
            "discover_instances",
        ],
    },
    Toolset { name: "records-write", tools: &["set_record"] },
    Toolset {
        name: "sql",
        tools: &[
            "search_schema_docs",
            "get_schema_context",
            "execute_query",
            "validate_query",
            "ask",
            "record_example",
        ],
    },
    Toolset {
        name: "graph-style",
        tools: &[
            "query_graph",
            "find_nodes",
            "find_edges",
            "find_and_style_nodes",
            "find_and_style_edges",
            "clear_styles",
            "describe_styles",
            "describe_selection",
            "select",
            "list_algorithms",
            "run_algorithm",
        ],
    },
    Toolset {
        name: "graph-view",
        tools: &["set_layout", "set_dimension", "set_camera", "zoom_to_nodes"],
    },
];

/// The name of the toolset of every tool.
pub const ALL: &str = "all";

/// The tools an operator chose, with the names as they were written (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenTools {
    tools: Vec<&'static str>,
    written: Vec<String>,
}

/// A name in a choice of tools that is neither a tool nor a toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownToolName {
    /// The name as written.
    pub name: String,
    /// " Did you mean `x`?", or empty.
    pub hint: String,
}

impl fmt::Display for UnknownToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            return write!(f, "the list of tools names none; {}", choices());
        }
        write!(f, "`{}` is neither a tool nor a toolset.{} {}", self.name, self.hint, choices())
    }
}

impl std::error::Error for UnknownToolName {}

/// "Toolsets: …; tools: …", what a choice may name.
fn choices() -> String {
    let sets: Vec<&str> = TOOLSETS.iter().map(|set| set.name).chain([ALL]).collect();
    format!("Toolsets: {}; tools: {}.", sets.join(", "), tool_table::names().join(", "))
}

impl ChosenTools {
    /// The tools `names` choose: each a tool's name or a toolset's (`discovery`, `sql`,
    /// `graph-style`, `graph-view`, `all`); a name may be given with spaces around it, and
    /// empty names (`a,,b`) are skipped. An unknown name is an error with a did-you-mean; so is
    /// a list naming nothing.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, UnknownToolName> {
        let every = tool_table::names();
        let mut tools: Vec<&'static str> = Vec::new();
        let mut written = Vec::new();
        for name in names.iter().map(|n| n.as_ref().trim()).filter(|n| !n.is_empty()) {
            let chosen: Vec<&'static str> = if name == ALL {
                every.clone()
            } else if let Some(set) = TOOLSETS.iter().find(|set| set.name == name) {
                set.tools.to_vec()
            } else if let Some(tool) = every.iter().find(|tool| **tool == name) {
                vec![*tool]
            } else {
                let candidates = every.iter().copied().chain(TOOLSETS.iter().map(|s| s.name));
                let hint = schemascope_core::suggest::did_you_mean(name, candidates.chain([ALL]));
                return Err(UnknownToolName { name: name.to_string(), hint });
            };
            tools.extend(chosen);
            written.push(name.to_string());
        }
        if written.is_empty() {
            return Err(UnknownToolName { name: String::new(), hint: String::new() });
        }
        Ok(Self { tools, written })
    }

    /// [`ChosenTools::parse`] of a comma-separated list (`discovery,execute_query`).
    pub fn parse_list(list: &str) -> Result<Self, UnknownToolName> {
        Self::parse(&list.split(',').collect::<Vec<_>>())
    }

    /// Whether tool `name` was chosen.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains(&name)
    }

    /// The choice as written, comma-separated (`discovery,execute_query`).
    pub fn written(&self) -> String {
        self.written.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listable_tool_is_in_exactly_one_toolset() {
        for tool in tool_table::names() {
            let sets: Vec<&str> =
                TOOLSETS.iter().filter(|set| set.tools.contains(&tool)).map(|s| s.name).collect();
            assert_eq!(sets.len(), 1, "{tool} is in {sets:?}");
        }
        for set in TOOLSETS {
            for tool in set.tools {
                assert!(tool_table::names().contains(tool), "{} names no tool {tool}", set.name);
            }
        }
    }

    #[test]
    fn toolsets_and_names_combine() {
        let chosen = ChosenTools::parse_list(" discovery , execute_query,,").expect("valid");
        assert!(chosen.contains("find_items") && chosen.contains("execute_query"));
        assert!(!chosen.contains("validate_query") && !chosen.contains("select"));
        assert_eq!(chosen.written(), "discovery,execute_query");
        let all = ChosenTools::parse(&["all"]).expect("valid");
        assert!(tool_table::names().iter().all(|tool| all.contains(tool)));
    }

    #[test]
    fn an_unknown_name_suggests_the_closest_tool_or_toolset() {
        let error = ChosenTools::parse_list("discovry").expect_err("unknown");
        assert_eq!(error.name, "discovry");
        assert!(error.to_string().contains("Did you mean `discovery`?"), "{error}");
        let error = ChosenTools::parse_list("discovery,execute_qurey").expect_err("unknown");
        assert!(error.to_string().contains("`execute_query`"), "{error}");
        assert!(error.to_string().contains("graph-view"), "{error}");
        let error = ChosenTools::parse_list(" , ").expect_err("empty");
        assert!(error.to_string().contains("names none"), "{error}");
    }

    #[test]
    fn the_web_views_own_tool_is_not_a_choice() {
        assert!(ChosenTools::parse_list("report_viewport").is_err());
    }
}
