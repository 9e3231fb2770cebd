//! Live AimDB records over MCP: each record has its schema resource, and a value produced in a
//! subscribed record reaches the client as `notifications/resources/updated` for that record.

use std::sync::Arc;
use std::time::Duration;

use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{
        ClientConfig, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
        ResourceUpdatedNotificationParam, SubscribeRequestParams,
    },
    service::NotificationContext,
};
use schemascope_server::SchemascopeServer;

use crate::common::serve_on_pipe;
use schemascope_sources::aimdb::Protocol;
use schemascope_sources::aimdb::fake::{Behaviour, FakeAimdb, FakeRecord};
use schemascope_tools::Services;
use serde_json::{Value, json};
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Client {
    updates: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Client {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_produced_value_notifies_the_subscribers_of_its_record() -> TestResult {
    let dir = tempfile::tempdir()?;
    let records = vec![
        FakeRecord::new("server::Config", "server::Config", vec![json!({"port": 8080})]),
        FakeRecord::new(
            "sensors.outdoor",
            "fixture::OutdoorReading",
            vec![json!({"celsius": 20, "sensor_id": "out-1"})],
        ),
    ];
    let fake =
        FakeAimdb::start(&dir.path().join("plant.sock"), Protocol::V3, Behaviour::Normal, records)?;
    let registry = Services::new();
    let spec = format!("plant=aimdb:unix://{}", fake.path().display()).parse()?;
    registry.sources.load(&[spec], &schemascope_sources::NoProgress)?;
    registry.watch_with(Duration::from_millis(50))?;

    let client_end = serve_on_pipe(SchemascopeServer::new(registry.clone()));
    let (updates, mut updated) = mpsc::unbounded_channel();
    let client = Client { updates }.serve(client_end).await?;

    let uris: Vec<String> =
        client.list_all_resources().await?.into_iter().map(|r| r.uri.clone()).collect();
    assert_eq!(
        uris,
        ["schema://plant", "schema://plant/server::Config", "schema://plant/sensors.outdoor"]
    );
    // A client completing the record of `schema://{source}/{record}` for a person.
    let mut chosen = std::collections::HashMap::new();
    chosen.insert("source".to_string(), "plant".to_string());
    let completed = client
        .complete(
            rmcp::model::CompleteRequestParams::new(
                rmcp::model::Reference::for_resource("schema://{source}/{record}"),
                rmcp::model::ArgumentInfo::new("record", "out"),
            )
            .with_context(rmcp::model::CompletionContext::with_arguments(chosen)),
        )
        .await?;
    assert_eq!(completed.completion.values, ["sensors.outdoor"]);
    let read = client
        .read_resource(ReadResourceRequestParams::new("schema://plant/sensors.outdoor"))
        .await?;
    let Some(ResourceContents::TextResourceContents { text, mime_type, .. }) =
        read.contents.first()
    else {
        return Err("no text contents".into());
    };
    assert_eq!(mime_type.as_deref(), Some("application/schema+json"));
    let schema: Value = serde_json::from_str(text)?;
    assert_eq!(schema["record_name"], "sensors.outdoor");
    assert_eq!(schema["metadata"]["name"], "fixture::OutdoorReading");

    #[allow(deprecated)]
    client.subscribe(SubscribeRequestParams::new("schema://plant/sensors.outdoor")).await?;
    let fake = Arc::new(fake);
    // The feed may still be subscribing: produce until the notification arrives.
    let uri = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            fake.push("sensors.outdoor", json!({"celsius": 21.5, "sensor_id": "out-2"}));
            if let Ok(Some(uri)) =
                tokio::time::timeout(Duration::from_millis(300), updated.recv()).await
            {
                return uri;
            }
        }
    })
    .await?;
    assert_eq!(uri, "schema://plant/sensors.outdoor");
    client.cancel().await?;
    Ok(())
}
