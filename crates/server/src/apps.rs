//! The views as MCP Apps (the MCP Apps extension, `io.modelcontextprotocol/ui`), shown by a
//! client that renders apps beside the answers of the tools they belong to
//! (`tool_table::view_of`), over stdio as over HTTP:
//! - the graph view ([`GRAPH_VIEW_URI`]): the page of the web view, self-contained. The graph
//!   tools that change what it shows point at it (`_meta.ui.resourceUri`). Inside the client it
//!   reaches the server only through the host's tool calls: it reads the scene with
//!   `read_scene` (which waits for the next change) and reports with the web view's other tools,
//!   listed — as `visibility: ["app"]`, hidden from the model — only to clients that render apps;
//! - the property chart ([`PROPERTY_CHART_URI`]): `describe_property`'s figures, histogram and
//!   values, drawn from the answer the host hands it (it calls nothing).

use std::sync::LazyLock;

use rmcp::model::{ClientCapabilities, MetaObject, Resource, ResourceContents, Tool};
use schemascope_tools::Services;
use schemascope_tools::tool_table::{self, ToolSpec, View};
use serde_json::{Value, json};

/// The graph view's resource.
pub(crate) const GRAPH_VIEW_URI: &str = "ui://schemascope/graph-view.html";

/// The property chart's resource.
pub(crate) const PROPERTY_CHART_URI: &str = "ui://schemascope/property-chart.html";

/// The MIME type of an MCP App's HTML.
pub(crate) const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The extension's id in the client's `capabilities.extensions`.
const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The page of the web view (`GET /`).
pub(crate) const VIEW_HTML: &str = include_str!("../assets/view.html");

/// Its script (`GET /assets/view.js`; inlined in the app).
pub(crate) const VIEW_JS: &str = include_str!("../assets/view.js");

/// The property chart's page, which loads the protocol script by name (inlined in the app).
const PROPERTY_CHART_PAGE: &str = include_str!("../assets/property_chart.html");

/// The MCP Apps protocol as both apps speak it, inlined into each.
const MCP_APP_JS: &str = include_str!("../assets/mcp_app.js");

/// How the web view loads its script over HTTP; the app carries it inline instead.
const SCRIPT_TAG: &str = r#"<script src="/assets/view.js"></script>"#;

/// How the property chart names the protocol script.
const MCP_APP_TAG: &str = r#"<script src="mcp_app.js"></script>"#;

/// `script` as an inline `<script>` element. `</script` inside it would end the element early:
/// the scripts are written without one (tested), and the escape keeps that true whatever they hold.
fn inline(script: &str) -> String {
    format!("<script>\n{}</script>", script.replace("</script", "<\\/script"))
}

/// The graph view app's HTML: the page with its scripts inline (a host loads the resource alone,
/// with no server to fetch from) and told to talk to its host.
static GRAPH_VIEW_HTML: LazyLock<String> = LazyLock::new(|| {
    VIEW_HTML.replace(
        SCRIPT_TAG,
        &format!(
            "<script>window.schemascopeLink = \"mcp-app\";</script>\n{}\n{}",
            inline(MCP_APP_JS),
            inline(VIEW_JS)
        ),
    )
});

/// The property chart app's HTML, its protocol script inline.
static PROPERTY_CHART_HTML: LazyLock<String> =
    LazyLock::new(|| PROPERTY_CHART_PAGE.replace(MCP_APP_TAG, &inline(MCP_APP_JS)));

/// One app: its resource and what the resource list says of it.
struct App {
    view: View,
    uri: &'static str,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    html: fn() -> &'static str,
}

const APPS: [App; 2] = [
    App {
        view: View::Graph,
        uri: GRAPH_VIEW_URI,
        name: "graph-view",
        title: "Graph view",
        description: "The live graph (an MCP App): names, a legend for every colour, an inspector, \
                      layers a person can hide, reorder and delete. Shown beside the graph tools' answers.",
        html: || GRAPH_VIEW_HTML.as_str(),
    },
    App {
        view: View::PropertyProfile,
        uri: PROPERTY_CHART_URI,
        name: "property-chart",
        title: "Property chart",
        description: "One property's profile as a chart (an MCP App): its figures, histogram and \
                      most frequent values. Shown beside describe_property's answers.",
        html: || PROPERTY_CHART_HTML.as_str(),
    },
];

/// The apps the served sources use: the graph view only when a graph is served (when the view's
/// own tools, `view_tools`, are callable).
fn apps_for(view_tools: &[&ToolSpec]) -> impl Iterator<Item = &'static App> {
    let graph = !view_tools.is_empty();
    APPS.iter().filter(move |app| app.view != View::Graph || graph)
}

