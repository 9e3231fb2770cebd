//! The graph view as an MCP App (the MCP Apps extension, `io.modelcontextprotocol/ui`): the page
//! of the web view, self-contained, served as the resource [`VIEW_URI`]; the graph tools that
//! change what it shows point at it (`_meta.ui.resourceUri`), so a client that renders MCP Apps
//! shows the live graph beside their answers, over stdio as over HTTP. Inside the client the view
//! reaches the server only through the host's tool calls: it reads the scene with `read_scene`
//! (which waits for the next change) and reports with the web view's other tools, listed — as
//! `visibility: ["app"]`, hidden from the model — only to clients that render apps.

use std::sync::LazyLock;

use rmcp::model::{ClientCapabilities, MetaObject, Resource, ResourceContents, Tool};
use schemascope_tools::{Services, tool_table};
use serde_json::{Value, json};

/// The view's resource.
pub(crate) const VIEW_URI: &str = "ui://schemascope/graph-view.html";

/// The MIME type of an MCP App's HTML.
pub(crate) const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The extension's id in the client's `capabilities.extensions`.
const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The page of the web view (`GET /`).
pub(crate) const VIEW_HTML: &str = include_str!("../assets/view.html");

/// Its script (`GET /assets/view.js`; inlined in the app).
pub(crate) const VIEW_JS: &str = include_str!("../assets/view.js");

/// How the page loads its script over HTTP; the app carries it inline instead.
const SCRIPT_TAG: &str = r#"<script src="/assets/view.js"></script>"#;

/// The app's HTML: the page with its script inline (a host loads the resource alone, with no
/// server to fetch from) and told to talk to its host.
static APP_HTML: LazyLock<String> = LazyLock::new(|| {
    // `</script` inside the script would end it early: the script is written without one
    // (tested), and the replacement keeps that true whatever it holds.
    let script = VIEW_JS.replace("</script", "<\\/script");
    VIEW_HTML.replace(
        SCRIPT_TAG,
        &format!(
            "<script>window.schemascopeLink = \"mcp-app\";</script>\n<script>\n{script}</script>"
        ),
    )
});

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
    let serves_view = !tool_table::view_tools(services).is_empty();
    let mut tools: Vec<Tool> = tool_table::listed(services)
        .into_iter()
        .filter_map(|spec| {
            let mut tool = crate::tools::as_mcp_tool(&tool_table::definition(spec))?;
            if serves_view && tool_table::shows_view(spec) {
                tool.meta = Some(ui_meta(json!({"resourceUri": VIEW_URI})));
            }
            Some(tool)
        })
        .collect();
    if renders_apps {
        tools.extend(tool_table::view_tools(services).into_iter().filter_map(|spec| {
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

/// The view's resource, listed when a graph is served.
pub(crate) fn resources(services: &Services) -> Vec<Resource> {
    if tool_table::view_tools(services).is_empty() {
        return Vec::new();
    }
    vec![
        Resource::new(VIEW_URI, "graph-view")
            .with_title("Graph view")
            .with_description(
                "The live graph (an MCP App): names, a legend for every colour, an inspector, \
                 layers a person can hide, reorder and delete. Shown beside the graph tools' answers.",
            )
            .with_mime_type(MIME_TYPE),
    ]
}

/// Whether `uri` is the app's.
pub(crate) fn is_app_uri(uri: &str) -> bool {
    uri == VIEW_URI
}

/// The app's HTML as the resource's contents. Everything it runs is inline, and it reaches no
/// network (the host's tool calls are its only channel), so it asks the host for no domains.
pub(crate) fn read() -> ResourceContents {
    ResourceContents::text(APP_HTML.as_str(), VIEW_URI).with_mime_type(MIME_TYPE).with_meta(
        MetaObject(json!({"ui": {"prefersBorder": true}}).as_object().cloned().unwrap_or_default()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_is_the_page_with_its_script_inline() {
        assert!(VIEW_HTML.contains(SCRIPT_TAG), "the page loads its script with {SCRIPT_TAG}");
        assert!(!VIEW_JS.contains("</script"), "the script would end the inline tag early");
        assert!(!APP_HTML.contains(SCRIPT_TAG));
        assert!(APP_HTML.contains("window.schemascopeLink = \"mcp-app\""));
        assert!(APP_HTML.contains("function fetchScene"));
        // No resource from elsewhere: a host's sandbox would block it.
        assert!(!APP_HTML.contains("src=\"http") && !APP_HTML.contains("href=\"http"));
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
