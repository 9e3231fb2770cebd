//! The MCP `instructions`: which sources are served (with what the operator says each holds)
//! and the workflow over the tools this server lists, so that a SQLite-only server does not
//! talk of graphs and a database server names its query tools. Built when a client connects.

use crate::Services;
use crate::tool_table;
use schemascope_sources::{Format, Location, SourceSpec};

/// Longest description quoted per source; the rest is in `list_sources` and the resources.
const DESCRIPTION_CHARS: usize = 300;

/// The instructions for a client of a server over `services`, as its sources stand now.
pub fn instructions(services: &Services) -> String {
    let listed: Vec<&str> = tool_table::listed(services).iter().map(|spec| spec.name).collect();
    let has = |tool: &str| listed.contains(&tool);
    let mut kinds: Vec<Kind> = Vec::new();
    let mut lines = Vec::new();
    for source in services.sources.sources() {
        let kind = Kind::of_format(source.format);
        kinds.push(kind);
        lines.push(source_line(&source.spec, kind, None));
    }
    for failed in services.sources.failed_sources() {
        let kind = Kind::of_location(&failed.spec.location);
        kinds.push(kind);
        lines.push(source_line(&failed.spec, kind, Some("not loaded yet: retried")));
    }
    let mut text = String::from(
        "schemascope serves an accurate, always-current map of these data sources, and read-only tools over them:\n",
    );
    if lines.is_empty() {
        text.push_str("- none loaded yet (`list_sources` shows their state)\n");
    }
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    let mut steps: Vec<String> = vec![format!(
        "Get the overview first: read the resource `schema://<source>` or get the prompt `schema_system_prompt` \
(a compact markdown summary of every collection and property: types, how often present, enums, ranges, \
formats, samples).{}",
        if has("list_sources") {
            " `list_sources` gives the source names, collections and sizes."
        } else {
            ""
        }
    )];
    if has("describe_property") || has("sample_data") {
        steps.push(
            "Dig in before relying on a property: `describe_property` gives exact value counts, numeric statistics \
and histograms; `sample_data` shows real items (one per type with `stratify_by`)."
                .into(),
        );
    }
    let sources = services.sources.sources();
    let runs_sql = sources.iter().any(|s| s.database.is_some()) || kinds.contains(&Kind::Database);
    let collections_sql = sources
        .iter()
        .any(|s| s.database.is_some() && s.collections.iter().any(|c| c.table().is_none()));
    if runs_sql && (has("execute_query") || has("ask")) {
        let mut step = String::from(
            "For counts, rankings, groupings and statistics, use SQL (databases and table files; every collection held in memory too):",
        );
        if has("get_schema_context") {
            step.push_str(
                " `get_schema_context` gives the schema a question needs (focused on the tables it is about when \
the schema is large);",
            );
        }
        if has("execute_query") {
            step.push_str(" write one read-only SQL statement");
            if has("validate_query") {
                step.push_str(
                    ", check it with `validate_query` (unknown names come with the right ones)",
                );
            }
            step.push_str(" and run it with `execute_query`.");
        }
        if has("search_schema_docs") {
            step.push_str(" `search_schema_docs` finds the documentation chunks about a term.");
        }
        if has("ask") {
            step.push_str(
                " `ask` runs the whole question-to-query pipeline with the server's own LLM.",
            );
        }
        if collections_sql {
            step.push_str(
                " A file's or collection's table is named as the collection; its columns as the profile names properties (a nested one quoted whole: \"metadata.region\"), beside `id` (an edge's `source` and `target`); the dialect is DataFusion's (PostgreSQL-like).",
            );
        }
        steps.push(step);
    }
    if kinds.contains(&Kind::Records) && has("query_schema") {
        steps.push(
            "For record values, `query_schema` gives the inferred JSON Schema of a record and `validate_value` checks \
a proposed value against it (errors and unusual values, with JSON paths). On a live AimDB source the schema is \
merged over the record's recent values and those produced within `window_ms`; ask the user about units the \
field names do not settle."
                .into(),
        );
    }
    if has("set_record") {
        steps.push(
            "To set an AimDB record, read its `query_schema` first, convert the user's units to the field's, ask when a unit, an id or a timestamp is unclear, then call `set_record` with the whole value (`dry_run` first when in doubt); it refuses a wrong type or missing field before sending, and reads the record back. The prompt `aimdb_guidance` has the details."
                .into(),
        );
    }
    if has("discover_instances") {
        let dirs: Vec<String> = services
            .sources
            .aimdb_dirs()
            .dirs()
            .iter()
            .map(|d| d.path.display().to_string())
            .collect();
        steps.push(format!(
            "AimDB instances in {} are reachable too: `discover_instances` lists them, and any tool's `source` takes an instance's socket path.",
            dirs.join(", ")
        ));
    }
    let graph = kinds.contains(&Kind::Graph);
    steps.push(format!(
        "Selectors (`find_items`{}) are JMESPath evaluated on each item's data: the \
item's data is the root, so write `type == 'server'`, not `data.type`. Strings in 'single quotes', numbers in \
backticks (cpu > `0.8`).",
        if graph { ", and the graph tools' `selector`" } else { "" }
    ));
    let named = |tools: &[&str]| -> Vec<String> {
        tools.iter().filter(|tool| has(tool)).map(|tool| format!("`{tool}`")).collect()
    };
    let (shown, changing) = (
        named(&["describe_styles", "describe_selection"]),
        named(&["find_and_style_nodes", "select", "set_layout", "set_camera"]),
    );
    if kinds.contains(&Kind::Graph) && !(shown.is_empty() && changing.is_empty()) {
        let mut step = String::from("On a graph, the view a person sees is shared:");
        if !shown.is_empty() {
            step.push_str(&format!(" {} say what is shown now;", listing(&shown)));
        }
        if !changing.is_empty() {
            step.push_str(&format!(" {} change it;", listing(&changing)));
        }
        if has("run_algorithm") {
            step.push_str(
                " `run_algorithm` computes centralities and communities into node data that styles and selections can use",
            );
            step.push_str(if has("find_and_style_nodes") {
                "; colour or size by them, or by any property, in one layer: style {\"color_by\": \"pagerank\"} (an algorithm's name, or a property path)."
            } else {
                "."
            });
        }
        let mut step = step.trim_end_matches(';').to_string();
        if !step.ends_with('.') {
            step.push('.');
        }
        steps.push(step);
    }
    text.push_str("\nWorkflow:\n");
    for (i, step) in steps.iter().enumerate() {
        text.push_str(&format!("{}. {step}\n", i + 1));
    }
    let graph_fields = if kinds.contains(&Kind::Graph) {
        " (graph tools add affectedNodes/affectedEdges)"
    } else {
        ""
    };
    text.push_str(&format!(
        "\nEvery tool takes an optional `source`, a source name above: needed only when several sources are served. \
A `collection` is {}a record set, document set or table by name. \
Every tool returns {{success, message, data}}{graph_fields}; an answer cut to fit the size cap has \
`truncated`; when success is false the message says what to change (unknown names come with suggestions). \
The tools listed are those the served sources can use{}. The schema resources are refreshed when their \
sources change; subscribe to them to be notified.",
        if graph { "`nodes` (the default on a graph) or `edges`, or " } else { "" },
        if services.chosen_tools().is_some() { " and the operator chose" } else { "" }
    ));
    text
}