/// Whether the client renders MCP Apps: it declares the extension with the app MIME type.
pub(crate) fn client_renders_apps(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// The tools an MCP client sees: the listed ones, those that change the graph's view pointing at
/// the app; and, for a client that renders apps, the view's own tools, visible to the app only.
pub(crate) fn listed_tools(services: &Services, renders_apps: bool) -> Vec<Tool> {
    // Looked up once: which apps apply depends on the sources, not on the tool.
    let view_tools = tool_table::view_tools(services);
    let apps: Vec<&App> = apps_for(&view_tools).collect();
    let mut tools: Vec<Tool> = tool_table::listed(services)
        .into_iter()
        .filter_map(|spec| {
            let mut tool = crate::tools::as_mcp_tool(&tool_table::definition(spec))?;
            let view = tool_table::view_of(spec);
            if let Some(app) = apps.iter().find(|app| Some(app.view) == view) {
                tool.meta = Some(ui_meta(json!({"resourceUri": app.uri})));
            }
            Some(tool)
        })
        .collect();
    if renders_apps {
        tools.extend(view_tools.into_iter().filter_map(|spec| {
            let mut tool = crate::tools::as_mcp_tool(&tool_table::definition(spec))?;
            tool.meta = Some(ui_meta(json!({"visibility": ["app"]})));
            Some(tool)
        }));
    }
    tools
}

/// `_meta` naming the app: `ui` as the extension writes it, and the flat `ui/resourceUri` key
/// hosts written before it still read.
fn ui_meta(ui: Value) -> MetaObject {
    let mut meta = serde_json::Map::new();
    if let Some(uri) = ui.get("resourceUri").cloned() {
        meta.insert("ui/resourceUri".into(), uri);
    }
    meta.insert("ui".into(), ui);
    MetaObject(meta)
}

/// The apps' resources (listed to clients that render apps).
pub(crate) fn resources(services: &Services) -> Vec<Resource> {
    apps_for(&tool_table::view_tools(services))
        .map(|app| {
            Resource::new(app.uri, app.name)
                .with_title(app.title)
                .with_description(app.description)
                .with_mime_type(MIME_TYPE)
        })
        .collect()
}

/// The app `uri` names, as the resource's contents; `None` for any other URI. Everything an
/// app runs is inline, and it reaches no network (the host's tool calls are its only channel),
/// so it asks the host for no domains.
pub(crate) fn read(uri: &str) -> Option<ResourceContents> {
    let app = APPS.iter().find(|app| app.uri == uri)?;
    Some(ResourceContents::text((app.html)(), app.uri).with_mime_type(MIME_TYPE).with_meta(
        MetaObject(json!({"ui": {"prefersBorder": true}}).as_object().cloned().unwrap_or_default()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_app_is_the_page_with_its_script_inline_and_no_app_loads_from_elsewhere() {
        assert!(VIEW_HTML.contains(SCRIPT_TAG), "the page loads its script with {SCRIPT_TAG}");
        for script in [VIEW_JS, MCP_APP_JS] {
            assert!(!script.contains("</script"), "a script would end its inline tag early");
        }
        assert!(PROPERTY_CHART_PAGE.contains(MCP_APP_TAG));
        assert!(!PROPERTY_CHART_HTML.contains(MCP_APP_TAG));
        assert!(
            GRAPH_VIEW_HTML.contains("function mcpApp")
                && PROPERTY_CHART_HTML.contains("function mcpApp")
        );
        assert!(!GRAPH_VIEW_HTML.contains(SCRIPT_TAG));
        assert!(GRAPH_VIEW_HTML.contains("window.schemascopeLink = \"mcp-app\""));
        assert!(GRAPH_VIEW_HTML.contains("function fetchScene"));
        // No resource from elsewhere: a host's sandbox would block it.
        for app in &APPS {
            let html = (app.html)();
            assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "{}", app.uri);
            assert!(read(app.uri).is_some());
        }
        assert!(read("ui://schemascope/other.html").is_none());
    }

    #[test]
    fn only_clients_declaring_the_app_mime_type_render_apps() {
        let with = |settings: Value| -> ClientCapabilities {
            serde_json::from_value(json!({"extensions": {EXTENSION_ID: settings}}))
                .expect("capabilities")
        };
        assert!(client_renders_apps(Some(&with(json!({"mimeTypes": [MIME_TYPE]})))));
        assert!(!client_renders_apps(Some(&with(json!({"mimeTypes": ["text/html"]})))));
        assert!(!client_renders_apps(Some(&with(json!({})))));
        assert!(!client_renders_apps(Some(&ClientCapabilities::default())));
        assert!(!client_renders_apps(None));
    }
}
