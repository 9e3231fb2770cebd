//! The server end to end in-process: an rmcp client over an in-memory pipe, with the handshake
//! (protocol 2025-11-25) and with discovery (2026-07-28), including update notifications.

use std::time::Duration;

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, ClientConfig, GetPromptRequestParams, JsonObject, ProtocolVersion,
        ReadResourceRequestParams, ResourceContents, ResourceUpdatedNotificationParam,
        ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    },
    service::{NotificationContext, RunningService},
};
use schemascope_server::SchemascopeServer;

use crate::common::{arguments, serve_on_pipe};
use schemascope_tools::Services;
use serde_json::{Value, json};
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A registry with both demo sources.
fn demo_registry() -> Result<Services, Box<dyn std::error::Error>> {
    let registry = Services::new();
    let specs = vec!["demo:infrastructure".parse()?, "demo:sensors".parse()?];
    registry.sources.load(&specs, &schemascope_sources::NoProgress)?;
    Ok(registry)
}

/// A handshake-era client that forwards resource updates to a channel.
struct LegacyClient {
    updates: mpsc::UnboundedSender<String>,
}

impl ClientHandler for LegacyClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri);
    }
}

async fn call<S: ClientHandler>(
    client: &RunningService<RoleClient, S>,
    tool: &'static str,
    args: Value,
) -> Result<(Option<bool>, Value), Box<dyn std::error::Error>> {
    let result =
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments(args))).await?;
    let structured = result.structured_content.clone().ok_or("no structured content")?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .ok_or("no text")?;
    assert_eq!(
        serde_json::from_str::<Value>(&text)?,
        structured,
        "text and structured content differ"
    );
    Ok((result.is_error, structured))
}

#[tokio::test]
async fn handshake_session_serves_tools_resources_prompt_and_updates() -> TestResult {
    let registry = demo_registry()?;
    let (updates, mut updated) = mpsc::unbounded_channel();
    let client = LegacyClient { updates }
        .serve(serve_on_pipe(SchemascopeServer::new(registry.clone())))
        .await?;

    let info = client.peer_info().ok_or("no server info")?;
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("schemascope"));
    assert!(info.instructions.as_deref().unwrap_or_default().contains("not `data.type`"));

    let tools = client.list_all_tools().await?;
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    // The demo serves a graph and record sets, no database: no SQL tools, no `ask`.
    let mut expected = vec![
        "list_sources",
        "describe_schema",
        "sample_data",
        "describe_property",
        "query_schema",
        "validate_value",
        "find_items",
        "query_graph",
        "find_nodes",
        "find_edges",
        "find_and_style_nodes",
        "find_and_style_edges",
        "clear_styles",
        "describe_styles",
        "describe_selection",
        "select",
        "set_layout",
        "set_dimension",
        "set_camera",
        "zoom_to_nodes",
        "list_algorithms",
        "run_algorithm",
        // The graph's nodes and edges answer SQL.
        "search_schema_docs",
        "get_schema_context",
        "execute_query",
        "validate_query",
    ];
    expected.sort_unstable();
    assert_eq!(names, expected);

    let (is_error, out) = call(
        &client,
        "find_items",
        json!({"source": "infrastructure", "selector": "type == 'database'"}),
    )
    .await?;
    assert_eq!(is_error, Some(false));
    assert_eq!(out["data"]["count"], 20);

    let (is_error, out) =
        call(&client, "find_items", json!({"source": "infrastructure", "selector": "type =="}))
            .await?;
    assert_eq!(is_error, Some(true));
    assert_eq!(out["success"], false);
    assert!(out["data"]["offset"].is_u64(), "{out}");

    let (is_error, out) =
        call(&client, "describe_property", json!({"source": "infrastructure"})).await?;
    assert_eq!(is_error, Some(true));
    assert_eq!(out["data"]["parameter"], "property", "{out}");

    let (_, out) = call(
        &client,
        "query_schema",
        json!({"source": "sensors", "record_name": "server::Temperature"}),
    )
    .await?;
    assert!(out.to_string().contains("celsius"));

    let read =
        client.read_resource(ReadResourceRequestParams::new("schema://infrastructure")).await?;
    let Some(ResourceContents::TextResourceContents { text, mime_type, .. }) =
        read.contents.first()
    else {
        return Err("no text contents".into());
    };
    assert!(text.contains("## Graph Data Schema"));
    assert_eq!(mime_type.as_deref(), Some("text/markdown"));

    let Err(error) = client.read_resource(ReadResourceRequestParams::new("schema://nope")).await
    else {
        return Err("an unknown resource must fail".into());
    };
    assert!(error.to_string().contains("schema://sensors"), "{error}");

    let mut prompt_args = JsonObject::new();
    prompt_args.insert("source".into(), json!("sensors"));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("schema_system_prompt").with_arguments(prompt_args))
        .await?;
    assert_eq!(prompt.messages.len(), 1);

    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("schema://sensors")).await?;
    // Reloading a source the client did not subscribe to sends nothing; the subscribed one does.
    registry.sources.reload("infrastructure")?;
    registry.sources.reload("sensors")?;
    let uri = tokio::time::timeout(Duration::from_secs(10), updated.recv())
        .await?
        .ok_or("channel closed")?;
    assert_eq!(uri, "schema://sensors");

    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn discovery_session_listens_for_updates() -> TestResult {
    let registry = demo_registry()?;
    let client = ClientConfig::default()
        .serve_with_lifecycle(
            serve_on_pipe(SchemascopeServer::new(registry.clone())),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await?;

    let (is_error, out) =
        call(&client, "describe_property", json!({"source": "infrastructure", "property": "type"}))
            .await?;
    assert_eq!(is_error, Some(false));
    assert!(out["data"]["values"].to_string().contains("server"));

    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(["schema://infrastructure", "schema://unknown"])
        .build();
    let mut subscription = client.listen(filter).await?;
    registry.sources.reload("infrastructure")?;
    let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next()).await??;
    match notification {
        Some(ServerNotification::ResourceUpdatedNotification(update)) => {
            assert_eq!(update.params.uri, "schema://infrastructure");
        }
        other => return Err(format!("expected a resource update, got {other:?}").into()),
    }
    subscription.cancel().await?;
    client.cancel().await?;
    Ok(())
}
