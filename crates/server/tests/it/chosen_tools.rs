//! An operator's choice of tools (`serve --tools`, `tools = [...]`) over MCP and HTTP: a tool
//! not chosen is not listed, and a call to it is refused naming the option, on every surface.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use schemascope_server::{HttpOptions, SchemascopeServer, bind_http, serve_http_listener};
use schemascope_tools::Services;
use schemascope_tools::toolsets::ChosenTools;
use serde_json::Value;

use crate::common::serve_on_pipe;

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Both demo sources, offering the discovery toolset and `select` only.
fn chosen_registry() -> Result<Services, Box<dyn std::error::Error>> {
    let registry = Services::new();
    let specs = vec!["demo:infrastructure".parse()?, "demo:sensors".parse()?];
    registry.sources.load(&specs, &schemascope_sources::NoProgress)?;
    registry.choose_tools(Some(ChosenTools::parse_list("discovery,select")?));
    Ok(registry)
}

#[tokio::test]
async fn mcp_lists_only_the_chosen_tools_and_refuses_the_others() -> TestResult {
    let client_end = serve_on_pipe(SchemascopeServer::new(chosen_registry()?));
    let client = ().serve(client_end).await?;
    let mut names: Vec<String> =
        client.list_all_tools().await?.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "describe_property",
            "describe_schema",
            "find_items",
            "list_sources",
            "query_schema",
            "sample_data",
            "select",
            "validate_value"
        ]
    );
    let instructions = client.peer_info().and_then(|i| i.instructions.clone()).unwrap_or_default();
    assert!(!instructions.contains("find_and_style_nodes"), "{instructions}");

    let refused = client.call_tool(CallToolRequestParams::new("find_nodes")).await?;
    assert_eq!(refused.is_error, Some(true));
    let envelope = refused.structured_content.ok_or("no structured content")?;
    assert_eq!(envelope["data"]["error"], "tool_not_chosen", "{envelope}");
    let message = envelope["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("--tools discovery,select") && message.contains("tools = [...]"),
        "{message}"
    );

    let chosen = client
        .call_tool(
            CallToolRequestParams::new("find_items").with_arguments(
                serde_json::json!({"source": "infrastructure", "selector": "type == 'database'"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await?;
    assert_eq!(chosen.is_error, Some(false));
    client.cancel().await?;
    Ok(())
}

fn post(addr: std::net::SocketAddr, path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The JSON body of an HTTP response.
fn body(response: &str) -> Value {
    let start = response.find("\r\n\r\n").map_or(0, |i| i + 4);
    serde_json::from_str(&response[start..]).unwrap_or(Value::Null)
}

#[tokio::test]
async fn http_refuses_a_tool_not_chosen_and_answers_the_chosen() -> TestResult {
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http_listener(
        chosen_registry()?,
        listener,
        HttpOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let refused =
        exchange(addr, post(addr, "/v1/tools/set_camera", r#"{"preset":"topView"}"#), "\u{0}")
            .await?;
    let refused = body(&refused);
    assert_eq!(refused["success"], false, "{refused}");
    assert_eq!(refused["data"]["error"], "tool_not_chosen", "{refused}");
    assert!(refused["message"].as_str().unwrap_or_default().contains("--tools"), "{refused}");

    let answered = exchange(
        addr,
        post(addr, "/v1/tools/select", r#"{"source":"infrastructure","mode":"clear"}"#),
        "\u{0}",
    )
    .await?;
    assert_eq!(body(&answered)["success"], true, "{answered}");
    // The web view's own tool is no choice of the operator's: it always answers.
    let viewport = exchange(
        addr,
        post(
            addr,
            "/v1/tools/report_viewport",
            r#"{"source":"infrastructure","width":800,"height":600}"#,
        ),
        "\u{0}",
    )
    .await?;
    assert_eq!(body(&viewport)["success"], true, "{viewport}");

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server).await???;
    Ok(())
}
