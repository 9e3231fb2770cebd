//! Fuzzes the JSON-RPC envelope check in front of the MCP service on arbitrary bodies: it never
//! panics; what it lets through rmcp reads as one message from exactly the bytes passed on; what
//! it refuses is a parse error (-32700) for non-JSON, an invalid request (-32600), batches
//! included, or for a request rmcp cannot represent invalid params (-32602) / method not found
//! (-32601) with its id. Params errors of known methods are invalid params, other methods not found.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use schemascope_server::jsonrpc::{check, custom_request_error};

fuzz_target!(|data: &[u8]| {
    let parsed = serde_json::from_slice::<serde_json::Value>(data);
    match check(data) {
        Ok(checked) => {
            assert!(serde_json::from_slice::<ClientJsonRpcMessage>(&checked.bytes).is_ok(), "what passes is one message");
        }
        Err(refusal) => match &parsed {
            Err(_) => assert_eq!(refusal.code, ErrorCode::PARSE_ERROR),
            // A request rmcp cannot represent is judged by its method, and answers its id.
            Ok(_) if refusal.code == ErrorCode::INVALID_PARAMS || refusal.code == ErrorCode::METHOD_NOT_FOUND => {
                assert!(refusal.id.is_some());
            }
            Ok(_) => assert_eq!(refusal.code, ErrorCode::INVALID_REQUEST),
        },
    }
    if let Ok(serde_json::Value::Object(fields)) = parsed
        && let Some(method) = fields.get("method").and_then(|m| m.as_str())
    {
        let error = custom_request_error(method, fields.get("params").cloned());
        assert!(error.code == ErrorCode::INVALID_PARAMS || error.code == ErrorCode::METHOD_NOT_FOUND);
    }
});
