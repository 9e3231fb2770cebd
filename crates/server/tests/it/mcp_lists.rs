//! What MCP clients of 2026 expect of lists: cache hints (`ttlMs`, `cacheScope`), the resources
//! of many sources in pages, and completions of the source and record a client asks a person
//! for — over an rmcp client in-process, on the 2026-07-28 protocol.

use rmcp::{
    ClientLifecycleMode, ClientServiceExt,
    model::{
        ArgumentInfo, CacheScope, ClientConfig, CompleteRequestParams, CompletionContext,
        PaginatedRequestParams, ProtocolVersion, Reference,
    },
};
use schemascope_server::SchemascopeServer;

use crate::common::serve_on_pipe;
use schemascope_tools::Services;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// 150 small document sources named `source-000` … `source-149`, and the sensors demo.
fn many_sources(dir: &std::path::Path) -> Result<Services, Box<dyn std::error::Error>> {
    let services = Services::new();
    let mut specs: Vec<schemascope_sources::SourceSpec> = vec!["demo:sensors".parse()?];
    for i in 0..150 {
        let path = dir.join(format!("source-{i:03}.json"));
        std::fs::write(&path, format!("[{{\"n\": {i}}}]"))?;
        specs.push(format!("source-{i:03}={}", path.display()).parse()?);
    }
    services.sources.load(&specs, &schemascope_sources::NoProgress)?;
    Ok(services)
}

#[tokio::test]
async fn lists_carry_cache_hints_resources_come_in_pages_and_names_complete() -> TestResult {
    let dir = tempfile::tempdir()?;
    let services = many_sources(dir.path())?;
    let client_end = serve_on_pipe(SchemascopeServer::new(services));
    let client = ClientConfig::default()
        .serve_with_lifecycle(
            client_end,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await?;

    let tools = client.list_tools(None).await?;
    assert_eq!(tools.ttl_ms, Some(60_000));
    assert_eq!(tools.cache_scope, Some(CacheScope::Private));
    let prompts = client.list_prompts(None).await?;
    assert_eq!(prompts.ttl_ms, Some(60_000));

    // 151 sources plus the sensors' records: pages of 100, every resource once.
    let first = client.list_resources(None).await?;
    assert_eq!(first.resources.len(), 100);
    assert_eq!(first.ttl_ms, Some(60_000));
    let cursor = first.next_cursor.clone().ok_or("a next page")?;
    let mut all: Vec<String> = first.resources.iter().map(|r| r.uri.clone()).collect();
    let mut next = Some(cursor);
    while let Some(cursor) = next {
        let page = client
            .list_resources(Some(PaginatedRequestParams::default().with_cursor(Some(cursor))))
            .await?;
        assert!(page.resources.len() <= 100);
        all.extend(page.resources.iter().map(|r| r.uri.clone()));
        next = page.next_cursor.clone();
    }
    let total = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), total, "no resource twice");
    assert!(
        all.contains(&"schema://source-149".to_string())
            && all.contains(&"schema://sensors".to_string())
    );
    assert!(total >= 151, "{total}");
    let bad = client
        .list_resources(Some(PaginatedRequestParams::default().with_cursor(Some("x".into()))))
        .await;
    assert!(bad.is_err(), "an unknown cursor is an error");

    // Completions: source names by prefix, then record keys of the chosen source.
    let sources = client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("schema_system_prompt"),
            ArgumentInfo::new("source", "source-14"),
        ))
        .await?;
    assert_eq!(sources.completion.values.len(), 10, "{:?}", sources.completion.values);
    assert_eq!(sources.completion.values[0], "source-140");
    assert_eq!(sources.completion.has_more, Some(false));
    let many = client
        .complete(CompleteRequestParams::new(
            Reference::for_resource("schema://{source}"),
            ArgumentInfo::new("source", "s"),
        ))
        .await?;
    assert_eq!(many.completion.values.len(), 100);
    assert_eq!(many.completion.has_more, Some(true));
    assert_eq!(many.completion.total, Some(151));
    // A record set that is not a live AimDB instance has no record resources to complete.
    let mut context = std::collections::HashMap::new();
    context.insert("source".to_string(), "sensors".to_string());
    let records = client
        .complete(
            CompleteRequestParams::new(
                Reference::for_resource("schema://{source}/{record}"),
                ArgumentInfo::new("record", ""),
            )
            .with_context(CompletionContext::with_arguments(context)),
        )
        .await?;
    assert!(records.completion.values.is_empty(), "{records:?}");
    client.cancel().await?;
    Ok(())
}
