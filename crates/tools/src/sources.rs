//! list_sources: what is served, with collections, sizes and load warnings.

use serde_json::json;

use crate::params::ListSourcesParams;
use crate::registry::Registry;
use crate::result::ToolResult;

/// list_sources.
pub fn list_sources(registry: &Registry, _params: ListSourcesParams) -> ToolResult {
    let sources: Vec<_> = registry
        .sources()
        .iter()
        .map(|s| {
            let collections: Vec<_> = s
                .collections
                .iter()
                .map(|c| {
                    let mut entry = json!({"name": c.name(), "kind": c.kind(), "count": c.len(), "properties": c.profile().properties().len()});
                    if let Some(snapshot) = &s.aimdb {
                        // Every record of the instance, those without a value yet too, with its type.
                        entry["records"] = json!(snapshot
                            .records
                            .iter()
                            .filter_map(|m| schemascope_sources::aimdb::record_key(m).map(|k| (k, m)))
                            .map(|(k, m)| json!({"name": k, "values": snapshot.values(k).count(), "type": schemascope_sources::aimdb::type_name(m)}))
                            .collect::<Vec<_>>());
                    } else if c.kind() == schemascope_core::CollectionKind::Records {
                        entry["records"] =
                            json!(c.record_profiles().iter().map(|(k, p)| json!({"name": k, "values": p.item_count})).collect::<Vec<_>>());
                    }
                    entry
                })
                .collect();
            let mut entry = json!({
                "name": s.name(),
                "uri": s.spec.text,
                "format": format!("{:?}", s.format).to_lowercase(),
                "resource": format!("schema://{}", s.name()),
                "bytes": s.bytes,
                "collections": collections,
                "warnings": s.warnings,
                "reloadError": registry.reload_error(s.name()),
            });
            if let Some(snapshot) = &s.aimdb {
                // What a live AimDB source is connected to: the instance and what it allows.
                entry["aimdb"] = json!({
                    "socket": snapshot.socket,
                    "protocol": snapshot.protocol,
                    "server": snapshot.welcome.get("server"),
                    "permissions": snapshot.welcome.get("permissions"),
                    "writable_records": snapshot.welcome.get("writable_records"),
                });
            }
            entry
        })
        .collect();
    let names: Vec<String> = registry.names();
    ToolResult::ok(format!("{} source(s): {}.", names.len(), names.join(", ")), json!({ "sources": sources }))
}
