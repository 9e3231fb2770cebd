//! discover_instances: the AimDB instances in the directories the operator allows (`serve
//! --aimdb-dir`), each with its protocol version and records, so a model can name one by its
//! socket path in any tool's `source`.

use std::time::Duration;

use serde_json::json;

use schemascope_sources::aimdb::discover::{MAX_DEPTH, discover};

use crate::params::DiscoverInstancesParams;
use crate::result::ToolResult;
use crate::services::Services;

/// How long each socket may take to answer the handshake and `record.list`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// discover_instances.
pub fn discover_instances(services: &Services, _params: DiscoverInstancesParams) -> ToolResult {
    let allowed = services.sources.aimdb_dirs();
    if allowed.is_empty() {
        return ToolResult::failed(
            "No AimDB directories are allowed on this server; the operator allows them with `serve --aimdb-dir DIR` (or `aimdb_dirs` in the configuration's [server] section).",
            json!({"error": "no_aimdb_dirs"}),
        );
    }
    let found = discover(&allowed, PROBE_TIMEOUT);
    let dirs: Vec<String> = allowed.dirs().iter().map(|d| d.path.display().to_string()).collect();
    let mut message = match found.instances.len() {
        0 => format!(
            "No AimDB instance answered among the {} socket(s) asked in {}.",
            found.asked,
            dirs.join(", ")
        ),
        n => format!(
            "{n} AimDB instance(s) in {}: {}. Name one by its socket path as `source` in any tool.",
            dirs.join(", "),
            found
                .instances
                .iter()
                .map(|i| format!(
                    "{} (AimX {}, {} records)",
                    i.socket.display(),
                    i.protocol,
                    i.record_count
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if !found.other_sockets.is_empty() {
        message.push_str(&format!(
            " {} other socket(s) did not answer AimX.",
            found.other_sockets.len()
        ));
    }
    if !found.left_out.is_empty() {
        message.push_str(&format!(
            " The scan was cut short, so instances may be missing from this list: {}. A socket path inside these directories still works as `source`.",
            found.left_out.first().map(String::as_str).unwrap_or_default()
        ));
    }
    ToolResult::ok(
        message,
        json!({
            "dirs": allowed.dirs(),
            "instances": found.instances,
            "other_sockets": found.other_sockets,
            "left_out": found.left_out,
            "levels_below": MAX_DEPTH,
        }),
    )
}
