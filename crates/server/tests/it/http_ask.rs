//! `POST /v1/ask` streams Server-Sent Events (a thought per node, then the result) and
//! `GET /metrics` exposes the pipeline metrics, on real Chinook with a replayed LLM.

use std::time::Duration;

use schemascope_agent::llm::{LlmConfig, Provider};
use schemascope_agent::replay::{ReplayServer, Scripted};
use schemascope_server::{HttpOptions, bind_http, serve_http_listener};
use schemascope_tools::Services;
use serde_json::{Value, json};

use crate::common::exchange;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test(flavor = "multi_thread")]
async fn ask_streams_thoughts_then_the_result_and_metrics_count_it() -> TestResult {
    let replay = ReplayServer::start(vec![
        Scripted::json(
            json!({"query": "SELECT COUNT(*) AS genres FROM Genre", "reasoning": "count"}),
        ),
        Scripted::Text("There are 25 genres.".into()),
    ])?;
    let registry = Services::new();
    let chinook =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/chinook/Chinook_Sqlite.sqlite");
    registry
        .sources
        .load(&[format!("chinook={chinook}").parse()?], &schemascope_sources::NoProgress)?;
    registry.asking.set_llm(Some(LlmConfig {
        provider: Provider::OpenAi,
        base_url: format!("{}/v1", replay.url()),
        model: "m".into(),
        api_key: None,
        timeout: Duration::from_secs(5),
    }));
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server =
        tokio::spawn(serve_http_listener(registry, listener, HttpOptions::default(), async move {
            let _ = stopped.await;
        }));

    let body = r#"{"source": "chinook", "question": "How many genres are there?"}"#;
    let request = format!(
        "POST /v1/ask HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // The stream ends after the result event; with `Connection: close` the server then closes.
    let response = exchange(addr, request, "\u{0}").await?;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("content-type: text/event-stream"),
        "{response}"
    );
    let thoughts: Vec<&str> = response
        .lines()
        .filter(|l| l.starts_with("data: ") && l.contains("current_thought"))
        .collect();
    let nodes: Vec<String> = thoughts
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(&l[6..]).ok())
        .filter_map(|v| v["node"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        nodes,
        ["start", "get_schema", "build_query", "validate_query", "execute_query", "summarize"],
        "{response}"
    );
    let result_line =
        response.lines().skip_while(|l| *l != "event: result").nth(1).unwrap_or_default();
    let result: Value = serde_json::from_str(result_line.trim_start_matches("data: "))?;
    assert_eq!(result["success"], true);
    assert_eq!(result["data"]["rows"], json!([[25]]));
    assert_eq!(result["data"]["answer"], "There are 25 genres.");

    let metrics = exchange(
        addr,
        format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        "# EOF",
    )
    .await?;
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("schemascope_asks_total{result=\"first_try\"} 1"), "{metrics}");
    assert!(metrics.contains("schemascope_schema_cache_total{result=\"miss\"} 1"), "{metrics}");

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server).await???;
    Ok(())
}
