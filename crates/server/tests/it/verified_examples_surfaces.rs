//! Verified examples and business metrics through the surfaces: over MCP a server with a record
//! file lists `record_example`, records a confirmed pair and shows it in the next context, and
//! `validate_query` expands a metric's name; over HTTP the same tool answers the same way.

use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use schemascope_server::{HttpOptions, SchemascopeServer, bind_http, serve_http_listener};
use schemascope_tools::Services;
use serde_json::{Value, json};

use crate::common::{arguments, exchange, serve_on_pipe};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Chinook with its docs (semantic file, examples), recording to `record`.
fn served(record: &Path) -> Result<Services, Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let registry = Services::new();
    let spec = format!("chinook={}", root.join("chinook/Chinook_Sqlite.sqlite").display());
    registry.sources.load(&[spec.parse()?], &schemascope_sources::NoProgress)?;
    registry.docs.set_dir("chinook", root.join("docs/chinook"));
    registry.docs.set_record_file(Some(record.to_path_buf()));
    Ok(registry)
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> Result<Value, Box<dyn std::error::Error>> {
    let result =
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments(args))).await?;
    Ok(result.structured_content.ok_or("no structured content")?)
}

#[tokio::test]
async fn mcp_records_a_confirmed_pair_shows_it_next_and_expands_metrics() -> TestResult {
    let dir = tempfile::tempdir()?;
    let record = dir.path().join("confirmed.toml");
    let client = ().serve(serve_on_pipe(SchemascopeServer::new(served(&record)?))).await?;
    let names: Vec<String> =
        client.list_all_tools().await?.iter().map(|t| t.name.to_string()).collect();
    assert!(names.contains(&"record_example".to_string()), "{names:?}");

    let question = "How many playlists are there?";
    let recorded = call(
        &client,
        "record_example",
        json!({"question": question, "sql": "SELECT COUNT(*) FROM Playlist"}),
    )
    .await?;
    assert_eq!(recorded["data"]["inUse"], true, "{recorded}");
    assert!(std::fs::read_to_string(&record)?.contains(question));
    let context =
        call(&client, "get_schema_context", json!({"question": "how many playlists exist"}))
            .await?;
    let text = context["data"]["context"].as_str().unwrap_or_default();
    assert!(text.contains(&format!("Q: {question}")), "{text}");

    let report = call(
        &client,
        "validate_query",
        json!({"query": "SELECT BillingCountry, average_basket FROM Invoice GROUP BY BillingCountry"}),
    )
    .await?;
    assert_eq!(report["data"]["valid"], true, "{report}");
    assert!(
        report["data"]["rewritten_query"]
            .as_str()
            .unwrap_or_default()
            .contains("AVG(Invoice.Total)"),
        "{report}"
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn http_records_through_the_same_tool_and_refuses_what_does_not_validate() -> TestResult {
    let dir = tempfile::tempdir()?;
    let record = dir.path().join("confirmed.toml");
    let (listener, addr) = bind_http("127.0.0.1:0".parse()?).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve_http_listener(
        served(&record)?,
        listener,
        HttpOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let post = |body: &str| {
        format!(
            "POST /v1/tools/record_example HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let body = |response: &str| -> Value {
        let start = response.find("\r\n\r\n").map_or(0, |i| i + 4);
        serde_json::from_str(&response[start..]).unwrap_or(Value::Null)
    };
    let refused = body(
        &exchange(addr, post(r#"{"question":"All tracks?","sql":"DELETE FROM Track"}"#), "\u{0}")
            .await?,
    );
    assert_eq!(refused["success"], false, "{refused}");
    assert!(!record.exists(), "nothing written for a refused pair");
    let written = body(
        &exchange(
            addr,
            post(r#"{"question":"How many genres?","sql":"SELECT COUNT(*) FROM Genre"}"#),
            "\u{0}",
        )
        .await?,
    );
    assert_eq!(written["data"]["recorded"], true, "{written}");
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server).await???;
    Ok(())
}

/// The all-MiniLM-L6-v2 model scripts/test installs, loaded.
fn embedding_model() -> Result<
    std::sync::Arc<schemascope_tools::embedding_model::EmbeddingModel>,
    Box<dyn std::error::Error>,
> {
    let dir = std::env::var("SCHEMASCOPE_TEST_EMBED_MODEL").map_err(|_| {
        "SCHEMASCOPE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 directory (scripts/test installs tests/embed/requirements.txt and sets it)"
    })?;
    Ok(schemascope_tools::embedding_model::EmbeddingModel::load(Path::new(&dir))?)
}

/// With an embedding model (all-MiniLM-L6-v2, installed by scripts/test), a question worded
/// unlike the schema finds its table over MCP, and a verified example asked in other words is
/// shown beside the context.
#[tokio::test]
async fn mcp_ranks_by_meaning_with_an_embedding_model() -> TestResult {
    let dir = tempfile::tempdir()?;
    let services = served(&dir.path().join("confirmed.toml"))?;
    services.docs.set_encoder(Some(embedding_model()?));
    let client = ().serve(serve_on_pipe(SchemascopeServer::new(services))).await?;
    let found =
        call(&client, "search_schema_docs", json!({"question": "which songs last longest"}))
            .await?;
    assert_eq!(found["data"]["metadata"]["semantic"], true, "{found}");
    // Chinook's docs say a genre "has the most tracks": a close second reading of the question.
    let tables =
        found["data"]["metadata"]["tablesIncluded"].as_array().cloned().unwrap_or_default();
    assert!(tables.iter().take(2).any(|t| t == "Track"), "{found}");
    let context = call(
        &client,
        "get_schema_context",
        json!({"question": "which band has released the most records"}),
    )
    .await?;
    assert_eq!(context["data"]["metadata"]["semantic"], true, "{context}");
    let text = context["data"]["context"].as_str().unwrap_or_default();
    assert!(text.contains("Which artist has the most albums?"), "{text}");
    client.cancel().await?;
    Ok(())
}

/// A served schema's docs are encoded in the background: a call that may not wait answers by
/// words and says how far the encoding is; a later call ranks by meaning.
#[tokio::test]
async fn mcp_answers_by_words_while_the_model_encodes_then_by_meaning() -> TestResult {
    let dir = tempfile::tempdir()?;
    let services = served(&dir.path().join("confirmed.toml"))?;
    services.docs.set_encoder(Some(embedding_model()?));
    services.docs.set_encoding_patience(Some(Duration::ZERO));
    let client = ().serve(serve_on_pipe(SchemascopeServer::new(services))).await?;
    let question = json!({"question": "which songs last longest"});
    let first = call(&client, "search_schema_docs", question.clone()).await?;
    assert_eq!(first["data"]["metadata"]["semantic"], false, "{first}");
    let warnings = first["data"]["warnings"].to_string();
    assert!(warnings.contains("still encoding this schema's docs and values"), "{warnings}");
    let mut later = first;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        later = call(&client, "search_schema_docs", question.clone()).await?;
        if later["data"]["metadata"]["semantic"] == true {
            break;
        }
    }
    assert_eq!(later["data"]["metadata"]["semantic"], true, "{later}");
    assert!(!later["data"]["warnings"].to_string().contains("still encoding"), "{later}");
    client.cancel().await?;
    Ok(())
}