/// `a`, `a and b`, `a, b and c`.
fn listing(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What kind of data a source is, as the workflow tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Graph,
    Records,
    Documents,
    Table,
    Database,
}

impl Kind {
    fn of_format(format: Format) -> Self {
        match format {
            Format::Graph => Kind::Graph,
            Format::Records | Format::Aimdb => Kind::Records,
            Format::Documents => Kind::Documents,
            Format::Csv | Format::Parquet | Format::Folder => Kind::Table,
            Format::Sqlite | Format::Postgres | Format::ClickHouse | Format::MySql => {
                Kind::Database
            }
        }
    }

    fn of_location(location: &Location) -> Self {
        match location {
            Location::File { format: Some(format), .. } => Self::of_format(*format),
            Location::File { format: None, .. } => Kind::Documents,
            Location::Demo(schemascope_sources::DemoSet::Infrastructure) => Kind::Graph,
            Location::Demo(schemascope_sources::DemoSet::Sensors) | Location::Aimdb(_) => {
                Kind::Records
            }
            Location::Sqlite(_)
            | Location::Postgres(_)
            | Location::ClickHouse(_)
            | Location::MySql(_) => Kind::Database,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Graph => "graph",
            Kind::Records => "record set",
            Kind::Documents => "document set",
            Kind::Table => "table file",
            Kind::Database => "database",
        }
    }
}

/// `- \`name\` (kind): description`, the description cut at [`DESCRIPTION_CHARS`].
fn source_line(spec: &SourceSpec, kind: Kind, state: Option<&str>) -> String {
    let mut line = format!("- `{}` ({}", spec.name, kind.label());
    if let Some(state) = state {
        line.push_str(&format!("; {state}"));
    }
    line.push(')');
    if let Some(description) = &spec.description {
        let flat: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
        let cut: String = flat.chars().take(DESCRIPTION_CHARS).collect();
        line.push_str(": ");
        line.push_str(&cut);
        if cut.len() < flat.len() {
            line.push('…');
        }
    }
    line
}
